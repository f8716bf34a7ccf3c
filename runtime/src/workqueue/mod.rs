//! Work queues (client-go `util/workqueue`), typed.
//!
//! Controllers put object keys into a work queue from their event handlers and run workers
//! that take keys out, reconcile, and mark them done. The queue is what makes that safe and
//! cheap, with client-go's guarantees:
//!
//! - [`Queue`]: dirty/processing semantics. A key is never handed to two workers at once,
//!   duplicate adds collapse, and a key re-added while a worker holds it is handed out again
//!   (once) after the worker calls [`done`](Queue::done): no update is lost. Shutdown and
//!   shutdown-with-drain.
//! - [`DelayingQueue`]: [`add_after`](DelayingQueue::add_after), driven by one timer task.
//! - [`RateLimitingQueue`]: [`add_rate_limited`](RateLimitingQueue::add_rate_limited) with a
//!   [`RateLimiter`]: per-item exponential, token bucket, fast-slow, max-of, with-max-wait,
//!   and [`default_controller_rate_limiter`].
//! - [`PriorityQueue`]: a rate-limiting queue that hands out higher [`Priority`]s first
//!   (controller-runtime's priority queue) and ages waiting items so that none starves.
//! - Metrics hooks ([`MetricsProvider`]) with client-go's metric names, and a Prometheus
//!   implementation behind the `prometheus` feature.
//!
//! Items are any `T: Hash + Eq + Clone + Send + Sync + 'static`; a get clones the item once,
//! so cheap-to-clone keys (`Arc<str>`, small integers, or `String` for convenience) are best.
//! All waiting is async and follows Tokio's clock, so tests can run on a paused clock.

mod delaying;
mod metrics;
mod priority;
#[cfg(feature = "prometheus")]
mod prometheus;
mod queue;
mod rate_limiters;
mod rate_limiting;
mod state;

pub use delaying::DelayingQueue;
pub use metrics::{
    CounterMetric, GaugeMetric, HistogramMetric, MetricsProvider, SettableGaugeMetric,
    set_default_metrics_provider,
};
pub use priority::{DEFAULT_MAX_WAIT, Priority, PriorityQueue, PriorityQueueConfig};
#[cfg(feature = "prometheus")]
pub use prometheus::PrometheusMetricsProvider;
#[cfg(feature = "prometheus")]
pub(crate) use prometheus::{
    Counter as PrometheusCounter, Gauge as PrometheusGauge, Histogram as PrometheusHistogram,
};
pub use queue::{Queue, QueueConfig};
pub use rate_limiters::{
    BucketRateLimiter, ItemExponentialFailureRateLimiter, ItemFastSlowRateLimiter,
    MaxOfRateLimiter, RateLimiter, WithMaxWaitRateLimiter, default_controller_rate_limiter,
};
pub use rate_limiting::RateLimitingQueue;
