//! Helpers of the leader-elected controller tests and the fail-over benchmark: replicas of
//! one leader-elected ConfigMap controller run in one process, each with its own client and
//! factory, and an [`Activity`] log of their reconciles that catches two replicas
//! reconciling at the same time.

use std::collections::{BTreeSet, HashMap};
use std::pin::pin;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::ConfigMap;
use kinform::controller::{
    Action, Controller, ControllerPhase, ControllerStatus, LeaderElection, ReconcileStats,
};
use kinform::informer::InformerFactory;
use kinform::leader::LeaderElectionConfig;
use kinform::testing::TestApiServer;
use kinform::{Api, Client};
use parking_lot::Mutex;
use tokio::sync::{Notify, watch};
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// Bounds every wait of these real-clock tests (a hand-over takes well under a second).
const WAIT: Duration = Duration::from_secs(60);

/// The namespace of the replicas' Lease and ConfigMaps.
pub const NAMESPACE: &str = "default";
/// The Lease the replicas compete for.
pub const LEASE: &str = "configmaps-leader";

/// Lease timing of the tests: 4 s leases, 3 s renew deadline (long enough that two cores
/// shared by the server and every replica of a debug build never miss it), 200 ms retry
/// period (how soon a standby takes a released Lease), released on cancel.
pub fn timing() -> LeaderElectionConfig {
    LeaderElectionConfig {
        lease_duration: Duration::from_secs(4),
        renew_deadline: Duration::from_secs(3),
        retry_period: Duration::from_millis(200),
        release_on_cancel: true,
    }
}

/// One reconcile of one replica.
#[derive(Clone, Debug)]
pub struct Call {
    /// The replica.
    pub replica: String,
    /// The key.
    pub key: String,
    /// The replica's leadership term at the start (1 for its first).
    pub term: u64,
    /// When it started.
    pub at: Instant,
    /// Whether it has returned.
    pub finished: bool,
}

/// The reconciles of every replica, checked for overlap: no reconcile may start on one
/// replica while another replica has one in flight.
#[derive(Default)]
pub struct Activity {
    calls: Mutex<Vec<Call>>,
    /// Per replica: reconciles finished, and when its first one started.
    counts: Mutex<HashMap<String, (usize, Option<Instant>)>>,
    in_flight: Mutex<HashMap<String, usize>>,
    /// Every overlap seen.
    pub violations: Mutex<Vec<String>>,
    changed: Notify,
    held: Mutex<Option<watch::Sender<BTreeSet<String>>>>,
}

impl Activity {
    /// A shared, empty log.
    pub fn new() -> Arc<Self> {
        let (tx, _) = watch::channel(BTreeSet::new());
        Arc::new(Self {
            held: Mutex::new(Some(tx)),
            ..Self::default()
        })
    }

    fn held(&self) -> watch::Sender<BTreeSet<String>> {
        self.held
            .lock()
            .get_or_insert_with(|| watch::channel(BTreeSet::new()).0)
            .clone()
    }

    /// Makes the reconciles of `key` wait until [`release`](Self::release).
    pub fn hold(&self, key: &str) {
        self.held().send_modify(|h| {
            h.insert(key.to_owned());
        });
    }

    /// Lets the reconciles of `key` return.
    pub fn release(&self, key: &str) {
        self.held().send_modify(|h| {
            h.remove(key);
        });
    }

    /// One reconcile of `key` by `replica` in its term `term`: recorded, checked, held while
    /// [`hold`](Self::hold) says so.
    pub async fn reconcile(&self, replica: &str, key: &str, term: u64) {
        let index = {
            let mut in_flight = self.in_flight.lock();
            if let Some((other, _)) = in_flight.iter().find(|(r, n)| *r != replica && **n > 0) {
                self.violations.lock().push(format!(
                    "{replica} started {key} while {other} was reconciling"
                ));
            }
            *in_flight.entry(replica.to_owned()).or_default() += 1;
            self.counts
                .lock()
                .entry(replica.to_owned())
                .or_default()
                .1
                .get_or_insert_with(Instant::now);
            let mut calls = self.calls.lock();
            calls.push(Call {
                replica: replica.to_owned(),
                key: key.to_owned(),
                term,
                at: Instant::now(),
                finished: false,
            });
            calls.len() - 1
        };
        self.changed.notify_waiters();
        let mut held = self.held().subscribe();
        let _ = held.wait_for(|h| !h.contains(key)).await;
        *self.in_flight.lock().entry(replica.to_owned()).or_default() -= 1;
        self.calls.lock()[index].finished = true;
        self.counts.lock().entry(replica.to_owned()).or_default().0 += 1;
        self.changed.notify_waiters();
    }

