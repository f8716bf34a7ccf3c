//! The handover protocol as two pure decisions: what the sharder writes on an object
//! ([`plan`]) and what a replica's worker does with a key it popped ([`gate`]).
//!
//! An object carries up to two labels (names in [`ShardLabels`]):
//!
//! - the **shard label** names the member that owns it; each replica's informers select
//!   `shard-label=<its identity>`, so an object is in exactly one replica's cache;
//! - the **drain label**, set by the sharder on an object that must move, names the member
//!   it moves to.
//!
//! A move from a live member A to B goes: the sharder sets `drain=B` (A keeps the object);
//! A's informer sees the update and queues the key; A's worker, which holds the key alone
//! (the workqueue never hands one key to two workers) and therefore has no reconcile of it
//! in flight, writes `shard=B` and removes the drain label. Only that write puts the object
//! into B's selection. Every write carries the `resourceVersion` it was decided on, so a
//! decision based on a stale cache fails with 409 Conflict and is retried on fresher data;
//! the sharder's and the owner's writes can never interleave into two owners.
//!
//! A member whose Lease expired (or was released) has stopped reconciling — a replica
//! stops at its renew deadline, before its lease can expire, as the leader elector does —
//! so the sharder moves its objects directly. Objects without a shard label are assigned.

use super::ring::owner_of;

/// The label keys of one sharded controller.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShardLabels {
    /// `shard.kinform.io/<controller>`: the owning member.
    pub shard: String,
    /// `drain.shard.kinform.io/<controller>`: the member an object is moving to.
    pub drain: String,
}

impl ShardLabels {
    /// The labels of the controller named `controller` (its [`name`](crate::controller::ControllerBuilder::name),
    /// which must therefore be a valid label-key name: at most 63 characters of
    /// `[a-z0-9A-Z-_.]`, alphanumeric at both ends).
    pub fn for_controller(controller: &str) -> Self {
        Self {
            shard: format!("shard.kinform.io/{controller}"),
            drain: format!("drain.shard.kinform.io/{controller}"),
        }
    }

    /// The label selector of `member`'s shard.
    pub fn selector(&self, member: &str) -> String {
        format!("{}={member}", self.shard)
    }
}

/// What the sharder writes on one object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Step {
    /// Nothing.
    Keep,
    /// `shard=<member>`, no drain label: a new object, or one of a dead member.
    Assign(String),
    /// `drain=<member>`: the live owner must hand the object over.
    Drain(String),
    /// Remove the drain label: the object's owner is again the desired member.
    CancelDrain,
}

/// The sharder's decision for an object with key `key`, shard label `shard` and drain
/// label `drain`, given the live members.
pub(crate) fn plan(key: &str, shard: Option<&str>, drain: Option<&str>, live: &[String]) -> Step {
    let Some(desired) = owner_of(key, live.iter().map(String::as_str)) else {
        return Step::Keep; // no member: nobody to give it to
    };
    let alive = |m: &str| live.iter().any(|l| l == m);
    match shard {
        Some(owner) if !owner.is_empty() && alive(owner) => {
            if owner == desired {
                match drain {
                    Some(_) => Step::CancelDrain,
                    None => Step::Keep,
                }
            } else if drain == Some(desired) {
                Step::Keep // waiting for the owner to hand it over
            } else {
                Step::Drain(desired.to_owned())
            }
        }
        _ => Step::Assign(desired.to_owned()),
    }
}

/// What a replica's worker does with a key it popped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Gate {
    /// Call the reconcile.
    Reconcile,
    /// Do nothing: the object is not (or no longer) this replica's.
    Skip,
    /// Hand the object over: write `shard=to` without the drain label, at
    /// `resource_version`.
    Release {
        /// The member it moves to.
        to: String,
    },
}

/// The worker's decision for a key whose cached object has shard label `shard` and drain
/// label `drain` (`present` false when the cache has no object), where `released` tells
/// whether this replica handed the key over and has not seen it come back since, and
/// `deleted` whether the object left this replica's cache (a delete notification of its
/// scoped informer) and the key was not reconciled since.
pub(crate) fn gate(
    me: &str,
    present: bool,
    shard: Option<&str>,
    drain: Option<&str>,
    released: bool,
    deleted: bool,
) -> Gate {
    if !present {
        // Gone from this replica's selection: moved away by our own release (the new owner
        // reconciles it), deleted while ours (reconcile the deletion), or never ours: a key
        // mapped from a related object, or queued by an earlier membership, of an object
        // another replica holds.
        return if deleted && !released {
            Gate::Reconcile
        } else {
            Gate::Skip
        };
    }
    if shard != Some(me) {
        return Gate::Skip;
    }
    match drain {
        Some(to) if to != me => Gate::Release { to: to.to_owned() },
        _ => Gate::Reconcile,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn live(ms: &[&str]) -> Vec<String> {
        ms.iter().map(|m| (*m).to_owned()).collect()
    }

    #[test]
    fn unlabelled_and_dead_owners_are_assigned_directly() {
        let l = live(&["a", "b"]);
        let want = owner_of("ns/x", ["a", "b"]).unwrap().to_owned();
        assert_eq!(plan("ns/x", None, None, &l), Step::Assign(want.clone()));
        assert_eq!(plan("ns/x", Some(""), None, &l), Step::Assign(want.clone()));
        assert_eq!(
            plan("ns/x", Some("dead"), Some("a"), &l),
            Step::Assign(want)
        );
        assert_eq!(plan("ns/x", None, None, &[]), Step::Keep);
    }

    #[test]
    fn live_owner_is_asked_to_drain_then_left_alone() {
        let l = live(&["a", "b"]);
        let want = owner_of("ns/x", ["a", "b"]).unwrap();
        let other = if want == "a" { "b" } else { "a" };
        assert_eq!(plan("ns/x", Some(want), None, &l), Step::Keep);
        assert_eq!(
            plan("ns/x", Some(other), None, &l),
            Step::Drain(want.to_owned())
        );
        assert_eq!(plan("ns/x", Some(other), Some(want), &l), Step::Keep);
        // The target changed while draining: retarget; back to the owner: cancel.
        assert_eq!(
            plan("ns/x", Some(other), Some("gone"), &l),
            Step::Drain(want.to_owned())
        );
        assert_eq!(plan("ns/x", Some(want), Some(other), &l), Step::CancelDrain);
    }

    #[test]
    fn worker_reconciles_only_its_own_undrained_objects() {
        assert_eq!(
            gate("a", true, Some("a"), None, false, false),
            Gate::Reconcile
        );
        assert_eq!(
            gate("a", true, Some("a"), None, true, false),
            Gate::Reconcile
        );
        assert_eq!(
            gate("a", true, Some("a"), Some("b"), false, false),
            Gate::Release { to: "b".into() }
        );
        assert_eq!(gate("a", true, Some("b"), None, false, false), Gate::Skip);
        // Deleted while ours: the deletion is reconciled; released or never ours: not.
        assert_eq!(gate("a", false, None, None, false, true), Gate::Reconcile);
        assert_eq!(gate("a", false, None, None, true, true), Gate::Skip);
        assert_eq!(gate("a", false, None, None, false, false), Gate::Skip);
    }
}
