//! Sharding: N replicas of one controller, each reconciling only its part of the objects,
//! with Kubernetes objects as the only coordination (no other store, no consensus of our
//! own). Enable it with [`ControllerBuilder::sharded`](super::ControllerBuilder::sharded).
//!
//! Leader election (client-go's `tools/leaderelection`, our [`crate::leader`]) keeps every
//! replica but one idle, so one process's memory and reconcile rate are the ceiling. Here:
//!
//! - **Membership** (module `membership`): each replica keeps a `coordination.k8s.io/v1` Lease of
//!   its own, `<controller>-shard-<identity>`, renewed every `retry_period` like the leader
//!   elector's; a replica whose renewals fail for `renew_deadline` stops reconciling (and
//!   rejoins, below). The live Leases — judged on the observer's own clock, as client-go
//!   judges a leader's lease — are the members, named by the Leases' holders.
//! - **Assignment** (module `ring`, [`owner_of`]): rendezvous hashing of the object key over the members
//!   (balance and movement are documented there). One replica, elected through an ordinary
//!   Lease `<controller>-sharder` with the leader elector, is the **sharder**: it watches all
//!   objects of the controlled type and writes the shard label `shard.kinform.io/<controller>
//!   =<member>` on each (when it is created and when members change). The sharder's cache
//!   therefore holds every object, as metadata only (`PartialObjectMetadata`), and of that
//!   only what a decision reads: name, namespace, resourceVersion, the shard and drain labels
//!   and the controller reference (its size: `BENCHMARKS.md`, "Sharding"); the other
//!   replicas' caches hold no extra object.
//! - **Roles** ([`ShardRole`]): by default every replica is a member and stands for
//!   sharder. The sharder's metadata cache of every object is memory the others do not
//!   carry; a deployment can run the sharder apart ([`ShardRole::Sharder`], reconciling
//!   nothing) with members that never stand for it ([`ShardRole::Member`]).
//! - **Scoped informers**: each replica's informer of the controlled type, and of the types
//!   it [`owns`](super::ControllerBuilder::owns), selects `shard.kinform.io/<controller>=<its
//!   identity>`, so its cache memory and watch traffic fall to about 1/N.
//! - **Owned objects follow their owner**: the sharder copies an owner's shard label onto
//!   every object whose controller reference names it (for each owned type).
//! - **Handover** (module `plan`): an object moving from a live A to B is first marked draining
//!   (`drain.shard.kinform.io/<controller>=B`); A's worker, holding the key alone, releases
//!   it by writing `shard=B`, and only then is it in B's selection. Writes carry the
//!   resourceVersion they were decided on. So no object is ever reconciled by two replicas at
//!   once. A dead replica's objects move when its Lease expires; a replica that shuts down
//!   gracefully drains its workqueue, then releases its Lease so they move at once.
//! - **Metrics and events**: objects per shard, moves, handover latency and failed label
//!   writes through the [`ControllerMetricsProvider`] hooks and
//!   [`ShardHandle::stats`]; the sharder records an Event on a member's Lease when it joins
//!   or leaves (reasons `ShardMemberJoined`, `ShardMemberLeft`). A label write refused other
//!   than with 409 Conflict or 404 NotFound (a 403 of a missing `patch` verb, below) leaves
//!   its object unassigned or unmoved: it is a warning naming the object, the verb and the
//!   server's message, a count in `kinform_shard_assignment_failures_total`, and from the
//!   sharder a Warning Event `ShardAssignmentFailed` about the object.
//!
//! **Identity.** Each replica needs an identity unique to the running process, such as a pod
//! name. A StatefulSet pod restarted under the same name should add a suffix: a restarted
//! process must not find objects still labelled for its previous incarnation while they are
//! being moved away (the rule a rejoin follows with `.<n>`). The identity must be a valid
//! label value of at most [`MAX_IDENTITY_LEN`] (56) characters of `[a-zA-Z0-9-_.]`,
//! alphanumeric at both ends, leaving room for the rejoin suffix; no identity may be
//! another's plus `.<n>`. A member's identity also names its Lease, so it must be lower case
//! without `_` ([`ControllerBuilder::sharded`](super::ControllerBuilder::sharded) checks).
//! The controller's name is the name part of the label keys and begins the Lease names, so
//! [`validate_controller_name`] holds it to both rules.
//!
//! **RBAC** a replica needs, nothing else installed on the cluster:
//!
//! ```yaml
//! rules:
//! - apiGroups: ["coordination.k8s.io"]   # its member Lease, the sharder Lease, the member list
//!   resources: ["leases"]
//!   verbs: ["get", "list", "create", "update"]
//! - apiGroups: ["<group of K>"]          # the sharder's full watch, and label writes
//!   resources: ["<plural of K>"]
//!   verbs: ["get", "list", "watch", "patch"]
//! - apiGroups: ["<group of each owned type>"]
//!   resources: ["<plural>"]
//!   verbs: ["get", "list", "watch", "patch"]
//! - apiGroups: ["events.k8s.io"]         # membership events
//!   resources: ["events"]
//!   verbs: ["create", "patch"]
//! ```
//!
//! **Rejoining.** A replica whose renewals failed for `renew_deadline` (a partition, an
//! overloaded API server) stops reconciling at once: its workers reconcile no key they have
//! not started (the reconciles in flight finish), its scoped informers and workqueue are
//! dropped. Then it joins again, as a new member: it writes its Lease with the holder
//! `<identity>.<n>` (`n` counting its rejoins), retrying with a backoff from `retry_period`
//! up to `lease_duration` while the API server cannot be reached, and builds fresh scoped
//! informers selecting `shard=<identity>.<n>` and a fresh workqueue. The new label value is
//! what keeps the guarantee: objects still labelled `<identity>` are never in the new
//! selection, and the sharder, which sees the Lease's holder change, treats `<identity>` as
//! a member that left and assigns its objects directly — safe, as nothing of the old
//! membership is reconciling any more when the Lease is written again. So a rejoined replica
//! reconciles only what the sharder gave it since, about 1/N. Only
//! [`ShardHandle::abandon`] and the shutdown future end [`Controller::run`](super::Controller::run).
//! A worker reconciles the deletion of an object only if that object left this replica's
//! cache; a key of an object it does not hold (mapped from a related object with
//! [`watches`](super::ControllerBuilder::watches), say) is dropped.
//!
//! Limitation: objects created by a reconcile are labelled by the sharder after the fact (a
//! reconcile may set the label itself with [`ShardHandle::identity`]).

