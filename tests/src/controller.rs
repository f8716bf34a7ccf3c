//! Helpers of the controller tests: a server, a factory, a log of reconcile calls that tests
//! wait on (no sleeps: every wait is for a condition, bounded by a generous timeout), and a
//! metrics provider that records what the priority queue reports.

use std::collections::HashMap;
use std::pin::pin;
use std::sync::Arc;
use std::time::Duration;

use kinform::Client;
use kinform::controller::{
    Action, Controller, ControllerMetricsProvider, ReconcileResult, ReconcileStats,
};
use kinform::informer::InformerFactory;
use kinform::testing::TestApiServer;
use kinform::workqueue::{
    CounterMetric, GaugeMetric, HistogramMetric, MetricsProvider, Priority, SettableGaugeMetric,
};
use parking_lot::Mutex;
use serde_json::json;
use tokio::sync::Notify;
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// Bounds every wait; on the paused clock it is reached only when the test is stuck.
pub const LONG: Duration = Duration::from_secs(3600);

/// A client of `server` with kinform's default settings.
pub fn client(server: &TestApiServer) -> Client {
    server.client().expect("a client of the test server")
}

/// An informer factory with the test-sized reflector backoff (20 ms doubling to 300 ms,
/// [`crate::informer::factory_builder`]).
pub fn factory(client: Client) -> InformerFactory {
    crate::informer::factory_builder(client).build()
}

/// Creates the ConfigMap `default/name` on `server` (through its store, not over HTTP).
pub fn configmap(server: &TestApiServer, name: &str) -> serde_json::Value {
    server
        .create_object(json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": "default"},
            "data": {"k": "v"}
        }))
        .unwrap()
}

/// Creates the Deployment `default/name` (one `nginx` container, selector `app=name`) on
/// `server` (through its store); returns it as stored (`generation: 1`).
pub fn deployment(server: &TestApiServer, name: &str) -> k8s_openapi::api::apps::v1::Deployment {
    serde_json::from_value(
        server
            .create_object(json!({
                "apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": name, "namespace": "default"},
                "spec": {
                    "selector": {"matchLabels": {"app": name}},
                    "template": {"metadata": {"labels": {"app": name}},
                                 "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
                }
            }))
            .unwrap(),
    )
    .unwrap()
}

/// Runs `controller` on a task of its own with a reconcile that records every call in `log`
/// and is then done with the key, until `cancel` fires; the task answers the run's stats.
pub fn run_recording<K>(
    controller: Controller<K>,
    log: &Arc<Log>,
    cancel: &CancellationToken,
) -> JoinHandle<ReconcileStats>
where
    K: kinform::Resource + Clone + serde::de::DeserializeOwned + Send + Sync + 'static,
{
    let log = Arc::clone(log);
    tokio::spawn(controller.run(
        move |req| {
            let log = Arc::clone(&log);
            async move {
                log.record(&req.key, req.object.is_some(), req.retries);
                Ok::<_, std::convert::Infallible>(Action::done())
            }
        },
        cancel.clone().cancelled_owned(),
    ))
}

/// One reconcile call.
#[derive(Clone, Debug)]
pub struct Call {
    /// The key reconciled.
    pub key: String,
    /// Whether the object was in the lister at the call.
    pub present: bool,
    /// How many times the key had been retried before this call.
    pub retries: usize,
    /// When the call happened (tokio's clock, paused or not).
    pub at: Instant,
}

/// The calls a reconcile made, with a notification on every change.
#[derive(Default)]
pub struct Log {
    /// Every call so far, in order.
    pub calls: Mutex<Vec<Call>>,
    changed: Notify,
}

impl Log {
    /// An empty, shared log.
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// Records a call and wakes every waiter.
    pub fn record(&self, key: &str, present: bool, retries: usize) {
        self.calls.lock().push(Call {
            key: key.to_owned(),
            present,
            retries,
            at: Instant::now(),
        });
        self.changed.notify_waiters();
    }

    /// The calls for `key`, in order.
    pub fn of(&self, key: &str) -> Vec<Call> {
        self.calls
            .lock()
            .iter()
            .filter(|c| c.key == key)
            .cloned()
            .collect()
    }

    /// Waits until `pred` holds for the calls.
    pub async fn wait_for(&self, what: &str, pred: impl Fn(&[Call]) -> bool) {
        let wait = async {
            loop {
                let mut notified = pin!(self.changed.notified());
                notified.as_mut().enable();
                if pred(&self.calls.lock()) {
                    return;
                }
                notified.await;
            }
        };
        if tokio::time::timeout(LONG, wait).await.is_err() {
            panic!(
                "timed out waiting for {what}; calls: {:?}",
                self.calls.lock()
            );
        }
    }
}

/// The sum of the samples of `name` in the Prometheus text `text` whose labels include every
/// one of `labels` (0 when there is none).
pub fn sample(text: &str, name: &str, labels: &[(&str, &str)]) -> f64 {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.rsplit_once(' '))
        .filter(|(series, _)| {
            let metric = series.split('{').next().unwrap_or_default();
            metric == name
                && labels
                    .iter()
                    .all(|(k, v)| series.contains(&format!("{k}=\"{v}\"")))
        })
        .filter_map(|(_, v)| v.parse::<f64>().ok())
        .sum()
}

