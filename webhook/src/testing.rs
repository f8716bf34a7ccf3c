//! Test support (feature `testing`): a certificate authority that issues server
//! certificates, and a TLS client that posts reviews as kube-apiserver does, over HTTP/2 or
//! HTTP/1.1, trusting only that CA.
//!
//! rcgen (rustls' certificate generator) makes the certificates, as the test API server's own
//! HTTPS does; the client is hyper's connection API over tokio-rustls, one connection per
//! [`TestClient::connect`], so a test sees which certificate each new connection is served.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::{TokioExecutor, TokioIo};
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};

/// What went wrong in test support.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TestingError {
    /// Making a certificate.
    #[error("certificate: {0}")]
    Certificate(String),
    /// Connecting, the handshake, or the HTTP exchange.
    #[error("{what}: {message}")]
    Connection {
        /// The step.
        what: &'static str,
        /// The error.
        message: String,
    },
    /// Writing certificate files.
    #[error("writing {path}: {source}")]
    Write {
        /// The file.
        path: String,
        /// The error.
        source: std::io::Error,
    },
}

fn cert_error(e: impl std::fmt::Display) -> TestingError {
    TestingError::Certificate(e.to_string())
}

fn conn_error(what: &'static str) -> impl FnOnce(String) -> TestingError {
    move |message| TestingError::Connection { what, message }
}

/// A certificate authority made for a test.
pub struct TestCa {
    issuer: Issuer<'static, KeyPair>,
    pem: String,
}

impl std::fmt::Debug for TestCa {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestCa").finish_non_exhaustive()
    }
}

/// A server certificate and its key, PEM.
#[derive(Clone, Debug)]
pub struct IssuedCert {
    /// The certificate, PEM.
    pub cert_pem: String,
    /// The private key, PEM (PKCS#8).
    pub key_pem: String,
    /// The certificate, DER (to compare with what a server presents).
    pub cert_der: Vec<u8>,
}

impl IssuedCert {
    /// Writes the certificate and key to these files (replacing them).
    pub fn write(&self, cert: &Path, key: &Path) -> Result<(), TestingError> {
        for (path, text) in [(cert, &self.cert_pem), (key, &self.key_pem)] {
            std::fs::write(path, text).map_err(|source| TestingError::Write {
                path: path.display().to_string(),
                source,
            })?;
        }
        Ok(())
    }
}

impl TestCa {
    /// A fresh CA.
    pub fn new() -> Result<Self, TestingError> {
        let key = KeyPair::generate().map_err(cert_error)?;
        let mut params = CertificateParams::new(Vec::<String>::new()).map_err(cert_error)?;
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params
            .distinguished_name
            .push(DnType::CommonName, "kinform-webhook test CA");
        let cert = params.self_signed(&key).map_err(cert_error)?;
        Ok(Self {
            issuer: Issuer::new(params, key),
            pem: cert.pem(),
        })
    }

    /// The CA's certificate, PEM (a webhook configuration's `caBundle`).
    pub fn ca_pem(&self) -> &str {
        &self.pem
    }

    /// A server certificate for these DNS names or IP addresses, signed by this CA.
    pub fn issue(&self, names: &[&str]) -> Result<IssuedCert, TestingError> {
        let key = KeyPair::generate().map_err(cert_error)?;
        let mut params =
            CertificateParams::new(names.iter().map(|n| (*n).to_owned()).collect::<Vec<_>>())
                .map_err(cert_error)?;
        params.distinguished_name.push(
            DnType::CommonName,
            names.first().copied().unwrap_or("webhook"),
        );
        let cert = params.signed_by(&key, &self.issuer).map_err(cert_error)?;
        Ok(IssuedCert {
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
            cert_der: cert.der().to_vec(),
        })
    }
}

/// The HTTP version a [`TestClient`] speaks (offered by ALPN).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum HttpVersion {
    /// HTTP/1.1.
    Http1,
    /// HTTP/2.
    Http2,
}

/// A TLS client of a webhook server. It resumes no TLS session: every connection is a full
/// handshake that shows the certificate served at that moment.
#[derive(Clone)]
pub struct TestClient {
    addr: SocketAddr,
    server_name: ServerName<'static>,
    tls: Arc<rustls::ClientConfig>,
    version: HttpVersion,
}

impl std::fmt::Debug for TestClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestClient")
            .field("addr", &self.addr)
            .field("version", &self.version)
            .finish()
    }
}

/// A response.
#[derive(Clone, Debug)]
pub struct TestResponse {
    /// The status.
    pub status: http::StatusCode,
    /// The HTTP version the server answered with.
    pub version: http::Version,
    /// The body.
    pub body: Bytes,
}

impl TestResponse {
    /// The body as JSON (`Value::Null` when it is not JSON).
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or(serde_json::Value::Null)
    }
}

enum Sender {
    Http1(hyper::client::conn::http1::SendRequest<Full<Bytes>>),
    Http2(hyper::client::conn::http2::SendRequest<Full<Bytes>>),
}

/// One TLS connection of a [`TestClient`].
pub struct TestConnection {
    sender: Sender,
    peer_certificate: Vec<u8>,
    host: String,
}

