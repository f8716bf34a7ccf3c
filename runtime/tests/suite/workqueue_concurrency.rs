//! Many producers and workers on one `Queue`: no item is processed by two workers at once,
//! none is lost, and every add made after a worker got an item is seen again by a later get.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use kinform_runtime::workqueue::Queue;

const KEYS: usize = 64;
const PRODUCERS: u64 = 8;
const ADDS_PER_PRODUCER: u64 = 5_000;
const WORKERS: usize = 8;

struct Ledger {
    /// Logical clock: every add and every get takes a tick.
    clock: AtomicU64,
    /// Tick of the latest add of each key (taken just before `add`).
    last_add: Vec<AtomicU64>,
    /// Tick of the latest get of each key (taken just after `get` returned it).
    last_get: Vec<AtomicU64>,
    /// Workers currently holding each key.
    in_flight: Vec<AtomicUsize>,
    processed: AtomicU64,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn producers_and_workers_never_overlap_and_lose_nothing() {
    let q: Queue<usize> = Queue::new();
    let ledger = Arc::new(Ledger {
        clock: AtomicU64::new(1),
        last_add: (0..KEYS).map(|_| AtomicU64::new(0)).collect(),
        last_get: (0..KEYS).map(|_| AtomicU64::new(0)).collect(),
        in_flight: (0..KEYS).map(|_| AtomicUsize::new(0)).collect(),
        processed: AtomicU64::new(0),
    });

    let workers: Vec<_> = (0..WORKERS)
        .map(|_| {
            let q = q.clone();
            let ledger = Arc::clone(&ledger);
            tokio::spawn(async move {
                while let Some(k) = q.get().await {
                    let tick = ledger.clock.fetch_add(1, Ordering::SeqCst);
                    ledger.last_get[k].fetch_max(tick, Ordering::SeqCst);
                    let before = ledger.in_flight[k].fetch_add(1, Ordering::SeqCst);
                    assert_eq!(before, 0, "key {k} handed to two workers at once");
                    // Hold the key across a scheduling point so that overlaps can happen.
                    tokio::task::yield_now().await;
                    ledger.in_flight[k].fetch_sub(1, Ordering::SeqCst);
                    ledger.processed.fetch_add(1, Ordering::SeqCst);
                    q.done(&k);
                }
            })
        })
        .collect();

    let producers: Vec<_> = (0..PRODUCERS)
        .map(|p| {
            let q = q.clone();
            let ledger = Arc::clone(&ledger);
            tokio::spawn(async move {
                let mut x = p.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
                for i in 0..ADDS_PER_PRODUCER {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    let k = (x % KEYS as u64) as usize;
                    let tick = ledger.clock.fetch_add(1, Ordering::SeqCst);
                    ledger.last_add[k].fetch_max(tick, Ordering::SeqCst);
                    q.add(k);
                    if i % 16 == 0 {
                        tokio::task::yield_now().await;
                    }
                }
            })
        })
        .collect();

    for p in producers {
        p.await.expect("producer panicked");
    }
    q.shutdown_with_drain().await;
    for w in workers {
        w.await.expect("worker panicked");
    }

    assert_eq!(q.len(), 0);
    assert_eq!(q.processing_len(), 0);
    let processed = ledger.processed.load(Ordering::SeqCst);
    assert!(processed <= PRODUCERS * ADDS_PER_PRODUCER);
    for k in 0..KEYS {
        let added = ledger.last_add[k].load(Ordering::SeqCst);
        let got = ledger.last_get[k].load(Ordering::SeqCst);
        if added > 0 {
            assert!(
                got > added,
                "key {k}: last add at tick {added} was never followed by a get (last get {got})"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn distinct_items_are_each_processed_exactly_once() {
    const ITEMS: u64 = 20_000;
    let q: Queue<u64> = Queue::new();
    let seen: Arc<Vec<AtomicUsize>> = Arc::new((0..ITEMS).map(|_| AtomicUsize::new(0)).collect());
    let workers: Vec<_> = (0..4)
        .map(|_| {
            let q = q.clone();
            let seen = Arc::clone(&seen);
            tokio::spawn(async move {
                while let Some(k) = q.get().await {
                    seen[k as usize].fetch_add(1, Ordering::SeqCst);
                    q.done(&k);
                }
            })
        })
        .collect();
    let producers: Vec<_> = (0..4u64)
        .map(|p| {
            let q = q.clone();
            tokio::spawn(async move {
                for i in (p..ITEMS).step_by(4) {
                    q.add(i);
                    if i % 32 == 0 {
                        tokio::task::yield_now().await;
                    }
                }
            })
        })
        .collect();
    for p in producers {
        p.await.unwrap();
    }
    q.shutdown();
    for w in workers {
        w.await.unwrap();
    }
    for (k, n) in seen.iter().enumerate() {
        assert_eq!(n.load(Ordering::SeqCst), 1, "item {k}");
    }
}
