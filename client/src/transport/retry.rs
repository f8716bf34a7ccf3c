//! Retry waits: the server's `Retry-After` (seconds, as client-go reads it) or exponential
//! backoff with jitter.

use std::time::Duration;

/// Longest wait kinform honours from a `Retry-After` header.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(300);

/// The `Retry-After` header in seconds.
pub(crate) fn retry_after(headers: &http::HeaderMap) -> Option<Duration> {
    let secs: u64 = headers
        .get(http::header::RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()?;
    Some(Duration::from_secs(secs).min(MAX_RETRY_AFTER))
}

/// 200ms doubling per attempt up to 10s, plus up to 20% jitter.
pub(crate) fn backoff(attempt: u32) -> Duration {
    let base = Duration::from_millis(200).saturating_mul(1u32 << attempt.min(6));
    let base = base.min(Duration::from_secs(10));
    base.mul_f64(1.0 + rand::random::<f64>() * 0.2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_seconds() {
        let mut h = http::HeaderMap::new();
        assert_eq!(retry_after(&h), None);
        h.insert(http::header::RETRY_AFTER, "3".parse().unwrap());
        assert_eq!(retry_after(&h), Some(Duration::from_secs(3)));
        h.insert(http::header::RETRY_AFTER, "soon".parse().unwrap());
        assert_eq!(retry_after(&h), None);
    }

    #[test]
    fn backoff_grows_and_caps() {
        assert!(
            backoff(0) >= Duration::from_millis(200) && backoff(0) <= Duration::from_millis(240)
        );
        assert!(backoff(20) <= Duration::from_secs(12));
    }
}
