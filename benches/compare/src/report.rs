//! The tables printed from the sync scenarios' figures beyond the sync table: the burst of
//! changes to the cached pods, and the targets of issue #20 as ratios of one run.

use crate::ServerSide;
use crate::scenario::Figures;

/// One sync scenario's median run (sync and relist), and its median burst run (sync and a
/// burst of changes, in a process of its own).
pub struct Row {
    pub name: &'static str,
    pub figures: Figures,
    pub server: ServerSide,
    pub burst: Option<(Figures, ServerSide)>,
    /// Every run's sync figures, in the order the runs were made (run `i` of every scenario
    /// ran between runs `i - 1` and `i + 1` of the others).
    pub sync_runs: Vec<Figures>,
    /// Every run's burst figures, in the same order.
    pub burst_runs: Vec<Figures>,
}

/// Steady RSS per cached object, above the process's RSS before the client was built.
pub fn rss_per_obj(f: &Figures) -> f64 {
    f.rss_steady.saturating_sub(f.rss_base) as f64 / f.objects.max(1) as f64
}

/// Steady live heap per cached object.
pub fn heap_per_obj(f: &Figures) -> f64 {
    f.heap_steady.saturating_sub(f.heap_base) as f64 / f.objects.max(1) as f64
}

pub fn events_per_sec(f: &Figures) -> f64 {
    f.events.saturating_sub(1) as f64 / f.events_secs.max(1e-9)
}

fn cpu_us(f: &Figures) -> f64 {
    f.events_cpu_secs * 1e6 / f.events.max(1) as f64
}

/// A peak (or any RSS reading) above the base, over the steady RSS above the base.
fn over_steady_rss(f: &Figures, rss: u64) -> f64 {
    rss.saturating_sub(f.rss_base) as f64 / f.rss_steady.saturating_sub(f.rss_base).max(1) as f64
}

fn over_steady_heap(f: &Figures, heap: u64) -> f64 {
    heap.saturating_sub(f.heap_base) as f64
        / f.heap_steady.saturating_sub(f.heap_base).max(1) as f64
}

fn find<'a>(rows: &'a [Row], name: &str) -> Option<&'a Figures> {
    rows.iter().find(|r| r.name == name).map(|r| &r.figures)
}

/// The burst run of scenario `name`.
fn find_burst<'a>(rows: &'a [Row], name: &str) -> Option<&'a Figures> {
    rows.iter()
        .find(|r| r.name == name)
        .and_then(|r| r.burst.as_ref())
        .map(|b| &b.0)
}

