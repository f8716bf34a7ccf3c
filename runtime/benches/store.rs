//! Store benchmarks: insert/update/delete throughput with the namespace and label indexes,
//! `by_index` and label-selector lists on 100k objects in 100 namespaces (against a 10k store
//! with the same result sizes, and against a scan), and the store's memory overhead per
//! object.
//!
//! Run: `cargo bench -p kinform-runtime --bench store`

// `criterion_group!` generates an undocumented public function.
#![allow(missing_docs)]

use std::collections::{BTreeMap, HashMap, HashSet};
use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use criterion::{BatchSize, BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use k8s_openapi::api::core::v1::Pod;
use kinform_core::HasMetadata;
use kinform_core::selector::LabelSelector;
use kinform_runtime::store::{NAMESPACE_INDEX, Store};

/// A pod as informers cache them: namespace, name, uid, resource version and three labels,
/// `app` shared by 100 pods in a namespace, `pod-template-hash` by 10, `instance` unique.
fn pod(ns: usize, i: usize, rv: usize) -> Arc<Pod> {
    let mut p = Pod::default();
    p.metadata.namespace = Some(format!("namespace-{ns}"));
    p.metadata.name = Some(format!("deployment-{}-7d4b9c8f5-{i:05}", i / 100));
    p.metadata.uid = Some(format!("0b8e6f3a-1c2d-4e5f-8a9b-{ns:04}{i:08}"));
    p.metadata.resource_version = Some(rv.to_string());
    p.metadata.labels = Some(BTreeMap::from([
        ("app".to_string(), format!("app-{}", i / 100)),
        ("pod-template-hash".to_string(), format!("hash-{}", i / 10)),
        ("instance".to_string(), format!("i-{ns}-{i}")),
    ]));
    Arc::new(p)
}

/// `per_ns` pods in each of `namespaces` namespaces.
fn pods(namespaces: usize, per_ns: usize) -> Vec<Arc<Pod>> {
    (0..namespaces)
        .flat_map(|ns| (0..per_ns).map(move |i| pod(ns, i, 1)))
        .collect()
}

fn filled(objs: &[Arc<Pod>]) -> Store<Pod> {
    let store = Store::new();
    store.replace(objs.to_vec(), "1".into());
    store
}

fn writes(c: &mut Criterion) {
    const N: usize = 10_000;
    let objs = pods(10, N / 10);
    let updated: Vec<_> = (0..10)
        .flat_map(|ns| (0..N / 10).map(move |i| pod(ns, i, 2)))
        .collect();
    let keys: Vec<String> = objs.iter().map(|o| o.key()).collect();

    let mut g = c.benchmark_group("store_write");
    g.throughput(Throughput::Elements(N as u64));
    g.bench_function("insert", |b| {
        b.iter_batched(
            Store::<Pod>::new,
            |store| {
                for o in &objs {
                    store.add(Arc::clone(o));
                }
                store
            },
            BatchSize::LargeInput,
        )
    });
    g.bench_function("update_same_labels", |b| {
        let store = filled(&objs);
        let mut flip = false;
        b.iter(|| {
            flip = !flip;
            for o in if flip { &updated } else { &objs } {
                store.update(Arc::clone(o));
            }
        })
    });
    g.bench_function("update_label_change", |b| {
        let relabelled: Vec<_> = objs
            .iter()
            .map(|o| {
                let mut p = (**o).clone();
                let labels = p.metadata.labels.as_mut().unwrap();
                labels.insert("app".into(), "moved".into());
                Arc::new(p)
            })
            .collect();
        let store = filled(&objs);
        let mut flip = false;
        b.iter(|| {
            flip = !flip;
            for o in if flip { &relabelled } else { &objs } {
                store.update(Arc::clone(o));
            }
        })
    });
    g.bench_function("delete", |b| {
        b.iter_batched(
            || filled(&objs),
            |store| {
                for k in &keys {
                    black_box(store.delete(k));
                }
                store
            },
            BatchSize::LargeInput,
        )
    });
    g.bench_function("replace_10k_into_10k", |b| {
        let store = filled(&objs);
        let mut flip = false;
        b.iter(|| {
            flip = !flip;
            let list = if flip { updated.clone() } else { objs.clone() };
            store.replace(list, "2".into());
        })
    });
    g.finish();
}

fn lookups(c: &mut Criterion) {
    let big_objs = pods(100, 1000); // 100k objects
    let small_objs = pods(10, 1000); // 10k objects, same per-namespace sizes
    let big = filled(&big_objs);
    let small = filled(&small_objs);

    let mut g = c.benchmark_group("store_by_index");
    for (label, store) in [("100k", &big), ("10k", &small)] {
        g.throughput(Throughput::Elements(1000));
        g.bench_function(BenchmarkId::new("namespace_1000_of", label), |b| {
            b.iter(|| black_box(store.by_index(NAMESPACE_INDEX, "namespace-7").unwrap()))
        });
    }
    g.finish();

    // Label-selector lists: result sizes 1, 10, 100, 1000 in the 100k store.
    let mut g = c.benchmark_group("store_list_by_labels_100k");
    let cases = [
        (1, Some("namespace-7"), "instance=i-7-420"),
        (10, Some("namespace-7"), "pod-template-hash=hash-42"),
        (100, Some("namespace-7"), "app=app-4"),
        (1000, None, "pod-template-hash=hash-42"),
        (10_000, None, "app=app-4"),
    ];
    for (size, ns, sel) in cases {
        let selector = LabelSelector::parse(sel).unwrap();
        assert_eq!(big.list_by_labels(ns, &selector).len(), size);
        g.throughput(Throughput::Elements(size as u64));
        g.bench_function(BenchmarkId::new("indexed_result", size), |b| {
            b.iter(|| black_box(big.list_by_labels(ns, &selector)))
        });
    }
    // The same 100-object query in the 10k store: time must not depend on the store size.
    g.throughput(Throughput::Elements(100));
    let selector = LabelSelector::parse("app=app-4").unwrap();
    g.bench_function("indexed_result_100_in_10k_store", |b| {
        b.iter(|| black_box(small.list_by_labels(Some("namespace-7"), &selector)))
    });
    // What client-go and kube-rs do: scan every object.
    g.bench_function("scan_result_100", |b| {
        b.iter(|| {
            let out: Vec<_> = big
                .list()
                .into_iter()
                .filter(|p| {
                    p.namespace() == Some("namespace-7")
                        && selector.matches(p.metadata.labels.as_ref())
                })
                .collect();
            black_box(out)
        })
    });
    g.finish();
}

/// Resident memory of the process, in bytes (Linux), for the memory-overhead report.
fn rss() -> Option<usize> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kb: usize = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Prints the store's memory per cached object (objects excluded: they are built before
/// measuring), next to a client-go-shaped baseline: a `String`-keyed map plus namespace and
/// label indexes of key sets.
fn memory_overhead(_: &mut Criterion) {
    const N: usize = 100_000;
    let objs = pods(100, N / 100);
    let before = rss();
    let store = filled(&objs);
    let after = rss();
    drop(store);

    let base_before = rss();
    let mut items: HashMap<String, Arc<Pod>> = HashMap::new();
    let mut index: HashMap<String, HashSet<String>> = HashMap::new();
    for o in &objs {
        let key = o.key();
        index
            .entry(o.namespace().unwrap().to_owned())
            .or_default()
            .insert(key.clone());
        for (k, v) in o.metadata.labels.iter().flatten() {
            index
                .entry(format!("{k}={v}"))
                .or_default()
                .insert(key.clone());
        }
        items.insert(key, Arc::clone(o));
    }
    let base_after = rss();
    black_box((&items, &index));
    if let (Some(b), Some(a), Some(bb), Some(ba)) = (before, after, base_before, base_after) {
        let ours = a.saturating_sub(b) as f64 / N as f64;
        let theirs = ba.saturating_sub(bb) as f64 / N as f64;
        println!(
            "store memory overhead per object (100k pods, namespace + 3 label index entries): \
             kinform {ours:.0} B, string-keyed map + string-set indexes {theirs:.0} B"
        );
    }
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
    targets = memory_overhead, writes, lookups
}
criterion_main!(benches);
