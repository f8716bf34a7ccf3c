//! Runs the Foo controller the way it is deployed: under leader election on a Lease, with an
//! event recorder, until cancelled (sample-controller's `main.go`, plus the leader election
//! every production controller adds).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use k8s_openapi::api::coordination::v1::Lease;
use kinform::CancellationToken;
use kinform::controller::ReconcileStats;
use kinform::controller::shard::{ShardRole, ShardingConfig};
use kinform::events::{EventRecorder, RecorderConfig};
use kinform::informer::InformerFactory;
use kinform::leader::{
    ConfigError, LeaderCallbacks, LeaderElectionConfig, LeaderElector, LeaseLock, RunOutcome,
};
use kinform::{Api, Client};
use tokio::sync::Semaphore;

use crate::foo_controller::{CONTROLLER_NAME, FooController};

const MAX_TERMS: usize = 1024;

/// How the controller runs.
#[derive(Clone, Debug)]
pub struct Options {
    /// Concurrent reconciles (sample-controller's `threadiness`, 2).
    pub workers: usize,
    /// The namespace of the Lease.
    pub lease_namespace: String,
    /// This replica's identity in the Lease and in events (the pod name in a cluster).
    pub identity: String,
    /// Leader election timing (client-go's defaults: 15 s / 10 s / 2 s).
    pub election: LeaderElectionConfig,
    /// A sharded replica's role (member and sharder candidate by default).
    pub shard_role: ShardRole,
    /// Test-sized reflector backoff (`InformerFactoryBuilder::test_backoff`), for runs
    /// against a `TestApiServer` in tests; off (client-go's backoff) by default.
    pub test_backoff: bool,
}

impl Options {
    /// Defaults for `identity`.
    pub fn new(identity: impl Into<String>) -> Self {
        Self {
            workers: 2,
            lease_namespace: "default".to_owned(),
            identity: identity.into(),
            election: LeaderElectionConfig::default().release_on_cancel(true),
            shard_role: ShardRole::default(),
            test_backoff: false,
        }
    }
}

/// What a run did.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// Reconcile counters summed over every leadership term.
    pub stats: ReconcileStats,
    /// How many times this replica became leader.
    pub terms: u64,
    /// How the election ended.
    pub outcome: Option<RunOutcome>,
}

/// Reconcile counters summed across leadership terms.
#[derive(Default)]
struct Totals(Mutex<(ReconcileStats, u64)>);

impl Totals {
    fn add(&self, s: ReconcileStats) {
        let mut t = self.0.lock().unwrap_or_else(|e| e.into_inner());
        t.0.reconciles += s.reconciles;
        t.0.successes += s.successes;
        t.0.requeues += s.requeues;
        t.0.errors += s.errors;
        t.0.panics += s.panics;
        t.1 += 1;
    }
    fn get(&self) -> (ReconcileStats, u64) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Runs until `cancel`: competes for the Lease `sample-controller`; while leading, runs the
/// Foo controller (informers, workers); records events; on cancel, drains and releases the
/// Lease.
pub async fn run(
    client: Client,
    options: Options,
    cancel: CancellationToken,
) -> Result<Report, ConfigError> {
    let recorder = EventRecorder::new(
        client.clone(),
        RecorderConfig::new(
            format!("samplecontroller.k8s.io/{CONTROLLER_NAME}"),
            options.identity.clone(),
        ),
    );
    let totals = Arc::new(Totals::default());
    let lock = LeaseLock::new(
        Api::<Lease>::namespaced(client.clone(), &options.lease_namespace),
        CONTROLLER_NAME,
        options.identity.clone(),
    );
    // The elector waits for the leading work at most one lease duration before it returns;
    // each term holds a permit until its controller has drained, and the run waits for every
    // permit at the end, so the report counts all of a term's work however long it drains.
    let terms = Arc::new(Semaphore::new(MAX_TERMS));
    let callbacks = {
        let (client, recorder, totals, workers, test_backoff) = (
            client.clone(),
            recorder.clone(),
            totals.clone(),
            options.workers,
            options.test_backoff,
        );
        let terms = terms.clone();
        LeaderCallbacks::new(move |leading: CancellationToken| {
            let (client, recorder, totals) = (client.clone(), recorder.clone(), totals.clone());
            let terms = terms.clone();
            async move {
                let Ok(_term) = terms.acquire().await else {
                    return;
                };
                tracing::info!("became leader: starting the Foo controller");
                // One factory per term: stepping down stops every informer.
                let mut factory = InformerFactory::builder(client);
                if test_backoff {
                    factory = factory.test_backoff();
                }
                let factory = factory.build();
                let (foos, controller) = FooController::new(&factory, workers, Some(recorder));
                let stats = controller
                    .run(
                        move |req| foos.clone().reconcile(req),
                        leading.cancelled_owned(),
                    )
                    .await;
                factory.shutdown().await;
                totals.add(stats);
            }
        })
        .on_stopped_leading(|| tracing::info!("stopped leading"))
        .on_new_leader(|id| tracing::info!(leader = %id, "leader elected"))
    };
    let elector = LeaderElector::new(lock, options.election.clone(), callbacks)?;
    let outcome = elector.run(cancel).await;
    let _all_terms_ended = terms.acquire_many(MAX_TERMS as u32).await;
    // Let the last events reach the server.
    let _ = tokio::time::timeout(Duration::from_secs(5), recorder.shutdown()).await;
    let (stats, terms) = totals.get();
    Ok(Report {
        stats,
        terms,
        outcome: Some(outcome),
    })
}

/// Runs one replica of the sharded Foo controller until `cancel` (`--shards`): no leader
/// election of the whole controller; the replica keeps its member Lease in
/// `options.lease_namespace`, reconciles the Foos (and Deployments) labelled for
/// `options.identity`, and on cancel drains and releases its Lease so the other replicas
/// take its Foos at once. `options.election` is the Lease timing.
pub async fn run_sharded(
    client: Client,
    options: Options,
    cancel: CancellationToken,
) -> Result<Report, ConfigError> {
    let recorder = EventRecorder::new(
        client.clone(),
        RecorderConfig::new(
            format!("samplecontroller.k8s.io/{CONTROLLER_NAME}"),
            options.identity.clone(),
        ),
    );
    let factory = InformerFactory::new(client);
    let sharding = ShardingConfig::new(&options.lease_namespace, &options.identity)
        .timing(options.election.clone())
        .role(options.shard_role);
    let (foos, controller) = FooController::with_sharding(
        &factory,
        options.workers,
        Some(recorder.clone()),
        Some(sharding),
    )?;
    let stats = controller
        .run(
            move |req| foos.clone().reconcile(req),
            cancel.cancelled_owned(),
        )
        .await;
    factory.shutdown().await;
    let _ = tokio::time::timeout(Duration::from_secs(5), recorder.shutdown()).await;
    Ok(Report {
        stats,
        terms: 1,
        outcome: None,
    })
}
