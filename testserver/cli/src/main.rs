//! `kinform-testserver`: runs kinform's in-process `TestApiServer` standalone, so kubectl,
//! client-go programs or benchmarks can talk to it.
//!
//! ```text
//! kinform-testserver --port 8080 --pods 100000 --namespaces 10
//! ```
//!
//! Serves HTTPS with a CA of its own (written into the kubeconfig, so kubectl and the official
//! client libraries verify it as a real API server), or plain HTTP with `--http`. Prints the
//! URL and the path of a kubeconfig pointing at it, then serves until Ctrl-C.

use std::path::PathBuf;

use clap::Parser;
use kinform_testserver::TestApiServer;

/// Command-line options.
#[derive(Debug, Parser)]
#[command(
    name = "kinform-testserver",
    about = "An in-process Kubernetes API server for tests and benchmarks"
)]
struct Args {
    /// Port on 127.0.0.1 (0 picks a free one).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Realistic pods to preload (about 5 KB of JSON each).
    #[arg(long, default_value_t = 0)]
    pods: usize,
    /// Namespaces the preloaded pods are spread over (ns-0, ns-1, ...).
    #[arg(long, default_value_t = 1)]
    namespaces: usize,
    /// Change events kept for watch resumption (older resourceVersions get 410).
    #[arg(long, default_value_t = 10_000)]
    history: usize,
    /// Where to write the kubeconfig (default: a file in the temp directory).
    #[arg(long)]
    kubeconfig: Option<PathBuf>,
    /// Serve plain HTTP instead of HTTPS.
    #[arg(long)]
    http: bool,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse();
    let mut builder = TestApiServer::builder()
        .port(args.port)
        .pods(args.pods)
        .namespaces(args.namespaces)
        .history_window(args.history);
    if !args.http {
        builder = builder.https();
    }
    let server = builder.start().await?;
    let path = args.kubeconfig.unwrap_or_else(|| {
        std::env::temp_dir().join(format!(
            "kinform-testserver-{}.kubeconfig",
            server.addr().port()
        ))
    });
    server.write_kubeconfig(&path)?;
    println!("url: {}", server.url());
    println!("kubeconfig: {}", path.display());
    tokio::signal::ctrl_c().await?;
    server.shutdown().await;
    Ok(())
}
