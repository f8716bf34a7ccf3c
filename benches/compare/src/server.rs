//! The server process: one TestApiServer preloaded with realistic objects of the run's kind
//! ([`crate::Kind`]: pods, or Rollouts built from one realistic pod), driven by line commands
//! on stdin so that the client scenarios (other processes) measure only themselves.
//!
//! Commands: `burst N NAMESPACE` (hold new requests for 3 s, end every watch, create N ConfigMaps:
//! the watchers reconnect and receive the N events from the history at full speed);
//! `update N` (hold new requests, end every watch, change N preloaded objects round robin
//! with a label merge patch) then `release` (the held requests go on: the watchers
//! reconnect and receive the N MODIFIED events from the history at full speed);
//! `relist` (one unrelated change, compaction past it, every watch ended: the watchers'
//! resourceVersion is too old, they get 410 and relist);
//! `cpu` (this process's CPU seconds so far, to measure what serving a burst costs);
//! `quit`.

use std::io::BufRead;
use std::time::{Duration, Instant};

use kinform::testing::TestApiServer;
use serde_json::json;

use crate::Kind;

/// How long a burst holds new requests (the watchers' re-watches) while it creates objects.
pub const HOLD: Duration = Duration::from_secs(3);

pub fn run(objects: usize) {
    let kind = crate::kind();
    let pods = match kind {
        Kind::Pods => objects,
        // The Rollouts' template: this pod's spec.
        Kind::Rollouts => 1,
    };
    let rt = crate::runtime("server");
    let server = rt.block_on(async {
        TestApiServer::builder()
            .pods(pods)
            .namespaces(10)
            .history_window(1_000_000)
            .watch_buffer(1_000_000)
            .start()
            .await
            .expect("server starts")
    });
    server.create_namespace("relist").expect("namespace");
    if kind == Kind::Rollouts {
        rt.block_on(preload_rollouts(&server, objects));
    }
    let (api_version, kind_name) = kind.api_version_kind();
    println!("URL {}", server.url());
    let mut round = 0u64;
    let mut keys: Vec<(String, String)> = Vec::new();
    for line in std::io::stdin().lock().lines() {
        let line = line.unwrap_or_default();
        let mut words = line.split_whitespace();
        match words.next() {
            Some("burst") => {
                let n: usize = words.next().and_then(|w| w.parse().ok()).unwrap_or(1000);
                let ns = words.next().unwrap_or("bench").to_owned();
                server.create_namespace(&ns).expect("namespace");
                round += 1;
                let objects: Vec<_> = (0..n)
                    .map(|i| {
                        json!({
                            "apiVersion": "v1", "kind": "ConfigMap",
                            "metadata": {"name": format!("cm-{round}-{i}"), "namespace": ns,
                                         "labels": {"app": "bench", "round": round.to_string()}},
                            "data": {"key": "x".repeat(512)}
                        })
                    })
                    .collect();
                server.faults().set_latency(HOLD);
                server.faults().drop_watches();
                let start = Instant::now();
                for o in objects {
                    server.create_object(o).expect("create");
                }
                let took = start.elapsed();
                // Requests already waiting keep their delay; new ones get none.
                server.faults().set_latency(Duration::ZERO);
                println!("BURST {}", took.as_secs_f64());
            }
            Some("update") => {
                let n: usize = words.next().and_then(|w| w.parse().ok()).unwrap_or(1000);
                if keys.is_empty() {
                    keys = rt.block_on(keys_of(&server, kind.list_path()));
                }
                round += 1;
                server.faults().hold_requests();
                server.faults().drop_watches();
                let start = Instant::now();
                for i in 0..n {
                    let (ns, name) = &keys[i % keys.len()];
                    let patch =
                        json!({"metadata": {"labels": {"bench-update": format!("{round}-{i}")}}});
                    server
                        .merge_patch_object(api_version, kind_name, Some(ns), name, &patch)
                        .expect("patch");
                }
                let took = start.elapsed();
                // The held re-watches wait for `release`: the client takes its CPU figures
                // from that moment, not over the time this server took to write.
                println!("UPDATES {}", took.as_secs_f64());
            }
            Some("release") => {
                server.faults().release_requests();
                println!("OK");
            }
            Some("relist") => {
                // A change the watchers do not see, then compaction past it: their
                // resourceVersion is now too old, so they get 410 and relist.
                round += 1;
                server
                    .create_object(json!({
                        "apiVersion": "v1", "kind": "ConfigMap",
                        "metadata": {"name": format!("relist-{round}"), "namespace": "relist"}
                    }))
                    .expect("create");
                server.faults().compact();
                server.faults().drop_watches();
                println!("OK");
            }
            Some("cpu") => println!("CPU {}", crate::rss::cpu_secs()),
            _ => break,
        }
    }
    rt.block_on(server.shutdown());
}

/// Registers the Rollout CRD and creates `n` Rollouts over the 10 namespaces, each with the
/// status a healthy Rollout has (written through `/status`, as the CRD has the status
/// subresource and a create drops `status`).
async fn preload_rollouts(server: &TestApiServer, n: usize) {
    let crd = std::fs::read_to_string(crate::rollout::CRD).expect("the corpus's Rollout CRD");
    server
        .register_crd_yaml(&crd)
        .expect("the Rollout CRD registers");
    let client = server.client().expect("client");
    let pod = client
        .request_text(http::Request::get("/api/v1/pods").body(Vec::new()).unwrap())
        .await
        .expect("list the template pod");
    let pod: serde_json::Value = serde_json::from_str(&pod).expect("pod list");
    let pod = &pod["items"][0];
    let now = pod["metadata"]["creationTimestamp"].clone();
    let now = now.as_str().expect("creationTimestamp");
    for i in 0..n {
        let ns = format!("ns-{}", i % 10);
        let object = crate::rollout::object(i, &ns, pod);
        let name = object["metadata"]["name"].as_str().unwrap().to_owned();
        server.create_object(object).expect("create a Rollout");
        let req = http::Request::patch(format!(
            "/apis/argoproj.io/v1alpha1/namespaces/{ns}/rollouts/{name}/status"
        ))
        .header("content-type", "application/merge-patch+json")
        .body(crate::rollout::status(i, now).to_string().into_bytes())
        .unwrap();
        client
            .request_text(req)
            .await
            .expect("write a Rollout's status");
    }
}

/// The namespace and name of every object listed at `path` (one LIST, decoded down to the
/// keys).
async fn keys_of(server: &TestApiServer, path: &str) -> Vec<(String, String)> {
    #[derive(serde::Deserialize)]
    struct Meta {
        name: String,
        namespace: String,
    }
    #[derive(serde::Deserialize)]
    struct Item {
        metadata: Meta,
    }
    #[derive(serde::Deserialize)]
    struct List {
        items: Vec<Item>,
    }
    let client = crate::sides::whole_list_client(server.client_config());
    let req = http::Request::get(path).body(Vec::new()).unwrap();
    let text = client.request_text(req).await.expect("list the objects");
    let list: List = serde_json::from_str(&text).expect("object list");
    list.items
        .into_iter()
        .map(|i| (i.metadata.namespace, i.metadata.name))
        .collect()
}
