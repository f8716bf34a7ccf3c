//! Reconcile metrics: always-on counters ([`ControllerStats`]) and hooks for a metrics
//! system ([`ControllerMetricsProvider`]).
//!
//! The hooks follow the workqueue's [`MetricsProvider`] pattern (one metric object per
//! controller and measurement, created once) and extend it: a provider of controller metrics
//! is also the provider of the controller's queue metrics. The measurements are those
//! controller-runtime exports, with its Prometheus names (see
//! [`PrometheusControllerMetrics`](super::PrometheusControllerMetrics), feature
//! `prometheus`):
//!
//! | hook | Prometheus name | updated when |
//! | --- | --- | --- |
//! | [`new_reconcile_total_metric`](ControllerMetricsProvider::new_reconcile_total_metric) | `controller_runtime_reconcile_total{controller,result}` | after every reconcile; `result` is `success`, `requeue_after`, `requeue` (at once) or `error` (a panic is an error) |
//! | [`new_reconcile_errors_metric`](ControllerMetricsProvider::new_reconcile_errors_metric) | `controller_runtime_reconcile_errors_total{controller}` | a reconcile returned an error (terminal or not), panicked or timed out |
//! | [`new_terminal_errors_metric`](ControllerMetricsProvider::new_terminal_errors_metric) | `controller_runtime_terminal_reconcile_errors_total{controller}` | a reconcile returned a [terminal](super::ReconcileError::Terminal) error (not retried) |
//! | [`new_reconcile_panics_metric`](ControllerMetricsProvider::new_reconcile_panics_metric) | `controller_runtime_reconcile_panics_total{controller}` | a reconcile panicked |
//! | [`new_reconcile_time_metric`](ControllerMetricsProvider::new_reconcile_time_metric) | `controller_runtime_reconcile_time_seconds{controller}` | after every reconcile: its duration |
//! | [`new_active_workers_metric`](ControllerMetricsProvider::new_active_workers_metric) | `controller_runtime_active_workers{controller}` | +1 when a worker takes a key, -1 when it is done |
//! | [`new_reconcile_timeouts_metric`](ControllerMetricsProvider::new_reconcile_timeouts_metric) | `kinform_reconcile_timeouts_total{controller}` | a reconcile ran past [`reconcile_timeout`](super::ControllerBuilder::reconcile_timeout) and was cancelled (kinform's own) |
//!
//! The terminal-error and timeout hooks have default no-op implementations, so a provider
//! written before them keeps compiling.
//!
//! A [sharded](super::shard) controller adds four, kinform's own (controller-runtime has no
//! sharding). They have default no-op implementations, so a provider need not implement
//! them, and are updated by the replica that is the elected sharder (the failures also by a
//! member whose handover write fails):
//!
//! | hook | Prometheus name | updated when |
//! | --- | --- | --- |
//! | [`new_shard_objects_metric`](ControllerMetricsProvider::new_shard_objects_metric) | `kinform_shard_objects{controller,shard}` | after every assignment pass: objects labelled for the member |
//! | [`new_shard_moves_metric`](ControllerMetricsProvider::new_shard_moves_metric) | `kinform_shard_moves_total{controller}` | an object changed owner (handed over, or taken from an expired member) |
//! | [`new_shard_handover_time_metric`](ControllerMetricsProvider::new_shard_handover_time_metric) | `kinform_shard_handover_seconds{controller}` | a handover completed: seconds from the drain mark to the new owner's label |
//! | [`new_shard_assignment_failures_metric`](ControllerMetricsProvider::new_shard_assignment_failures_metric) | `kinform_shard_assignment_failures_total{controller}` | a shard or drain label write failed other than with 409 Conflict or 404 NotFound (a 403 of a missing `patch` verb, say): the object stays where it was |

//!
//! The [consistency guard](super::ControllerBuilder::consistency_guard) adds five, kinform's
//! own, with default no-op implementations too:
//!
//! | hook | Prometheus name | updated when |
//! | --- | --- | --- |
//! | [`new_consistency_parked_metric`](ControllerMetricsProvider::new_consistency_parked_metric) | `kinform_consistency_parked_total{controller}` | a key was set aside because a cache had not caught up with its last reconcile's writes |
//! | [`new_consistency_woken_metric`](ControllerMetricsProvider::new_consistency_woken_metric) | `kinform_consistency_woken_total{controller}` | a set-aside key ran once the caches had caught up |
//! | [`new_consistency_timeouts_metric`](ControllerMetricsProvider::new_consistency_timeouts_metric) | `kinform_consistency_timeouts_total{controller}` | a set-aside key ran anyway after the bound (also a warning) |
//! | [`new_consistency_incomparable_metric`](ControllerMetricsProvider::new_consistency_incomparable_metric) | `kinform_consistency_incomparable_versions_total{controller}` | a write answered with a resourceVersion that is not an integer: not waited for (fail open) |
//! | [`new_consistency_parked_keys_metric`](ControllerMetricsProvider::new_consistency_parked_keys_metric) | `kinform_consistency_parked_keys{controller}` | keys set aside now |

