//! [`Fleet`]: engages each cluster a provider reports on exactly one replica, runs the
//! user's work for it, and stops that work when the cluster leaves or moves.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use k8s_openapi::api::coordination::v1::Lease;
use parking_lot::Mutex;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::cluster::{Cluster, ClusterProvider, ClusterSink};
use crate::controller::shard::membership::{self, MemberTable};
use crate::controller::shard::{owner_of, validate_controller_name};
use crate::informer::InformerFactory;
use crate::leader::{ConfigError, LeaderCallbacks, LeaderElectionConfig, LeaderElector, LeaseLock};
use kinform_client::{Api, Client};
use kinform_core::shard::fnv1a64;

/// How a fleet's replicas share its clusters: each replica keeps a member Lease; each
/// cluster is assigned by rendezvous hashing of its name over the live members, and run
/// under a Lease of its own, so at most one replica runs it at any time.
#[derive(Clone, Debug)]
pub struct FleetSharding {
    leases: Api<Lease>,
    identity: String,
    timing: LeaderElectionConfig,
}

impl FleetSharding {
    /// The replica `identity` (unique per process, such as the pod name), with its Leases
    /// in `leases` (a namespaced `Api<Lease>` of the cluster the replicas coordinate on,
    /// usually the management cluster) and the leader elector's default timing
    /// (15 s / 10 s / 2 s).
    pub fn new(leases: Api<Lease>, identity: impl Into<String>) -> Self {
        Self {
            leases,
            identity: identity.into(),
            timing: LeaderElectionConfig::default(),
        }
    }

    /// Other Lease timing (of the member Leases and of the cluster Leases).
    pub fn timing(mut self, timing: LeaderElectionConfig) -> Self {
        self.timing = timing;
        self
    }
}

/// What one replica of the fleet does with one cluster now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ClusterPhase {
    /// Known, but assigned to another replica.
    Elsewhere,
    /// Assigned here; waiting for the cluster's Lease (its previous replica drains first).
    Acquiring,
    /// The work for the cluster runs here.
    Engaged,
    /// The work was asked to stop (the cluster left, moved, reconnects or the fleet stops)
    /// and has not finished yet.
    Draining,
}

/// One cluster as seen by this replica ([`FleetHandle::clusters`]).
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ClusterState {
    /// The cluster's name.
    pub name: String,
    /// What this replica does with it.
    pub phase: ClusterPhase,
    /// Since when (this process's clock).
    pub since: Instant,
    /// How many times this replica started work for it.
    pub engagements: u64,
}

/// A view of a running fleet, for probes, the admin endpoint and tests.
#[derive(Clone, Debug, Default)]
pub struct FleetHandle {
    clusters: Arc<Mutex<BTreeMap<String, ClusterState>>>,
    members: Arc<Mutex<Vec<String>>>,
}

impl FleetHandle {
    /// Every cluster this replica knows, by name.
    pub fn clusters(&self) -> Vec<ClusterState> {
        self.clusters.lock().values().cloned().collect()
    }

    /// The names of the clusters whose work runs here.
    pub fn engaged(&self) -> Vec<String> {
        self.clusters
            .lock()
            .values()
            .filter(|c| c.phase == ClusterPhase::Engaged)
            .map(|c| c.name.clone())
            .collect()
    }

    /// The live members as this replica last saw them (sharded fleets; empty otherwise).
    pub fn members(&self) -> Vec<String> {
        self.members.lock().clone()
    }

    fn set(&self, name: &str, phase: ClusterPhase) {
        let mut clusters = self.clusters.lock();
        let state = clusters
            .entry(name.to_owned())
            .or_insert_with(|| ClusterState {
                name: name.to_owned(),
                phase,
                since: Instant::now(),
                engagements: 0,
            });
        if state.phase != phase {
            state.phase = phase;
            state.since = Instant::now();
        }
        if phase == ClusterPhase::Engaged {
            state.engagements += 1;
        }
    }

    fn forget(&self, name: &str) {
        self.clusters.lock().remove(name);
    }
}

