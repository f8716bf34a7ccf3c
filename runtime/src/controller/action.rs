//! What a reconcile is given ([`Request`]) and what it answers ([`Action`]).

use std::sync::Arc;
use std::time::Duration;

use super::client::ReconcileClient;
use crate::workqueue::Priority;
use kinform_core::resource::split_key;

/// What to do with a key after a successful reconcile.
///
/// Each forgets the key's failure history in the rate limiter (client-go controllers call
/// `queue.Forget(key)` on success); [`requeue_after`](Self::requeue_after) then adds the key
/// back after the delay (`queue.AddAfter(key, d)`), for work that must be re-checked later
/// even if nothing changes (polling an external system, waiting for a rollout).
///
/// A requeue goes in at the priority the key was handed out at (LOW for a key of the initial
/// list, NORMAL for a watch event), unless [`with_priority`](Self::with_priority) names
/// another (controller-runtime's `reconcile.Result.Priority`): a reconcile that waits for a
/// rollout can poll at [`Priority::LOW`] so that it never delays the changes users wait for,
/// or one that hands work to a second step can requeue it at once, ahead of the backlog, with
/// [`requeue`](Self::requeue). The rate-limiting queue
/// ([`priority_queue(false)`](super::ControllerBuilder::priority_queue)) ignores priorities.
///
/// ```
/// use std::time::Duration;
/// use kinform_runtime::controller::Action;
/// use kinform_runtime::workqueue::Priority;
///
/// let poll = Action::requeue_after(Duration::from_secs(30)).with_priority(Priority::LOW);
/// assert_eq!(poll.requeue_delay(), Some(Duration::from_secs(30)));
/// assert_eq!(poll.priority(), Some(Priority::LOW));
/// let next_step = Action::requeue(Priority(10));
/// assert_eq!(next_step.requeue_delay(), Some(Duration::ZERO));
/// assert_eq!(Action::done().requeue_delay(), None);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[must_use]
pub struct Action {
    requeue_after: Option<Duration>,
    priority: Option<Priority>,
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
            priority: None,
        }
    }

    /// Reconcile the key again at once, at `priority` (it is queued again when this
    /// reconcile is done, as any key added while it is processed).
    pub fn requeue(priority: Priority) -> Self {
        Self::requeue_after(Duration::ZERO).with_priority(priority)
    }

    /// The priority of the requeue (ignored by [`done`](Self::done), which requeues
    /// nothing).
    pub fn with_priority(mut self, priority: Priority) -> Self {
        self.priority = Some(priority);
        self
    }

    /// The requested delay, if any.
    pub fn requeue_delay(&self) -> Option<Duration> {
        self.requeue_after
    }

    /// The requested priority of the requeue, if any (`None`: the priority the key was
    /// handed out at).
    pub fn priority(&self) -> Option<Priority> {
        self.priority
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
    /// The client to write through (see [`client`](Self::client)).
    pub(crate) client: ReconcileClient,
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

    /// The client to write through: `req.client().namespaced::<C>(ns)` (or `.all::<C>()`)
    /// is an `Api` whose writes the consistency guard remembers for this key, so that its
    /// next reconcile reads caches that hold them (see [`ReconcileClient`]).
    pub fn client(&self) -> &ReconcileClient {
        &self.client
    }
}