pub(crate) mod membership;
mod plan;
mod ring;
mod sharder;

use std::collections::{BTreeMap, HashSet};
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use k8s_openapi::api::coordination::v1::Lease;
use parking_lot::Mutex;
use tokio_util::sync::CancellationToken;

use super::ControllerMetricsProvider;
use crate::informer::{InformerScope, Tweak};
use crate::leader::{ConfigError, LeaderElectionConfig};
use crate::workqueue::{CounterMetric, HistogramMetric, SettableGaugeMetric};
use kinform_client::{Api, Client, PartialObjectMetadata, Patch, PatchParams};
use kinform_core::resource::{ApiResource, HasMetadata};
use serde_json::{Value, json};

pub use plan::ShardLabels;
pub use ring::owner_of;

pub(crate) use membership::{MemberEnd, lease_name, observe_members, run_member};
pub(crate) use plan::{Gate, gate};
pub(crate) use sharder::{OwnedLabeller, owned_labeller, run_sharder};

/// How a sharded controller finds its peers.
#[derive(Clone, Debug, PartialEq, Eq)]
#[must_use]
pub struct ShardingConfig {
    /// The namespace of the member Leases and the sharder Lease (e.g. the controller's own
    /// namespace).
    pub lease_namespace: String,
    /// This replica's identity, unique per running process (see the [module docs](self)).
    pub identity: String,
    /// Lease timing, validated as the leader elector validates it: a member stops
    /// reconciling after `renew_deadline` without a renewal, and its objects move
    /// `lease_duration` after the sharder last saw its Lease change. The sharder runs an
    /// assignment pass at least every `retry_period`.
    pub timing: LeaderElectionConfig,
    /// What this replica does: reconcile a shard and stand for sharder (the default), or
    /// only one of the two (see [`ShardRole`]).
    pub role: ShardRole,
}

