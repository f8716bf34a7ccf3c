//! What every client scenario reports, and the shared measuring steps (sync, settle,
//! relist, watch burst) written once for both libraries.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::rss::{Sampler, rss, status};

/// One scenario's figures, printed as one `RESULT` line.
#[derive(Default, Debug, serde::Serialize, serde::Deserialize)]
pub struct Figures {
    pub objects: u64,
    pub sync_secs: f64,
    /// CPU time of the client process (all its threads) over the sync.
    pub sync_cpu_secs: f64,
    pub rss_base: u64,
    pub heap_base: u64,
    pub heap_steady: u64,
    pub rss_steady: u64,
    pub peak_sync: u64,
    pub peak_relist: u64,
    /// Highest live heap during the sync, and during the relist.
    pub heap_peak_sync: u64,
    pub heap_peak_relist: u64,
    pub relist_secs: f64,
    pub events: u64,
    /// From the first handler call of a burst to the last (the floor: its whole decode).
    pub events_secs: f64,
    /// CPU time of the client process from just before the burst is served to the last
    /// event (all its threads; the RSS sampler is paused).
    pub events_cpu_secs: f64,
    /// The user-space part of `events_cpu_secs`.
    pub events_user_secs: f64,
    /// Minor page faults of the client process over the same span.
    pub events_minor_faults: u64,
}

impl Figures {
    /// The figures of `events` watch events received in `secs`, with the process's CPU and
    /// page faults since `before`.
    pub fn burst(events: u64, secs: f64, before: &crate::rss::Usage) -> Self {
        let after = crate::rss::usage();
        Figures {
            events,
            events_secs: secs,
            events_cpu_secs: after.cpu_secs - before.cpu_secs,
            events_user_secs: after.user_secs - before.user_secs,
            events_minor_faults: after.minor_faults - before.minor_faults,
            ..Figures::default()
        }
    }
}

/// A handler's calls: how many, and the first and last instants.
pub struct Counter {
    n: AtomicU64,
    first: AtomicU64,
    last: AtomicU64,
    epoch: Instant,
}

impl Default for Counter {
    fn default() -> Self {
        Self {
            n: AtomicU64::new(0),
            first: AtomicU64::new(u64::MAX),
            last: AtomicU64::new(0),
            epoch: Instant::now(),
        }
    }
}

impl Counter {
    pub fn hit(&self) {
        let t = self.epoch.elapsed().as_nanos() as u64;
        self.first.fetch_min(t, Ordering::Relaxed);
        self.last.fetch_max(t, Ordering::Relaxed);
        self.n.fetch_add(1, Ordering::Relaxed);
    }
    pub fn get(&self) -> u64 {
        self.n.load(Ordering::Relaxed)
    }
    fn first_instant(&self) -> Instant {
        self.epoch + Duration::from_nanos(self.first.load(Ordering::Relaxed))
    }
    fn last_instant(&self) -> Instant {
        self.epoch + Duration::from_nanos(self.last.load(Ordering::Relaxed))
    }
}

/// Hooks a library gives the common steps.
pub trait Client {
    /// Starts syncing; resolves when the cache holds the initial list.
    fn synced(&self) -> impl Future<Output = u64>;
    /// Completed initial lists (1 after the first sync).
    fn lists(&self) -> u64;
    /// Whether everything received so far is applied (queues empty).
    fn idle(&self) -> bool;
}

async fn settle() {
    tokio::time::sleep(Duration::from_millis(500)).await;
}

/// Sync, steady RSS, then a relist forced by the server (compaction + dropped watches).
pub async fn sync_and_relist<C: Client>(base: u64, sampler: &Sampler, c: &C) -> Figures {
    let cpu_before = crate::rss::cpu_secs();
    let start = Instant::now();
    let objects = c.synced().await;
    let sync_secs = start.elapsed().as_secs_f64();
    let sync_cpu_secs = crate::rss::cpu_secs() - cpu_before;
    if std::env::var_os("KINFORM_COMPARE_SYNC_ONLY").is_some() {
        // For profiling the sync alone: no settle, no relist.
        return Figures {
            objects,
            sync_secs,
            sync_cpu_secs,
            ..Figures::default()
        };
    }
    while !c.idle() {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    settle().await;
    let peak_sync = sampler.take_peak().max(status().1);
    let heap_peak_sync = crate::heap::take_peak();
    let rss_steady = rss();
    let heap_steady = crate::heap::live();
    let _ = sampler.take_peak();
    println!("READY_RELIST");
    let start = Instant::now();
    while c.lists() < 2 {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "no relist within 2 minutes"
        );
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    while !c.idle() {
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    let relist_secs = start.elapsed().as_secs_f64();
    settle().await;
    let heap_peak_relist = crate::heap::take_peak();
    Figures {
        objects,
        sync_secs,
        sync_cpu_secs,
        rss_base: base,
        rss_steady,
        heap_base: crate::heap::base(),
        heap_steady,
        peak_sync,
        peak_relist: sampler.take_peak(),
        heap_peak_sync,
        heap_peak_relist,
        relist_secs,
        ..Figures::default()
    }
}

/// Waits for `n` handler calls after asking the server for a burst. The time is taken from
/// the first handler call to the last (`n - 1` events apart): the server starts serving
/// the held re-watch `HOLD` after it arrived, and it arrives only once the server has built
/// the burst's objects and ended the watches, some 0.1-0.2 s after READY_WATCH, a delay
/// that is neither library's.
pub async fn watch_burst(counter: &Arc<Counter>, n: u64, namespace: &str) -> Figures {
    let before = counter.get();
    assert_eq!(before, 0, "no ConfigMaps before the burst");
    // Let the watch opened after the initial list settle before the server ends it.
    settle().await;
    settle().await;
    println!("READY_WATCH {n} {namespace}");
    let start = Instant::now();
    // The client idles while the server holds the re-watch: start counting CPU just before.
    tokio::time::sleep(crate::server::HOLD - Duration::from_millis(100)).await;
    let usage = crate::rss::usage();
    while counter.get() < n {
        assert!(
            start.elapsed() < Duration::from_secs(300),
            "burst not received within 5 minutes"
        );
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let secs = (counter.last_instant() - counter.first_instant()).as_secs_f64();
    Figures::burst(n, secs, &usage)
}
