//! [`PriorityQueue`]: a rate-limiting work queue that hands out higher priorities first and
//! cannot starve the lower ones (controller-runtime's `pkg/controller/priorityqueue`, plus
//! aging).
//!
//! A controller that starts, or resyncs, puts every object's key on its queue at once; the
//! watch events that arrive meanwhile are the changes a user waits for. With
//! [`Priority::LOW`] for the keys of the initial list and of resyncs and [`Priority::NORMAL`]
//! for watch events, the events are served first. Under a steady stream of events a plain
//! priority queue would never serve the low keys (controller-runtime issue #3496); here
//! waiting ages an item, so that no item is passed over for longer than
//! [`max_wait`](PriorityQueueConfig::max_wait).
//!
//! The contract, sentence by sentence as the tests check it:
//!
//! 1. *Priority*: of the items waiting, the one with the highest priority is handed out first.
//! 2. *Fair within a priority*: items of one priority are handed out in the order in which
//!    they were queued.
//! 3. *Stingy*: an item added several times before it is handed out is handed out once, at
//!    the highest of the priorities it was added with; a raised item keeps its place in the
//!    order of its queueing (so it goes before the items queued after it at its new
//!    priority). Of a delayed add and another add of the same item, the earlier time wins.
//! 4. *Aging*: an item that has waited longer than `max_wait` is handed out before every item
//!    queued after it, whatever their priorities; items past `max_wait` are handed out oldest
//!    first. So an item waits at most `max_wait` plus the time to serve the items queued
//!    before it. An item's wait starts when it is queued (a delayed item: when its delay has
//!    passed; an item re-added while processing: when it is done) and is not reset by a
//!    priority raise. `max_wait: None` turns aging off (strict priorities, as upstream).
//! 5. *Exclusive*, *Shutdown*, drain and cancellation-safe `get`: as [`Queue`](super::Queue)
//!    (its sentences hold word for word). An item re-added while it is processed is queued
//!    again when it is done, at the highest priority it was re-added with. After shutdown
//!    delayed items are dropped.
//! 6. *Delays and rate limits*: [`add_after`](PriorityQueue::add_after) and
//!    [`add_rate_limited`](PriorityQueue::add_rate_limited) as
//!    [`RateLimitingQueue`](super::RateLimitingQueue), each with a `_with_priority` variant;
//!    plain `add`, `add_after` and `add_rate_limited` use [`Priority::NORMAL`].
//!
//! Upstream keeps every item in one B-tree ordered by (ready, priority, insertion counter) and
//! has no aging. Here the waiting items sit in two ordered indices, by (priority, sequence)
//! and by sequence alone (the order of queueing, so the oldest item is the first entry);
//! a get looks at the oldest item first and takes it if it has waited past `max_wait`,
//! otherwise takes the first by priority. Delayed items sit in a third index by ready time,
//! fired by one timer task as in [`DelayingQueue`](super::DelayingQueue). Every operation is
//! O(log n) and holds one mutex.
//!
//! Metrics: everything [`Queue`](super::Queue) reports, plus depth and queue duration per
//! priority ([`MetricsProvider::new_priority_depth_metric`],
//! [`MetricsProvider::new_priority_latency_metric`]).
//!
//! Links: <https://github.com/kubernetes-sigs/controller-runtime/tree/main/pkg/controller/priorityqueue>,
//! <https://github.com/kubernetes-sigs/controller-runtime/issues/3332>,
//! <https://github.com/kubernetes-sigs/controller-runtime/issues/3496>.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::hash::{BuildHasher, Hash};
use std::pin::pin;
use std::sync::{Arc, Weak};
use std::time::Duration;

use hashbrown::{DefaultHashBuilder, HashTable};
use parking_lot::Mutex;
use tokio::sync::Notify;
use tokio::time::Instant;

use super::metrics::{GaugeMetric, HistogramMetric, MetricsProvider, QueueMetrics};
use super::queue::QueueConfig;
use super::rate_limiters::RateLimiter;

/// The default of [`PriorityQueueConfig::max_wait`]: 30 s. Long enough that the watch events
/// of a startup or resync burst are served ahead of the listed keys, short enough that a
/// listed key is never deferred by more than half a minute plus the keys ahead of it.
pub const DEFAULT_MAX_WAIT: Duration = Duration::from_secs(30);

