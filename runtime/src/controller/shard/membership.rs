//! Membership: every replica keeps a `coordination.k8s.io/v1` Lease of its own, and the live
//! Leases are the members.
//!
//! - [`run_member`] keeps this replica's Lease `<controller>-shard-<identity>`: it creates
//!   it, then renews `renewTime` every `retry_period` through [`LeaseLock`] (an update at the
//!   resourceVersion last read, so two writers never overwrite each other). If no renewal
//!   succeeds for `renew_deadline`, membership is lost and the replica stops reconciling;
//!   as `renew_deadline < lease_duration`, it stops before anyone may consider its lease
//!   expired — client-go's `leaderelection` rule for a leader, applied to a member.
//! - [`MemberTable`] is the sharder's view. Liveness is judged as client-go's
//!   `tryAcquireOrRenew` judges a lease: from the moment **this observer** last saw the
//!   Lease's record change, on its own monotonic clock, plus `leaseDurationSeconds`. The
//!   `renewTime` written by another machine is never compared to the local clock, so clock
//!   skew does not matter. A Lease with an empty holder (released by a replica that shut down
//!   gracefully) is not a member.

use std::collections::BTreeMap;
use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::coordination::v1::Lease;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::leader::{LeaderElectionConfig, LeaderElectionRecord, LeaseLock, ResourceLock};
use kinform_client::{Api, ListParams};

/// The name of the Lease of `identity` in the controller `controller`.
pub(crate) fn lease_name(controller: &str, identity: &str) -> String {
    format!("{}{identity}", lease_prefix(controller))
}

/// The common prefix of a controller's member Leases.
pub(crate) fn lease_prefix(controller: &str) -> String {
    format!("{controller}-shard-")
}

/// How the membership of this replica ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MemberEnd {
    /// Asked to leave: the Lease was released (holder cleared), so the sharder moves this
    /// replica's objects at once.
    Left,
    /// Renewals stopped (abandoned, as a crashed replica's): the Lease expires on its own.
    Abandoned,
    /// No renewal succeeded within `renew_deadline`.
    Lost,
}

/// Keeps this replica's Lease until `leave` (release it) or `abandon` (stop renewing)
/// fires, or until renewal fails for `renew_deadline`. `joined` is cancelled after the
/// first successful write; until then failed attempts back off from `retry_period`,
/// doubling up to `lease_duration` (a replica that cannot reach the API server, rejoining
/// after a lost membership, does not retry at the renewal rate).
pub(crate) async fn run_member(
    lock: LeaseLock,
    timing: LeaderElectionConfig,
    joined: CancellationToken,
    leave: CancellationToken,
    abandon: CancellationToken,
) -> MemberEnd {
    let mut last_ok: Option<Instant> = None;
    let acquired = Timestamp::now();
    let mut transitions: Option<i32> = None;
    let mut backoff = timing.retry_period;
    loop {
        let started = Instant::now();
        let record = LeaderElectionRecord {
            holder_identity: lock.identity().to_owned(),
            lease_duration_seconds: timing.lease_duration_seconds(),
            acquire_time: Some(acquired),
            renew_time: Some(Timestamp::now()),
            leader_transitions: transitions.unwrap_or(0),
        };
        let attempt = async {
            // Renew from the Lease last written; on any failure read it again and retry.
            if lock.cached().is_some() && lock.update(&record).await.is_ok() {
                return Ok(None);
            }
            match lock.get().await? {
                None => lock.create(&record).await.map(|()| None),
                Some(old) => lock
                    .update(&record)
                    .await
                    .map(|()| Some(old.leader_transitions)),
            }
        };
        let result = tokio::select! {
            biased;
            _ = abandon.cancelled() => return MemberEnd::Abandoned,
            r = tokio::time::timeout(timing.renew_deadline, attempt) => r,
        };
        match result {
            Ok(Ok(t)) => {
                if transitions.is_none() {
                    transitions = Some(t.unwrap_or(0));
                }
                last_ok = Some(started);
                joined.cancel();
            }
            Ok(Err(error)) => {
                tracing::debug!(lease = %lock.describe(), %error, "cannot renew the member lease");
            }
            Err(_) => tracing::debug!(lease = %lock.describe(), "member lease renewal timed out"),
        }
        if let Some(ok) = last_ok
            && ok.elapsed() >= timing.renew_deadline
        {
            tracing::warn!(lease = %lock.describe(), "member lease not renewed within the renew deadline; leaving the shard ring");
            return MemberEnd::Lost;
        }
        let wait = if last_ok.is_some() {
            timing.retry_period
        } else {
            let wait = backoff;
            backoff = (backoff * 2).min(timing.lease_duration);
            wait
        };
        tokio::select! {
            biased;
            _ = abandon.cancelled() => return MemberEnd::Abandoned,
            _ = leave.cancelled() => {
                release(&lock, &timing).await;
                return MemberEnd::Left;
            }
            _ = tokio::time::sleep(wait) => {}
        }
    }
}

