//! Prometheus implementation of the workqueue metrics hooks (feature `prometheus`).
//!
//! The metric names, help texts, label and buckets are those of Kubernetes'
//! `component-base/metrics/prometheus/workqueue` (what client-go controllers export): subsystem
//! `workqueue`, one label `name` (the queue's name), latency buckets
//! `10ns * 10^i` for i in 0..10.
//!
//! The [`PriorityQueue`](super::PriorityQueue)'s per-priority metrics are two more families
//! with labels `name` and `priority`: `workqueue_priority_depth` and
//! `workqueue_priority_queue_duration_seconds` (same buckets). They stay out of the
//! exposition until a priority queue reports to them.

use prometheus::{CounterVec, GaugeVec, HistogramOpts, HistogramVec, Opts, Registry};

use super::metrics::{
    CounterMetric, GaugeMetric, HistogramMetric, MetricsProvider, SettableGaugeMetric,
};
use super::priority::Priority;

const SUBSYSTEM: &str = "workqueue";
const LABEL: &str = "name";
const PRIORITY_LABEL: &str = "priority";

/// A [`MetricsProvider`] that registers client-go's workqueue metrics in a Prometheus
/// [`Registry`]: `workqueue_depth`, `workqueue_adds_total`,
/// `workqueue_queue_duration_seconds`, `workqueue_work_duration_seconds`,
/// `workqueue_unfinished_work_seconds`, `workqueue_longest_running_processor_seconds` and
/// `workqueue_retries_total`, each labelled with the queue's `name`; and the per-priority
/// `workqueue_priority_depth` and `workqueue_priority_queue_duration_seconds`, labelled with
/// `name` and `priority`.
#[derive(Clone, Debug)]
pub struct PrometheusMetricsProvider {
    depth: GaugeVec,
    adds: CounterVec,
    latency: HistogramVec,
    work_duration: HistogramVec,
    unfinished: GaugeVec,
    longest_running: GaugeVec,
    retries: CounterVec,
    priority_depth: GaugeVec,
    priority_latency: HistogramVec,
}

impl PrometheusMetricsProvider {
    /// Creates the metric families and registers them in `registry`. Fails if the registry
    /// already holds metrics of these names.
    pub fn new(registry: &Registry) -> Result<Self, prometheus::Error> {
        let gauge = |name: &str, help: &str| {
            GaugeVec::new(Opts::new(name, help).subsystem(SUBSYSTEM), &[LABEL])
        };
        let counter = |name: &str, help: &str| {
            CounterVec::new(Opts::new(name, help).subsystem(SUBSYSTEM), &[LABEL])
        };
        let histogram_with =
            |name: &str, help: &str, labels: &[&str]| -> Result<HistogramVec, prometheus::Error> {
                let opts = HistogramOpts::new(name, help)
                    .subsystem(SUBSYSTEM)
                    .buckets(prometheus::exponential_buckets(10e-9, 10.0, 10)?);
                HistogramVec::new(opts, labels)
            };
        let histogram = |name: &str, help: &str| histogram_with(name, help, &[LABEL]);
        let this = Self {
            depth: gauge("depth", "Current depth of workqueue")?,
            adds: counter("adds_total", "Total number of adds handled by workqueue")?,
            latency: histogram(
                "queue_duration_seconds",
                "How long in seconds an item stays in workqueue before being requested.",
            )?,
            work_duration: histogram(
                "work_duration_seconds",
                "How long in seconds processing an item from workqueue takes.",
            )?,
            unfinished: gauge(
                "unfinished_work_seconds",
                "How many seconds of work has done that is in progress and hasn't been \
                 observed by work_duration. Large values indicate stuck threads. One can \
                 deduce the number of stuck threads by observing the rate at which this \
                 increases.",
            )?,
            longest_running: gauge(
                "longest_running_processor_seconds",
                "How many seconds has the longest running processor for workqueue been \
                 running.",
            )?,
            retries: counter(
                "retries_total",
                "Total number of retries handled by workqueue",
            )?,
            priority_depth: GaugeVec::new(
                Opts::new(
                    "priority_depth",
                    "Current depth of a priority workqueue, per priority",
                )
                .subsystem(SUBSYSTEM),
                &[LABEL, PRIORITY_LABEL],
            )?,
            priority_latency: histogram_with(
                "priority_queue_duration_seconds",
                "How long in seconds an item stays in a priority workqueue before being \
                 requested, per priority it is handed out at.",
                &[LABEL, PRIORITY_LABEL],
            )?,
        };
        registry.register(Box::new(this.depth.clone()))?;
        registry.register(Box::new(this.adds.clone()))?;
        registry.register(Box::new(this.latency.clone()))?;
        registry.register(Box::new(this.work_duration.clone()))?;
        registry.register(Box::new(this.unfinished.clone()))?;
        registry.register(Box::new(this.longest_running.clone()))?;
        registry.register(Box::new(this.retries.clone()))?;
        registry.register(Box::new(this.priority_depth.clone()))?;
        registry.register(Box::new(this.priority_latency.clone()))?;
        Ok(this)
    }
}

