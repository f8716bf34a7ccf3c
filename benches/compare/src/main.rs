//! kinform vs kube-rs: time to synced, watch events per second and RSS per cached object,
//! measured in one run against one TestApiServer preloaded with realistic pods.
//!
//! `kinform-compare [PODS[,PODS...]] [EVENTS] [watch]` (defaults 10000 and 20000; several pod
//! counts run one after the other, one server each; EVENTS is both the ConfigMap watch burst
//! and the number of changes in each burst of changes to the cached pods; `watch` runs only
//! the watch scenarios; `KINFORM_COMPARE_RESOURCE=rollouts` runs the sync scenarios over a
//! custom resource instead of pods, see [`Kind`]) is the orchestrator: it
//! starts the server as a child process (`server PODS`), then runs every scenario as its own
//! child process (`client SCENARIO URL [EVENTS]`), so each library's RSS is read from a
//! fresh process (`/proc/self/status`: `VmRSS`, `VmHWM`, and a 2 ms `VmRSS` sampler for the
//! per-phase peaks) and allocator reuse between scenarios cannot blur the figures. Both
//! libraries run in the same binary, hence with the same global allocator (the system one).
//! Each client process has a 2-worker tokio runtime, as the server has.
//! `KINFORM_COMPARE_RUNS=N` runs every scenario N times, interleaved, and reports the run
//! with the median time of each (see [`runs`]); the targets table adds each ratio's range
//! over the N rounds. `kinform-compare page-touch` measures what a
//! page fault costs on the machine (see [`page_touch`]).

mod decode_floor;
mod heap;
mod lean_summary;
mod page_touch;
mod report;
mod rollout;
mod rss;
mod scenario;
mod server;
mod sides;

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use kinform::Lean;
use kinform::reflector::ListMode;

use rollout::{KubeRollout, Rollout};
use scenario::Figures;
use sides::{Kinform, Kube};

/// The kind of the objects the sync scenarios cache, from `KINFORM_COMPARE_RESOURCE`
/// (`pods`, the default, or `rollouts`), read by every process of a run alike.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// The server's realistic pods (k8s-openapi's `Pod` on both sides).
    Pods,
    /// Argo Rollouts' `Rollout` custom resource (module `rollout`): kinform-gen's type for
    /// kinform, kopium's for kube-rs. The ConfigMap watch scenarios and the pod decode floor
    /// do not run.
    Rollouts,
}

impl Kind {
    /// The objects' name in the tables' headers.
    pub fn noun(self) -> &'static str {
        match self {
            Kind::Pods => "pods",
            Kind::Rollouts => "Rollouts",
        }
    }
    /// The `apiVersion` and `kind` of the objects.
    pub fn api_version_kind(self) -> (&'static str, &'static str) {
        match self {
            Kind::Pods => ("v1", "Pod"),
            Kind::Rollouts => ("argoproj.io/v1alpha1", "Rollout"),
        }
    }
    /// The objects' list path, all namespaces.
    pub fn list_path(self) -> &'static str {
        match self {
            Kind::Pods => "/api/v1/pods",
            Kind::Rollouts => "/apis/argoproj.io/v1alpha1/rollouts",
        }
    }
}

pub fn kind() -> Kind {
    match std::env::var("KINFORM_COMPARE_RESOURCE").as_deref() {
        Err(_) | Ok("pods") => Kind::Pods,
        Ok("rollouts") => Kind::Rollouts,
        Ok(other) => panic!("KINFORM_COMPARE_RESOURCE={other}: expected `pods` or `rollouts`"),
    }
}

/// A 2-worker runtime whose threads are named after their role (`server` or `client`), so a
/// profile of a whole run (`perf record` over the orchestrator) separates the processes.
pub fn runtime(role: &str) -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name(role)
        .enable_all()
        .build()
        .expect("runtime")
}

