//! [`LeaderElector`]: client-go's `leaderelection.LeaderElector` (acquire, renew, release and
//! `tryAcquireOrRenew`).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use jiff::Timestamp;
use parking_lot::Mutex;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::callbacks::LeaderCallbacks;
use super::config::{ConfigError, JITTER_FACTOR, LeaderElectionConfig};
use super::lock::ResourceLock;
use super::record::LeaderElectionRecord;

/// How [`LeaderElector::run`] ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RunOutcome {
    /// Cancelled before this candidate ever led.
    NeverLed,
    /// Cancelled while leading; the lease was released if configured to.
    Cancelled,
    /// Renewal failed for `renew_deadline` (or another holder was seen): leadership lost.
    Lost,
}

/// The last record read or written and when, on the local monotonic clock.
#[derive(Default)]
struct Observed {
    record: Option<LeaderElectionRecord>,
    time: Option<Instant>,
}

/// Maps the (possibly paused) tokio clock to wall-clock timestamps for the record's
/// `acquireTime`/`renewTime`, so that tests on a paused clock write consistent records.
struct Clock {
    base_instant: Instant,
    base_wall: Timestamp,
}

impl Clock {
    fn new() -> Self {
        Self {
            base_instant: Instant::now(),
            base_wall: Timestamp::now(),
        }
    }

    fn wall(&self, at: Instant) -> Timestamp {
        self.base_wall
            .checked_add(at.saturating_duration_since(self.base_instant))
            .unwrap_or(self.base_wall)
    }
}

/// One candidate in a leader election on a [`ResourceLock`].
///
/// Build one per process with [`new`](Self::new) and call [`run`](Self::run); see the
/// [module docs](super) for the algorithm.
pub struct LeaderElector<L> {
    config: LeaderElectionConfig,
    lock: L,
    callbacks: LeaderCallbacks,
    observed: Mutex<Observed>,
    reported_leader: Mutex<String>,
    leading: AtomicBool,
    clock: Clock,
}