    /// Reconciles `replica` has finished.
    pub fn finished(&self, replica: &str) -> usize {
        self.counts.lock().get(replica).map_or(0, |c| c.0)
    }

    /// When `replica`'s first reconcile started.
    pub fn first_start(&self, replica: &str) -> Option<Instant> {
        self.counts.lock().get(replica).and_then(|c| c.1)
    }

    /// Waits until `replica` has finished `n` reconciles (cheap to check: for thousands).
    pub async fn wait_finished(&self, replica: &str, n: usize) {
        self.wait_until(&format!("{replica} finishing {n} reconciles"), || {
            self.finished(replica) >= n
        })
        .await;
    }

    /// Waits until `replica` has started a reconcile; when the first one started.
    pub async fn wait_started(&self, replica: &str) -> Instant {
        self.wait_until(&format!("{replica} starting a reconcile"), || {
            self.first_start(replica).is_some()
        })
        .await;
        self.first_start(replica).unwrap_or_else(Instant::now)
    }

    async fn wait_until(&self, what: &str, cond: impl Fn() -> bool) {
        let wait = async {
            loop {
                let mut notified = pin!(self.changed.notified());
                notified.as_mut().enable();
                if cond() {
                    return;
                }
                notified.await;
            }
        };
        if tokio::time::timeout(WAIT, wait).await.is_err() {
            panic!("timed out waiting for {what}");
        }
    }

    /// Every call so far.
    pub fn calls(&self) -> Vec<Call> {
        self.calls.lock().clone()
    }

    /// The calls of `replica`.
    pub fn of(&self, replica: &str) -> Vec<Call> {
        self.calls
            .lock()
            .iter()
            .filter(|c| c.replica == replica)
            .cloned()
            .collect()
    }

    /// Waits until `pred` holds for the calls.
    pub async fn wait_for(&self, what: &str, pred: impl Fn(&[Call]) -> bool) {
        let wait = async {
            loop {
                let mut notified = pin!(self.changed.notified());
                notified.as_mut().enable();
                if pred(&self.calls.lock()) {
                    return;
                }
                notified.await;
            }
        };
        if tokio::time::timeout(WAIT, wait).await.is_err() {
            panic!("timed out waiting for {what}; calls: {:?}", self.calls());
        }
    }

    /// Asserts that no two replicas ever reconciled at once.
    ///
    /// # Panics
    ///
    /// With the overlaps, when there was one.
    pub fn assert_exclusive(&self) {
        let v = self.violations.lock().clone();
        assert!(v.is_empty(), "replicas reconciled at once: {v:?}");
    }
}

/// Whether every ConfigMap `keys` names has a finished reconcile by `replica` in `term` or
/// later.
pub fn all_reconciled(calls: &[Call], replica: &str, keys: &[String], term: u64) -> bool {
    keys.iter().all(|k| {
        calls
            .iter()
            .any(|c| c.replica == replica && &c.key == k && c.term >= term && c.finished)
    })
}

/// How a replica runs.
#[derive(Clone, Debug)]
pub struct ReplicaOptions {
    /// Warm standby.
    pub warm: bool,
    /// The Lease's name ([`LEASE`] by default).
    pub lease: String,
    /// The Lease timing.
    pub timing: LeaderElectionConfig,
    /// Workers.
    pub workers: usize,
}

impl ReplicaOptions {
    /// The tests' replica: [`timing`], 2 workers.
    pub fn new(warm: bool) -> Self {
        Self {
            warm,
            lease: LEASE.to_owned(),
            timing: timing(),
            workers: 2,
        }
    }
}

/// One replica of the leader-elected ConfigMap controller, run on a task of its own.
pub struct Replica {
    /// Its identity in the Lease.
    pub identity: String,
    /// Its controller's live state.
    pub status: ControllerStatus,
    /// Its own factory (and client).
    pub factory: InformerFactory,
    cancel: CancellationToken,
    task: JoinHandle<ReconcileStats>,
}

impl Replica {
    /// Starts a replica on `client` whose reconciles go through `activity`.
    pub fn start(
        client: Client,
        identity: &str,
        options: &ReplicaOptions,
        activity: &Arc<Activity>,
    ) -> Self {
        let factory = crate::informer::factory_builder(client)
            .namespace(NAMESPACE)
            .build();
        let election =
            LeaderElection::new(NAMESPACE, &options.lease, identity).timing(options.timing.clone());
        let controller = Controller::<ConfigMap>::builder(&factory)
            .workers(options.workers)
            .leader_election(election)
            .expect("a valid election")
            .warm_standby(options.warm)
            .build();
        let status = controller.status();
        let cancel = CancellationToken::new();
        let (activity, me, term_of) = (activity.clone(), identity.to_owned(), status.clone());
        let task = tokio::spawn(controller.run(
            move |req| {
                let (activity, me) = (activity.clone(), me.clone());
                let term = term_of.snapshot().election.map_or(0, |e| e.terms);
                async move {
                    activity.reconcile(&me, &req.key, term).await;
                    Ok::<_, std::convert::Infallible>(Action::done())
                }
            },
            cancel.clone().cancelled_owned(),
        ));
        Self {
            identity: identity.to_owned(),
            status,
            factory,
            cancel,
            task,
        }
    }