/// One controller (or any work) over a fleet of clusters: multicluster-runtime's manager
/// for Rust.
///
/// A [`ClusterProvider`] reports the clusters; for each cluster this replica engages, the
/// fleet calls `engage(cluster, stop)` and runs the future it returns until `stop` fires.
/// That future owns everything of the cluster: typically a
/// [`Controller`](crate::controller::Controller) on the engagement's informer factory
/// ([`Cluster::informers`]) run until `stop`, whose reconcile captures the cluster's name
/// and client (a request carries its cluster). When it returns, the fleet shuts that
/// factory down, and the cluster's caches are freed with the work's last handle.
///
/// - **Isolation**: each cluster's work is a task of its own; an unreachable cluster keeps
///   only its own informers retrying (their warnings name its server), never the others.
/// - **Leaving and reconnecting**: a cluster the provider drops is stopped (its work is
///   awaited: a controller drains its workqueue); one reported again with a new client
///   is stopped, then engaged again.
/// - **Replicas** ([`Fleet::sharded`]): each replica keeps a member Lease
///   `<fleet>-shard-<identity>`; each cluster is assigned to one live member by
///   rendezvous hashing of its name (the sharded controller's [`owner_of`]), and runs
///   under the Lease `<fleet>-cluster-<name>-<hash>` through the leader elector. A
///   replica engages a cluster only while it holds that Lease, and releases it only after
///   the work stopped: on a hand-over the previous replica drains first, and two replicas
///   never run one cluster at once, even while their views of the membership differ. A
///   dead replica's clusters move when their Leases expire, each counted from the last
///   renewal this replica's membership lists saw (they list the cluster Leases too), so
///   a fail-over takes one lease duration, not a second one from the new owner's first
///   look.
/// - **Work that ends by itself** (it returned before `stop`, or lost its cluster Lease)
///   is a warning and is started again after a backoff (1 s, doubling up to 60 s).
///
/// **RBAC** of a sharded fleet, on the cluster of its Leases: `get`, `list`, `create`,
/// `update` on `coordination.k8s.io` `leases` in their namespace; the provider's own (see
/// each provider) and the work's own on each member cluster.
#[must_use = "a fleet does nothing until run"]
pub struct Fleet<P> {
    name: String,
    provider: P,
    sharding: Option<FleetSharding>,
    informers: MakeInformers,
    handle: FleetHandle,
}

/// Makes the informer factory of one engagement of a cluster.
type MakeInformers = Arc<dyn Fn(Client) -> InformerFactory + Send + Sync>;

impl<P: ClusterProvider> Fleet<P> {
    /// A fleet named `name` (it begins its Lease names: the rules of
    /// [`validate_controller_name`]) over the clusters of `provider`, every cluster
    /// engaged by this replica.
    pub fn new(name: impl Into<String>, provider: P) -> Result<Self, ConfigError> {
        let name = name.into();
        validate_controller_name(&name)?;
        Ok(Self {
            name,
            provider,
            sharding: None,
            informers: Arc::new(InformerFactory::new),
            handle: FleetHandle::default(),
        })
    }

    /// Shares the clusters with the other replicas of the same fleet name.
    pub fn sharded(mut self, sharding: FleetSharding) -> Result<Self, ConfigError> {
        sharding.timing.validate()?;
        if sharding.identity.is_empty() {
            return Err(ConfigError::EmptyIdentity);
        }
        let lease = membership::lease_name(&self.name, &sharding.identity);
        if let Err(reason) = kinform_core::selector::validate_dns_subdomain(&lease) {
            return Err(ConfigError::InvalidShardIdentity {
                identity: sharding.identity.clone(),
                reason,
            });
        }
        self.sharding = Some(sharding);
        Ok(self)
    }

    /// How each engagement's informer factory ([`Cluster::informers`]) is made from the
    /// cluster's client (default: [`InformerFactory::new`]); for a resync period, a scope
    /// or other options of [`InformerFactory::builder`].
    pub fn informer_factory(
        mut self,
        make: impl Fn(Client) -> InformerFactory + Send + Sync + 'static,
    ) -> Self {
        self.informers = Arc::new(make);
        self
    }

    /// A view of the fleet's clusters, valid before and during [`run`](Self::run).
    pub fn handle(&self) -> FleetHandle {
        self.handle.clone()
    }

