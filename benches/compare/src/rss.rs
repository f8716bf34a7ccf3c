//! Resident memory of this process, read from `/proc/self/status`, and a sampler thread that
//! keeps the highest `VmRSS` seen since its last reset (a peak per phase, which `VmHWM`
//! alone cannot give after the first phase).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

/// `(VmRSS, VmHWM)` in bytes.
pub fn status() -> (u64, u64) {
    let text = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        text.lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse::<u64>().ok())
            .map_or(0, |kb| kb * 1024)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// What `getrusage(RUSAGE_SELF)` says of this process (all its threads): CPU time (user +
/// system, microsecond precision) and minor page faults.
#[derive(Clone, Copy, Debug)]
pub struct Usage {
    pub cpu_secs: f64,
    /// The user-space part of `cpu_secs` (page faults and other kernel work excluded).
    pub user_secs: f64,
    pub minor_faults: u64,
    /// Allocations this process has made (the counting allocator of [`crate::heap`]).
    pub allocs: u64,
}

pub fn usage() -> Usage {
    // SAFETY: `getrusage` only writes the `rusage` it is given, which is a plain C struct
    // for which all-zero bytes are a valid value.
    let ru = unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut ru);
        ru
    };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    Usage {
        cpu_secs: secs(ru.ru_utime) + secs(ru.ru_stime),
        user_secs: secs(ru.ru_utime),
        minor_faults: ru.ru_minflt as u64,
        allocs: crate::heap::allocs(),
    }
}

/// CPU time (user + system) this process has used, in seconds.
pub fn cpu_secs() -> f64 {
    usage().cpu_secs
}

/// The current `VmRSS` in bytes.
pub fn rss() -> u64 {
    status().0
}

/// Samples `VmRSS` every 2 ms on its own thread.
pub struct Sampler {
    peak: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    paused: Arc<AtomicBool>,
}

impl Sampler {
    pub fn start() -> Self {
        let peak = Arc::new(AtomicU64::new(rss()));
        let stop = Arc::new(AtomicBool::new(false));
        let paused = Arc::new(AtomicBool::new(false));
        let (p, s, z) = (peak.clone(), stop.clone(), paused.clone());
        std::thread::spawn(move || {
            while !s.load(Ordering::Relaxed) {
                if !z.load(Ordering::Relaxed) {
                    p.fetch_max(rss(), Ordering::Relaxed);
                }
                std::thread::sleep(Duration::from_millis(2));
            }
        });
        Self { peak, stop, paused }
    }

    /// Stops sampling (reading `/proc/self/status` every 2 ms costs CPU that the watch
    /// scenarios, which report no RSS, would count against the library).
    pub fn pause(&self) {
        self.paused.store(true, Ordering::Relaxed);
    }

    /// The highest RSS since the last reset (sampled now too), then resets to the current RSS.
    pub fn take_peak(&self) -> u64 {
        let now = rss();
        let peak = self.peak.fetch_max(now, Ordering::Relaxed).max(now);
        self.peak.store(rss(), Ordering::Relaxed);
        peak
    }
}

impl Drop for Sampler {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}
