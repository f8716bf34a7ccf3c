//! A small real HTTP(S) server for client tests: canned Kubernetes-shaped answers over
//! loopback, optional TLS from an rcgen CA with client certificate verification, and
//! streaming bodies fed by the test through a channel.

use std::convert::Infallible;
use std::io::Write as _;
use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use futures_util::StreamExt as _;
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper_util::rt::{TokioExecutor, TokioIo};
use parking_lot::Mutex;
use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair};
use rustls_pki_types::pem::PemObject as _;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use tokio::net::TcpListener;
use tokio::sync::mpsc;

/// One request the server saw.
#[derive(Clone, Debug)]
pub struct Seen {
    /// The request method.
    pub method: http::Method,
    /// The request URI (path and query).
    pub uri: http::Uri,
    /// The request headers.
    pub headers: http::HeaderMap,
    /// The request body.
    pub body: Vec<u8>,
    /// The HTTP version the connection negotiated.
    pub version: http::Version,
    /// Whether the client presented a certificate (TLS only).
    pub client_cert: bool,
}

/// What the handler answers.
pub enum Reply {
    /// A whole answer.
    Full {
        /// The status code.
        status: u16,
        /// Extra headers.
        headers: Vec<(&'static str, String)>,
        /// The body.
        body: Vec<u8>,
    },
    /// A chunked body; each message of the channel is written as it comes.
    Stream(mpsc::UnboundedReceiver<Bytes>),
}

impl Reply {
    /// A JSON answer with `status`.
    pub fn json(status: u16, body: serde_json::Value) -> Self {
        Reply::Full {
            status,
            headers: vec![("content-type", "application/json".into())],
            body: body.to_string().into_bytes(),
        }
    }
    /// A plain-text answer with `status`.
    pub fn raw(status: u16, body: &str) -> Self {
        Reply::Full {
            status,
            headers: vec![("content-type", "text/plain".into())],
            body: body.as_bytes().to_vec(),
        }
    }
    /// The same answer with one more header.
    pub fn with_header(mut self, k: &'static str, v: &str) -> Self {
        if let Reply::Full { headers, .. } = &mut self {
            headers.push((k, v.to_owned()));
        }
        self
    }
}

/// Answers each request the server sees.
pub type Handler = Arc<dyn Fn(&Seen) -> Reply + Send + Sync>;

/// A running mock server.
pub struct Server {
    /// Its address on loopback.
    pub addr: SocketAddr,
    /// `http://` or `https://` and the address.
    pub url: String,
    /// Every request it saw, in order.
    pub seen: Arc<Mutex<Vec<Seen>>>,
}

impl Server {
    /// A copy of the requests seen so far.
    pub fn requests(&self) -> Vec<Seen> {
        self.seen.lock().clone()
    }
}

/// A CA, a server certificate for localhost/127.0.0.1 and a client certificate, all PEM.
pub struct Pki {
    /// The CA certificate (PEM) that signed both certificates.
    pub ca_pem: String,
    /// The server's certificate for `127.0.0.1` and `localhost` (PEM).
    pub server_cert_pem: String,
    /// The server's private key (PEM).
    pub server_key_pem: String,
    /// A client certificate the server accepts (PEM).
    pub client_cert_pem: String,
    /// The client certificate's private key (PEM).
    pub client_key_pem: String,
}

impl Default for Pki {
    fn default() -> Self {
        Self::new()
    }
}

impl Pki {
    /// A fresh CA with one server and one client certificate.
    pub fn new() -> Self {
        let ca_key = KeyPair::generate().unwrap();
        let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca_params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "kinform test CA");
        let ca_cert = ca_params.self_signed(&ca_key).unwrap();
        let issuer = Issuer::new(ca_params, ca_key);
        let server_key = KeyPair::generate().unwrap();
        let server_cert = CertificateParams::new(vec![
            "localhost".to_string(),
            "127.0.0.1".to_string(),
            "kubernetes.internal".to_string(),
        ])
        .unwrap()
        .signed_by(&server_key, &issuer)
        .unwrap();
        let client_key = KeyPair::generate().unwrap();
        let mut client_params = CertificateParams::new(Vec::<String>::new()).unwrap();
        client_params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "admin");
        let client_cert = client_params.signed_by(&client_key, &issuer).unwrap();
        Self {
            ca_pem: ca_cert.pem(),
            server_cert_pem: server_cert.pem(),
            server_key_pem: server_key.serialize_pem(),
            client_cert_pem: client_cert.pem(),
            client_key_pem: client_key.serialize_pem(),
        }
    }

    /// A server config trusting the CA for client certs; `require_client_cert` rejects
    /// handshakes without one.
    pub fn server_config(&self, require_client_cert: bool) -> Arc<rustls::ServerConfig> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut roots = rustls::RootCertStore::empty();
        for c in CertificateDer::pem_slice_iter(self.ca_pem.as_bytes()) {
            roots.add(c.unwrap()).unwrap();
        }
        let mut verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
            Arc::new(roots),
            provider.clone(),
        );
        if !require_client_cert {
            verifier = verifier.allow_unauthenticated();
        }
        let chain = CertificateDer::pem_slice_iter(self.server_cert_pem.as_bytes())
            .collect::<Result<Vec<_>, _>>()
            .unwrap();
        let key = PrivateKeyDer::from_pem_slice(self.server_key_pem.as_bytes()).unwrap();
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_client_cert_verifier(verifier.build().unwrap())
            .with_single_cert(chain, key)
            .unwrap();
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        Arc::new(config)
    }
}

