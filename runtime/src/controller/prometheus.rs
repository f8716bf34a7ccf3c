//! Prometheus implementation of the controller metrics (feature `prometheus`).
//!
//! Names, labels and help texts are controller-runtime's (`pkg/internal/controller/metrics`),
//! so existing dashboards work: `controller_runtime_reconcile_total{controller,result}`,
//! `controller_runtime_reconcile_errors_total{controller}`,
//! `controller_runtime_reconcile_panics_total{controller}`,
//! `controller_runtime_terminal_reconcile_errors_total{controller}`,
//! `controller_runtime_reconcile_time_seconds{controller}` and
//! `controller_runtime_active_workers{controller}`; kinform adds
//! `kinform_reconcile_timeouts_total{controller}`. Sharded controllers add kinform's
//! `kinform_shard_objects{controller,shard}`, `kinform_shard_moves_total{controller}`,
//! `kinform_shard_handover_seconds{controller}` and
//! `kinform_shard_assignment_failures_total{controller}` (see [`super::shard`]); the
//! consistency guard `kinform_consistency_parked_total`, `kinform_consistency_woken_total`,
//! `kinform_consistency_timeouts_total`, `kinform_consistency_incomparable_versions_total`
//! and `kinform_consistency_parked_keys`, each by `controller`. The queue metrics are the workqueue's
//! [`PrometheusMetricsProvider`], registered in the same registry.

use prometheus::{CounterVec, GaugeVec, HistogramOpts, HistogramVec, Opts, Registry};

use super::metrics::{ControllerMetricsProvider, ReconcileResult};
use crate::workqueue::{
    CounterMetric, GaugeMetric, HistogramMetric, MetricsProvider, Priority,
    PrometheusCounter as Counter, PrometheusGauge as Gauge, PrometheusHistogram as Histogram,
    PrometheusMetricsProvider, SettableGaugeMetric,
};

/// Registers controller-runtime's reconcile metrics and client-go's workqueue metrics in a
/// Prometheus [`Registry`]; give it to [`ControllerBuilder::metrics`](super::ControllerBuilder::metrics).
/// One value serves any number of controllers (they are told apart by the `controller` and
/// `name` labels).
#[derive(Clone, Debug)]
pub struct PrometheusControllerMetrics {
    queue: PrometheusMetricsProvider,
    total: CounterVec,
    errors: CounterVec,
    panics: CounterVec,
    terminal: CounterVec,
    timeouts: CounterVec,
    time: HistogramVec,
    active: GaugeVec,
    shard_objects: GaugeVec,
    shard_moves: CounterVec,
    shard_handover: HistogramVec,
    shard_failures: CounterVec,
    consistency_parked: CounterVec,
    consistency_woken: CounterVec,
    consistency_timeouts: CounterVec,
    consistency_incomparable: CounterVec,
    consistency_parked_keys: GaugeVec,
}

const LABEL: &str = "controller";

