//! [`Controller`]: waits for the caches, runs the workers, shuts down with a drain.

use std::fmt;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures_util::FutureExt;
use futures_util::future::join_all;
use serde_json::json;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::action::{Action, Request};
use super::builder::ControllerBuilder;
use super::metrics::{Outcome, ReconcileStats, Recorder};
use super::shard::{
    Gate, MemberEnd, OwnedLabeller, ShardHandle, Shared, gate, lease_name, observe_members,
    run_member, run_sharder, write_labels,
};
use super::watch::Watch;
use crate::informer::{InformerFactory, InformerScope};
use crate::leader::{LeaderCallbacks, LeaderElector, LeaseLock};
use crate::lister::Lister;
use crate::workqueue::RateLimitingQueue;
use kinform_core::resource::Resource;

/// Reconciles the objects of `K`: informer handlers put keys into a rate-limited workqueue
/// and N workers take them out and call the reconcile function (see the
/// [module docs](super)).
pub struct Controller<K> {
    name: String,
    workers: usize,
    factory: InformerFactory,
    queue: RateLimitingQueue<String>,
    lister: Lister<K>,
    watches: Vec<Box<dyn Watch>>,
    recorder: Arc<Recorder>,
    sharding: Option<Sharding>,
}

/// The parts of a sharded controller ([`ControllerBuilder::sharded`]).
pub(crate) struct Sharding {
    pub(crate) shared: Arc<Shared>,
    /// The factory's own scope: the sharder watches every object in it.
    pub(crate) scope: InformerScope,
    pub(crate) owned: Vec<Arc<dyn OwnedLabeller>>,
}

impl<K> fmt::Debug for Controller<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Controller")
            .field("name", &self.name)
            .field("workers", &self.workers)
            .field("queue", &self.queue)
            .field(
                "watches",
                &self
                    .watches
                    .iter()
                    .map(|w| w.describe())
                    .collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

/// A cheap handle on a controller's counters, usable while it runs.
#[derive(Clone)]
pub struct StatsHandle(Arc<Recorder>);

impl fmt::Debug for StatsHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.snapshot().fmt(f)
    }
}

impl StatsHandle {
    /// The counters now.
    pub fn snapshot(&self) -> ReconcileStats {
        self.0.counters.snapshot()
    }
}

impl<K: Resource> Controller<K> {
    /// A builder of a controller of `K` whose informers come from `factory`.
    pub fn builder(factory: &InformerFactory) -> ControllerBuilder<K> {
        ControllerBuilder::new(factory)
    }

    #[allow(clippy::too_many_arguments)] // one private constructor the builder fills field by field
    pub(crate) fn assemble(
        name: String,
        workers: usize,
        factory: InformerFactory,
        queue: RateLimitingQueue<String>,
        lister: Lister<K>,
        watches: Vec<Box<dyn Watch>>,
        recorder: Recorder,
        sharding: Option<Sharding>,
    ) -> Self {
        Self {
            name,
            workers,
            factory,
            queue,
            lister,
            watches,
            recorder: Arc::new(recorder),
            sharding,
        }
    }

    /// The handle on this replica's sharding, when [sharded](ControllerBuilder::sharded).
    pub fn shard(&self) -> Option<ShardHandle> {
        self.sharding
            .as_ref()
            .map(|s| ShardHandle(s.shared.clone()))
    }

    /// The controller's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The workqueue (to enqueue keys by hand, or to watch its length).
    pub fn queue(&self) -> &RateLimitingQueue<String> {
        &self.queue
    }

    /// The lister of `K` the workers read.
    pub fn lister(&self) -> &Lister<K> {
        &self.lister
    }

    /// Whether every watched informer has delivered its initial list to this controller's
    /// handlers ([`run`](Self::run) starts the workers only then).
    pub fn has_synced(&self) -> bool {
        self.watches.iter().all(|w| w.has_synced())
    }

    /// A handle on the reconcile counters.
    pub fn stats(&self) -> StatsHandle {
        StatsHandle(self.recorder.clone())
    }

