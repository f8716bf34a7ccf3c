//! In-place decoding of a watch event's pod into a replaced pod (run with
//! `cargo bench -p kinform-client --bench in_place`), the informer's path for every
//! MODIFIED event once a watch is past its initial events (`decode/in_place`):
//!
//! - `in_place/cold`: each of 20,000 realistic pods' JSON (about 6 KB each, with
//!   managedFields) into another pod of a cache of 20,000 (700 MB, far beyond the CPU's
//!   caches), in a scattered order, as a burst of changes to a large cache does;
//! - `in_place/hot`: the same documents into one of 8 pods, which stay in the caches;
//! - `in_place/tape`: simd-json's tape of each of the same documents in turn, the step
//!   both of the above begin with: what `hot` takes beyond it is the walk into the target;
//! - `in_place/new`: each document decoded into a new pod, as a list's items are (the walk
//!   from a default pod), and dropped; `in_place/new_serde`: the same with the pod built by
//!   simd-json's serde driver instead, as before the walk built new objects.
//!
//! Each is timed per document.

// `criterion_group!` generates an undocumented public function.
#![allow(missing_docs)]

use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use k8s_openapi::api::core::v1::Pod;
use kinform_client::decode::bench::DocDecoder;
use kinform_client::{Client, Config};
use kinform_testserver::TestApiServer;

const PODS: usize = 20_000;

/// The test server's realistic pods, each as its own JSON document.
fn pod_documents() -> Vec<Vec<u8>> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    rt.block_on(async {
        let server = TestApiServer::builder()
            .pods(PODS)
            .namespaces(10)
            .start()
            .await
            .expect("the test server starts");
        let client = Client::new(Config::new(server.url().parse().expect("url"))).expect("client");
        let req = http::Request::get("/api/v1/pods")
            .body(Vec::new())
            .expect("request");
        let list: serde_json::Value = client.request(req).await.expect("the pod list");
        let items = list["items"].as_array().expect("items");
        items
            .iter()
            .map(|pod| {
                let mut pod = pod.clone();
                pod["apiVersion"] = "v1".into();
                pod["kind"] = "Pod".into();
                serde_json::to_vec(&pod).expect("JSON")
            })
            .collect()
    })
}

/// Times `iters` calls of `step`, the `i`th given `i`.
fn timed(iters: u64, mut step: impl FnMut(usize)) -> Duration {
    let start = Instant::now();
    for i in 0..iters as usize {
        step(i);
    }
    start.elapsed()
}

/// Times `iters` documents decoded into `targets[target(i)]`, document `i` of `docs`
/// being another pod than the target's.
fn into_targets(
    decoder: &mut DocDecoder,
    docs: &[Vec<u8>],
    targets: &mut [Pod],
    target: impl Fn(usize) -> usize,
    iters: u64,
) -> Duration {
    timed(iters, |i| {
        let doc = &docs[(i + docs.len() / 2) % docs.len()];
        assert!(decoder.decode_into(&mut targets[target(i)], doc));
    })
}

fn in_place(c: &mut Criterion) {
    let docs = pod_documents();
    let mut decoder = DocDecoder::default();
    let mut cache: Vec<Pod> = docs
        .iter()
        .map(|doc| decoder.decode(doc).expect("a pod"))
        .collect();
    let n = cache.len();
    let mut group = c.benchmark_group("in_place");
    group.throughput(Throughput::Elements(1));
    // 7919 is prime, so the targets run over the whole cache, far apart.
    group.bench_function("cold", |b| {
        b.iter_custom(|iters| {
            into_targets(&mut decoder, &docs, &mut cache, |i| (i * 7919) % n, iters)
        });
    });
    group.bench_function("hot", |b| {
        b.iter_custom(|iters| into_targets(&mut decoder, &docs, &mut cache, |i| i % 8, iters));
    });
    group.bench_function("tape", |b| {
        b.iter_custom(|iters| timed(iters, |i| assert!(decoder.tape(&docs[i % docs.len()]))));
    });
    group.bench_function("new", |b| {
        b.iter_custom(|iters| {
            timed(iters, |i| {
                let pod: Pod = decoder.decode(&docs[i % docs.len()]).expect("a pod");
                drop(std::hint::black_box(pod));
            })
        });
    });
    group.bench_function("new_serde", |b| {
        b.iter_custom(|iters| {
            timed(iters, |i| {
                let pod: Pod = decoder
                    .decode_by_serde(&docs[i % docs.len()])
                    .expect("a pod");
                drop(std::hint::black_box(pod));
            })
        });
    });
    group.finish();
}

criterion_group!(benches, in_place);
criterion_main!(benches);
