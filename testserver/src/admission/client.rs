//! The HTTPS call of a webhook: where it goes (`url`, or a `service` reference resolved to a
//! registered loopback address), the `caBundle` its certificate is verified against, and the
//! timeout, as client-go's REST client behind `webhookutil.ClientManager` makes it.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper_util::rt::TokioIo;
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, ServerName};

use super::Services;
use super::config::ServiceRef;

/// The largest answer read from a webhook (kube-apiserver reads what it is sent; a bound
/// keeps a broken webhook from exhausting the test's memory).
const MAX_ANSWER: usize = 16 * 1024 * 1024;

/// Where a webhook is called.
#[derive(Clone, Debug)]
pub(super) struct Endpoint {
    /// The URL as errors print it (`https://svc.ns.svc:443/path?timeout=10s`).
    pub url: String,
    /// The host name the certificate must be valid for.
    pub server_name: String,
    /// `path?query` of the request.
    pub path_and_query: String,
    /// Where to connect: a registered address, or the URL's host and port.
    pub connect: Connect,
    /// The PEM bundle to verify the certificate with.
    pub ca_bundle: Option<Vec<u8>>,
}

/// Where the TCP connection goes.
#[derive(Clone, Debug)]
pub(super) enum Connect {
    /// A resolved address.
    Addr(SocketAddr),
    /// A host and port to resolve.
    Host(String, u16),
    /// A Service no test registered an address for.
    Unresolved(String),
}

/// A failed call: the text after `failed to call webhook: ` in upstream's error.
#[derive(Debug)]
pub(super) struct CallError(pub String);

/// The endpoint of a `url` or `service` client config; `timeout` is sent as client-go sends
/// it (`?timeout=10s`).
pub(super) fn endpoint(
    services: &Services,
    url: Option<&str>,
    service: Option<&ServiceRef>,
    ca_bundle: Option<&[u8]>,
    timeout: Option<Duration>,
) -> Result<Endpoint, CallError> {
    let timeout_query = |path: &str| match timeout {
        Some(t) => {
            let sep = if path.contains('?') { '&' } else { '?' };
            format!("{path}{sep}timeout={}s", t.as_secs().max(1))
        }
        None => path.to_owned(),
    };
    if let Some(s) = service {
        let host = format!("{}.{}.svc", s.name, s.namespace);
        let path = if s.path.is_empty() { "/" } else { &s.path };
        let path_and_query = timeout_query(path);
        let connect = match services.resolve(&s.namespace, &s.name, s.port) {
            Some(addr) => Connect::Addr(addr),
            None => Connect::Unresolved(format!(
                "service \"{}/{}:{}\" has no address registered with TestApiServer::register_service_port",
                s.namespace, s.name, s.port
            )),
        };
        return Ok(Endpoint {
            url: format!("https://{host}:{}{path_and_query}", s.port),
            server_name: host,
            path_and_query,
            connect,
            ca_bundle: ca_bundle.map(<[u8]>::to_vec),
        });
    }
    let url = url.ok_or_else(|| CallError("neither url nor service is set".into()))?;
    let uri: http::Uri = url
        .parse()
        .map_err(|e| CallError(format!("parse {url:?}: {e}")))?;
    if uri.scheme_str() != Some("https") {
        return Err(CallError(format!(
            "unsupported protocol scheme {:?}",
            uri.scheme_str().unwrap_or_default()
        )));
    }
    let host = uri
        .host()
        .ok_or_else(|| CallError(format!("no host in {url:?}")))?
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_owned();
    let port = uri.port_u16().unwrap_or(443);
    let path = uri.path_and_query().map_or("/", |p| p.as_str());
    let path_and_query = timeout_query(path);
    let authority = uri.authority().map_or(host.clone(), |a| a.to_string());
    Ok(Endpoint {
        url: format!("https://{authority}{path_and_query}"),
        connect: match host.parse::<std::net::IpAddr>() {
            Ok(ip) => Connect::Addr(SocketAddr::new(ip, port)),
            Err(_) => Connect::Host(host.clone(), port),
        },
        server_name: host,
        path_and_query,
        ca_bundle: ca_bundle.map(<[u8]>::to_vec),
    })
}

