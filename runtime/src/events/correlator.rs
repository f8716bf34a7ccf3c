//! Correlation of events before they are sent: the per-object spam filter (client-go's
//! `tools/record/events_cache.go`, `EventSourceObjectSpamFilter`) and the cache of
//! isomorphic events that turns repeats into a series (client-go's `tools/events`
//! `eventBroadcasterImpl.eventCache`).
//!
//! Pure bookkeeping on explicit instants, so it is tested without a server or a clock.

use std::collections::HashMap;
use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::api::events::v1::Event;
use tokio::time::Instant;

/// A token bucket: `burst` tokens, one more every `refill` (client-go's spam filter uses
/// `flowcontrol.NewTokenBucketPassiveRateLimiterWithClock(qps, burst)`).
#[derive(Clone, Debug)]
pub(crate) struct TokenBucket {
    tokens: f64,
    last: Instant,
}

impl TokenBucket {
    fn full(burst: u32, now: Instant) -> Self {
        Self {
            tokens: f64::from(burst),
            last: now,
        }
    }

    /// Refills for the time since the last call, then takes a token if there is one.
    fn try_take(&mut self, burst: u32, refill: Duration, now: Instant) -> bool {
        let elapsed = now.saturating_duration_since(self.last).as_secs_f64();
        self.last = now;
        if !refill.is_zero() {
            self.tokens = (self.tokens + elapsed / refill.as_secs_f64()).min(f64::from(burst));
        } else {
            self.tokens = f64::from(burst);
        }
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }

    /// Whether the bucket is back to `burst` tokens at `now` (it can be forgotten).
    fn is_full_at(&self, burst: u32, refill: Duration, now: Instant) -> bool {
        let elapsed = now.saturating_duration_since(self.last).as_secs_f64();
        refill.is_zero() || self.tokens + elapsed / refill.as_secs_f64() >= f64::from(burst)
    }
}

/// The spam filter: one bucket per reporting source and regarding object.
#[derive(Debug)]
pub(crate) struct SpamFilter {
    burst: u32,
    refill: Duration,
    buckets: HashMap<String, TokenBucket>,
}

impl SpamFilter {
    pub(crate) fn new(burst: u32, refill: Duration) -> Self {
        Self {
            burst,
            refill,
            buckets: HashMap::new(),
        }
    }

    /// Whether one more event for `key` may be sent at `now`.
    pub(crate) fn allow(&mut self, key: &str, now: Instant) -> bool {
        let (burst, refill) = (self.burst, self.refill);
        self.buckets
            .entry(key.to_owned())
            .or_insert_with(|| TokenBucket::full(burst, now))
            .try_take(burst, refill, now)
    }

    /// Forgets buckets that refilled completely (they behave as new ones).
    pub(crate) fn prune(&mut self, now: Instant) {
        let (burst, refill) = (self.burst, self.refill);
        self.buckets
            .retain(|_, b| !b.is_full_at(burst, refill, now));
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.buckets.len()
    }
}

fn push_ref(out: &mut String, r: Option<&ObjectReference>) {
    if let Some(r) = r {
        for f in [
            &r.api_version,
            &r.kind,
            &r.namespace,
            &r.name,
            &r.uid,
            &r.field_path,
        ] {
            out.push_str(f.as_deref().unwrap_or(""));
            out.push('\u{1f}');
        }
    }
    out.push('\u{1e}');
}

/// The spam key: reporting controller and instance plus the regarding object (kind,
/// namespace, name, uid, apiVersion), as client-go's `getSpamKey` keys on source and
/// involved object.
pub(crate) fn spam_key(event: &Event) -> String {
    let mut key = String::new();
    for f in [&event.reporting_controller, &event.reporting_instance] {
        key.push_str(f.as_deref().unwrap_or(""));
        key.push('\u{1f}');
    }
    push_ref(&mut key, event.regarding.as_ref());
    key
}

/// The isomorphism key: events equal on it are the same occurrence repeated (client-go's
/// `getKey`: action, reason, reporting controller, regarding, related, note; plus type).
pub(crate) fn series_key(event: &Event) -> String {
    let mut key = String::new();
    for f in [
        &event.reporting_controller,
        &event.reporting_instance,
        &event.action,
        &event.reason,
        &event.type_,
        &event.note,
    ] {
        key.push_str(f.as_deref().unwrap_or(""));
        key.push('\u{1f}');
    }
    let mut regarding = event.regarding.clone();
    if let Some(r) = regarding.as_mut() {
        // A new resourceVersion of the same object is still the same occurrence.
        r.resource_version = None;
    }
    push_ref(&mut key, regarding.as_ref());
    push_ref(&mut key, event.related.as_ref());
    key
}