/// What one replica of a sharded controller does.
///
/// By default every replica is a member (it holds a member Lease and reconciles its shard)
/// and stands in the sharder election. The elected sharder caches every object's metadata,
/// so it carries more memory than the others (`BENCHMARKS.md`, `## Sharding`). A deployment
/// that wants every member at its 1/N share runs the sharder apart instead, as the
/// sharding designs built outside the controller do (a separate sharder component):
/// members with [`ShardRole::Member`], and one or more (for availability: one of them is
/// elected) with [`ShardRole::Sharder`], which reconciles nothing. Some replica must stand
/// for sharder, or no object is ever assigned.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum ShardRole {
    /// A member that also stands in the sharder election.
    #[default]
    MemberAndSharder,
    /// A member that never becomes the sharder.
    Member,
    /// Only a sharder candidate: no member Lease, no scoped cache, no reconcile.
    Sharder,
}

impl ShardRole {
    /// Whether the replica holds a member Lease and reconciles a shard.
    pub fn is_member(self) -> bool {
        matches!(self, Self::MemberAndSharder | Self::Member)
    }

    /// Whether the replica stands in the sharder election.
    pub fn stands_for_sharder(self) -> bool {
        matches!(self, Self::MemberAndSharder | Self::Sharder)
    }
}

impl ShardingConfig {
    /// A replica `identity` with Leases in `lease_namespace` and the leader elector's
    /// default timing (15 s / 10 s / 2 s).
    pub fn new(lease_namespace: impl Into<String>, identity: impl Into<String>) -> Self {
        Self {
            lease_namespace: lease_namespace.into(),
            identity: identity.into(),
            timing: LeaderElectionConfig::default(),
            role: ShardRole::default(),
        }
    }

    /// Other Lease timing.
    pub fn timing(mut self, timing: LeaderElectionConfig) -> Self {
        self.timing = timing;
        self
    }

    /// Another role (see [`ShardRole`]).
    pub fn role(mut self, role: ShardRole) -> Self {
        self.role = role;
        self
    }

    /// Checks the timing (as [`LeaderElectionConfig::validate`]) and the identity: a label
    /// value (`[A-Za-z0-9-_.]`, alphanumeric at both ends) of at most
    /// [`MAX_IDENTITY_LEN`] characters, leaving room for the suffix of a rejoin.
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.timing.validate()?;
        let id = self.identity.as_str();
        if id.is_empty() {
            return Err(ConfigError::EmptyIdentity);
        }
        let reason = if id.len() > MAX_IDENTITY_LEN {
            Some("longer than 56 characters (a label value, with room for a rejoin suffix)".into())
        } else {
            kinform_core::selector::validate_label_value(id).err()
        };
        match reason {
            Some(reason) => Err(ConfigError::InvalidShardIdentity {
                identity: id.to_owned(),
                reason,
            }),
            None => Ok(()),
        }
    }
}

/// Checks that `name`, a controller's [name](super::ControllerBuilder::name), can name a
/// sharded controller: it is the name part of the qualified label names
/// `shard.kinform.io/<name>` and `drain.shard.kinform.io/<name>`, so at most 63 characters
/// matching `[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?`, and it begins the Lease names
/// `<name>-sharder` and `<name>-shard-<identity>`, which must be DNS subdomains (lower
/// case, no `_`, no empty or `-`-edged part between dots). A name that breaks either rule
/// would leave every object unassigned: the label writes or the Lease writes would be
/// refused.
pub fn validate_controller_name(name: &str) -> Result<(), ConfigError> {
    let invalid = |reason: String| ConfigError::InvalidControllerName {
        name: name.to_owned(),
        reason,
    };
    if name.is_empty()
        || name.contains('/')
        || kinform_core::selector::validate_label_value(name).is_err()
    {
        return Err(invalid(format!(
            "the shard label key {:?} needs a name part of at most 63 characters matching \
             [A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?",
            ShardLabels::for_controller(name).shard
        )));
    }
    let sharder = format!("{name}-sharder");
    if let Err(reason) = kinform_core::selector::validate_dns_subdomain(&sharder) {
        return Err(invalid(format!("the Lease name {sharder:?} {reason}")));
    }
    Ok(())
}

