//! [`Queue`]: client-go's `workqueue.Typed[T]` (util/workqueue/queue.go).
//!
//! The contract, sentence by sentence as client-go states it and as the tests check it:
//!
//! - *Fair*: items are handed out in the order in which they were added.
//! - *Stingy*: an item added several times before it is handed out is handed out once
//!   (duplicate adds collapse).
//! - *Exclusive*: an item is never handed to two workers at once. An item added while a worker
//!   processes it is marked dirty and queued again (once) when that worker calls
//!   [`done`](Queue::done), never lost.
//! - *Shutdown*: after [`shutdown`](Queue::shutdown) adds are ignored and workers keep getting
//!   the items already queued; [`get`](Queue::get) returns `None` once the queue is empty.
//!   [`shutdown_with_drain`](Queue::shutdown_with_drain) additionally waits until every item
//!   handed out has been marked done (a later `shutdown` releases that wait).
//!
//! Differences from Go, on purpose: [`get`](Queue::get) is an `async fn` that is
//! cancellation-safe (a dropped `get` loses nothing); [`done`](Queue::done) for an item that is
//! not being processed does nothing (client-go would queue a duplicate); `get` returns
//! `Option<T>` instead of `(item, shutdown bool)`.
//!
//! Speed: one mutex (parking_lot) guards the whole state; an add moves the item into the
//! table, a get clones it once, a done is one hash lookup (see [`state`](super::state)), and
//! waiting getters are woken only when there are any.

use std::hash::Hash;
use std::pin::pin;
use std::sync::{Arc, Weak};
use std::time::Duration;

use parking_lot::Mutex;
use tokio::sync::Notify;

use super::metrics::{MetricsProvider, QueueMetrics, default_metrics_provider};
use super::state::{Added, Finished, State};

/// How often the unfinished-work gauges are refreshed (client-go's
/// `unfinishedWorkUpdatePeriod` default).
const UNFINISHED_WORK_UPDATE_PERIOD: Duration = Duration::from_millis(500);

/// Options of a queue (client-go's `QueueConfig`).
#[derive(Clone, Default)]
#[must_use]
pub struct QueueConfig {
    /// The queue's name, the `name` label of its metrics. A queue without a name has no
    /// metrics.
    pub name: Option<String>,
    /// Where the metrics of a named queue go; `None` uses the provider installed with
    /// [`set_default_metrics_provider`](super::set_default_metrics_provider), if any.
    pub metrics_provider: Option<Arc<dyn MetricsProvider>>,
}

impl QueueConfig {
    /// A configuration for a queue named `name` (metrics to the default provider).
    pub fn named(name: impl Into<String>) -> Self {
        Self {
            name: Some(name.into()),
            metrics_provider: None,
        }
    }

    /// Sends this queue's metrics to `provider`.
    pub fn with_metrics_provider(mut self, provider: Arc<dyn MetricsProvider>) -> Self {
        self.metrics_provider = Some(provider);
        self
    }

    fn metrics(&self) -> Option<QueueMetrics> {
        let (provider, name) = self.provider()?;
        Some(QueueMetrics::new(provider.as_ref(), name))
    }

    /// The provider and name of a queue that has metrics.
    pub(crate) fn provider(&self) -> Option<(Arc<dyn MetricsProvider>, &str)> {
        let name = self.name.as_deref().filter(|n| !n.is_empty())?;
        let provider = self
            .metrics_provider
            .clone()
            .or_else(default_metrics_provider)?;
        Some((provider, name))
    }
}

impl std::fmt::Debug for QueueConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QueueConfig")
            .field("name", &self.name)
            .field("metrics_provider", &self.metrics_provider.is_some())
            .finish()
    }
}

pub(crate) struct Shared<T> {
    state: Mutex<State<T>>,
    metrics: Option<QueueMetrics>,
    /// Getters waiting for an item.
    getters: Notify,
    /// `shutdown_with_drain` waiting for processing to end.
    drained: Notify,
    /// One listener (the delaying queue's timer) told about shutdown; holds a permit.
    pub(crate) shutdown_listener: Arc<Notify>,
}

