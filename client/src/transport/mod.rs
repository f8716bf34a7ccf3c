//! The HTTP transport: [`Client`], a pooled hyper 1 client over rustls.
//!
//! What it reproduces from client-go's `rest.RESTClient` + `transport` packages:
//! - TLS per the kubeconfig (see `tls`), HTTP/2 when the server picks it through ALPN,
//!   `Accept-Encoding: gzip` unless `disable-compression`, connection pooling;
//! - credentials per request (see `auth`), impersonation headers;
//! - an optional client-side QPS/burst token bucket (`rest.Config.QPS`/`Burst`);
//! - retries (client-go's `request.retry`): a 429 is retried for any verb (the server did not
//!   run it), 503 and connection failures only for idempotent verbs (GET, HEAD, PUT,
//!   DELETE, OPTIONS); a 504 only for idempotent verbs and, as client-go's `checkWait`, only
//!   when it carries `Retry-After`, and never when its Status is the cacher's "too large
//!   resource version" (the server lost the history asked for, e.g. it restarted: the
//!   same request cannot succeed soon, and a reflector recovers by relisting, see
//!   [`Error::is_too_large_resource_version`]); the wait is the `Retry-After` header when
//!   given, else exponential backoff with jitter; a 401 with a refreshable credential is
//!   retried once after refreshing it;
//! - errors keep the server's `Status`; a non-Status error body becomes a Status with the
//!   HTTP code and the matching reason, as `errors.NewGenericServerResponse` does.
//!
//! The read timeout bounds the wait for response headers and the silence between body chunks
//! of ordinary requests; streaming bodies (watches, logs) are exempt.

mod auth;
mod body;
pub(crate) use body::Pause;
mod connector;
mod ratelimit;
mod retry;
pub(crate) mod tls;
mod upgrade;

pub(crate) use upgrade::{UpgradedIo, api_error, stream_body};

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_util::stream::BoxStream;
use http::header::{ACCEPT, ACCEPT_ENCODING, AUTHORIZATION, CONTENT_LENGTH, USER_AGENT};
use http::{HeaderValue, Method, StatusCode};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper_util::client::legacy::Client as HyperClient;
use hyper_util::rt::{TokioExecutor, TokioTimer};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Status;
use serde::de::DeserializeOwned;

use self::auth::Authenticator;
use self::connector::{Connector, Proxy};
use self::ratelimit::TokenBucket;
use crate::config::{Config, ConfigError};
use crate::{Error, Result};

/// A handle on one API server: cheap to clone, shares its connection pool.
///
/// In a program, [`Client::try_default`] loads the kubeconfig with kubectl's rules
/// (`KUBECONFIG`, `~/.kube/config`), then the in-cluster service account; [`Client::new`]
/// takes a [`Config`] built by hand. Requests go through typed [`Api`](crate::Api)s:
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use k8s_openapi::api::core::v1::Namespace;
/// use kinform_client::{Api, Client, Config};
///
/// // Here an in-process TestApiServer; with a cluster: Client::try_default().await?
/// let server = kinform_testserver::TestApiServer::start().await?;
/// let mut config = Config::new(server.url().parse()?); // plain http on loopback
/// config.qps = Some(50.0); // client-go's QPS/burst limiting, off by default
/// config.burst = 100;
/// let client = Client::new(config)?;
///
/// let namespaces: Api<Namespace> = Api::all(client.clone()); // clones share the pool
/// let names: Vec<_> = namespaces.list(&Default::default()).await?.items.into_iter()
///     .filter_map(|ns| ns.metadata.name)
///     .collect();
/// assert!(names.iter().any(|n| n == "kube-system"));
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

struct Inner {
    http: HyperClient<Connector, Full<Bytes>>,
    /// Dials HTTP/1.1-only connections for WebSocket upgrades (see `upgrade`).
    upgrade_connector: Connector,
    scheme: http::uri::Scheme,
    authority: http::uri::Authority,
    base_path: String,
    default_namespace: String,
    auth: Authenticator,
    limiter: Option<TokenBucket>,
    read_timeout: Option<Duration>,
    max_retries: u32,
    gzip: bool,
    max_body_bytes: usize,
    max_watch_event_bytes: usize,
    read_ahead_bytes: usize,
    user_agent: HeaderValue,
    impersonate: Vec<(http::HeaderName, HeaderValue)>,
    /// What the server did with the managedFields opt-out (`managed_fields`).
    opt_out: crate::managed_fields::OptOutRecord,
    /// Response body bytes received (`Client::received_body_bytes`).
    received: Arc<std::sync::atomic::AtomicU64>,
}

