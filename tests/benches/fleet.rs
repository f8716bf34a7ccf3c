//! The fleet benchmark (issue #46): one ConfigMap controller over a fleet of 20 clusters (20
//! `TestApiServer`s of `objects` ConfigMaps each, behind a directory of kubeconfig files),
//! run as 1, 2 and 4 replicas that share the clusters through Leases on a management server
//! (`Fleet::sharded`, test-sized Leases: 4 s / 3 s / 200 ms).
//!
//! Every replica is a **child process** of this one (this binary run again with
//! `FLEET_BENCH_ROLE` set), so its memory is its own: each reports, every 200 ms, its
//! resident set (`VmRSS`) and live heap (`kinform_tests::heap_bytes`) with their values
//! before its fleet started, and for every cluster it runs the number of reconciles so far.
//! The servers, the kubeconfig directory and the management server live in this process.
//!
//! For each replica count N, on fresh servers:
//!
//! - **sync**: from starting the N processes until every cluster runs on exactly one replica,
//!   the ring's owner of its name among the N (`owner_of`), and every ConfigMap of every
//!   cluster has been reconciled;
//! - **memory per replica**: each replica's RSS and live-heap growth once synced; beside it
//!   the growth of one replica over 20 clusters holding no ConfigMap of the benchmark (the
//!   fixed cost of the clusters' connections, informers and Leases);
//! - **engage**: the kubeconfig of a 21st cluster is written; the time until its owner has
//!   reconciled all its ConfigMaps (the directory is polled every 200 ms);
//! - **fail-over** (N >= 2): a replica running at least one cluster is killed (SIGKILL); the
//!   time until its clusters run on their new owners among the survivors, every ConfigMap
//!   reconciled there (the 4 s Lease duration included).
//!
//! Run (figures in BENCHMARKS.md, `## Fleets`), a few minutes:
//!
//! ```text
//! cargo bench -p kinform-tests --bench fleet -- [objects=1000] [payload=1024]
//! ```

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::ConfigMap;
use kinform::client::{AuthConfig, Config, Secret};
use kinform::controller::fleet::{Cluster, Fleet, FleetSharding, KubeconfigDir};
use kinform::controller::shard::owner_of;
use kinform::controller::{Action, Controller};
use kinform::testing::TestApiServer;
use kinform::{Api, CancellationToken, Client};
use kinform_tests::controller::factory;
use kinform_tests::election::timing;
use kinform_tests::{bench_args, heap_bytes, mib, rss_bytes};
use parking_lot::Mutex;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};
use tokio::time::Instant;

/// The clusters of the fleet (a 21st is added for the engage figure).
const CLUSTERS: usize = 20;
/// Bounds every wait of the benchmark.
const LIMIT: Duration = Duration::from_secs(300);

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    if std::env::var("FLEET_BENCH_ROLE").is_ok() {
        runtime.block_on(replica());
        return;
    }
    let args = bench_args("[objects] [payload bytes]");
    let objects = args.first().copied().unwrap_or(1000);
    let payload = args.get(1).copied().unwrap_or(1024);
    runtime.block_on(orchestrate(objects, payload));
}

fn env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| panic!("{name} is set"))
}

// ---------------------------------------------------------------------------------------
// The replica (a child process)

/// Reconciles per cluster this replica runs now.
type Counts = Arc<Mutex<BTreeMap<String, Arc<AtomicUsize>>>>;

