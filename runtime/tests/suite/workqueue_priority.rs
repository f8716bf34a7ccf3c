//! `PriorityQueue`: the queue contract (dedup, exclusive processing, shutdown, drain), the
//! priority sentences (order, FIFO within a priority, raise on re-add), delays and rate
//! limits, and aging: a starvation scenario on Tokio's paused clock, checked handout by
//! handout against a model of the contract.

use std::cmp::Reverse;
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::FutureExt;
use kinform_runtime::workqueue::{
    CounterMetric, GaugeMetric, HistogramMetric, ItemExponentialFailureRateLimiter,
    MetricsProvider, Priority, PriorityQueue, PriorityQueueConfig, SettableGaugeMetric,
    default_controller_rate_limiter,
};
use proptest::prelude::*;
use tokio::time::Instant;

const HIGH: Priority = Priority(10);

fn queue<T: std::hash::Hash + Eq + Clone + Send + Sync + 'static>(
    max_wait: Option<Duration>,
) -> PriorityQueue<T> {
    PriorityQueue::with_config(
        default_controller_rate_limiter(),
        PriorityQueueConfig::default().with_max_wait(max_wait),
    )
}

/// Lets `d` pass and the queue's timer task run.
async fn settle(d: Duration) {
    tokio::time::sleep(d).await;
    for _ in 0..3 {
        tokio::task::yield_now().await;
    }
}

/// Everything waiting, in handout order, without blocking.
fn drain_now<T: std::hash::Hash + Eq + Clone + Send + Sync + 'static>(
    q: &PriorityQueue<T>,
) -> Vec<(T, Priority)> {
    let mut out = Vec::new();
    while let Some(Some(got)) = q.get_with_priority().now_or_never() {
        q.done(&got.0);
        out.push(got);
    }
    out
}

#[tokio::test(start_paused = true)]
async fn len_by_priority_counts_ready_items_under_their_highest_priority() {
    let q = queue(None);
    assert_eq!(q.len_by_priority(), vec![]);
    for key in ["a", "b", "c"] {
        q.add_with_priority(key, Priority::LOW);
    }
    q.add("d");
    // Re-added higher: counted once, at the higher priority.
    q.add_with_priority("a", HIGH);
    // Delayed and processing items are not waiting to be handed out.
    q.add_after_with_priority("later", Duration::from_secs(60), HIGH);
    assert_eq!(
        q.len_by_priority(),
        vec![(HIGH, 1), (Priority::NORMAL, 1), (Priority::LOW, 2)]
    );
    let (first, _) = q.get_with_priority().await.expect("an item");
    assert_eq!(first, "a");
    assert_eq!(
        q.len_by_priority(),
        vec![(Priority::NORMAL, 1), (Priority::LOW, 2)]
    );
    assert_eq!(
        q.len_by_priority().iter().map(|(_, n)| n).sum::<usize>(),
        q.len()
    );
}