/// How often the unfinished-work gauges are refreshed (as [`Queue`](super::Queue)).
const UNFINISHED_WORK_UPDATE_PERIOD: Duration = Duration::from_millis(500);

/// Stand-in for "never" when a delay overflows the clock (as the delaying queue).
const FAR_FUTURE: Duration = Duration::from_secs(86_400 * 365 * 30);

/// The priority of an item in a [`PriorityQueue`]: higher is handed out first.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Priority(pub i32);

impl Priority {
    /// For keys from the initial list and resyncs (controller-runtime's `LowPriority`).
    pub const LOW: Priority = Priority(-100);
    /// For watch events and plain adds (controller-runtime's default, 0).
    pub const NORMAL: Priority = Priority(0);
}

impl std::fmt::Display for Priority {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// Options of a [`PriorityQueue`].
#[derive(Clone, Debug)]
#[must_use]
pub struct PriorityQueueConfig {
    /// Name and metrics, as for [`Queue`](super::Queue).
    pub queue: QueueConfig,
    /// How long an item may wait before it goes ahead of every item queued after it (contract
    /// sentence 4); `None` turns aging off. Default [`DEFAULT_MAX_WAIT`].
    pub max_wait: Option<Duration>,
}

impl Default for PriorityQueueConfig {
    fn default() -> Self {
        Self {
            queue: QueueConfig::default(),
            max_wait: Some(DEFAULT_MAX_WAIT),
        }
    }
}

impl PriorityQueueConfig {
    /// A configuration for a queue named `name` (metrics to the default provider).
    pub fn named(name: impl Into<String>) -> Self {
        Self {
            queue: QueueConfig::named(name),
            ..Self::default()
        }
    }

    /// Takes name and metrics from `queue`.
    pub fn with_queue_config(mut self, queue: QueueConfig) -> Self {
        self.queue = queue;
        self
    }

    /// Sends this queue's metrics to `provider`.
    pub fn with_metrics_provider(mut self, provider: Arc<dyn MetricsProvider>) -> Self {
        self.queue = self.queue.with_metrics_provider(provider);
        self
    }

    /// Sets [`max_wait`](Self::max_wait) (`None`: no aging).
    pub fn with_max_wait(mut self, max_wait: Option<Duration>) -> Self {
        self.max_wait = max_wait;
        self
    }
}

/// An add still to be served.
struct Pending {
    priority: Priority,
    /// While delayed: (ready time, key in the delayed index).
    delay: Option<(Instant, u64)>,
}

struct Slot<T> {
    item: T,
    processing: bool,
    pending: Option<Pending>,
    /// While waiting to be handed out: (sequence, queueing time if aging is on).
    queued: Option<(u64, Option<Instant>)>,
    /// The priority the depth metrics count this item under, while they count it.
    counted: Option<Priority>,
    added: Option<Instant>,
    started: Option<Instant>,
}

struct PerPriority {
    depth: Box<dyn GaugeMetric>,
    latency: Box<dyn HistogramMetric>,
}

struct Metrics {
    base: QueueMetrics,
    provider: Arc<dyn MetricsProvider>,
    name: String,
    per: HashMap<Priority, PerPriority>,
}

impl Metrics {
    fn of(&mut self, p: Priority) -> &PerPriority {
        let Self {
            provider,
            name,
            per,
            ..
        } = self;
        per.entry(p).or_insert_with(|| PerPriority {
            depth: provider.new_priority_depth_metric(name, p),
            latency: provider.new_priority_latency_metric(name, p),
        })
    }
}

/// The synchronous state machine. A slot exists while its item is pending or processing; it
/// is in `by_priority` and `by_age` iff it is pending, not delayed and not processing; it is
/// in `delayed` iff its pending add is delayed.
struct State<T> {
    hasher: DefaultHashBuilder,
    index: HashTable<usize>,
    slots: Vec<Option<Slot<T>>>,
    free: Vec<usize>,
    by_priority: BTreeSet<(Reverse<Priority>, u64, usize)>,
    by_age: BTreeMap<u64, usize>,
    delayed: BTreeSet<(Instant, u64, usize)>,
    next_seq: u64,
    processing: usize,
    max_wait: Option<Duration>,
    metrics: Option<Metrics>,
    shutting_down: bool,
    drain: bool,
    waiting_getters: usize,
    /// The deadline the timer task sleeps until.
    armed: Option<Instant>,
}

/// What an add did.
#[derive(Default)]
struct AddOutcome {
    /// An item became ready to hand out: wake a getter.
    queued: bool,
    /// The earliest delay moved earlier: wake the timer.
    rearm: bool,
}

fn slot_mut<T>(slots: &mut [Option<Slot<T>>], i: usize) -> &mut Slot<T> {
    slots[i]
        .as_mut()
        .expect("priority queue invariant: indexed slots are occupied")
}

impl<T: Hash + Eq + Clone> State<T> {
    fn new(max_wait: Option<Duration>, metrics: Option<Metrics>) -> Self {
        Self {
            hasher: DefaultHashBuilder::default(),
            index: HashTable::new(),
            slots: Vec::new(),
            free: Vec::new(),
            by_priority: BTreeSet::new(),
            by_age: BTreeMap::new(),
            delayed: BTreeSet::new(),
            next_seq: 0,
            processing: 0,
            max_wait,
            metrics,
            shutting_down: false,
            drain: false,
            waiting_getters: 0,
            armed: None,
        }
    }

