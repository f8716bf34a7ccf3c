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
//! - **Sharding.** [`sharded`](ControllerBuilder::sharded) makes N replicas share the
//!   objects, each reconciling only its part, coordinated through Leases and labels alone
//!   ([`shard`]).
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
mod error;
mod filter;
mod finalizer;
mod metrics;
mod owner;
#[cfg(feature = "prometheus")]
mod prometheus;
mod queue;
mod run;
pub mod shard;
mod watch;

pub use action::{Action, Request};
pub use builder::{ControllerBuilder, key_of};
pub use error::{ReconcileError, ReconcileFailure};
pub use filter::Filter;
pub use finalizer::{FinalizerError, FinalizerEvent, FinalizerWrite, finalizer};
pub use metrics::{ControllerMetricsProvider, ReconcileResult, ReconcileStats};
pub use owner::{controller_of, controller_reference, is_controlled_by, owner_key};
#[cfg(feature = "prometheus")]
pub use prometheus::PrometheusControllerMetrics;
pub use queue::ControllerQueue;
pub use run::{Controller, StatsHandle, shutdown_signal};