impl PrometheusControllerMetrics {
    /// Creates the metric families and registers them (and the workqueue's) in `registry`.
    /// Fails if the registry already holds metrics of these names.
    pub fn new(registry: &Registry) -> Result<Self, prometheus::Error> {
        let queue = PrometheusMetricsProvider::new(registry)?;
        let counter = |name: &str, help: &str| CounterVec::new(Opts::new(name, help), &[LABEL]);
        let mut buckets = prometheus::DEFAULT_BUCKETS.to_vec();
        buckets.extend([15.0, 20.0, 25.0, 30.0, 40.0, 50.0, 60.0]);
        let this = Self {
            queue,
            total: CounterVec::new(
                Opts::new(
                    "controller_runtime_reconcile_total",
                    "Total number of reconciliations per controller",
                ),
                &[LABEL, "result"],
            )?,
            errors: counter(
                "controller_runtime_reconcile_errors_total",
                "Total number of reconciliation errors per controller",
            )?,
            panics: counter(
                "controller_runtime_reconcile_panics_total",
                "Total number of reconciliation panics per controller",
            )?,
            terminal: counter(
                "controller_runtime_terminal_reconcile_errors_total",
                "Total number of terminal reconciliation errors per controller",
            )?,
            timeouts: counter(
                "kinform_reconcile_timeouts_total",
                "Total number of reconciliations cancelled by the reconcile timeout per controller",
            )?,
            time: HistogramVec::new(
                HistogramOpts::new(
                    "controller_runtime_reconcile_time_seconds",
                    "Length of time per reconciliation per controller",
                )
                .buckets(buckets),
                &[LABEL],
            )?,
            active: GaugeVec::new(
                Opts::new(
                    "controller_runtime_active_workers",
                    "Number of currently used workers per controller",
                ),
                &[LABEL],
            )?,
            shard_objects: GaugeVec::new(
                Opts::new(
                    "kinform_shard_objects",
                    "Number of objects assigned to each shard member per sharded controller",
                ),
                &[LABEL, "shard"],
            )?,
            shard_moves: counter(
                "kinform_shard_moves_total",
                "Total number of objects that changed shard per sharded controller",
            )?,
            shard_handover: HistogramVec::new(
                HistogramOpts::new(
                    "kinform_shard_handover_seconds",
                    "Time from an object's drain mark to its new owner's label",
                )
                .buckets(prometheus::DEFAULT_BUCKETS.to_vec()),
                &[LABEL],
            )?,
            shard_failures: counter(
                "kinform_shard_assignment_failures_total",
                "Total number of failed shard label writes per sharded controller",
            )?,
            consistency_parked: counter(
                "kinform_consistency_parked_total",
                "Total number of keys set aside until the caches caught up with their writes",
            )?,
            consistency_woken: counter(
                "kinform_consistency_woken_total",
                "Total number of set-aside keys reconciled once the caches caught up",
            )?,
            consistency_timeouts: counter(
                "kinform_consistency_timeouts_total",
                "Total number of set-aside keys reconciled anyway after the bound",
            )?,
            consistency_incomparable: counter(
                "kinform_consistency_incomparable_versions_total",
                "Total number of writes whose resourceVersion is not a comparable integer",
            )?,
            consistency_parked_keys: GaugeVec::new(
                Opts::new(
                    "kinform_consistency_parked_keys",
                    "Number of keys set aside now until the caches catch up",
                ),
                &[LABEL],
            )?,
        };
        registry.register(Box::new(this.total.clone()))?;
        registry.register(Box::new(this.errors.clone()))?;
        registry.register(Box::new(this.panics.clone()))?;
        registry.register(Box::new(this.terminal.clone()))?;
        registry.register(Box::new(this.timeouts.clone()))?;
        registry.register(Box::new(this.time.clone()))?;
        registry.register(Box::new(this.active.clone()))?;
        registry.register(Box::new(this.shard_objects.clone()))?;
        registry.register(Box::new(this.shard_moves.clone()))?;
        registry.register(Box::new(this.shard_handover.clone()))?;
        registry.register(Box::new(this.shard_failures.clone()))?;
        registry.register(Box::new(this.consistency_parked.clone()))?;
        registry.register(Box::new(this.consistency_woken.clone()))?;
        registry.register(Box::new(this.consistency_timeouts.clone()))?;
        registry.register(Box::new(this.consistency_incomparable.clone()))?;
        registry.register(Box::new(this.consistency_parked_keys.clone()))?;
        Ok(this)
    }
}

impl MetricsProvider for PrometheusControllerMetrics {
    fn new_depth_metric(&self, name: &str) -> Box<dyn GaugeMetric> {
        self.queue.new_depth_metric(name)
    }
    fn new_adds_metric(&self, name: &str) -> Box<dyn CounterMetric> {
        self.queue.new_adds_metric(name)
    }
    fn new_latency_metric(&self, name: &str) -> Box<dyn HistogramMetric> {
        self.queue.new_latency_metric(name)
    }
    fn new_work_duration_metric(&self, name: &str) -> Box<dyn HistogramMetric> {
        self.queue.new_work_duration_metric(name)
    }
    fn new_unfinished_work_seconds_metric(&self, name: &str) -> Box<dyn SettableGaugeMetric> {
        self.queue.new_unfinished_work_seconds_metric(name)
    }
    fn new_longest_running_processor_seconds_metric(
        &self,
        name: &str,
    ) -> Box<dyn SettableGaugeMetric> {
        self.queue
            .new_longest_running_processor_seconds_metric(name)
    }
    fn new_retries_metric(&self, name: &str) -> Box<dyn CounterMetric> {
        self.queue.new_retries_metric(name)
    }
    fn new_priority_depth_metric(&self, name: &str, priority: Priority) -> Box<dyn GaugeMetric> {
        self.queue.new_priority_depth_metric(name, priority)
    }
    fn new_priority_latency_metric(
        &self,
        name: &str,
        priority: Priority,
    ) -> Box<dyn HistogramMetric> {
        self.queue.new_priority_latency_metric(name, priority)
    }
}