    fn slot(&mut self, i: usize) -> &mut Slot<T> {
        slot_mut(&mut self.slots, i)
    }

    fn find(&self, item: &T) -> Option<usize> {
        let hash = self.hasher.hash_one(item);
        self.index
            .find(hash, |&i| {
                self.slots[i].as_ref().is_some_and(|s| s.item == *item)
            })
            .copied()
    }

    fn insert(&mut self, item: T) -> usize {
        let hash = self.hasher.hash_one(&item);
        let slot = Slot {
            item,
            processing: false,
            pending: None,
            queued: None,
            counted: None,
            added: None,
            started: None,
        };
        let i = match self.free.pop() {
            Some(i) => {
                self.slots[i] = Some(slot);
                i
            }
            None => {
                self.slots.push(Some(slot));
                self.slots.len() - 1
            }
        };
        let Self {
            hasher,
            index,
            slots,
            ..
        } = self;
        index.insert_unique(hash, i, |&j| match &slots[j] {
            Some(s) => hasher.hash_one(&s.item),
            None => 0,
        });
        i
    }

    fn remove(&mut self, i: usize) {
        let Some(slot) = self.slots[i].take() else {
            return;
        };
        let hash = self.hasher.hash_one(&slot.item);
        if let Ok(entry) = self.index.find_entry(hash, |&j| j == i) {
            entry.remove();
        }
        if self.index.is_empty() {
            self.slots.clear();
            self.free.clear();
        } else {
            self.free.push(i);
        }
    }

    fn add(&mut self, item: T, priority: Priority, delay: Duration) -> AddOutcome {
        if self.shutting_down {
            return AddOutcome::default();
        }
        let at = (!delay.is_zero()).then(|| {
            let now = Instant::now();
            now.checked_add(delay).unwrap_or_else(|| now + FAR_FUTURE)
        });
        let i = match self.find(&item) {
            Some(i) => i,
            None => self.insert(item),
        };
        let Some(pending) = self.slot(i).pending.as_mut() else {
            self.slot(i).pending = Some(Pending {
                priority,
                delay: None,
            });
            return match at {
                None => AddOutcome {
                    queued: self.make_ready(i),
                    rearm: false,
                },
                Some(at) => AddOutcome {
                    queued: false,
                    rearm: self.schedule(i, at),
                },
            };
        };
        let old = pending.priority;
        pending.priority = old.max(priority);
        match (pending.delay, at) {
            (None, _) => {
                if priority > old {
                    self.reprioritize(i, old, priority);
                }
                AddOutcome::default()
            }
            (Some((old_at, key)), None) => {
                self.delayed.remove(&(old_at, key, i));
                if let Some(p) = self.slot(i).pending.as_mut() {
                    p.delay = None;
                }
                AddOutcome {
                    queued: self.make_ready(i),
                    rearm: false,
                }
            }
            (Some((old_at, key)), Some(at)) if at < old_at => {
                self.delayed.remove(&(old_at, key, i));
                AddOutcome {
                    queued: false,
                    rearm: self.schedule(i, at),
                }
            }
            (Some(_), Some(_)) => AddOutcome::default(),
        }
    }