impl<L: ResourceLock> std::fmt::Debug for LeaderElector<L> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LeaderElector")
            .field("lock", &self.lock.describe())
            .field("identity", &self.lock.identity())
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl<L: ResourceLock> LeaderElector<L> {
    /// A candidate competing for `lock` as `lock.identity()`; the config is validated as
    /// client-go's `NewLeaderElector` does.
    pub fn new(
        lock: L,
        config: LeaderElectionConfig,
        callbacks: LeaderCallbacks,
    ) -> Result<Self, ConfigError> {
        config.validate()?;
        if lock.identity().is_empty() {
            return Err(ConfigError::EmptyIdentity);
        }
        Ok(Self {
            config,
            lock,
            callbacks,
            observed: Mutex::new(Observed::default()),
            reported_leader: Mutex::new(String::new()),
            leading: AtomicBool::new(false),
            clock: Clock::new(),
        })
    }

    /// Starts from a record of the lock observed elsewhere in this process, first seen
    /// unchanged at `at` on the same clock: if the lock still holds that record, its lease
    /// runs from `at`, as if this candidate had been watching since (client-go's rule, with
    /// an earlier observation). A fleet's replica that lists every Lease keeps such
    /// observations, so a dead replica's cluster is taken over one lease duration after its
    /// last renewal rather than one after the new owner first looks.
    pub(crate) fn observed_since(self, record: LeaderElectionRecord, at: Instant) -> Self {
        *self.observed.lock() = Observed {
            record: Some(record),
            time: Some(at),
        };
        self
    }

    /// The lock.
    pub fn lock(&self) -> &L {
        &self.lock
    }

    /// Whether this candidate is leading now: between acquiring the lease and stepping down.
    pub fn is_leader(&self) -> bool {
        self.leading.load(Ordering::SeqCst)
    }

    /// Whether the last observed record names this candidate as holder (client-go's
    /// `IsLeader`).
    fn holds_record(&self) -> bool {
        self.observed
            .lock()
            .record
            .as_ref()
            .is_some_and(|r| r.holder_identity == self.lock.identity())
    }

    /// The holder of the last observed record, if any.
    pub fn leader(&self) -> Option<String> {
        self.observed
            .lock()
            .record
            .as_ref()
            .map(|r| r.holder_identity.clone())
            .filter(|h| !h.is_empty())
    }

    /// Competes until cancelled or until leadership, once acquired, is lost.
    ///
    /// Tries to acquire every `retry_period` (with jitter); once leader, spawns
    /// `on_started_leading` and renews every `retry_period`; if no renewal succeeds within
    /// `renew_deadline`, or `cancel` fires, it cancels the leading token, waits (at most one
    /// lease duration) for the `on_started_leading` work to finish, calls
    /// `on_stopped_leading`, releases the lease when `release_on_cancel` is set, and returns.
    /// An elector is meant to be run once; run a new one to compete again.
    pub async fn run(&self, cancel: CancellationToken) -> RunOutcome {
        if !self.acquire(&cancel).await {
            return RunOutcome::NeverLed;
        }
        self.leading.store(true, Ordering::SeqCst);
        let leading = cancel.child_token();
        let work = tokio::spawn((self.callbacks.started)(leading.clone()));
        let outcome = self.renew(&cancel).await;
        leading.cancel();
        // Unlike client-go, wait for the leading work to stop before reporting and releasing:
        // releasing at once would let a successor start while this candidate still drains.
        // Work that ignores its token for a whole lease duration keeps the lease unreleased,
        // so that it expires on its own instead of being handed over early.
        let drained = tokio::time::timeout(self.config.lease_duration, work)
            .await
            .is_ok();
        self.leading.store(false, Ordering::SeqCst);
        tracing::info!(lock = %self.lock.describe(), identity = self.lock.identity(), ?outcome, "stopped leading");
        if let Some(stopped) = &self.callbacks.stopped {
            stopped();
        }
        if self.config.release_on_cancel {
            if drained {
                self.release().await;
            } else {
                tracing::warn!(lock = %self.lock.describe(), "the leading work did not stop within the lease duration; not releasing the lease");
            }
        }
        outcome
    }

    async fn acquire(&self, cancel: &CancellationToken) -> bool {
        tracing::info!(lock = %self.lock.describe(), identity = self.lock.identity(), "attempting to acquire leader lease");
        loop {
            let acquired = tokio::select! {
                biased;
                _ = cancel.cancelled() => return false,
                ok = self.try_acquire_or_renew() => ok,
            };
            self.maybe_report_transition();
            if acquired {
                tracing::info!(lock = %self.lock.describe(), identity = self.lock.identity(), "acquired lease");
                return true;
            }
            let jitter = self
                .config
                .retry_period
                .mul_f64(JITTER_FACTOR * rand::random::<f64>());
            tokio::select! {
                biased;
                _ = cancel.cancelled() => return false,
                _ = tokio::time::sleep(self.config.retry_period + jitter) => {}
            }
        }
    }

    async fn renew(&self, cancel: &CancellationToken) -> RunOutcome {
        loop {
            let deadline = Instant::now() + self.config.renew_deadline;
            let attempts = async {
                loop {
                    if self.try_acquire_or_renew().await {
                        return true;
                    }
                    if self.leader().is_some() && !self.holds_record() {
                        // Another candidate holds it: no point waiting for the deadline.
                        return false;
                    }
                    tokio::time::sleep(self.config.retry_period).await;
                }
            };
            let renewed = tokio::select! {
                biased;
                _ = cancel.cancelled() => return RunOutcome::Cancelled,
                r = tokio::time::timeout_at(deadline, attempts) => r.unwrap_or(false),
            };
            self.maybe_report_transition();
            if !renewed {
                tracing::warn!(lock = %self.lock.describe(), identity = self.lock.identity(), "failed to renew lease within the renew deadline");
                return RunOutcome::Lost;
            }
            tokio::select! {
                biased;
                _ = cancel.cancelled() => return RunOutcome::Cancelled,
                _ = tokio::time::sleep(self.config.retry_period) => {}
            }
        }
    }

    /// Clears the holder if the lease is still ours (client-go's `release`), bounded by
    /// `renew_deadline`. Returns whether the lease is known not to be held by us any more.
    async fn release(&self) -> bool {
        let attempt = async {
            let current = match self.lock.get().await {
                Ok(Some(r)) => r,
                Ok(None) => return true,
                Err(e) => {
                    tracing::warn!(error = %e, "cannot read the lease to release it");
                    return false;
                }
            };
            if current.holder_identity != self.lock.identity() {
                return true;
            }
            let now = self.clock.wall(Instant::now());
            let released = LeaderElectionRecord {
                holder_identity: String::new(),
                lease_duration_seconds: 1,
                acquire_time: Some(now),
                renew_time: Some(now),
                leader_transitions: current.leader_transitions,
            };
            match self.lock.update(&released).await {
                Ok(()) => {
                    self.set_observed(released);
                    true
                }
                Err(e) => {
                    tracing::warn!(error = %e, "failed to release the lease");
                    false
                }
            }
        };
        tokio::time::timeout(self.config.renew_deadline, attempt)
            .await
            .unwrap_or(false)
    }

    fn set_observed(&self, record: LeaderElectionRecord) {
        let mut o = self.observed.lock();
        o.record = Some(record);
        o.time = Some(Instant::now());
    }

    /// Whether the observed record's lease, counted from when we observed it, is still
    /// running at `now` (client-go's `isLeaseValid`).
    fn observed_lease_valid(&self, now: Instant) -> bool {
        let o = self.observed.lock();
        match (&o.record, o.time) {
            (Some(r), Some(t)) => t + lease_secs(r) > now,
            _ => false,
        }
    }

    /// One attempt, client-go's `tryAcquireOrRenew`.
    async fn try_acquire_or_renew(&self) -> bool {
        let now = Instant::now();
        let wall = self.clock.wall(now);
        let mut desired = LeaderElectionRecord {
            holder_identity: self.lock.identity().to_owned(),
            lease_duration_seconds: self.config.lease_duration_seconds(),
            acquire_time: Some(wall),
            renew_time: Some(wall),
            leader_transitions: 0,
        };

        // 1. Fast path: the leader renews optimistically from the record it last wrote.
        if self.holds_record() && self.observed_lease_valid(now) {
            if let Some(old) = self.observed.lock().record.clone() {
                desired.acquire_time = old.acquire_time;
                desired.leader_transitions = old.leader_transitions;
            }
            match self.lock.update(&desired).await {
                Ok(()) => {
                    self.set_observed(desired);
                    return true;
                }
                Err(e) => {
                    tracing::debug!(error = %e, "optimistic renewal failed, falling back to the slow path");
                }
            }
        }

        // 2. Read the record, or create it.
        let old = match self.lock.get().await {
            Ok(Some(old)) => old,
            Ok(None) => {
                return match self.lock.create(&desired).await {
                    Ok(()) => {
                        self.set_observed(desired);
                        true
                    }
                    Err(e) => {
                        tracing::debug!(error = %e, "cannot create the lease");
                        false
                    }
                };
            }
            Err(e) => {
                tracing::debug!(error = %e, "cannot read the lease");
                return false;
            }
        };

        // 3. A changed record restarts the expiry clock, measured locally.
        let changed = self.observed.lock().record.as_ref() != Some(&old);
        if changed {
            self.set_observed(old.clone());
        }
        let expired = !self.observed_lease_valid(now);
        if !old.holder_identity.is_empty() && !expired && !self.holds_record() {
            tracing::trace!(holder = %old.holder_identity, "lease held by another candidate");
            return false;
        }

        // 4. Take it over (or renew through the slow path).
        if self.holds_record() {
            desired.acquire_time = old.acquire_time;
            desired.leader_transitions = old.leader_transitions;
        } else {
            desired.leader_transitions = old.leader_transitions.saturating_add(1);
        }
        match self.lock.update(&desired).await {
            Ok(()) => {
                self.set_observed(desired);
                true
            }
            Err(e) => {
                tracing::debug!(error = %e, conflict = e.is_conflict(), "cannot update the lease");
                false
            }
        }
    }

    fn maybe_report_transition(&self) {
        let Some(holder) = self.leader() else {
            return;
        };
        {
            let mut reported = self.reported_leader.lock();
            if *reported == holder {
                return;
            }
            reported.clone_from(&holder);
        }
        tracing::info!(lock = %self.lock.describe(), %holder, "new leader observed");
        if let Some(f) = &self.callbacks.new_leader {
            f(&holder);
        }
    }
}

fn lease_secs(r: &LeaderElectionRecord) -> Duration {
    Duration::from_secs(u64::try_from(r.lease_duration_seconds).unwrap_or(0))
}
