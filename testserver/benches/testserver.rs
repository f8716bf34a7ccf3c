//! TestApiServer throughput over loopback: paged LIST of preloaded realistic pods (bytes
//! written straight from storage) and WATCH fan-out of freshly written objects.
//!
//! Run: `cargo bench -p kinform-testserver --bench testserver`

// `criterion_group!` generates an undocumented function.
#![allow(missing_docs)]

use std::time::Duration;

use bytes::Bytes;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use kinform_testserver::TestApiServer;
use serde_json::json;

const PODS: usize = 10_000;

static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let server = rt
        .block_on(TestApiServer::builder().pods(PODS).namespaces(10).start())
        .unwrap();
    let client = Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
    let url = server.url();

    let mut g = c.benchmark_group("testserver");
    g.sample_size(10).measurement_time(Duration::from_secs(10));
    g.throughput(Throughput::Elements(PODS as u64));
    g.bench_function("list_10k_pods_pages_of_500", |b| {
        b.iter(|| {
            rt.block_on(async {
                let mut token = String::new();
                let mut bytes = 0usize;
                loop {
                    let uri = format!("{url}/api/v1/pods?limit=500&continue={token}");
                    let resp = client.get(uri.parse().unwrap()).await.unwrap();
                    let body = resp.into_body().collect().await.unwrap().to_bytes();
                    bytes += body.len();
                    // Only the list metadata is read: the bench measures the server.
                    let tail = &body[..body.len().min(400)];
                    let text = String::from_utf8_lossy(tail);
                    match text.split("\"continue\":\"").nth(1) {
                        Some(rest) => token = rest.split('"').next().unwrap().to_owned(),
                        None => break,
                    }
                }
                assert!(bytes > PODS * 4000);
            })
        })
    });

    const EVENTS: usize = 1_000;
    g.throughput(Throughput::Elements(EVENTS as u64));
    g.bench_function("watch_1k_events", |b| {
        b.iter(|| {
            rt.block_on(async {
                let from = server.resource_version();
                let uri = format!("{url}/api/v1/namespaces/ns-0/configmaps?watch=true&resourceVersion={from}");
                let resp = client.get(uri.parse().unwrap()).await.unwrap();
                let mut body = resp.into_body();
                for i in 0..EVENTS {
                    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    server
                        .create_object(json!({"apiVersion": "v1", "kind": "ConfigMap",
                            "metadata": {"name": format!("cm-{n}"), "namespace": "ns-0", "labels": {"i": i.to_string()}},
                            "data": {"k": "v"}}))
                        .unwrap();
                }
                let mut lines = 0;
                while lines < EVENTS {
                    let frame = body.frame().await.unwrap().unwrap();
                    if let Ok(d) = frame.into_data() {
                        lines += d.iter().filter(|b| **b == b'\n').count();
                    }
                }
            })
        })
    });
    g.finish();
    rt.block_on(server.shutdown());
}

criterion_group!(benches, bench);
criterion_main!(benches);