const SYNC: &[(&str, &str)] = &[
    (
        "floor-sync",
        "serde_json::from_slice of the whole list into Vec<K> (K: the objects' type, see `Kind`), one thread",
    ),
    (
        "kinform-paged",
        "kinform informer, paged LIST (500), managedFields dropped (default)",
    ),
    (
        "kinform-streaming",
        "kinform informer, streaming list, managedFields dropped (default)",
    ),
    (
        "kinform-keep-mf",
        "kinform informer, streaming list, managedFields kept",
    ),
    (
        "kinform-paged-keep-mf",
        "kinform informer, paged LIST (500), managedFields kept",
    ),
    (
        "kinform-meta",
        "kinform metadata-only informer (PartialObjectMetadata), streaming list, managedFields dropped",
    ),
    (
        "kinform-meta-paged",
        "kinform metadata-only informer (PartialObjectMetadata), paged LIST (500), managedFields dropped",
    ),
    (
        "kinform-lean",
        "kinform informer of Lean<K> (the lean cache), streaming list, managedFields dropped",
    ),
    (
        "kinform-lean-paged",
        "kinform informer of Lean<K> (the lean cache), paged LIST (500), managedFields dropped",
    ),
    (
        "kinform-lean-keep-mf",
        "kinform informer of Lean<K> (the lean cache), streaming list, managedFields kept",
    ),
    (
        "kube",
        "kube-rs watcher + reflector store, paged LIST (500) (its default)",
    ),
    (
        "kube-streaming",
        "kube-rs watcher + reflector store, streaming list",
    ),
    (
        "kube-drop-mf",
        "kube-rs watcher.modify(drop managedFields) + reflector store, paged",
    ),
];

/// Pods the decode floor (`floor-decode`) decodes.
const FLOOR_PODS: usize = 2000;

const WATCH: &[(&str, &str)] = &[
    (
        "kinform-watch",
        "kinform: watch -> reflector -> DeltaFIFO -> store -> 1 handler",
    ),
    (
        "kinform-lean-watch",
        "kinform, lean cache (Lean<ConfigMap>): watch -> reflector -> DeltaFIFO -> store -> 1 handler",
    ),
    (
        "kube-watch",
        "kube-rs: watcher -> reflector store -> stream consumer",
    ),
    (
        "floor-watch",
        "serde_json decode of the kinform-watch burst's lines, one thread",
    ),
];

fn main() {
    let args: Vec<String> = std::env::args().collect();
    match args.get(1).map(String::as_str) {
        Some("server") => server::run(args[2].parse().expect("pods")),
        Some("page-touch") => page_touch::run(),
        Some("client") => {
            let events: u64 = args.get(4).and_then(|a| a.parse().ok()).unwrap_or(0);
            let namespace = args.get(5).map_or(args[2].as_str(), String::as_str);
            let figures = client(&args[2], &args[3], events, namespace);
            println!("RESULT {}", serde_json::to_string(&figures).unwrap());
        }
        _ => {
            // One size or several, comma-separated (`10000,100000`): one server per size.
            let pods: Vec<usize> = args
                .get(1)
                .map(|a| a.split(',').map(|p| p.parse().expect("pods")).collect())
                .unwrap_or_else(|| vec![10_000]);
            let events: u64 = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(20_000);
            let watch_only = args.get(3).is_some_and(|a| a == "watch");
            orchestrate(pods, events, watch_only);
        }
    }
}

