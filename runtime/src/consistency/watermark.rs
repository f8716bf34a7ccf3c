//! [`Watermark`]: the highest resourceVersion a cache has caught up with.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::sync::watch;

use super::version::parse_resource_version;

/// The highest resourceVersion a cache reflects: every change of its collection at or below
/// it has been applied (an event, the list it started from, or a bookmark that says nothing
/// older is left to come). Each [`Store`](crate::store::Store) carries one; the informer
/// advances its store's watermark as it applies what the reflector received, and a
/// reflector feeding a plain store advances it as it writes.
///
/// Versions compare as integers (KEP-5504, [`parse_resource_version`]); a version that is
/// not one is counted ([`incomparable`](Self::incomparable)) and otherwise ignored, and a
/// question about one is answered "caught up" (fail open): a cache of an API that does not
/// number its versions cannot be waited on, and waiting would only stall its reader. The
/// watermark never moves back, not even when a relist starts from an older version (an API
/// server restored from a backup): reads then fail open the same way.
///
/// Reading it is one atomic load; an advance is one atomic `fetch_max` and, when it moved,
/// one wake-up of the [subscribers](Self::subscribe). Cloning shares it.
#[derive(Clone)]
pub struct Watermark {
    inner: Arc<Inner>,
}

struct Inner {
    /// The highest version seen; 0 before the first (no real version is 0).
    seen: AtomicU64,
    /// Versions seen or asked about that do not compare.
    incomparable: AtomicU64,
    advances: watch::Sender<u64>,
}

impl Default for Watermark {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for Watermark {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Watermark")
            .field("seen", &self.seen())
            .field("incomparable", &self.incomparable())
            .finish()
    }
}

/// Whether a cache has caught up with a resourceVersion ([`Watermark::has_seen`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Seen {
    /// The watermark is at or past the version.
    Yes,
    /// Not yet.
    NotYet,
    /// The version is not a comparable integer: treated as caught up, and counted.
    Incomparable,
}

impl Seen {
    /// Whether a reader may go on: [`Yes`](Self::Yes) or (failing open)
    /// [`Incomparable`](Self::Incomparable).
    pub fn caught_up(self) -> bool {
        !matches!(self, Self::NotYet)
    }
}

/// A wait for a cache to see a resourceVersion that ran out of time.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum WaitError {
    /// The cache had not caught up within the timeout.
    #[error(
        "the cache had not seen resourceVersion {resource_version} after {timeout:?} (it is at {seen:?})"
    )]
    Timeout {
        /// The version waited for.
        resource_version: String,
        /// The cache's watermark when the wait gave up (`None`: nothing seen yet).
        seen: Option<u64>,
        /// How long was waited.
        timeout: Duration,
    },
}

impl Watermark {
    /// A watermark that has seen nothing.
    pub fn new() -> Self {
        Self {
            inner: Arc::new(Inner {
                seen: AtomicU64::new(0),
                incomparable: AtomicU64::new(0),
                advances: watch::channel(0).0,
            }),
        }
    }

    /// The highest resourceVersion seen, `None` before the first.
    pub fn seen(&self) -> Option<u64> {
        match self.inner.seen.load(Ordering::Acquire) {
            0 => None,
            rv => Some(rv),
        }
    }

    /// How many resourceVersions this watermark was given or asked about that were not
    /// comparable integers (each one failed open).
    pub fn incomparable(&self) -> u64 {
        self.inner.incomparable.load(Ordering::Relaxed)
    }

    /// Whether the cache has caught up with `resource_version`; an incomparable version is
    /// counted.
    pub fn has_seen(&self, resource_version: &str) -> Seen {
        match parse_resource_version(resource_version) {
            Some(rv) if self.has_seen_version(rv) => Seen::Yes,
            Some(_) => Seen::NotYet,
            None => {
                self.count_incomparable();
                Seen::Incomparable
            }
        }
    }

    /// Whether the watermark is at or past `rv`.
    pub fn has_seen_version(&self, rv: u64) -> bool {
        self.inner.seen.load(Ordering::Acquire) >= rv
    }

    /// Moves the watermark up to `resource_version` (never down); an incomparable version is
    /// counted and changes nothing. Returns whether it was comparable.
    pub fn observe(&self, resource_version: &str) -> bool {
        match parse_resource_version(resource_version) {
            Some(rv) => {
                self.advance_to(rv);
                true
            }
            None => {
                self.count_incomparable();
                false
            }
        }
    }