/// Checks the names that the controller `name` and the replica's identity make together
/// (the member Lease's; the label keys' and the sharder Lease's through
/// [`validate_controller_name`]).
pub(crate) fn validate_names(name: &str, config: &ShardingConfig) -> Result<(), ConfigError> {
    validate_controller_name(name)?;
    if config.role.is_member() {
        let lease = membership::lease_name(name, &config.identity);
        if let Err(reason) = kinform_core::selector::validate_dns_subdomain(&lease) {
            return Err(ConfigError::InvalidShardIdentity {
                identity: config.identity.clone(),
                reason: format!("its member Lease name {lease:?} {reason}"),
            });
        }
    }
    Ok(())
}

/// The longest [`ShardingConfig::identity`]: a label value has at most 63 characters, and a
/// replica that rejoins labels its objects `<identity>.<n>` (see the [module docs](self)).
pub const MAX_IDENTITY_LEN: usize = 56;

/// The shard label value of a replica's `n`-th membership: its identity, then
/// `<identity>.<n>` after each rejoin (`n` below a million, so at most 63 characters).
fn incarnation(identity: &str, n: u64) -> String {
    match n {
        0 => identity.to_owned(),
        n => format!("{identity}.{}", n % 1_000_000),
    }
}

/// Counters of one replica's sharding, always kept.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ShardStats {
    /// Objects this replica handed over (released to another member).
    pub released: u64,
    /// As the sharder: objects that changed owner (handovers completed plus objects taken
    /// from expired members).
    pub moves: u64,
    /// As the sharder: handovers completed (drain mark seen resolved).
    pub handovers: u64,
    /// As the sharder: the longest handover seen, in milliseconds.
    pub max_handover_ms: u64,
    /// As the sharder: the members after the last assignment pass.
    pub members: Vec<String>,
    /// As the sharder: objects labelled for each member after the last assignment pass.
    pub objects_per_shard: BTreeMap<String, usize>,
    /// Whether this replica is the sharder now.
    pub is_sharder: bool,
    /// Objects in this replica's scoped cache now (0 while it is not a member).
    pub cached: usize,
    /// How many times this replica lost its membership and joined again.
    pub rejoins: u64,
    /// Shard and drain label writes of this replica (as the sharder, or handing an object
    /// over) that failed other than with 409 Conflict or 404 NotFound: a 403 of a missing
    /// `patch` verb, say. Each leaves its object where it was, and is logged as a warning.
    pub assignment_failures: u64,
}

#[derive(Default)]
struct Counters {
    released: AtomicU64,
    moves: AtomicU64,
    handovers: AtomicU64,
    max_handover_ms: AtomicU64,
    view: Mutex<(Vec<String>, BTreeMap<String, usize>)>,
    is_sharder: std::sync::atomic::AtomicBool,
    rejoins: AtomicU64,
    assignment_failures: AtomicU64,
}

/// How many objects the current scoped cache holds.
pub(crate) type CacheLen = Box<dyn Fn() -> usize + Send + Sync>;

/// The metric objects of the sharder's hooks.
struct Hooks {
    provider: Arc<dyn ControllerMetricsProvider>,
    moves: Box<dyn CounterMetric>,
    handover: Box<dyn HistogramMetric>,
    failures: Box<dyn CounterMetric>,
    objects: Mutex<BTreeMap<String, Box<dyn SettableGaugeMetric>>>,
}

/// What one sharded replica shares between its controller, its membership and its sharder.
pub(crate) struct Shared {
    pub(crate) controller: String,
    pub(crate) config: ShardingConfig,
    pub(crate) labels: ShardLabels,
    pub(crate) client: Client,
    /// The factory's scope, which each membership narrows to its shard label.
    base_scope: InformerScope,
    /// The factory's reflector options, which the sharder's own factory takes too.
    pub(crate) reflector: Option<Tweak>,
    /// The shard label value of the current membership (see [`incarnation`]).
    identity: Mutex<Arc<str>>,
    /// The current membership's number: 0, then one more after each rejoin.
    incarnation: AtomicU64,
    /// Keys this replica released and has not seen come back.
    pub(crate) released: Mutex<HashSet<String>>,
    /// Keys whose object left this replica's cache and whose key was not reconciled since.
    pub(crate) deleted: Mutex<HashSet<String>>,
    /// The size of the current scoped cache.
    cache_len: Mutex<Option<CacheLen>>,
    /// Fired to stop renewing without releasing (a crash, as far as the others can tell).
    pub(crate) abandon: CancellationToken,
    /// This replica's view of the member Leases.
    pub(crate) members: Mutex<membership::MemberTable>,
    counters: Counters,
    hooks: Option<Hooks>,
}

