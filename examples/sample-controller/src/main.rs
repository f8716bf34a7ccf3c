//! `sample-controller`: Kubernetes' sample-controller on kinform.
//!
//! ```text
//! cargo run -p sample-controller                              # embedded API server demo
//! cargo run -p sample-controller -- --kubeconfig ~/.kube/config   # a real cluster
//! ```
//!
//! With no `--kubeconfig` and outside a cluster it starts an embedded TestApiServer, installs
//! the Foo CRD, creates Foos, scales one, deletes one, shows the controller converging and
//! exits 0 after a summary. With `--kubeconfig` (or in a pod) it runs until SIGINT/SIGTERM.
//! Either way it serves the admin endpoint (`--admin-address`, by default a free port on
//! 127.0.0.1, logged at start): `/healthz`, `/readyz`, `/metrics`, `/debug/state`.

// `foo` is the resource's real name here, not a placeholder.
#![allow(clippy::disallowed_names)]

use std::path::PathBuf;
use std::time::Instant;

use clap::Parser;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::events::v1::Event;
use kinform::CancellationToken;
use kinform::client::{
    DeleteParams, KubeConfigOptions, Kubeconfig, Patch, PatchParams, PostParams,
};
use kinform::controller::shard::ShardRole;
use kinform::controller::{controller_of, shutdown_signal};
use kinform::{Api, Client, Config, HasMetadata, ListParams};
use sample_controller::api::prelude::*;
use sample_controller::demo::{self, BoxError, Embedded, Observer, Snapshot, foo, wait};
use sample_controller::foo_controller;
use sample_controller::runner::{self, Options};

/// Kubernetes' sample-controller, ported to kinform.
#[derive(Parser, Debug)]
struct Args {
    /// Run against this kubeconfig instead of the embedded test server.
    #[arg(long)]
    kubeconfig: Option<PathBuf>,
    /// The kubeconfig context (default: the current one).
    #[arg(long)]
    context: Option<String>,
    /// Concurrent reconciles.
    #[arg(long, default_value_t = 2)]
    workers: usize,
    /// Namespace of the leader-election Lease.
    #[arg(long, default_value = "default")]
    lease_namespace: String,
    /// Identity in the Lease and events (default: $POD_NAME or $HOSTNAME).
    #[arg(long)]
    identity: Option<String>,
    /// Run as one replica of a sharded controller (every replica reconciles its share of the
    /// Foos) instead of under leader election. The embedded demo then runs two replicas that
    /// share the Foos, and one of them leaves.
    #[arg(long)]
    shards: bool,
    /// With `--shards` against a cluster: what this replica does. The sharder caches every
    /// Foo's metadata; run it apart (`sharder`, reconciling nothing) beside `member`
    /// replicas to keep every member at its share of the memory.
    #[arg(long, value_enum, default_value_t = Role::MemberAndSharder)]
    shard_role: Role,
    /// Where the admin endpoint listens (`/healthz`, `/readyz`, `/metrics`, `/debug/state`),
    /// e.g. `0.0.0.0:8081` in a pod; port 0 picks a free one; `off` serves none (default:
    /// $SAMPLE_CONTROLLER_ADMIN_ADDRESS, else `127.0.0.1:0`).
    #[arg(long)]
    admin_address: Option<String>,
    /// Start the informers only when this replica leads (a cold standby) instead of keeping
    /// warm caches while another replica leads.
    #[arg(long)]
    cold_standby: bool,
}