    /// Parks slot `i` until `at`; returns whether the timer must wake earlier.
    fn schedule(&mut self, i: usize, at: Instant) -> bool {
        let key = self.next_seq;
        self.next_seq += 1;
        self.delayed.insert((at, key, i));
        if let Some(p) = self.slot(i).pending.as_mut() {
            p.delay = Some((at, key));
        }
        if self.armed.is_none_or(|armed| at < armed) {
            self.armed = Some(at);
            return true;
        }
        false
    }

    /// Slot `i`'s pending add is due now: count it, and queue it unless it is processing.
    /// Returns whether it was queued.
    fn make_ready(&mut self, i: usize) -> bool {
        let Self { slots, metrics, .. } = self;
        let slot = slot_mut(slots, i);
        let Some(priority) = slot.pending.as_ref().map(|p| p.priority) else {
            return false;
        };
        if slot.counted.is_none() {
            slot.counted = Some(priority);
            if let Some(m) = metrics {
                m.base.add(&mut slot.added);
                m.of(priority).depth.inc();
            }
        }
        if slot.processing {
            return false;
        }
        self.enqueue(i, priority);
        true
    }

    fn enqueue(&mut self, i: usize, priority: Priority) {
        let seq = self.next_seq;
        self.next_seq += 1;
        let at = self.max_wait.map(|_| Instant::now());
        self.slot(i).queued = Some((seq, at));
        self.by_priority.insert((Reverse(priority), seq, i));
        self.by_age.insert(seq, i);
    }

    fn reprioritize(&mut self, i: usize, old: Priority, new: Priority) {
        let Self {
            slots,
            metrics,
            by_priority,
            ..
        } = self;
        let slot = slot_mut(slots, i);
        if let Some((seq, _)) = slot.queued {
            by_priority.remove(&(Reverse(old), seq, i));
            by_priority.insert((Reverse(new), seq, i));
        }
        if let Some(counted) = slot.counted.replace(new)
            && let Some(m) = metrics
        {
            m.of(counted).depth.dec();
            m.of(new).depth.inc();
        }
    }

    /// The slot to hand out next: the oldest if it has waited past `max_wait`, else the first
    /// by priority.
    fn next(&self) -> Option<usize> {
        if let Some(max_wait) = self.max_wait
            && let Some((_, &i)) = self.by_age.first_key_value()
            && let Some(slot) = self.slots[i].as_ref()
            && let Some((_, Some(at))) = slot.queued
            && at.elapsed() >= max_wait
        {
            return Some(i);
        }
        self.by_priority.first().map(|&(_, _, i)| i)
    }

    fn pop(&mut self) -> Option<(T, Priority)> {
        let i = self.next()?;
        let Self {
            slots,
            metrics,
            by_priority,
            by_age,
            ..
        } = self;
        let slot = slot_mut(slots, i);
        let (seq, _) = slot.queued.take()?;
        let priority = slot.pending.take().map_or(Priority::NORMAL, |p| p.priority);
        by_priority.remove(&(Reverse(priority), seq, i));
        by_age.remove(&seq);
        slot.processing = true;
        let counted = slot.counted.take();
        if let Some(m) = metrics {
            let waited = m.base.get(&mut slot.added, &mut slot.started);
            if let Some(c) = counted {
                m.of(c).depth.dec();
            }
            if let Some(w) = waited {
                m.of(priority).latency.observe(w);
            }
        }
        self.processing += 1;
        Some((slot.item.clone(), priority))
    }

    /// Returns (was processing, queued again).
    fn done(&mut self, item: &T) -> (bool, bool) {
        let Some(i) = self.find(item) else {
            return (false, false);
        };
        let Self { slots, metrics, .. } = self;
        let slot = slot_mut(slots, i);
        if !slot.processing {
            return (false, false);
        }
        slot.processing = false;
        if let Some(m) = metrics {
            m.base.done(&mut slot.started);
        }
        self.processing -= 1;
        match slot.pending.as_ref() {
            Some(p) if p.delay.is_none() => {
                let priority = p.priority;
                self.enqueue(i, priority);
                (true, true)
            }
            Some(_) => (true, false),
            None => {
                self.remove(i);
                (true, false)
            }
        }
    }

