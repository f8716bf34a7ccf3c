//! Rate limiters: how long an item waits before it is retried (client-go
//! util/workqueue/default_rate_limiters.go).
//!
//! - [`ItemExponentialFailureRateLimiter`]: `base * 2^failures`, capped at `max`, per item.
//!   The power is computed exactly in 128-bit nanoseconds and saturates at `max`, so any
//!   number of failures is safe (client-go guards the same overflow with a float check).
//! - [`BucketRateLimiter`]: one token bucket for all items (golang.org/x/time/rate's
//!   reservations: the bucket starts full with `burst` tokens, refills at `qps`, and a
//!   request that finds it empty is told how long until its token exists).
//! - [`ItemFastSlowRateLimiter`]: `fast` for the first `max_fast_attempts` failures of an item,
//!   `slow` afterwards.
//! - [`MaxOfRateLimiter`]: the longest wait of several limiters (all of them are consulted, so
//!   each keeps counting).
//! - [`WithMaxWaitRateLimiter`]: another limiter's wait, capped.
//! - [`default_controller_rate_limiter`]: max-of(exponential 5 ms .. 1000 s, bucket 10 qps /
//!   burst 100), client-go's `DefaultControllerRateLimiter`.
//!
//! Waits use `tokio::time::Instant`, so the bucket follows a paused test clock.

use std::hash::Hash;
use std::sync::Arc;
use std::time::Duration;

use hashbrown::HashMap;
use parking_lot::Mutex;
use tokio::time::Instant;

/// Decides how long an item waits before it is retried (client-go's `TypedRateLimiter`).
pub trait RateLimiter<T>: Send + Sync {
    /// How long `item` must wait now. Counts a failure for per-item limiters.
    fn when(&self, item: &T) -> Duration;
    /// Forgets `item`'s failures (it succeeded, or was given up on).
    fn forget(&self, item: &T);
    /// How many failures of `item` are counted.
    fn num_requeues(&self, item: &T) -> usize;
}

impl<T, R: RateLimiter<T> + ?Sized> RateLimiter<T> for Arc<R> {
    fn when(&self, item: &T) -> Duration {
        (**self).when(item)
    }
    fn forget(&self, item: &T) {
        (**self).forget(item)
    }
    fn num_requeues(&self, item: &T) -> usize {
        (**self).num_requeues(item)
    }
}

impl<T, R: RateLimiter<T> + ?Sized> RateLimiter<T> for Box<R> {
    fn when(&self, item: &T) -> Duration {
        (**self).when(item)
    }
    fn forget(&self, item: &T) {
        (**self).forget(item)
    }
    fn num_requeues(&self, item: &T) -> usize {
        (**self).num_requeues(item)
    }
}

/// Per-item failure counts shared by the per-item limiters.
struct Failures<T>(Mutex<HashMap<T, usize>>);

impl<T: Hash + Eq + Clone> Failures<T> {
    fn new() -> Self {
        Self(Mutex::new(HashMap::new()))
    }

    /// Counts one failure; returns the count before it.
    fn bump(&self, item: &T) -> usize {
        let mut map = self.0.lock();
        if let Some(n) = map.get_mut(item) {
            let before = *n;
            *n = n.saturating_add(1);
            return before;
        }
        map.insert(item.clone(), 1);
        0
    }

    fn get(&self, item: &T) -> usize {
        self.0.lock().get(item).copied().unwrap_or(0)
    }

    fn forget(&self, item: &T) {
        self.0.lock().remove(item);
    }
}

/// `base * 2^exp`, capped at `max`, without overflow for any `exp`.
pub(crate) fn exponential_backoff(base: Duration, max: Duration, exp: usize) -> Duration {
    let cap = max.as_nanos();
    if base.is_zero() {
        return Duration::ZERO.min(max);
    }
    let factor = u32::try_from(exp)
        .ok()
        .and_then(|e| 1u128.checked_shl(e))
        .filter(|_| exp < 128);
    let nanos = factor
        .and_then(|f| base.as_nanos().checked_mul(f))
        .map_or(cap, |n| n.min(cap));
    duration_from_nanos(nanos).unwrap_or(max)
}