use std::sync::atomic::{AtomicU64, Ordering};

use crate::workqueue::{
    CounterMetric, GaugeMetric, HistogramMetric, MetricsProvider, SettableGaugeMetric,
};

/// How a reconcile ended (the `result` label of `controller_runtime_reconcile_total`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ReconcileResult {
    /// `Ok(Action::done())`.
    Success,
    /// `Ok(Action::requeue_after(d))` with a delay.
    RequeueAfter,
    /// `Ok(Action::requeue(p))`: requeued at once.
    Requeue,
    /// `Err(_)` or a panic.
    Error,
}

impl ReconcileResult {
    /// Every result, in label order.
    pub const ALL: [ReconcileResult; 4] = [
        Self::Success,
        Self::RequeueAfter,
        Self::Requeue,
        Self::Error,
    ];

    /// The label value.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Success => "success",
            Self::RequeueAfter => "requeue_after",
            Self::Requeue => "requeue",
            Self::Error => "error",
        }
    }
}

/// Creates the metrics of one controller; also the provider of its queue's metrics.
///
/// Each method is called once per controller, with the controller's name.
pub trait ControllerMetricsProvider: MetricsProvider {
    /// `controller_runtime_reconcile_total`: reconciles that ended with `result`.
    fn new_reconcile_total_metric(
        &self,
        controller: &str,
        result: ReconcileResult,
    ) -> Box<dyn CounterMetric>;
    /// `controller_runtime_reconcile_errors_total`: reconciles that failed or panicked.
    fn new_reconcile_errors_metric(&self, controller: &str) -> Box<dyn CounterMetric>;
    /// `controller_runtime_reconcile_panics_total`: reconciles that panicked.
    fn new_reconcile_panics_metric(&self, controller: &str) -> Box<dyn CounterMetric>;
    /// `controller_runtime_reconcile_time_seconds`: reconcile durations.
    fn new_reconcile_time_metric(&self, controller: &str) -> Box<dyn HistogramMetric>;
    /// `controller_runtime_active_workers`: workers currently reconciling.
    fn new_active_workers_metric(&self, controller: &str) -> Box<dyn GaugeMetric>;
    /// `controller_runtime_terminal_reconcile_errors_total`: reconciles that returned a
    /// terminal error (also counted in the errors total and as `result="error"`).
    fn new_terminal_errors_metric(&self, controller: &str) -> Box<dyn CounterMetric> {
        let _ = controller;
        Box::new(Noop)
    }
    /// `kinform_reconcile_timeouts_total`: reconciles cancelled by the reconcile timeout
    /// (also counted in the errors total and as `result="error"`).
    fn new_reconcile_timeouts_metric(&self, controller: &str) -> Box<dyn CounterMetric> {
        let _ = controller;
        Box::new(Noop)
    }
    /// `kinform_shard_objects`: objects labelled for member `shard` (sharded controllers).
    fn new_shard_objects_metric(
        &self,
        controller: &str,
        shard: &str,
    ) -> Box<dyn SettableGaugeMetric> {
        let _ = (controller, shard);
        Box::new(Noop)
    }
    /// `kinform_shard_moves_total`: objects that changed owner (sharded controllers).
    fn new_shard_moves_metric(&self, controller: &str) -> Box<dyn CounterMetric> {
        let _ = controller;
        Box::new(Noop)
    }
    /// `kinform_shard_handover_seconds`: from an object's drain mark to its new owner's
    /// label (sharded controllers).
    fn new_shard_handover_time_metric(&self, controller: &str) -> Box<dyn HistogramMetric> {
        let _ = controller;
        Box::new(Noop)
    }
    /// `kinform_shard_assignment_failures_total`: shard and drain label writes that failed
    /// other than with 409 Conflict or 404 NotFound, by the sharder or by a member handing
    /// an object over (sharded controllers). Each is also logged as a warning.
    fn new_shard_assignment_failures_metric(&self, controller: &str) -> Box<dyn CounterMetric> {
        let _ = controller;
        Box::new(Noop)
    }
    /// `kinform_consistency_parked_total`: keys set aside until the caches catch up with
    /// their last reconcile's writes (consistency guard).
    fn new_consistency_parked_metric(&self, controller: &str) -> Box<dyn CounterMetric> {
        let _ = controller;
        Box::new(Noop)
    }
    /// `kinform_consistency_woken_total`: set-aside keys that ran once the caches caught up.
    fn new_consistency_woken_metric(&self, controller: &str) -> Box<dyn CounterMetric> {
        let _ = controller;
        Box::new(Noop)
    }
    /// `kinform_consistency_timeouts_total`: set-aside keys that ran anyway after the bound
    /// ([`consistency_timeout`](super::ControllerBuilder::consistency_timeout)); each is also
    /// logged as a warning.
    fn new_consistency_timeouts_metric(&self, controller: &str) -> Box<dyn CounterMetric> {
        let _ = controller;
        Box::new(Noop)
    }
    /// `kinform_consistency_incomparable_versions_total`: writes whose resourceVersion is not
    /// a comparable integer (KEP-5504), not waited for.
    fn new_consistency_incomparable_metric(&self, controller: &str) -> Box<dyn CounterMetric> {
        let _ = controller;
        Box::new(Noop)
    }
    /// `kinform_consistency_parked_keys`: keys set aside now.
    fn new_consistency_parked_keys_metric(&self, controller: &str) -> Box<dyn SettableGaugeMetric> {
        let _ = controller;
        Box::new(Noop)
    }
}