fn tls_config(ca_bundle: Option<&[u8]>) -> Result<rustls::ClientConfig, CallError> {
    let Some(pem) = ca_bundle else {
        return Err(CallError(
            "tls: failed to verify certificate: x509: certificate signed by unknown authority (no caBundle: TestApiServer does not use the system trust store)".into(),
        ));
    };
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(pem) {
        let cert = cert.map_err(|e| CallError(format!("caBundle: {e}")))?;
        roots
            .add(cert)
            .map_err(|e| CallError(format!("caBundle: {e}")))?;
    }
    if roots.is_empty() {
        return Err(CallError(
            "caBundle holds no PEM certificate: x509: certificate signed by unknown authority"
                .into(),
        ));
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| CallError(format!("tls: {e}")))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}

/// Go's words for the common connection failures (`dial tcp 127.0.0.1:1: connect:
/// connection refused`).
fn dial_error(addr: &str, e: &std::io::Error) -> String {
    let why = match e.kind() {
        std::io::ErrorKind::ConnectionRefused => "connect: connection refused".to_owned(),
        std::io::ErrorKind::ConnectionReset => "read: connection reset by peer".to_owned(),
        _ => e.to_string(),
    };
    format!("dial tcp {addr}: {why}")
}

/// POSTs `body` (JSON) to `endpoint` and returns the answer's body; everything, the
/// connection included, within `timeout`.
pub(super) async fn post(
    endpoint: &Endpoint,
    body: Vec<u8>,
    timeout: Duration,
) -> Result<Bytes, CallError> {
    let prefix = |e: String| CallError(format!("Post {:?}: {e}", endpoint.url));
    match tokio::time::timeout(timeout, post_now(endpoint, body)).await {
        Ok(r) => r.map_err(prefix),
        Err(_) => Err(prefix("context deadline exceeded".into())),
    }
}

async fn post_now(endpoint: &Endpoint, body: Vec<u8>) -> Result<Bytes, String> {
    let config = tls_config(endpoint.ca_bundle.as_deref()).map_err(|e| e.0)?;
    let (tcp, shown) = match &endpoint.connect {
        Connect::Addr(addr) => (tokio::net::TcpStream::connect(addr).await, addr.to_string()),
        Connect::Host(host, port) => (
            tokio::net::TcpStream::connect((host.as_str(), *port)).await,
            format!("{host}:{port}"),
        ),
        Connect::Unresolved(why) => return Err(why.clone()),
    };
    let tcp = tcp.map_err(|e| dial_error(&shown, &e))?;
    let _ = tcp.set_nodelay(true);
    let name = ServerName::try_from(endpoint.server_name.clone())
        .map_err(|e| format!("invalid server name {:?}: {e}", endpoint.server_name))?;
    let tls = tokio_rustls::TlsConnector::from(Arc::new(config))
        .connect(name, tcp)
        .await
        .map_err(|e| format!("tls: failed to verify certificate: {e}"))?;
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tls))
        .await
        .map_err(|e| e.to_string())?;
    let driver = tokio::spawn(async move {
        let _ = conn.await;
    });
    let request = http::Request::post(endpoint.path_and_query.as_str())
        .header(http::header::HOST, endpoint.server_name.as_str())
        .header(http::header::CONTENT_TYPE, "application/json")
        .header(http::header::ACCEPT, "application/json, */*")
        .header(http::header::USER_AGENT, "kube-apiserver-admission")
        .body(Full::new(Bytes::from(body)))
        .map_err(|e| e.to_string())?;
    let answer = sender.send_request(request).await;
    let result = async {
        let answer = answer.map_err(|e| e.to_string())?;
        let status = answer.status();
        let bytes = Limited::new(answer.into_body(), MAX_ANSWER)
            .collect()
            .await
            .map_err(|e| format!("reading the answer: {e}"))?
            .to_bytes();
        if !status.is_success() {
            let text = String::from_utf8_lossy(&bytes[..bytes.len().min(1024)]).into_owned();
            return Err(format!(
                "an error on the server ({:?}) has prevented the request from succeeding (status {})",
                text.trim(),
                status.as_u16()
            ));
        }
        Ok(bytes)
    }
    .await;
    driver.abort();
    result
}
