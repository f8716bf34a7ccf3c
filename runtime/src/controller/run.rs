//! [`Controller`]: waits for the caches, runs the workers, shuts down with a drain.

use std::fmt;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures_util::FutureExt;
use futures_util::future::join_all;
use tokio::time::Instant;

use super::action::{Action, Request};
use super::builder::ControllerBuilder;
use super::metrics::{Outcome, ReconcileStats, Recorder};
use super::watch::Watch;
use crate::informer::InformerFactory;
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

    pub(crate) fn assemble(
        name: String,
        workers: usize,
        factory: InformerFactory,
        queue: RateLimitingQueue<String>,
        lister: Lister<K>,
        watches: Vec<Box<dyn Watch>>,
        recorder: Recorder,
    ) -> Self {
        Self {
            name,
            workers,
            factory,
            queue,
            lister,
            watches,
            recorder: Arc::new(recorder),
        }
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
        self.factory.start();
        let synced = tokio::select! {
            _ = join_all(self.watches.iter().map(|w| w.wait_for_sync())) => true,
            _ = &mut shutdown => false,
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
                )));
            }
            shutdown.await;
        }
        tracing::info!(controller = %self.name, in_flight = self.queue.processing_len(), "shutting down: draining the workqueue");
        self.queue.shutdown_with_drain().await;
        for w in workers {
            let _ = w.await;
        }
        for w in &self.watches {
            w.remove();
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
