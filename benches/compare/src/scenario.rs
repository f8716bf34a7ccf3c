//! What every client scenario reports, and the shared measuring steps (sync, settle,
//! relist, watch burst) written once for both libraries.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::rss::{Sampler, rss, status};

/// One scenario's figures, printed as one `RESULT` line.
#[derive(Clone, Default, Debug, serde::Serialize, serde::Deserialize)]
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
    /// Heap allocations of the client process over the same span.
    #[serde(default)]
    pub events_allocs: u64,
    /// Sync scenarios' burst of changes to the cached objects (the `events*` fields above):
    /// the highest RSS (`VmHWM`, reset just before) and live heap during the burst, and
    /// both once the burst is applied and settled.
    pub peak_burst: u64,
    pub heap_peak_burst: u64,
    pub rss_after_burst: u64,
    pub heap_after_burst: u64,
    /// Where a burst's memory waits (`KINFORM_COMPARE_TRACE=1`, kinform only, sampled every
    /// 5 ms): the most events received by the reflector and not yet handled, and the most
    /// notifications waiting in the handler's buffer.
    pub burst_max_in_flight: u64,
    pub burst_max_pending: u64,
    /// The decode floors (`floor-decode` only).
    #[serde(default)]
    pub floors: Vec<crate::decode_floor::Floor>,
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
            events_allocs: after.allocs - before.allocs,
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
    /// The handler's calls for changes to cached objects (MODIFIED events).
    fn updates(&self) -> &Counter;
    /// Watch events received and notifications waiting in handler buffers, where the
    /// library says (for [`update_burst`]'s trace).
    fn queued(&self) -> Option<(u64, u64)> {
        None
    }
}

async fn settle() {
    tokio::time::sleep(Duration::from_millis(500)).await;
}

/// Sync, steady RSS, then either a relist forced by the server (compaction + dropped
/// watches) or, if `updates` > 0, a burst of that many changes to the cached objects (each
/// in a process of its own: with glibc malloc RSS never falls after a peak, so a phase run
/// after another would be measured against the first one's leftovers).
pub async fn sync_and_relist<C: Client>(
    base: u64,
    sampler: &Sampler,
    c: &C,
    updates: u64,
) -> Figures {
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
    let synced = Figures {
        objects,
        sync_secs,
        sync_cpu_secs,
        rss_base: base,
        rss_steady,
        heap_base: crate::heap::base(),
        heap_steady,
        peak_sync,
        heap_peak_sync,
        ..Figures::default()
    };
    if updates > 0 {
        return update_burst(sampler, c, updates).await.with(synced);
    }
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
    Figures {
        heap_peak_relist: crate::heap::take_peak(),
        peak_relist: sampler.take_peak(),
        relist_secs,
        ..synced
    }
}

impl Figures {
    /// These burst figures with the sync figures of `synced`.
    fn with(self, synced: Figures) -> Figures {
        Figures {
            events: self.events,
            events_secs: self.events_secs,
            events_cpu_secs: self.events_cpu_secs,
            events_user_secs: self.events_user_secs,
            events_minor_faults: self.events_minor_faults,
            events_allocs: self.events_allocs,
            peak_burst: self.peak_burst,
            heap_peak_burst: self.heap_peak_burst,
            rss_after_burst: self.rss_after_burst,
            heap_after_burst: self.heap_after_burst,
            burst_max_in_flight: self.burst_max_in_flight,
            burst_max_pending: self.burst_max_pending,
            ..synced
        }
    }
}

/// Resets this process's `VmHWM` to its current RSS (`/proc/self/clear_refs`, value 5), so
/// that `VmHWM` is then the exact peak of what follows, at no cost while it runs.
fn reset_hwm() {
    std::fs::write("/proc/self/clear_refs", "5").expect("reset VmHWM");
}

/// `n` changes to the cached objects, made by the server while it holds the client's
/// re-watch (see the server's `update` command) and then received at the client's speed.
/// CPU, page faults and allocations are taken from just before the server releases the
/// re-watch (after its writes; the client idles meanwhile) to the last handler call; the
/// RSS sampler is paused, its peak is `VmHWM`.
async fn update_burst<C: Client>(sampler: &Sampler, c: &C, n: u64) -> Figures {
    while !c.idle() {
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    let counter = c.updates();
    assert_eq!(counter.get(), 0, "no updates before the burst");
    settle().await;
    sampler.pause();
    reset_hwm();
    let _ = crate::heap::take_peak();
    let trace = std::env::var_os("KINFORM_COMPARE_TRACE").is_some();
    // CPU, faults and allocations are counted from when the server has made the changes
    // and is about to serve them (its GO on stdin; the client idles until then), so the
    // 1 ms polls of the wait below over the server's 15-25 s of writes are not charged to
    // the events.
    let go = std::thread::spawn(|| {
        let mut line = String::new();
        std::io::stdin()
            .read_line(&mut line)
            .expect("GO from the orchestrator");
        let usage = crate::rss::usage();
        println!("COUNTING");
        usage
    });
    println!("READY_UPDATES {n}");
    let start = Instant::now();
    let (mut max_in_flight, mut max_pending) = (0u64, 0u64);
    let received_before = c.queued().map_or(0, |q| q.0);
    // kinform's handler buffer coalesces notifications per key when the handler falls
    // behind (several changes to one pod may reach it as one call), so the burst is also
    // over once the reflector has received `n` events and everything is applied.
    let received = || {
        c.queued()
            .map_or(0, |q| q.0)
            .saturating_sub(received_before)
    };
    while !go.is_finished() {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let usage = go.join().expect("GO thread");
    while counter.get() < n && !(received() >= n && c.idle()) {
        assert!(
            start.elapsed() < Duration::from_secs(900),
            "burst of updates not received within 15 minutes"
        );
        if trace && let Some((received, pending)) = c.queued() {
            let handled = received_before + counter.get();
            max_in_flight = max_in_flight.max(received.saturating_sub(handled));
            max_pending = max_pending.max(pending);
        }
        tokio::time::sleep(Duration::from_millis(if trace { 5 } else { 1 })).await;
    }
    let secs = (counter.last_instant() - counter.first_instant()).as_secs_f64();
    let mut f = Figures::burst(n, secs, &usage);
    f.peak_burst = status().1;
    f.heap_peak_burst = crate::heap::take_peak();
    while !c.idle() {
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    settle().await;
    f.rss_after_burst = rss();
    f.heap_after_burst = crate::heap::live();
    f.burst_max_in_flight = max_in_flight;
    f.burst_max_pending = max_pending;
    f
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
