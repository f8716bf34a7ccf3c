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

/// CPU time (user + system) this process has used, in seconds (`/proc/self/stat`, clock
/// ticks of 10 ms).
pub fn cpu_secs() -> f64 {
    let text = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command name (which is in parentheses and may contain spaces).
    let rest = text.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the name.
    (ticks(11) + ticks(12)) as f64 / 100.0
}

/// The current `VmRSS` in bytes.
pub fn rss() -> u64 {
    status().0
}

/// Samples `VmRSS` every 2 ms on its own thread.
pub struct Sampler {
    peak: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
}

impl Sampler {
    pub fn start() -> Self {
        let peak = Arc::new(AtomicU64::new(rss()));
        let stop = Arc::new(AtomicBool::new(false));
        let (p, s) = (peak.clone(), stop.clone());
        std::thread::spawn(move || {
            while !s.load(Ordering::Relaxed) {
                p.fetch_max(rss(), Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(2));
            }
        });
        Self { peak, stop }
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
