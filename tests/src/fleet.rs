//! Fleets of test servers: a witness of which replica runs which cluster's work, and the
//! work itself (a ConfigMap controller per cluster that records its reconciles).

use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use kinform::CancellationToken;
use kinform::controller::fleet::Cluster;
use kinform::controller::{Action, Controller};
use parking_lot::Mutex;
use tokio::sync::Notify;

/// What every replica's work did, per cluster: which replicas run it now (never more than
/// one, or [`FleetWitness::overlaps`] records it), how often it started, and each
/// reconcile as `(cluster, key)`.
#[derive(Default)]
pub struct FleetWitness {
    state: Mutex<State>,
    changed: Notify,
}

#[derive(Default)]
struct State {
    running: BTreeMap<String, BTreeSet<String>>,
    engagements: BTreeMap<String, usize>,
    reconciles: BTreeMap<(String, String), usize>,
    overlaps: Vec<String>,
}

impl FleetWitness {
    /// An empty witness.
    pub fn new() -> Arc<Self> {
        Arc::default()
    }

    fn started(&self, cluster: &str, replica: &str) {
        let mut s = self.state.lock();
        let running = s.running.entry(cluster.to_owned()).or_default();
        running.insert(replica.to_owned());
        if running.len() > 1 {
            let who = format!("{cluster} run by {running:?} at once");
            s.overlaps.push(who);
        }
        *s.engagements.entry(cluster.to_owned()).or_default() += 1;
        drop(s);
        self.changed.notify_waiters();
    }

    fn stopped(&self, cluster: &str, replica: &str) {
        if let Some(r) = self.state.lock().running.get_mut(cluster) {
            r.remove(replica);
        }
        self.changed.notify_waiters();
    }

    fn reconciled(&self, cluster: &str, key: &str) {
        *self
            .state
            .lock()
            .reconciles
            .entry((cluster.to_owned(), key.to_owned()))
            .or_default() += 1;
        self.changed.notify_waiters();
    }

    /// Replica `replica` crashed: the work it ran is gone with it.
    pub fn crashed(&self, replica: &str) {
        for r in self.state.lock().running.values_mut() {
            r.remove(replica);
        }
        self.changed.notify_waiters();
    }

    /// Every time two replicas ran one cluster's work at once.
    pub fn overlaps(&self) -> Vec<String> {
        self.state.lock().overlaps.clone()
    }

    /// The replica running each cluster now (clusters no one runs are absent).
    pub fn runners(&self) -> BTreeMap<String, String> {
        self.state
            .lock()
            .running
            .iter()
            .filter_map(|(c, r)| r.first().map(|r| (c.clone(), r.clone())))
            .collect()
    }

    /// How many times `cluster`'s work started, on any replica.
    pub fn engagements(&self, cluster: &str) -> usize {
        self.state
            .lock()
            .engagements
            .get(cluster)
            .copied()
            .unwrap_or(0)
    }

    /// How many times `key` of `cluster` was reconciled.
    pub fn reconciles(&self, cluster: &str, key: &str) -> usize {
        let s = self.state.lock();
        s.reconciles
            .get(&(cluster.to_owned(), key.to_owned()))
            .copied()
            .unwrap_or(0)
    }

    /// Waits (at most `limit`) until `pred` holds; panics naming `what` otherwise.
    pub async fn wait_for(&self, what: &str, limit: Duration, pred: impl Fn(&Self) -> bool) {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            let notified = self.changed.notified();
            if pred(self) {
                return;
            }
            tokio::select! {
                () = notified => {}
                () = tokio::time::sleep(Duration::from_millis(50)) => {}
                () = tokio::time::sleep_until(deadline) => {
                    panic!("timed out waiting for {what}: runners {:?}", self.runners());
                }
            }
        }
    }
}

/// The work of replica `replica` for one cluster: a ConfigMap controller of the cluster
/// (test-sized backoff) until `stop`, its reconciles and its run recorded in `witness`.
pub fn configmap_work(
    witness: Arc<FleetWitness>,
    replica: &str,
) -> impl Fn(Cluster, CancellationToken) -> std::pin::Pin<Box<dyn Future<Output = ()> + Send>>
+ Send
+ Sync
+ 'static {
    let replica = replica.to_owned();
    move |cluster: Cluster, stop: CancellationToken| {
        let (witness, replica) = (witness.clone(), replica.clone());
        Box::pin(async move {
            let name = cluster.name().to_owned();
            witness.started(&name, &replica);
            let controller = Controller::<ConfigMap>::builder(cluster.informers())
                .name("fleet-test")
                .build();
            let (w, n) = (witness.clone(), name.clone());
            controller
                .run(
                    move |req| {
                        w.reconciled(&n, &req.key);
                        async { Ok::<_, std::convert::Infallible>(Action::done()) }
                    },
                    stop.cancelled_owned(),
                )
                .await;
            witness.stopped(&name, &replica);
        })
    }
}
