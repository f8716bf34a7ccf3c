//! Workqueue throughput: add+get+done on one thread and with 2 producers + 2 workers, delaying
//! `add_after`, rate-limited adds. Figures are recorded in BENCHMARKS.md (## Workqueue).

#![allow(missing_docs)]

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use kinform_runtime::workqueue::{
    DelayingQueue, Queue, RateLimitingQueue, default_controller_rate_limiter,
};

fn current_thread() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

fn single_thread(c: &mut Criterion) {
    let rt = current_thread();
    let mut g = c.benchmark_group("workqueue/1_thread");
    g.throughput(Throughput::Elements(1));
    g.bench_function("add_get_done_u64", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let q = Queue::new();
                let start = Instant::now();
                for i in 0..iters {
                    q.add(i);
                    let k = q.get().await.expect("item");
                    q.done(black_box(&k));
                }
                start.elapsed()
            })
        })
    });
    g.bench_function("add_get_done_arc_str", |b| {
        let keys: Vec<Arc<str>> = (0..1024)
            .map(|i| Arc::from(format!("namespace-{}/pod-{i}", i % 100)))
            .collect();
        b.iter_custom(|iters| {
            rt.block_on(async {
                let q = Queue::new();
                let start = Instant::now();
                for i in 0..iters {
                    q.add(Arc::clone(&keys[(i % 1024) as usize]));
                    let k = q.get().await.expect("item");
                    q.done(black_box(&k));
                }
                start.elapsed()
            })
        })
    });
    // 1,000 keys queued, then all handed out and done: the table holds many items.
    const BACKLOG: u64 = 1_000;
    g.throughput(Throughput::Elements(BACKLOG));
    g.bench_function("add_get_done_backlog_1000", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let q = Queue::new();
                let start = Instant::now();
                for _ in 0..iters {
                    for k in 0..BACKLOG {
                        q.add(k);
                    }
                    for _ in 0..BACKLOG {
                        let k = q.get().await.expect("item");
                        q.done(&k);
                    }
                }
                start.elapsed()
            })
        })
    });
    g.finish();
}

/// Baseline for the ratio in BENCHMARKS.md: client-go's structure written the obvious way
/// (a `VecDeque` plus `dirty` and `processing` `HashSet`s with std's hasher, one clone per
/// structure, under a std `Mutex`), synchronous, so it pays nothing for waking.
mod naive {
    use std::collections::{HashSet, VecDeque};
    use std::hash::Hash;
    use std::sync::Mutex;

    pub struct Queue<T> {
        inner: Mutex<(VecDeque<T>, HashSet<T>, HashSet<T>)>,
    }

    impl<T: Hash + Eq + Clone> Queue<T> {
        pub fn new() -> Self {
            Self {
                inner: Mutex::new((VecDeque::new(), HashSet::new(), HashSet::new())),
            }
        }
        pub fn add(&self, item: T) {
            let mut g = self.inner.lock().expect("lock");
            let (queue, dirty, processing) = &mut *g;
            if dirty.contains(&item) {
                return;
            }
            dirty.insert(item.clone());
            if processing.contains(&item) {
                return;
            }
            queue.push_back(item);
        }
        pub fn get(&self) -> Option<T> {
            let mut g = self.inner.lock().expect("lock");
            let (queue, dirty, processing) = &mut *g;
            let item = queue.pop_front()?;
            processing.insert(item.clone());
            dirty.remove(&item);
            Some(item)
        }
        pub fn done(&self, item: &T) {
            let mut g = self.inner.lock().expect("lock");
            let (queue, dirty, processing) = &mut *g;
            processing.remove(item);
            if dirty.contains(item) {
                queue.push_back(item.clone());
            }
        }
    }
}

