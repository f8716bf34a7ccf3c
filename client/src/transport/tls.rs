//! rustls client configuration: trusted roots, client certificates, skip-verify.
//!
//! As client-go's `transport.TLSConfigFor`: the kubeconfig's CA bundle replaces the system
//! roots when given; `insecure-skip-tls-verify` accepts any server certificate (signatures of
//! the handshake are still checked); client certificates come from the kubeconfig or from an
//! exec plugin and can be replaced at run time (a rotated exec credential), which new
//! connections pick up. ALPN offers `h2` and `http/1.1` so HTTP/2 is used when the server
//! prefers it.

use std::sync::Arc;

use parking_lot::RwLock;
use rustls::client::ResolvesClientCert;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::sign::CertifiedKey;
use rustls::{DigitallySignedStruct, SignatureScheme};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};

use crate::config::{Config, ConfigError};

/// Where Linux distributions keep the system CA bundle (as Go's `crypto/x509` looks).
const SYSTEM_BUNDLES: &[&str] = &[
    "/etc/ssl/certs/ca-certificates.crt",
    "/etc/pki/tls/certs/ca-bundle.crt",
    "/etc/ssl/ca-bundle.pem",
    "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
    "/etc/ssl/cert.pem",
];

pub(crate) fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// The client certificate, swappable at run time.
#[derive(Debug, Default)]
pub(crate) struct ClientCertSlot {
    current: RwLock<Option<Arc<CertifiedKey>>>,
}

impl ClientCertSlot {
    pub(crate) fn set(&self, key: Arc<CertifiedKey>) {
        *self.current.write() = Some(key);
    }
}

impl ResolvesClientCert for ClientCertSlot {
    fn resolve(&self, _hints: &[&[u8]], _schemes: &[SignatureScheme]) -> Option<Arc<CertifiedKey>> {
        self.current.read().clone()
    }
    fn has_certs(&self) -> bool {
        self.current.read().is_some()
    }
}

/// Parses a PEM chain and key into a rustls identity.
pub(crate) fn certified_key(
    cert_pem: &[u8],
    key_pem: &[u8],
    what: &str,
) -> Result<Arc<CertifiedKey>, ConfigError> {
    let tls_err = |message: String| ConfigError::Tls {
        what: what.to_owned(),
        message,
    };
    let chain = CertificateDer::pem_slice_iter(cert_pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| tls_err(format!("bad certificate PEM: {e}")))?;
    if chain.is_empty() {
        return Err(tls_err("no certificate in PEM".into()));
    }
    let key = PrivateKeyDer::from_pem_slice(key_pem)
        .map_err(|e| tls_err(format!("bad private key PEM: {e}")))?;
    let signing = provider()
        .key_provider
        .load_private_key(key)
        .map_err(|e| tls_err(format!("unusable private key: {e}")))?;
    Ok(Arc::new(CertifiedKey::new(chain, signing)))
}

fn roots(config: &Config) -> Result<rustls::RootCertStore, ConfigError> {
    let mut store = rustls::RootCertStore::empty();
    let (pem, what) = match &config.root_cert_pem {
        Some(pem) => (pem.clone(), "certificate-authority".to_owned()),
        None => {
            let from_env = std::env::var_os("SSL_CERT_FILE").map(std::path::PathBuf::from);
            let found = from_env
                .into_iter()
                .chain(SYSTEM_BUNDLES.iter().map(std::path::PathBuf::from))
                .find_map(|p| std::fs::read(&p).ok().map(|b| (b, p)));
            match found {
                Some((bytes, path)) => (bytes, format!("system roots {}", path.display())),
                None => return Ok(store), // nothing to trust: every handshake fails clearly
            }
        }
    };
    let certs = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| ConfigError::Tls {
            what: what.clone(),
            message: format!("bad PEM: {e}"),
        })?;
    if certs.is_empty() && config.root_cert_pem.is_some() {
        return Err(ConfigError::Tls {
            what,
            message: "no certificate in PEM".into(),
        });
    }
    let (_added, _ignored) = store.add_parsable_certificates(certs);
    Ok(store)
}

/// The rustls config of a [`Config`] and its swappable client certificate.
pub(crate) fn client_config(
    config: &Config,
) -> Result<(Arc<rustls::ClientConfig>, Arc<ClientCertSlot>), ConfigError> {
    let provider = provider();
    let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| ConfigError::Tls {
            what: "protocol versions".into(),
            message: e.to_string(),
        })?;
    let builder = if config.accept_invalid_certs {
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(SkipVerify(provider)))
    } else {
        builder.with_root_certificates(roots(config)?)
    };
    let slot = Arc::new(ClientCertSlot::default());
    if let Some(id) = &config.identity {
        slot.set(certified_key(
            &id.cert_pem,
            id.key_pem.expose(),
            "client certificate",
        )?);
    }
    let mut tls = builder.with_client_cert_resolver(slot.clone());
    tls.alpn_protocols = if config.http2 {
        vec![b"h2".to_vec(), b"http/1.1".to_vec()]
    } else {
        vec![b"http/1.1".to_vec()]
    };
    Ok((Arc::new(tls), slot))
}

/// The name the server certificate is checked against.
pub(crate) fn server_name(config: &Config, host: &str) -> Result<ServerName<'static>, ConfigError> {
    let name = config.tls_server_name.as_deref().unwrap_or(host);
    let name = name.trim_start_matches('[').trim_end_matches(']');
    ServerName::try_from(name.to_owned()).map_err(|e| ConfigError::InvalidField {
        field: "tls-server-name".into(),
        message: format!("{name:?}: {e}"),
    })
}

/// `insecure-skip-tls-verify`: trust any certificate, still verify handshake signatures.
#[derive(Debug)]
struct SkipVerify(Arc<CryptoProvider>);

impl ServerCertVerifier for SkipVerify {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}
