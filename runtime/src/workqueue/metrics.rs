//! Metrics hooks of the work queues.
//!
//! This reproduces client-go's `util/workqueue/metrics.go`: a queue that has a *name* reports
//! to a [`MetricsProvider`], which hands out one metric object per queue and per kind of
//! measurement. The measurements and their Prometheus names (see
//! [`PrometheusMetricsProvider`](super::PrometheusMetricsProvider), feature `prometheus`) are
//! client-go's:
//!
//! | hook | Prometheus name | updated when |
//! | --- | --- | --- |
//! | [`new_depth_metric`](MetricsProvider::new_depth_metric) | `workqueue_depth` | +1 on an add that is not a duplicate, -1 on get |
//! | [`new_adds_metric`](MetricsProvider::new_adds_metric) | `workqueue_adds_total` | on an add that is not a duplicate |
//! | [`new_latency_metric`](MetricsProvider::new_latency_metric) | `workqueue_queue_duration_seconds` | on get: time since the first add |
//! | [`new_work_duration_metric`](MetricsProvider::new_work_duration_metric) | `workqueue_work_duration_seconds` | on done: time since get |
//! | [`new_unfinished_work_seconds_metric`](MetricsProvider::new_unfinished_work_seconds_metric) | `workqueue_unfinished_work_seconds` | every 500 ms: sum of the ages of items being processed |
//! | [`new_longest_running_processor_seconds_metric`](MetricsProvider::new_longest_running_processor_seconds_metric) | `workqueue_longest_running_processor_seconds` | every 500 ms: age of the oldest item being processed |
//! | [`new_retries_metric`](MetricsProvider::new_retries_metric) | `workqueue_retries_total` | on every `add_after` (and so every `add_rate_limited`) |
//! | [`new_priority_depth_metric`](MetricsProvider::new_priority_depth_metric) | `workqueue_priority_depth` | [`PriorityQueue`](super::PriorityQueue) only: `workqueue_depth` split by the item's priority |
//! | [`new_priority_latency_metric`](MetricsProvider::new_priority_latency_metric) | `workqueue_priority_queue_duration_seconds` | [`PriorityQueue`](super::PriorityQueue) only: `workqueue_queue_duration_seconds` split by the priority the item was handed out at |
//!
//! As in client-go, a queue without a name records nothing (and pays nothing: no clock reads
//! on the hot path), and a named queue without an explicit provider uses the process-wide
//! provider installed with [`set_default_metrics_provider`] (client-go's `SetProvider`; the
//! first call wins), or records nothing if none was installed.
//!
//! The two per-priority hooks have default methods that record nothing, so a provider written
//! for the other hooks keeps compiling; they are called once per queue and priority, when an
//! item of that priority is first seen.
//!
//! Hooks are called while the queue's lock is held, exactly as client-go does: they must be
//! cheap and must not call back into the queue.

use std::sync::{Arc, OnceLock};

use tokio::time::Instant;

use super::priority::Priority;

/// A gauge that goes up and down (`workqueue_depth`).
pub trait GaugeMetric: Send + Sync {
    /// Adds one.
    fn inc(&self);
    /// Subtracts one.
    fn dec(&self);
}

/// A gauge that is set to a value (`workqueue_unfinished_work_seconds`,
/// `workqueue_longest_running_processor_seconds`).
pub trait SettableGaugeMetric: Send + Sync {
    /// Sets the value.
    fn set(&self, value: f64);
}

/// A monotonic counter (`workqueue_adds_total`, `workqueue_retries_total`).
pub trait CounterMetric: Send + Sync {
    /// Adds one.
    fn inc(&self);
}

/// A distribution of observations in seconds (`workqueue_queue_duration_seconds`,
/// `workqueue_work_duration_seconds`).
pub trait HistogramMetric: Send + Sync {
    /// Records one observation.
    fn observe(&self, value: f64);
}