impl Inner {
    /// Who is asking: the user agent, impersonation headers and, unless the request
    /// carries its own, the credential's `Authorization` (every request and upgrade sends
    /// these).
    async fn identify(&self, headers: &mut http::HeaderMap) -> Result<()> {
        headers.insert(USER_AGENT, self.user_agent.clone());
        for (k, v) in &self.impersonate {
            headers.append(k.clone(), v.clone());
        }
        if !headers.contains_key(AUTHORIZATION)
            && let Some(auth) = self.auth.header().await?
        {
            headers.insert(AUTHORIZATION, auth);
        }
        Ok(())
    }
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let server = format!(
            "{}://{}{}",
            self.inner.scheme, self.inner.authority, self.inner.base_path
        );
        f.debug_struct("Client")
            .field(
                "server",
                &format_args!("{}", crate::secret::redact_userinfo(&server)),
            )
            .field("default_namespace", &self.inner.default_namespace)
            .finish_non_exhaustive()
    }
}

fn invalid(field: &str, message: impl Into<String>) -> Error {
    Error::Config(ConfigError::InvalidField {
        field: field.to_owned(),
        message: message.into(),
    })
}

impl Client {
    /// Builds a client (and its TLS setup) from a config.
    pub fn new(config: Config) -> Result<Self> {
        let uri = &config.cluster_url;
        let scheme = uri
            .scheme()
            .cloned()
            .ok_or_else(|| invalid("server", "URL has no scheme"))?;
        let authority = uri
            .authority()
            .cloned()
            .ok_or_else(|| invalid("server", "URL has no host"))?;
        let base_path = uri.path().trim_end_matches('/').to_owned();
        let (tls, slot) = tls::client_config(&config)?;
        let server_name = match (&config.tls_server_name, scheme.as_str()) {
            (Some(_), "https") => Some(tls::server_name(&config, authority.host())?),
            _ => None,
        };
        let proxy = match &config.proxy_url {
            Some(p) => Some(Arc::new(
                Proxy::from_uri(p).map_err(|e| invalid("proxy-url", e.to_string()))?,
            )),
            None => None,
        };
        let mut http1_tls = (*tls).clone();
        http1_tls.alpn_protocols = vec![b"http/1.1".to_vec()];
        let connector = Connector {
            tls: Some(tokio_rustls::TlsConnector::from(tls)),
            server_name,
            proxy,
            connect_timeout: config.connect_timeout,
        };
        let upgrade_connector = Connector {
            tls: Some(tokio_rustls::TlsConnector::from(Arc::new(http1_tls))),
            ..connector.clone()
        };
        let http = HyperClient::builder(TokioExecutor::new())
            .timer(TokioTimer::new())
            .pool_timer(TokioTimer::new())
            .pool_idle_timeout(Duration::from_secs(90))
            .build(connector);
        let mut impersonate = Vec::new();
        if let Some(user) = &config.impersonate {
            impersonate.push((
                http::HeaderName::from_static("impersonate-user"),
                HeaderValue::try_from(user.as_str())
                    .map_err(|_| invalid("as", "not a header value"))?,
            ));
        }
        for g in &config.impersonate_groups {
            impersonate.push((
                http::HeaderName::from_static("impersonate-group"),
                HeaderValue::try_from(g.as_str())
                    .map_err(|_| invalid("as-groups", "not a header value"))?,
            ));
        }
        Ok(Self {
            inner: Arc::new(Inner {
                http,
                upgrade_connector,
                scheme,
                authority,
                base_path,
                default_namespace: config.default_namespace.clone(),
                auth: Authenticator::new(config.auth.clone(), slot),
                limiter: config.qps.map(|q| TokenBucket::new(q, config.burst)),
                read_timeout: config.read_timeout,
                max_retries: config.max_retries,
                gzip: !config.disable_compression,
                max_body_bytes: config.max_body_bytes,
                max_watch_event_bytes: config.max_watch_event_bytes,
                read_ahead_bytes: config.read_ahead_bytes,
                user_agent: HeaderValue::try_from(config.user_agent.as_str())
                    .map_err(|_| invalid("user_agent", "not a header value"))?,
                impersonate,
                opt_out: Default::default(),
                received: Default::default(),
            }),
        })
    }