    /// Moves the watermark up to `rv` (never down), waking the subscribers when it moved.
    pub fn advance_to(&self, rv: u64) {
        if self.inner.seen.fetch_max(rv, Ordering::AcqRel) < rv {
            self.inner.advances.send_if_modified(|v| {
                let moved = *v < rv;
                *v = (*v).max(rv);
                moved
            });
        }
    }

    pub(crate) fn count_incomparable(&self) {
        self.inner.incomparable.fetch_add(1, Ordering::Relaxed);
    }

    /// A subscription to the watermark's advances (without missing one that happens after
    /// this call).
    pub fn subscribe(&self) -> Advances {
        let mut rx = self.inner.advances.subscribe();
        rx.mark_unchanged();
        Advances { rx }
    }

    /// Waits until the cache has caught up with `resource_version`, at most `timeout`.
    /// An incomparable version returns at once (fail open, counted).
    pub async fn wait_for(
        &self,
        resource_version: &str,
        timeout: Duration,
    ) -> Result<(), WaitError> {
        let Some(rv) = parse_resource_version(resource_version) else {
            self.count_incomparable();
            return Ok(());
        };
        // Subscribed before the check, so an advance in between is not missed.
        let mut advances = self.subscribe();
        let caught_up = async {
            while !self.has_seen_version(rv) {
                if advances.changed().await.is_none() {
                    // Cannot happen while `self` holds the sender; never spin.
                    std::future::pending::<()>().await;
                }
            }
        };
        tokio::time::timeout(timeout, caught_up)
            .await
            .map_err(|_| WaitError::Timeout {
                resource_version: resource_version.to_owned(),
                seen: self.seen(),
                timeout,
            })
    }

    /// Whether `self` and `other` are the same watermark (clones of one).
    pub fn same(&self, other: &Watermark) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}

/// The advances of a [`Watermark`] ([`Watermark::subscribe`]). Advances in quick succession
/// are seen as one.
#[derive(Debug)]
pub struct Advances {
    rx: watch::Receiver<u64>,
}

impl Advances {
    /// Waits for the next advance and returns the new watermark; `None` once the watermark
    /// is gone (every clone dropped).
    pub async fn changed(&mut self) -> Option<u64> {
        self.rx.changed().await.ok()?;
        Some(*self.rx.borrow_and_update())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn advances_only_up_and_counts_what_does_not_compare() {
        let w = Watermark::new();
        assert_eq!(w.seen(), None);
        assert_eq!(w.has_seen("1"), Seen::NotYet);
        assert!(w.observe("10"));
        assert!(w.observe("7"));
        assert_eq!(w.seen(), Some(10));
        assert_eq!(w.has_seen("10"), Seen::Yes);
        assert_eq!(w.has_seen("11"), Seen::NotYet);
        assert!(!w.observe("abc"));
        assert_eq!(w.has_seen("x-1"), Seen::Incomparable);
        assert!(Seen::Incomparable.caught_up() && !Seen::NotYet.caught_up());
        assert_eq!(w.incomparable(), 2);
        assert_eq!(w.seen(), Some(10));
        assert!(w.same(&w.clone()) && !w.same(&Watermark::new()));
    }

    #[tokio::test(start_paused = true)]
    async fn waits_end_on_the_advance_or_time_out() {
        let w = Watermark::new();
        w.advance_to(5);
        assert_eq!(w.wait_for("5", Duration::from_secs(1)).await, Ok(()));
        assert_eq!(w.wait_for("opaque", Duration::from_secs(1)).await, Ok(()));
        let waiter = {
            let w = w.clone();
            tokio::spawn(async move { w.wait_for("8", Duration::from_secs(10)).await })
        };
        let mut advances = w.subscribe();
        tokio::task::yield_now().await;
        w.advance_to(7);
        assert_eq!(advances.changed().await, Some(7));
        assert!(!waiter.is_finished());
        w.advance_to(9);
        assert_eq!(waiter.await.unwrap(), Ok(()));
        let e = w.wait_for("20", Duration::from_secs(2)).await.unwrap_err();
        assert_eq!(
            e,
            WaitError::Timeout {
                resource_version: "20".into(),
                seen: Some(9),
                timeout: Duration::from_secs(2)
            }
        );
    }
}