/// Changes `data.k` of the ConfigMap `default/name` on `server` (through its store), a
/// change with a new resourceVersion and the same generation.
pub fn change_configmap(server: &TestApiServer, name: &str, value: &str) {
    server
        .merge_patch_object(
            "v1",
            "ConfigMap",
            Some("default"),
            name,
            &json!({"data": {"k": value}}),
        )
        .unwrap();
}

/// One handout of a priority queue, as its per-priority wait metric saw it.
#[derive(Clone, Copy, Debug)]
pub struct Handout {
    /// When the item was handed out.
    pub at: Instant,
    /// How long it had waited (`workqueue_priority_queue_duration_seconds`).
    pub waited: Duration,
}

impl Handout {
    /// When the item was queued.
    pub fn queued(&self) -> Instant {
        self.at - self.waited
    }
}

/// What [`QueueRecorder`] has seen.
#[derive(Debug, Default)]
pub struct Recorded {
    /// `workqueue_adds_total`.
    pub adds: u64,
    /// `workqueue_priority_depth`, by priority.
    pub depth: HashMap<Priority, i64>,
    /// Every observation of `workqueue_priority_queue_duration_seconds`, by priority, in order.
    pub handouts: HashMap<Priority, Vec<Handout>>,
}

/// A controller metrics provider that records the queue's adds and its per-priority depth and
/// wait metrics (each wait with the instant it was observed), and nothing else.
#[derive(Clone, Debug, Default)]
pub struct QueueRecorder(pub Arc<Mutex<Recorded>>);

struct Ignored;
struct Adds(Arc<Mutex<Recorded>>);
struct Depth(Arc<Mutex<Recorded>>, Priority);
struct Waits(Arc<Mutex<Recorded>>, Priority);

impl GaugeMetric for Ignored {
    fn inc(&self) {}
    fn dec(&self) {}
}
impl CounterMetric for Ignored {
    fn inc(&self) {}
}
impl HistogramMetric for Ignored {
    fn observe(&self, _: f64) {}
}
impl SettableGaugeMetric for Ignored {
    fn set(&self, _: f64) {}
}
impl CounterMetric for Adds {
    fn inc(&self) {
        self.0.lock().adds += 1;
    }
}
impl GaugeMetric for Depth {
    fn inc(&self) {
        *self.0.lock().depth.entry(self.1).or_default() += 1;
    }
    fn dec(&self) {
        *self.0.lock().depth.entry(self.1).or_default() -= 1;
    }
}
impl HistogramMetric for Waits {
    fn observe(&self, seconds: f64) {
        let handout = Handout {
            at: Instant::now(),
            waited: Duration::from_secs_f64(seconds),
        };
        self.0
            .lock()
            .handouts
            .entry(self.1)
            .or_default()
            .push(handout);
    }
}

impl MetricsProvider for QueueRecorder {
    fn new_depth_metric(&self, _: &str) -> Box<dyn GaugeMetric> {
        Box::new(Ignored)
    }
    fn new_adds_metric(&self, _: &str) -> Box<dyn CounterMetric> {
        Box::new(Adds(self.0.clone()))
    }
    fn new_latency_metric(&self, _: &str) -> Box<dyn HistogramMetric> {
        Box::new(Ignored)
    }
    fn new_work_duration_metric(&self, _: &str) -> Box<dyn HistogramMetric> {
        Box::new(Ignored)
    }
    fn new_unfinished_work_seconds_metric(&self, _: &str) -> Box<dyn SettableGaugeMetric> {
        Box::new(Ignored)
    }
    fn new_longest_running_processor_seconds_metric(
        &self,
        _: &str,
    ) -> Box<dyn SettableGaugeMetric> {
        Box::new(Ignored)
    }
    fn new_retries_metric(&self, _: &str) -> Box<dyn CounterMetric> {
        Box::new(Ignored)
    }
    fn new_priority_depth_metric(&self, _: &str, priority: Priority) -> Box<dyn GaugeMetric> {
        Box::new(Depth(self.0.clone(), priority))
    }
    fn new_priority_latency_metric(&self, _: &str, priority: Priority) -> Box<dyn HistogramMetric> {
        Box::new(Waits(self.0.clone(), priority))
    }
}

impl ControllerMetricsProvider for QueueRecorder {
    fn new_reconcile_total_metric(&self, _: &str, _: ReconcileResult) -> Box<dyn CounterMetric> {
        Box::new(Ignored)
    }
    fn new_reconcile_errors_metric(&self, _: &str) -> Box<dyn CounterMetric> {
        Box::new(Ignored)
    }
    fn new_reconcile_panics_metric(&self, _: &str) -> Box<dyn CounterMetric> {
        Box::new(Ignored)
    }
    fn new_reconcile_time_metric(&self, _: &str) -> Box<dyn HistogramMetric> {
        Box::new(Ignored)
    }
    fn new_active_workers_metric(&self, _: &str) -> Box<dyn GaugeMetric> {
        Box::new(Ignored)
    }
}