    /// A client for [`Config::infer`].
    pub async fn try_default() -> Result<Self> {
        Self::new(Config::infer().await?)
    }

    /// The namespace of the config's context.
    pub fn default_namespace(&self) -> &str {
        &self.inner.default_namespace
    }

    /// Sends a request and decodes its JSON answer; a non-2xx answer is an [`Error::Api`].
    ///
    /// The request's URI is a path (and query) on the server, e.g. `/api/v1/pods`.
    pub async fn request<T: DeserializeOwned>(&self, req: http::Request<Vec<u8>>) -> Result<T> {
        let (request, bytes) = self.request_bytes(req).await?;
        serde_json::from_slice(&bytes).map_err(|source| Error::Decode {
            request,
            what: std::any::type_name::<T>()
                .rsplit("::")
                .next()
                .unwrap_or("response")
                .to_owned(),
            source,
        })
    }

    /// Sends a request and returns its body as text.
    pub async fn request_text(&self, req: http::Request<Vec<u8>>) -> Result<String> {
        let (request, bytes) = self.request_bytes(req).await?;
        String::from_utf8(bytes).map_err(|e| Error::Transport {
            request,
            message: "response body is not UTF-8".into(),
            source: Some(Box::new(e)),
        })
    }

    /// Sends a request and returns `(request description, whole body)` of a 2xx answer.
    pub(crate) async fn request_bytes(
        &self,
        req: http::Request<Vec<u8>>,
    ) -> Result<(String, Vec<u8>)> {
        self.request_bytes_paused(req, None).await
    }

    /// [`request_bytes`](Self::request_bytes) for a body read ahead of its use: reading
    /// stops at `pause` (see [`Pause`]).
    pub(crate) async fn request_bytes_paused(
        &self,
        req: http::Request<Vec<u8>>,
        pause: Option<Pause>,
    ) -> Result<(String, Vec<u8>)> {
        let (parts, body) = req.into_parts();
        let desc = describe(&parts.method, &parts.uri);
        let resp = self.send(parts, Bytes::from(body), &desc).await?;
        let resp = self.check(resp, &desc).await?;
        let gzip = body::is_gzip(resp.headers());
        let hint = content_length(resp.headers());
        let bytes = body::collect_paused(
            self.counted(resp),
            gzip,
            hint,
            self.inner.read_timeout,
            &desc,
            self.inner.max_body_bytes,
            pause,
        )
        .await?;
        Ok((desc, bytes))
    }