/// The metric of a provider that does not implement a hook.
struct Noop;

impl SettableGaugeMetric for Noop {
    fn set(&self, _: f64) {}
}

impl CounterMetric for Noop {
    fn inc(&self) {}
}

impl HistogramMetric for Noop {
    fn observe(&self, _: f64) {}
}

/// A snapshot of a controller's counters since it was built.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReconcileStats {
    /// Reconciles that finished (any result).
    pub reconciles: u64,
    /// Reconciles that returned `Action::done()`.
    pub successes: u64,
    /// Reconciles that returned `Action::requeue_after(_)` or `Action::requeue(_)`.
    pub requeues: u64,
    /// Reconciles that returned an error that is retried (panics, timeouts and terminal
    /// errors not included).
    pub errors: u64,
    /// Reconciles that panicked.
    pub panics: u64,
    /// Reconciles that returned a terminal error (not retried).
    pub terminal: u64,
    /// Reconciles cancelled by the reconcile timeout (retried).
    pub timeouts: u64,
    /// Times a key was set aside by the consistency guard because a cache had not caught up
    /// with its last reconcile's writes (once per wait, however often the key was popped).
    pub parked: u64,
    /// Set-aside keys that ran once the caches had caught up.
    pub woken: u64,
    /// Set-aside keys that ran anyway after the
    /// [bound](super::ControllerBuilder::consistency_timeout). Keys set aside now:
    /// `parked - woken - parked_timeouts`.
    pub parked_timeouts: u64,
    /// Writes answered with a resourceVersion that is not a comparable integer, so not
    /// waited for (fail open).
    pub incomparable_versions: u64,
}

/// The controller's own counters, always kept (cheap atomics).
#[derive(Debug, Default)]
pub(crate) struct Counters {
    reconciles: AtomicU64,
    successes: AtomicU64,
    requeues: AtomicU64,
    errors: AtomicU64,
    panics: AtomicU64,
    terminal: AtomicU64,
    timeouts: AtomicU64,
    parked: AtomicU64,
    woken: AtomicU64,
    parked_timeouts: AtomicU64,
    incomparable_versions: AtomicU64,
}

impl Counters {
    pub(crate) fn snapshot(&self) -> ReconcileStats {
        ReconcileStats {
            reconciles: self.reconciles.load(Ordering::Relaxed),
            successes: self.successes.load(Ordering::Relaxed),
            requeues: self.requeues.load(Ordering::Relaxed),
            errors: self.errors.load(Ordering::Relaxed),
            panics: self.panics.load(Ordering::Relaxed),
            terminal: self.terminal.load(Ordering::Relaxed),
            timeouts: self.timeouts.load(Ordering::Relaxed),
            parked: self.parked.load(Ordering::Relaxed),
            woken: self.woken.load(Ordering::Relaxed),
            parked_timeouts: self.parked_timeouts.load(Ordering::Relaxed),
            incomparable_versions: self.incomparable_versions.load(Ordering::Relaxed),
        }
    }
}

/// The metric objects of one controller.
struct Hooks {
    totals: [Box<dyn CounterMetric>; 4],
    errors: Box<dyn CounterMetric>,
    panics: Box<dyn CounterMetric>,
    terminal: Box<dyn CounterMetric>,
    timeouts: Box<dyn CounterMetric>,
    time: Box<dyn HistogramMetric>,
    active: Box<dyn GaugeMetric>,
    consistency: ConsistencyHooks,
}