/// One event sent, and what has been observed of it since.
#[derive(Clone, Debug)]
pub(crate) struct SeriesEntry {
    /// The event as first created (name and namespace identify it on the server).
    pub event: Event,
    /// Occurrences so far (1 until it repeats).
    pub count: i32,
    /// When the last occurrence was observed, for `series.lastObservedTime`.
    pub last_observed: Timestamp,
    /// The same on the monotonic clock, for expiry.
    pub last_seen: Instant,
    /// A series update for this key is queued and will carry the latest count.
    pub patch_pending: bool,
}

impl SeriesEntry {
    /// The event with its current series, for a create after a 404 on patch.
    pub fn with_series(&self) -> Event {
        let mut e = self.event.clone();
        if self.count > 1 {
            e.series = Some(k8s_openapi::api::events::v1::EventSeries {
                count: self.count,
                last_observed_time: k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime(
                    self.last_observed,
                ),
            });
        }
        e
    }
}

/// The isomorphic-event cache. Entries unseen for `finish` are forgotten (client-go's
/// `finishTime`, 6 minutes): the next occurrence starts a new Event.
#[derive(Debug)]
pub(crate) struct SeriesCache {
    finish: Duration,
    entries: HashMap<String, SeriesEntry>,
}

impl SeriesCache {
    pub(crate) fn new(finish: Duration) -> Self {
        Self {
            finish,
            entries: HashMap::new(),
        }
    }

    /// The live entry for `key` at `now`; a stale one is dropped.
    pub(crate) fn live(&mut self, key: &str, now: Instant) -> Option<&mut SeriesEntry> {
        let stale = self
            .entries
            .get(key)
            .is_some_and(|e| e.last_seen + self.finish <= now);
        if stale {
            self.entries.remove(key);
        }
        self.entries.get_mut(key)
    }

    pub(crate) fn get_mut(&mut self, key: &str) -> Option<&mut SeriesEntry> {
        self.entries.get_mut(key)
    }

    pub(crate) fn insert(&mut self, key: String, entry: SeriesEntry) {
        self.entries.insert(key, entry);
    }

    /// Forgets entries unseen for `finish`.
    pub(crate) fn prune(&mut self, now: Instant) {
        let finish = self.finish;
        self.entries.retain(|_, e| e.last_seen + finish > now);
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn token_bucket_bursts_then_refills_one_per_period() {
        let refill = Duration::from_secs(300);
        let mut f = SpamFilter::new(25, refill);
        let t0 = Instant::now();
        assert!((0..25).all(|_| f.allow("a", t0)));
        assert!(!f.allow("a", t0));
        // Another object has its own bucket.
        assert!(f.allow("b", t0));
        assert!(!f.allow("a", t0 + Duration::from_secs(299)));
        assert!(f.allow("a", t0 + Duration::from_secs(300)));
        assert!(!f.allow("a", t0 + Duration::from_secs(301)));
        // Full buckets are forgotten ("b" refilled its one token), partial ones kept.
        f.prune(t0 + Duration::from_secs(301));
        assert_eq!(f.len(), 1);
        f.prune(t0 + refill * 26);
        assert_eq!(f.len(), 0);
    }

    fn event(reason: &str, rv: &str) -> Event {
        Event {
            reason: Some(reason.into()),
            reporting_controller: Some("c".into()),
            regarding: Some(ObjectReference {
                kind: Some("Pod".into()),
                name: Some("p".into()),
                resource_version: Some(rv.into()),
                ..ObjectReference::default()
            }),
            ..Event::default()
        }
    }

    #[test]
    fn keys() {
        assert_eq!(series_key(&event("A", "1")), series_key(&event("A", "2")));
        assert_ne!(series_key(&event("A", "1")), series_key(&event("B", "1")));
        assert_eq!(spam_key(&event("A", "1")), spam_key(&event("B", "1")));
    }

    #[tokio::test(start_paused = true)]
    async fn series_entries_expire_after_finish_time() {
        let mut c = SeriesCache::new(Duration::from_secs(360));
        let t0 = Instant::now();
        c.insert(
            "k".into(),
            SeriesEntry {
                event: event("A", "1"),
                count: 1,
                last_observed: Timestamp::now(),
                last_seen: t0,
                patch_pending: false,
            },
        );
        assert!(c.live("k", t0 + Duration::from_secs(359)).is_some());
        c.prune(t0 + Duration::from_secs(359));
        assert_eq!(c.len(), 1);
        assert!(c.live("k", t0 + Duration::from_secs(360)).is_none());
        assert_eq!(c.len(), 0);
    }
}