    /// Sends a request and streams its 2xx body chunk by chunk as it arrives (watches, logs).
    pub async fn request_stream(
        &self,
        req: http::Request<Vec<u8>>,
    ) -> Result<BoxStream<'static, Result<Bytes>>> {
        let (parts, body) = req.into_parts();
        let desc = describe(&parts.method, &parts.uri);
        let resp = self.send(parts, Bytes::from(body), &desc).await?;
        let resp = self.check(resp, &desc).await?;
        let gzip = body::is_gzip(resp.headers());
        Ok(body::stream(self.counted(resp), gzip, Arc::from(desc)))
    }

    /// What this client's server did with the managedFields opt-out its reflectors ask
    /// for (KEP-5958), as the LIST pages they received show; see [`ManagedFieldsOptOut`].
    ///
    /// [`ManagedFieldsOptOut`]: crate::ManagedFieldsOptOut
    pub fn managed_fields_opt_out(&self) -> crate::ManagedFieldsOptOut {
        self.inner.opt_out.get()
    }

    /// Response body bytes this client and its clones have received, as they came over the
    /// connections: gzip-compressed where the server compressed them (`Config::gzip`), and
    /// counting every request's body (lists, watches, errors, proxied answers). What the
    /// network costs a controller, e.g. to compare the watch traffic of sharded replicas.
    pub fn received_body_bytes(&self) -> u64 {
        self.inner
            .received
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// A response's body, counted into [`received_body_bytes`](Self::received_body_bytes).
    pub(crate) fn counted(&self, resp: http::Response<Incoming>) -> body::Counted {
        body::Counted::new(resp.into_body(), &self.inner.received)
    }

    /// The record behind [`Client::managed_fields_opt_out`].
    pub(crate) fn opt_out_record(&self) -> &crate::managed_fields::OptOutRecord {
        &self.inner.opt_out
    }

    /// How far a reflector's decoding reads ahead ([`Config::read_ahead_bytes`]).
    pub(crate) fn read_ahead_bytes(&self) -> usize {
        self.inner.read_ahead_bytes
    }

    /// The longest watch event this client reads ([`Config::max_watch_event_bytes`]).
    pub(crate) fn max_watch_event_bytes(&self) -> usize {
        self.inner.max_watch_event_bytes
    }

    /// The server's version (`GET /version`).
    pub async fn apiserver_version(&self) -> Result<k8s_openapi::apimachinery::pkg::version::Info> {
        let req = http::Request::get("/version")
            .body(Vec::new())
            .map_err(|e| invalid("request", e.to_string()))?;
        self.request(req).await
    }

    /// Turns a non-2xx answer into an [`Error::Api`] with the server's Status.
    async fn check(
        &self,
        resp: http::Response<Incoming>,
        desc: &str,
    ) -> Result<http::Response<Incoming>> {
        let code = resp.status();
        if code.is_success() {
            return Ok(resp);
        }
        let retry_after = retry::retry_after(resp.headers());
        let gzip = body::is_gzip(resp.headers());
        let bytes = body::collect(
            self.counted(resp),
            gzip,
            0,
            self.inner.read_timeout,
            desc,
            self.inner.max_body_bytes,
        )
        .await
        .unwrap_or_default();
        Err(Error::Api {
            request: desc.to_owned(),
            status: Box::new(status_from_body(code, &bytes)),
            retry_after,
        })
    }

    fn uri_for(&self, uri: &http::Uri) -> Result<http::Uri> {
        if uri.scheme().is_some() {
            return Ok(uri.clone());
        }
        let pq = uri.path_and_query().map_or("/", |p| p.as_str());
        let full = format!("{}{}", self.inner.base_path, pq);
        http::Uri::builder()
            .scheme(self.inner.scheme.clone())
            .authority(self.inner.authority.clone())
            .path_and_query(full)
            .build()
            .map_err(|e| invalid("request URI", e.to_string()))
    }

    /// Sends with rate limiting, credentials and retries; returns the last answer.
    async fn send(
        &self,
        parts: http::request::Parts,
        body: Bytes,
        desc: &str,
    ) -> Result<http::Response<Incoming>> {
        let inner = &*self.inner;
        let uri = self.uri_for(&parts.uri)?;
        let idempotent = matches!(
            parts.method,
            Method::GET | Method::HEAD | Method::PUT | Method::DELETE | Method::OPTIONS
        );
        let mut attempt = 0u32;
        let mut refreshed_auth = false;
        loop {
            if let Some(limiter) = &inner.limiter {
                limiter.acquire().await;
            }
            let mut req = http::Request::new(Full::new(body.clone()));
            *req.method_mut() = parts.method.clone();
            *req.uri_mut() = uri.clone();
            *req.headers_mut() = parts.headers.clone();
            let headers = req.headers_mut();
            if !headers.contains_key(ACCEPT) {
                headers.insert(ACCEPT, HeaderValue::from_static("application/json"));
            }
            if inner.gzip && !headers.contains_key(ACCEPT_ENCODING) {
                headers.insert(ACCEPT_ENCODING, HeaderValue::from_static("gzip"));
            }
            headers.insert(CONTENT_LENGTH, HeaderValue::from(body.len()));
            inner.identify(headers).await?;
            let sent = inner.http.request(req);
            let result = match inner.read_timeout {
                Some(limit) => match tokio::time::timeout(limit, sent).await {
                    Ok(r) => r,
                    Err(_) => {
                        return Err(Error::Transport {
                            request: desc.to_owned(),
                            message: format!("no response within {limit:?}"),
                            source: None,
                        });
                    }
                },
                None => sent.await,
            };
            let resp = match result {
                Ok(resp) => resp,
                Err(e) => {
                    if idempotent && e.is_connect() && attempt < inner.max_retries {
                        tracing::debug!(request = desc, attempt, error = %e, "retrying after connection error");
                        tokio::time::sleep(retry::backoff(attempt)).await;
                        attempt += 1;
                        continue;
                    }
                    return Err(Error::Transport {
                        request: desc.to_owned(),
                        message: transport_message(&e),
                        source: Some(Box::new(e)),
                    });
                }
            };
            let code = resp.status();
            if code == StatusCode::UNAUTHORIZED && inner.auth.refreshable() && !refreshed_auth {
                refreshed_auth = true;
                inner.auth.invalidate().await;
                continue;
            }
            let retry_after = retry::retry_after(resp.headers());
            let retryable = match code {
                StatusCode::TOO_MANY_REQUESTS => true,
                StatusCode::SERVICE_UNAVAILABLE => idempotent,
                // A 504 is retried only when the server asks for it, as client-go does.
                StatusCode::GATEWAY_TIMEOUT => idempotent && retry_after.is_some(),
                _ => false,
            };
            if retryable && attempt < inner.max_retries {
                if code == StatusCode::GATEWAY_TIMEOUT {
                    // kube-apiserver's cacher asks for a retry after 1 s even when the
                    // resourceVersion is newer than all it has; only its Status says so.
                    match self.check(resp, desc).await {
                        Err(e) if e.is_too_large_resource_version() => return Err(e),
                        _ => {}
                    }
                } else {
                    drop(resp);
                }
                let wait = retry_after.unwrap_or_else(|| retry::backoff(attempt));
                tracing::debug!(
                    request = desc,
                    attempt,
                    status = code.as_u16(),
                    ?wait,
                    "retrying"
                );
                tokio::time::sleep(wait).await;
                attempt += 1;
                continue;
            }
            return Ok(resp);
        }
    }
}