/// The metric objects of the consistency guard.
struct ConsistencyHooks {
    parked: Box<dyn CounterMetric>,
    woken: Box<dyn CounterMetric>,
    timeouts: Box<dyn CounterMetric>,
    incomparable: Box<dyn CounterMetric>,
    parked_keys: Box<dyn SettableGaugeMetric>,
}

/// What the consistency guard records ([`Recorder::consistency`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum GuardEvent {
    /// A key was set aside.
    Parked,
    /// A set-aside key ran, caught up.
    Woken,
    /// A set-aside key ran after the bound.
    TimedOut,
    /// A write's resourceVersion did not compare.
    Incomparable,
}

/// Counters plus the optional provider's metrics.
pub(crate) struct Recorder {
    pub(crate) counters: Counters,
    hooks: Option<Hooks>,
}

/// The outcome of one reconcile, for [`Recorder::finished`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    Success,
    RequeueAfter,
    Requeue,
    Error,
    Panic,
    /// A terminal error: not retried.
    Terminal,
    /// Cancelled by the reconcile timeout.
    Timeout,
}

impl Recorder {
    pub(crate) fn new(name: &str, provider: Option<&dyn ControllerMetricsProvider>) -> Self {
        let hooks = provider.map(|p| Hooks {
            totals: ReconcileResult::ALL.map(|r| p.new_reconcile_total_metric(name, r)),
            errors: p.new_reconcile_errors_metric(name),
            panics: p.new_reconcile_panics_metric(name),
            terminal: p.new_terminal_errors_metric(name),
            timeouts: p.new_reconcile_timeouts_metric(name),
            time: p.new_reconcile_time_metric(name),
            active: p.new_active_workers_metric(name),
            consistency: ConsistencyHooks {
                parked: p.new_consistency_parked_metric(name),
                woken: p.new_consistency_woken_metric(name),
                timeouts: p.new_consistency_timeouts_metric(name),
                incomparable: p.new_consistency_incomparable_metric(name),
                parked_keys: p.new_consistency_parked_keys_metric(name),
            },
        });
        Self {
            counters: Counters::default(),
            hooks,
        }
    }

    /// Counts what the consistency guard did; `parked_now` is the number of keys set aside
    /// after it.
    pub(crate) fn consistency(&self, event: GuardEvent, parked_now: usize) {
        let c = &self.counters;
        let counter = match event {
            GuardEvent::Parked => &c.parked,
            GuardEvent::Woken => &c.woken,
            GuardEvent::TimedOut => &c.parked_timeouts,
            GuardEvent::Incomparable => &c.incomparable_versions,
        };
        counter.fetch_add(1, Ordering::Relaxed);
        let Some(h) = &self.hooks else { return };
        let h = &h.consistency;
        match event {
            GuardEvent::Parked => h.parked.inc(),
            GuardEvent::Woken => h.woken.inc(),
            GuardEvent::TimedOut => h.timeouts.inc(),
            GuardEvent::Incomparable => h.incomparable.inc(),
        }
        h.parked_keys.set(parked_now as f64);
    }

    pub(crate) fn started(&self) {
        if let Some(h) = &self.hooks {
            h.active.inc();
        }
    }

    pub(crate) fn finished(&self, outcome: Outcome, seconds: f64) {
        let c = &self.counters;
        c.reconciles.fetch_add(1, Ordering::Relaxed);
        let (counter, result) = match outcome {
            Outcome::Success => (&c.successes, ReconcileResult::Success),
            Outcome::RequeueAfter => (&c.requeues, ReconcileResult::RequeueAfter),
            Outcome::Requeue => (&c.requeues, ReconcileResult::Requeue),
            Outcome::Error => (&c.errors, ReconcileResult::Error),
            Outcome::Panic => (&c.panics, ReconcileResult::Error),
            Outcome::Terminal => (&c.terminal, ReconcileResult::Error),
            Outcome::Timeout => (&c.timeouts, ReconcileResult::Error),
        };
        counter.fetch_add(1, Ordering::Relaxed);
        let Some(h) = &self.hooks else { return };
        h.active.dec();
        h.time.observe(seconds);
        let index = ReconcileResult::ALL
            .iter()
            .position(|r| *r == result)
            .unwrap_or(0);
        h.totals[index].inc();
        if result == ReconcileResult::Error {
            h.errors.inc();
        }
        match outcome {
            Outcome::Panic => h.panics.inc(),
            Outcome::Terminal => h.terminal.inc(),
            Outcome::Timeout => h.timeouts.inc(),
            _ => {}
        }
    }
}