fn duration_from_nanos(nanos: u128) -> Option<Duration> {
    let secs = u64::try_from(nanos / 1_000_000_000).ok()?;
    // The remainder is below 10^9 and fits.
    let sub = u32::try_from(nanos % 1_000_000_000).ok()?;
    Some(Duration::new(secs, sub))
}

/// `base * 2^failures` per item, capped at `max` (client-go
/// `ItemExponentialFailureRateLimiter`).
pub struct ItemExponentialFailureRateLimiter<T> {
    base: Duration,
    max: Duration,
    failures: Failures<T>,
}

impl<T: Hash + Eq + Clone> ItemExponentialFailureRateLimiter<T> {
    /// Waits `base`, `2 * base`, `4 * base`, ... up to `max` for successive failures of an item.
    pub fn new(base: Duration, max: Duration) -> Self {
        Self {
            base,
            max,
            failures: Failures::new(),
        }
    }
}

impl<T: Hash + Eq + Clone + Send + Sync> RateLimiter<T> for ItemExponentialFailureRateLimiter<T> {
    fn when(&self, item: &T) -> Duration {
        let exp = self.failures.bump(item);
        exponential_backoff(self.base, self.max, exp)
    }
    fn forget(&self, item: &T) {
        self.failures.forget(item);
    }
    fn num_requeues(&self, item: &T) -> usize {
        self.failures.get(item)
    }
}

/// `fast` for the first `max_fast_attempts` failures of an item, then `slow` (client-go
/// `ItemFastSlowRateLimiter`).
pub struct ItemFastSlowRateLimiter<T> {
    fast: Duration,
    slow: Duration,
    max_fast_attempts: usize,
    failures: Failures<T>,
}

impl<T: Hash + Eq + Clone> ItemFastSlowRateLimiter<T> {
    /// Waits `fast` for an item's first `max_fast_attempts` failures and `slow` after.
    pub fn new(fast: Duration, slow: Duration, max_fast_attempts: usize) -> Self {
        Self {
            fast,
            slow,
            max_fast_attempts,
            failures: Failures::new(),
        }
    }
}

impl<T: Hash + Eq + Clone + Send + Sync> RateLimiter<T> for ItemFastSlowRateLimiter<T> {
    fn when(&self, item: &T) -> Duration {
        let attempts = self.failures.bump(item).saturating_add(1);
        if attempts <= self.max_fast_attempts {
            self.fast
        } else {
            self.slow
        }
    }
    fn forget(&self, item: &T) {
        self.failures.forget(item);
    }
    fn num_requeues(&self, item: &T) -> usize {
        self.failures.get(item)
    }
}

struct Bucket {
    tokens: f64,
    last: Instant,
}

/// One token bucket shared by all items (client-go `BucketRateLimiter` over
/// `rate.NewLimiter(qps, burst)`). It counts no per-item failures: `forget` does nothing and
/// `num_requeues` is 0.
///
/// A `qps` of infinity never waits. A `qps` that is zero, negative or NaN lets `burst` items
/// through and then answers [`Duration::MAX`] ("never", as Go's `InfDuration`); the delaying
/// queue parks such items about 30 years.
pub struct BucketRateLimiter {
    qps: f64,
    burst: f64,
    bucket: Mutex<Bucket>,
}

impl BucketRateLimiter {
    /// A bucket that refills at `qps` tokens per second and holds at most `burst` (it starts
    /// full).
    pub fn new(qps: f64, burst: u32) -> Self {
        Self {
            qps,
            burst: f64::from(burst),
            bucket: Mutex::new(Bucket {
                tokens: f64::from(burst),
                last: Instant::now(),
            }),
        }
    }