impl std::fmt::Debug for TestConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestConnection")
            .field("host", &self.host)
            .finish_non_exhaustive()
    }
}

impl TestClient {
    /// A client of the server at `addr` presenting a certificate for `server_name`, trusting
    /// only `ca_pem`.
    pub fn new(
        addr: SocketAddr,
        server_name: &str,
        ca_pem: &str,
        version: HttpVersion,
    ) -> Result<Self, TestingError> {
        let mut roots = rustls::RootCertStore::empty();
        for cert in CertificateDer::pem_slice_iter(ca_pem.as_bytes()) {
            roots.add(cert.map_err(cert_error)?).map_err(cert_error)?;
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut tls = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(cert_error)?
            .with_root_certificates(roots)
            .with_no_client_auth();
        // Every connection a full handshake, so each sees the certificate served now.
        tls.resumption = rustls::client::Resumption::disabled();
        tls.alpn_protocols = match version {
            HttpVersion::Http1 => vec![b"http/1.1".to_vec()],
            HttpVersion::Http2 => vec![b"h2".to_vec()],
        };
        Ok(Self {
            addr,
            server_name: ServerName::try_from(server_name.to_owned()).map_err(cert_error)?,
            tls: Arc::new(tls),
            version,
        })
    }

    /// A new connection (a new TLS handshake).
    pub async fn connect(&self) -> Result<TestConnection, TestingError> {
        let tcp = tokio::net::TcpStream::connect(self.addr)
            .await
            .map_err(|e| conn_error("connecting")(e.to_string()))?;
        // As kube-apiserver's client: no Nagle delay on small requests.
        let _ = tcp.set_nodelay(true);
        let tls = tokio_rustls::TlsConnector::from(self.tls.clone())
            .connect(self.server_name.clone(), tcp)
            .await
            .map_err(|e| conn_error("the TLS handshake")(e.to_string()))?;
        let peer_certificate = tls
            .get_ref()
            .1
            .peer_certificates()
            .and_then(|c| c.first())
            .map(|c| c.to_vec())
            .unwrap_or_default();
        let io = TokioIo::new(tls);
        let sender = match self.version {
            HttpVersion::Http1 => {
                let (sender, conn) = hyper::client::conn::http1::handshake(io)
                    .await
                    .map_err(|e| conn_error("the HTTP/1.1 handshake")(e.to_string()))?;
                tokio::spawn(conn);
                Sender::Http1(sender)
            }
            HttpVersion::Http2 => {
                let (sender, conn) =
                    hyper::client::conn::http2::handshake(TokioExecutor::new(), io)
                        .await
                        .map_err(|e| conn_error("the HTTP/2 handshake")(e.to_string()))?;
                tokio::spawn(conn);
                Sender::Http2(sender)
            }
        };
        Ok(TestConnection {
            sender,
            peer_certificate,
            host: format!("{}", self.addr),
        })
    }

    /// POSTs `body` (JSON) to `path` on a new connection.
    pub async fn post(
        &self,
        path: &str,
        body: impl Into<Bytes>,
    ) -> Result<TestResponse, TestingError> {
        self.connect().await?.post(path, body).await
    }

    /// GETs `path` on a new connection.
    pub async fn get(&self, path: &str) -> Result<TestResponse, TestingError> {
        self.connect()
            .await?
            .send(http::Method::GET, path, Bytes::new())
            .await
    }
}

impl TestConnection {
    /// The certificate the server presented (DER).
    pub fn peer_certificate(&self) -> &[u8] {
        &self.peer_certificate
    }

    /// POSTs `body` (JSON) to `path`.
    pub async fn post(
        &mut self,
        path: &str,
        body: impl Into<Bytes>,
    ) -> Result<TestResponse, TestingError> {
        self.send(http::Method::POST, path, body.into()).await
    }

    /// Sends one request.
    pub async fn send(
        &mut self,
        method: http::Method,
        path: &str,
        body: Bytes,
    ) -> Result<TestResponse, TestingError> {
        let http2 = matches!(self.sender, Sender::Http2(_));
        let uri = if http2 {
            format!("https://{}{path}", self.host)
        } else {
            path.to_owned()
        };
        let mut request = http::Request::builder()
            .method(method)
            .uri(uri)
            .header(http::header::CONTENT_TYPE, "application/json");
        if !http2 {
            request = request.header(http::header::HOST, &self.host);
        }
        let request = request
            .body(Full::new(body))
            .map_err(|e| conn_error("building the request")(e.to_string()))?;
        let response = match &mut self.sender {
            Sender::Http1(s) => s.send_request(request).await,
            Sender::Http2(s) => s.send_request(request).await,
        }
        .map_err(|e| conn_error("the request")(e.to_string()))?;
        let status = response.status();
        let version = response.version();
        let body = response
            .into_body()
            .collect()
            .await
            .map_err(|e| conn_error("reading the response")(e.to_string()))?
            .to_bytes();
        Ok(TestResponse {
            status,
            version,
            body,
        })
    }
}