fn transport_message(e: &hyper_util::client::legacy::Error) -> String {
    use std::error::Error as _;
    let mut msg = if e.is_connect() {
        "cannot connect".to_owned()
    } else {
        "request failed".to_owned()
    };
    let mut src = e.source();
    while let Some(s) = src {
        msg.push_str(": ");
        msg.push_str(&s.to_string());
        src = s.source();
    }
    msg
}

fn describe(method: &Method, uri: &http::Uri) -> String {
    format!(
        "{method} {}",
        uri.path_and_query().map_or("/", |p| p.as_str())
    )
}

fn content_length(headers: &http::HeaderMap) -> usize {
    headers
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// The Status of an error answer: the body when it is one, else one made from the HTTP code.
pub(crate) fn status_from_body(code: StatusCode, body: &[u8]) -> Status {
    #[derive(serde::Deserialize)]
    struct Probe {
        kind: Option<String>,
    }
    if serde_json::from_slice::<Probe>(body).is_ok_and(|p| p.kind.as_deref() == Some("Status"))
        && let Ok(mut status) = serde_json::from_slice::<Status>(body)
    {
        if status.code.is_none() {
            status.code = Some(i32::from(code.as_u16()));
        }
        return status;
    }
    let text = String::from_utf8_lossy(&body[..body.len().min(1024)])
        .trim()
        .to_owned();
    let reason = match code.as_u16() {
        400 => "BadRequest",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "NotFound",
        405 => "MethodNotAllowed",
        406 => "NotAcceptable",
        409 => "Conflict",
        410 => "Gone",
        415 => "UnsupportedMediaType",
        422 => "Invalid",
        429 => "TooManyRequests",
        500 => "InternalError",
        503 => "ServiceUnavailable",
        504 => "Timeout",
        _ => "Unknown",
    };
    Status {
        code: Some(i32::from(code.as_u16())),
        message: Some(if text.is_empty() {
            code.canonical_reason().unwrap_or("error").to_owned()
        } else {
            text
        }),
        reason: Some(reason.to_owned()),
        status: Some("Failure".to_owned()),
        ..Status::default()
    }
}