impl ControllerMetricsProvider for PrometheusControllerMetrics {
    fn new_reconcile_total_metric(
        &self,
        controller: &str,
        result: ReconcileResult,
    ) -> Box<dyn CounterMetric> {
        Box::new(Counter(
            self.total.with_label_values(&[controller, result.as_str()]),
        ))
    }
    fn new_reconcile_errors_metric(&self, controller: &str) -> Box<dyn CounterMetric> {
        Box::new(Counter(self.errors.with_label_values(&[controller])))
    }
    fn new_reconcile_panics_metric(&self, controller: &str) -> Box<dyn CounterMetric> {
        Box::new(Counter(self.panics.with_label_values(&[controller])))
    }
    fn new_terminal_errors_metric(&self, controller: &str) -> Box<dyn CounterMetric> {
        Box::new(Counter(self.terminal.with_label_values(&[controller])))
    }
    fn new_reconcile_timeouts_metric(&self, controller: &str) -> Box<dyn CounterMetric> {
        Box::new(Counter(self.timeouts.with_label_values(&[controller])))
    }
    fn new_reconcile_time_metric(&self, controller: &str) -> Box<dyn HistogramMetric> {
        Box::new(Histogram(self.time.with_label_values(&[controller])))
    }
    fn new_active_workers_metric(&self, controller: &str) -> Box<dyn GaugeMetric> {
        Box::new(Gauge(self.active.with_label_values(&[controller])))
    }
    fn new_shard_objects_metric(
        &self,
        controller: &str,
        shard: &str,
    ) -> Box<dyn SettableGaugeMetric> {
        Box::new(Gauge(
            self.shard_objects.with_label_values(&[controller, shard]),
        ))
    }
    fn new_shard_moves_metric(&self, controller: &str) -> Box<dyn CounterMetric> {
        Box::new(Counter(self.shard_moves.with_label_values(&[controller])))
    }
    fn new_shard_handover_time_metric(&self, controller: &str) -> Box<dyn HistogramMetric> {
        Box::new(Histogram(
            self.shard_handover.with_label_values(&[controller]),
        ))
    }
    fn new_shard_assignment_failures_metric(&self, controller: &str) -> Box<dyn CounterMetric> {
        Box::new(Counter(
            self.shard_failures.with_label_values(&[controller]),
        ))
    }
    fn new_consistency_parked_metric(&self, controller: &str) -> Box<dyn CounterMetric> {
        Box::new(Counter(
            self.consistency_parked.with_label_values(&[controller]),
        ))
    }
    fn new_consistency_woken_metric(&self, controller: &str) -> Box<dyn CounterMetric> {
        Box::new(Counter(
            self.consistency_woken.with_label_values(&[controller]),
        ))
    }
    fn new_consistency_timeouts_metric(&self, controller: &str) -> Box<dyn CounterMetric> {
        Box::new(Counter(
            self.consistency_timeouts.with_label_values(&[controller]),
        ))
    }
    fn new_consistency_incomparable_metric(&self, controller: &str) -> Box<dyn CounterMetric> {
        Box::new(Counter(
            self.consistency_incomparable
                .with_label_values(&[controller]),
        ))
    }
    fn new_consistency_parked_keys_metric(&self, controller: &str) -> Box<dyn SettableGaugeMetric> {
        Box::new(Gauge(
            self.consistency_parked_keys
                .with_label_values(&[controller]),
        ))
    }
}