    /// Queues every delayed item whose time has come; returns how many were queued and the
    /// next deadline (armed).
    fn fire_ready(&mut self) -> (usize, Option<Instant>) {
        let now = Instant::now();
        let mut queued = 0;
        while let Some(&(at, key, i)) = self.delayed.first() {
            if at > now {
                break;
            }
            self.delayed.remove(&(at, key, i));
            if let Some(p) = self.slot(i).pending.as_mut() {
                p.delay = None;
            }
            if self.make_ready(i) {
                queued += 1;
            }
        }
        self.armed = self.delayed.first().map(|&(at, _, _)| at);
        (queued, self.armed)
    }

    /// Shutdown drops the delayed adds.
    fn drop_delayed(&mut self) {
        for (_, _, i) in std::mem::take(&mut self.delayed) {
            let slot = self.slot(i);
            slot.pending = None;
            if !slot.processing {
                self.remove(i);
            }
        }
        self.armed = None;
    }

    fn processing_start_times(&self) -> impl Iterator<Item = Instant> + '_ {
        self.slots
            .iter()
            .filter_map(|s| s.as_ref())
            .filter(|s| s.processing)
            .filter_map(|s| s.started)
    }
}

struct Shared<T> {
    state: Mutex<State<T>>,
    limiter: Arc<dyn RateLimiter<T>>,
    /// Getters waiting for an item.
    getters: Notify,
    /// `shutdown_with_drain` waiting for processing to end.
    drained: Notify,
    /// The timer task's wake-up: earlier deadline, shutdown, or the queue dropped.
    timer: Arc<Notify>,
}

impl<T> Drop for Shared<T> {
    fn drop(&mut self) {
        self.timer.notify_one();
    }
}

/// A rate-limiting work queue with priorities and aging. Higher priorities are handed out
/// first, FIFO within a priority; an item re-added keeps one entry at the higher priority; an
/// item waiting longer than [`max_wait`](PriorityQueueConfig::max_wait) goes before every
/// younger item; the rest is [`Queue`](super::Queue)'s contract (the numbered contract is in
/// `workqueue/priority.rs`). Cloning gives another handle to the same queue.
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// use kinform_runtime::workqueue::{Priority, PriorityQueue, default_controller_rate_limiter};
///
/// let queue = PriorityQueue::new(default_controller_rate_limiter());
/// queue.add_with_priority("default/listed", Priority::LOW);
/// queue.add("default/changed"); // a watch event: NORMAL
/// assert_eq!(queue.get().await, Some("default/changed"));
/// assert_eq!(queue.get().await, Some("default/listed"));
/// # }
/// ```
pub struct PriorityQueue<T> {
    shared: Arc<Shared<T>>,
}

impl<T> Clone for PriorityQueue<T> {
    fn clone(&self) -> Self {
        Self {
            shared: Arc::clone(&self.shared),
        }
    }
}

impl<T> std::fmt::Debug for PriorityQueue<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.shared.state.lock();
        f.debug_struct("PriorityQueue")
            .field("len", &state.by_priority.len())
            .field("processing", &state.processing)
            .field("waiting", &state.delayed.len())
            .field("max_wait", &state.max_wait)
            .field("shutting_down", &state.shutting_down)
            .finish_non_exhaustive()
    }
}

