//! Exponential backoff with jitter and a reset after a healthy period, as client-go's
//! `wait.NewExponentialBackoffManager(800ms, 30s, 2min, 2.0, 1.0, clock)` used by the
//! reflector.

use std::time::Duration;

use rand::Rng;
use tokio::time::Instant;

/// Parameters of an exponential backoff.
#[derive(Clone, Debug, PartialEq)]
#[must_use]
pub struct BackoffConfig {
    /// The first delay.
    pub initial: Duration,
    /// No delay is longer than this.
    pub max: Duration,
    /// Each delay is the previous one times this factor.
    pub factor: f64,
    /// A delay `d` becomes a random value in `[d, d + jitter * d]` (capped at `max`).
    pub jitter: f64,
    /// When no backoff was asked for during this long, the next delay starts over at
    /// `initial`.
    pub reset_after: Duration,
}

impl Default for BackoffConfig {
    /// client-go's reflector backoff: 800 ms doubling with jitter up to 30 s, reset after
    /// 2 minutes without errors.
    fn default() -> Self {
        Self {
            initial: Duration::from_millis(800),
            max: Duration::from_secs(30),
            factor: 2.0,
            jitter: 1.0,
            reset_after: Duration::from_secs(120),
        }
    }
}

impl BackoffConfig {
    /// The same backoff without jitter (deterministic delays, for tests).
    pub fn without_jitter(mut self) -> Self {
        self.jitter = 0.0;
        self
    }

    /// A test-sized backoff: 20 ms doubling with jitter up to 300 ms, reset after 5 s without
    /// errors. The shape of client-go's, scaled for tests against a `TestApiServer` whose
    /// faults drop watches or fail requests on purpose: with the default, a few watches
    /// dropped in a row (each counts as an error: it ended in under a second) make the
    /// reflector wait up to 30 s before it watches again, and a test that waits for
    /// convergence waits that long. Never for a real cluster: the backoff is what keeps
    /// thousands of clients from hammering a struggling API server.
    pub fn for_tests() -> Self {
        Self {
            initial: Duration::from_millis(20),
            max: Duration::from_millis(300),
            factor: 2.0,
            jitter: 1.0,
            reset_after: Duration::from_secs(5),
        }
    }
}

/// The running state of one backoff.
#[derive(Clone, Debug)]
pub struct Backoff {
    config: BackoffConfig,
    current: Duration,
    last: Option<Instant>,
}

impl Backoff {
    /// A backoff whose next delay is `config.initial`.
    pub fn new(config: BackoffConfig) -> Self {
        Self {
            current: config.initial,
            config,
            last: None,
        }
    }

    /// The next delay, asked for at `now`.
    pub fn next_delay(&mut self, now: Instant, rng: &mut impl Rng) -> Duration {
        if let Some(last) = self.last
            && now.saturating_duration_since(last) > self.config.reset_after
        {
            self.current = self.config.initial;
        }
        self.last = Some(now);
        let base = self.current.min(self.config.max);
        self.current = base
            .mul_f64(self.config.factor.max(1.0))
            .min(self.config.max);
        let jittered = if self.config.jitter > 0.0 {
            base + base.mul_f64(rng.random::<f64>() * self.config.jitter)
        } else {
            base
        };
        jittered.min(self.config.max)
    }

    /// Starts over at `initial`.
    pub fn reset(&mut self) {
        self.current = self.config.initial;
        self.last = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{SeedableRng, rngs::SmallRng};

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn doubles_up_to_max_without_jitter() {
        let mut b = Backoff::new(BackoffConfig::default().without_jitter());
        let mut rng = SmallRng::seed_from_u64(1);
        let now = Instant::now();
        let delays: Vec<_> = (0..8).map(|_| b.next_delay(now, &mut rng)).collect();
        assert_eq!(
            delays,
            [
                ms(800),
                ms(1600),
                ms(3200),
                ms(6400),
                ms(12800),
                ms(25600),
                ms(30000),
                ms(30000)
            ]
        );
    }

    #[test]
    fn jitter_stays_within_bounds() {
        let mut b = Backoff::new(BackoffConfig::default());
        let mut rng = SmallRng::seed_from_u64(7);
        let now = Instant::now();
        let mut base = ms(800);
        for _ in 0..10 {
            let d = b.next_delay(now, &mut rng);
            assert!(
                d >= base.min(ms(30000)) && d <= (base * 2).min(ms(30000)),
                "{d:?}"
            );
            base = (base * 2).min(ms(30000));
        }
    }

    #[test]
    fn test_sized_backoff_stays_under_300_ms() {
        let mut b = Backoff::new(BackoffConfig::for_tests());
        let mut rng = SmallRng::seed_from_u64(3);
        let now = Instant::now();
        let delays: Vec<_> = (0..12).map(|_| b.next_delay(now, &mut rng)).collect();
        assert!(delays[0] >= ms(20) && delays[0] <= ms(40), "{delays:?}");
        assert!(delays.iter().all(|d| *d <= ms(300)), "{delays:?}");
        assert_eq!(delays[11], ms(300), "reaches its cap: {delays:?}");
        // Five healthy seconds start it over.
        assert!(b.next_delay(now + Duration::from_secs(6), &mut rng) <= ms(40));
    }

    #[test]
    fn resets_after_two_healthy_minutes() {
        let mut b = Backoff::new(BackoffConfig::default().without_jitter());
        let mut rng = SmallRng::seed_from_u64(1);
        let t0 = Instant::now();
        assert_eq!(b.next_delay(t0, &mut rng), ms(800));
        assert_eq!(b.next_delay(t0 + ms(1000), &mut rng), ms(1600));
        // Less than two minutes later: keeps growing.
        assert_eq!(
            b.next_delay(t0 + Duration::from_secs(100), &mut rng),
            ms(3200)
        );
        // More than two minutes after the last backoff: starts over.
        assert_eq!(
            b.next_delay(t0 + Duration::from_secs(221), &mut rng),
            ms(800)
        );
    }
}