/// A work queue with client-go's dirty/processing semantics. Cloning gives another handle to
/// the same queue.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// use kinform_runtime::workqueue::Queue;
///
/// let queue = Queue::new();
/// queue.add("default/web".to_string());
/// queue.add("default/web".to_string()); // collapses with the first add
/// assert_eq!(queue.len(), 1);
///
/// let key = queue.get().await.unwrap();
/// queue.add(key.clone()); // re-added while processing: queued again after done
/// assert_eq!(queue.len(), 0);
/// queue.done(&key);
/// assert_eq!(queue.len(), 1);
///
/// queue.shutdown();
/// assert_eq!(queue.get().await.as_deref(), Some("default/web"));
/// # });
/// ```
pub struct Queue<T> {
    shared: Arc<Shared<T>>,
}

impl<T> Clone for Queue<T> {
    fn clone(&self) -> Self {
        Self {
            shared: Arc::clone(&self.shared),
        }
    }
}

impl<T> std::fmt::Debug for Queue<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.shared.state.lock();
        f.debug_struct("Queue")
            .field("len", &state.len())
            .field("processing", &state.processing())
            .field("shutting_down", &state.shutting_down)
            .finish()
    }
}

impl<T: Hash + Eq + Clone + Send + Sync + 'static> Default for Queue<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Hash + Eq + Clone + Send + Sync + 'static> Queue<T> {
    /// An unnamed queue (no metrics).
    pub fn new() -> Self {
        Self::with_config(QueueConfig::default())
    }

    /// A queue with a name and metrics. When the queue has metrics and is created inside a
    /// Tokio runtime, a task refreshes the unfinished-work gauges every 500 ms until shutdown
    /// (outside a runtime those two gauges are not updated).
    pub fn with_config(config: QueueConfig) -> Self {
        let metrics = config.metrics();
        let has_metrics = metrics.is_some();
        let shared = Arc::new(Shared {
            state: Mutex::new(State::new()),
            metrics,
            getters: Notify::new(),
            drained: Notify::new(),
            shutdown_listener: Arc::new(Notify::new()),
        });
        if has_metrics && let Ok(handle) = tokio::runtime::Handle::try_current() {
            handle.spawn(update_unfinished_work(Arc::downgrade(&shared)));
        }
        Self { shared }
    }

    /// Marks `item` as needing processing (client-go `Add`). Ignored after shutdown; collapses
    /// with an add of the same item that is still waiting; if the item is being processed it
    /// is queued again when it is done.
    pub fn add(&self, item: T) {
        let wake = {
            let mut state = self.shared.state.lock();
            state.add(item, self.shared.metrics.as_ref()) == Added::Queued
                && state.waiting_getters > 0
        };
        if wake {
            self.shared.getters.notify_one();
        }
    }

    /// Waits for the next item and marks it processing (client-go `Get`). Returns `None` once
    /// the queue is shut down and empty. The caller must call [`done`](Self::done) with the
    /// item when it has finished with it.
    ///
    /// Cancellation-safe: dropping the future before it completes loses no item.
    pub async fn get(&self) -> Option<T> {
        {
            // Fast path: an item is there (or the queue is closed); no waiter machinery.
            let mut state = self.shared.state.lock();
            if let Some(item) = state.pop(self.shared.metrics.as_ref()) {
                return Some(item);
            }
            if state.shutting_down {
                return None;
            }
        }
        self.wait_and_get().await
    }

    async fn wait_and_get(&self) -> Option<T> {
        let shared = &*self.shared;
        let mut waiter = Waiter {
            shared,
            registered: false,
        };
        loop {
            let mut notified = pin!(shared.getters.notified());
            {
                let mut state = shared.state.lock();
                if waiter.registered {
                    waiter.registered = false;
                    state.waiting_getters -= 1;
                }
                if let Some(item) = state.pop(shared.metrics.as_ref()) {
                    return Some(item);
                }
                if state.shutting_down {
                    return None;
                }
                // Register before unlocking so that no add between the unlock and the await
                // can be missed.
                notified.as_mut().enable();
                state.waiting_getters += 1;
                waiter.registered = true;
            }
            notified.await;
        }
    }

