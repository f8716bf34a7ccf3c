//! A `Queue` custom resource in two versions with its three webhooks, served by
//! kinform's webhook server (`kinform::webhook`), and the manifests that deploy them.
//!
//! - [`api`]: `messaging.example.com/v1` and `v2` `Queue`s (derived), v2 the storage
//!   version and conversion hub, with the `From` impls both ways;
//! - [`webhooks`]: a validator (capacity bounds, no shrinking, protected queues cannot be
//!   deleted, a warning on long retention), a defaulter (priority and retention), and the
//!   conversion, as one `Webhooks` description;
//! - [`manifests`]: `deploy/` made from that description: the CRD with `strategy: Webhook`,
//!   the Validating and Mutating webhook configurations, Service, Deployment, and a
//!   cert-manager Issuer and Certificate;
//! - [`serve`]: the server as the binary runs it.
//!
//! # Tests
//!
//! `cargo test -p webhook-operator` runs the suite (`tests/suite/`):
//!
//! - `served`: the three webhooks over HTTPS with reviews as kube-apiserver sends them;
//! - `kubectl`: the same server registered in a `TestApiServer` as `deploy/` registers it
//!   on a cluster (the CRD and both configurations made here, the Service resolved to the
//!   test's port, the `caBundle` a test CA), driven by kubectl and kinform's typed client:
//!   refusals, defaults, both versions read back, and `failurePolicy` with the server down.
//!   It needs `kubectl` on the PATH and says it skipped otherwise (it fails instead under
//!   `KINFORM_CONFORMANCE=require`, as CI runs it);
//! - `manifests`: `deploy/` against what [`manifests::files`] produces.

pub mod api;
pub mod manifests;
pub mod webhooks;

use std::net::SocketAddr;
use std::path::PathBuf;

use kinform::webhook::{ServerError, WebhookServer};

/// Serves the Queue's webhooks on `addr` with the certificate and key of these files (read
/// again when cert-manager renews them) until `shutdown` completes.
pub async fn serve(
    addr: SocketAddr,
    cert: PathBuf,
    key: PathBuf,
    shutdown: impl std::future::Future<Output = ()> + Send,
) -> Result<(), ServerError> {
    let server = WebhookServer::builder(webhooks::webhooks())
        .tls_files(cert, key)
        .bind(addr)
        .await?;
    tracing::info!(addr = %server.local_addr(), "serving the Queue webhooks");
    server.serve(shutdown).await;
    Ok(())
}