    /// Runs until `shutdown`, then stops every cluster's work (awaiting it) and leaves the
    /// membership (releasing its Lease, so the others take over at once).
    pub async fn run<F, Fut>(self, engage: F, shutdown: impl Future<Output = ()>)
    where
        F: Fn(Cluster, CancellationToken) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let stop = CancellationToken::new();
        let sink = ClusterSink::new();
        let provider = tokio::spawn(self.provider.run(sink.clone(), stop.child_token()));
        let (members_tx, members_rx) = watch::channel(match &self.sharding {
            None => Assignment::All,
            Some(_) => Assignment::Members(Vec::new()),
        });
        // The member Leases, and the cluster Leases of the same lists, as observed here.
        let table = Arc::new(Mutex::new(
            MemberTable::new(&self.name).also_observing(cluster_lease_prefix(&self.name)),
        ));
        // Unsharded, nothing changes the assignment: the sender is dropped, and the
        // supervisors keep its one value.
        let membership = self.sharding.clone().map(|sharding| {
            let (name, handle, stop) = (self.name.clone(), self.handle.clone(), stop.clone());
            let table = table.clone();
            tokio::spawn(keep_membership(
                name, sharding, table, members_tx, handle, stop,
            ))
        });
        let shared = Arc::new(Shared {
            fleet: self.name.clone(),
            sharding: self.sharding.clone(),
            leases: table,
            handle: self.handle.clone(),
            informers: self.informers.clone(),
            engage: Box::new(move |c, t| Box::pin(engage(c, t))),
        });
        let mut supervisors: BTreeMap<String, Supervisor> = BTreeMap::new();
        let mut shutdown = std::pin::pin!(shutdown);
        loop {
            let changes = tokio::select! {
                biased;
                () = &mut shutdown => break,
                changes = sink.changes() => changes,
            };
            // Supervisors of clusters that are gone end here, before this batch: a report
            // of the same name then starts a new one and is never sent to one that ends.
            supervisors.retain(|_, s| !s.is_idle() && !s.task.is_finished());
            for (name, cluster) in changes {
                if let Some(s) = supervisors.get(&name) {
                    s.want.send_replace(cluster);
                } else if let Some(cluster) = cluster {
                    let s = Supervisor::spawn(
                        name.clone(),
                        cluster,
                        members_rx.clone(),
                        shared.clone(),
                        stop.clone(),
                    );
                    supervisors.insert(name, s);
                }
            }
        }
        tracing::info!(fleet = %self.name, clusters = supervisors.len(), "fleet stopping");
        stop.cancel();
        for (_, s) in supervisors {
            let _ = s.task.await;
        }
        let _ = provider.await;
        if let Some(m) = membership {
            let _ = m.await;
        }
    }
}

type EngageFn = Box<
    dyn Fn(Cluster, CancellationToken) -> std::pin::Pin<Box<dyn Future<Output = ()> + Send>>
        + Send
        + Sync,
>;

/// What every cluster's supervisor shares.
struct Shared {
    fleet: String,
    sharding: Option<FleetSharding>,
    /// The Leases as the membership last listed them.
    leases: Arc<Mutex<MemberTable>>,
    handle: FleetHandle,
    informers: MakeInformers,
    engage: EngageFn,
}

impl Shared {
    /// Runs the user's work for one engagement of `cluster` with an informer factory of its
    /// own, and shuts that factory down once the work ended.
    async fn work(&self, cluster: Cluster, stop: CancellationToken) {
        let informers = (self.informers)(cluster.client().clone());
        (self.engage)(cluster.with_informers(informers.clone()), stop).await;
        informers.shutdown().await;
    }
}

/// The clusters this replica may engage.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Assignment {
    /// All (an unsharded fleet).
    All,
    /// Those the live members (sorted) assign to this replica.
    Members(Vec<String>),
}

impl Assignment {
    fn assigns(&self, cluster: &str, me: Option<&str>) -> bool {
        match self {
            Self::All => true,
            Self::Members(members) => {
                me.is_some() && owner_of(cluster, members.iter().map(String::as_str)) == me
            }
        }
    }
}

struct Supervisor {
    want: watch::Sender<Option<Cluster>>,
    /// Set by the supervisor while the cluster is gone and nothing of it runs: then (and
    /// only then) the fleet may drop `want`, which ends the supervisor.
    idle: Arc<AtomicBool>,
    task: JoinHandle<()>,
}

impl Supervisor {
    fn spawn(
        name: String,
        cluster: Cluster,
        members: watch::Receiver<Assignment>,
        shared: Arc<Shared>,
        stop: CancellationToken,
    ) -> Self {
        let (want, want_rx) = watch::channel(Some(cluster));
        let idle = Arc::new(AtomicBool::new(false));
        let task = tokio::spawn(supervise(
            name,
            want_rx,
            members,
            idle.clone(),
            shared,
            stop,
        ));
        Self { want, idle, task }
    }

    /// Whether the cluster is gone and its supervisor waits with nothing running.
    fn is_idle(&self) -> bool {
        self.want.borrow().is_none() && self.idle.load(Ordering::SeqCst)
    }
}

