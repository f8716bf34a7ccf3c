//! A small controller runtime: informers, a rate-limited priority workqueue and N workers,
//! wired the way Kubernetes' sample-controller and every kube-controller-manager controller
//! wire them by hand (client-go's "controller pattern"), with the small pieces every
//! controller otherwise writes itself (finalizers, event filters, timeouts, terminal errors).
//!
//! - **Keys, not objects, are queued.** Handlers on the informer of `K` put the object's key
//!   into the controller's workqueue ([`ControllerQueue`]); duplicate keys collapse and a key
//!   is never reconciled by two workers at once (the queue's dirty/processing sets). A worker
//!   reads the *current* object from the lister: the reconcile converges on the latest state,
//!   not on each change. A deleted object is reconciled too, with `object: None`.
//! - **A priority queue that cannot starve.** By default the queue is the
//!   [`PriorityQueue`](crate::workqueue::PriorityQueue): keys of the initial list and of
//!   resyncs go in at LOW, watch events at NORMAL, requeues at the key's priority or the one
//!   the reconcile names ([`Action::with_priority`]); within a priority the order is FIFO,
//!   and aging bounds how long a LOW key waits behind younger ones
//!   ([`priority_queue_max_wait`](ControllerBuilder::priority_queue_max_wait)). Depth and
//!   wait time per priority are metrics. `priority_queue(false)` gives client-go's plain
//!   [`RateLimitingQueue`](crate::workqueue::RateLimitingQueue).
//! - **Related objects map to keys.** [`owns`](ControllerBuilder::owns) maps an owned object
//!   to the key of the `K` named by its controller reference (`metav1.GetControllerOf`, as
//!   sample-controller's `handleObject`); [`watches`](ControllerBuilder::watches) maps any
//!   other type with a function. One builder method per concept.
//! - **Event filters.** [`filter`](ControllerBuilder::filter) and
//!   [`filter_related`](ControllerBuilder::filter_related) drop the update events a
//!   [`Filter`] does not pass (generation, labels or annotations changed, or a closure:
//!   controller-runtime's predicates); adds and deletes always queue.
//! - **Outcomes.** `Ok(`[`Action::done()`]`)` forgets the key's failure history
//!   (`queue.Forget`); `Ok(`[`Action::requeue_after(d)`](Action::requeue_after)`)` forgets and
//!   adds it back after `d` (`queue.AddAfter`); `Err(e)` logs a warning and requeues it
//!   through the rate limiter (`queue.AddRateLimited`), so failures back off per key, unless
//!   `e` is a [`ReconcileError::Terminal`]: reported, forgotten, not retried. A panic in the
//!   reconcile is caught (`catch_unwind` on the future, as client-go's `HandleCrash` would
//!   log it, but without killing the process) and treated as an error, and so is a reconcile
//!   cancelled by the [`reconcile_timeout`](ControllerBuilder::reconcile_timeout).
//! - **Finalizers.** [`finalizer`] runs a reconcile through a finalizer of its own: added
//!   before any work, cleanup on deletion, removed after; its writes are conflicts, never
//!   lost writes, when another writer changed the finalizers meanwhile.
//! - **Start and stop.** [`Controller::run`] starts the factory, waits until every watched
//!   informer has synced (`cache.WaitForCacheSync`), starts the workers, and on the shutdown
//!   future (e.g. [`shutdown_signal`]) drains: the queue refuses new keys, in-flight and
//!   already-queued keys finish (`ShutDownWithDrain`).
//! - **Read-your-own-writes, on by default.** The reconcile writes through
//!   [`req.client()`](Request::client); the next reconcile of the key waits until the
//!   controller's caches hold those writes, without holding a worker (see "Consistency"
//!   below; [`consistency_guard`](ControllerBuilder::consistency_guard)).
//! - **Sharding.** [`sharded`](ControllerBuilder::sharded) makes N replicas share the
//!   objects, each reconciling only its part, coordinated through Leases and labels alone
//!   ([`shard`]).
//! - **Leader election.** [`leader_election`](ControllerBuilder::leader_election) makes N
//!   replicas compete for one Lease, only the holder reconciling; a lost Lease sends the
//!   replica back to standby, never out of its run, and
//!   [`warm_standby`](ControllerBuilder::warm_standby) keeps a standby's caches synced so
//!   it reconciles the moment it wins ([`election`]).
//! - **Status.** [`Controller::status`] is a read-only handle on the live state (phase,
//!   caches, queue depth per priority, election or shard, counters) that status pages and
//!   the admin endpoint read while the controller runs.
//! - **Metrics.** The queue's workqueue metrics (per priority too), plus reconcile totals by
//!   result, errors, terminal errors, panics, timeouts, durations and active workers with
//!   controller-runtime's names ([`ControllerMetricsProvider`], Prometheus implementation
//!   behind the `prometheus` feature), and always-on counters ([`Controller::stats`]).
//!
//! The files: `builder` ([`ControllerBuilder`]), `run` ([`Controller`], the workers and the
//! outcome of each reconcile), `queue` ([`ControllerQueue`] and the priorities handlers
//! queue at), `watch` (the handlers), `action` ([`Action`], [`Request`]), `error`
//! ([`ReconcileError`], [`ReconcileFailure`]), `filter` ([`Filter`]), `finalizer`
//! ([`finalizer`]), `owner` (controller references), `metrics` and `prometheus`, and
//! [`shard`].
//!
//! # Consistency
//!
//! A cache lags the server: the reconcile of a key writes (creates a child, updates the
//! status), and when the key is reconciled again shortly after (a requeue, an event of
//! another object) its informers may not have delivered those writes yet. It then acts on
//! what it wrote before: a second create that fails with AlreadyExists, a status update
//! from a stale resourceVersion that fails with Conflict, or worse, a decision taken twice
//! (a scale-down undone). The consistency guard closes that window:
//!
//! 1. Every write the reconcile of key K makes through [`Request::client`] (create, replace,
//!    patch and server-side apply, delete, the status subresource, on any resource the
//!    factory has an informer of) is remembered with K: the resourceVersion the server
//!    answered, or, for a delete that removed the object, its UID (a delete that only set
//!    `deletionTimestamp` is a write at the answer's resourceVersion). Only the informers
//!    whose namespace and selectors hold the written object are asked to see it.
//! 2. Before K is reconciled again the worker asks the guard: once every informer involved
//!    has seen K's writes (its [watermark](crate::consistency::Watermark) is past the
//!    version, or it no longer holds the removed UID), K runs. Otherwise K is **parked**: the
//!    worker marks it done and takes the next key, and the guard adds K back to the queue
//!    when one of those informers advances far enough. A parked key never holds a worker.
//! 3. After [`consistency_timeout`](ControllerBuilder::consistency_timeout) (default 10 s) a
//!    parked key runs anyway, with a warning and `kinform_consistency_timeouts_total`.
//! 4. A resourceVersion that is not an integer (KEP-5504's comparable versions) cannot be
//!    waited for: the write is not remembered (fail open) and
//!    `kinform_consistency_incomparable_versions_total` counts it.
//!
//! Not remembered: writes of resources no informer of the factory caches (nothing would tell
//! when they are seen), writes through [`ReconcileClient::inner`] or
//! [`TrackedApi::untracked`] and other subresources, a `delete_collection` answered with a
//! Status. The guard is per key, as KEP-5647's: the reconcile of another key reading an
//! object K wrote is not held back. Parked keys are not drained at shutdown (they are not
//! in the queue). Counters: [`ReconcileStats`]'s `parked`, `woken`, `parked_timeouts` and
//! `incomparable_versions`, and the `kinform_consistency_*` metrics
//! ([`ControllerMetricsProvider`]).
//!
//! Where the others stand: kube-controller-manager (KEP-5647, on by default for the
//! DaemonSet, StatefulSet, ReplicaSet and Job controllers) keeps the same per-key record of
//! written resourceVersions and skips the reconcile of a key whose writes its informers have
//! not seen, requeueing it through the rate limiter as if it had failed, so a key that
//! waits long backs off further and further. controller-runtime's read-your-own-writes
//! client (#3472) blocks the reading worker in `Get`/`List` until the cache has seen the
//! client's earlier writes, which its maintainers note slows controllers that list after
//! writing. kinform differs in three ways: a waiting key never blocks a worker and is
//! woken by the informer's advance (no backoff, no polling); incomparable versions fail
//! open and are counted; and the wait is bounded.
//!
//! A Deployment controller that owns ReplicaSets, run here against the in-process
//! `TestApiServer` until its first reconcile (a program runs it until
//! [`shutdown_signal()`] and gets its client from `Client::try_default()`):
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use std::time::Duration;
//! use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
//! use kinform_runtime::controller::{Action, Controller};
//! use kinform_runtime::informer::InformerFactory;
//! use kinform_testserver::TestApiServer;
//! use tokio::sync::mpsc;
//!
//! let server = TestApiServer::start().await?;
//! server.create_object(serde_json::json!({
//!     "apiVersion": "apps/v1", "kind": "Deployment",
//!     "metadata": {"name": "web", "namespace": "default"},
//!     "spec": {
//!         "selector": {"matchLabels": {"app": "web"}},
//!         "template": {
//!             "metadata": {"labels": {"app": "web"}},
//!             "spec": {"containers": [{"name": "web", "image": "nginx"}]}
//!         }
//!     }
//! }))?;
//! let factory = InformerFactory::builder(server.client()?).test_backoff().build();
//! let controller = Controller::<Deployment>::builder(&factory)
//!     .owns::<ReplicaSet>() // a ReplicaSet's change reconciles its Deployment
//!     .workers(4)
//!     .build();
//! let (seen, mut reconciled) = mpsc::unbounded_channel();
//! let run = controller.run(
//!     move |req| {
//!         let seen = seen.clone();
//!         async move {
//!             match &req.object {
//!                 Some(d) => println!("reconcile {} (gen {:?})", req.key, d.metadata.generation),
//!                 None => println!("{} is gone", req.key),
//!             }
//!             let _ = seen.send(req.key);
//!             Ok::<_, std::convert::Infallible>(Action::requeue_after(Duration::from_secs(300)))
//!         }
//!     },
//!     // Stops (draining the queue) once the first reconcile happened.
//!     async move {
//!         assert_eq!(reconciled.recv().await.as_deref(), Some("default/web"));
//!     },
//! );
//! let stats = tokio::time::timeout(Duration::from_secs(30), run).await?;
//! assert_eq!(stats.requeues, 1);
//! factory.shutdown().await;
//! # Ok(()) }
//! ```

mod action;
mod builder;
mod client;
pub mod election;
mod error;
mod filter;
mod finalizer;
pub mod fleet;
mod guard;
mod metrics;
mod owner;
#[cfg(feature = "prometheus")]
mod prometheus;
mod queue;
mod run;
pub mod shard;
mod status;
mod watch;

pub use action::{Action, Request};
pub use builder::{ControllerBuilder, key_of};
pub use client::{ReconcileClient, TrackedApi};
pub use election::LeaderElection;
pub use error::{ReconcileError, ReconcileFailure};
pub use filter::Filter;
pub use finalizer::{FinalizerError, FinalizerEvent, FinalizerWrite, finalizer};
pub use guard::DEFAULT_CONSISTENCY_TIMEOUT;
pub use metrics::{ControllerMetricsProvider, ReconcileResult, ReconcileStats};
pub use owner::{controller_of, controller_reference, is_controlled_by, owner_key};
#[cfg(feature = "prometheus")]
pub use prometheus::PrometheusControllerMetrics;
pub use queue::ControllerQueue;
pub use run::{Controller, StatsHandle, shutdown_signal};
pub use status::{
    ControllerPhase, ControllerSnapshot, ControllerStatus, QueueSnapshot, ShardSnapshot,
};
