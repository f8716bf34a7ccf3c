//! What a reconcile is given ([`Request`]) and what it answers ([`Action`]).

use std::sync::Arc;
use std::time::Duration;

use kinform_core::resource::split_key;

/// What to do with a key after a successful reconcile.
///
/// Both forget the key's failure history in the rate limiter (client-go controllers call
/// `queue.Forget(key)` on success); [`requeue_after`](Self::requeue_after) then adds the key
/// back after the delay (`queue.AddAfter(key, d)`), for work that must be re-checked later
/// even if nothing changes (polling an external system, waiting for a rollout).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Action {
    requeue_after: Option<Duration>,
}

impl Action {
    /// The object is in its desired state: nothing more until its next change.
    pub fn done() -> Self {
        Self::default()
    }

    /// Reconcile the key again after `delay`, even if nothing changes meanwhile.
    pub fn requeue_after(delay: Duration) -> Self {
        Self {
            requeue_after: Some(delay),
        }
    }

    /// The requested delay, if any.
    pub fn requeue_delay(&self) -> Option<Duration> {
        self.requeue_after
    }
}

/// One unit of work handed to a reconcile: the key taken from the queue and the object the
/// lister holds for it *now* (the cache may be newer than the change that queued the key,
/// which is the point: reconcile the latest state, not each change).
#[derive(Debug)]
pub struct Request<K> {
    /// The object's key, `namespace/name` or `name`.
    pub key: String,
    /// The cached object, or `None` when it was deleted (or not seen yet).
    pub object: Option<Arc<K>>,
    /// How many times the key was requeued after a failure since its last success (the
    /// rate limiter's `NumRequeues`).
    pub retries: usize,
}

impl<K> Request<K> {
    /// The namespace part of the key (`None` for cluster-scoped objects).
    pub fn namespace(&self) -> Option<&str> {
        split_key(&self.key).0
    }

    /// The name part of the key.
    pub fn name(&self) -> &str {
        split_key(&self.key).1
    }
}
