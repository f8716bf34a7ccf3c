//! `webhook-operator`: the Queue webhooks' server, and its deployment manifests.
//!
//! ```text
//! webhook-operator serve --cert tls.crt --key tls.key [--addr 0.0.0.0:9443]
//! webhook-operator manifests [--out examples/webhook-operator/deploy]
//! ```

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Parser, Subcommand};

/// The Queue CRD's validating, defaulting and conversion webhooks.
#[derive(Parser, Debug)]
struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Serve the webhooks over HTTPS until SIGINT/SIGTERM.
    Serve {
        /// The address to listen on.
        #[arg(long, default_value = "0.0.0.0:9443")]
        addr: SocketAddr,
        /// The certificate (PEM), re-read when it changes.
        #[arg(long, default_value = "/tls/tls.crt")]
        cert: PathBuf,
        /// The private key (PEM), re-read when it changes.
        #[arg(long, default_value = "/tls/tls.key")]
        key: PathBuf,
    },
    /// Print the deployment manifests, or write them into a directory.
    Manifests {
        /// The directory to write the files into (printed when absent).
        #[arg(long)]
        out: Option<PathBuf>,
    },
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .init();
    match Args::parse().command {
        Command::Serve { addr, cert, key } => {
            webhook_operator::serve(addr, cert, key, kinform::controller::shutdown_signal())
                .await?;
        }
        Command::Manifests { out } => {
            for (name, text) in webhook_operator::manifests::files()? {
                match &out {
                    Some(dir) => std::fs::write(dir.join(name), text)?,
                    None => print!("---\n# {name}\n{text}"),
                }
            }
        }
    }
    Ok(())
}