    /// Whether it holds the Lease and its workers run.
    pub fn leads(&self) -> bool {
        let s = self.status.snapshot();
        s.phase == ControllerPhase::Running && s.election.is_some_and(|e| e.leading)
    }

    /// Waits until the controller's phase is `phase`.
    pub async fn wait_phase(&self, phase: ControllerPhase) {
        self.wait_until(&format!("{} {phase:?}", self.identity), |s| {
            s.phase == phase
        })
        .await;
    }

    /// Waits until `pred` holds for the controller's snapshot (polled every 10 ms).
    pub async fn wait_until(
        &self,
        what: &str,
        pred: impl Fn(&kinform::controller::ControllerSnapshot) -> bool,
    ) {
        let deadline = Instant::now() + WAIT;
        loop {
            let s = self.status.snapshot();
            if pred(&s) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {what}: {s:?}"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Lists its reflector completed (every informer of its factory together).
    pub fn lists(&self) -> u64 {
        self.factory
            .informers()
            .iter()
            .map(|i| i.reflector.lists)
            .sum()
    }

    /// Cancels it (a graceful shutdown: drain, then release the Lease) and waits for the
    /// end of its run; its factory is shut down.
    pub async fn stop(self) -> ReconcileStats {
        self.cancel.cancel();
        let stats = self.task.await.expect("the replica's run");
        self.factory.shutdown().await;
        stats
    }

    /// Cancels it without waiting.
    pub fn cancel(&self) {
        self.cancel.cancel();
    }

    /// Aborts its run (a crash, as far as the others can tell: the Lease is neither renewed
    /// nor released) and stops its factory.
    pub async fn kill(self) {
        self.task.abort();
        let _ = self.task.await;
        self.factory.shutdown().await;
    }
}

/// Creates the ConfigMaps `cm-00000..cm-{n-1}` in [`NAMESPACE`] through the server's store;
/// returns their keys.
pub fn create_configmaps(server: &TestApiServer, n: usize) -> Vec<String> {
    create_configmaps_of(server, n, "v")
}

/// [`create_configmaps`] whose `data.k` is `payload` (the benchmark's object size).
pub fn create_configmaps_of(server: &TestApiServer, n: usize, payload: &str) -> Vec<String> {
    (0..n)
        .map(|i| {
            let name = format!("cm-{i:05}");
            server
                .create_object(serde_json::json!({
                    "apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": name, "namespace": NAMESPACE},
                    "data": {"k": payload}
                }))
                .expect("create a ConfigMap");
            format!("{NAMESPACE}/{name}")
        })
        .collect()
}

/// Creates the ConfigMap `name` in [`NAMESPACE`]; returns its key.
pub fn create_configmap(server: &TestApiServer, name: &str) -> String {
    server
        .create_object(serde_json::json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": NAMESPACE},
            "data": {"k": "v"}
        }))
        .expect("create a ConfigMap");
    format!("{NAMESPACE}/{name}")
}

/// Takes the Lease over for `holder`, as another process would, with a lease of
/// `seconds`: the replica holding it loses it at its next renewal.
pub async fn steal_lease(client: &Client, holder: &str, seconds: i32) {
    let api: Api<Lease> = Api::namespaced(client.clone(), NAMESPACE);
    let mut lease = api.get(LEASE).await.expect("the Lease exists");
    let spec = lease.spec.get_or_insert_with(Default::default);
    spec.holder_identity = Some(holder.to_owned());
    spec.lease_duration_seconds = Some(seconds);
    spec.lease_transitions = Some(spec.lease_transitions.unwrap_or(0) + 1);
    let now = k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime(
        k8s_openapi::jiff::Timestamp::now(),
    );
    spec.acquire_time = Some(now.clone());
    spec.renew_time = Some(now);
    api.replace(LEASE, &Default::default(), &lease)
        .await
        .expect("replace the Lease");
}

/// The Lease's holder now.
pub async fn lease_holder(client: &Client) -> Option<String> {
    let api: Api<Lease> = Api::namespaced(client.clone(), NAMESPACE);
    api.get_opt(LEASE)
        .await
        .expect("read the Lease")
        .and_then(|l| l.spec?.holder_identity)
        .filter(|h| !h.is_empty())
}
