//! [`DelayingQueue`]: client-go's `TypedDelayingInterface` (util/workqueue/delaying_queue.go).
//!
//! [`add_after`](DelayingQueue::add_after) parks an item until its time has come, then adds it
//! to the underlying [`Queue`]. As in client-go:
//!
//! - a zero delay adds at once;
//! - an item that is already waiting keeps a single entry, and re-adding it only ever moves its
//!   time *earlier* (a later time is ignored);
//! - after shutdown `add_after` is ignored and the waiting items are dropped;
//! - every `add_after` counts one `workqueue_retries_total`.
//!
//! One timer task per queue owns the wake-ups: waiting items sit in a binary heap ordered by
//! ready time, the task sleeps until the earliest one (`tokio::time::sleep_until`, so paused
//! clocks work) and is woken early only when an `add_after` lands before the time it sleeps
//! until. There is no polling and no heartbeat. The task holds a weak reference: it ends when
//! the queue shuts down or when the last handle is dropped.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;
use std::hash::Hash;
use std::ops::Deref;
use std::sync::{Arc, Weak};
use std::time::Duration;

use hashbrown::HashMap;
use parking_lot::Mutex;
use tokio::sync::Notify;
use tokio::time::Instant;

use super::queue::{Queue, QueueConfig};

/// Stand-in for "never" when a delay overflows the clock (about 30 years, as Tokio's own
/// far-future instant).
const FAR_FUTURE: Duration = Duration::from_secs(86_400 * 365 * 30);

struct Entry<T> {
    at: Instant,
    seq: u64,
    item: T,
}

impl<T> PartialEq for Entry<T> {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.seq) == (other.at, other.seq)
    }
}
impl<T> Eq for Entry<T> {}
impl<T> PartialOrd for Entry<T> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<T> Ord for Entry<T> {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.at, self.seq).cmp(&(other.at, other.seq))
    }
}

struct Waiting<T> {
    /// Min-heap of entries; an entry whose `seq` differs from `known[item]` is stale (its item
    /// was moved earlier or already fired) and is skipped.
    heap: BinaryHeap<Reverse<Entry<T>>>,
    /// The live entry of each waiting item: (ready time, seq).
    known: HashMap<T, (Instant, u64)>,
    next_seq: u64,
    /// The deadline the timer task sleeps until; `None` while it sleeps without one.
    armed: Option<Instant>,
}

struct DelayInner<T> {
    queue: Queue<T>,
    waiting: Mutex<Waiting<T>>,
    /// The timer task's wake-up (the queue's shutdown listener).
    wake: Arc<Notify>,
}

impl<T> Drop for DelayInner<T> {
    fn drop(&mut self) {
        // Let the timer task see that the queue is gone.
        self.wake.notify_one();
    }
}

/// A [`Queue`] with delayed adds. Dereferences to the [`Queue`] for `add`, `get`, `done`,
/// `len` and shutdown (as client-go's `DelayingInterface` embeds `Interface`). Cloning gives
/// another handle to the same queue.
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// use std::time::Duration;
/// use kinform_runtime::workqueue::DelayingQueue;
///
/// let queue = DelayingQueue::new();
/// queue.add_after("default/web", Duration::from_secs(10));
/// queue.add_after("default/web", Duration::from_secs(2)); // moves it earlier
/// assert_eq!(queue.len(), 0);
/// tokio::time::sleep(Duration::from_secs(2)).await;
/// assert_eq!(queue.get().await, Some("default/web"));
/// # }
/// ```
pub struct DelayingQueue<T> {
    inner: Arc<DelayInner<T>>,
}

impl<T> Clone for DelayingQueue<T> {
    fn clone(&self) -> Self {
        Self {
            inner: Arc::clone(&self.inner),
        }
    }
}

impl<T> Deref for DelayingQueue<T> {
    type Target = Queue<T>;

    fn deref(&self) -> &Queue<T> {
        &self.inner.queue
    }
}

impl<T> std::fmt::Debug for DelayingQueue<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DelayingQueue")
            .field("queue", &self.inner.queue)
            .field("waiting", &self.inner.waiting.lock().known.len())
            .finish()
    }
}

