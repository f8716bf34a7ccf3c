//! The shard selector benchmark (issue #46, KEP-5866): three informers of `objects`
//! ConfigMaps, each of one third of the hash space of `metadata.uid`
//! (`ShardRange::nth(Uid, i, 3)`), beside one informer of every ConfigMap, against a
//! `TestApiServer` with the `ShardedListAndWatch` gate on (the server sends each informer
//! only its shard) and off (a server before 1.36: every object is sent and the reflector
//! drops what is not its shard).
//!
//! Every informer is a **child process** of this one (this binary run again with
//! `SHARD_SELECTOR_BENCH` set), so its memory is its own. Each reports, every 200 ms, the
//! objects it caches, the objects it **received** (the reflector's `items_listed` and
//! `watch_events`: what the server sent and the client decoded), the response body bytes
//! its client received (`Client::received_body_bytes`: what crossed the network), and its
//! live heap (`kinform_tests::heap_bytes`) with its value before the informer started.
//!
//! For each gate: the informers sync; then every ConfigMap is changed once (64 concurrent
//! updates), and the figures are read once every informer has received its changes.
//!
//! ```text
//! cargo bench -p kinform-tests --bench shard_selector -- [objects=10000] [payload=1024]
//! ```

use std::io::Write as _;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use futures_util::{StreamExt as _, stream};
use k8s_openapi::api::core::v1::ConfigMap;
use kinform::client::{AuthConfig, Config, ListParams, Patch, PatchParams, Secret};
use kinform::informer::InformerFactory;
use kinform::shard::{ShardField, ShardRange, fnv1a64};
use kinform::testing::TestApiServer;
use kinform::{Api, Client};
use kinform_tests::{bench_args, heap_bytes, mib};
use parking_lot::Mutex;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};
use tokio::time::Instant;

/// The shards.
const SHARDS: u64 = 3;
/// Bounds every wait of the benchmark.
const LIMIT: Duration = Duration::from_secs(300);

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    if let Ok(shard) = std::env::var("SHARD_SELECTOR_BENCH") {
        runtime.block_on(informer(shard.parse().ok()));
        return;
    }
    let args = bench_args("[objects] [payload bytes]");
    let objects = args.first().copied().unwrap_or(10_000);
    let payload = args.get(1).copied().unwrap_or(1024);
    runtime.block_on(orchestrate(objects, payload));
}

fn env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| panic!("{name} is set"))
}