/// Clears the holder of this replica's Lease (bounded by `renew_deadline`).
async fn release(lock: &LeaseLock, timing: &LeaderElectionConfig) {
    let attempt = async {
        let Some(current) = lock.get().await? else {
            return Ok(());
        };
        if current.holder_identity != lock.identity() {
            return Ok(());
        }
        let now = Timestamp::now();
        let released = LeaderElectionRecord {
            holder_identity: String::new(),
            lease_duration_seconds: 1,
            acquire_time: Some(now),
            renew_time: Some(now),
            leader_transitions: current.leader_transitions,
        };
        lock.update(&released).await
    };
    match tokio::time::timeout(timing.renew_deadline, attempt).await {
        Ok(Ok(())) => tracing::info!(lease = %lock.describe(), "released the member lease"),
        Ok(Err(error)) => {
            tracing::warn!(lease = %lock.describe(), %error, "cannot release the member lease");
        }
        Err(_) => tracing::warn!(lease = %lock.describe(), "releasing the member lease timed out"),
    }
}

/// One Lease as last observed.
#[derive(Clone, Debug)]
struct Observed {
    record: LeaderElectionRecord,
    at: Instant,
}

/// What changed in the membership at one [`refresh`](MemberTable::refresh).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Change {
    /// Members that became live.
    pub(crate) joined: Vec<String>,
    /// Members that are no longer live (lease expired or released).
    pub(crate) left: Vec<String>,
}

/// One replica's view of the member Leases. Every replica keeps one up to date (see
/// [`observe_members`]), so that a replica that becomes the sharder already knows which
/// Leases stopped changing, instead of granting each of them a fresh lease duration.
#[derive(Debug)]
pub(crate) struct MemberTable {
    prefix: String,
    leases: BTreeMap<String, Observed>,
    live: Vec<String>,
    /// Other Leases of the same lists kept as observed (not members), by a name prefix.
    others_prefix: Option<String>,
    others: BTreeMap<String, Observed>,
}

impl MemberTable {
    pub(crate) fn new(controller: &str) -> Self {
        Self {
            prefix: lease_prefix(controller),
            leases: BTreeMap::new(),
            live: Vec::new(),
            others_prefix: None,
            others: BTreeMap::new(),
        }
    }

    /// Also keeps the observations of the listed Leases whose names begin with `prefix`
    /// (a fleet's cluster Leases), for [`observation`](Self::observation).
    pub(crate) fn also_observing(mut self, prefix: String) -> Self {
        self.others_prefix = Some(prefix);
        self
    }

    /// A Lease kept by [`also_observing`](Self::also_observing): its record as last listed
    /// and when (on this replica's clock) that record was first seen unchanged.
    pub(crate) fn observation(&self, lease: &str) -> Option<(LeaderElectionRecord, Instant)> {
        self.others.get(lease).map(|o| (o.record.clone(), o.at))
    }

    /// The live members, sorted.
    pub(crate) fn live(&self) -> &[String] {
        &self.live
    }