/// `--shard-role` ([`ShardRole`]).
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
enum Role {
    /// A member that also stands for sharder.
    MemberAndSharder,
    /// A member that never becomes the sharder.
    Member,
    /// Only the sharder: reconciles nothing.
    Sharder,
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "info,kinform=warn".into()),
        )
        .init();
    let args = Args::parse();
    let identity = args
        .identity
        .clone()
        .or_else(|| std::env::var("POD_NAME").ok())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| format!("sample-controller-{}", std::process::id()));
    let mut options = Options::new(identity);
    options.workers = args.workers;
    options.lease_namespace = args.lease_namespace.clone();
    options.warm_standby = !args.cold_standby;
    let admin = args
        .admin_address
        .clone()
        .or_else(|| std::env::var("SAMPLE_CONTROLLER_ADMIN_ADDRESS").ok());
    options.admin_address = match admin.as_deref() {
        None => options.admin_address,
        Some("off") => None,
        Some(address) => Some(
            address
                .parse()
                .map_err(|e| format!("--admin-address {address:?}: {e}"))?,
        ),
    };
    options.shard_role = match args.shard_role {
        Role::MemberAndSharder => ShardRole::MemberAndSharder,
        Role::Member => ShardRole::Member,
        Role::Sharder => ShardRole::Sharder,
    };

    let real = match &args.kubeconfig {
        Some(path) => {
            let opts = KubeConfigOptions {
                context: args.context.clone(),
                ..KubeConfigOptions::default()
            };
            Some(Config::from_custom_kubeconfig(
                Kubeconfig::read_from(path)?,
                &opts,
            )?)
        }
        None => Config::incluster().ok(),
    };
    match real {
        Some(config) => run_for_real(Client::new(config)?, options, args.shards).await,
        None if args.shards => embedded_sharded(options).await,
        None => embedded(options).await,
    }
}

/// Against a cluster: run until SIGINT/SIGTERM.
async fn run_for_real(client: Client, options: Options, shards: bool) -> Result<(), BoxError> {
    let cancel = CancellationToken::new();
    let signal = cancel.clone();
    tokio::spawn(async move {
        shutdown_signal().await;
        signal.cancel();
    });
    let report = if shards {
        runner::run_sharded(client, options, cancel).await?
    } else {
        runner::run(client, options, cancel).await?
    };
    tracing::info!(?report, "sample-controller stopped");
    Ok(())
}

/// The embedded demo.
async fn embedded(options: Options) -> Result<(), BoxError> {
    let started = Instant::now();
    let Embedded {
        server,
        client,
        cancel,
        sim_factory,
        sim,
    } = Embedded::start("").await?;
    let ns = "default";
    let admin = options.admin_bound.clone();
    let controller = tokio::spawn(runner::run(client.clone(), options, cancel.clone()));
    let observer = Observer::start(client.clone()).await?;
    let foos = client.samplecontroller_v1alpha1().foos(ns);
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), ns);

    // A Deployment that belongs to nobody: the Foo naming it must not adopt it.
    let squatter =
        foo_controller::new_deployment(&foo(ns, "nobody", "squatter", 1), "squatter", Some(1));
    let mut squatter = squatter;
    squatter.metadata.owner_references = None;
    deployments
        .create(&PostParams::default(), &squatter)
        .await?;

    println!(
        "\n== creating Foos alpha (1 replica), bravo (3), charlie (2) and delta (wants the existing Deployment 'squatter')"
    );
    for (name, deployment, replicas) in [
        ("alpha", "alpha-nginx", 1),
        ("bravo", "bravo-nginx", 3),
        ("charlie", "charlie-nginx", 2),
        ("delta", "squatter", 1),
    ] {
        foos.create(&PostParams::default(), &foo(ns, name, deployment, replicas))
            .await?;
    }
    wait(&observer, "all Foos converge", |s| {
        s.converged() && s.foos.len() == 4 && s.deployments.len() == 4
    })
    .await?;

    println!("\n== scaling bravo from 3 to 5 replicas");
    foos.patch(
        "bravo",
        &PatchParams::default(),
        &Patch::Merge(serde_json::json!({"spec": {"replicas": 5}})),
    )
    .await?;
    wait(&observer, "bravo-nginx reaches 5", |s| {
        s.converged()
            && s.deployment(ns, "bravo-nginx")
                .and_then(|d| d.spec.as_ref()?.replicas)
                == Some(5)
    })
    .await?;

    println!(
        "\n== deleting charlie (the garbage collector deletes its Deployment through the ownerReference)"
    );
    foos.delete("charlie", &DeleteParams::default()).await?;
    let last = wait(&observer, "charlie-nginx is garbage collected", |s| {
        s.converged() && s.deployment(ns, "charlie-nginx").is_none()
    })
    .await?;

    if let Some(&address) = admin.get() {
        println!("\n== the admin endpoint, as `curl http://{address}/readyz?verbose` shows it");
        let (status, body) = demo::admin_get(address, "/readyz?verbose").await?;
        print!("HTTP {status}\n{body}");
        let (_, metrics) = demo::admin_get(address, "/metrics").await?;
        for line in metrics
            .lines()
            .filter(|l| l.starts_with("controller_runtime_reconcile_total"))
        {
            println!("{line}");
        }
    }

    cancel.cancel();
    let report = controller.await??;
    let sim_stats = sim.await?;
    sim_factory.shutdown().await;
    let events = Api::<Event>::namespaced(client.clone(), ns)
        .list(&ListParams::default())
        .await?;
    summary(&last, &events.items, &report, started);
    println!(
        "simulator (kube-controller-manager stand-in): {} status steps",
        sim_stats.reconciles
    );
    observer.shutdown().await;
    server.shutdown().await;
    Ok(())
}

