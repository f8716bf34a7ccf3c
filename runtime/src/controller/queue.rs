//! [`ControllerQueue`]: the workqueue of a controller, either the [`PriorityQueue`] (the
//! default, as in controller-runtime, #3332) or client-go's rate-limiting queue
//! ([`ControllerBuilder::priority_queue(false)`](super::ControllerBuilder::priority_queue)).
//!
//! With the priority queue the controller's handlers queue keys as controller-runtime does:
//!
//! 1. keys of the initial list (and of the cached objects replayed to a handler added late)
//!    and of resyncs (an update with an unchanged resourceVersion) at [`Priority::LOW`];
//! 2. keys of every other watch event (add, update, delete) at [`Priority::NORMAL`];
//! 3. a requeue after an error (through the rate limiter) at the priority the key was handed
//!    out at; a requeue the reconcile asks for ([`Action`](super::Action)) at the priority it
//!    names, or else at the priority the key was handed out at.
//!
//! Unlike upstream's, the queue ages its items (see [`PriorityQueue`]): a listed key waits
//! at most [`max_wait`](crate::workqueue::PriorityQueueConfig::max_wait) plus the time to
//! serve the keys queued before it, however many events arrive meanwhile (controller-runtime
//! issue #3496).
//!
//! With the rate-limiting queue priorities are ignored and every method is the
//! [`RateLimitingQueue`]'s.

use std::sync::Arc;
use std::time::Duration;

use crate::workqueue::{
    Priority, PriorityQueue, PriorityQueueConfig, QueueConfig, RateLimiter, RateLimitingQueue,
};

/// A controller's workqueue of object keys (see [`Controller::queue`](super::Controller::queue)).
/// Cloning gives another handle to the same queue.
#[derive(Clone, Debug)]
pub enum ControllerQueue {
    /// client-go's rate-limiting queue (`priority_queue(false)`).
    RateLimiting(RateLimitingQueue<String>),
    /// The priority queue, with aging (the default).
    Priority(PriorityQueue<String>),
}

/// How a controller makes its queue (again, for each membership of a sharded replica).
#[derive(Clone)]
pub(crate) struct QueueSpec {
    pub(crate) config: QueueConfig,
    pub(crate) limiter: Arc<dyn RateLimiter<String>>,
    /// `Some(max_wait)` for a priority queue.
    pub(crate) priority: Option<Option<Duration>>,
}

impl QueueSpec {
    /// A new, empty queue.
    pub(crate) fn build(&self) -> ControllerQueue {
        match self.priority {
            None => ControllerQueue::RateLimiting(RateLimitingQueue::with_config(
                Arc::clone(&self.limiter),
                self.config.clone(),
            )),
            Some(max_wait) => ControllerQueue::Priority(PriorityQueue::with_shared_limiter(
                Arc::clone(&self.limiter),
                PriorityQueueConfig::default()
                    .with_queue_config(self.config.clone())
                    .with_max_wait(max_wait),
            )),
        }
    }
}

/// Calls the same method on either queue.
macro_rules! both {
    ($self:ident, $q:ident => $e:expr) => {
        match $self {
            ControllerQueue::RateLimiting($q) => $e,
            ControllerQueue::Priority($q) => $e,
        }
    };
}

impl ControllerQueue {
    /// Adds `key` at [`Priority::NORMAL`].
    pub fn add(&self, key: String) {
        both!(self, q => q.add(key));
    }

    /// Adds `key` at `priority` (the rate-limiting queue ignores the priority).
    pub fn add_with_priority(&self, key: String, priority: Priority) {
        match self {
            Self::RateLimiting(q) => q.add(key),
            Self::Priority(q) => q.add_with_priority(key, priority),
        }
    }

    /// Adds `key` at `priority` once `delay` has passed.
    pub fn add_after_with_priority(&self, key: String, delay: Duration, priority: Priority) {
        match self {
            Self::RateLimiting(q) => q.add_after(key, delay),
            Self::Priority(q) => q.add_after_with_priority(key, delay, priority),
        }
    }

    /// Adds `key` at `priority` after the wait its rate limiter decides.
    pub fn add_rate_limited_with_priority(&self, key: String, priority: Priority) {
        match self {
            Self::RateLimiting(q) => q.add_rate_limited(key),
            Self::Priority(q) => q.add_rate_limited_with_priority(key, priority),
        }
    }

    /// Waits for the next key and the priority it is handed out at ([`Priority::NORMAL`] from
    /// the rate-limiting queue); `None` once shut down and empty.
    pub async fn get_with_priority(&self) -> Option<(String, Priority)> {
        match self {
            Self::RateLimiting(q) => q.get().await.map(|k| (k, Priority::NORMAL)),
            Self::Priority(q) => q.get_with_priority().await,
        }
    }

    /// Marks `key` as done processing.
    pub fn done(&self, key: &String) {
        both!(self, q => q.done(key));
    }

    /// Clears `key`'s failure history in the rate limiter.
    pub fn forget(&self, key: &String) {
        both!(self, q => q.forget(key));
    }

    /// How many times `key` was rate-limited since it was last forgotten.
    pub fn num_requeues(&self, key: &String) -> usize {
        both!(self, q => q.num_requeues(key))
    }

    /// Keys waiting to be handed out.
    pub fn len(&self) -> usize {
        both!(self, q => q.len())
    }

    /// Whether no key is waiting to be handed out.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Keys waiting to be handed out, by priority, highest first (see
    /// [`PriorityQueue::len_by_priority`]); the rate-limiting queue's keys all count as
    /// [`Priority::NORMAL`].
    pub fn len_by_priority(&self) -> Vec<(Priority, usize)> {
        match self {
            Self::RateLimiting(q) => match q.len() {
                0 => Vec::new(),
                n => vec![(Priority::NORMAL, n)],
            },
            Self::Priority(q) => q.len_by_priority(),
        }
    }

    /// Keys handed out and not yet done.
    pub fn processing_len(&self) -> usize {
        both!(self, q => q.processing_len())
    }

    /// Stops the queue (see [`PriorityQueue::shutdown`]).
    pub fn shutdown(&self) {
        both!(self, q => q.shutdown());
    }

    /// Stops the queue and waits until every key handed out is done.
    pub async fn shutdown_with_drain(&self) {
        both!(self, q => q.shutdown_with_drain().await);
    }

    /// Whether the queue was shut down.
    pub fn is_shutting_down(&self) -> bool {
        both!(self, q => q.is_shutting_down())
    }

    /// The rate-limiting queue, unless this is the priority queue.
    pub fn as_rate_limiting(&self) -> Option<&RateLimitingQueue<String>> {
        match self {
            Self::RateLimiting(q) => Some(q),
            Self::Priority(_) => None,
        }
    }

    /// The priority queue, if the controller uses it.
    pub fn as_priority(&self) -> Option<&PriorityQueue<String>> {
        match self {
            Self::RateLimiting(_) => None,
            Self::Priority(q) => Some(q),
        }
    }
}

/// The priority of a handler's notification: LOW for the initial list and resyncs.
pub(crate) fn listed(is_in_initial_list: bool) -> Priority {
    if is_in_initial_list {
        Priority::LOW
    } else {
        Priority::NORMAL
    }
}