impl<T: Hash + Eq + Clone + Send + Sync + 'static> PriorityQueue<T> {
    /// An unnamed queue (no metrics) with the default [`max_wait`](PriorityQueueConfig::max_wait).
    ///
    /// # Panics
    ///
    /// Outside a Tokio runtime, as [`tokio::spawn`]: the timer task is spawned here.
    pub fn new(limiter: impl RateLimiter<T> + 'static) -> Self {
        Self::with_config(limiter, PriorityQueueConfig::default())
    }

    /// A queue with a name, metrics and `max_wait`.
    ///
    /// # Panics
    ///
    /// Outside a Tokio runtime, as [`tokio::spawn`]: the timer task is spawned here.
    pub fn with_config(
        limiter: impl RateLimiter<T> + 'static,
        config: PriorityQueueConfig,
    ) -> Self {
        Self::with_shared_limiter(Arc::new(limiter), config)
    }

    /// As [`with_config`](Self::with_config), with a limiter already behind an `Arc`.
    ///
    /// # Panics
    ///
    /// Outside a Tokio runtime, as [`tokio::spawn`]: the timer task is spawned here.
    pub fn with_shared_limiter(
        limiter: Arc<dyn RateLimiter<T>>,
        config: PriorityQueueConfig,
    ) -> Self {
        let metrics = config.queue.provider().map(|(provider, name)| Metrics {
            base: QueueMetrics::new(provider.as_ref(), name),
            name: name.to_string(),
            provider,
            per: HashMap::new(),
        });
        let has_metrics = metrics.is_some();
        let timer = Arc::new(Notify::new());
        let shared = Arc::new(Shared {
            state: Mutex::new(State::new(config.max_wait, metrics)),
            limiter,
            getters: Notify::new(),
            drained: Notify::new(),
            timer: Arc::clone(&timer),
        });
        tokio::spawn(run_timer(Arc::downgrade(&shared), timer));
        if has_metrics {
            tokio::spawn(update_unfinished_work(Arc::downgrade(&shared)));
        }
        Self { shared }
    }

    /// Adds `item` at [`Priority::NORMAL`] (client-go `Add`).
    pub fn add(&self, item: T) {
        self.add_with_priority(item, Priority::NORMAL);
    }

    /// Adds `item` at `priority`. Ignored after shutdown; an item already waiting keeps one
    /// entry at the higher of the two priorities; an item being processed is queued again
    /// when it is done.
    pub fn add_with_priority(&self, item: T, priority: Priority) {
        self.add_inner(item, priority, Duration::ZERO);
    }

    /// Adds `item` at [`Priority::NORMAL`] once `delay` has passed (client-go `AddAfter`).
    pub fn add_after(&self, item: T, delay: Duration) {
        self.add_after_with_priority(item, delay, Priority::NORMAL);
    }

    /// Adds `item` at `priority` once `delay` has passed. A zero delay adds at once; of two
    /// pending adds of one item the earlier time and the higher priority win. Counts one
    /// `workqueue_retries_total`. Ignored after shutdown.
    pub fn add_after_with_priority(&self, item: T, delay: Duration, priority: Priority) {
        {
            let state = self.shared.state.lock();
            if state.shutting_down {
                return;
            }
            if let Some(m) = &state.metrics {
                m.base.retry();
            }
        }
        self.add_inner(item, priority, delay);
    }

    /// Adds `item` at [`Priority::NORMAL`] after the wait its rate limiter decides (client-go
    /// `AddRateLimited`).
    pub fn add_rate_limited(&self, item: T) {
        self.add_rate_limited_with_priority(item, Priority::NORMAL);
    }

    /// Adds `item` at `priority` after the wait its rate limiter decides.
    pub fn add_rate_limited_with_priority(&self, item: T, priority: Priority) {
        let delay = self.shared.limiter.when(&item);
        self.add_after_with_priority(item, delay, priority);
    }

    fn add_inner(&self, item: T, priority: Priority, delay: Duration) {
        let (wake_getter, rearm) = {
            let mut state = self.shared.state.lock();
            let outcome = state.add(item, priority, delay);
            (outcome.queued && state.waiting_getters > 0, outcome.rearm)
        };
        if wake_getter {
            self.shared.getters.notify_one();
        }
        if rearm {
            self.shared.timer.notify_one();
        }
    }

    /// Clears `item`'s failure history in the rate limiter (client-go `Forget`).
    pub fn forget(&self, item: &T) {
        self.shared.limiter.forget(item);
    }

    /// How many times `item` was rate-limited since it was last forgotten.
    pub fn num_requeues(&self, item: &T) -> usize {
        self.shared.limiter.num_requeues(item)
    }

    /// The rate limiter.
    pub fn rate_limiter(&self) -> &Arc<dyn RateLimiter<T>> {
        &self.shared.limiter
    }

    /// Waits for the next item and marks it processing (client-go `Get`). Returns `None` once
    /// the queue is shut down and empty. The caller must call [`done`](Self::done).
    ///
    /// Cancellation-safe: dropping the future before it completes loses no item.
    pub async fn get(&self) -> Option<T> {
        self.get_with_priority().await.map(|(item, _)| item)
    }

    /// As [`get`](Self::get), with the priority the item was handed out at (so that a
    /// reconcile can requeue it at the same priority).
    pub async fn get_with_priority(&self) -> Option<(T, Priority)> {
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
                if let Some(got) = state.pop() {
                    return Some(got);
                }
                if state.shutting_down {
                    return None;
                }
                notified.as_mut().enable();
                state.waiting_getters += 1;
                waiter.registered = true;
            }
            notified.await;
        }
    }

    /// Marks `item` as done processing (client-go `Done`); if it was added again meanwhile it
    /// is queued now. Does nothing for an item that is not being processed.
    pub fn done(&self, item: &T) {
        let (wake_getter, drained) = {
            let mut state = self.shared.state.lock();
            let (was_processing, requeued) = state.done(item);
            (
                requeued && state.waiting_getters > 0,
                was_processing && state.drain && state.processing == 0,
            )
        };
        if wake_getter {
            self.shared.getters.notify_one();
        }
        if drained {
            self.shared.drained.notify_waiters();
        }
    }

    /// Items waiting to be handed out (not delayed, not processing).
    pub fn len(&self) -> usize {
        self.shared.state.lock().by_priority.len()
    }

    /// Whether no item is waiting to be handed out.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Items handed out and not yet done.
    pub fn processing_len(&self) -> usize {
        self.shared.state.lock().processing
    }

    /// Items waiting for their delay to pass.
    pub fn waiting_len(&self) -> usize {
        self.shared.state.lock().delayed.len()
    }

    /// Items waiting to be handed out, counted by their priority (the highest they were
    /// added at), highest first, each priority once and none with a count of 0: the queue's
    /// depth per priority now, as the depth metrics count it. Aging hands an old item out
    /// early but does not change its priority here. Walks the ready items once under the
    /// queue's lock.
    pub fn len_by_priority(&self) -> Vec<(Priority, usize)> {
        let state = self.shared.state.lock();
        let mut out: Vec<(Priority, usize)> = Vec::new();
        for (Reverse(p), _, _) in &state.by_priority {
            match out.last_mut() {
                Some((last, n)) if last == p => *n += 1,
                _ => out.push((*p, 1)),
            }
        }
        out
    }

    /// Stops the queue (client-go `ShutDown`): later adds are ignored, delayed adds are
    /// dropped, workers get the items still queued and then `None`. Also releases a pending
    /// [`shutdown_with_drain`](Self::shutdown_with_drain).
    pub fn shutdown(&self) {
        self.begin_shutdown(false);
        self.shared.drained.notify_waiters();
    }

    /// Stops the queue like [`shutdown`](Self::shutdown) and waits until every item handed
    /// out has been marked done (client-go `ShutDownWithDrain`).
    pub async fn shutdown_with_drain(&self) {
        self.begin_shutdown(true);
        loop {
            let mut notified = pin!(self.shared.drained.notified());
            {
                let state = self.shared.state.lock();
                if !state.drain || state.processing == 0 {
                    return;
                }
                notified.as_mut().enable();
            }
            notified.await;
        }
    }

    fn begin_shutdown(&self, drain: bool) {
        {
            let mut state = self.shared.state.lock();
            state.shutting_down = true;
            state.drain = drain;
            state.drop_delayed();
        }
        self.shared.getters.notify_waiters();
        self.shared.timer.notify_one();
    }

    /// Whether the queue was shut down (client-go `ShuttingDown`).
    pub fn is_shutting_down(&self) -> bool {
        self.shared.state.lock().shutting_down
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

/// Fires delayed adds when their time comes; ends on shutdown or when the queue is dropped.
async fn run_timer<T: Hash + Eq + Clone + Send + Sync + 'static>(
    shared: Weak<Shared<T>>,
    wake: Arc<Notify>,
) {
    loop {
        let deadline = {
            let Some(shared) = shared.upgrade() else {
                return;
            };
            let (queued, deadline) = {
                let mut state = shared.state.lock();
                if state.shutting_down {
                    return;
                }
                let (queued, deadline) = state.fire_ready();
                (queued.min(state.waiting_getters), deadline)
            };
            for _ in 0..queued {
                shared.getters.notify_one();
            }
            deadline
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

/// Refreshes the unfinished-work gauges until shutdown or drop (as [`Queue`](super::Queue)).
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
        if let Some(m) = &state.metrics {
            m.base
                .update_unfinished_work(state.processing_start_times());
        }
    }
}
