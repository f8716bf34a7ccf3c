//! The sharding benchmark (issue #21): one Widget controller run as 1, 2 and 4 sharded
//! replicas (each a member standing for sharder, the default role), as 2 and 4 members with
//! the sharder apart (`ShardRole::Member` replicas and one `ShardRole::Sharder` process),
//! and as one plain (unsharded) controller for the baseline, over the same workload against
//! one `TestApiServer`.
//!
//! Every replica is a **child process** of this one (this binary run again with
//! `SHARD_BENCH_ROLE` set), so its memory is its own: each reports its resident set
//! (`VmRSS` of `/proc/self/status`) before its controller starts and every 200 ms after,
//! with the number of Widgets its cache holds and whether it is the sharder. A replica's
//! **RSS growth** is its RSS after its shard is cached and reconciled less its RSS before
//! the controller started; its **cache memory** is that growth less the growth of the same
//! kind of process run against a server with no Widget (the fixed cost of the runtime,
//! connections, informers, queue and Leases). Both are reported, and beside them the growth
//! of the **live heap** (`kinform_tests::heap_bytes`, glibc's count of allocated bytes),
//! which tells what a replica holds from what the allocator keeps after a peak. The server, and the client
//! that creates and updates the Widgets, run in this process.
//!
//! For each replica count N, on a fresh server with `objects` Widgets of `payload` bytes:
//!
//! - **sync**: from starting the N processes until their caches together hold every Widget
//!   (each Widget labelled for its owner, in exactly that owner's cache) and every Widget
//!   has been reconciled once;
//! - **reconciles/s**: every Widget's `spec.value` is changed (64 concurrent patches); the
//!   Widgets divided by the time until every one shows the new value in its `observed`
//!   annotation (the reconcile's own patch), all replicas together;
//! - **join**: one more replica starts; the time until every Widget is labelled for its
//!   owner among N+1 members (the drain-then-release handover of about 1/(N+1) of them,
//!   process start included);
//! - **crash** (N >= 2): a replica that is not the sharder is killed (SIGKILL); the time
//!   until every Widget is labelled for its owner among the survivors (the 4 s lease
//!   duration, plus the moves).
//!
//! With `--io-latency-ms=<ms>`, every request the server receives during the update phase
//! waits that long first (`Faults::set_latency`), so a reconcile awaits I/O as it does
//! against a distant API server, and the throughput shows what sharding is for rather than
//! the two cores the replicas share; `--workers=<n>` sets each replica's reconcile workers
//! (default 4). Beside the throughput, each process's CPU time during the update phase
//! (`utime + stime` of `/proc/<pid>/stat`) shows the sharder's own cost.
//!
//! Then the sharder's extra cache: one process syncs a full informer of every Widget,
//! another a metadata-only one (`PartialObjectMetadata`, what the sharder keeps), each
//! reported less the growth of an informer of no Widget.
//!
//! Run (figures in BENCHMARKS.md, `## Sharding`), a few minutes:
//!
//! ```text
//! cargo bench -p kinform-tests --bench shard -- [objects=10000] [payload=4096]
//! cargo bench -p kinform-tests --bench shard -- 2000 4096 --io-latency-ms=10 --workers=1
//! ```

use std::io::Write as _;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use kinform::client::{AuthConfig, Config, ListParams, Secret};
use kinform::controller::shard::{ShardRole, owner_of};
use kinform::informer::InformerFactory;
use kinform::testing::TestApiServer;
use kinform::{Api, Client, HasMetadata, PartialObjectMetadata, Resource};
use kinform_tests::shard::{
    ReplicaOptions, Widget, Witness, create_widgets, set_widget_values, start_replica_on,
    widget_name, widget_server,
};
use kinform_tests::{bench_args, heap_bytes, mib, rss_bytes};
use parking_lot::Mutex;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, Command};
use tokio::time::Instant;