type Body = UnsyncBoxBody<Bytes, Infallible>;

fn to_response(reply: Reply, gzip_ok: bool) -> http::Response<Body> {
    match reply {
        Reply::Full {
            status,
            headers,
            body,
        } => {
            let mut b = http::Response::builder().status(status);
            for (k, v) in headers {
                b = b.header(k, v);
            }
            let body = if gzip_ok && body.len() > 16 {
                b = b.header("content-encoding", "gzip");
                let mut enc =
                    flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
                enc.write_all(&body).unwrap();
                enc.finish().unwrap()
            } else {
                body
            };
            b.body(Full::new(Bytes::from(body)).boxed_unsync()).unwrap()
        }
        Reply::Stream(rx) => {
            let frames = futures_util::stream::unfold(rx, |mut rx| async move {
                rx.recv()
                    .await
                    .map(|b| (Ok::<_, Infallible>(Frame::data(b)), rx))
            });
            http::Response::builder()
                .status(200)
                .header("content-type", "application/json")
                .body(StreamBody::new(frames.boxed()).boxed_unsync())
                .unwrap()
        }
    }
}

/// Starts a server; with `tls`, `https://127.0.0.1:port`; `gzip` compresses bodies when the
/// client accepts gzip.
pub async fn serve(tls: Option<Arc<rustls::ServerConfig>>, gzip: bool, handler: Handler) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let url = format!(
        "{}://127.0.0.1:{}",
        if tls.is_some() { "https" } else { "http" },
        addr.port()
    );
    let seen2 = seen.clone();
    tokio::spawn(async move {
        loop {
            let Ok((tcp, _)) = listener.accept().await else {
                return;
            };
            let handler = handler.clone();
            let seen = seen2.clone();
            let tls = tls.clone();
            tokio::spawn(async move {
                match tls {
                    Some(cfg) => {
                        let Ok(stream) = tokio_rustls::TlsAcceptor::from(cfg).accept(tcp).await
                        else {
                            return;
                        };
                        let client_cert = stream.get_ref().1.peer_certificates().is_some();
                        serve_conn(TokioIo::new(stream), handler, seen, client_cert, gzip).await;
                    }
                    None => serve_conn(TokioIo::new(tcp), handler, seen, false, gzip).await,
                }
            });
        }
    });
    Server { addr, url, seen }
}

async fn serve_conn<I>(
    io: I,
    handler: Handler,
    seen: Arc<Mutex<Vec<Seen>>>,
    client_cert: bool,
    gzip: bool,
) where
    I: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    let svc = hyper::service::service_fn(move |req: http::Request<Incoming>| {
        let handler = handler.clone();
        let seen = seen.clone();
        async move {
            let (parts, body) = req.into_parts();
            let body = body
                .collect()
                .await
                .map(|b| b.to_bytes().to_vec())
                .unwrap_or_default();
            let s = Seen {
                method: parts.method,
                uri: parts.uri,
                headers: parts.headers,
                body,
                version: parts.version,
                client_cert,
            };
            let gzip_ok = gzip
                && s.headers
                    .get("accept-encoding")
                    .and_then(|v| v.to_str().ok())
                    .is_some_and(|v| v.contains("gzip"));
            let reply = handler(&s);
            seen.lock().push(s);
            Ok::<_, Infallible>(to_response(reply, gzip_ok))
        }
    });
    let _ = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new())
        .serve_connection(io, svc)
        .await;
}

/// A pod `default/name` at resourceVersion `rv`, as a server would answer it.
pub fn pod_json(name: &str, rv: &str) -> serde_json::Value {
    serde_json::json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "resourceVersion": rv, "uid": format!("uid-{name}")},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]}
    })
}

/// A failure `Status` body with `code`, `reason` and `message`.
pub fn status_json(code: u16, reason: &str, message: &str) -> serde_json::Value {
    serde_json::json!({
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "code": code, "reason": reason, "message": message,
        "details": {"name": "web", "kind": "pods"}
    })
}