    /// Takes one token, possibly in advance; returns how long until it exists.
    fn reserve(&self) -> Duration {
        if self.qps == f64::INFINITY {
            return Duration::ZERO;
        }
        let now = Instant::now();
        let mut bucket = self.bucket.lock();
        let refill_ok = self.qps > 0.0;
        if refill_ok {
            let elapsed = now.saturating_duration_since(bucket.last).as_secs_f64();
            bucket.tokens = (bucket.tokens + elapsed * self.qps).min(self.burst);
        } else if bucket.tokens < 1.0 {
            // No refill and nothing left: the reservation can never be met (not taken).
            return Duration::MAX;
        }
        bucket.last = now;
        bucket.tokens -= 1.0;
        if bucket.tokens >= 0.0 {
            return Duration::ZERO;
        }
        Duration::try_from_secs_f64(-bucket.tokens / self.qps).unwrap_or(Duration::MAX)
    }
}

impl std::fmt::Debug for BucketRateLimiter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BucketRateLimiter")
            .field("qps", &self.qps)
            .field("burst", &self.burst)
            .finish()
    }
}

impl<T> RateLimiter<T> for BucketRateLimiter {
    fn when(&self, _item: &T) -> Duration {
        self.reserve()
    }
    fn forget(&self, _item: &T) {}
    fn num_requeues(&self, _item: &T) -> usize {
        0
    }
}

/// The longest wait of several limiters (client-go `MaxOfRateLimiter`). Every limiter is asked
/// each time, so each keeps its own count; `num_requeues` is the largest count.
pub struct MaxOfRateLimiter<T> {
    limiters: Vec<Box<dyn RateLimiter<T>>>,
}

impl<T> MaxOfRateLimiter<T> {
    /// Combines `limiters`; with none, every wait is zero.
    pub fn new(limiters: Vec<Box<dyn RateLimiter<T>>>) -> Self {
        Self { limiters }
    }
}

impl<T> RateLimiter<T> for MaxOfRateLimiter<T> {
    fn when(&self, item: &T) -> Duration {
        self.limiters
            .iter()
            .map(|l| l.when(item))
            .max()
            .unwrap_or(Duration::ZERO)
    }
    fn forget(&self, item: &T) {
        for l in &self.limiters {
            l.forget(item);
        }
    }
    fn num_requeues(&self, item: &T) -> usize {
        self.limiters
            .iter()
            .map(|l| l.num_requeues(item))
            .max()
            .unwrap_or(0)
    }
}

/// Another limiter's wait, capped at `max_wait` (client-go `WithMaxWaitRateLimiter`).
pub struct WithMaxWaitRateLimiter<T> {
    limiter: Box<dyn RateLimiter<T>>,
    max_wait: Duration,
}

impl<T> WithMaxWaitRateLimiter<T> {
    /// Caps `limiter`'s waits at `max_wait`.
    pub fn new(limiter: Box<dyn RateLimiter<T>>, max_wait: Duration) -> Self {
        Self { limiter, max_wait }
    }
}

impl<T> RateLimiter<T> for WithMaxWaitRateLimiter<T> {
    fn when(&self, item: &T) -> Duration {
        self.limiter.when(item).min(self.max_wait)
    }
    fn forget(&self, item: &T) {
        self.limiter.forget(item);
    }
    fn num_requeues(&self, item: &T) -> usize {
        self.limiter.num_requeues(item)
    }
}

/// client-go's `DefaultControllerRateLimiter`: the longer of a per-item exponential backoff
/// from 5 ms to 1000 s and an overall token bucket of 10 qps with a burst of 100.
pub fn default_controller_rate_limiter<T>() -> MaxOfRateLimiter<T>
where
    T: Hash + Eq + Clone + Send + Sync + 'static,
{
    MaxOfRateLimiter::new(vec![
        Box::new(ItemExponentialFailureRateLimiter::new(
            Duration::from_millis(5),
            Duration::from_secs(1000),
        )),
        Box::new(BucketRateLimiter::new(10.0, 100)),
    ])
}
