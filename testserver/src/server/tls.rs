//! HTTPS for the test server: a certificate authority of its own, made at start.
//!
//! kube-apiserver serves HTTPS only, and some clients will not talk plain HTTP to an API server
//! at all (the official client libraries build their TLS settings from the kubeconfig and
//! several refuse an `http://` server with credentials). So [`TestApiServerBuilder::https`]
//! makes a fresh CA and a server certificate for `127.0.0.1` and `localhost` signed by it, serves
//! TLS with them (ALPN `h2` and `http/1.1`, as kube-apiserver offers), and writes the CA into the
//! kubeconfig (`certificate-authority-data`) and into [`TestApiServer::client_config`], so every
//! client verifies the server as it would a real one. Plain HTTP stays the default of the
//! library (tests that read the wire with a raw HTTP client need no TLS).
//!
//! Crates: rcgen (rustls' certificate generator) makes the certificates, rustls and
//! tokio-rustls serve them; kinform's client already uses rustls with the ring provider, so
//! nothing new is linked.
//!
//! [`TestApiServerBuilder::https`]: crate::TestApiServerBuilder::https
//! [`TestApiServer::client_config`]: crate::TestApiServer::client_config

use std::sync::Arc;

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

use crate::TestServerError;

/// The server's TLS identity: its CA (to hand to clients) and the rustls server settings.
pub(crate) struct ServerTls {
    /// The CA certificate, PEM.
    pub ca_pem: String,
    /// The acceptor serving the CA-signed certificate.
    pub acceptor: tokio_rustls::TlsAcceptor,
}

fn tls_error(what: &str, e: impl std::fmt::Display) -> TestServerError {
    TestServerError::Tls {
        message: format!("{what}: {e}"),
    }
}

impl ServerTls {
    /// A fresh CA and a server certificate for `127.0.0.1` and `localhost` signed by it.
    pub fn generate() -> Result<Self, TestServerError> {
        let ca_key = KeyPair::generate().map_err(|e| tls_error("generating the CA key", e))?;
        let mut ca_params = CertificateParams::new(Vec::<String>::new())
            .map_err(|e| tls_error("CA parameters", e))?;
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca_params
            .distinguished_name
            .push(DnType::CommonName, "kinform-testserver CA");
        let ca_cert = ca_params
            .self_signed(&ca_key)
            .map_err(|e| tls_error("signing the CA", e))?;
        let issuer = Issuer::new(ca_params, ca_key);
        let key = KeyPair::generate().map_err(|e| tls_error("generating the server key", e))?;
        let mut params = CertificateParams::new(vec![
            "127.0.0.1".to_owned(),
            "localhost".to_owned(),
            "kubernetes.default.svc".to_owned(),
        ])
        .map_err(|e| tls_error("server certificate parameters", e))?;
        params
            .distinguished_name
            .push(DnType::CommonName, "kube-apiserver");
        let cert = params
            .signed_by(&key, &issuer)
            .map_err(|e| tls_error("signing the server certificate", e))?;

        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let chain = vec![CertificateDer::from(cert.der().to_vec())];
        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| tls_error("TLS versions", e))?
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .map_err(|e| tls_error("the server certificate", e))?;
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        Ok(Self {
            ca_pem: ca_cert.pem(),
            acceptor: tokio_rustls::TlsAcceptor::from(Arc::new(config)),
        })
    }
}