/// The metric hooks over single Prometheus metrics, shared with the controller's provider.
pub(crate) struct Gauge(pub(crate) prometheus::Gauge);
/// See [`Gauge`].
pub(crate) struct Counter(pub(crate) prometheus::Counter);
/// See [`Gauge`].
pub(crate) struct Histogram(pub(crate) prometheus::Histogram);

impl GaugeMetric for Gauge {
    fn inc(&self) {
        self.0.inc();
    }
    fn dec(&self) {
        self.0.dec();
    }
}

impl SettableGaugeMetric for Gauge {
    fn set(&self, value: f64) {
        self.0.set(value);
    }
}

impl CounterMetric for Counter {
    fn inc(&self) {
        self.0.inc();
    }
}

impl HistogramMetric for Histogram {
    fn observe(&self, value: f64) {
        self.0.observe(value);
    }
}

impl MetricsProvider for PrometheusMetricsProvider {
    fn new_depth_metric(&self, name: &str) -> Box<dyn GaugeMetric> {
        Box::new(Gauge(self.depth.with_label_values(&[name])))
    }
    fn new_adds_metric(&self, name: &str) -> Box<dyn CounterMetric> {
        Box::new(Counter(self.adds.with_label_values(&[name])))
    }
    fn new_latency_metric(&self, name: &str) -> Box<dyn HistogramMetric> {
        Box::new(Histogram(self.latency.with_label_values(&[name])))
    }
    fn new_work_duration_metric(&self, name: &str) -> Box<dyn HistogramMetric> {
        Box::new(Histogram(self.work_duration.with_label_values(&[name])))
    }
    fn new_unfinished_work_seconds_metric(&self, name: &str) -> Box<dyn SettableGaugeMetric> {
        Box::new(Gauge(self.unfinished.with_label_values(&[name])))
    }
    fn new_longest_running_processor_seconds_metric(
        &self,
        name: &str,
    ) -> Box<dyn SettableGaugeMetric> {
        Box::new(Gauge(self.longest_running.with_label_values(&[name])))
    }
    fn new_retries_metric(&self, name: &str) -> Box<dyn CounterMetric> {
        Box::new(Counter(self.retries.with_label_values(&[name])))
    }
    fn new_priority_depth_metric(&self, name: &str, priority: Priority) -> Box<dyn GaugeMetric> {
        let priority = priority.to_string();
        Box::new(Gauge(
            self.priority_depth
                .with_label_values(&[name, priority.as_str()]),
        ))
    }
    fn new_priority_latency_metric(
        &self,
        name: &str,
        priority: Priority,
    ) -> Box<dyn HistogramMetric> {
        let priority = priority.to_string();
        Box::new(Histogram(
            self.priority_latency
                .with_label_values(&[name, priority.as_str()]),
        ))
    }
}
