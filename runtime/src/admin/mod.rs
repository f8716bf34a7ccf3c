//! The admin endpoint: one opt-in HTTP server a controller process exposes for its probes,
//! its metrics and a look at its live state, bound to the address the user chooses.
//!
//! | path | answer |
//! | --- | --- |
//! | `/healthz` | `200 ok` while the server runs (a liveness probe) |
//! | `/readyz` | `200 ok` when every started informer has synced and every controller reconciles (leads, or is not elected) or is a warm standby with synced caches; otherwise `503` with one line per failed check. `?verbose` lists every check, passed (`[+]`) or failed (`[-]`), as kube-apiserver's `/readyz?verbose` does |
//! | `/metrics` | (feature `prometheus`) the Prometheus text format of a [`prometheus::Registry`] (the default registry unless one is given): the workqueue, controller and sharding metrics registered there by [`PrometheusControllerMetrics`](crate::controller::PrometheusControllerMetrics), whatever else the process registered, the informer and reflector metrics of the given factories ([`PrometheusInformerMetrics`](crate::informer::PrometheusInformerMetrics)), and of the given controllers `kinform_controller_ready{controller}` and client-go's `leader_election_master_status{name}` (each family unless the registry has it already) |
//! | `/debug/state` | JSON of the live state: every informer of every factory (synced, objects, last resourceVersion, lists, watch errors, handler backlog...), every controller (phase, readiness, queue depth per priority, counters, election, shard) and the Leases they hold or compete for |
//!
//! `GET` and `HEAD` only (anything else: `405` with `Allow`); an unknown path is `404`; the
//! query is ignored but for `/readyz?verbose`. A panic while answering (a collector of the
//! registry that panics, say) is caught and answered `500`: a request never takes the server
//! down. Requests are read with a 10 s header timeout, at most 64 connections are served at
//! once (more are closed at once), and cancelling the [`CancellationToken`] given to
//! [`AdminServerBuilder::serve`] stops accepting, lets requests in flight finish (at most 5
//! s), and closes idle keep-alive connections.
//!
//! **Readiness.** `/readyz` follows the controller's phase
//! ([`ControllerSnapshot::readiness`](crate::controller::ControllerSnapshot::readiness)): a
//! cold standby is never ready, as its caches start only when it leads; a Deployment whose
//! readiness probe is `/readyz` should run warm standbys, or probe `/healthz`.
//!
//! **Upstream.** controller-runtime's manager serves `/healthz` and `/readyz` (checks the
//! user adds, a ping by default) on one listener and `/metrics` (its global registry) on
//! another, both bound to configurable addresses (`:0` for an ephemeral port) and shut down
//! with the manager; kube-controller-manager serves `/healthz`, `/readyz` (with `?verbose`),
//! `/metrics` and `/debug/pprof` on its secure port, and its `/statusz` (KEP-4827) is a
//! plain-text status page. kinform serves everything on one listener, derives readiness from
//! the informers' sync and the controllers' phases instead of user checks, and its state page
//! is JSON of the caches, queues and Leases (no pprof). The server is written here on hyper
//! 1 (already the client's and the test server's HTTP stack); axum or tower-http would add
//! routing and middleware this handful of fixed paths does not need.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use kinform_runtime::admin::AdminServer;
//! use kinform_runtime::controller::Controller;
//! use kinform_runtime::informer::InformerFactory;
//! use kinform_runtime::leader::CancellationToken;
//! use kinform_testserver::TestApiServer;
//!
//! let server = TestApiServer::start().await?;
//! let factory = InformerFactory::builder(server.client()?).test_backoff().build();
//! let controller = Controller::<ConfigMap>::builder(&factory).build();
//! let stop = CancellationToken::new();
//! let admin = AdminServer::builder()
//!     .informers(&factory)
//!     .controller(controller.status())
//!     // Port 0: an ephemeral port, the bound address is in `local_addr`.
//!     .serve("127.0.0.1:0".parse()?, stop.clone())
//!     .await?;
//! println!("curl http://{}/readyz?verbose", admin.local_addr());
//! # let _ = controller;
//! stop.cancel();
//! admin.wait().await;
//! factory.shutdown().await;
//! # Ok(()) }
//! ```

mod routes;
mod state;

use std::convert::Infallible;
use std::fmt;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::task::{JoinHandle, JoinSet};
use tokio_util::sync::CancellationToken;

use crate::controller::ControllerStatus;
use crate::informer::InformerFactory;

/// Connections served at once; more are closed as soon as they are accepted.
pub const MAX_CONNECTIONS: usize = 64;
/// How long a request's headers may take to arrive.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// How long requests in flight may take to finish after the shutdown token fires.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// The admin server could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AdminError {
    /// The address could not be bound (in use, not local, no permission).
    #[error("admin endpoint: cannot bind {addr}: {source}")]
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
}

/// What the server reads to answer: the factories, the controllers and the registry.
pub(crate) struct Sources {
    pub(crate) factories: Vec<InformerFactory>,
    pub(crate) controllers: Vec<ControllerStatus>,
    #[cfg(feature = "prometheus")]
    pub(crate) registry: prometheus::Registry,
}

/// Configures an [`AdminServer`]: what it reports on.
#[must_use]
pub struct AdminServerBuilder {
    sources: Sources,
}

