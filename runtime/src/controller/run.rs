//! [`Controller`]: waits for the caches, runs the workers, shuts down with a drain.
//! The run of a leader-elected controller, term after term, is in `run/elected.rs`.

mod elected;

use std::fmt;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;

use futures_util::FutureExt;
use futures_util::future::join_all;
use serde_json::json;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::action::{Action, Request};
use super::builder::{ControllerBuilder, Register};
use super::client::ReconcileClient;
use super::error::ReconcileFailure;
use super::guard::{Guard, GuardConfig, GuardOwner};
use super::metrics::{Outcome, ReconcileStats, Recorder};
use super::queue::{ControllerQueue, QueueSpec};
use super::shard::{
    Gate, MemberEnd, OwnedLabeller, ShardHandle, Shared, gate, lease_name, observe_members,
    run_member, run_sharder, write_labels,
};
use super::status::{ControllerPhase, ControllerStatus, StatusCell};
use super::watch::Watch;
use crate::informer::{InformerFactory, InformerScope};
use crate::leader::{LeaderCallbacks, LeaderElector, LeaseLock};
use crate::lister::Lister;
use crate::workqueue::Priority;
use kinform_core::resource::Resource;
use tokio::task::JoinHandle;

pub(crate) use elected::Election;

/// Reconciles the objects of `K`: informer handlers put keys into a rate-limited priority
/// workqueue and N workers take them out and call the reconcile function (see the
/// [module docs](super)).
pub struct Controller<K> {
    name: String,
    workers: usize,
    factory: InformerFactory,
    queue: ControllerQueue,
    lister: Lister<K>,
    watches: Vec<Box<dyn Watch>>,
    recorder: Arc<Recorder>,
    sharding: Option<Sharding<K>>,
    /// [`ControllerBuilder::reconcile_timeout`].
    reconcile_timeout: Option<Duration>,
    guard: GuardOwner,
    election: Option<Election<K>>,
    status: Arc<StatusCell>,
}