impl Shared {
    pub(crate) fn new(
        controller: String,
        config: ShardingConfig,
        client: Client,
        base_scope: InformerScope,
        reflector: Option<Tweak>,
        provider: Option<Arc<dyn ControllerMetricsProvider>>,
    ) -> Self {
        let hooks = provider.map(|p| Hooks {
            moves: p.new_shard_moves_metric(&controller),
            handover: p.new_shard_handover_time_metric(&controller),
            failures: p.new_shard_assignment_failures_metric(&controller),
            objects: Mutex::new(BTreeMap::new()),
            provider: p,
        });
        Self {
            labels: ShardLabels::for_controller(&controller),
            members: Mutex::new(membership::MemberTable::new(&controller)),
            identity: Mutex::new(config.identity.as_str().into()),
            incarnation: AtomicU64::new(0),
            controller,
            config,
            client,
            base_scope,
            reflector,
            released: Mutex::new(HashSet::new()),
            deleted: Mutex::new(HashSet::new()),
            cache_len: Mutex::new(None),
            abandon: CancellationToken::new(),
            counters: Counters::default(),
            hooks,
        }
    }

    /// The shard label value of the current membership.
    pub(crate) fn identity(&self) -> Arc<str> {
        self.identity.lock().clone()
    }

    /// Starts the next membership after a lost one: a new shard label value, nothing
    /// released or deleted, no cache yet. Returns the new identity.
    pub(crate) fn next_incarnation(&self) -> Arc<str> {
        let n = self.incarnation.fetch_add(1, Ordering::SeqCst) + 1;
        self.counters.rejoins.fetch_add(1, Ordering::Relaxed);
        let identity: Arc<str> = incarnation(&self.config.identity, n).into();
        *self.identity.lock() = identity.clone();
        self.released.lock().clear();
        self.deleted.lock().clear();
        identity
    }

    /// The factory's scope narrowed to the current membership's shard label.
    pub(crate) fn scope(&self) -> InformerScope {
        let mut scope = self.base_scope.clone();
        let own = self.labels.selector(&self.identity());
        scope.label_selector = Some(match scope.label_selector.take() {
            Some(user) if !user.is_empty() => format!("{user},{own}"),
            _ => own,
        });
        scope
    }

    /// Sets (or clears) how to count the current scoped cache.
    pub(crate) fn set_cache(&self, len: Option<CacheLen>) {
        *self.cache_len.lock() = len;
    }

    pub(crate) fn lease_api(&self) -> Api<Lease> {
        Api::namespaced(self.client.clone(), &self.config.lease_namespace)
    }