/// A replica: a sharded fleet over the kubeconfig directory `FLEET_BENCH_DIR`, its Leases on
/// the management server `FLEET_BENCH_URL`; ends when its stdin closes.
async fn replica() {
    let baseline = (rss_bytes(), heap_bytes());
    let identity = env("FLEET_BENCH_ID");
    let mut config = Config::new(env("FLEET_BENCH_URL").parse().expect("a server URL"));
    config.auth = AuthConfig::Token(Secret::new(env("FLEET_BENCH_TOKEN")));
    let management = Client::new(config).expect("a client");
    let provider = KubeconfigDir::new(env("FLEET_BENCH_DIR")).poll(Duration::from_millis(200));
    let sharding = FleetSharding::new(Api::<Lease>::namespaced(management, "default"), &identity)
        .timing(timing());
    let fleet = Fleet::new("fleet-bench", provider)
        .and_then(|f| f.sharded(sharding))
        .expect("a fleet")
        .informer_factory(factory);
    let counts = Counts::default();
    let work = {
        let counts = counts.clone();
        move |cluster: Cluster, stop: CancellationToken| {
            let count = Arc::new(AtomicUsize::new(0));
            let name = cluster.name().to_owned();
            counts.lock().insert(name.clone(), count.clone());
            let counts = counts.clone();
            async move {
                let controller = Controller::<ConfigMap>::builder(cluster.informers())
                    .name("fleet-bench")
                    .build();
                controller
                    .run(
                        move |_req| {
                            count.fetch_add(1, Ordering::Relaxed);
                            async { Ok::<_, std::convert::Infallible>(Action::done()) }
                        },
                        stop.cancelled_owned(),
                    )
                    .await;
                counts.lock().remove(&name);
            }
        }
    };
    let (closed_tx, closed) = tokio::sync::oneshot::channel::<()>();
    std::thread::spawn(move || {
        for line in std::io::stdin().lines() {
            if line.is_err() {
                break;
            }
        }
        let _ = closed_tx.send(());
    });
    let reporting = async {
        loop {
            let clusters: Vec<String> = counts
                .lock()
                .iter()
                .map(|(c, n)| format!("{c}={}", n.load(Ordering::Relaxed)))
                .collect();
            let mut out = std::io::stdout().lock();
            let _ = writeln!(
                out,
                "{} {} {} {} {}",
                rss_bytes(),
                baseline.0,
                heap_bytes(),
                baseline.1,
                if clusters.is_empty() {
                    "-".to_owned()
                } else {
                    clusters.join(",")
                }
            );
            let _ = out.flush();
            drop(out);
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    };
    tokio::select! {
        () = fleet.run(work, async { let _ = closed.await; }) => {}
        () = reporting => {}
    }
}

// ---------------------------------------------------------------------------------------
// The orchestrator

/// The last status a replica reported.
#[derive(Clone, Debug, Default)]
struct Status {
    rss: u64,
    rss_baseline: u64,
    heap: u64,
    heap_baseline: u64,
    /// Reconciles per cluster it runs.
    clusters: BTreeMap<String, usize>,
}

/// A replica process and its latest status.
struct Replica {
    id: String,
    child: Child,
    status: Arc<Mutex<Option<Status>>>,
}

impl Replica {
    fn spawn(management: &TestApiServer, dir: &Path, id: &str) -> Self {
        let mut child = Command::new(std::env::current_exe().expect("this binary"))
            .env("FLEET_BENCH_ROLE", "replica")
            .env("FLEET_BENCH_URL", management.url())
            .env("FLEET_BENCH_TOKEN", management.token_for(id, &[]))
            .env("FLEET_BENCH_ID", id)
            .env("FLEET_BENCH_DIR", dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("a child process");
        let mut lines = BufReader::new(child.stdout.take().expect("piped stdout")).lines();
        let status = Arc::new(Mutex::new(None));
        let s = status.clone();
        tokio::spawn(async move {
            while let Ok(Some(line)) = lines.next_line().await {
                let f: Vec<&str> = line.split_whitespace().collect();
                let [rss, rss_baseline, heap, heap_baseline, clusters] = f[..] else {
                    continue;
                };
                let number = |v: &str| v.parse::<u64>().unwrap_or(0);
                let clusters = clusters
                    .split(',')
                    .filter_map(|c| c.split_once('='))
                    .map(|(c, n)| (c.to_owned(), n.parse().unwrap_or(0)))
                    .collect();
                *s.lock() = Some(Status {
                    rss: number(rss),
                    rss_baseline: number(rss_baseline),
                    heap: number(heap),
                    heap_baseline: number(heap_baseline),
                    clusters,
                });
            }
        });
        Self {
            id: id.to_owned(),
            child,
            status,
        }
    }

    fn status(&self) -> Status {
        self.status.lock().clone().unwrap_or_default()
    }

    async fn kill(mut self) {
        let _ = self.child.kill().await;
    }
}

/// A cluster's name: its kubeconfig file's stem.
fn cluster_name(i: usize) -> String {
    format!("c{i:02}")
}

/// A fresh server with `objects` ConfigMaps of `payload` bytes.
async fn member_server(objects: usize, payload: usize) -> TestApiServer {
    let server = TestApiServer::start().await.expect("a test server starts");
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
    server
}

/// The ConfigMaps a server holds: the benchmark's and those it starts with
/// (`kube-root-ca.crt` and the like).
async fn configmaps_on(server: &TestApiServer) -> usize {
    let api: Api<ConfigMap> = Api::all(server.client().expect("a client"));
    api.list(&Default::default())
        .await
        .expect("a list of ConfigMaps")
        .items
        .len()
}

/// Whether `clusters` each run on exactly one replica, their owner among `replicas`, with
/// at least `objects` reconciles there.
fn placed(replicas: &[Replica], clusters: &[String], objects: usize) -> bool {
    let statuses: Vec<(String, Status)> = replicas
        .iter()
        .map(|r| (r.id.clone(), r.status()))
        .collect();
    let ids: Vec<&str> = statuses.iter().map(|(id, _)| id.as_str()).collect();
    clusters.iter().all(|c| {
        let runners: Vec<&(String, Status)> = statuses
            .iter()
            .filter(|(_, s)| s.clusters.contains_key(c))
            .collect();
        matches!(&runners[..], [(id, s)]
            if owner_of(c, ids.iter().copied()) == Some(id.as_str()) && s.clusters[c] >= objects)
    })
}

/// Polls `done` every 100 ms until it holds; returns the time taken.
async fn wait_for(what: &str, done: impl Fn() -> bool) -> Duration {
    let started = Instant::now();
    while !done() {
        assert!(started.elapsed() < LIMIT, "{what}: not within {LIMIT:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    started.elapsed()
}

/// One row of the results.
struct Row {
    replicas: usize,
    sync: Duration,
    /// Per replica: id, clusters run, RSS growth, live-heap growth.
    memory: Vec<(String, usize, u64, u64)>,
    engage: Duration,
    failover: Option<Duration>,
}

/// A fleet of `CLUSTERS` servers in a kubeconfig directory, one more server ready to add.
struct Clusters {
    servers: Vec<TestApiServer>,
    dir: tempfile::TempDir,
    /// ConfigMaps per cluster (the benchmark's and those a server starts with).
    objects: usize,
}

impl Clusters {
    async fn new(objects: usize, payload: usize) -> Self {
        let mut servers = Vec::new();
        for _ in 0..=CLUSTERS {
            servers.push(member_server(objects, payload).await);
        }
        let dir = tempfile::tempdir().expect("a temporary directory");
        let total = configmaps_on(&servers[0]).await;
        let fleet = Self {
            servers,
            dir,
            objects: total,
        };
        for i in 0..CLUSTERS {
            fleet.add(i);
        }
        fleet
    }

    fn path(&self) -> PathBuf {
        self.dir.path().to_owned()
    }

    fn add(&self, i: usize) {
        let file = self.dir.path().join(format!("{}.yaml", cluster_name(i)));
        self.servers[i]
            .write_kubeconfig(file)
            .expect("a kubeconfig file");
    }

    async fn shutdown(self) {
        for s in self.servers {
            s.shutdown().await;
        }
    }
}

/// The fleet's RSS and live-heap growth in one replica over 20 clusters with no ConfigMap of
/// the benchmark.
async fn fixed_cost() -> (u64, u64) {
    let management = TestApiServer::start().await.expect("a test server starts");
    let clusters = Clusters::new(0, 0).await;
    let names: Vec<String> = (0..CLUSTERS).map(cluster_name).collect();
    let replicas = vec![Replica::spawn(&management, &clusters.path(), "r0")];
    wait_for("the empty fleet", || {
        placed(&replicas, &names, clusters.objects)
    })
    .await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let s = replicas[0].status();
    for r in replicas {
        r.kill().await;
    }
    clusters.shutdown().await;
    management.shutdown().await;
    (
        s.rss.saturating_sub(s.rss_baseline),
        s.heap.saturating_sub(s.heap_baseline),
    )
}

async fn run(n: usize, objects: usize, payload: usize) -> Row {
    let management = TestApiServer::start().await.expect("a test server starts");
    let clusters = Clusters::new(objects, payload).await;
    let mut names: Vec<String> = (0..CLUSTERS).map(cluster_name).collect();
    let started = Instant::now();
    let mut replicas: Vec<Replica> = (0..n)
        .map(|i| Replica::spawn(&management, &clusters.path(), &format!("r{i}")))
        .collect();
    wait_for("sync", || placed(&replicas, &names, clusters.objects)).await;
    let sync = started.elapsed();
    // Let the replicas report their settled state.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let memory = replicas
        .iter()
        .map(|r| {
            let s = r.status();
            (
                r.id.clone(),
                s.clusters.len(),
                s.rss.saturating_sub(s.rss_baseline),
                s.heap.saturating_sub(s.heap_baseline),
            )
        })
        .collect();

    let added = Instant::now();
    clusters.add(CLUSTERS);
    names.push(cluster_name(CLUSTERS));
    wait_for("engage", || placed(&replicas, &names, clusters.objects)).await;
    let engage = added.elapsed();

    let mut failover = None;
    if n >= 2 {
        let victim = replicas
            .iter()
            .position(|r| !r.status().clusters.is_empty())
            .expect("a replica running a cluster");
        let victim = replicas.remove(victim);
        let killed = Instant::now();
        victim.kill().await;
        wait_for("fail-over", || placed(&replicas, &names, clusters.objects)).await;
        failover = Some(killed.elapsed());
    }
    for r in replicas {
        r.kill().await;
    }
    clusters.shutdown().await;
    management.shutdown().await;
    Row {
        replicas: n,
        sync,
        memory,
        engage,
        failover,
    }
}

async fn orchestrate(objects: usize, payload: usize) {
    eprintln!(
        "fleet benchmark: {CLUSTERS} clusters of {objects} ConfigMaps, {payload} payload bytes"
    );
    let (fixed_rss, fixed_heap) = fixed_cost().await;
    eprintln!(
        "  fixed cost (20 clusters, no ConfigMap): RSS {:.1} MiB, live heap {:.1} MiB",
        mib(fixed_rss),
        mib(fixed_heap)
    );
    let mut rows = Vec::new();
    for n in [1, 2, 4] {
        let row = run(n, objects, payload).await;
        eprintln!("  {n} replicas: sync {:?}", row.sync);
        rows.push(row);
    }
    println!(
        "\n| replicas | sync | per replica: clusters, RSS growth (MiB), live heap growth (MiB) | engage a new cluster | fail over a killed replica's clusters |"
    );
    println!("|---|---|---|---|---|");
    for row in &rows {
        let memory: Vec<String> = row
            .memory
            .iter()
            .map(|(id, c, rss, heap)| format!("{id}: {c}, {:.1}, {:.1}", mib(*rss), mib(*heap)))
            .collect();
        println!(
            "| {} | {:.2} s | {} | {:.2} s | {} |",
            row.replicas,
            row.sync.as_secs_f64(),
            memory.join("; "),
            row.engage.as_secs_f64(),
            row.failover
                .map_or("-".to_owned(), |d| format!("{:.2} s", d.as_secs_f64()))
        );
    }
    println!(
        "\nfixed cost (one replica, 20 clusters, no ConfigMap of the benchmark): RSS {:.1} MiB, live heap {:.1} MiB",
        mib(fixed_rss),
        mib(fixed_heap)
    );
}
