//! One registered handler: its buffer, resync schedule, delivery task and the
//! [`Registration`] handle (client-go's `processorListener` + `ResourceEventHandlerRegistration`).

use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use parking_lot::Mutex;
use tokio::sync::{Notify, watch};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::buffer::Buffer;
use super::handler::{EventHandler, Notification};
use super::shared::Inner;
use crate::reflector::Reclaim;
use kinform_core::resource::HasMetadata;

/// Notifications a delivery task takes from its buffer at a time.
const DELIVER_BATCH: usize = 64;

/// A handler with its pending notifications.
pub(crate) struct HandlerSlot<K> {
    pub id: u64,
    handler: Arc<dyn EventHandler<K>>,
    buffer: Mutex<Buffer<K>>,
    wake: Notify,
    /// The handler's resync period (`None`: no resync).
    pub resync_period: Option<Duration>,
    next_resync: Mutex<Option<Instant>>,
    /// Whether the current resync round includes this handler.
    pub syncing: AtomicBool,
    informer_synced: watch::Receiver<bool>,
    progress: watch::Sender<u64>,
    task: Mutex<Option<CancellationToken>>,
    /// Where delivered notifications' replaced objects go (see [`Reclaim`]).
    reclaim: Arc<Reclaim<K>>,
}

impl<K: HasMetadata + Send + Sync + 'static> HandlerSlot<K> {
    pub fn new(
        id: u64,
        handler: Arc<dyn EventHandler<K>>,
        resync_period: Option<Duration>,
        informer_synced: watch::Receiver<bool>,
        reclaim: Arc<Reclaim<K>>,
    ) -> Self {
        Self {
            id,
            handler,
            buffer: Mutex::new(Buffer::default()),
            wake: Notify::new(),
            resync_period,
            next_resync: Mutex::new(resync_period.map(|p| Instant::now() + p)),
            syncing: AtomicBool::new(false),
            informer_synced,
            progress: watch::channel(0).0,
            task: Mutex::new(None),
            reclaim,
        }
    }

    /// Queues a notification and wakes the delivery task.
    pub fn push(&self, n: Notification<K>) {
        self.buffer.lock().push(n);
        self.wake.notify_one();
    }

    /// Queues notifications in order under one lock and wakes the delivery task once.
    pub fn push_many(&self, items: impl IntoIterator<Item = Notification<K>>) {
        let mut pushed = false;
        {
            let mut buffer = self.buffer.lock();
            for n in items {
                buffer.push(n);
                pushed = true;
            }
        }
        if pushed {
            self.wake.notify_one();
        }
    }

    /// Whether this handler's resync is due at `now`; if so, schedules the next one.
    pub fn resync_due(&self, now: Instant) -> bool {
        let Some(period) = self.resync_period else {
            return false;
        };
        let mut next = self.next_resync.lock();
        match *next {
            Some(at) if now < at => false,
            _ => {
                *next = Some(now + period);
                true
            }
        }
    }

    pub fn pending(&self) -> usize {
        self.buffer.lock().len()
    }

    pub fn has_synced(&self) -> bool {
        *self.informer_synced.borrow() && self.buffer.lock().initial_outstanding() == 0
    }

    /// Starts delivering on a task that ends when `cancel` fires.
    pub fn spawn(self: &Arc<Self>, cancel: CancellationToken) -> tokio::task::JoinHandle<()> {
        *self.task.lock() = Some(cancel.clone());
        tokio::spawn(Arc::clone(self).deliver(cancel))
    }

    pub fn stop(&self) {
        if let Some(t) = self.task.lock().take() {
            t.cancel();
        }
    }

    /// Delivers pending notifications until `cancel` fires: up to [`DELIVER_BATCH`] are
    /// taken under one buffer lock, handed to the handler one by one, and marked delivered
    /// under one more. Notifications already taken are delivered even when `cancel` fires
    /// meanwhile, so that a handler stopped and started again misses none.
    async fn deliver(self: Arc<Self>, cancel: CancellationToken) {
        let mut batch = Vec::with_capacity(DELIVER_BATCH);
        loop {
            loop {
                let notified = self.wake.notified();
                let mut notified = std::pin::pin!(notified);
                notified.as_mut().enable();
                {
                    let mut buffer = self.buffer.lock();
                    while batch.len() < DELIVER_BATCH
                        && let Some(n) = buffer.pop()
                    {
                        batch.push(n);
                    }
                }
                if !batch.is_empty() {
                    break;
                }
                tokio::select! {
                    () = notified => {}
                    () = cancel.cancelled() => return,
                }
            }
            let handler = &*self.handler;
            for n in &batch {
                if std::panic::catch_unwind(AssertUnwindSafe(|| n.deliver(handler))).is_err() {
                    tracing::error!(
                        handler = self.id,
                        "informer: event handler panicked; going on"
                    );
                }
            }
            let initial = {
                let mut buffer = self.buffer.lock();
                batch.iter().for_each(|n| buffer.delivered(n));
                batch.iter().any(Notification::is_initial_add)
            };
            // Only initial adds move `has_synced`, which is what `progress` wakes.
            if initial {
                self.progress.send_modify(|c| *c += 1);
            }
            // The objects that may have left the cache are freed on a decoding thread.
            self.reclaim
                .put_many(batch.drain(..).filter_map(Notification::into_released));
            if cancel.is_cancelled() {
                return;
            }
        }
    }
}

/// The handle returned by
/// [`add_event_handler`](super::SharedIndexInformer::add_event_handler) (client-go's
/// `ResourceEventHandlerRegistration`).
pub struct Registration<K> {
    pub(crate) slot: Arc<HandlerSlot<K>>,
    pub(crate) informer: Weak<Inner<K>>,
}

impl<K> std::fmt::Debug for Registration<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registration")
            .field("id", &self.slot.id)
            .finish_non_exhaustive()
    }
}

impl<K: kinform_core::resource::HasMetadata> Registration<K> {
    /// True once the informer has synced and every add of the initial list (or, for a
    /// handler added later, of the cached objects) was delivered to this handler.
    pub fn has_synced(&self) -> bool {
        self.slot.has_synced()
    }

    /// Waits until [`has_synced`](Self::has_synced).
    pub async fn wait_for_sync(&self) {
        let mut progress = self.slot.progress.subscribe();
        let mut synced = self.slot.informer_synced.clone();
        while !self.has_synced() {
            tokio::select! {
                r = progress.changed() => if r.is_err() { return },
                r = synced.changed() => if r.is_err() { return },
            }
        }
    }

    /// Notifications waiting for this handler (the buffer's size; bounded by the number of
    /// keys because pending notifications are coalesced per key).
    pub fn pending(&self) -> usize {
        self.slot.pending()
    }

    /// The handler's resync period, as granted by the informer.
    pub fn resync_period(&self) -> Option<Duration> {
        self.slot.resync_period
    }

    /// Unregisters the handler: it gets no further notification. Returns false when it was
    /// already removed or the informer is gone.
    pub fn remove(&self) -> bool {
        let Some(inner) = self.informer.upgrade() else {
            return false;
        };
        let removed = inner.remove_handler(self.slot.id);
        self.slot.stop();
        removed
    }

    /// Whether the handler is still registered.
    pub fn is_active(&self) -> bool {
        self.informer
            .upgrade()
            .is_some_and(|i| i.has_handler(self.slot.id))
    }
}

/// Whether `slot` should get a notification of a resync round.
pub(crate) fn wants_sync<K>(slot: &HandlerSlot<K>) -> bool {
    slot.syncing.load(Ordering::Relaxed)
}