    pub(crate) fn count_release(&self) {
        self.counters.released.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn count_move(&self) {
        self.counters.moves.fetch_add(1, Ordering::Relaxed);
        if let Some(h) = &self.hooks {
            h.moves.inc();
        }
    }

    pub(crate) fn count_handover(&self, seconds: f64) {
        self.counters.handovers.fetch_add(1, Ordering::Relaxed);
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let ms = (seconds * 1000.0) as u64;
        self.counters
            .max_handover_ms
            .fetch_max(ms, Ordering::Relaxed);
        if let Some(h) = &self.hooks {
            h.handover.observe(seconds);
        }
    }

    /// Judges a failed label write of `obj` (an object of `resource`): a 409 Conflict or 404
    /// NotFound is the expected answer to a decision made on a stale cache (logged at debug
    /// level, `None`); anything else (a 403 of a missing verb, a rejected label) leaves the
    /// object where it was, so it is logged as a warning naming the object, the verb and
    /// the server's message, and counted. Returns that message then.
    pub(crate) fn label_write_failed(
        &self,
        resource: &ApiResource,
        obj: &impl HasMetadata,
        error: &kinform_client::Error,
    ) -> Option<String> {
        let key = obj.key();
        if error.is_conflict() || error.is_not_found() {
            tracing::debug!(controller = %self.controller, %resource, object = %key, %error, "shard label write decided on a stale cache");
            return None;
        }
        let message = write_failure_message(error);
        tracing::warn!(
            controller = %self.controller,
            %resource,
            object = %key,
            verb = LABEL_WRITE_VERB,
            code = error.code(),
            status = %message,
            "cannot write the shard label; the object stays unassigned or unmoved",
        );
        self.counters
            .assignment_failures
            .fetch_add(1, Ordering::Relaxed);
        if let Some(h) = &self.hooks {
            h.failures.inc();
        }
        Some(message)
    }

    pub(crate) fn set_sharder(&self, on: bool) {
        self.counters.is_sharder.store(on, Ordering::Relaxed);
    }

    pub(crate) fn set_view(&self, members: &[String], counts: BTreeMap<String, usize>) {
        if let Some(h) = &self.hooks {
            let mut gauges = h.objects.lock();
            for (member, gauge) in gauges.iter() {
                if !counts.contains_key(member) {
                    gauge.set(0.0);
                }
            }
            for (member, n) in &counts {
                #[allow(clippy::cast_precision_loss)]
                let value = *n as f64;
                gauges
                    .entry(member.clone())
                    .or_insert_with(|| {
                        h.provider
                            .new_shard_objects_metric(&self.controller, member)
                    })
                    .set(value);
            }
        }
        *self.counters.view.lock() = (members.to_vec(), counts);
    }

    fn stats(&self) -> ShardStats {
        let c = &self.counters;
        let (members, objects_per_shard) = c.view.lock().clone();
        ShardStats {
            released: c.released.load(Ordering::Relaxed),
            moves: c.moves.load(Ordering::Relaxed),
            handovers: c.handovers.load(Ordering::Relaxed),
            max_handover_ms: c.max_handover_ms.load(Ordering::Relaxed),
            members,
            objects_per_shard,
            is_sharder: c.is_sharder.load(Ordering::Relaxed),
            cached: self.cache_len.lock().as_ref().map_or(0, |len| len()),
            rejoins: c.rejoins.load(Ordering::Relaxed),
            assignment_failures: c.assignment_failures.load(Ordering::Relaxed),
        }
    }
}

/// The RBAC verb of a label write ([`write_labels`]: a JSON merge patch).
pub(crate) const LABEL_WRITE_VERB: &str = "patch";

/// What the server said of a failed write: its Status message, or the error itself when
/// there is no Status (the server could not be reached).
fn write_failure_message(error: &kinform_client::Error) -> String {
    error
        .status()
        .and_then(|s| s.message.clone())
        .filter(|m| !m.is_empty())
        .unwrap_or_else(|| error.to_string())
}

/// Writes `labels` (a JSON map; `null` removes a label) on `obj`, an object of `resource`,
/// at its resourceVersion. The answer is asked for as metadata only: nothing reads it.
pub(crate) async fn write_labels<T: HasMetadata>(
    shared: &Shared,
    resource: &ApiResource,
    obj: &T,
    labels: Value,
) -> Result<(), kinform_client::Error> {
    let api = match obj.namespace() {
        Some(ns) => {
            Api::<PartialObjectMetadata>::metadata_namespaced(shared.client.clone(), ns, resource)
        }
        None => Api::<PartialObjectMetadata>::metadata_all(shared.client.clone(), resource),
    };
    let patch = json!({"metadata": {"resourceVersion": obj.resource_version(), "labels": labels}});
    api.patch(obj.name(), &PatchParams::default(), &Patch::Merge(patch))
        .await
        .map(|_| ())
}

/// A handle on a sharded controller's replica, usable while it runs
/// ([`Controller::shard`](super::Controller::shard)).
#[derive(Clone)]
pub struct ShardHandle(pub(crate) Arc<Shared>);

impl fmt::Debug for ShardHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ShardHandle")
            .field("controller", &self.0.controller)
            .field("identity", &self.0.identity())
            .finish_non_exhaustive()
    }
}

impl ShardHandle {
    /// The value of this replica's shard label now: its configured identity, or
    /// `<identity>.<n>` after its `n`-th rejoin.
    pub fn identity(&self) -> Arc<str> {
        self.0.identity()
    }