/// The shard label of the Widget controller.
const SHARD: &str = "shard.kinform.io/widgets";
const DRAIN: &str = "drain.shard.kinform.io/widgets";
/// Bounds every wait of the benchmark.
const LIMIT: Duration = Duration::from_secs(300);
/// Each replica's reconcile workers (`--workers=`), passed to the children.
static WORKERS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    match std::env::var("SHARD_BENCH_ROLE") {
        Ok(role) => runtime.block_on(child(&role)),
        Err(_) => {
            let flag = |name: &str| {
                std::env::args()
                    .find_map(|a| a.strip_prefix(name).map(str::to_owned))
                    .map(|v| v.parse::<u64>().expect("a number after {name}"))
            };
            let io = Duration::from_millis(flag("--io-latency-ms=").unwrap_or(0));
            let workers = flag("--workers=").map_or(ReplicaOptions::default().workers, |w| {
                usize::try_from(w).expect("a worker count")
            });
            WORKERS.set(workers).expect("set once");
            let args = bench_args("[objects] [payload bytes]");
            let objects = args.first().copied().unwrap_or(10_000);
            let payload = args.get(1).copied().unwrap_or(4096);
            runtime.block_on(orchestrate(objects, payload, io));
        }
    }
}

// ---------------------------------------------------------------------------------------
// Child processes

fn child_client() -> Client {
    let var = |name: &str| std::env::var(name).unwrap_or_else(|_| panic!("{name} is set"));
    let mut config = Config::new(var("SHARD_BENCH_URL").parse().expect("a server URL"));
    config.default_namespace = "default".into();
    config.auth = AuthConfig::Token(Secret::new(var("SHARD_BENCH_TOKEN")));
    Client::new(config).expect("a client")
}