/// The parts of a sharded controller ([`ControllerBuilder::sharded`]).
pub(crate) struct Sharding<K> {
    pub(crate) shared: Arc<Shared>,
    /// The factory's own scope: the sharder watches every object in it.
    pub(crate) scope: InformerScope,
    pub(crate) owned: Vec<Arc<dyn OwnedLabeller>>,
    /// Registers the handlers again for the next membership.
    pub(crate) register: Register<K>,
    /// How to make the next membership's queue.
    pub(crate) queue: QueueSpec,
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
        queue: ControllerQueue,
        lister: Lister<K>,
        watches: Vec<Box<dyn Watch>>,
        recorder: Recorder,
        sharding: Option<Sharding<K>>,
        reconcile_timeout: Option<Duration>,
        guard: GuardConfig,
        election: Option<Election<K>>,
    ) -> Self {
        let recorder = Arc::new(recorder);
        let guard = GuardOwner::new(name.clone(), guard, factory.clone(), recorder.clone());
        let status = Arc::new(StatusCell::new(
            name.clone(),
            queue.clone(),
            recorder.clone(),
            election.as_ref().map(|e| e.state.clone()),
            sharding.as_ref().map(|s| s.shared.clone()),
        ));
        Self {
            name,
            workers,
            factory,
            queue,
            lister,
            watches,
            recorder,
            sharding,
            reconcile_timeout,
            guard,
            election,
            status,
        }
    }

    /// A handle on this controller's live state (phase, caches, workqueue, election or
    /// shard, counters), for status pages such as the admin endpoint's: take it before
    /// [`run`](Self::run), which consumes the controller.
    pub fn status(&self) -> ControllerStatus {
        ControllerStatus(self.status.clone())
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

    /// The workqueue (to enqueue keys by hand, or to watch its length): the priority queue,
    /// or the rate-limiting queue with
    /// [`priority_queue(false)`](ControllerBuilder::priority_queue). A sharded replica
    /// that rejoins after a lost membership, and a leader-elected one after a lost Lease,
    /// works from a new queue (and a new [`lister`](Self::lister)): these are the first
    /// membership's or term's; [`status`](Self::status) follows the current queue.
    pub fn queue(&self) -> &ControllerQueue {
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
    /// [`Action::requeue_after`] (forgotten, then queued again after the delay) or an error:
    /// any `Display` type, logged as a warning and queued again after the rate limiter's
    /// delay, or a [`ReconcileError`](super::ReconcileError), whose
    /// [`Terminal`](super::ReconcileError::Terminal) errors are warned about and counted but
    /// not retried. A panic is caught, logged and treated as an error; so is a reconcile
    /// cancelled by the [timeout](ControllerBuilder::reconcile_timeout).
    ///
    /// A [sharded](ControllerBuilder::sharded) replica runs until `shutdown` or
    /// [`ShardHandle::abandon`]; a lost membership makes it stop reconciling at once and join
    /// again with fresh caches (see [`shard`](super::shard)). A
    /// [leader-elected](ControllerBuilder::leader_election) one reconciles only while it
    /// holds the Lease, and a lost Lease sends it back to standby with its caches kept; it
    /// runs until `shutdown` (see [`election`](super::election)).
    pub async fn run<F, Fut, E>(
        mut self,
        reconcile: F,
        shutdown: impl Future<Output = ()>,
    ) -> ReconcileStats
    where
        F: Fn(Request<K>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Action, E>> + Send + 'static,
        E: ReconcileFailure,
    {
        let reconcile = Arc::new(reconcile);
        let shutdown = std::pin::pin!(shutdown);
        tracing::info!(controller = %self.name, "starting controller");
        self.status.set_phase(ControllerPhase::Syncing);
        match (self.sharding.take(), self.election.take()) {
            (Some(sharding), _) => self.run_sharded(sharding, reconcile, shutdown).await,
            (None, Some(election)) => self.run_elected(election, reconcile, shutdown).await,
            (None, None) => {
                self.factory.start();
                let mut shutdown = shutdown;
                let synced = tokio::select! {
                    _ = join_all(self.watches.iter().map(|w| w.wait_for_sync())) => true,
                    () = &mut shutdown => false,
                };
                let workers = if synced {
                    self.status.set_synced(true);
                    self.status.set_phase(ControllerPhase::Running);
                    let workers = self.spawn_workers(&self.queue, &self.lister, &reconcile, None);
                    shutdown.await;
                    self.status.set_phase(ControllerPhase::Stopping);
                    Some(workers)
                } else {
                    None
                };
                self.stop_workers(&self.queue, workers, true).await;
                for w in &self.watches {
                    w.remove();
                }
            }
        }
        self.status.set_phase(ControllerPhase::Stopped);
        let stats = self.recorder.counters.snapshot();
        tracing::info!(controller = %self.name, ?stats, "controller stopped");
        stats
    }

    /// [`run`](Self::run) of a sharded replica: a member Lease, the sharder election, and
    /// one membership after another. Each membership has its own shard label value, scoped
    /// informers and workqueue; when it is lost (no renewal within `renew_deadline`) the
    /// workers stop taking keys at once, the reconciles in flight finish, the scoped caches
    /// are dropped, and the replica joins again under its next label value (see the
    /// [module docs](super::shard)).
    async fn run_sharded<F, Fut, E>(
        &self,
        sharding: Sharding<K>,
        reconcile: Arc<F>,
        mut shutdown: std::pin::Pin<&mut impl Future<Output = ()>>,
    ) where
        F: Fn(Request<K>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Action, E>> + Send + 'static,
        E: ReconcileFailure,
    {
        let shared = sharding.shared.clone();
        let stop_sharder = CancellationToken::new();
        let observer = shared.clone();
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
        let role = shared.config.role;
        let sharder_task = role.stands_for_sharder().then(|| {
            tokio::spawn(compete_for_sharder::<K>(
                shared.clone(),
                sharding.scope.clone(),
                sharding.owned.clone(),
                stop_sharder.clone(),
            ))
        });
        let leave = if role.is_member() {
            // The first membership's handlers were registered by the builder.
            let mut membership = Some((self.queue.clone(), self.lister.clone(), Vec::new()));
            let mut first_watches = Some(&self.watches);
            loop {
                let identity = shared.identity();
                let scope = shared.scope();
                let (queue, lister, own_watches) = membership.take().unwrap_or_else(|| {
                    let queue = sharding.queue.build();
                    let (lister, watches) =
                        (sharding.register)(&self.factory, &queue, Some(&scope), Some(&shared));
                    (queue, lister, watches)
                });
                let watches: &[Box<dyn Watch>] = first_watches.take().map_or(&own_watches, |w| w);
                self.status.set_queue(&queue);
                self.status.set_synced(false);
                self.status.set_phase(ControllerPhase::Syncing);
                let counted = lister.clone();
                shared.set_cache(Some(Box::new(move || counted.store().len())));
                let (joined, leave, gone) = (
                    CancellationToken::new(),
                    CancellationToken::new(),
                    CancellationToken::new(),
                );
                let lock = LeaseLock::new(
                    shared.lease_api(),
                    lease_name(&shared.controller, &shared.config.identity),
                    &*identity,
                );
                let member = tokio::spawn({
                    let (timing, joined, leave, abandon, gone) = (
                        shared.config.timing.clone(),
                        joined.clone(),
                        leave.clone(),
                        shared.abandon.clone(),
                        gone.clone(),
                    );
                    async move {
                        let end = run_member(lock, timing, joined, leave, abandon).await;
                        gone.cancel();
                        end
                    }
                });
                self.factory.start();
                // `shutdown` may complete only once: after it has, nothing polls it again.
                let mut stopping = false;
                let synced = tokio::select! {
                    () = async {
                        join_all(watches.iter().map(|w| w.wait_for_sync())).await;
                        joined.cancelled().await;
                    } => true,
                    () = &mut shutdown => {
                        stopping = true;
                        false
                    }
                    () = gone.cancelled() => false,
                };
                let mut workers = None;
                if synced {
                    self.status.set_synced(true);
                    self.status.set_phase(ControllerPhase::Running);
                    tracing::info!(controller = %self.name, %identity, workers = self.workers, "caches synced; starting workers");
                    workers = Some(self.spawn_workers(&queue, &lister, &reconcile, Some(&shared)));
                    tokio::select! {
                        () = &mut shutdown => stopping = true,
                        () = gone.cancelled() => {}
                    }
                }
                let lost = gone.is_cancelled();
                self.status.set_phase(ControllerPhase::Stopping);
                if lost {
                    tracing::warn!(controller = %self.name, %identity, "shard membership ended; stopping the workers at once");
                }
                self.stop_workers(&queue, workers, !lost).await;
                for w in watches {
                    w.remove();
                }
                shared.set_cache(None);
                self.factory.shutdown_scope(&scope).await;
                if !lost {
                    break Some((leave, member));
                }
                match member.await {
                    Ok(MemberEnd::Lost) if !stopping => {
                        let next = shared.next_incarnation();
                        tracing::warn!(controller = %self.name, old = %identity, new = %next, "shard membership lost; joining again with a fresh cache");
                    }
                    end => {
                        tracing::info!(controller = %self.name, ?end, "shard membership ended");
                        break None;
                    }
                }
            }
        } else {
            // A sharder apart: no member Lease, no scoped cache, no workers.
            tracing::info!(controller = %self.name, "standing for sharder only; reconciling nothing");
            tokio::select! {
                () = &mut shutdown => {}
                () = shared.abandon.cancelled() => {}
            }
            None
        };
        stop_sharder.cancel();
        if let Some(task) = sharder_task {
            let _ = task.await;
        }
        // Only now, with nothing in flight, let the others take this replica's objects.
        if let Some((leave, member)) = leave {
            leave.cancel();
            if let Ok(end) = member.await {
                tracing::info!(controller = %self.name, ?end, "shard membership ended");
            }
        }
    }

    fn spawn_workers<F, Fut, E>(
        &self,
        queue: &ControllerQueue,
        lister: &Lister<K>,
        reconcile: &Arc<F>,
        shard: Option<&Arc<Shared>>,
    ) -> Workers
    where
        F: Fn(Request<K>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Action, E>> + Send + 'static,
        E: ReconcileFailure,
    {
        self.spawn_workers_until(queue, lister, reconcile, shard, CancellationToken::new())
    }

    /// [`spawn_workers`](Self::spawn_workers) whose workers stop taking keys once `halt` is
    /// cancelled (a leading token's child stops them the instant the Lease is lost).
    fn spawn_workers_until<F, Fut, E>(
        &self,
        queue: &ControllerQueue,
        lister: &Lister<K>,
        reconcile: &Arc<F>,
        shard: Option<&Arc<Shared>>,
        halt: CancellationToken,
    ) -> Workers
    where
        F: Fn(Request<K>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Action, E>> + Send + 'static,
        E: ReconcileFailure,
    {
        let tasks = (0..self.workers)
            .map(|_| {
                tokio::spawn(worker(
                    self.name.clone(),
                    queue.clone(),
                    lister.clone(),
                    reconcile.clone(),
                    self.recorder.clone(),
                    shard.cloned(),
                    halt.clone(),
                    self.reconcile_timeout,
                    self.guard.0.clone(),
                ))
            })
            .collect();
        Workers { tasks, halt }
    }

    /// Shuts `queue` down and waits for the workers (if they were started): with `drain`
    /// they reconcile the keys already queued first (client-go's `ShutDownWithDrain`);
    /// without, they finish the reconciles in flight and reconcile no other key.
    async fn stop_workers(&self, queue: &ControllerQueue, workers: Option<Workers>, drain: bool) {
        tracing::info!(controller = %self.name, in_flight = queue.processing_len(), drain, "shutting down the workqueue");
        if drain {
            queue.shutdown_with_drain().await;
        } else {
            if let Some(w) = &workers {
                w.halt.cancel();
            }
            queue.shutdown();
        }
        for task in workers.into_iter().flat_map(|w| w.tasks) {
            let _ = task.await;
        }
    }
}

/// The workers of one run (or one membership of a sharded replica).
struct Workers {
    tasks: Vec<JoinHandle<()>>,
    /// Fired to make them reconcile nothing more (the keys they take are dropped).
    halt: CancellationToken,
}

/// One worker: takes keys until the queue is shut down and empty; once `halt` fires it
/// drops the keys it takes instead of reconciling them. A key the consistency `guard` sets
/// aside is marked done without a reconcile (the guard adds it back).
#[allow(clippy::too_many_arguments)] // the parts of the controller one worker uses
async fn worker<K, F, Fut, E>(
    name: String,
    queue: ControllerQueue,
    lister: Lister<K>,
    reconcile: Arc<F>,
    recorder: Arc<Recorder>,
    shard: Option<Arc<Shared>>,
    halt: CancellationToken,
    timeout: Option<Duration>,
    guard: Arc<Guard>,
) where
    K: Resource,
    F: Fn(Request<K>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Action, E>> + Send + 'static,
    E: ReconcileFailure,
{
    while let Some((key, priority)) = queue.get_with_priority().await {
        if halt.is_cancelled() {
            queue.done(&key);
            continue;
        }
        if !guard.admit(&key, &queue, priority) {
            queue.done(&key);
            continue;
        }
        let request = Request {
            object: lister.get_by_key(&key),
            retries: queue.num_requeues(&key),
            client: ReconcileClient::new(&guard, &key),
            key: key.clone(),
        };
        if let Some(shared) = &shard
            && !admit(shared, &queue, &key, priority, request.object.as_deref()).await
        {
            queue.done(&key);
            continue;
        }
        recorder.started();
        let started = Instant::now();
        let f = reconcile.clone();
        // Calling the function inside the async block catches a panic before its first await
        // too.
        let call = AssertUnwindSafe(async move { f(request).await }).catch_unwind();
        // `None`: cancelled by the timeout.
        let result = match timeout {
            Some(limit) => tokio::time::timeout(limit, call).await.ok(),
            None => Some(call.await),
        };
        let seconds = started.elapsed().as_secs_f64();
        let outcome = match result {
            Some(Ok(Ok(action))) => {
                queue.forget(&key);
                match action.requeue_delay() {
                    Some(delay) => {
                        let at = action.priority().unwrap_or(priority);
                        tracing::debug!(controller = %name, %key, ?delay, priority = %at, "reconciled; requeue");
                        queue.add_after_with_priority(key.clone(), delay, at);
                        if delay.is_zero() {
                            Outcome::Requeue
                        } else {
                            Outcome::RequeueAfter
                        }
                    }
                    None => {
                        tracing::debug!(controller = %name, %key, "reconciled");
                        Outcome::Success
                    }
                }
            }
            Some(Ok(Err(failure))) if failure.is_terminal() => {
                tracing::warn!(controller = %name, %key, error = %failure.error(), "reconcile failed with a terminal error; not retrying until the object changes");
                queue.forget(&key);
                Outcome::Terminal
            }
            Some(Ok(Err(failure))) => {
                tracing::warn!(controller = %name, %key, error = %failure.error(), retries = queue.num_requeues(&key), "reconcile failed; requeuing with backoff");
                queue.add_rate_limited_with_priority(key.clone(), priority);
                Outcome::Error
            }
            Some(Err(panic)) => {
                let message = panic_message(&*panic);
                tracing::error!(controller = %name, %key, panic = %message, "reconcile panicked; requeuing with backoff");
                queue.add_rate_limited_with_priority(key.clone(), priority);
                Outcome::Panic
            }
            None => {
                tracing::warn!(controller = %name, %key, timeout = ?timeout, retries = queue.num_requeues(&key), "reconcile timed out and was cancelled; requeuing with backoff");
                queue.add_rate_limited_with_priority(key.clone(), priority);
                Outcome::Timeout
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
    queue: &ControllerQueue,
    key: &str,
    priority: Priority,
    object: Option<&K>,
) -> bool {
    let labels = &shared.labels;
    let label = |k: &str| object.and_then(|o| o.labels().get(k)).map(String::as_str);
    let released = shared.released.lock().contains(key);
    let deleted = shared.deleted.lock().contains(key);
    match gate(
        &shared.identity(),
        object.is_some(),
        label(&labels.shard),
        label(&labels.drain),
        released,
        deleted,
    ) {
        Gate::Reconcile => {
            if object.is_some() && released {
                shared.released.lock().remove(key);
            }
            if deleted {
                shared.deleted.lock().remove(key);
            }
            true
        }
        Gate::Skip => {
            // An absent object's deletion is consumed here; when it was our own release's
            // (the object left our selection), that handover is over too, so neither set
            // keeps keys of objects that moved away for good.
            if object.is_none() && shared.deleted.lock().remove(key) {
                shared.released.lock().remove(key);
            }
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
                Err(error) => match shared.label_write_failed(&K::api_resource(), obj, &error) {
                    // Decided on a stale cache: the newer version is on its way.
                    None => queue.forget(&key.to_owned()),
                    // Warned and counted; retried with the key's backoff.
                    Some(_) => queue.add_rate_limited_with_priority(key.to_owned(), priority),
                },
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
            &shared.config.identity,
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
