//! Runs the Foo controller the way it is deployed: under leader election on a Lease (the
//! toolkit's, with a warm standby by default), with an event recorder and the admin endpoint
//! (probes, metrics, live state), until cancelled (sample-controller's `main.go`, plus what
//! every production controller adds).

use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use kinform::CancellationToken;
use kinform::Client;
use kinform::admin::{AdminError, AdminServer};
use kinform::controller::shard::{ShardRole, ShardingConfig};
use kinform::controller::{LeaderElection, PrometheusControllerMetrics, ReconcileStats};
use kinform::events::{EventRecorder, RecorderConfig};
use kinform::informer::InformerFactory;
use kinform::leader::{ConfigError, LeaderElectionConfig};

use crate::foo_controller::{CONTROLLER_NAME, FooController};

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
    /// Whether a standby keeps its caches synced while another replica leads (on by
    /// default: it reconciles as soon as it takes over).
    pub warm_standby: bool,
    /// A sharded replica's role (member and sharder candidate by default).
    pub shard_role: ShardRole,
    /// Test-sized reflector backoff (`InformerFactoryBuilder::test_backoff`), for runs
    /// against a `TestApiServer` in tests; off (client-go's backoff) by default.
    pub test_backoff: bool,
    /// Where the admin endpoint listens (`/healthz`, `/readyz`, `/metrics`, `/debug/state`);
    /// port 0 picks a free port; `None` serves none. Default `127.0.0.1:0`.
    pub admin_address: Option<SocketAddr>,
    /// Filled with the admin endpoint's bound address once it listens.
    pub admin_bound: Arc<OnceLock<SocketAddr>>,
}

impl Options {
    /// Defaults for `identity`.
    pub fn new(identity: impl Into<String>) -> Self {
        Self {
            workers: 2,
            lease_namespace: "default".to_owned(),
            identity: identity.into(),
            election: LeaderElectionConfig::default().release_on_cancel(true),
            warm_standby: true,
            shard_role: ShardRole::default(),
            test_backoff: false,
            admin_address: Some(SocketAddr::from(([127, 0, 0, 1], 0))),
            admin_bound: Arc::default(),
        }
    }
}

/// What a run did.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// Reconcile counters over every leadership term.
    pub stats: ReconcileStats,
    /// How many times this replica became leader.
    pub terms: u64,
}

/// Why a run could not start.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The election or sharding configuration is invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The admin endpoint could not listen.
    #[error(transparent)]
    Admin(#[from] AdminError),
    /// The metrics could not be registered.
    #[error("metrics: {0}")]
    Metrics(#[from] prometheus::Error),
}

/// Runs until `cancel`: competes for the Lease `sample-controller` (standing by, warm, while
/// another replica holds it, and again after losing it); while leading, reconciles the Foos;
/// records events; serves the admin endpoint; on cancel, drains and releases the Lease.
pub async fn run(
    client: Client,
    options: Options,
    cancel: CancellationToken,
) -> Result<Report, RunError> {
    let recorder = EventRecorder::new(
        client.clone(),
        RecorderConfig::new(
            format!("samplecontroller.k8s.io/{CONTROLLER_NAME}"),
            options.identity.clone(),
        ),
    );
    let mut factory = InformerFactory::builder(client);
    if options.test_backoff {
        factory = factory.test_backoff();
    }
    // One factory for the whole run: a lost Lease keeps the caches for the next term.
    let factory = factory.build();
    let registry = prometheus::Registry::new();
    let metrics = Arc::new(PrometheusControllerMetrics::new(&registry)?);
    let election =
        LeaderElection::new(&options.lease_namespace, CONTROLLER_NAME, &options.identity)
            .timing(options.election.clone());
    let (foos, controller) = FooController::elected(
        &factory,
        options.workers,
        Some(recorder.clone()),
        election,
        options.warm_standby,
        Some(metrics),
    )?;
    let status = controller.status();
    let admin = match options.admin_address {
        Some(address) => {
            let admin = AdminServer::builder()
                .informers(&factory)
                .controller(status.clone())
                .registry(registry)
                .serve(address, cancel.clone())
                .await?;
            let _ = options.admin_bound.set(admin.local_addr());
            tracing::info!(address = %admin.local_addr(), "admin endpoint: /healthz /readyz /metrics /debug/state");
            Some(admin)
        }
        None => None,
    };
    let stats = controller
        .run(
            move |req| foos.clone().reconcile(req),
            cancel.clone().cancelled_owned(),
        )
        .await;
    factory.shutdown().await;
    if let Some(admin) = admin {
        admin.wait().await;
    }
    // Let the last events reach the server.
    let _ = tokio::time::timeout(Duration::from_secs(5), recorder.shutdown()).await;
    Ok(Report {
        stats,
        terms: status.snapshot().election.map_or(0, |e| e.terms),
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
) -> Result<Report, RunError> {
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
    Ok(Report { stats, terms: 1 })
}