/// The lines of stdin (tokio's `io-std` is not among the workspace's features: a thread
/// reads them); the channel closes with stdin.
fn stdin_lines() -> tokio::sync::mpsc::UnboundedReceiver<String> {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    std::thread::spawn(move || {
        for line in std::io::stdin().lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// Prints one status line: `<cached> <rss> <rss baseline> <is sharder> <heap> <heap
/// baseline>`.
fn report(cached: usize, baseline: (u64, u64), sharder: bool) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(
        out,
        "{cached} {} {} {} {} {}",
        rss_bytes(),
        baseline.0,
        u8::from(sharder),
        heap_bytes(),
        baseline.1
    );
    let _ = out.flush();
}

/// A child: `replica` (a member standing for sharder), `member` (one that never does),
/// `sharder` (the sharder apart, [`ShardRole::Sharder`]), `plain` (an unsharded
/// controller), or `cache-full` / `cache-metadata` (one informer of every Widget). Ends when its stdin closes; a replica
/// leaves gracefully on the line `leave`.
async fn child(role: &str) {
    let client = child_client();
    let baseline = (rss_bytes(), heap_bytes());
    let mut stdin = stdin_lines();
    if let Some(metadata) = match role {
        "cache-full" => Some(false),
        "cache-metadata" => Some(true),
        _ => None,
    } {
        let factory = InformerFactory::new(client);
        let store_len: Box<dyn Fn() -> usize> = if metadata {
            let informer = factory.metadata_informer(&Widget::api_resource());
            Box::new(move || informer.store().len())
        } else {
            let informer = factory.informer::<Widget>();
            Box::new(move || informer.store().len())
        };
        factory.start();
        factory
            .wait_for_cache_sync(LIMIT)
            .await
            .expect("the cache syncs");
        report(store_len(), baseline, false);
        let _ = stdin.recv().await;
        return;
    }
    let identity = std::env::var("SHARD_BENCH_ID").expect("SHARD_BENCH_ID is set");
    let options = ReplicaOptions {
        sharded: role != "plain",
        overlap_window: Duration::ZERO,
        workers: std::env::var("SHARD_BENCH_WORKERS")
            .ok()
            .and_then(|w| w.parse().ok())
            .unwrap_or(ReplicaOptions::default().workers),
        role: match role {
            "member" => ShardRole::Member,
            "sharder" => ShardRole::Sharder,
            _ => ShardRole::MemberAndSharder,
        },
        ..ReplicaOptions::default()
    };
    let replica = start_replica_on(client, &identity, &Witness::new(), &options);
    let reporting = async {
        loop {
            let sharder = replica.shard.as_ref().is_some_and(|s| s.stats().is_sharder);
            report(replica.cached(), baseline, sharder);
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    };
    tokio::select! {
        () = reporting => {}
        line = stdin.recv() => {
            if line.as_deref() == Some("leave") {
                replica.shutdown().await;
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// The orchestrator

/// The last status a child reported.
#[derive(Clone, Copy, Debug, Default)]
struct Status {
    cached: usize,
    rss: u64,
    baseline: u64,
    sharder: bool,
    heap: u64,
    heap_baseline: u64,
}

impl Status {
    fn growth(&self) -> u64 {
        self.rss.saturating_sub(self.baseline)
    }

    fn heap_growth(&self) -> u64 {
        self.heap.saturating_sub(self.heap_baseline)
    }
}

/// A child process and its latest status.
struct Proc {
    id: String,
    child: Child,
    stdin: Option<ChildStdin>,
    status: Arc<Mutex<Option<Status>>>,
}

impl Proc {
    fn spawn(server: &TestApiServer, role: &str, id: &str) -> Self {
        let mut child = Command::new(std::env::current_exe().expect("this binary"))
            .env("SHARD_BENCH_ROLE", role)
            .env("SHARD_BENCH_URL", server.url())
            .env("SHARD_BENCH_TOKEN", server.token_for(id, &[]))
            .env("SHARD_BENCH_ID", id)
            .env(
                "SHARD_BENCH_WORKERS",
                WORKERS.get().copied().unwrap_or(4).to_string(),
            )
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("a child process");
        let stdin = child.stdin.take();
        let mut lines = BufReader::new(child.stdout.take().expect("piped stdout")).lines();
        let status = Arc::new(Mutex::new(None));
        let s = status.clone();
        tokio::spawn(async move {
            while let Ok(Some(line)) = lines.next_line().await {
                let f: Vec<u64> = line
                    .split_whitespace()
                    .filter_map(|v| v.parse().ok())
                    .collect();
                if let [cached, rss, baseline, sharder, heap, heap_baseline] = f[..] {
                    *s.lock() = Some(Status {
                        cached: usize::try_from(cached).unwrap_or(usize::MAX),
                        rss,
                        baseline,
                        sharder: sharder == 1,
                        heap,
                        heap_baseline,
                    });
                }
            }
        });
        Self {
            id: id.to_owned(),
            child,
            stdin,
            status,
        }
    }

    fn status(&self) -> Status {
        self.status.lock().unwrap_or_default()
    }

    fn reported(&self) -> bool {
        self.status.lock().is_some()
    }

    /// The CPU time the process has used (`utime + stime`, in the kernel's 100 Hz ticks).
    fn cpu(&self) -> Duration {
        let stat = self
            .child
            .id()
            .and_then(|pid| std::fs::read_to_string(format!("/proc/{pid}/stat")).ok())
            .unwrap_or_default();
        // The fields after the command name, which is in parentheses and may hold spaces.
        let fields: Vec<u64> = stat
            .rsplit_once(')')
            .map(|(_, rest)| rest)
            .unwrap_or_default()
            .split_whitespace()
            .map(|f| f.parse().unwrap_or(0))
            .collect();
        let ticks = fields.get(11).copied().unwrap_or(0) + fields.get(12).copied().unwrap_or(0);
        Duration::from_millis(ticks * 10)
    }

    async fn kill(mut self) {
        let _ = self.child.kill().await;
    }

    async fn leave(mut self) {
        if let Some(stdin) = &mut self.stdin {
            let _ = stdin.write_all(b"leave\n").await;
        }
        let _ = tokio::time::timeout(LIMIT, self.child.wait()).await;
    }
}

/// Polls `done` every 100 ms until it holds; returns the time taken.
async fn wait_for(what: &str, mut done: impl AsyncFnMut() -> bool) -> Duration {
    let started = Instant::now();
    while !done().await {
        assert!(started.elapsed() < LIMIT, "{what}: not within {LIMIT:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    started.elapsed()
}

/// Every Widget's metadata (labels and annotations are all the checks read).
async fn metadata(meta: &Api<PartialObjectMetadata>) -> Vec<PartialObjectMetadata> {
    meta.list(&ListParams::default())
        .await
        .map(|l| l.items)
        .unwrap_or_default()
}

/// Whether every Widget is labelled for its owner among `members`, none is draining, and
/// each has observed `value`.
async fn settled(meta: &Api<PartialObjectMetadata>, members: &[String], value: i64) -> bool {
    let want = value.to_string();
    let items = metadata(meta).await;
    !items.is_empty()
        && items.iter().all(|w| {
            let labels = w.labels();
            let placed = members.is_empty()
                || labels.get(SHARD).map(String::as_str)
                    == owner_of(&w.key(), members.iter().map(String::as_str))
                    && !labels.contains_key(DRAIN);
            placed && w.annotations().get("observed") == Some(&want)
        })
}

/// The replicas of one run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Layout {
    /// One plain (unsharded) controller: the baseline.
    Plain,
    /// N replicas, each a member standing for sharder (the default role).
    Replicas(usize),
    /// N members that never stand for sharder, and the sharder apart.
    Apart(usize),
}

impl Layout {
    /// The members' count (1 for the plain controller).
    fn n(self) -> usize {
        match self {
            Self::Plain => 1,
            Self::Replicas(n) | Self::Apart(n) => n,
        }
    }

    /// The members' child role.
    fn role(self) -> &'static str {
        match self {
            Self::Plain => "plain",
            Self::Replicas(_) => "replica",
            Self::Apart(_) => "member",
        }
    }

    fn label(self) -> String {
        match self {
            Self::Plain => "1, not sharded (baseline)".to_owned(),
            Self::Replicas(n) => n.to_string(),
            Self::Apart(n) => format!("{n} + sharder apart"),
        }
    }
}

/// One row of the results.
struct Row {
    layout: Layout,
    sync: Duration,
    throughput: f64,
    /// Per process: id and CPU time during the update phase.
    cpu: Vec<(String, Duration)>,
    /// Per process: id, RSS growth, whether it was the sharder, its child role, live heap
    /// growth.
    memory: Vec<(String, u64, bool, &'static str, u64)>,
    join: Option<Duration>,
    crash: Option<Duration>,
}

/// A fresh server with `objects` Widgets of `payload` bytes.
async fn populate(objects: usize, payload: usize) -> (TestApiServer, Api<Widget>) {
    let (server, api) = widget_server().await;
    create_widgets(&api, objects, &"x".repeat(payload)).await;
    (server, api)
}

/// Runs the replicas of `layout` through the workload.
async fn run(layout: Layout, objects: usize, payload: usize, io: Duration) -> Row {
    let (server, api) = populate(objects, payload).await;
    let meta = Api::<PartialObjectMetadata>::metadata_namespaced(
        server.client().expect("a client"),
        "default",
        &Widget::api_resource(),
    );
    let (role, n) = (layout.role(), layout.n());
    let mut members: Vec<String> = match layout {
        Layout::Plain => Vec::new(),
        _ => (0..n).map(|i| format!("r{i}")).collect(),
    };
    let started = Instant::now();
    let mut procs: Vec<Proc> = (0..n)
        .map(|i| Proc::spawn(&server, role, &format!("r{i}")))
        .collect();
    if let Layout::Apart(_) = layout {
        procs.push(Proc::spawn(&server, "sharder", "sharder"));
    }
    let total_cached = |procs: &[Proc]| procs.iter().map(|p| p.status().cached).sum::<usize>();
    wait_for("sync", async || {
        total_cached(&procs) == objects && settled(&meta, &members, 0).await
    })
    .await;
    let sync = started.elapsed();
    // Let the replicas report their settled state.
    tokio::time::sleep(Duration::from_millis(600)).await;
    let memory = procs
        .iter()
        .map(|p| {
            let s = p.status();
            let role = if p.id == "sharder" { "sharder" } else { role };
            (p.id.clone(), s.growth(), s.sharder, role, s.heap_growth())
        })
        .collect();
    let cpu_before: Vec<Duration> = procs.iter().map(Proc::cpu).collect();
    server.faults().set_latency(io);
    let updated = Instant::now();
    set_widget_values(&api, (0..objects).map(widget_name), 1).await;
    wait_for("updates", async || settled(&meta, &members, 1).await).await;
    #[allow(clippy::cast_precision_loss)]
    let throughput = objects as f64 / updated.elapsed().as_secs_f64();
    server.faults().set_latency(Duration::ZERO);
    let cpu = procs
        .iter()
        .zip(cpu_before)
        .map(|(p, before)| (p.id.clone(), p.cpu().saturating_sub(before)))
        .collect();
    let mut row = Row {
        layout,
        sync,
        throughput,
        cpu,
        memory,
        join: None,
        crash: None,
    };
    if layout != Layout::Plain {
        let joined = Instant::now();
        let id = format!("r{n}");
        procs.push(Proc::spawn(&server, role, &id));
        members.push(id);
        wait_for("join", async || settled(&meta, &members, 1).await).await;
        row.join = Some(joined.elapsed());
    }
    if layout != Layout::Plain && n >= 2 {
        let victim = procs
            .iter()
            .position(|p| !p.status().sharder && p.id != "sharder")
            .expect("a replica that is not the sharder");
        let victim = procs.remove(victim);
        members.retain(|m| *m != victim.id);
        let crashed = Instant::now();
        victim.kill().await;
        wait_for("crash", async || settled(&meta, &members, 1).await).await;
        row.crash = Some(crashed.elapsed());
    }
    for p in procs {
        p.kill().await;
    }
    server.shutdown().await;
    row
}

/// The growth of a process that syncs one informer of every Widget (`cache-full` or
/// `cache-metadata`).
async fn cache_probe(objects: usize, payload: usize, role: &str) -> u64 {
    let (server, _api) = populate(objects, payload).await;
    let p = Proc::spawn(&server, role, "probe");
    wait_for(role, async || p.reported() && p.status().cached == objects).await;
    let growth = p.status().growth();
    p.leave().await;
    server.shutdown().await;
    growth
}

/// The RSS growth of a `role` process (a child role) with no Widget at all: what a
/// replica costs whatever it caches (runtime, client, informers, queue, Leases; for one
/// that is then the sharder, its metadata informer too). Measured once it reports (one
/// standing for sharder: once it is the sharder) and 2 s more.
async fn fixed_cost(role: &'static str) -> u64 {
    let (server, _api) = populate(0, 0).await;
    let p = Proc::spawn(&server, role, "r0");
    wait_for(role, async || {
        p.reported() && (matches!(role, "plain" | "member") || p.status().sharder)
    })
    .await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let growth = p.status().growth();
    p.kill().await;
    server.shutdown().await;
    growth
}

async fn orchestrate(objects: usize, payload: usize, io: Duration) {
    let workers = WORKERS.get().copied().unwrap_or(4);
    eprintln!(
        "sharding benchmark: {objects} Widgets of {payload} payload bytes, {workers} workers per replica, {io:?} of server latency per request during the updates"
    );
    let roles = ["plain", "replica", "member", "sharder"];
    let mut fixed = std::collections::BTreeMap::new();
    for role in roles {
        fixed.insert(role, fixed_cost(role).await);
    }
    eprintln!(
        "  fixed cost (no Widget), MiB: {}",
        roles
            .map(|r| format!("{r} {:.1}", mib(fixed[r])))
            .join(", ")
    );
    let mut rows = Vec::new();
    for layout in [
        Layout::Plain,
        Layout::Replicas(1),
        Layout::Replicas(2),
        Layout::Replicas(4),
        Layout::Apart(2),
        Layout::Apart(4),
    ] {
        let row = run(layout, objects, payload, io).await;
        eprintln!(
            "  {}: sync {:?}, {:.0} reconciles/s",
            layout.label(),
            row.sync,
            row.throughput
        );
        rows.push(row);
    }
    // Cache memory: a process's growth less the fixed cost of its role.
    let cache = |growth: u64, role: &str| growth.saturating_sub(fixed[role]);
    let single = cache(rows[0].memory[0].1, "plain");
    println!(
        "\n| replicas | sync | reconciles/s (all) | RSS growth per replica (MiB) | live heap growth (MiB) | cache = RSS growth - fixed (MiB) | cache vs single/N | join handover | crash handover |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    for row in &rows {
        let n = row.layout.n();
        let mark = |sharder: bool, role: &str| match (role, sharder) {
            ("sharder", _) => " (sharder apart)",
            ("replica", true) => " (sharder)",
            _ => "",
        };
        let show = |f: &dyn Fn(u64, u64, &str) -> f64| -> String {
            row.memory
                .iter()
                .map(|(id, g, sharder, role, heap)| {
                    format!("{id} {:.1}{}", f(*g, *heap, role), mark(*sharder, role))
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        // The target counts every process that reconciles a shard; the sharder standing
        // beside its shard is shown too (it is one of the members).
        #[allow(clippy::cast_precision_loss)]
        let ratios: Vec<String> = row
            .memory
            .iter()
            .filter(|m| m.3 != "sharder")
            .map(|(id, g, sharder, role, _)| {
                let r = cache(*g, role) as f64 / (single as f64 / n as f64);
                format!("{id} {r:.2}x{}", mark(*sharder, role))
            })
            .collect();
        let opt =
            |d: Option<Duration>| d.map_or("-".to_owned(), |d| format!("{:.2} s", d.as_secs_f64()));
        println!(
            "| {} | {:.2} s | {:.0} | {} | {} | {} | {} | {} | {} |",
            row.layout.label(),
            row.sync.as_secs_f64(),
            row.throughput,
            show(&|g, _, _| mib(g)),
            show(&|_, heap, _| mib(heap)),
            show(&|g, _, role| mib(cache(g, role))),
            ratios.join(", "),
            opt(row.join),
            opt(row.crash)
        );
    }
    // Scale-out: each layout's throughput against the one sharded replica's, and the CPU
    // each process spent on the update phase.
    let one = rows
        .iter()
        .find(|r| r.layout == Layout::Replicas(1))
        .map_or(f64::NAN, |r| r.throughput);
    println!(
        "\n| replicas | reconciles/s (all) | vs 1 sharded replica | target 0.8 x N | CPU during the updates per process (s) |"
    );
    println!("|---|---|---|---|---|");
    for row in &rows {
        #[allow(clippy::cast_precision_loss)]
        let target = 0.8 * row.layout.n() as f64;
        let cpu: Vec<String> = row
            .cpu
            .iter()
            .map(|(id, d)| format!("{id} {:.2}", d.as_secs_f64()))
            .collect();
        println!(
            "| {} | {:.0} | {:.2}x | {target:.1}x | {} |",
            row.layout.label(),
            row.throughput,
            row.throughput / one,
            cpu.join(", ")
        );
    }
    println!(
        "\nfixed cost (no Widget), MiB: {}",
        roles
            .map(|r| format!("{r} {:.1}", mib(fixed[r])))
            .join(", ")
    );
    let empty = cache_probe(0, payload, "cache-full").await;
    let full = cache_probe(objects, payload, "cache-full").await;
    let meta = cache_probe(objects, payload, "cache-metadata").await;
    let (full, meta) = (full.saturating_sub(empty), meta.saturating_sub(empty));
    #[allow(clippy::cast_precision_loss)]
    let share = meta as f64 / full as f64;
    println!(
        "sharder's cache of every Widget (growth less an empty informer's, {:.1} MiB): full objects {:.1} MiB, metadata only {:.1} MiB ({:.0}%)",
        mib(empty),
        mib(full),
        mib(meta),
        share * 100.0
    );
}