/// The embedded demo with `--shards`: two replicas share the Foos; one leaves
/// ([`demo::sharded`], which the integration test runs too).
async fn embedded_sharded(options: Options) -> Result<(), BoxError> {
    let outcome = demo::sharded(options).await?;
    println!(
        "\n== done after {:.2}s: replica-a {} reconciles, replica-b {} reconciles",
        outcome.elapsed.as_secs_f64(),
        outcome.reconciles.0,
        outcome.reconciles.1
    );
    Ok(())
}

fn summary(s: &Snapshot, events: &[Event], report: &runner::Report, started: Instant) {
    println!("\n== summary after {:.2}s", started.elapsed().as_secs_f64());
    println!(
        "  {:<8} {:<14} {:>8} {:>10}",
        "FOO", "DEPLOYMENT", "REPLICAS", "AVAILABLE"
    );
    for f in &s.foos {
        let spec = f.spec.clone().unwrap_or_default();
        println!(
            "  {:<8} {:<14} {:>8} {:>10}",
            f.name(),
            spec.deployment_name.unwrap_or_default(),
            spec.replicas.map_or("-".into(), |r| r.to_string()),
            f.status
                .as_ref()
                .and_then(|st| st.available_replicas)
                .map_or("-".into(), |r| r.to_string()),
        );
    }
    println!(
        "  {:<14} {:>8} {:>10}  OWNER",
        "DEPLOYMENT", "REPLICAS", "AVAILABLE"
    );
    for d in &s.deployments {
        println!(
            "  {:<14} {:>8} {:>10}  {}",
            d.name(),
            d.spec.as_ref().and_then(|x| x.replicas).unwrap_or(1),
            d.status
                .as_ref()
                .and_then(|x| x.available_replicas)
                .unwrap_or(0),
            controller_of(&**d).map_or("(none)".to_owned(), |o| format!("{}/{}", o.kind, o.name)),
        );
    }
    println!("  events:");
    for e in events {
        let regarding = e
            .regarding
            .as_ref()
            .and_then(|r| r.name.clone())
            .unwrap_or_default();
        let count = e.series.as_ref().map_or(1, |x| x.count);
        println!(
            "    {:<8} {:<18} {:<8} x{count:<3} {}",
            e.type_.clone().unwrap_or_default(),
            e.reason.clone().unwrap_or_default(),
            regarding,
            e.note.clone().unwrap_or_default()
        );
    }
    println!(
        "  controller: {} reconciles ({} ok, {} errors, {} panics) over {} leadership term(s)",
        report.stats.reconciles,
        report.stats.successes,
        report.stats.errors,
        report.stats.panics,
        report.terms,
    );
}
