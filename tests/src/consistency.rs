//! Helpers of the consistency guard's tests: a `Tally` custom resource and a controller that
//! acts on its cache every time it runs, against a server whose watch events arrive late, so
//! that every act on a stale cache shows and is counted.
//!
//! On each reconcile of a Tally the controller (1) creates the Tally's owned ConfigMap when
//! its cache has none, and (2) writes `status.count + 1` with the cached object's
//! resourceVersion as precondition, until the count reaches `spec.rounds`; then it asks to be
//! reconciled again after a short poll. A stale cache shows as a create answered
//! AlreadyExists (the ConfigMap was made by an earlier reconcile the cache has not seen) or a
//! status write answered Conflict (the cached Tally is older than the controller's own last
//! write): each is a *stale act*, counted.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kinform::client::PostParams;
use kinform::controller::{Action, Controller, ReconcileStats, Request, controller_reference};
use kinform::informer::InformerFactory;
use kinform::lister::Lister;
use kinform::testing::TestApiServer;
use kinform::{HasMetadata, Resource, Scope};
use serde::{Deserialize, Serialize};
use serde_json::json;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// `guard.example.com/v1` `Tally`: a count its controller raises by one per reconcile.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Tally {
    /// Standard metadata.
    pub metadata: ObjectMeta,
    /// The spec.
    #[serde(default)]
    pub spec: TallySpec,
    /// The status (the controller's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<TallyStatus>,
}

/// A Tally's spec.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct TallySpec {
    /// How many reconciles count it up.
    #[serde(default)]
    pub rounds: i64,
}

/// A Tally's status.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct TallyStatus {
    /// Reconciles that counted.
    #[serde(default)]
    pub count: i64,
}

impl HasMetadata for Tally {
    fn metadata(&self) -> &ObjectMeta {
        &self.metadata
    }
    fn metadata_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

impl Resource for Tally {
    const GROUP: &'static str = "guard.example.com";
    const VERSION: &'static str = "v1";
    const API_VERSION: &'static str = "guard.example.com/v1";
    const KIND: &'static str = "Tally";
    const PLURAL: &'static str = "tallies";
    const SCOPE: Scope = Scope::Namespaced;
}

/// Registers the Tally CRD (with its status subresource) on `server`.
pub fn register_tallies(server: &TestApiServer) {
    server
        .register_crd(json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "tallies.guard.example.com"},
            "spec": {
                "group": "guard.example.com", "scope": "Namespaced",
                "names": {"plural": "tallies", "singular": "tally", "kind": "Tally", "listKind": "TallyList"},
                "versions": [{"name": "v1", "served": true, "storage": true,
                    "subresources": {"status": {}},
                    "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                        "spec": {"type": "object", "properties": {"rounds": {"type": "integer"}}},
                        "status": {"type": "object", "properties": {"count": {"type": "integer"}}}}}}}]
            }
        }))
        .expect("the Tally CRD registers");
}

/// One run of the Tally controller.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// Tallies (keys).
    pub keys: usize,
    /// Counted reconciles per Tally.
    pub rounds: i64,
    /// Workers.
    pub workers: usize,
    /// Whether the consistency guard is on.
    pub guard: bool,
    /// The watch delay fault's bounds.
    pub delay: (Duration, Duration),
    /// How soon a reconcile asks to run again.
    pub poll: Duration,
    /// The run stops after this many reconciles at the latest (the guard-off run, whose
    /// lost rounds are redone, need not count every Tally up).
    pub max_reconciles: u64,
}

/// What a run counted.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    /// The controller's counters at the end.
    pub stats: ReconcileStats,
    /// Creates of the owned ConfigMap answered AlreadyExists.
    pub duplicate_creates: u64,
    /// Status writes answered Conflict (the cached Tally was older than the last write).
    pub lost_updates: u64,
    /// Status writes that counted.
    pub counted: u64,
    /// The most keys seen set aside at once.
    pub most_parked: u64,
    /// Samples in which more keys than workers were set aside and reconciles went on.
    pub progress_while_parked: u64,
    /// How long the run took.
    pub elapsed: Duration,
}

impl Outcome {
    /// Acts on a stale cache: duplicate creates plus lost updates.
    pub fn stale_acts(&self) -> u64 {
        self.duplicate_creates + self.lost_updates
    }
}

#[derive(Default)]
struct Counts {
    duplicate_creates: AtomicU64,
    lost_updates: AtomicU64,
    counted: AtomicU64,
}

/// The Tally's name `i`.
fn tally_name(i: usize) -> String {
    format!("t-{i:05}")
}

