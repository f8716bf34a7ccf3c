//! Metrics hooks: what a named queue reports and when (client-go's queueMetrics), on Tokio's
//! paused clock so that every duration is exact.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use kinform_runtime::workqueue::{
    CounterMetric, DelayingQueue, GaugeMetric, HistogramMetric, MetricsProvider, Queue,
    QueueConfig, SettableGaugeMetric,
};

/// Every metric of every queue, by (metric, queue name).
#[derive(Default)]
struct Recorded {
    values: HashMap<(&'static str, String), f64>,
    observations: HashMap<(&'static str, String), Vec<f64>>,
}

#[derive(Clone, Default)]
struct TestProvider(Arc<Mutex<Recorded>>);

struct Metric {
    rec: Arc<Mutex<Recorded>>,
    key: (&'static str, String),
}

impl Metric {
    fn bump(&self, by: f64) {
        *self
            .rec
            .lock()
            .unwrap()
            .values
            .entry(self.key.clone())
            .or_default() += by;
    }
}

impl GaugeMetric for Metric {
    fn inc(&self) {
        self.bump(1.0);
    }
    fn dec(&self) {
        self.bump(-1.0);
    }
}
impl CounterMetric for Metric {
    fn inc(&self) {
        self.bump(1.0);
    }
}
impl SettableGaugeMetric for Metric {
    fn set(&self, value: f64) {
        self.rec
            .lock()
            .unwrap()
            .values
            .insert(self.key.clone(), value);
    }
}
impl HistogramMetric for Metric {
    fn observe(&self, value: f64) {
        let mut rec = self.rec.lock().unwrap();
        rec.observations
            .entry(self.key.clone())
            .or_default()
            .push(value);
    }
}

impl TestProvider {
    fn metric(&self, what: &'static str, name: &str) -> Box<Metric> {
        Box::new(Metric {
            rec: Arc::clone(&self.0),
            key: (what, name.to_string()),
        })
    }
    fn value(&self, what: &'static str, name: &str) -> f64 {
        let rec = self.0.lock().unwrap();
        rec.values
            .get(&(what, name.to_string()))
            .copied()
            .unwrap_or(0.0)
    }
    fn observed(&self, what: &'static str, name: &str) -> Vec<f64> {
        let rec = self.0.lock().unwrap();
        rec.observations
            .get(&(what, name.to_string()))
            .cloned()
            .unwrap_or_default()
    }
}

impl MetricsProvider for TestProvider {
    fn new_depth_metric(&self, name: &str) -> Box<dyn GaugeMetric> {
        self.metric("depth", name)
    }
    fn new_adds_metric(&self, name: &str) -> Box<dyn CounterMetric> {
        self.metric("adds", name)
    }
    fn new_latency_metric(&self, name: &str) -> Box<dyn HistogramMetric> {
        self.metric("latency", name)
    }
    fn new_work_duration_metric(&self, name: &str) -> Box<dyn HistogramMetric> {
        self.metric("work", name)
    }
    fn new_unfinished_work_seconds_metric(&self, name: &str) -> Box<dyn SettableGaugeMetric> {
        self.metric("unfinished", name)
    }
    fn new_longest_running_processor_seconds_metric(
        &self,
        name: &str,
    ) -> Box<dyn SettableGaugeMetric> {
        self.metric("longest", name)
    }
    fn new_retries_metric(&self, name: &str) -> Box<dyn CounterMetric> {
        self.metric("retries", name)
    }
}

fn config(p: &TestProvider, name: &str) -> QueueConfig {
    QueueConfig::named(name).with_metrics_provider(Arc::new(p.clone()))
}

#[tokio::test(start_paused = true)]
async fn depth_adds_latency_and_work_duration() {
    let p = TestProvider::default();
    let q = Queue::with_config(config(&p, "pods"));
    q.add("a");
    q.add("a"); // duplicate: not counted
    q.add("b");
    assert_eq!(p.value("adds", "pods"), 2.0);
    assert_eq!(p.value("depth", "pods"), 2.0);

    tokio::time::advance(Duration::from_secs(2)).await;
    let a = q.get().await.unwrap();
    assert_eq!(p.value("depth", "pods"), 1.0);
    assert_eq!(p.observed("latency", "pods"), vec![2.0]);

    q.add("a"); // while processing: counted as an add (client-go does the same)
    assert_eq!(p.value("adds", "pods"), 3.0);
    assert_eq!(p.value("depth", "pods"), 2.0);

    tokio::time::advance(Duration::from_secs(3)).await;
    q.done(&a);
    assert_eq!(p.observed("work", "pods"), vec![3.0]);

    let b = q.get().await.unwrap();
    assert_eq!(b, "b");
    let a = q.get().await.unwrap();
    assert_eq!(p.observed("latency", "pods"), vec![2.0, 5.0, 3.0]);
    assert_eq!(p.value("depth", "pods"), 0.0);
    q.done(&a);
    q.done(&b);
    assert_eq!(p.observed("work", "pods"), vec![3.0, 0.0, 0.0]);
}

#[tokio::test(start_paused = true)]
async fn unfinished_work_is_refreshed_every_half_second() {
    let p = TestProvider::default();
    let q = Queue::with_config(config(&p, "slow"));
    q.add(1);
    q.add(2);
    let one = q.get().await.unwrap();
    tokio::time::sleep(Duration::from_secs(1)).await;
    let two = q.get().await.unwrap();
    tokio::time::sleep(Duration::from_millis(2_250)).await;
    // Updates at 0.5 s steps; the last one, at t = 3.0 s, saw item 1 running for 3 s and
    // item 2 for 2 s.
    assert_eq!(p.value("longest", "slow"), 3.0);
    assert_eq!(p.value("unfinished", "slow"), 5.0);
    q.done(&one);
    q.done(&two);
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(p.value("longest", "slow"), 0.0);
    assert_eq!(p.value("unfinished", "slow"), 0.0);
}

#[tokio::test(start_paused = true)]
async fn add_after_counts_retries() {
    let p = TestProvider::default();
    let q = DelayingQueue::with_config(config(&p, "delayed"));
    q.add_after(1, Duration::from_secs(1));
    q.add_after(1, Duration::from_secs(1));
    q.add_after(2, Duration::ZERO);
    assert_eq!(p.value("retries", "delayed"), 3.0);
    assert_eq!(p.value("adds", "delayed"), 1.0);
}

#[tokio::test(start_paused = true)]
async fn unnamed_queue_reports_nothing() {
    let p = TestProvider::default();
    let q = Queue::with_config(QueueConfig {
        name: None,
        metrics_provider: Some(Arc::new(p.clone())),
    });
    q.add(1);
    assert!(p.0.lock().unwrap().values.is_empty());
}

#[cfg(feature = "prometheus")]
#[tokio::test(start_paused = true)]
async fn prometheus_provider_exports_client_go_names() {
    use kinform_runtime::workqueue::PrometheusMetricsProvider;

    let registry = prometheus::Registry::new();
    let provider = PrometheusMetricsProvider::new(&registry).unwrap();
    let q = DelayingQueue::with_config(
        QueueConfig::named("deployments").with_metrics_provider(Arc::new(provider)),
    );
    q.add("x");
    q.add_after("y", Duration::from_secs(1));
    let x = q.get().await.unwrap();
    q.done(&x);

    let families = registry.gather();
    let mut names: Vec<&str> = families.iter().map(|f| f.name()).collect();
    names.sort_unstable();
    assert_eq!(
        names,
        vec![
            "workqueue_adds_total",
            "workqueue_depth",
            "workqueue_longest_running_processor_seconds",
            "workqueue_queue_duration_seconds",
            "workqueue_retries_total",
            "workqueue_unfinished_work_seconds",
            "workqueue_work_duration_seconds",
        ]
    );
    let text = prometheus::TextEncoder::new()
        .encode_to_string(&families)
        .unwrap();
    assert!(
        text.contains("workqueue_adds_total{name=\"deployments\"} 1"),
        "{text}"
    );
    assert!(
        text.contains("workqueue_retries_total{name=\"deployments\"} 1"),
        "{text}"
    );
    assert!(
        text.contains("workqueue_depth{name=\"deployments\"} 0"),
        "{text}"
    );
    // A second provider on the same registry is refused, not silently merged.
    assert!(PrometheusMetricsProvider::new(&registry).is_err());
}