/// A child: an informer of ConfigMaps of `default`, of shard `shard` of [`SHARDS`] or of
/// every ConfigMap (`None`); ends when its stdin closes.
async fn informer(shard: Option<u64>) {
    let baseline = heap_bytes();
    let mut config = Config::new(env("SHARD_SELECTOR_URL").parse().expect("a server URL"));
    config.auth = AuthConfig::Token(Secret::new(env("SHARD_SELECTOR_TOKEN")));
    let client = Client::new(config).expect("a client");
    let mut builder = InformerFactory::builder(client.clone()).namespace("default");
    if let Some(i) = shard {
        let range = ShardRange::nth(ShardField::Uid, i, SHARDS).expect("a shard");
        builder = builder.shard_selector(range.into());
    }
    let factory = builder.build();
    let informer = factory.informer::<ConfigMap>();
    factory.start();
    std::thread::spawn(move || {
        for line in std::io::stdin().lines() {
            if line.is_err() {
                break;
            }
        }
        std::process::exit(0);
    });
    loop {
        let m = informer.metrics();
        let mut out = std::io::stdout().lock();
        let _ = writeln!(
            out,
            "{} {} {} {} {}",
            informer.store().len(),
            m.items_listed + m.watch_events,
            client.received_body_bytes(),
            heap_bytes(),
            baseline
        );
        let _ = out.flush();
        drop(out);
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// The last status a child reported.
#[derive(Clone, Copy, Debug, Default)]
struct Status {
    cached: usize,
    received: u64,
    bytes: u64,
    heap: u64,
    heap_baseline: u64,
}

/// A child process and its latest status.
struct Proc {
    child: Child,
    status: Arc<Mutex<Status>>,
}

impl Proc {
    fn spawn(server: &TestApiServer, shard: Option<u64>) -> Self {
        let mut child = Command::new(std::env::current_exe().expect("this binary"))
            .env(
                "SHARD_SELECTOR_BENCH",
                shard.map_or("all".to_owned(), |i| i.to_string()),
            )
            .env("SHARD_SELECTOR_URL", server.url())
            .env("SHARD_SELECTOR_TOKEN", server.token_for("bench", &[]))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("a child process");
        let mut lines = BufReader::new(child.stdout.take().expect("piped stdout")).lines();
        let status = Arc::new(Mutex::new(Status::default()));
        let s = status.clone();
        tokio::spawn(async move {
            while let Ok(Some(line)) = lines.next_line().await {
                let f: Vec<u64> = line
                    .split_whitespace()
                    .filter_map(|v| v.parse().ok())
                    .collect();
                if let [cached, received, bytes, heap, heap_baseline] = f[..] {
                    *s.lock() = Status {
                        cached: usize::try_from(cached).unwrap_or(usize::MAX),
                        received,
                        bytes,
                        heap,
                        heap_baseline,
                    };
                }
            }
        });
        Self { child, status }
    }

    fn status(&self) -> Status {
        *self.status.lock()
    }
}

async fn wait_for(what: &str, done: impl Fn() -> bool) {
    let started = Instant::now();
    while !done() {
        assert!(started.elapsed() < LIMIT, "{what}: not within {LIMIT:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[allow(clippy::cast_precision_loss)]
fn ratio(a: u64, b: u64) -> f64 {
    a as f64 / b as f64
}

/// One informer's figures.
struct Row {
    informer: String,
    cached: usize,
    received: u64,
    bytes: u64,
    heap: u64,
}

async fn run(gate: bool, objects: usize, payload: usize) -> Vec<Row> {
    let builder = TestApiServer::builder();
    let server = if gate {
        builder.sharded_list_and_watch()
    } else {
        builder
    }
    .start()
    .await
    .expect("a test server starts");
    let value = "x".repeat(payload);
    for i in 0..objects {
        server
            .create_object(serde_json::json!({
                "apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": format!("cm-{i:05}"), "namespace": "default"},
                "data": {"payload": value},
            }))
            .expect("a ConfigMap");
    }
    let api: Api<ConfigMap> = Api::namespaced(server.client().expect("a client"), "default");
    let all = api
        .list(&ListParams::default())
        .await
        .expect("a list")
        .items;
    let per_shard: Vec<usize> = (0..SHARDS)
        .map(|i| {
            let range = ShardRange::nth(ShardField::Uid, i, SHARDS).expect("a shard");
            all.iter()
                .filter(|c| {
                    range.contains(fnv1a64(c.metadata.uid.as_deref().unwrap_or("").bytes()))
                })
                .count()
        })
        .collect();
    let mut shards: Vec<Option<u64>> = (0..SHARDS).map(Some).collect();
    shards.push(None);
    let want = |shard: Option<u64>| -> usize {
        shard.map_or(all.len(), |i| per_shard[usize::try_from(i).unwrap_or(0)])
    };
    let procs: Vec<(Option<u64>, Proc)> = shards
        .iter()
        .map(|s| (*s, Proc::spawn(&server, *s)))
        .collect();
    wait_for("sync", || {
        procs.iter().all(|(s, p)| p.status().cached == want(*s))
    })
    .await;
    let listed: Vec<u64> = procs.iter().map(|(_, p)| p.status().received).collect();

    // Every ConfigMap changed once.
    let names: Vec<String> = all.iter().filter_map(|c| c.metadata.name.clone()).collect();
    stream::iter(names)
        .for_each_concurrent(64, |name| {
            let api = api.clone();
            async move {
                let patch = serde_json::json!({"data": {"changed": "yes"}});
                api.patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
                    .await
                    .expect("a patch");
            }
        })
        .await;
    // What each informer receives of the changes: its shard (gate on) or all (gate off).
    wait_for("the changes", || {
        procs.iter().zip(&listed).all(|((s, p), before)| {
            let expected = if gate { want(*s) } else { all.len() };
            p.status().received >= before + expected as u64
        })
    })
    .await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let rows = procs
        .iter()
        .map(|(s, p)| {
            let st = p.status();
            Row {
                informer: s.map_or("every object".to_owned(), |i| format!("shard {i} of 3")),
                cached: st.cached,
                received: st.received,
                bytes: st.bytes,
                heap: st.heap.saturating_sub(st.heap_baseline),
            }
        })
        .collect();
    for (_, mut p) in procs {
        let _ = p.child.kill().await;
    }
    server.shutdown().await;
    rows
}

async fn orchestrate(objects: usize, payload: usize) {
    eprintln!("shard selector benchmark: {objects} ConfigMaps of {payload} payload bytes");
    println!(
        "\n| gate | informer | cached | objects received (list + watch) | vs every object | body MiB received | vs every object | live heap growth (MiB) | vs every object |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    for gate in [true, false] {
        let rows = run(gate, objects, payload).await;
        let whole = rows.last().expect("the unsharded informer");
        let (whole_received, whole_bytes, whole_heap) = (whole.received, whole.bytes, whole.heap);
        for r in &rows {
            println!(
                "| {} | {} | {} | {} | {:.2}x | {:.1} | {:.2}x | {:.1} | {:.2}x |",
                if gate { "on" } else { "off" },
                r.informer,
                r.cached,
                r.received,
                ratio(r.received, whole_received),
                mib(r.bytes),
                ratio(r.bytes, whole_bytes),
                mib(r.heap),
                ratio(r.heap, whole_heap)
            );
        }
    }
}