/// Runs one scenario; the watch scenarios watch (and the server bursts into) `namespace`.
fn client(scenario: &str, url: &str, events: u64, namespace: &str) -> Figures {
    let sampler = rss::Sampler::start();
    let rt = runtime("client");
    let base = rss::rss();
    heap::mark_base();
    let _ = heap::take_peak();
    let _ = sampler.take_peak();
    // A sync scenario: sync, relist, then a burst of `events` changes to the cached pods.
    macro_rules! sync {
        ($client:expr) => {
            scenario::sync_and_relist(base, &sampler, &$client, events).await
        };
    }
    // The sync scenarios, over `$k` on kinform's side and `$kube` on kube-rs's.
    macro_rules! sync_scenarios {
        ($k:ty, $kube:ty) => {
            match scenario {
                "floor-sync" => Some(sides::floor_sync::<$k>(url, kind().list_path()).await),
                "kinform-paged" => {
                    Some(sync!(Kinform::<$k>::new(url, None, ListMode::Paged, false)))
                }
                "kinform-streaming" => {
                    Some(sync!(Kinform::<$k>::new(url, None, ListMode::Auto, false)))
                }
                "kinform-keep-mf" => {
                    Some(sync!(Kinform::<$k>::new(url, None, ListMode::Auto, true)))
                }
                "kinform-paged-keep-mf" => {
                    Some(sync!(Kinform::<$k>::new(url, None, ListMode::Paged, true)))
                }
                "kinform-meta" => Some(sync!(Kinform::metadata::<$k>(url, ListMode::Auto, false))),
                "kinform-meta-paged" => {
                    Some(sync!(Kinform::metadata::<$k>(url, ListMode::Paged, false)))
                }
                "kinform-lean" => Some(sync!(Kinform::<Lean<$k>>::new(
                    url,
                    None,
                    ListMode::Auto,
                    false
                ))),
                "kinform-lean-paged" => Some(sync!(Kinform::<Lean<$k>>::new(
                    url,
                    None,
                    ListMode::Paged,
                    false
                ))),
                "kinform-lean-keep-mf" => Some(sync!(Kinform::<Lean<$k>>::new(
                    url,
                    None,
                    ListMode::Auto,
                    true
                ))),
                "kube" => Some(sync!(Kube::<$kube>::new(url, None, false, false))),
                "kube-streaming" => Some(sync!(Kube::<$kube>::new(url, None, true, false))),
                "kube-drop-mf" => Some(sync!(Kube::<$kube>::new(url, None, false, true))),
                _ => None,
            }
        };
    }
    rt.block_on(async {
        use scenario::watch_burst as burst;
        let synced = match kind() {
            Kind::Pods => sync_scenarios!(Pod, Pod),
            Kind::Rollouts => sync_scenarios!(Rollout, KubeRollout),
        };
        if let Some(figures) = synced {
            return figures;
        }
        match scenario {
            "floor-decode" => {
                sampler.pause();
                Figures {
                    floors: decode_floor::run(url, events as usize).await,
                    ..Figures::default()
                }
            }
            "floor-watch" => {
                sampler.pause();
                sides::floor_watch(url, events as usize).await
            }
            "kinform-watch" => {
                sampler.pause();
                let k = Kinform::<ConfigMap>::new(url, Some(namespace), ListMode::Auto, false);
                scenario::Client::synced(&k).await;
                let f = burst(&k.counter, events, namespace).await;
                eprintln!("{:?}", k.metrics());
                f
            }
            "kinform-lean-watch" => {
                sampler.pause();
                let k =
                    Kinform::<Lean<ConfigMap>>::new(url, Some(namespace), ListMode::Auto, false);
                scenario::Client::synced(&k).await;
                burst(&k.counter, events, namespace).await
            }
            "kube-watch" => {
                sampler.pause();
                let k = Kube::<ConfigMap>::new(url, Some(namespace), false, false);
                scenario::Client::synced(&k).await;
                burst(&k.counter, events, namespace).await
            }
            other => panic!("unknown scenario {other}"),
        }
    })
}

