//! DeltaFIFO benchmarks: add + pop per second (one key per pop, and batched pops), updates
//! coalescing on queued keys, and an initial Replace of 10k objects drained into a store as
//! an informer does.
//!
//! Run: `cargo bench -p kinform-runtime --bench fifo`

// `criterion_group!` generates an undocumented public function.
#![allow(missing_docs)]

use std::collections::BTreeMap;
use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use k8s_openapi::api::core::v1::Pod;
use kinform_runtime::fifo::{Delta, DeltaFifo, Deltas, KnownObjects};
use kinform_runtime::reflector::ReflectorSink;
use kinform_runtime::store::Store;

const N: usize = 10_000;

fn pods(rv: usize) -> Vec<Arc<Pod>> {
    (0..N)
        .map(|i| {
            let mut p = Pod::default();
            p.metadata.namespace = Some(format!("namespace-{}", i % 100));
            p.metadata.name = Some(format!("deployment-{}-7d4b9c8f5-{i:05}", i / 100));
            p.metadata.resource_version = Some(rv.to_string());
            p.metadata.labels = Some(BTreeMap::from([(
                "app".to_string(),
                format!("app-{}", i / 100),
            )]));
            Arc::new(p)
        })
        .collect()
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("tokio runtime")
}

/// The informer's process step: apply the newest state to the store.
fn apply(store: &Store<Pod>, deltas: &Deltas<Pod>) -> Result<(), ()> {
    match deltas.newest() {
        Delta::Deleted(d) => {
            store.delete_key(d.key());
        }
        other => store.update(Arc::clone(other.object().ok_or(())?)),
    }
    Ok(())
}

fn add_pop(c: &mut Criterion) {
    let rt = runtime();
    let objs = pods(1);
    let objs2 = pods(2);
    let mut g = c.benchmark_group("fifo");
    g.throughput(Throughput::Elements(N as u64));

    g.bench_function("add_then_pop_one_by_one", |b| {
        let fifo: DeltaFifo<Pod> = DeltaFifo::new(None);
        b.iter(|| {
            for o in &objs {
                fifo.add(Arc::clone(o)).unwrap();
            }
            rt.block_on(async {
                for _ in 0..N {
                    fifo.pop(|d| Ok::<_, ()>(black_box(d.newest().delta_type())))
                        .await
                        .unwrap()
                        .unwrap();
                }
            });
        })
    });

    g.bench_function("add_pop_interleaved", |b| {
        let fifo: DeltaFifo<Pod> = DeltaFifo::new(None);
        b.iter(|| {
            rt.block_on(async {
                for o in &objs {
                    fifo.add(Arc::clone(o)).unwrap();
                    fifo.pop(|d| Ok::<_, ()>(black_box(d.newest().delta_type())))
                        .await
                        .unwrap()
                        .unwrap();
                }
            });
        })
    });

    g.bench_function("add_then_pop_batch_64", |b| {
        let fifo: DeltaFifo<Pod> = DeltaFifo::new(None);
        b.iter(|| {
            for o in &objs {
                fifo.add(Arc::clone(o)).unwrap();
            }
            rt.block_on(async {
                let mut left = N;
                while left > 0 {
                    let batch = fifo
                        .pop_batch(64, |d| {
                            black_box(d.newest().delta_type());
                            Ok::<_, ()>(())
                        })
                        .await
                        .unwrap();
                    left -= batch.popped;
                }
            });
        })
    });

    // Two events per key before the pop: the second joins the queued key's deltas.
    g.bench_function("add_update_then_pop_coalesced", |b| {
        let fifo: DeltaFifo<Pod> = DeltaFifo::new(None);
        b.iter(|| {
            for (o, u) in objs.iter().zip(&objs2) {
                fifo.add(Arc::clone(o)).unwrap();
                fifo.update(Arc::clone(u)).unwrap();
            }
            rt.block_on(async {
                for _ in 0..N {
                    fifo.pop(|d| Ok::<_, ()>(black_box(d.as_slice().len())))
                        .await
                        .unwrap()
                        .unwrap();
                }
            });
        })
    });

    // An informer's initial sync: Replace 10k objects, pop them all into the indexer.
    g.bench_function("replace_then_drain_into_store", |b| {
        b.iter_batched(
            || {
                let store: Store<Pod> = Store::new();
                let known: Arc<dyn KnownObjects<Pod>> = Arc::new(store.clone());
                (DeltaFifo::new(Some(known)), store, objs.clone())
            },
            |(fifo, store, list)| {
                fifo.replace(list, "1".into()).unwrap();
                rt.block_on(async {
                    while !fifo.has_synced() {
                        fifo.pop_batch(64, |d| apply(&store, d)).await.unwrap();
                    }
                });
                (fifo, store)
            },
            BatchSize::LargeInput,
        )
    });
    g.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2))
}

criterion_group! {
    name = benches;
    config = config();
    targets = add_pop
}
criterion_main!(benches);
