//! The HTTPS server kube-apiserver calls: hyper 1 over rustls, HTTP/2 and HTTP/1.1 (ALPN
//! `h2`, `http/1.1`, as kube-apiserver's client offers).
//!
//! A request's way: accept (at most `max_connections` open at once; past that the listener's
//! backlog holds the next) → TLS handshake within `handshake_timeout`, with the certificate of
//! the moment (`tls.rs`: read from PEM files and re-read when they change) → hyper →
//! `GET /healthz` and `/readyz` answer `ok`; `POST` on a webhook path: the body, at most
//! `max_body_bytes` (413 past it, as kube-apiserver refuses its own oversized requests; the
//! default 3 MiB is its request limit), then [`Webhooks::respond`] on a task of its own, so a
//! handler that panics answers 500 and the connection lives. Reading the body and answering
//! share one deadline, `request_timeout` (504 past it: kube-apiserver then applies the
//! webhook's `failurePolicy`, as for any failed call).
//!
//! Shutdown ([`WebhookServer::serve`]'s future, or a `CancellationToken`): the listener
//! closes, every connection is told to finish (HTTP/2 GOAWAY, HTTP/1.1 `Connection: close`
//! after the request in flight), and after `shutdown_grace` those still open are dropped.
//!
//! Also considered: axum (a router the three fixed routes do not need) and hyper-rustls's
//! acceptor (no certificate reloading); tower's timeout and body-limit layers would wrap the
//! same two calls written here.

mod metrics;
mod tls;

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

pub use metrics::{MetricsSnapshot, ServerMetrics};
use tls::ReloadingCert;

use crate::error::ServerError;
use crate::webhooks::{Reply, Webhooks};

/// kube-apiserver's limit on a request body, the default of `max_body_bytes`.
pub const DEFAULT_MAX_BODY_BYTES: usize = 3 * 1024 * 1024;

/// How a [`WebhookServer`] is set up; [`WebhookServer::builder`] makes one.
#[derive(Debug)]
#[must_use = "a builder does nothing until bind is called"]
pub struct ServerBuilder {
    webhooks: Webhooks,
    tls: Option<(PathBuf, PathBuf)>,
    plain_http: bool,
    max_body_bytes: usize,
    request_timeout: Duration,
    handshake_timeout: Duration,
    cert_reload_interval: Duration,
    max_connections: usize,
    shutdown_grace: Duration,
}

impl ServerBuilder {
    /// Serve the certificate (PEM chain, leaf first) and private key (PEM, PKCS#8, PKCS#1 or
    /// SEC1) of these files, read again when they change (cert-manager's `tls.crt` and
    /// `tls.key`).
    pub fn tls_files(mut self, cert: impl Into<PathBuf>, key: impl Into<PathBuf>) -> Self {
        self.tls = Some((cert.into(), key.into()));
        self
    }

    /// Serve plain HTTP, for a server behind a proxy that terminates TLS (kube-apiserver
    /// itself calls webhooks over HTTPS only).
    pub fn plain_http(mut self) -> Self {
        self.plain_http = true;
        self
    }

    /// The largest request body taken (default [`DEFAULT_MAX_BODY_BYTES`]).
    pub fn max_body_bytes(mut self, bytes: usize) -> Self {
        self.max_body_bytes = bytes;
        self
    }

    /// The time to read a request and answer it (default 30 s, kube-apiserver's longest
    /// webhook timeout).
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// The time a TLS handshake may take (default 10 s).
    pub fn handshake_timeout(mut self, timeout: Duration) -> Self {
        self.handshake_timeout = timeout;
        self
    }

    /// How often the certificate files are read for a change (default 10 s, as
    /// controller-runtime's certificate watcher polls).
    pub fn cert_reload_interval(mut self, interval: Duration) -> Self {
        self.cert_reload_interval = interval;
        self
    }

    /// The most connections open at once (default 1024).
    pub fn max_connections(mut self, connections: usize) -> Self {
        self.max_connections = connections.max(1);
        self
    }

    /// How long shutdown waits for open connections to finish (default 10 s).
    pub fn shutdown_grace(mut self, grace: Duration) -> Self {
        self.shutdown_grace = grace;
        self
    }

