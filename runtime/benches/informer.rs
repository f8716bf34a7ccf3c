//! Informer benchmarks against TestApiServer on loopback (run with
//! `cargo bench -p kinform-runtime --bench informer`):
//!
//! - `sync/*`: time from start to `has_synced` for 10k realistic pods (about 5 KB of JSON
//!   each, with managedFields), by paged list and by streaming list;
//! - `decode_floor/*`: plain `serde_json` decoding of the same list bytes into the same
//!   types on one thread, the floor the sync is compared with;
//! - `watch/*`: events per second through reflector -> fifo -> store -> one handler, and the
//!   floor of decoding the same events' JSON.

// `criterion_group!` generates an undocumented public function.
#![allow(missing_docs)]

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use kinform_client::{Client, Config};
use kinform_runtime::informer::{EventHandlerFns, InformerFactory};
use kinform_runtime::reflector::ListMode;
use kinform_testserver::TestApiServer;
use serde::Deserialize;
use tokio::runtime::Runtime;

const PODS: usize = 10_000;
const EVENTS: usize = 2_000;

#[derive(Deserialize)]
struct PodList {
    items: Vec<Pod>,
}

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

fn client(server: &TestApiServer) -> Client {
    Client::new(Config::new(server.url().parse().unwrap())).unwrap()
}

async fn sync_once(server: &TestApiServer, mode: ListMode, keep_managed_fields: bool) -> usize {
    let mut builder = InformerFactory::builder(client(server)).list_mode(mode);
    if keep_managed_fields {
        builder = builder.keep_managed_fields();
    }
    let factory = builder.build();
    let informer = factory.informer::<Pod>();
    factory.start();
    informer.wait_for_sync().await;
    let n = informer.store().len();
    factory.shutdown().await;
    n
}

fn bench_sync(c: &mut Criterion) {
    let rt = runtime();
    let server = rt.block_on(async {
        TestApiServer::builder()
            .pods(PODS)
            .namespaces(10)
            .start()
            .await
            .unwrap()
    });
    let bytes = rt.block_on(async {
        let req = http::Request::get("/api/v1/pods").body(Vec::new()).unwrap();
        client(&server)
            .request_text(req)
            .await
            .unwrap()
            .into_bytes()
    });
    eprintln!(
        "informer bench: {PODS} pods, {} bytes of list JSON ({} B/pod)",
        bytes.len(),
        bytes.len() / PODS
    );

    let mut g = c.benchmark_group("sync");
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(15));
    g.throughput(Throughput::Elements(PODS as u64));
    g.bench_function("paged_list_10k_pods", |b| {
        b.iter(|| {
            assert_eq!(
                rt.block_on(sync_once(&server, ListMode::Paged, false)),
                PODS
            )
        });
    });
    g.bench_function("streaming_list_10k_pods", |b| {
        b.iter(|| {
            assert_eq!(
                rt.block_on(sync_once(&server, ListMode::Streaming, false)),
                PODS
            )
        });
    });
    g.finish();

    let mut g = c.benchmark_group("decode_floor");
    g.sample_size(10);
    g.throughput(Throughput::Elements(PODS as u64));
    g.bench_function("serde_json_10k_pods", |b| {
        b.iter(|| {
            let list: PodList = serde_json::from_slice(&bytes).unwrap();
            assert_eq!(list.items.len(), PODS);
        });
    });
    g.finish();
    rt.block_on(server.shutdown());
}

fn configmap(i: usize, round: u64) -> serde_json::Value {
    serde_json::json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": format!("cm-{round}-{i}"), "namespace": "default",
                     "labels": {"app": "bench", "round": round.to_string()}},
        "data": {"key": "x".repeat(512)}
    })
}

fn bench_watch(c: &mut Criterion) {
    let rt = runtime();
    let server = rt.block_on(TestApiServer::start()).unwrap();
    let factory = InformerFactory::new(client(&server));
    let informer = factory.informer::<ConfigMap>();
    let seen = Arc::new(AtomicU64::new(0));
    let s2 = seen.clone();
    informer.add_event_handler(EventHandlerFns::new().on_add(move |_: &Arc<ConfigMap>, _| {
        s2.fetch_add(1, Ordering::Relaxed);
    }));
    rt.block_on(async {
        factory.start();
        informer.wait_for_sync().await;
    });
    let mut round = 0u64;
    let mut g = c.benchmark_group("watch");
    g.sample_size(10);
    g.throughput(Throughput::Elements(EVENTS as u64));
    g.bench_function("events_through_informer", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                round += 1;
                let objects: Vec<_> = (0..EVENTS).map(|i| configmap(i, round)).collect();
                let target = seen.load(Ordering::Relaxed) + EVENTS as u64;
                let start = Instant::now();
                for o in objects {
                    server.create_object(o).unwrap();
                }
                rt.block_on(async {
                    while seen.load(Ordering::Relaxed) < target {
                        tokio::task::yield_now().await;
                        tokio::time::sleep(Duration::from_micros(200)).await;
                    }
                });
                total += start.elapsed();
            }
            total
        });
    });
    // The floor: decoding the same events' JSON lines.
    let lines: Vec<Vec<u8>> = (0..EVENTS)
        .map(|i| {
            let mut o = configmap(i, 0);
            o["metadata"]["resourceVersion"] = "1".into();
            serde_json::to_vec(&serde_json::json!({"type": "ADDED", "object": o})).unwrap()
        })
        .collect();
    #[derive(Deserialize)]
    struct Event {
        #[allow(dead_code)]
        r#type: String,
        object: ConfigMap,
    }
    g.bench_function("decode_floor_events", |b| {
        b.iter(|| {
            for l in &lines {
                let e: Event = serde_json::from_slice(l).unwrap();
                std::hint::black_box(e.object);
            }
        });
    });
    g.finish();
    rt.block_on(async {
        factory.shutdown().await;
        server.shutdown().await;
    });
}

criterion_group!(benches, bench_sync, bench_watch);
criterion_main!(benches);
