//! Client-side rate limiting: a token bucket of `qps` tokens per second holding up to
//! `burst`, as client-go's `flowcontrol.NewTokenBucketRateLimiter` behind `rest.Config.QPS`
//! and `Burst`.
//!
//! Each request reserves a token at once (the count may go negative) and sleeps until its
//! token would have accrued, so waiters are served in arrival order without polling.

use parking_lot::Mutex;
use tokio::time::Instant;

/// A token bucket.
#[derive(Debug)]
pub(crate) struct TokenBucket {
    qps: f64,
    burst: f64,
    state: Mutex<(f64, Instant)>,
}

impl TokenBucket {
    /// `qps` tokens per second, bucket size `burst` (at least 1), initially full.
    pub(crate) fn new(qps: f32, burst: u32) -> Self {
        let burst = f64::from(burst.max(1));
        Self {
            qps: f64::from(qps).max(f64::MIN_POSITIVE),
            burst,
            state: Mutex::new((burst, Instant::now())),
        }
    }

    /// Waits for a token.
    pub(crate) async fn acquire(&self) {
        let wait = {
            let mut state = self.state.lock();
            let now = Instant::now();
            let elapsed = now.duration_since(state.1).as_secs_f64();
            state.0 = (state.0 + elapsed * self.qps).min(self.burst) - 1.0;
            state.1 = now;
            if state.0 >= 0.0 {
                None
            } else {
                Some(std::time::Duration::from_secs_f64(-state.0 / self.qps))
            }
        };
        if let Some(wait) = wait {
            tokio::time::sleep(wait).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test(start_paused = true)]
    async fn burst_then_qps() {
        let bucket = TokenBucket::new(2.0, 3);
        let start = Instant::now();
        for _ in 0..3 {
            bucket.acquire().await;
        }
        assert_eq!(start.elapsed(), Duration::ZERO);
        bucket.acquire().await; // 4th token accrues after 0.5s
        assert_eq!(start.elapsed(), Duration::from_millis(500));
        bucket.acquire().await;
        assert_eq!(start.elapsed(), Duration::from_millis(1000));
    }
}