    /// Checks the description ([`Webhooks::check`]), reads the certificate and binds `addr`
    /// (port 0 picks a free port: [`WebhookServer::local_addr`] says which).
    pub async fn bind(self, addr: SocketAddr) -> Result<WebhookServer, ServerError> {
        self.webhooks.check()?;
        let metrics = Arc::new(ServerMetrics::default());
        let tls = match (&self.tls, self.plain_http) {
            (Some((cert, key)), _) => {
                let provider = Arc::new(rustls::crypto::ring::default_provider());
                let tls_error = |message: String| ServerError::Tls {
                    cert: cert.clone(),
                    key: key.clone(),
                    message,
                };
                let resolver = Arc::new(
                    ReloadingCert::load(cert, key, provider.clone(), metrics.clone())
                        .map_err(tls_error)?,
                );
                let mut config = rustls::ServerConfig::builder_with_provider(provider)
                    .with_safe_default_protocol_versions()
                    .map_err(|e| tls_error(e.to_string()))?
                    .with_no_client_auth()
                    .with_cert_resolver(resolver.clone());
                config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
                Some((tokio_rustls::TlsAcceptor::from(Arc::new(config)), resolver))
            }
            (None, true) => None,
            (None, false) => return Err(ServerError::NoTls),
        };
        let listener = TcpListener::bind(addr)
            .await
            .map_err(|source| ServerError::Bind { addr, source })?;
        let local_addr = listener
            .local_addr()
            .map_err(|source| ServerError::Bind { addr, source })?;
        Ok(WebhookServer {
            listener,
            local_addr,
            tls,
            state: Arc::new(State {
                webhooks: self.webhooks,
                metrics,
                max_body_bytes: self.max_body_bytes,
                request_timeout: self.request_timeout,
            }),
            handshake_timeout: self.handshake_timeout,
            cert_reload_interval: self.cert_reload_interval,
            max_connections: self.max_connections,
            shutdown_grace: self.shutdown_grace,
        })
    }
}

/// What every request handler shares.
struct State {
    webhooks: Webhooks,
    metrics: Arc<ServerMetrics>,
    max_body_bytes: usize,
    request_timeout: Duration,
}

/// A bound webhook server; [`WebhookServer::serve`] runs it.
///
/// ```no_run
/// # async fn run() -> Result<(), kinform_webhook::ServerError> {
/// use kinform_webhook::{WebhookServer, Webhooks};
/// let server = WebhookServer::builder(Webhooks::new())
///     .tls_files("/tmp/k8s-webhook-server/serving-certs/tls.crt", "/tmp/k8s-webhook-server/serving-certs/tls.key")
///     .bind(([0, 0, 0, 0], 9443).into())
///     .await?;
/// server.serve(std::future::pending()).await;
/// # Ok(()) }
/// ```
pub struct WebhookServer {
    listener: TcpListener,
    local_addr: SocketAddr,
    tls: Option<(tokio_rustls::TlsAcceptor, Arc<ReloadingCert>)>,
    state: Arc<State>,
    handshake_timeout: Duration,
    cert_reload_interval: Duration,
    max_connections: usize,
    shutdown_grace: Duration,
}

impl std::fmt::Debug for WebhookServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebhookServer")
            .field("local_addr", &self.local_addr)
            .field("tls", &self.tls.is_some())
            .field("webhooks", &self.state.webhooks)
            .finish()
    }
}

impl WebhookServer {
    /// A builder serving `webhooks`, with the defaults its methods name.
    pub fn builder(webhooks: Webhooks) -> ServerBuilder {
        ServerBuilder {
            webhooks,
            tls: None,
            plain_http: false,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            request_timeout: Duration::from_secs(30),
            handshake_timeout: Duration::from_secs(10),
            cert_reload_interval: Duration::from_secs(10),
            max_connections: 1024,
            shutdown_grace: Duration::from_secs(10),
        }
    }

    /// The address bound (with the port picked for port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The server's counters.
    pub fn metrics(&self) -> Arc<ServerMetrics> {
        self.state.metrics.clone()
    }

    /// Serves until `token` is cancelled, then shuts down gracefully.
    pub async fn serve_until(self, token: CancellationToken) {
        self.serve(token.cancelled_owned()).await;
    }