fn baseline(c: &mut Criterion) {
    let mut g = c.benchmark_group("workqueue/1_thread");
    g.throughput(Throughput::Elements(1));
    g.bench_function("naive_baseline_add_get_done_u64", |b| {
        let q = naive::Queue::new();
        let mut i = 0u64;
        b.iter(|| {
            i += 1;
            q.add(i);
            let k = q.get().expect("item");
            q.done(black_box(&k));
        })
    });
    g.bench_function("naive_baseline_add_get_done_arc_str", |b| {
        let keys: Vec<Arc<str>> = (0..1024)
            .map(|i| Arc::from(format!("namespace-{}/pod-{i}", i % 100)))
            .collect();
        let q = naive::Queue::new();
        let mut i = 0usize;
        b.iter(|| {
            i += 1;
            q.add(Arc::clone(&keys[i % 1024]));
            let k = q.get().expect("item");
            q.done(black_box(&k));
        })
    });
    g.finish();
}

fn producers_workers(c: &mut Criterion) {
    const ITEMS: u64 = 20_000;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let mut g = c.benchmark_group("workqueue/2_producers_2_workers");
    g.throughput(Throughput::Elements(ITEMS));
    g.sample_size(20);
    g.bench_function("add_get_done", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let start = Instant::now();
                for _ in 0..iters {
                    let q = Queue::new();
                    let producers: Vec<_> = (0..2u64)
                        .map(|p| {
                            let q = q.clone();
                            tokio::spawn(async move {
                                for i in 0..ITEMS / 2 {
                                    q.add(i * 2 + p);
                                    if i % 64 == 0 {
                                        tokio::task::yield_now().await;
                                    }
                                }
                            })
                        })
                        .collect();
                    let workers: Vec<_> = (0..2)
                        .map(|_| {
                            let q = q.clone();
                            tokio::spawn(async move {
                                let mut n = 0u64;
                                while let Some(k) = q.get().await {
                                    q.done(&k);
                                    n += 1;
                                }
                                n
                            })
                        })
                        .collect();
                    for p in producers {
                        p.await.expect("producer");
                    }
                    q.shutdown();
                    let mut total = 0;
                    for w in workers {
                        total += w.await.expect("worker");
                    }
                    assert_eq!(total, ITEMS);
                }
                start.elapsed()
            })
        })
    });
    g.finish();
}

fn delayed(c: &mut Criterion) {
    let rt = current_thread();
    let mut g = c.benchmark_group("workqueue/delaying");
    g.throughput(Throughput::Elements(1));
    g.bench_function("add_after_distinct", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let q = DelayingQueue::new();
                let start = Instant::now();
                for i in 0..iters {
                    // Spread over an hour, in no particular order.
                    let d = Duration::from_millis(1_000 + (i * 7_919) % 3_600_000);
                    q.add_after(i, d);
                }
                let elapsed = start.elapsed();
                q.shutdown();
                elapsed
            })
        })
    });
    g.bench_function("add_after_1000_keys_repeated", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let q = DelayingQueue::new();
                let start = Instant::now();
                for i in 0..iters {
                    let d = Duration::from_millis(1_000 + (i * 7_919) % 3_600_000);
                    q.add_after(i % 1_000, d);
                }
                let elapsed = start.elapsed();
                q.shutdown();
                elapsed
            })
        })
    });
    g.finish();
}

fn rate_limited(c: &mut Criterion) {
    let rt = current_thread();
    let mut g = c.benchmark_group("workqueue/rate_limiting");
    g.throughput(Throughput::Elements(1));
    g.bench_function("add_rate_limited_default_1000_keys", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let q = RateLimitingQueue::new(default_controller_rate_limiter());
                let start = Instant::now();
                for i in 0..iters {
                    q.add_rate_limited(i % 1_000);
                }
                let elapsed = start.elapsed();
                q.shutdown();
                elapsed
            })
        })
    });
    g.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
}

criterion_group! {
    name = benches;
    // `criterion_group!` emits an undocumented `pub fn benches`.
    config = config();
    targets = single_thread, baseline, producers_workers, delayed, rate_limited
}
criterion_main!(benches);