/// Creates the metrics of one named queue (client-go's `MetricsProvider`).
///
/// Each method is called once per queue, with the queue's name.
pub trait MetricsProvider: Send + Sync {
    /// `workqueue_depth`: items waiting in the queue.
    fn new_depth_metric(&self, name: &str) -> Box<dyn GaugeMetric>;
    /// `workqueue_adds_total`: adds that were not duplicates.
    fn new_adds_metric(&self, name: &str) -> Box<dyn CounterMetric>;
    /// `workqueue_queue_duration_seconds`: time from add to get.
    fn new_latency_metric(&self, name: &str) -> Box<dyn HistogramMetric>;
    /// `workqueue_work_duration_seconds`: time from get to done.
    fn new_work_duration_metric(&self, name: &str) -> Box<dyn HistogramMetric>;
    /// `workqueue_unfinished_work_seconds`: summed age of the items being processed.
    fn new_unfinished_work_seconds_metric(&self, name: &str) -> Box<dyn SettableGaugeMetric>;
    /// `workqueue_longest_running_processor_seconds`: age of the oldest item being processed.
    fn new_longest_running_processor_seconds_metric(
        &self,
        name: &str,
    ) -> Box<dyn SettableGaugeMetric>;
    /// `workqueue_retries_total`: delayed (and so rate-limited) adds.
    fn new_retries_metric(&self, name: &str) -> Box<dyn CounterMetric>;
    /// `workqueue_priority_depth`: items of `priority` waiting in a
    /// [`PriorityQueue`](super::PriorityQueue) (counted as `workqueue_depth` is). Records
    /// nothing unless overridden.
    fn new_priority_depth_metric(&self, name: &str, priority: Priority) -> Box<dyn GaugeMetric> {
        let _ = (name, priority);
        Box::new(Noop)
    }
    /// `workqueue_priority_queue_duration_seconds`: time from add to get of the items handed
    /// out at `priority` by a [`PriorityQueue`](super::PriorityQueue). Records nothing unless
    /// overridden.
    fn new_priority_latency_metric(
        &self,
        name: &str,
        priority: Priority,
    ) -> Box<dyn HistogramMetric> {
        let _ = (name, priority);
        Box::new(Noop)
    }
}

/// The metric of the default per-priority hooks: records nothing.
struct Noop;

impl GaugeMetric for Noop {
    fn inc(&self) {}
    fn dec(&self) {}
}

impl HistogramMetric for Noop {
    fn observe(&self, _value: f64) {}
}

static DEFAULT_PROVIDER: OnceLock<Arc<dyn MetricsProvider>> = OnceLock::new();

/// Installs the process-wide provider used by named queues that were not given one
/// (client-go's `workqueue.SetProvider`). Only the first call has an effect; it returns
/// whether this call installed `provider`.
pub fn set_default_metrics_provider(provider: Arc<dyn MetricsProvider>) -> bool {
    DEFAULT_PROVIDER.set(provider).is_ok()
}

pub(crate) fn default_metrics_provider() -> Option<Arc<dyn MetricsProvider>> {
    DEFAULT_PROVIDER.get().cloned()
}

/// The metric objects of one named queue.
pub(crate) struct QueueMetrics {
    depth: Box<dyn GaugeMetric>,
    adds: Box<dyn CounterMetric>,
    latency: Box<dyn HistogramMetric>,
    work_duration: Box<dyn HistogramMetric>,
    unfinished_work_seconds: Box<dyn SettableGaugeMetric>,
    longest_running_processor: Box<dyn SettableGaugeMetric>,
    retries: Box<dyn CounterMetric>,
}

impl QueueMetrics {
    pub(crate) fn new(provider: &dyn MetricsProvider, name: &str) -> Self {
        Self {
            depth: provider.new_depth_metric(name),
            adds: provider.new_adds_metric(name),
            latency: provider.new_latency_metric(name),
            work_duration: provider.new_work_duration_metric(name),
            unfinished_work_seconds: provider.new_unfinished_work_seconds_metric(name),
            longest_running_processor: provider.new_longest_running_processor_seconds_metric(name),
            retries: provider.new_retries_metric(name),
        }
    }

    /// An add that was not a duplicate; `added` is the item's add time, set if unset.
    pub(crate) fn add(&self, added: &mut Option<Instant>) {
        self.adds.inc();
        self.depth.inc();
        if added.is_none() {
            *added = Some(Instant::now());
        }
    }

    /// A get: observes the queue latency and starts the work clock; returns the latency
    /// observed, if any.
    pub(crate) fn get(
        &self,
        added: &mut Option<Instant>,
        started: &mut Option<Instant>,
    ) -> Option<f64> {
        let now = Instant::now();
        self.depth.dec();
        *started = Some(now);
        let at = added.take()?;
        let waited = now.saturating_duration_since(at).as_secs_f64();
        self.latency.observe(waited);
        Some(waited)
    }

    /// A done: observes the work duration.
    pub(crate) fn done(&self, started: &mut Option<Instant>) {
        if let Some(at) = started.take() {
            self.work_duration.observe(at.elapsed().as_secs_f64());
        }
    }

    /// A delayed add.
    pub(crate) fn retry(&self) {
        self.retries.inc();
    }

    /// Publishes the unfinished-work gauges from the start times of the items in progress.
    pub(crate) fn update_unfinished_work(&self, started: impl Iterator<Item = Instant>) {
        let now = Instant::now();
        let mut total = 0.0;
        let mut oldest = 0.0_f64;
        for at in started {
            let age = now.saturating_duration_since(at).as_secs_f64();
            total += age;
            oldest = oldest.max(age);
        }
        self.unfinished_work_seconds.set(total);
        self.longest_running_processor.set(oldest);
    }
}