    /// Serves until `shutdown` completes, then shuts down gracefully (see the module doc).
    pub async fn serve(self, shutdown: impl Future<Output = ()> + Send) {
        let stop = CancellationToken::new();
        let _stop_on_return = stop.clone().drop_guard();
        if let Some((_, cert)) = &self.tls {
            tokio::spawn(
                cert.clone()
                    .watch(self.cert_reload_interval, stop.child_token()),
            );
        }
        let graceful = hyper_util::server::graceful::GracefulShutdown::new();
        let slots = Arc::new(Semaphore::new(self.max_connections));
        let acceptor = self.tls.as_ref().map(|(a, _)| a.clone());
        tokio::pin!(shutdown);
        loop {
            let permit = tokio::select! {
                permit = slots.clone().acquire_owned() => permit,
                () = &mut shutdown => break,
            };
            let Ok(permit) = permit else { break };
            let accepted = tokio::select! {
                accepted = self.listener.accept() => accepted,
                () = &mut shutdown => break,
            };
            let stream = match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    // Out of file descriptors and the like: wait a moment rather than spin.
                    tracing::warn!("webhook server: accepting a connection: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            };
            let _ = stream.set_nodelay(true);
            let state = self.state.clone();
            let acceptor = acceptor.clone();
            let watcher = graceful.watcher();
            let stop = stop.child_token();
            let handshake_timeout = self.handshake_timeout;
            tokio::spawn(async move {
                let _permit = permit;
                match acceptor {
                    None => serve_connection(stream, state, watcher, stop).await,
                    Some(acceptor) => {
                        let handshake =
                            tokio::time::timeout(handshake_timeout, acceptor.accept(stream));
                        let tls = tokio::select! {
                            tls = handshake => tls,
                            () = stop.cancelled() => return,
                        };
                        match tls {
                            Ok(Ok(tls)) => serve_connection(tls, state, watcher, stop).await,
                            // A client that does not trust the certificate, or no TLS at all.
                            Ok(Err(e)) => {
                                state.metrics.count_tls_handshake_failure();
                                tracing::debug!("webhook server: TLS handshake failed: {e}");
                            }
                            Err(_) => state.metrics.count_tls_handshake_failure(),
                        }
                    }
                }
            });
        }
        drop(self.listener);
        if tokio::time::timeout(self.shutdown_grace, graceful.shutdown())
            .await
            .is_err()
        {
            tracing::warn!(
                "webhook server: connections still open after the shutdown grace of {:?}, dropped",
                self.shutdown_grace
            );
        }
    }
}

/// Serves HTTP/1.1 or HTTP/2 (by ALPN, or the preface on plain HTTP) on one connection.
async fn serve_connection<S>(
    stream: S,
    state: Arc<State>,
    watcher: hyper_util::server::graceful::Watcher,
    stop: CancellationToken,
) where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let request_timeout = state.request_timeout;
    let service = hyper::service::service_fn(move |req| handle(state.clone(), req));
    let mut builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(request_timeout);
    builder.http2().timer(TokioTimer::new());
    let conn = builder.serve_connection(TokioIo::new(stream), service);
    tokio::select! {
        _ = watcher.watch(conn) => {}
        () = stop.cancelled() => {}
    }
}

/// Aborts a task when dropped (a request past its deadline).
struct AbortOnDrop<T>(tokio::task::JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

async fn handle(
    state: Arc<State>,
    request: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    state.metrics.count_request();
    let reply = match tokio::time::timeout(state.request_timeout, route(&state, request)).await {
        Ok(reply) => reply,
        Err(_) => {
            state.metrics.count_timeout();
            tracing::warn!(
                "webhook server: a request was not answered within {:?}",
                state.request_timeout
            );
            Reply::text(
                StatusCode::GATEWAY_TIMEOUT,
                format!(
                    "the webhook did not answer within {:?}",
                    state.request_timeout
                ),
            )
        }
    };
    let content_type = if reply.json {
        "application/json"
    } else {
        "text/plain; charset=utf-8"
    };
    let mut response = Response::new(Full::new(reply.body));
    *response.status_mut() = reply.status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static(content_type),
    );
    Ok(response)
}

async fn route(state: &Arc<State>, request: Request<Incoming>) -> Reply {
    let path = request.uri().path().to_owned();
    let method = request.method().clone();
    if matches!(path.as_str(), "/healthz" | "/readyz") {
        return if method == Method::GET || method == Method::HEAD {
            Reply::text(StatusCode::OK, "ok")
        } else {
            state.metrics.count_bad_request();
            Reply::text(StatusCode::METHOD_NOT_ALLOWED, "GET only")
        };
    }
    if !state.webhooks.serves(&path) {
        state.metrics.count_bad_request();
        return Reply::text(StatusCode::NOT_FOUND, format!("no webhook at {path}"));
    }
    if method != Method::POST {
        state.metrics.count_bad_request();
        return Reply::text(StatusCode::METHOD_NOT_ALLOWED, "a webhook takes POST only");
    }
    if let Some(content_type) = request.headers().get(header::CONTENT_TYPE) {
        let json = content_type
            .to_str()
            .ok()
            .and_then(|t| t.split(';').next())
            .is_some_and(|t| t.trim().eq_ignore_ascii_case("application/json"));
        if !json {
            state.metrics.count_bad_request();
            return Reply::text(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                format!("the body must be application/json, not {content_type:?}"),
            );
        }
    }
    let too_large = || {
        state.metrics.count_too_large();
        Reply::text(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!(
                "the request body is larger than {} bytes",
                state.max_body_bytes
            ),
        )
    };
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > state.max_body_bytes as u64) {
        return too_large();
    }
    let body = match Limited::new(request.into_body(), state.max_body_bytes)
        .collect()
        .await
    {
        Ok(collected) => collected.to_bytes(),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => return too_large(),
        Err(e) => {
            state.metrics.count_bad_request();
            return Reply::text(StatusCode::BAD_REQUEST, format!("reading the body: {e}"));
        }
    };
    let task_state = state.clone();
    let mut task = AbortOnDrop(tokio::spawn(async move {
        task_state.webhooks.respond(&path, &body).await
    }));
    match (&mut task.0).await {
        Ok(reply) => {
            if reply.status != StatusCode::OK {
                state.metrics.count_bad_request();
            }
            reply
        }
        Err(e) => {
            state.metrics.count_handler_panic();
            tracing::warn!("webhook server: a webhook handler failed: {e}");
            Reply::text(
                StatusCode::INTERNAL_SERVER_ERROR,
                "the webhook handler panicked",
            )
        }
    }
}