    /// Starts the factory's informers, waits until every watched informer has synced, runs
    /// the workers until `shutdown` completes, then shuts down gracefully: the queue stops
    /// taking keys, the workers finish the reconciles in flight and the keys already queued
    /// (client-go's `ShutDownWithDrain`; keys waiting for a requeue delay are dropped), the
    /// handlers are unregistered. Returns the final counters.
    ///
    /// `shutdown` is any future: `token.cancelled_owned()` of a `CancellationToken`, or
    /// [`shutdown_signal()`](super::shutdown_signal) for SIGINT/SIGTERM. The factory is not
    /// shut down (it may be shared): call [`InformerFactory::shutdown`] after.
    ///
    /// The reconcile gets a [`Request`] (the key and the object the lister holds for it now)
    /// and returns [`Action::done()`] (the key's failure history is forgotten),
    /// [`Action::requeue_after`] (forgotten, then queued again after the delay) or an error
    /// (logged, queued again after the rate limiter's delay). A panic is caught, logged and
    /// treated as an error.
    pub async fn run<F, Fut, E>(
        self,
        reconcile: F,
        shutdown: impl Future<Output = ()>,
    ) -> ReconcileStats
    where
        F: Fn(Request<K>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Action, E>> + Send + 'static,
        E: fmt::Display + Send + 'static,
    {
        let reconcile = Arc::new(reconcile);
        let mut shutdown = std::pin::pin!(shutdown);
        tracing::info!(controller = %self.name, "starting controller");
        let shard = self.sharding.as_ref().map(|s| s.shared.clone());
        // A sharded replica: its member Lease first, then the sharder election.
        let joined = CancellationToken::new();
        let leave = CancellationToken::new();
        let member_gone = CancellationToken::new();
        let stop_sharder = CancellationToken::new();
        let mut member_task = None;
        let mut sharder_task = None;
        if let Some(sharding) = &self.sharding {
            let shared = sharding.shared.clone();
            let lock = LeaseLock::new(
                shared.lease_api(),
                lease_name(&shared.controller, shared.identity()),
                shared.identity(),
            );
            let (timing, joined, leave, abandon, gone) = (
                shared.config.timing.clone(),
                joined.clone(),
                leave.clone(),
                shared.abandon.clone(),
                member_gone.clone(),
            );
            member_task = Some(tokio::spawn(async move {
                let end = run_member(lock, timing, joined, leave, abandon).await;
                gone.cancel();
                end
            }));
            let observer = sharding.shared.clone();
            let stop = stop_sharder.clone();
            tokio::spawn(async move {
                observe_members(
                    observer.lease_api(),
                    &observer.members,
                    observer.config.timing.retry_period,
                    stop,
                )
                .await;
            });
            sharder_task = Some(tokio::spawn(compete_for_sharder::<K>(
                shared,
                sharding.scope.clone(),
                sharding.owned.clone(),
                stop_sharder.clone(),
            )));
        } else {
            joined.cancel();
        }
        self.factory.start();
        let synced = tokio::select! {
            _ = async {
                join_all(self.watches.iter().map(|w| w.wait_for_sync())).await;
                joined.cancelled().await;
            } => true,
            _ = &mut shutdown => false,
            _ = member_gone.cancelled() => false,
        };
        let mut workers = Vec::new();
        if synced {
            tracing::info!(controller = %self.name, workers = self.workers, "caches synced; starting workers");
            for _ in 0..self.workers {
                workers.push(tokio::spawn(worker(
                    self.name.clone(),
                    self.queue.clone(),
                    self.lister.clone(),
                    reconcile.clone(),
                    self.recorder.clone(),
                    shard.clone(),
                )));
            }
            tokio::select! {
                _ = &mut shutdown => {}
                _ = member_gone.cancelled() => {
                    tracing::warn!(controller = %self.name, "shard membership ended; stopping this replica");
                }
            }
        }
        tracing::info!(controller = %self.name, in_flight = self.queue.processing_len(), "shutting down: draining the workqueue");
        self.queue.shutdown_with_drain().await;
        for w in workers {
            let _ = w.await;
        }
        for w in &self.watches {
            w.remove();
        }
        stop_sharder.cancel();
        if let Some(task) = sharder_task {
            let _ = task.await;
        }
        // Only now, with nothing in flight, let the others take this replica's objects.
        leave.cancel();
        if let Some(task) = member_task
            && let Ok(end) = task.await
        {
            tracing::info!(controller = %self.name, ?end, "shard membership ended");
            debug_assert!(matches!(
                end,
                MemberEnd::Left | MemberEnd::Abandoned | MemberEnd::Lost
            ));
        }
        let stats = self.recorder.counters.snapshot();
        tracing::info!(controller = %self.name, ?stats, "controller stopped");
        stats
    }
}

/// One worker: takes keys until the queue is shut down and empty.
async fn worker<K, F, Fut, E>(
    name: String,
    queue: RateLimitingQueue<String>,
    lister: Lister<K>,
    reconcile: Arc<F>,
    recorder: Arc<Recorder>,
    shard: Option<Arc<Shared>>,
) where
    K: Resource,
    F: Fn(Request<K>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Action, E>> + Send + 'static,
    E: fmt::Display + Send + 'static,
{
    while let Some(key) = queue.get().await {
        let request = Request {
            object: lister.get_by_key(&key),
            retries: queue.num_requeues(&key),
            key: key.clone(),
        };
        if let Some(shared) = &shard
            && !admit(shared, &queue, &key, request.object.as_deref()).await
        {
            queue.done(&key);
            continue;
        }
        recorder.started();
        let started = Instant::now();
        let f = reconcile.clone();
        // Calling the function inside the async block catches a panic before its first await
        // too.
        let result = AssertUnwindSafe(async move { f(request).await })
            .catch_unwind()
            .await;
        let seconds = started.elapsed().as_secs_f64();
        let outcome = match result {
            Ok(Ok(action)) => {
                queue.forget(&key);
                match action.requeue_delay() {
                    Some(delay) => {
                        tracing::debug!(controller = %name, %key, ?delay, "reconciled; requeue after delay");
                        queue.add_after(key.clone(), delay);
                        Outcome::RequeueAfter
                    }
                    None => {
                        tracing::debug!(controller = %name, %key, "reconciled");
                        Outcome::Success
                    }
                }
            }
            Ok(Err(error)) => {
                tracing::warn!(controller = %name, %key, %error, retries = queue.num_requeues(&key), "reconcile failed; requeuing with backoff");
                queue.add_rate_limited(key.clone());
                Outcome::Error
            }
            Err(panic) => {
                let message = panic_message(&*panic);
                tracing::error!(controller = %name, %key, panic = %message, "reconcile panicked; requeuing with backoff");
                queue.add_rate_limited(key.clone());
                Outcome::Panic
            }
        };
        recorder.finished(outcome, seconds);
        queue.done(&key);
    }
}

/// The sharding gate of one popped key (see [`gate`]): whether to reconcile it. A key to
/// hand over is released here, by the worker that holds it, so no reconcile of it is in
/// flight on this replica.
async fn admit<K: Resource>(
    shared: &Shared,
    queue: &RateLimitingQueue<String>,
    key: &str,
    object: Option<&K>,
) -> bool {
    let labels = &shared.labels;
    let label = |k: &str| object.and_then(|o| o.labels().get(k)).map(String::as_str);
    let released = shared.released.lock().contains(key);
    match gate(
        shared.identity(),
        object.is_some(),
        label(&labels.shard),
        label(&labels.drain),
        released,
    ) {
        Gate::Reconcile => {
            if object.is_some() && released {
                shared.released.lock().remove(key);
            }
            true
        }
        Gate::Skip => {
            queue.forget(&key.to_owned());
            false
        }
        Gate::Release { to } => {
            let Some(obj) = object else { return false };
            match write_labels(
                shared,
                &K::api_resource(),
                obj,
                json!({ &labels.shard: to, &labels.drain: null }),
            )
            .await
            {
                Ok(()) => {
                    shared.released.lock().insert(key.to_owned());
                    shared.count_release();
                    tracing::debug!(%key, %to, "handed the object over");
                    queue.forget(&key.to_owned());
                }
                Err(error) if error.is_conflict() || error.is_not_found() => {
                    // Decided on a stale cache: the newer version is on its way.
                    queue.forget(&key.to_owned());
                }
                Err(error) => {
                    tracing::warn!(%key, %error, "cannot hand the object over; retrying");
                    queue.add_rate_limited(key.to_owned());
                }
            }
            false
        }
    }
}

/// Competes to be the sharder (a new election after each loss) until `stop` fires.
async fn compete_for_sharder<K: Resource>(
    shared: Arc<Shared>,
    scope: InformerScope,
    owned: Vec<Arc<dyn OwnedLabeller>>,
    stop: CancellationToken,
) {
    while !stop.is_cancelled() {
        let lock = LeaseLock::new(
            shared.lease_api(),
            format!("{}-sharder", shared.controller),
            shared.identity(),
        );
        let (s, sc, o) = (shared.clone(), scope.clone(), owned.clone());
        let callbacks = LeaderCallbacks::new(move |leading| {
            run_sharder::<K>(s.clone(), sc.clone(), o.clone(), leading)
        });
        let config = shared.config.timing.clone().release_on_cancel(true);
        match LeaderElector::new(lock, config, callbacks) {
            Ok(elector) => {
                elector.run(stop.clone()).await;
            }
            Err(error) => {
                tracing::error!(%error, "cannot run the sharder election");
                return;
            }
        }
    }
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> &str {
    if let Some(s) = panic.downcast_ref::<&str>() {
        s
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s
    } else {
        "(non-string panic payload)"
    }
}

/// Completes on SIGINT (Ctrl-C) or, on Unix, SIGTERM (what Kubernetes sends a pod to stop
/// it): the usual `shutdown` of [`Controller::run`]. If the handlers cannot be installed it
/// never completes (and logs why).
pub async fn shutdown_signal() {
    let ctrl_c = async {
        if let Err(error) = tokio::signal::ctrl_c().await {
            tracing::error!(%error, "cannot listen for Ctrl-C");
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(error) => {
                tracing::error!(%error, "cannot listen for SIGTERM");
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {}
        _ = term => {}
    }
}