impl<T: Hash + Eq + Clone + Send + Sync + 'static> Default for DelayingQueue<T> {
    /// Same as [`DelayingQueue::new`] (panics outside a Tokio runtime).
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Hash + Eq + Clone + Send + Sync + 'static> DelayingQueue<T> {
    /// An unnamed delaying queue (no metrics).
    ///
    /// # Panics
    ///
    /// Outside a Tokio runtime, as [`tokio::spawn`]: the timer task is spawned here.
    pub fn new() -> Self {
        Self::with_config(QueueConfig::default())
    }

    /// A delaying queue with a name and metrics.
    ///
    /// # Panics
    ///
    /// Outside a Tokio runtime, as [`tokio::spawn`]: the timer task is spawned here.
    pub fn with_config(config: QueueConfig) -> Self {
        let queue = Queue::with_config(config);
        let wake = Arc::clone(&queue.shared().shutdown_listener);
        let inner = Arc::new(DelayInner {
            queue,
            waiting: Mutex::new(Waiting {
                heap: BinaryHeap::new(),
                known: HashMap::new(),
                next_seq: 0,
                armed: None,
            }),
            wake: Arc::clone(&wake),
        });
        tokio::spawn(run_timer(Arc::downgrade(&inner), wake));
        Self { inner }
    }

    /// Adds `item` once `delay` has passed (client-go `AddAfter`). A zero delay adds at once;
    /// an item already waiting is moved earlier if `delay` ends sooner than its current time,
    /// and left alone otherwise. Ignored after shutdown.
    pub fn add_after(&self, item: T, delay: Duration) {
        let queue = &self.inner.queue;
        if queue.is_shutting_down() {
            return;
        }
        queue.record_retry();
        if delay.is_zero() {
            queue.add(item);
            return;
        }
        let now = Instant::now();
        let at = now.checked_add(delay).unwrap_or_else(|| now + FAR_FUTURE);
        let mut waiting = self.inner.waiting.lock();
        let seq = waiting.next_seq;
        match waiting.known.get_mut(&item) {
            Some(live) if live.0 <= at => return,
            Some(live) => *live = (at, seq),
            None => {
                waiting.known.insert(item.clone(), (at, seq));
            }
        }
        waiting.next_seq += 1;
        waiting.heap.push(Reverse(Entry { at, seq, item }));
        if waiting.armed.is_none_or(|armed| at < armed) {
            waiting.armed = Some(at);
            drop(waiting);
            self.inner.wake.notify_one();
        }
    }

    /// Items waiting for their delay to pass (not yet in the queue).
    pub fn waiting_len(&self) -> usize {
        self.inner.waiting.lock().known.len()
    }

    /// The underlying queue handle.
    pub fn queue(&self) -> &Queue<T> {
        &self.inner.queue
    }
}

impl<T: Hash + Eq + Clone + Send + Sync + 'static> DelayInner<T> {
    /// Adds every item whose time has come; returns the next deadline (and arms it).
    fn fire_ready(&self) -> Option<Instant> {
        let now = Instant::now();
        let mut waiting = self.waiting.lock();
        let waiting = &mut *waiting;
        while let Some(Reverse(top)) = waiting.heap.peek() {
            if top.at > now {
                break;
            }
            let Some(Reverse(entry)) = waiting.heap.pop() else {
                break;
            };
            let live = waiting
                .known
                .get(&entry.item)
                .is_some_and(|&(_, seq)| seq == entry.seq);
            if live {
                waiting.known.remove(&entry.item);
                self.queue.add(entry.item);
            }
        }
        waiting.armed = waiting.heap.peek().map(|Reverse(e)| e.at);
        waiting.armed
    }

    fn clear(&self) {
        let mut waiting = self.waiting.lock();
        waiting.heap.clear();
        waiting.known.clear();
        waiting.armed = None;
    }
}

/// client-go's `waitingLoop`, event-driven.
async fn run_timer<T: Hash + Eq + Clone + Send + Sync + 'static>(
    inner: Weak<DelayInner<T>>,
    wake: Arc<Notify>,
) {
    loop {
        let deadline = {
            let Some(inner) = inner.upgrade() else {
                return;
            };
            if inner.queue.is_shutting_down() {
                inner.clear();
                return;
            }
            inner.fire_ready()
        };
        match deadline {
            Some(at) => {
                tokio::select! {
                    biased;
                    () = wake.notified() => {}
                    () = tokio::time::sleep_until(at) => {}
                }
            }
            None => wake.notified().await,
        }
    }
}