#[tokio::test(start_paused = true)]
async fn higher_priority_first() {
    let q = queue(None);
    q.add_with_priority("listed", Priority::LOW);
    q.add("event");
    q.add_with_priority("urgent", HIGH);
    assert_eq!(q.len(), 3);
    assert_eq!(
        drain_now(&q),
        vec![
            ("urgent", HIGH),
            ("event", Priority::NORMAL),
            ("listed", Priority::LOW)
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn fifo_within_a_priority() {
    let q = queue(None);
    for i in 0..50 {
        let p = if i % 2 == 0 {
            Priority::LOW
        } else {
            Priority::NORMAL
        };
        q.add_with_priority(i, p);
    }
    let got: Vec<i32> = drain_now(&q).into_iter().map(|(i, _)| i).collect();
    let odd: Vec<i32> = (0..50).filter(|i| i % 2 == 1).collect();
    let even: Vec<i32> = (0..50).filter(|i| i % 2 == 0).collect();
    assert_eq!(got, [odd, even].concat());
}

#[tokio::test(start_paused = true)]
async fn re_add_keeps_one_entry_at_the_higher_priority() {
    let q = queue(None);
    q.add_with_priority("a", Priority::LOW);
    q.add_with_priority("b", Priority::NORMAL);
    q.add_with_priority("c", Priority::LOW);
    q.add_with_priority("a", Priority::NORMAL); // raised: keeps its place, so before b
    q.add_with_priority("b", Priority::LOW); // never lowered
    q.add_with_priority("c", Priority::LOW); // duplicate
    assert_eq!(q.len(), 3);
    assert_eq!(
        drain_now(&q),
        vec![
            ("a", Priority::NORMAL),
            ("b", Priority::NORMAL),
            ("c", Priority::LOW)
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn exclusive_with_dirty_re_add_at_the_highest_priority() {
    let q = queue(None);
    q.add_with_priority("a", Priority::LOW);
    let (a, p) = q.get_with_priority().await.unwrap();
    assert_eq!(p, Priority::LOW);
    // Re-added while processing: not handed to a second worker, queued again on done.
    q.add_with_priority("a", Priority::LOW);
    q.add_with_priority("a", HIGH);
    q.add_with_priority("a", Priority::NORMAL);
    assert_eq!(q.len(), 0);
    assert!(q.get().now_or_never().is_none());
    q.add_with_priority("b", Priority::NORMAL);
    assert_eq!(q.processing_len(), 1);
    q.done(&a);
    q.done(&a); // not processing any more: nothing happens
    assert_eq!(q.len(), 2);
    assert_eq!(
        drain_now(&q),
        vec![("a", HIGH), ("b", Priority::NORMAL)],
        "the re-added item is queued at the highest priority it was re-added with"
    );
    assert_eq!(q.processing_len(), 0);
}

#[tokio::test(start_paused = true)]
async fn done_for_an_unknown_item_does_nothing() {
    let q = queue::<u8>(None);
    q.done(&1);
    q.add(1);
    q.done(&1); // queued, not processing
    assert_eq!(q.len(), 1);
    assert_eq!(q.processing_len(), 0);
}

#[tokio::test(start_paused = true)]
async fn shutdown_serves_what_is_queued_then_none() {
    let q = queue(Some(Duration::from_secs(10)));
    q.add_with_priority(1, Priority::LOW);
    q.add(2);
    q.add_after(3, Duration::from_secs(1));
    q.shutdown();
    assert!(q.is_shutting_down());
    q.add(4); // ignored
    q.add_after(5, Duration::ZERO); // ignored
    assert_eq!(q.waiting_len(), 0, "delayed adds are dropped");
    assert_eq!(q.get().await, Some(2));
    assert_eq!(q.get().await, Some(1));
    assert_eq!(q.get().await, None);
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(q.get().await, None);
}

#[tokio::test(start_paused = true)]
async fn shutdown_wakes_waiting_getters() {
    let q = queue::<u8>(None);
    let getters: Vec<_> = (0..3)
        .map(|_| {
            let q = q.clone();
            tokio::spawn(async move { q.get().await })
        })
        .collect();
    tokio::task::yield_now().await;
    q.shutdown();
    for g in getters {
        assert_eq!(g.await.unwrap(), None);
    }
}

#[tokio::test(start_paused = true)]
async fn shutdown_with_drain_waits_for_done() {
    let q = queue(None);
    q.add("a");
    q.add("b");
    let a = q.get().await.unwrap();
    let drained = Arc::new(AtomicBool::new(false));
    let waiter = {
        let (q, drained) = (q.clone(), drained.clone());
        tokio::spawn(async move {
            q.shutdown_with_drain().await;
            drained.store(true, Ordering::SeqCst);
        })
    };
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(!drained.load(Ordering::SeqCst));
    let b = q.get().await.unwrap(); // still served after shutdown
    q.done(&a);
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(!drained.load(Ordering::SeqCst), "b is still processing");
    q.done(&b);
    waiter.await.unwrap();
    assert!(drained.load(Ordering::SeqCst));
    assert_eq!(q.get().await, None);
}

#[tokio::test(start_paused = true)]
async fn a_dropped_get_loses_nothing() {
    let q = queue::<u8>(None);
    {
        let get = q.get();
        futures_util::pin_mut!(get);
        assert!(get.as_mut().now_or_never().is_none());
    }
    q.add(7);
    assert_eq!(q.get().await, Some(7));
}

#[tokio::test(start_paused = true)]
async fn waiting_getter_is_woken_by_add_and_by_delay() {
    let q = queue::<u8>(None);
    let getter = {
        let q = q.clone();
        tokio::spawn(async move { q.get_with_priority().await })
    };
    tokio::task::yield_now().await;
    q.add_after_with_priority(1, Duration::from_secs(3), Priority::LOW);
    let start = Instant::now();
    assert_eq!(getter.await.unwrap(), Some((1, Priority::LOW)));
    assert_eq!(start.elapsed(), Duration::from_secs(3));
}

#[tokio::test(start_paused = true)]
async fn delays_earlier_time_and_higher_priority_win() {
    let q = queue(None);
    q.add_after_with_priority("a", Duration::from_secs(10), Priority::LOW);
    q.add_after_with_priority("a", Duration::from_secs(2), Priority::LOW); // earlier
    q.add_after_with_priority("a", Duration::from_secs(5), HIGH); // later, but raises
    assert_eq!((q.len(), q.waiting_len()), (0, 1));
    settle(Duration::from_secs(2)).await;
    assert_eq!((q.len(), q.waiting_len()), (1, 0));
    assert_eq!(drain_now(&q), vec![("a", HIGH)]);

    // An immediate add of a delayed item queues it now.
    q.add_after("b", Duration::from_secs(60));
    q.add_with_priority("b", Priority::LOW);
    assert_eq!((q.len(), q.waiting_len()), (1, 0));
    assert_eq!(drain_now(&q), vec![("b", Priority::NORMAL)]);

    // A delayed add of a queued item leaves it queued (the earlier time wins).
    q.add_with_priority("c", Priority::LOW);
    q.add_after_with_priority("c", Duration::from_secs(60), Priority::NORMAL);
    assert_eq!((q.len(), q.waiting_len()), (1, 0));
    assert_eq!(drain_now(&q), vec![("c", Priority::NORMAL)]);
}

#[tokio::test(start_paused = true)]
async fn delayed_item_fires_while_processing_and_is_queued_on_done() {
    let q = queue(None);
    q.add("a");
    let a = q.get().await.unwrap();
    q.add_after_with_priority("a", Duration::from_secs(1), Priority::LOW);
    settle(Duration::from_secs(2)).await;
    assert_eq!((q.len(), q.waiting_len()), (0, 0));
    q.done(&a);
    assert_eq!(drain_now(&q), vec![("a", Priority::LOW)]);
}

#[tokio::test(start_paused = true)]
async fn rate_limited_adds_keep_their_priority() {
    let q = PriorityQueue::with_config(
        ItemExponentialFailureRateLimiter::new(Duration::from_secs(1), Duration::from_secs(60)),
        PriorityQueueConfig::default(),
    );
    q.add_rate_limited_with_priority("a", Priority::LOW);
    q.add_rate_limited("b");
    assert_eq!(q.num_requeues(&"a"), 1);
    settle(Duration::from_secs(1)).await;
    assert_eq!(
        drain_now(&q),
        vec![("b", Priority::NORMAL), ("a", Priority::LOW)]
    );
    q.add_rate_limited_with_priority("a", Priority::LOW);
    assert_eq!(q.num_requeues(&"a"), 2);
    settle(Duration::from_secs(1)).await;
    assert!(q.is_empty(), "second failure waits 2 s");
    settle(Duration::from_secs(1)).await;
    assert_eq!(q.len(), 1);
    q.forget(&"a");
    assert_eq!(q.num_requeues(&"a"), 0);
}

#[tokio::test(start_paused = true)]
async fn an_item_past_max_wait_goes_before_younger_items() {
    for aging in [true, false] {
        let q = queue(aging.then_some(Duration::from_secs(10)));
        q.add_with_priority("old", Priority::LOW);
        tokio::time::sleep(Duration::from_secs(9)).await;
        q.add("young");
        let (young, _) = q.get_with_priority().now_or_never().flatten().unwrap();
        assert_eq!(young, "young", "old has not waited max_wait yet");
        q.done(&young);
        q.add_with_priority("old", Priority::LOW); // a duplicate does not reset the wait
        tokio::time::sleep(Duration::from_secs(1)).await;
        q.add_with_priority("newer", HIGH);
        let got: Vec<_> = drain_now(&q).into_iter().map(|(k, _)| k).collect();
        let want = if aging {
            ["old", "newer"]
        } else {
            ["newer", "old"]
        };
        assert_eq!(got, want, "aging {aging}");
    }
}

#[tokio::test(start_paused = true)]
async fn aged_items_go_oldest_first_whatever_their_priority() {
    for aging in [true, false] {
        let q = queue(aging.then_some(Duration::from_secs(10)));
        q.add_with_priority("a", Priority::LOW);
        tokio::time::sleep(Duration::from_secs(1)).await;
        q.add_with_priority("b", HIGH);
        q.add_with_priority("a", Priority::NORMAL); // raised: still the oldest
        tokio::time::sleep(Duration::from_secs(20)).await;
        q.add_with_priority("c", HIGH);
        let got: Vec<_> = drain_now(&q).into_iter().map(|(k, _)| k).collect();
        let want = if aging {
            ["a", "b", "c"]
        } else {
            ["b", "c", "a"]
        };
        assert_eq!(got, want, "aging {aging}");
    }
}

// ---- the model check ---------------------------------------------------------------------

/// The contract without delays, as a model: a map of pending adds, ordered by priority and by
/// queueing; `get` applies the aging rule.
#[derive(Debug, Default)]
struct Model {
    max_wait: Option<Duration>,
    seq: u64,
    /// key -> (priority, seq, queued at)
    waiting: HashMap<u32, (Priority, u64, Instant)>,
    by_priority: BTreeMap<(Reverse<Priority>, u64), u32>,
    by_age: BTreeMap<u64, u32>,
    processing: HashMap<u32, Option<Priority>>,
    shutting_down: bool,
}

impl Model {
    fn new(max_wait: Option<Duration>) -> Self {
        Self {
            max_wait,
            ..Self::default()
        }
    }

    fn queue(&mut self, k: u32, p: Priority) {
        self.seq += 1;
        self.waiting.insert(k, (p, self.seq, Instant::now()));
        self.by_priority.insert((Reverse(p), self.seq), k);
        self.by_age.insert(self.seq, k);
    }

    fn add(&mut self, k: u32, p: Priority) {
        if self.shutting_down {
            return;
        }
        if let Some(dirty) = self.processing.get_mut(&k) {
            *dirty = Some(dirty.map_or(p, |d| d.max(p)));
            return;
        }
        match self.waiting.get_mut(&k) {
            Some((old, seq, _)) => {
                if p > *old {
                    self.by_priority.remove(&(Reverse(*old), *seq));
                    self.by_priority.insert((Reverse(p), *seq), k);
                    *old = p;
                }
            }
            None => self.queue(k, p),
        }
    }

    /// The next handout, or `None` if nothing waits.
    fn get(&mut self) -> Option<(u32, Priority, Instant)> {
        let aged = self.max_wait.and_then(|w| {
            let (_, &k) = self.by_age.first_key_value()?;
            (self.waiting[&k].2.elapsed() >= w).then_some(k)
        });
        let k = aged.or_else(|| self.by_priority.first_key_value().map(|(_, &k)| k))?;
        let (p, seq, at) = self.waiting.remove(&k).unwrap();
        self.by_priority.remove(&(Reverse(p), seq));
        self.by_age.remove(&seq);
        self.processing.insert(k, None);
        Some((k, p, at))
    }

    fn done(&mut self, k: u32) {
        if let Some(Some(p)) = self.processing.remove(&k) {
            self.queue(k, p);
        }
    }
}

#[derive(Debug, Clone)]
enum Op {
    Add(u32, i32),
    Get,
    Done(u32),
    Sleep(u64),
    Shutdown,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0u32..8, -1i32..=1).prop_map(|(k, p)| Op::Add(k, p * 100)),
        5 => Just(Op::Get),
        3 => (0u32..8).prop_map(Op::Done),
        2 => (1u64..6).prop_map(Op::Sleep),
        1 => Just(Op::Shutdown),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Random operation sequences, with and without aging, against the model.
    #[test]
    fn matches_the_model(ops in proptest::collection::vec(op(), 1..80), aging in any::<bool>()) {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .unwrap();
        rt.block_on(async {
            let max_wait = aging.then(|| Duration::from_secs(5));
            let q = queue::<u32>(max_wait);
            let mut m = Model::new(max_wait);
            for op in ops {
                match op {
                    Op::Add(k, p) => {
                        q.add_with_priority(k, Priority(p));
                        m.add(k, Priority(p));
                    }
                    Op::Get => {
                        let real = q.get_with_priority().now_or_never();
                        match m.get() {
                            Some((k, p, _)) => prop_assert_eq!(real, Some(Some((k, p)))),
                            None if m.shutting_down => prop_assert_eq!(real, Some(None)),
                            None => prop_assert_eq!(real, None),
                        }
                    }
                    Op::Done(k) => {
                        q.done(&k);
                        m.done(k);
                    }
                    Op::Sleep(s) => tokio::time::sleep(Duration::from_secs(s)).await,
                    Op::Shutdown => {
                        q.shutdown();
                        m.shutting_down = true;
                    }
                }
                prop_assert_eq!(q.len(), m.waiting.len());
                prop_assert_eq!(q.processing_len(), m.processing.len());
            }
            Ok(())
        })?;
    }
}

// ---- starvation --------------------------------------------------------------------------

#[derive(Default)]
struct Recorded {
    depth: HashMap<Priority, f64>,
    latency: HashMap<Priority, Vec<f64>>,
}

#[derive(Clone, Default)]
struct PriorityMetrics(Arc<Mutex<Recorded>>);

struct Depth(Arc<Mutex<Recorded>>, Priority);
struct Latency(Arc<Mutex<Recorded>>, Priority);
struct Ignored;

impl GaugeMetric for Depth {
    fn inc(&self) {
        *self.0.lock().unwrap().depth.entry(self.1).or_default() += 1.0;
    }
    fn dec(&self) {
        *self.0.lock().unwrap().depth.entry(self.1).or_default() -= 1.0;
    }
}
impl HistogramMetric for Latency {
    fn observe(&self, value: f64) {
        self.0
            .lock()
            .unwrap()
            .latency
            .entry(self.1)
            .or_default()
            .push(value);
    }
}
impl GaugeMetric for Ignored {
    fn inc(&self) {}
    fn dec(&self) {}
}
impl CounterMetric for Ignored {
    fn inc(&self) {}
}
impl HistogramMetric for Ignored {
    fn observe(&self, _: f64) {}
}
impl SettableGaugeMetric for Ignored {
    fn set(&self, _: f64) {}
}

impl MetricsProvider for PriorityMetrics {
    fn new_depth_metric(&self, _: &str) -> Box<dyn GaugeMetric> {
        Box::new(Ignored)
    }
    fn new_adds_metric(&self, _: &str) -> Box<dyn CounterMetric> {
        Box::new(Ignored)
    }
    fn new_latency_metric(&self, _: &str) -> Box<dyn HistogramMetric> {
        Box::new(Ignored)
    }
    fn new_work_duration_metric(&self, _: &str) -> Box<dyn HistogramMetric> {
        Box::new(Ignored)
    }
    fn new_unfinished_work_seconds_metric(&self, _: &str) -> Box<dyn SettableGaugeMetric> {
        Box::new(Ignored)
    }
    fn new_longest_running_processor_seconds_metric(
        &self,
        _: &str,
    ) -> Box<dyn SettableGaugeMetric> {
        Box::new(Ignored)
    }
    fn new_retries_metric(&self, _: &str) -> Box<dyn CounterMetric> {
        Box::new(Ignored)
    }
    fn new_priority_depth_metric(&self, _: &str, p: Priority) -> Box<dyn GaugeMetric> {
        Box::new(Depth(self.0.clone(), p))
    }
    fn new_priority_latency_metric(&self, _: &str, p: Priority) -> Box<dyn HistogramMetric> {
        Box::new(Latency(self.0.clone(), p))
    }
}

const MAX_WAIT: Duration = Duration::from_secs(10);
const INITIAL: u32 = 10_000;
const RESYNC: u32 = 1_000;
const RESYNC_AT: Duration = Duration::from_secs(5);
const WORKERS: usize = 4;
const WORK: Duration = Duration::from_millis(1); // 4 workers: 4,000 items/s
const TICK: Duration = Duration::from_millis(1);
const EVENTS_PER_TICK: u32 = 5; // 5,000 events/s: faster than the workers drain
const RUN_FOR: Duration = Duration::from_secs(30);
const FIRST_EVENT: u32 = 1_000_000;
/// Events already queued when the workers start, so that the backlog of events never runs dry.
const BURST: u32 = 100;

fn is_listed(k: u32) -> bool {
    k < INITIAL + RESYNC
}

struct Run {
    /// (key, priority, queued after start, handed out after start)
    handed: Vec<(u32, Priority, Duration, Duration)>,
    /// Per-priority depth just before `MAX_WAIT`.
    depth_before_aging: HashMap<Priority, f64>,
    metrics: PriorityMetrics,
    /// When the run stopped, after start.
    ended_at: Duration,
}

/// 10,000 listed keys at LOW at t = 0, 1,000 resync keys at LOW at t = 5 s, and watch events
/// at NORMAL arriving faster than four workers drain them; every handout is checked against
/// the model. Ends once every listed key was handed out, or after 30 s of virtual time.
async fn starvation_run(max_wait: Option<Duration>) -> Run {
    let metrics = PriorityMetrics::default();
    let q: PriorityQueue<u32> = PriorityQueue::with_config(
        default_controller_rate_limiter(),
        PriorityQueueConfig::named("starve")
            .with_metrics_provider(Arc::new(metrics.clone()))
            .with_max_wait(max_wait),
    );
    let start = Instant::now();
    let model = Arc::new(Mutex::new(Model::new(max_wait)));
    let handed = Arc::new(Mutex::new(Vec::new()));
    let stop = Arc::new(AtomicBool::new(false));
    let listed_handed = Arc::new(AtomicU32::new(0));
    let mut next_event = FIRST_EVENT;
    {
        let mut m = model.lock().unwrap();
        for k in 0..INITIAL {
            m.add(k, Priority::LOW);
            q.add_with_priority(k, Priority::LOW);
        }
        for _ in 0..BURST {
            m.add(next_event, Priority::NORMAL);
            q.add(next_event);
            next_event += 1;
        }
    }
    let workers: Vec<_> = (0..WORKERS)
        .map(|_| {
            let (q, model, handed) = (q.clone(), model.clone(), handed.clone());
            let (stop, listed_handed) = (stop.clone(), listed_handed.clone());
            tokio::spawn(async move {
                while !stop.load(Ordering::SeqCst) {
                    let Some((k, p)) = q.get_with_priority().await else {
                        return;
                    };
                    {
                        // No await since the get: the model sees the same queue.
                        let mut m = model.lock().unwrap();
                        let (want, want_p, queued) = m.get().expect("model has an item");
                        assert_eq!((k, p), (want, want_p), "handout differs from the model");
                        if is_listed(k) {
                            listed_handed.fetch_add(1, Ordering::SeqCst);
                        }
                        handed
                            .lock()
                            .unwrap()
                            .push((k, p, queued - start, start.elapsed()));
                    }
                    tokio::time::sleep(WORK).await;
                    q.done(&k);
                    model.lock().unwrap().done(k);
                }
            })
        })
        .collect();
    let sampler = {
        let metrics = metrics.clone();
        tokio::spawn(async move {
            tokio::time::sleep_until(start + MAX_WAIT - Duration::from_millis(1)).await;
            metrics.0.lock().unwrap().depth.clone()
        })
    };
    let mut resynced = false;
    loop {
        tokio::time::sleep(TICK).await;
        let now = start.elapsed();
        let listed_left = {
            let mut m = model.lock().unwrap();
            if !resynced && now >= RESYNC_AT {
                resynced = true;
                for k in INITIAL..INITIAL + RESYNC {
                    m.add(k, Priority::LOW);
                    q.add_with_priority(k, Priority::LOW);
                }
            }
            for _ in 0..EVENTS_PER_TICK {
                m.add(next_event, Priority::NORMAL);
                q.add(next_event);
                next_event += 1;
            }
            INITIAL + RESYNC - listed_handed.load(Ordering::SeqCst)
        };
        if (resynced && listed_left == 0) || now >= RUN_FOR {
            break;
        }
    }
    stop.store(true, Ordering::SeqCst);
    q.shutdown();
    for w in workers {
        w.await.unwrap();
    }
    let handed = std::mem::take(&mut *handed.lock().unwrap());
    Run {
        handed,
        depth_before_aging: sampler.await.unwrap(),
        metrics,
        ended_at: start.elapsed(),
    }
}

#[tokio::test(start_paused = true)]
async fn listed_keys_cannot_starve_under_a_stream_of_events() {
    let run = starvation_run(Some(MAX_WAIT)).await;
    let drain_rate = WORKERS as f64 / WORK.as_secs_f64();
    // The bound: max_wait, plus serving the aged items queued before (at most all the listed
    // keys), plus one item of work.
    let bound = MAX_WAIT + Duration::from_secs_f64(f64::from(INITIAL) / drain_rate) + WORK;

    let listed: Vec<_> = run.handed.iter().filter(|h| is_listed(h.0)).collect();
    assert_eq!(
        listed.len() as u32,
        INITIAL + RESYNC,
        "every listed key is handed out (run ended at {:?})",
        run.ended_at
    );
    for &&(k, p, queued, handed) in &listed {
        assert_eq!(p, Priority::LOW);
        let waited = handed - queued;
        assert!(waited <= bound, "key {k} waited {waited:?} > {bound:?}");
        // Events went first while the key was young.
        assert!(
            waited >= MAX_WAIT,
            "key {k} handed out young, after {waited:?}"
        );
    }
    // Before the listed keys aged, the workers served only events, and at full speed.
    let early: Vec<_> = run.handed.iter().filter(|h| h.3 < MAX_WAIT).collect();
    assert!(early.iter().all(|h| h.1 == Priority::NORMAL));
    assert!(early.len() as f64 >= 0.95 * drain_rate * MAX_WAIT.as_secs_f64());
    // Resync keys (younger) came after every initial key.
    let last_initial = listed.iter().filter(|h| h.0 < INITIAL).map(|h| h.3).max();
    let first_resync = listed.iter().filter(|h| h.0 >= INITIAL).map(|h| h.3).min();
    assert!(last_initial <= first_resync);

    // The metrics show it: all listed keys still queued at LOW just before aging, events
    // queued at NORMAL; LOW waited at least max_wait, the first events hardly at all.
    let d = &run.depth_before_aging;
    assert_eq!(d.get(&Priority::LOW), Some(&f64::from(INITIAL + RESYNC)));
    assert!(d.get(&Priority::NORMAL).is_some_and(|&n| n > 0.0));
    let rec = run.metrics.0.lock().unwrap();
    let low = &rec.latency[&Priority::LOW];
    assert_eq!(low.len() as u32, INITIAL + RESYNC);
    assert!(low.iter().all(|&w| w >= MAX_WAIT.as_secs_f64()));
    assert!(low.iter().all(|&w| w <= bound.as_secs_f64()));
    let normal = &rec.latency[&Priority::NORMAL];
    assert_eq!(
        normal.len(),
        run.handed
            .iter()
            .filter(|h| h.1 == Priority::NORMAL)
            .count()
    );
    assert!(normal[0] < 0.01);
}

/// Without aging (upstream behaviour) the same stream starves every listed key: this is what
/// the test above would see if aging did not work.
#[tokio::test(start_paused = true)]
async fn without_aging_listed_keys_starve() {
    let run = starvation_run(None).await;
    assert!(run.ended_at >= RUN_FOR);
    assert!(run.handed.iter().all(|h| h.1 == Priority::NORMAL));
    let rec = run.metrics.0.lock().unwrap();
    assert!(!rec.latency.contains_key(&Priority::LOW));
    assert_eq!(
        rec.depth.get(&Priority::LOW),
        Some(&f64::from(INITIAL + RESYNC)),
        "every listed key is still queued"
    );
}

#[cfg(feature = "prometheus")]
#[tokio::test(start_paused = true)]
async fn prometheus_provider_exports_per_priority_families() {
    use kinform_runtime::workqueue::PrometheusMetricsProvider;

    let registry = prometheus::Registry::new();
    let provider = PrometheusMetricsProvider::new(&registry).unwrap();
    let q = PriorityQueue::with_config(
        default_controller_rate_limiter(),
        PriorityQueueConfig::named("pods").with_metrics_provider(Arc::new(provider)),
    );
    q.add_with_priority("listed", Priority::LOW);
    q.add_with_priority("other", Priority::LOW);
    q.add("event");
    settle(Duration::from_secs(2)).await;
    let event = q.get().await.unwrap();
    assert_eq!(event, "event");
    let text = prometheus::TextEncoder::new()
        .encode_to_string(&registry.gather())
        .unwrap();
    for line in [
        "workqueue_depth{name=\"pods\"} 2",
        "workqueue_priority_depth{name=\"pods\",priority=\"-100\"} 2",
        "workqueue_priority_depth{name=\"pods\",priority=\"0\"} 0",
        "workqueue_priority_queue_duration_seconds_count{name=\"pods\",priority=\"0\"} 1",
        "workqueue_priority_queue_duration_seconds_sum{name=\"pods\",priority=\"0\"} 2",
    ] {
        assert!(text.contains(line), "{line} missing in\n{text}");
    }
}