struct Proc {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Proc {
    fn spawn(args: &[&str]) -> Self {
        let mut child = Command::new(std::env::current_exe().expect("exe"))
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("spawn");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Self {
            child,
            stdin,
            stdout,
        }
    }
    fn line(&mut self) -> String {
        let mut l = String::new();
        self.stdout.read_line(&mut l).expect("read");
        assert!(!l.is_empty(), "child ended early");
        l.trim().to_owned()
    }
    /// The server's CPU seconds so far (its `cpu` command).
    fn cpu_secs(&mut self) -> f64 {
        let l = self.say("cpu");
        l.strip_prefix("CPU ").unwrap().parse().unwrap()
    }
    fn say(&mut self, l: &str) -> String {
        writeln!(self.stdin, "{l}").unwrap();
        self.stdin.flush().unwrap();
        self.line()
    }
}

/// What the server process spent on one client scenario.
pub struct ServerSide {
    /// How long creating the burst's objects took (watch scenarios).
    pub create_secs: f64,
    /// CPU seconds the server used serving the sync (from the client's start to its
    /// READY_RELIST) or the burst (from the end of its creation to the client's RESULT).
    pub cpu_secs: f64,
    /// How long making a sync scenario's burst of changes took, and the server's CPU from
    /// its end to the client's RESULT (serving the changes).
    pub update_secs: f64,
    pub update_cpu_secs: f64,
}

fn run_client(
    server: &mut Proc,
    scenario: &str,
    url: &str,
    events: u64,
    namespace: &str,
) -> (Figures, ServerSide) {
    let args = ["client", scenario, url, &events.to_string(), namespace];
    let mut cpu_start = server.cpu_secs();
    let mut side = ServerSide {
        create_secs: 0.0,
        cpu_secs: 0.0,
        update_secs: 0.0,
        update_cpu_secs: 0.0,
    };
    let mut update_cpu_start = None;
    let mut c = Proc::spawn(&args);
    loop {
        let l = c.line();
        if l == "READY_RELIST" {
            side.cpu_secs = server.cpu_secs() - cpu_start;
            assert_eq!(server.say("relist"), "OK");
        } else if let Some(rest) = l.strip_prefix("READY_WATCH ") {
            let b = server.say(&format!("burst {rest}"));
            side.create_secs = b.strip_prefix("BURST ").unwrap().parse().unwrap();
            cpu_start = server.cpu_secs();
        } else if let Some(n) = l.strip_prefix("READY_UPDATES ") {
            let u = server.say(&format!("update {n}"));
            side.update_secs = u.strip_prefix("UPDATES ").unwrap().parse().unwrap();
            // The client takes its CPU figures now (it answers COUNTING), then the server
            // serves the held re-watches.
            writeln!(c.stdin, "GO").unwrap();
            c.stdin.flush().unwrap();
        } else if l == "COUNTING" {
            update_cpu_start = Some(server.cpu_secs());
            assert_eq!(server.say("release"), "OK");
        } else if let Some(json) = l.strip_prefix("RESULT ") {
            let f: Figures = serde_json::from_str(json).unwrap();
            eprintln!("{scenario}: {f:?}");
            let _ = c.child.wait();
            if let Some(start) = update_cpu_start {
                side.update_cpu_secs = server.cpu_secs() - start;
            }
            if side.cpu_secs == 0.0 {
                side.cpu_secs = server.cpu_secs() - cpu_start;
            }
            return (f, side);
        }
    }
}

/// Whether `KINFORM_COMPARE_ONLY` (comma-separated scenario names; unset runs every one)
/// selects `scenario`. The ratio columns need the floor and kube rows, so a partial run is for
/// profiling one library, not for BENCHMARKS.md.
fn selected(scenario: &str) -> bool {
    std::env::var("KINFORM_COMPARE_ONLY")
        .map(|only| only.split(',').any(|s| s.trim() == scenario))
        .unwrap_or(true)
}

/// Runs of every scenario (`KINFORM_COMPARE_RUNS`, default 1). The runs are interleaved
/// (every scenario once, then again), and each row reports the run with the median time, so
/// that one slow moment of a noisy machine moves no ratio.
fn runs() -> usize {
    std::env::var("KINFORM_COMPARE_RUNS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(1)
        .max(1)
}

/// The run with the median `key`.
fn median<T>(mut runs: Vec<T>, key: impl Fn(&T) -> f64) -> T {
    runs.sort_by(|a, b| key(a).total_cmp(&key(b)));
    runs.swap_remove(runs.len() / 2)
}

/// The Kubernetes version k8s-openapi was built for (`K8S_OPENAPI_ENABLED_VERSION`): both
/// libraries' types, and kinform's in-place decoders, are that version's.
fn k8s_version() -> &'static str {
    k8s_openapi::k8s_if_1_35! { return "1.35"; }
    k8s_openapi::k8s_if_1_36! { return "1.36"; }
    k8s_openapi::k8s_if_1_37! { return "1.37"; }
    #[allow(unreachable_code)]
    "other than 1.35 to 1.37"
}

pub fn mb(b: u64) -> f64 {
    b as f64 / 1e6
}

fn orchestrate(sizes: Vec<usize>, events: u64, watch_only: bool) {
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let kind = kind();
    println!(
        "kinform-compare: {sizes:?} {}, {events} watch events and changes per burst, median of {} run(s); k8s-openapi built for Kubernetes {}; load average {}",
        kind.noun(),
        runs(),
        k8s_version(),
        load.trim()
    );
    let mut targets = Vec::new();
    for (i, &pods) in sizes.iter().enumerate() {
        let mut server = Proc::spawn(&["server", &pods.to_string()]);
        let url = server
            .line()
            .strip_prefix("URL ")
            .expect("URL line")
            .to_owned();
        if !watch_only {
            let rows = sync_table(&mut server, &url, pods, events);
            report::burst_table(&rows, pods, events);
            if kind == Kind::Pods && selected("floor-decode") {
                let n = FLOOR_PODS.min(pods) as u64;
                let (f, _) = run_client(&mut server, "floor-decode", &url, n, "floor-decode");
                report::floor_table(&rows, &f.floors);
            }
            targets.push((pods, rows));
        }
        // The ConfigMap watch burst does not depend on the cached objects: once, on the
        // first server of a pod run.
        if i == 0 && kind == Kind::Pods {
            watch_table(&mut server, &url, events);
        }
        let _ = writeln!(server.stdin, "quit");
        let _ = server.child.wait();
    }
    report::targets_table(&targets);
    lean_summary::print(&targets);
    println!("\nscenarios:");
    println!(
        "- floor-decode: the first {FLOOR_PODS} pods' bytes decoded into Pod and dropped, one thread (serde_json, simd-json; managedFields kept and cut out of the bytes)"
    );
    for (n, d) in SYNC.iter().chain(WATCH) {
        println!("- {n}: {d}");
    }
}

/// Runs the sync scenarios (each: sync, relist, a burst of `events` changes to the cached
/// pods), prints the sync table and answers each scenario's median run.
fn sync_table(server: &mut Proc, url: &str, pods: usize, events: u64) -> Vec<report::Row> {
    println!(
        "\n| sync scenario ({pods} {}) | sync s | x floor | x kube | sync CPU s | steady RSS/obj | x kube | live heap/obj | x kube | peak sync / steady RSS | peak relist / steady RSS | peak sync / steady heap | peak relist / steady heap | server CPU s |",
        kind().noun()
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    let names: Vec<&str> = SYNC.iter().map(|s| s.0).filter(|n| selected(n)).collect();
    let mut all: Vec<Vec<(Figures, ServerSide)>> = names.iter().map(|_| Vec::new()).collect();
    let mut bursts: Vec<Vec<(Figures, ServerSide)>> = names.iter().map(|_| Vec::new()).collect();
    for _ in 0..runs() {
        for ((name, figures), burst) in names.iter().zip(&mut all).zip(&mut bursts) {
            figures.push(run_client(server, name, url, 0, name));
            if *name != "floor-sync" && events > 0 {
                burst.push(run_client(server, name, url, events, name));
            }
        }
    }
    let results: Vec<report::Row> = names
        .into_iter()
        .zip(all)
        .zip(bursts)
        .map(|((n, runs), bursts)| {
            let sync_runs = runs.iter().map(|r| r.0.clone()).collect();
            let burst_runs = bursts.iter().map(|r| r.0.clone()).collect();
            let (f, s) = median(runs, |r| r.0.sync_secs);
            let burst =
                (!bursts.is_empty()).then(|| median(bursts, |r| report::events_per_sec(&r.0)));
            report::Row {
                name: n,
                figures: f,
                server: s,
                burst,
                sync_runs,
                burst_runs,
            }
        })
        .collect();
    let row = |n: &str| {
        &results
            .iter()
            .find(|r| r.name == n)
            .unwrap_or(&results[0])
            .figures
    };
    let floor = row("floor-sync").sync_secs;
    let kube = row("kube");
    let kube_secs = kube.sync_secs;
    let kube_obj = report::rss_per_obj(kube);
    let kube_heap = report::heap_per_obj(kube);
    for report::Row {
        name,
        figures: f,
        server: side,
        ..
    } in &results
    {
        if *name == "floor-sync" {
            println!(
                "| {name} | {:.3} | 1.00 | {:.2} | {:.2} | - | - | - | - | - | - | - | - | {:.2} |",
                f.sync_secs,
                f.sync_secs / kube_secs,
                f.sync_cpu_secs,
                side.cpu_secs
            );
            continue;
        }
        let steady = f.rss_steady.saturating_sub(f.rss_base).max(1) as f64;
        let heap_steady = f.heap_steady.saturating_sub(f.heap_base).max(1) as f64;
        let heap_ratio = |p: u64| p.saturating_sub(f.heap_base) as f64 / heap_steady;
        println!(
            "| {name} | {:.3} | {:.2} | {:.2} | {:.2} | {:.0} B | {:.2} | {:.0} B | {:.2} | {:.2} ({:.0}/{:.0} MB) | {:.2} ({:.0} MB, {:.2} s) | {:.2} ({:.0} MB) | {:.2} ({:.0} MB) | {:.2} |",
            f.sync_secs,
            f.sync_secs / floor,
            f.sync_secs / kube_secs,
            f.sync_cpu_secs,
            report::rss_per_obj(f),
            report::rss_per_obj(f) / kube_obj,
            report::heap_per_obj(f),
            report::heap_per_obj(f) / kube_heap,
            f.peak_sync.saturating_sub(f.rss_base) as f64 / steady,
            mb(f.peak_sync.saturating_sub(f.rss_base)),
            steady / 1e6,
            f.peak_relist.saturating_sub(f.rss_base) as f64 / steady,
            mb(f.peak_relist.saturating_sub(f.rss_base)),
            f.relist_secs,
            heap_ratio(f.heap_peak_sync),
            mb(f.heap_peak_sync.saturating_sub(f.heap_base)),
            heap_ratio(f.heap_peak_relist),
            mb(f.heap_peak_relist.saturating_sub(f.heap_base)),
            side.cpu_secs,
        );
    }
    results
}

/// One watch run's figures, per event where it says so.
struct WatchRun {
    events_per_sec: f64,
    cpu_us: f64,
    user_us: f64,
    minor_faults: f64,
    server_create_secs: f64,
    server_cpu_us: f64,
}

fn watch_table(server: &mut Proc, url: &str, events: u64) {
    println!(
        "\n| watch scenario ({events} ConfigMap ADDED events) | events/s | x floor | x kube | client CPU µs/event | x kube | of it user µs | x kube | minor faults/event | server create s | server CPU µs/event |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    let names: Vec<&str> = WATCH.iter().map(|s| s.0).filter(|n| selected(n)).collect();
    if names.is_empty() {
        return;
    }
    let mut all: Vec<Vec<WatchRun>> = names.iter().map(|_| Vec::new()).collect();
    for run in 0..runs() {
        for (name, rows) in names.iter().zip(&mut all) {
            // Each run bursts into a namespace of its own (the floor decodes the first
            // burst's objects).
            let namespace = match run {
                0 => name.to_string(),
                _ => format!("{name}-{run}"),
            };
            let (f, side) = run_client(server, name, url, events, &namespace);
            let per_event = |x: f64| x / f.events.max(1) as f64;
            rows.push(WatchRun {
                events_per_sec: f.events.saturating_sub(1) as f64 / f.events_secs.max(1e-9),
                cpu_us: per_event(f.events_cpu_secs * 1e6),
                user_us: per_event(f.events_user_secs * 1e6),
                minor_faults: per_event(f.events_minor_faults as f64),
                server_create_secs: side.create_secs,
                server_cpu_us: per_event(side.cpu_secs * 1e6),
            });
        }
    }
    let w: Vec<(&str, WatchRun)> = names
        .into_iter()
        .zip(all)
        .map(|(n, runs)| (n, median(runs, |r| r.events_per_sec)))
        .collect();
    let row = |n: &str| &w.iter().find(|r| r.0 == n).unwrap_or(&w[0]).1;
    let floor_rate = row("floor-watch").events_per_sec;
    let kube = row("kube-watch");
    for (name, r) in &w {
        println!(
            "| {name} | {:.0} | {:.3} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.3} | {:.2} |",
            r.events_per_sec,
            r.events_per_sec / floor_rate,
            r.events_per_sec / kube.events_per_sec,
            r.cpu_us,
            r.cpu_us / kube.cpu_us,
            r.user_us,
            r.user_us / kube.user_us,
            r.minor_faults,
            r.server_create_secs,
            r.server_cpu_us,
        );
    }
}