    /// Records the Leases just listed (those of other controllers are ignored) and
    /// recomputes the live members.
    pub(crate) fn observe(&mut self, leases: Vec<Lease>) -> Change {
        let now = Instant::now();
        let mut seen = BTreeMap::new();
        let mut others = BTreeMap::new();
        for lease in leases {
            let Some(name) = lease.metadata.name.clone() else {
                continue;
            };
            let (previous, into) = if name.starts_with(&self.prefix) {
                (&self.leases, &mut seen)
            } else if self
                .others_prefix
                .as_ref()
                .is_some_and(|p| name.starts_with(p))
            {
                (&self.others, &mut others)
            } else {
                continue;
            };
            let record = LeaderElectionRecord::from_lease_spec(&lease.spec.unwrap_or_default());
            let at = match previous.get(&name) {
                Some(o) if o.record == record => o.at,
                _ => now,
            };
            into.insert(name, Observed { record, at });
        }
        self.leases = seen;
        self.others = others;
        self.recompute(now)
    }

    /// Recomputes the live members now (leases expire by time alone, so this is also what
    /// happens when a list fails: the previous observations stay).
    pub(crate) fn expire(&mut self) -> Change {
        self.recompute(Instant::now())
    }

    fn recompute(&mut self, now: Instant) -> Change {
        let mut live: Vec<String> = self
            .leases
            .values()
            .filter(|o| {
                !o.record.holder_identity.is_empty()
                    && o.at + secs(o.record.lease_duration_seconds) > now
            })
            .map(|o| o.record.holder_identity.clone())
            .collect();
        live.sort();
        live.dedup();
        let change = Change {
            joined: live
                .iter()
                .filter(|m| !self.live.contains(m))
                .cloned()
                .collect(),
            left: self
                .live
                .iter()
                .filter(|m| !live.contains(m))
                .cloned()
                .collect(),
        };
        self.live = live;
        change
    }
}

/// Lists the member Leases every `period` into `table` until `stop` fires.
pub(crate) async fn observe_members(
    api: Api<Lease>,
    table: &parking_lot::Mutex<MemberTable>,
    period: Duration,
    stop: CancellationToken,
) {
    loop {
        refresh(&api, table).await;
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = tokio::time::sleep(period) => {}
        }
    }
}

/// Lists the member Leases once into `table`; returns the live members. On a failed list
/// the previous observations stay, so members expire only by time, never because of one
/// lost list.
pub(crate) async fn refresh(
    api: &Api<Lease>,
    table: &parking_lot::Mutex<MemberTable>,
) -> Vec<String> {
    match api.list(&ListParams::default()).await {
        Ok(list) => {
            let mut t = table.lock();
            t.observe(list.items);
            t.live().to_vec()
        }
        Err(error) => {
            tracing::warn!(%error, "cannot list the member leases");
            let mut t = table.lock();
            t.expire();
            t.live().to_vec()
        }
    }
}

fn secs(s: i32) -> Duration {
    Duration::from_secs(u64::try_from(s).unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(holder: &str, renew: i64) -> LeaderElectionRecord {
        LeaderElectionRecord {
            holder_identity: holder.into(),
            lease_duration_seconds: 2,
            acquire_time: None,
            renew_time: Timestamp::from_second(renew).ok(),
            leader_transitions: 0,
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_lease_is_live_for_its_duration_after_it_last_changed_locally() {
        let mut t = MemberTable::new("foos");
        let t0 = Instant::now();
        t.leases.insert(
            "foos-shard-a".into(),
            Observed {
                record: record("a", 100),
                at: t0,
            },
        );
        t.leases.insert(
            "foos-shard-b".into(),
            Observed {
                record: record("", 100),
                at: t0,
            },
        );
        let c = t.recompute(t0);
        assert_eq!(c.joined, vec!["a".to_owned()]);
        assert_eq!(t.live(), ["a".to_owned()]);
        assert_eq!(
            t.recompute(t0 + Duration::from_millis(1999)),
            Change::default()
        );
        let c = t.recompute(t0 + Duration::from_secs(2));
        assert_eq!(c.left, vec!["a".to_owned()]);
        assert!(t.live().is_empty());
    }
}
