//! Fault injection, switchable at run time from tests.
//!
//! Each switch reproduces something a real control plane does to its clients: watches that
//! end early (the API server closes watches at its request timeout, or after a restart),
//! throttling (`429 TooManyRequests` with `Retry-After`, as API Priority and Fairness answers),
//! internal errors, etcd compaction (resumes from an old resourceVersion get `410 Gone`),
//! latency, watch events that arrive late (a loaded API server or network: each event
//! delayed on its own, never overtaking an earlier one), and all watches dropped at once (an
//! API server restart).
//!
//! Error shares are applied deterministically: with a share of 0.25 exactly every fourth
//! resource request fails, so tests can count on them. Discovery (`/api`, `/apis`, `/version`)
//! is never failed.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use parking_lot::Mutex;
use tokio::sync::watch;

use crate::status::ApiError;
use crate::storage::Storage;

/// Run-time fault switches of a [`TestApiServer`](super::TestApiServer).
pub struct Faults {
    storage: Arc<Storage>,
    watch_event_limit: AtomicU64,
    latency_micros: AtomicU64,
    /// The watch delay's bounds, in microseconds (both 0: off).
    watch_delay_micros: [AtomicU64; 2],
    errors: Mutex<ErrorShares>,
    drops: watch::Sender<u64>,
    /// `true` while resource requests are held (see [`Faults::hold_requests`]).
    held: watch::Sender<bool>,
}

#[derive(Default)]
struct ErrorShares {
    too_many: f64,
    retry_after: u32,
    internal: f64,
    acc_too_many: f64,
    acc_internal: f64,
}

impl std::fmt::Debug for Faults {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let e = self.errors.lock();
        f.debug_struct("Faults")
            .field("watch_event_limit", &self.watch_event_limit())
            .field("latency", &self.latency())
            .field("watch_delay", &self.watch_delay())
            .field("too_many_requests", &e.too_many)
            .field("internal_errors", &e.internal)
            .finish()
    }
}

impl Faults {
    pub(crate) fn new(storage: Arc<Storage>) -> Self {
        Self {
            storage,
            watch_event_limit: AtomicU64::new(0),
            latency_micros: AtomicU64::new(0),
            watch_delay_micros: [AtomicU64::new(0), AtomicU64::new(0)],
            errors: Mutex::new(ErrorShares::default()),
            drops: watch::channel(0).0,
            held: watch::channel(false).0,
        }
    }

    /// Ends every watch (current and future) after it has sent `limit` events (bookmarks
    /// included); `None` switches this off.
    pub fn set_watch_event_limit(&self, limit: Option<u64>) {
        self.watch_event_limit
            .store(limit.unwrap_or(0), Ordering::SeqCst);
    }

    /// The current watch event limit.
    pub fn watch_event_limit(&self) -> Option<u64> {
        match self.watch_event_limit.load(Ordering::SeqCst) {
            0 => None,
            n => Some(n),
        }
    }

    /// Answers `share` (0.0 to 1.0) of resource requests with 429 and `Retry-After:
    /// retry_after_secs`.
    pub fn set_too_many_requests(&self, share: f64, retry_after_secs: u32) {
        let mut e = self.errors.lock();
        e.too_many = share.clamp(0.0, 1.0);
        e.retry_after = retry_after_secs;
        e.acc_too_many = 0.0;
    }

    /// Answers `share` (0.0 to 1.0) of resource requests with 500 InternalError.
    pub fn set_internal_errors(&self, share: f64) {
        let mut e = self.errors.lock();
        e.internal = share.clamp(0.0, 1.0);
        e.acc_internal = 0.0;
    }

    /// Delays every resource request by `latency` before it is handled.
    pub fn set_latency(&self, latency: Duration) {
        self.latency_micros
            .store(latency.as_micros() as u64, Ordering::SeqCst);
    }

    /// The injected latency.
    pub fn latency(&self) -> Duration {
        Duration::from_micros(self.latency_micros.load(Ordering::SeqCst))
    }

    /// Delivers every watch event late: each one (bookmarks included) waits a delay drawn
    /// uniformly in `[min, max]` from when the change reached its watch, and never overtakes
    /// an earlier event of the same watch (it waits for those first), so every watch keeps
    /// its order, and a watch whose events come faster than they are let out falls behind by
    /// up to `max`. The initial state of a watch and the backlog a resumed watch replays are
    /// sent at once. Applies to the changes made from now on, in open and future watches; a
    /// watch that ends (dropped, timed out) loses the events it still held, which its client
    /// then gets from the history when it resumes. `Duration::ZERO` for both switches it
    /// off. What the acceptance test of the controller's consistency guard runs against
    /// (200 ms to 2 s).
    pub fn set_watch_delay(&self, min: Duration, max: Duration) {
        let (min, max) = (min.min(max), min.max(max));
        self.watch_delay_micros[0].store(min.as_micros() as u64, Ordering::SeqCst);
        self.watch_delay_micros[1].store(max.as_micros() as u64, Ordering::SeqCst);
    }