    /// The scope of this membership's informers (the factory's, narrowed to
    /// [`identity`](Self::identity)'s shard label). A reconcile reads owned objects from
    /// `factory.informer_in::<C>(handle.scope()).lister()`: the cache whose events reach
    /// it, replaced by a fresh one after a rejoin.
    pub fn scope(&self) -> InformerScope {
        self.0.scope()
    }

    /// The label keys.
    pub fn labels(&self) -> &ShardLabels {
        &self.0.labels
    }

    /// The counters now.
    pub fn stats(&self) -> ShardStats {
        self.0.stats()
    }

    /// Stops renewing this replica's Lease without releasing it, as a crash would: the
    /// replica stops reconciling at once (its [`Controller::run`](super::Controller::run)
    /// finishes the reconciles in flight and returns, without rejoining) and the others take
    /// its objects once the Lease expires. For tests and for fencing a replica that knows it
    /// is unhealthy.
    pub fn abandon(&self) {
        self.0.abandon.cancel();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identities_are_label_values_with_room_for_a_rejoin_suffix() {
        let ok = |id: &str| ShardingConfig::new("ns", id).validate();
        assert_eq!(ok("replica-0.a_b"), Ok(()));
        assert_eq!(ok(""), Err(ConfigError::EmptyIdentity));
        for bad in ["-a", "a-", "a/b", "a b", &"x".repeat(MAX_IDENTITY_LEN + 1)] {
            assert!(
                matches!(ok(bad), Err(ConfigError::InvalidShardIdentity { .. })),
                "{bad:?}"
            );
        }
        assert_eq!(ok(&"x".repeat(MAX_IDENTITY_LEN)), Ok(()));
        // The longest identity with the longest suffix is still a label value.
        let longest = incarnation(&"x".repeat(MAX_IDENTITY_LEN), 999_999);
        assert_eq!(longest.len(), 63);
        assert_eq!(incarnation("r2", 0), "r2");
        assert_eq!(incarnation("r2", 1), "r2.1");
    }

    #[test]
    fn controller_names_are_label_names_that_can_begin_a_lease_name() {
        let longest = "x".repeat(63);
        for good in ["widgets", "a", "foo-controller", "foo.bar", "v2", &longest] {
            assert_eq!(validate_controller_name(good), Ok(()), "{good:?}");
        }
        let label_rule = "[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?";
        let too_long = "x".repeat(64);
        for bad in [
            "",
            "-a",
            "a-",
            ".a",
            "a/b",
            "example.com/a",
            "a b",
            "a:b",
            &too_long,
        ] {
            let err = validate_controller_name(bad).expect_err(bad);
            assert!(
                matches!(&err, ConfigError::InvalidControllerName { name, .. } if name == bad),
                "{bad:?}: {err:?}"
            );
            let text = err.to_string();
            assert!(
                text.contains(label_rule) && text.contains("shard.kinform.io/"),
                "{text}"
            );
        }
        // Label names, but not the beginning of a Lease name.
        for bad in ["Widgets", "my_widgets", "a..b", "a.-b"] {
            let err = validate_controller_name(bad).expect_err(bad);
            let text = err.to_string();
            assert!(
                text.contains("-sharder") && text.contains("DNS subdomain"),
                "{text}"
            );
        }
    }

    #[test]
    fn a_members_identity_must_fit_its_lease_name() {
        let config = |id: &str, role| ShardingConfig::new("ns", id).role(role);
        assert_eq!(
            validate_names("widgets", &config("r-0.a", ShardRole::Member)),
            Ok(())
        );
        let err = validate_names("widgets", &config("R_0", ShardRole::MemberAndSharder));
        assert!(
            matches!(&err, Err(ConfigError::InvalidShardIdentity { identity, reason })
                if identity == "R_0" && reason.contains("widgets-shard-R_0")),
            "{err:?}"
        );
        // A sharder apart holds no member Lease: its identity is only a holder.
        assert_eq!(
            validate_names("widgets", &config("R_0", ShardRole::Sharder)),
            Ok(())
        );
        assert!(matches!(
            validate_names("Widgets", &config("r0", ShardRole::Sharder)),
            Err(ConfigError::InvalidControllerName { .. })
        ));
    }
}