const RESTART_FIRST: Duration = Duration::from_secs(1);
const RESTART_MAX: Duration = Duration::from_secs(60);

/// Waits for the next change of `rx`, forever once its sender is gone.
async fn next_change<T>(rx: &mut watch::Receiver<T>) {
    if rx.changed().await.is_err() {
        std::future::pending::<()>().await;
    }
}

/// One cluster's life on this replica: waits until the cluster is wanted and assigned
/// here, runs its work, stops it when that changes; ends when the fleet drops `want`
/// (the cluster gone, see [`Supervisor::is_idle`]) or stops.
async fn supervise(
    name: String,
    mut want: watch::Receiver<Option<Cluster>>,
    mut members: watch::Receiver<Assignment>,
    idle: Arc<AtomicBool>,
    shared: Arc<Shared>,
    stop: CancellationToken,
) {
    let me = shared.sharding.as_ref().map(|s| s.identity.as_str());
    let mut backoff = RESTART_FIRST;
    loop {
        let cluster = loop {
            let wanted = want.borrow_and_update().clone();
            match wanted {
                None => {
                    shared.handle.forget(&name);
                    idle.store(true, Ordering::SeqCst);
                    let gone = tokio::select! {
                        () = stop.cancelled() => true,
                        r = want.changed() => r.is_err(),
                    };
                    if gone {
                        return;
                    }
                    idle.store(false, Ordering::SeqCst);
                }
                Some(cluster) if members.borrow_and_update().assigns(&name, me) => break cluster,
                Some(_) => {
                    shared.handle.set(&name, ClusterPhase::Elsewhere);
                    tokio::select! {
                        () = stop.cancelled() => return,
                        () = next_change(&mut want) => {}
                        () = next_change(&mut members) => {}
                    }
                }
            }
        };
        let token = CancellationToken::new();
        let mut work = tokio::spawn(engagement(cluster.clone(), token.clone(), shared.clone()));
        let ended_by_itself = loop {
            tokio::select! {
                () = stop.cancelled() => break false,
                _ = &mut work => break true,
                () = next_change(&mut want) => {
                    let same = want.borrow().as_ref().map(Cluster::generation)
                        == Some(cluster.generation());
                    if !same {
                        break false;
                    }
                }
                () = next_change(&mut members) => {
                    if !members.borrow().assigns(&name, me) {
                        break false;
                    }
                }
            }
        };
        if ended_by_itself {
            tracing::warn!(fleet = %shared.fleet, cluster = %name, retry_in = ?backoff, "the work for the cluster ended before it was asked to stop; starting it again");
            shared.handle.set(&name, ClusterPhase::Acquiring);
            tokio::select! {
                () = stop.cancelled() => return,
                () = tokio::time::sleep(backoff) => {}
            }
            backoff = (backoff * 2).min(RESTART_MAX);
            continue;
        }
        shared.handle.set(&name, ClusterPhase::Draining);
        token.cancel();
        let _ = work.await;
        backoff = RESTART_FIRST;
        if stop.is_cancelled() {
            shared.handle.forget(&name);
            return;
        }
    }
}

/// Runs the cluster's work until `token` fires: at once in an unsharded fleet, under the
/// cluster's Lease in a sharded one (returning when the Lease is lost).
async fn engagement(cluster: Cluster, token: CancellationToken, shared: Arc<Shared>) {
    let name = cluster.name().to_owned();
    let Some(sharding) = &shared.sharding else {
        shared.handle.set(&name, ClusterPhase::Engaged);
        shared.work(cluster, token).await;
        return;
    };
    shared.handle.set(&name, ClusterPhase::Acquiring);
    let lease = cluster_lease_name(&shared.fleet, &name);
    // What the membership's lists saw of the cluster's Lease: a dead holder's lease then
    // runs from its last renewal seen here, not from this elector's first look.
    let seen = shared
        .leases
        .lock()
        .observation(&lease)
        .filter(|(record, _)| record.holder_identity != sharding.identity);
    let lock = LeaseLock::new(sharding.leases.clone(), lease, sharding.identity.clone());
    let started = shared.clone();
    let callbacks = LeaderCallbacks::new(move |leading: CancellationToken| {
        let (cluster, shared) = (cluster.clone(), started.clone());
        async move {
            shared.handle.set(cluster.name(), ClusterPhase::Engaged);
            shared.work(cluster, leading).await;
        }
    });
    let config = sharding.timing.clone().release_on_cancel(true);
    match LeaderElector::new(lock, config, callbacks) {
        Ok(elector) => {
            let elector = match seen {
                Some((record, at)) => elector.observed_since(record, at),
                None => elector,
            };
            elector.run(token).await;
        }
        Err(error) => {
            tracing::warn!(fleet = %shared.fleet, cluster = %name, %error, "cannot compete for the cluster's Lease");
        }
    }
}