    /// Marks `item` as done processing (client-go `Done`). If it was added again while being
    /// processed, it is queued again now. Does nothing for an item that is not being
    /// processed.
    pub fn done(&self, item: &T) {
        let (wake_getter, drained) = {
            let mut state = self.shared.state.lock();
            let finished = state.done(item, self.shared.metrics.as_ref());
            (
                finished == Finished::Requeued && state.waiting_getters > 0,
                finished != Finished::NotProcessing && state.drain && state.processing() == 0,
            )
        };
        if wake_getter {
            self.shared.getters.notify_one();
        }
        if drained {
            self.shared.drained.notify_waiters();
        }
    }

    /// Items waiting to be handed out (client-go `Len`; items being processed are not
    /// counted).
    pub fn len(&self) -> usize {
        self.shared.state.lock().len()
    }

    /// Whether no item is waiting to be handed out.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Items handed out by [`get`](Self::get) and not yet [`done`](Self::done).
    pub fn processing_len(&self) -> usize {
        self.shared.state.lock().processing()
    }

    /// Stops the queue (client-go `ShutDown`): later adds are ignored, workers get the items
    /// still queued and then `None`. Also releases a pending
    /// [`shutdown_with_drain`](Self::shutdown_with_drain).
    pub fn shutdown(&self) {
        {
            let mut state = self.shared.state.lock();
            state.shutting_down = true;
            state.drain = false;
        }
        self.wake_all_on_shutdown();
        self.shared.drained.notify_waiters();
    }

    /// Stops the queue like [`shutdown`](Self::shutdown) and waits until every item handed out
    /// has been marked done (client-go `ShutDownWithDrain`). Items still queued are handed to
    /// workers as after `shutdown`; the wait ends when no item is being processed.
    pub async fn shutdown_with_drain(&self) {
        {
            let mut state = self.shared.state.lock();
            state.shutting_down = true;
            state.drain = true;
        }
        self.wake_all_on_shutdown();
        loop {
            let mut notified = pin!(self.shared.drained.notified());
            {
                let state = self.shared.state.lock();
                if !state.drain || state.processing() == 0 {
                    return;
                }
                notified.as_mut().enable();
            }
            notified.await;
        }
    }

    /// Whether [`shutdown`](Self::shutdown) or [`shutdown_with_drain`](Self::shutdown_with_drain)
    /// was called (client-go `ShuttingDown`).
    pub fn is_shutting_down(&self) -> bool {
        self.shared.state.lock().shutting_down
    }

    fn wake_all_on_shutdown(&self) {
        self.shared.getters.notify_waiters();
        self.shared.shutdown_listener.notify_one();
    }

    pub(crate) fn shared(&self) -> &Arc<Shared<T>> {
        &self.shared
    }

    pub(crate) fn record_retry(&self) {
        if let Some(m) = &self.shared.metrics {
            m.retry();
        }
    }
}

/// Keeps `waiting_getters` exact when a waiting `get` is dropped.
struct Waiter<'a, T> {
    shared: &'a Shared<T>,
    registered: bool,
}

impl<T> Drop for Waiter<'_, T> {
    fn drop(&mut self) {
        if self.registered {
            self.shared.state.lock().waiting_getters -= 1;
        }
    }
}

/// client-go's `updateUnfinishedWorkLoop`: refreshes the unfinished-work gauges until the queue
/// shuts down or is dropped.
async fn update_unfinished_work<T: Hash + Eq + Clone + Send + Sync + 'static>(
    shared: Weak<Shared<T>>,
) {
    let mut ticker = tokio::time::interval(UNFINISHED_WORK_UPDATE_PERIOD);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    ticker.tick().await;
    loop {
        ticker.tick().await;
        let Some(shared) = shared.upgrade() else {
            return;
        };
        let state = shared.state.lock();
        if state.shutting_down {
            return;
        }
        if let Some(m) = &shared.metrics {
            m.update_unfinished_work(state.processing_start_times());
        }
    }
}