/// The burst of `events` changes to the `pods` cached objects, one row per sync scenario.
pub fn burst_table(rows: &[Row], pods: usize, events: u64) {
    println!(
        "\n| burst scenario ({events} changes to {pods} cached {}) | events/s | x kube | client CPU µs/event | x kube | of it user µs | x kube | minor faults/event | allocs/event | peak burst / steady RSS | RSS after burst / steady | peak burst / steady heap | heap after burst / steady | max events in flight | server update s | server CPU µs/event |",
        crate::kind().noun()
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    let Some(kube) = find_burst(rows, "kube") else {
        return;
    };
    for (name, (f, server)) in rows
        .iter()
        .filter_map(|r| Some((r.name, r.burst.as_ref()?)))
    {
        let user_us = |f: &Figures| f.events_user_secs * 1e6 / f.events.max(1) as f64;
        println!(
            "| {name} | {:.0} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.0} | {:.2} ({:.0} MB) | {:.2} | {:.2} ({:.0} MB) | {:.2} | {} | {:.2} | {:.2} |",
            events_per_sec(f),
            events_per_sec(f) / events_per_sec(kube),
            cpu_us(f),
            cpu_us(f) / cpu_us(kube),
            user_us(f),
            user_us(f) / user_us(kube),
            f.events_minor_faults as f64 / f.events.max(1) as f64,
            f.events_allocs as f64 / f.events.max(1) as f64,
            over_steady_rss(f, f.peak_burst),
            crate::mb(f.peak_burst.saturating_sub(f.rss_base)),
            over_steady_rss(f, f.rss_after_burst),
            over_steady_heap(f, f.heap_peak_burst),
            crate::mb(f.heap_peak_burst.saturating_sub(f.heap_base)),
            over_steady_heap(f, f.heap_after_burst),
            match f.burst_max_in_flight {
                0 => "-".to_owned(),
                n => format!("{n} (+{} pending)", f.burst_max_pending),
            },
            server.update_secs,
            server.update_cpu_secs * 1e6 / f.events.max(1) as f64,
        );
    }
}

/// Whether a scenario keeps managedFields (its floor is then the full pod's).
fn keeps_managed_fields(name: &str) -> bool {
    name.contains("keep-mf") || name.starts_with("kube") && !name.contains("drop-mf")
}

/// The decode floors, then every burst's client CPU and allocations per event over the
/// simd-json floor of the same bytes (managedFields kept or not, as the scenario keeps them).
pub fn floor_table(rows: &[Row], floors: &[crate::decode_floor::Floor]) {
    println!(
        "\n| decode floor (pod bytes -> Pod -> dropped, one thread) | JSON bytes/pod | CPU µs/pod | allocs/pod |"
    );
    println!("|---|---|---|---|");
    for f in floors {
        let mf = if f.managed_fields {
            "managedFields kept"
        } else {
            "managedFields cut out of the bytes"
        };
        println!(
            "| {}, {mf} | {:.0} | {:.2} | {:.0} |",
            f.name, f.bytes, f.cpu_us, f.allocs
        );
    }
    let simd = |mf: bool| {
        floors
            .iter()
            .find(|f| f.name == "simd-json" && f.managed_fields == mf)
    };
    println!(
        "\n| burst scenario over the decode floor | client CPU µs/event | x simd-json floor | allocs/event | x floor's allocs/pod |"
    );
    println!("|---|---|---|---|---|");
    for (name, (f, _)) in rows
        .iter()
        .filter_map(|r| Some((r.name, r.burst.as_ref()?)))
    {
        let Some(floor) = simd(keeps_managed_fields(name)) else {
            continue;
        };
        let allocs = f.events_allocs as f64 / f.events.max(1) as f64;
        println!(
            "| {name} | {:.2} | {:.2} | {allocs:.0} | {:.2} |",
            cpu_us(f),
            cpu_us(f) / floor.cpu_us,
            allocs / floor.allocs.max(1.0),
        );
    }
}

/// The row a target's figures are ratios against: kube-rs's paged default.
const KUBE: fn(&'static str) -> &'static str = |_| "kube";

/// The scenario's own row: for a figure read from its run alone (a peak over its steady RSS).
const OWN: fn(&'static str) -> &'static str = |scenario| scenario;

/// The default cache in a lean scenario's list mode, which the lean cache's CPU is set
/// against.
const DEFAULT_CACHE: fn(&'static str) -> &'static str = |lean| {
    if lean == "kinform-lean-paged" {
        "kinform-paged"
    } else {
        "kinform-streaming"
    }
};

/// One line of the targets table: `figure(scenario, against(scenario))` for each scenario
/// (of their burst runs if `burst`), and whether every one meets the goal (`recorded` and
/// `-` for a figure without one).
fn target(
    rows: &[Row],
    label: &str,
    goal: Option<Goal>,
    scenarios: &[&'static str],
    against: fn(&'static str) -> &'static str,
    burst: bool,
    figure: impl Fn(&Figures, &Figures) -> Option<f64>,
) {
    let pick = |n: &str| {
        if burst {
            find_burst(rows, n)
        } else {
            find(rows, n)
        }
    };
    let runs = |n: &str| {
        rows.iter().find(|r| r.name == n).map_or(&[][..], |r| {
            if burst { &r.burst_runs } else { &r.sync_runs }
        })
    };
    let values: Vec<(&str, f64)> = scenarios
        .iter()
        .filter_map(|n| Some((*n, figure(pick(n)?, pick(against(n))?)?)))
        .collect();
    if values.is_empty() {
        return;
    }
    let shown: Vec<String> = values
        .iter()
        .map(|(n, v)| {
            // With several runs, the spread of the figure over them, run `i` against the
            // baseline's run `i` (the same stretch of the machine's load).
            let each: Vec<f64> = runs(n)
                .iter()
                .zip(runs(against(n)))
                .filter_map(|(f, k)| figure(f, k))
                .collect();
            let (lo, hi) = each
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
                    (lo.min(*v), hi.max(*v))
                });
            if each.len() > 1 {
                format!("{n} {v:.2}x (runs {lo:.2}-{hi:.2})")
            } else {
                format!("{n} {v:.2}x")
            }
        })
        .collect();
    let (goal, verdict) = match goal {
        Some((goal, met)) if values.iter().all(|(_, v)| met(*v)) => (goal, "yes"),
        Some((goal, _)) => (goal, "no"),
        None => ("recorded", "-"),
    };
    println!("| {label} | {goal} | {} | {verdict} |", shown.join(", "));
}

const DEFAULTS: &[&str] = &["kinform-streaming", "kinform-paged"];
const KEEP_MF: &[&str] = &["kinform-keep-mf", "kinform-paged-keep-mf"];
const ALL: &[&str] = &[
    "kinform-streaming",
    "kinform-paged",
    "kinform-keep-mf",
    "kinform-paged-keep-mf",
];

const LEAN: &[&str] = &["kinform-lean", "kinform-lean-paged"];

/// Which peak of a run a target reads.
type Peak = fn(&Figures) -> u64;

/// A target's goal: as the table states it, and the test of a figure against it.
type Goal = (&'static str, fn(f64) -> bool);

/// The goals of issue #20.
const THIRD: Goal = ("<= 0.33", |v| v <= 1.0 / 3.0);
const THRICE: Goal = (">= 3", |v| v >= 3.0);
const PEAK: Goal = ("<= 1.2", |v| v <= 1.2);
const LEAN_RSS: Goal = ("<= 0.3", |v| v <= 0.3);
const NO_WORSE: Goal = ("<= 1", |v| v <= 1.0);

/// Issue #20's targets, per pod count, as ratios of this run: each scenario's median run
/// against its baseline's median run (kube-rs's, or for the lean cache's CPU the default
/// cache's; the two medians are chosen apart, so they may come from different rounds) and,
/// with several runs, the range of the same ratio over the rounds, round `i` against the
/// baseline's round `i`. The verdict reads the medians.
pub fn targets_table(sizes: &[(usize, Vec<Row>)]) {
    for (pods, rows) in sizes {
        if find(rows, "kube").is_none() || find_burst(rows, "kube").is_none() {
            continue;
        }
        println!(
            "\n| target ({pods} {}; x kube = against kube-rs's paged default, managedFields kept) | goal | measured | met |",
            crate::kind().noun()
        );
        println!("|---|---|---|---|");
        for (options, scenarios) in [("defaults", DEFAULTS), ("managedFields kept", KEEP_MF)] {
            target(
                rows,
                &format!("client CPU per watch event x kube, {options}"),
                Some(THIRD),
                scenarios,
                KUBE,
                true,
                |f, kube| Some(cpu_us(f) / cpu_us(kube)),
            );
        }
        target(
            rows,
            "watch events/s x kube, both list modes",
            Some(THRICE),
            ALL,
            KUBE,
            true,
            |f, kube| Some(events_per_sec(f) / events_per_sec(kube)),
        );
        // The issue puts managedFields kept on CPU per event alone; the sync with it kept is
        // shown beside the target, not counted in it.
        for (options, scenarios, goal) in [
            ("defaults", DEFAULTS, Some(THIRD)),
            ("managedFields kept", KEEP_MF, None),
        ] {
            target(
                rows,
                &format!("sync time x kube, {options}"),
                goal,
                scenarios,
                KUBE,
                false,
                |f, kube| Some(f.sync_secs / kube.sync_secs),
            );
        }
        let peaks: [(&str, bool, Peak); 3] = [
            ("the burst", true, |f| f.peak_burst),
            ("the sync", false, |f| f.peak_sync),
            ("a relist", false, |f| f.peak_relist),
        ];
        for (phase, burst, peak) in peaks {
            target(
                rows,
                &format!("peak RSS during {phase} / steady RSS"),
                Some(PEAK),
                ALL,
                OWN,
                burst,
                |f, _| Some(over_steady_rss(f, peak(f))),
            );
        }
        target(
            rows,
            "lean cache: steady RSS per object x kube",
            Some(LEAN_RSS),
            LEAN,
            KUBE,
            false,
            |f, kube| Some(rss_per_obj(f) / rss_per_obj(kube)),
        );
        target(
            rows,
            "lean cache: client CPU per watch event x the default cache's, same list mode",
            Some(NO_WORSE),
            LEAN,
            DEFAULT_CACHE,
            true,
            |f, default| Some(cpu_us(f) / cpu_us(default)),
        );
        for (meta, full, mode) in [
            ("kinform-meta", "kinform-streaming", "streaming"),
            ("kinform-meta-paged", "kinform-paged", "paged"),
        ] {
            println!(
                "| metadata-only informer x the full one ({mode}, managedFields dropped) | recorded | {} | - |",
                metadata_ratios(rows, meta, full)
            );
        }
    }
}

/// The metadata-only informer's figures over the full informer's, in the same list mode.
fn metadata_ratios(rows: &[Row], meta: &str, full: &str) -> String {
    let (Some(m), Some(f)) = (find(rows, meta), find(rows, full)) else {
        return "not run".into();
    };
    let mut out = format!(
        "steady RSS/obj {:.0} B ({:.2}x), live heap/obj {:.0} B ({:.2}x), sync time {:.2}x",
        rss_per_obj(m),
        rss_per_obj(m) / rss_per_obj(f),
        heap_per_obj(m),
        heap_per_obj(m) / heap_per_obj(f),
        m.sync_secs / f.sync_secs,
    );
    if let (Some(m), Some(f)) = (find_burst(rows, meta), find_burst(rows, full)) {
        out += &format!(
            ", CPU per event {:.2} µs ({:.2}x), events/s {:.2}x, peak burst / steady RSS {:.2}",
            cpu_us(m),
            cpu_us(m) / cpu_us(f),
            events_per_sec(m) / events_per_sec(f),
            over_steady_rss(m, m.peak_burst),
        );
    }
    out
}