/// The prefix of every cluster Lease of `fleet`.
fn cluster_lease_prefix(fleet: &str) -> String {
    format!("{fleet}-cluster-")
}

/// The Lease under which one replica runs `cluster`: `<fleet>-cluster-<name>-<hash>`, the
/// name reduced to lower-case alphanumerics and `-` (at most 40 of them) and the hash
/// (FNV-1a 64 of the whole name, 16 hex digits) keeping distinct names distinct.
pub(crate) fn cluster_lease_name(fleet: &str, cluster: &str) -> String {
    let mut part = String::new();
    for c in cluster.chars() {
        let c = c.to_ascii_lowercase();
        let c = if c.is_ascii_alphanumeric() { c } else { '-' };
        if !(c == '-' && part.ends_with('-')) && part.len() < 40 {
            part.push(c);
        }
    }
    let part = part.trim_matches('-');
    let hash = fnv1a64(cluster.bytes());
    let prefix = cluster_lease_prefix(fleet);
    if part.is_empty() {
        format!("{prefix}{hash:016x}")
    } else {
        format!("{prefix}{part}-{hash:016x}")
    }
}

/// Keeps this replica's member Lease and publishes the live members, rejoining after a
/// lost membership (nothing is assigned here meanwhile) until `stop`.
async fn keep_membership(
    fleet: String,
    sharding: FleetSharding,
    table: Arc<Mutex<MemberTable>>,
    members: watch::Sender<Assignment>,
    handle: FleetHandle,
    stop: CancellationToken,
) {
    let timing = sharding.timing.clone();
    loop {
        let lock = LeaseLock::new(
            sharding.leases.clone(),
            membership::lease_name(&fleet, &sharding.identity),
            sharding.identity.clone(),
        );
        let joined = CancellationToken::new();
        let mut member = tokio::spawn(membership::run_member(
            lock,
            timing.clone(),
            joined.clone(),
            stop.child_token(),
            CancellationToken::new(),
        ));
        let end = loop {
            let live = membership::refresh(&sharding.leases, &table).await;
            if joined.is_cancelled() {
                *handle.members.lock() = live.clone();
                members.send_if_modified(|a| {
                    let new = Assignment::Members(live);
                    let changed = *a != new;
                    *a = new;
                    changed
                });
            }
            tokio::select! {
                end = &mut member => break end,
                () = joined.cancelled(), if !joined.is_cancelled() => {}
                () = tokio::time::sleep(timing.retry_period) => {}
            }
        };
        handle.members.lock().clear();
        members.send_replace(Assignment::Members(Vec::new()));
        match end {
            Ok(membership::MemberEnd::Lost) if !stop.is_cancelled() => {
                tracing::warn!(%fleet, identity = %sharding.identity, "fleet membership lost: every cluster of this replica stops; joining again");
                tokio::select! {
                    () = stop.cancelled() => return,
                    () = tokio::time::sleep(timing.retry_period) => {}
                }
            }
            _ => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cluster_lease_names_are_dns_subdomains_and_distinct() {
        let names = [
            "fleet/prod",
            "fleet/Prod",
            "a_b",
            "---",
            "x".repeat(300).as_str(),
        ]
        .map(|c| cluster_lease_name("demo", c));
        for n in &names {
            kinform_core::selector::validate_dns_subdomain(n).unwrap();
        }
        let distinct: std::collections::BTreeSet<_> = names.iter().collect();
        assert_eq!(distinct.len(), names.len());
        assert!(names[0].starts_with("demo-cluster-fleet-prod-"));
    }

    #[test]
    fn an_unsharded_fleet_assigns_everything_a_sharded_one_its_share() {
        assert!(Assignment::All.assigns("c", None));
        let members = Assignment::Members(vec!["a".into(), "b".into()]);
        let mine = (0..100)
            .filter(|i| members.assigns(&format!("c{i}"), Some("a")))
            .count();
        let theirs = (0..100)
            .filter(|i| members.assigns(&format!("c{i}"), Some("b")))
            .count();
        assert_eq!(mine + theirs, 100);
        assert!(mine > 20 && theirs > 20, "{mine} / {theirs}");
        assert!(!Assignment::Members(Vec::new()).assigns("c", Some("a")));
    }
}
