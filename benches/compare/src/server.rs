//! The server process: one TestApiServer preloaded with realistic pods, driven by line
//! commands on stdin so that the client scenarios (other processes) measure only themselves.
//!
//! Commands: `burst N NAMESPACE` (hold new requests for 3 s, end every watch, create N ConfigMaps:
//! the watchers reconnect and receive the N events from the history at full speed);
//! `update N` (hold new requests, end every watch, change N preloaded pods round robin
//! with a label merge patch) then `release` (the held requests go on: the pod watchers
//! reconnect and receive the N MODIFIED events from the history at full speed);
//! `relist` (one unrelated change, compaction past it, every watch ended: the watchers'
//! resourceVersion is too old, they get 410 and relist);
//! `cpu` (this process's CPU seconds so far, to measure what serving a burst costs);
//! `quit`.

use std::io::BufRead;
use std::time::{Duration, Instant};

use kinform::testing::TestApiServer;
use serde_json::json;

/// How long a burst holds new requests (the watchers' re-watches) while it creates objects.
pub const HOLD: Duration = Duration::from_secs(3);

pub fn run(pods: usize) {
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
    println!("URL {}", server.url());
    let mut round = 0u64;
    let mut pod_keys: Vec<(String, String)> = Vec::new();
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
                if pod_keys.is_empty() {
                    pod_keys = rt.block_on(pod_keys_of(&server));
                }
                round += 1;
                server.faults().hold_requests();
                server.faults().drop_watches();
                let start = Instant::now();
                for i in 0..n {
                    let (ns, name) = &pod_keys[i % pod_keys.len()];
                    let patch =
                        json!({"metadata": {"labels": {"bench-update": format!("{round}-{i}")}}});
                    server
                        .merge_patch_object("v1", "Pod", Some(ns), name, &patch)
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
                // A change the pod watchers do not see, then compaction past it: their
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

/// The namespace and name of every pod the server holds (one LIST, decoded down to the keys).
async fn pod_keys_of(server: &TestApiServer) -> Vec<(String, String)> {
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
    let req = http::Request::get("/api/v1/pods").body(Vec::new()).unwrap();
    let text = client.request_text(req).await.expect("list pods");
    let list: List = serde_json::from_str(&text).expect("pod list");
    list.items
        .into_iter()
        .map(|i| (i.metadata.namespace, i.metadata.name))
        .collect()
}
