//! `pod-watcher`: syncs pods with a shared informer and prints every add, update and delete.
//!
//! By default it starts an embedded `TestApiServer` preloaded with realistic pods and changes
//! a few of them while it watches, so it runs anywhere:
//!
//! ```text
//! cargo run -p pod-watcher                          # embedded server, 20 s
//! cargo run -p pod-watcher -- --kubeconfig ~/.kube/config --namespace default --seconds 0
//! ```
//!
//! `--seconds 0` watches until Ctrl-C.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clap::Parser;
use k8s_openapi::api::core::v1::Pod;
use kinform::client::{DeleteParams, KubeConfigOptions, Kubeconfig, Patch, PatchParams};
use kinform::fifo::Deleted;
use kinform::informer::{EventHandlerFns, InformerFactory};
use kinform::testing::TestApiServer;
use kinform::{Api, Client, Config, HasMetadata};

/// Watch pods through a kinform informer.
#[derive(Parser, Debug)]
struct Args {
    /// Use this kubeconfig instead of the embedded test server.
    #[arg(long)]
    kubeconfig: Option<PathBuf>,
    /// The kubeconfig context (default: the current one).
    #[arg(long)]
    context: Option<String>,
    /// Watch only this namespace (default: all).
    #[arg(long)]
    namespace: Option<String>,
    /// Pods preloaded into the embedded server.
    #[arg(long, default_value_t = 200)]
    pods: usize,
    /// How long to watch; 0 watches until Ctrl-C.
    #[arg(long, default_value_t = 20)]
    seconds: u64,
}

fn phase(p: &Pod) -> &str {
    p.status
        .as_ref()
        .and_then(|s| s.phase.as_deref())
        .unwrap_or("-")
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .init();
    let args = Args::parse();

    let (client, server) = match &args.kubeconfig {
        Some(path) => {
            let options = KubeConfigOptions {
                context: args.context.clone(),
                ..KubeConfigOptions::default()
            };
            let config = Config::from_custom_kubeconfig(Kubeconfig::read_from(path)?, &options)?;
            (Client::new(config)?, None)
        }
        None => {
            let server = TestApiServer::builder()
                .pods(args.pods)
                .namespaces(4)
                .start()
                .await?;
            println!(
                "embedded TestApiServer at {} with {} pods",
                server.url(),
                args.pods
            );
            let client = server.client()?;
            (client, Some(server))
        }
    };

    let mut builder = InformerFactory::builder(client.clone());
    if let Some(ns) = &args.namespace {
        builder = builder.namespace(ns.clone());
    }
    let factory = builder.build();
    let pods = factory.informer::<Pod>();
    pods.add_event_handler(
        EventHandlerFns::new()
            .on_add(|p: &Arc<Pod>, initial| {
                if !initial {
                    println!("ADDED    {} ({})", p.key(), phase(p));
                }
            })
            .on_update(|old: &Arc<Pod>, new: &Arc<Pod>| {
                if old.resource_version() != new.resource_version() {
                    println!(
                        "MODIFIED {} rv {} -> {}",
                        new.key(),
                        old.resource_version(),
                        new.resource_version()
                    );
                }
            })
            .on_delete(|d: &Deleted<Pod>| match d {
                Deleted::Object(p) => println!("DELETED  {}", p.key()),
                Deleted::FinalStateUnknown { key, .. } => {
                    println!("DELETED  {key} (seen by a relist)")
                }
            }),
    );

    let started = std::time::Instant::now();
    factory.start();
    factory.wait_for_cache_sync(Duration::from_secs(60)).await?;
    let lister = factory.lister::<Pod>();
    println!(
        "synced {} pods in {:?} (resourceVersion {})",
        lister.list_all().len(),
        started.elapsed(),
        pods.last_sync_resource_version()
    );

    // Against the embedded server, make some changes to watch.
    let churn = server.as_ref().map(|_| {
        let lister = lister.clone();
        let client = client.clone();
        tokio::spawn(async move {
            let mut victims = lister.list_all();
            victims.sort_by_key(|p| p.key());
            for (i, p) in victims.iter().take(10).enumerate() {
                tokio::time::sleep(Duration::from_millis(500)).await;
                let api: Api<Pod> =
                    Api::namespaced(client.clone(), p.namespace().unwrap_or("default"));
                let result = if i % 2 == 0 {
                    let patch = serde_json::json!({"metadata": {"labels": {"touched": "yes"}}});
                    api.patch(p.name(), &PatchParams::default(), &Patch::Merge(patch))
                        .await
                        .map(|_| ())
                } else {
                    api.delete(p.name(), &DeleteParams::default())
                        .await
                        .map(|_| ())
                };
                if let Err(e) = result {
                    eprintln!("change failed: {e}");
                }
            }
        })
    });

    if args.seconds == 0 {
        tokio::signal::ctrl_c().await?;
    } else {
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_secs(args.seconds)) => {}
            _ = tokio::signal::ctrl_c() => {}
        }
    }
    if let Some(churn) = churn {
        churn.abort();
    }
    println!("{} pods cached; shutting down", lister.list_all().len());
    factory.shutdown().await;
    if let Some(server) = server {
        server.shutdown().await;
    }
    Ok(())
}
