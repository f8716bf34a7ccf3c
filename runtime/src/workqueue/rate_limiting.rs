//! [`RateLimitingQueue`]: client-go's `TypedRateLimitingInterface`
//! (util/workqueue/rate_limiting_queue.go).
//!
//! A [`DelayingQueue`] plus a [`RateLimiter`]: [`add_rate_limited`](RateLimitingQueue::add_rate_limited)
//! is `add_after(item, limiter.when(item))`, [`forget`](RateLimitingQueue::forget) clears the
//! item's failure history (call it when the item was processed successfully, as client-go
//! controllers do), [`num_requeues`](RateLimitingQueue::num_requeues) reports it.
//!
//! The usual worker loop:
//!
//! ```
//! # #[tokio::main(flavor = "current_thread", start_paused = true)]
//! # async fn main() {
//! use kinform_runtime::workqueue::{RateLimitingQueue, default_controller_rate_limiter};
//!
//! let queue = RateLimitingQueue::new(default_controller_rate_limiter());
//! queue.add("default/web".to_string());
//! let mut attempts = 0;
//! while let Some(key) = queue.get().await {
//!     attempts += 1;
//!     let reconciled = attempts > 2; // fails twice, then succeeds
//!     if reconciled {
//!         queue.forget(&key);
//!         queue.shutdown();
//!     } else {
//!         queue.add_rate_limited(key.clone()); // back in 5 ms, then 10 ms
//!     }
//!     queue.done(&key);
//! }
//! assert_eq!(attempts, 3);
//! # }
//! ```

use std::hash::Hash;
use std::ops::Deref;
use std::sync::Arc;

use super::delaying::DelayingQueue;
use super::queue::QueueConfig;
use super::rate_limiters::RateLimiter;

/// A [`DelayingQueue`] whose retries are paced by a [`RateLimiter`]. Dereferences to the
/// [`DelayingQueue`] (and through it to the [`Queue`](super::Queue)). Cloning gives another
/// handle to the same queue.
pub struct RateLimitingQueue<T> {
    queue: DelayingQueue<T>,
    limiter: Arc<dyn RateLimiter<T>>,
}

impl<T> Clone for RateLimitingQueue<T> {
    fn clone(&self) -> Self {
        Self {
            queue: self.queue.clone(),
            limiter: Arc::clone(&self.limiter),
        }
    }
}

impl<T> Deref for RateLimitingQueue<T> {
    type Target = DelayingQueue<T>;

    fn deref(&self) -> &DelayingQueue<T> {
        &self.queue
    }
}

impl<T> std::fmt::Debug for RateLimitingQueue<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RateLimitingQueue")
            .field("queue", &self.queue)
            .finish_non_exhaustive()
    }
}

impl<T: Hash + Eq + Clone + Send + Sync + 'static> RateLimitingQueue<T> {
    /// An unnamed rate-limiting queue (no metrics).
    ///
    /// # Panics
    ///
    /// Outside a Tokio runtime, as [`tokio::spawn`] (see [`DelayingQueue::new`]).
    pub fn new(limiter: impl RateLimiter<T> + 'static) -> Self {
        Self::with_config(limiter, QueueConfig::default())
    }

    /// A rate-limiting queue with a name and metrics.
    ///
    /// # Panics
    ///
    /// Outside a Tokio runtime, as [`tokio::spawn`] (see [`DelayingQueue::new`]).
    pub fn with_config(limiter: impl RateLimiter<T> + 'static, config: QueueConfig) -> Self {
        Self {
            queue: DelayingQueue::with_config(config),
            limiter: Arc::new(limiter),
        }
    }

    /// Adds `item` after the wait its rate limiter decides (client-go `AddRateLimited`).
    pub fn add_rate_limited(&self, item: T) {
        let delay = self.limiter.when(&item);
        self.queue.add_after(item, delay);
    }

    /// Clears `item`'s failure history in the rate limiter (client-go `Forget`). It does not
    /// remove the item from the queue.
    pub fn forget(&self, item: &T) {
        self.limiter.forget(item);
    }

    /// How many times `item` was rate-limited since it was last forgotten (client-go
    /// `NumRequeues`).
    pub fn num_requeues(&self, item: &T) -> usize {
        self.limiter.num_requeues(item)
    }

    /// The rate limiter.
    pub fn rate_limiter(&self) -> &Arc<dyn RateLimiter<T>> {
        &self.limiter
    }
}