impl fmt::Debug for AdminServerBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AdminServerBuilder")
            .field("factories", &self.sources.factories.len())
            .field(
                "controllers",
                &self
                    .sources
                    .controllers
                    .iter()
                    .map(ControllerStatus::name)
                    .collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

impl AdminServerBuilder {
    /// Reports on the informers of `factory` (those it creates later too): in `/readyz`,
    /// `/debug/state` and the informer metrics of `/metrics`. Call once per factory.
    pub fn informers(mut self, factory: &InformerFactory) -> Self {
        self.sources.factories.push(factory.clone());
        self
    }

    /// Reports on a controller (its [`Controller::status`](crate::controller::Controller::status)):
    /// in `/readyz` and `/debug/state`. Call once per controller.
    pub fn controller(mut self, status: ControllerStatus) -> Self {
        self.sources.controllers.push(status);
        self
    }

    /// The registry `/metrics` exports (default: [`prometheus::default_registry`]); give it
    /// the one the controllers' [`PrometheusControllerMetrics`](crate::controller::PrometheusControllerMetrics)
    /// registered in.
    #[cfg(feature = "prometheus")]
    pub fn registry(mut self, registry: prometheus::Registry) -> Self {
        self.sources.registry = registry;
        self
    }

    /// Binds `addr` (port 0: an ephemeral port; see [`AdminServer::local_addr`]) and serves
    /// on a task of its own until `shutdown` is cancelled. Needs a Tokio runtime.
    pub async fn serve(
        self,
        addr: SocketAddr,
        shutdown: CancellationToken,
    ) -> Result<AdminServer, AdminError> {
        let listener = TcpListener::bind(addr)
            .await
            .map_err(|source| AdminError::Bind { addr, source })?;
        let local_addr = listener
            .local_addr()
            .map_err(|source| AdminError::Bind { addr, source })?;
        tracing::info!(%local_addr, "admin endpoint listening");
        let sources = Arc::new(self.sources);
        let task = tokio::spawn(accept(listener, sources, shutdown));
        Ok(AdminServer { local_addr, task })
    }
}

/// A running admin endpoint (see the [module docs](self)).
#[must_use = "the server runs until its shutdown token is cancelled; wait for it there"]
pub struct AdminServer {
    local_addr: SocketAddr,
    task: JoinHandle<()>,
}

impl fmt::Debug for AdminServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AdminServer")
            .field("local_addr", &self.local_addr)
            .finish_non_exhaustive()
    }
}

impl AdminServer {
    /// A builder reporting on nothing yet.
    pub fn builder() -> AdminServerBuilder {
        AdminServerBuilder {
            sources: Sources {
                factories: Vec::new(),
                controllers: Vec::new(),
                #[cfg(feature = "prometheus")]
                registry: prometheus::default_registry().clone(),
            },
        }
    }

    /// The address the server is bound to (the ephemeral port when port 0 was asked for).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Waits until the server has stopped: after its shutdown token was cancelled, once the
    /// requests in flight have been answered (at most [`SHUTDOWN_GRACE`]).
    pub async fn wait(self) {
        let _ = self.task.await;
    }
}

/// Accepts connections until `shutdown`, then lets the connections finish.
async fn accept(listener: TcpListener, sources: Arc<Sources>, shutdown: CancellationToken) {
    let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    let mut connections = JoinSet::new();
    loop {
        while connections.try_join_next().is_some() {}
        let accepted = tokio::select! {
            () = shutdown.cancelled() => break,
            accepted = listener.accept() => accepted,
        };
        match accepted {
            Ok((stream, peer)) => match slots.clone().try_acquire_owned() {
                Ok(slot) => {
                    connections.spawn(serve(stream, sources.clone(), shutdown.clone(), slot));
                }
                Err(_) => {
                    tracing::warn!(%peer, limit = MAX_CONNECTIONS, "admin endpoint: too many connections; closing this one");
                }
            },
            Err(error) => {
                // Out of file descriptors, say: wait a little rather than spin.
                tracing::warn!(%error, "admin endpoint: accept failed");
                tokio::select! {
                    () = shutdown.cancelled() => break,
                    () = tokio::time::sleep(Duration::from_millis(100)) => {}
                }
            }
        }
    }
    drop(listener);
    let drained = tokio::time::timeout(SHUTDOWN_GRACE, async {
        while connections.join_next().await.is_some() {}
    })
    .await;
    if drained.is_err() {
        tracing::warn!(grace = ?SHUTDOWN_GRACE, "admin endpoint: requests still in flight after the grace period; closing them");
        connections.abort_all();
    }
    tracing::info!("admin endpoint stopped");
}

/// Serves one connection (HTTP/1.1, keep-alive) until it closes or `shutdown`.
async fn serve(
    stream: TcpStream,
    sources: Arc<Sources>,
    shutdown: CancellationToken,
    _slot: OwnedSemaphorePermit,
) {
    let service = service_fn(move |request| {
        let sources = sources.clone();
        async move { Ok::<_, Infallible>(routes::answer(&sources, &request)) }
    });
    let connection = http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_READ_TIMEOUT)
        .serve_connection(TokioIo::new(stream), service);
    let mut connection = std::pin::pin!(connection);
    let result = tokio::select! {
        result = connection.as_mut() => result,
        () = shutdown.cancelled() => {
            connection.as_mut().graceful_shutdown();
            connection.await
        }
    };
    if let Err(error) = result {
        tracing::debug!(%error, "admin endpoint: connection ended with an error");
    }
}