/// Starts a server with the Tally CRD and `s.keys` Tallies, runs the controller until
/// every Tally is counted up (or `s.max_reconciles`), and returns what it counted.
pub async fn run_scenario(s: &Scenario) -> Outcome {
    let server = TestApiServer::start().await.expect("the server starts");
    register_tallies(&server);
    for i in 0..s.keys {
        server
            .create_object(json!({
                "apiVersion": Tally::API_VERSION, "kind": Tally::KIND,
                "metadata": {"name": tally_name(i), "namespace": "default"},
                "spec": {"rounds": s.rounds}
            }))
            .expect("a Tally");
    }
    let client = crate::controller::client(&server);
    let factory: InformerFactory = crate::controller::factory(client);
    let controller = Controller::<Tally>::builder(&factory)
        .owns::<ConfigMap>()
        .workers(s.workers)
        .consistency_guard(s.guard)
        .build();
    let tallies = controller.lister().clone();
    let configmaps = factory.lister::<ConfigMap>();
    let stats = controller.stats();
    let counts = Arc::new(Counts::default());
    let done = CancellationToken::new();
    let started = Instant::now();
    let run = {
        let (counts, configmaps, poll) = (counts.clone(), configmaps.clone(), s.poll);
        tokio::spawn(controller.run(
            move |req| reconcile(req, configmaps.clone(), counts.clone(), poll),
            done.clone().cancelled_owned(),
        ))
    };
    // Delays only once the caches have synced, so the run is about the writes.
    factory
        .wait_for_cache_sync(Duration::from_secs(30))
        .await
        .expect("the caches sync");
    server.faults().set_watch_delay(s.delay.0, s.delay.1);

    let mut outcome = Outcome::default();
    let mut last = stats.snapshot();
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        tokio::time::sleep(Duration::from_millis(20)).await;
        let now = stats.snapshot();
        let parked_before = last.parked - last.woken - last.parked_timeouts;
        let parked_now = now.parked - now.woken - now.parked_timeouts;
        outcome.most_parked = outcome.most_parked.max(parked_now);
        if parked_before.min(parked_now) > s.workers as u64 && now.reconciles > last.reconciles {
            outcome.progress_while_parked += 1;
        }
        last = now;
        if now.reconciles >= s.max_reconciles
            || counted_up(&tallies, s.rounds, s.keys)
            || Instant::now() > deadline
        {
            break;
        }
    }
    done.cancel();
    outcome.stats = run.await.expect("the controller ends");
    outcome.elapsed = started.elapsed();
    outcome.duplicate_creates = counts.duplicate_creates.load(Ordering::Relaxed);
    outcome.lost_updates = counts.lost_updates.load(Ordering::Relaxed);
    outcome.counted = counts.counted.load(Ordering::Relaxed);
    factory.shutdown().await;
    server.shutdown().await;
    outcome
}

/// Whether every Tally in the cache is counted up.
fn counted_up(tallies: &Lister<Tally>, rounds: i64, keys: usize) -> bool {
    let all = tallies.list_all();
    all.len() == keys
        && all
            .iter()
            .all(|t| t.status.as_ref().is_some_and(|s| s.count >= rounds))
}

/// The Tally controller's reconcile (see the module docs).
async fn reconcile(
    req: Request<Tally>,
    configmaps: Lister<ConfigMap>,
    counts: Arc<Counts>,
    poll: Duration,
) -> Result<Action, kinform::client::Error> {
    let Some(tally) = req.object.clone() else {
        return Ok(Action::done());
    };
    let ns = req.namespace().unwrap_or("default");
    let count = tally.status.as_ref().map_or(0, |s| s.count);
    if count >= tally.spec.rounds {
        return Ok(Action::done());
    }
    let child = format!("{}-child", req.name());
    if configmaps.get(ns, &child).is_none() {
        let cm = ConfigMap {
            metadata: ObjectMeta {
                name: Some(child),
                namespace: Some(ns.to_owned()),
                owner_references: Some(vec![controller_reference(&*tally)]),
                ..ObjectMeta::default()
            },
            ..ConfigMap::default()
        };
        match req
            .client()
            .namespaced::<ConfigMap>(ns)
            .create(&PostParams::default(), &cm)
            .await
        {
            Ok(_) => {}
            Err(e) if e.is_already_exists() => {
                counts.duplicate_creates.fetch_add(1, Ordering::Relaxed);
            }
            Err(e) => return Err(e),
        }
    }
    let mut next = (*tally).clone();
    next.status = Some(TallyStatus { count: count + 1 });
    match req
        .client()
        .namespaced::<Tally>(ns)
        .replace_status(req.name(), &PostParams::default(), &next)
        .await
    {
        Ok(_) => {
            counts.counted.fetch_add(1, Ordering::Relaxed);
        }
        Err(e) if e.is_conflict() => {
            counts.lost_updates.fetch_add(1, Ordering::Relaxed);
        }
        Err(e) => return Err(e),
    }
    Ok(Action::requeue_after(poll))
}