    /// The watch delay's bounds, `None` when off.
    pub fn watch_delay(&self) -> Option<(Duration, Duration)> {
        let [min, max] = &self.watch_delay_micros;
        match (min.load(Ordering::SeqCst), max.load(Ordering::SeqCst)) {
            (0, 0) => None,
            (min, max) => Some((Duration::from_micros(min), Duration::from_micros(max))),
        }
    }

    /// One event's delay, drawn in the watch delay's bounds (`None` when off).
    pub(crate) fn draw_watch_delay(&self) -> Option<Duration> {
        let (min, max) = self.watch_delay()?;
        let micros = rand::random_range(min.as_micros() as u64..=max.as_micros() as u64);
        Some(Duration::from_micros(micros))
    }

    /// Holds every resource request that arrives from now on until
    /// [`release_requests`](Self::release_requests): a client that reconnects meanwhile finds
    /// the changes made in between waiting in the history, and is then served them as fast
    /// as it reads (a benchmark's burst of changes, received at the client's speed rather
    /// than the writer's). Changes made in process (`create_object`, `merge_patch_object`)
    /// are not held.
    pub fn hold_requests(&self) {
        self.held.send_replace(true);
    }

    /// Lets the requests held by [`hold_requests`](Self::hold_requests) go on.
    pub fn release_requests(&self) {
        self.held.send_replace(false);
    }

    /// Waits while requests are held.
    pub(crate) async fn wait_released(&self) {
        let mut held = self.held.subscribe();
        // The sender lives as long as `self`, so the wait ends only on a release.
        let _ = held.wait_for(|held| !held).await;
    }

    /// Drops the change history, as etcd compaction does: watches and continue tokens from
    /// any earlier resourceVersion get 410 Expired.
    pub fn compact(&self) {
        self.storage.lock().compact();
    }

    /// Ends every open watch at once, as an API server restart does.
    pub fn drop_watches(&self) {
        self.drops.send_modify(|g| *g += 1);
    }

    /// Switches every fault off.
    pub fn clear(&self) {
        self.set_watch_event_limit(None);
        self.set_latency(Duration::ZERO);
        self.set_watch_delay(Duration::ZERO, Duration::ZERO);
        self.set_too_many_requests(0.0, 0);
        self.set_internal_errors(0.0);
        self.release_requests();
    }

    /// A receiver that changes whenever [`drop_watches`](Self::drop_watches) is called.
    pub(crate) fn drop_signal(&self) -> watch::Receiver<u64> {
        self.drops.subscribe()
    }

    /// The injected failure for the next resource request, if any.
    pub(crate) fn next_error(&self) -> Option<ApiError> {
        let mut e = self.errors.lock();
        if e.too_many > 0.0 {
            e.acc_too_many += e.too_many;
            if e.acc_too_many >= 1.0 - 1e-9 {
                e.acc_too_many -= 1.0;
                return Some(ApiError::too_many_requests(e.retry_after));
            }
        }
        if e.internal > 0.0 {
            e.acc_internal += e.internal;
            if e.acc_internal >= 1.0 - 1e-9 {
                e.acc_internal -= 1.0;
                return Some(ApiError::internal(
                    "Internal error occurred: injected fault",
                ));
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_are_deterministic() {
        let f = Faults::new(Arc::new(Storage::new(10, 16)));
        f.set_too_many_requests(0.25, 3);
        let codes: Vec<_> = (0..8).map(|_| f.next_error().map(|e| e.code)).collect();
        assert_eq!(codes.iter().filter(|c| **c == Some(429)).count(), 2);
        assert_eq!(codes[3], Some(429));
        f.clear();
        assert!(f.next_error().is_none());
        f.set_internal_errors(1.0);
        assert_eq!(f.next_error().unwrap().code, 500);
    }

    #[test]
    fn watch_delays_are_drawn_within_their_bounds() {
        let f = Faults::new(Arc::new(Storage::new(10, 16)));
        assert_eq!(f.draw_watch_delay(), None);
        // Given in either order.
        f.set_watch_delay(Duration::from_millis(20), Duration::from_millis(5));
        assert_eq!(
            f.watch_delay(),
            Some((Duration::from_millis(5), Duration::from_millis(20)))
        );
        for _ in 0..200 {
            let d = f.draw_watch_delay().unwrap();
            assert!(
                (Duration::from_millis(5)..=Duration::from_millis(20)).contains(&d),
                "{d:?}"
            );
        }
        f.clear();
        assert_eq!(f.watch_delay(), None);
    }
}
