//! The crate's errors: a description that cannot be served or registered
//! ([`ConfigError`]), and a server that cannot start ([`ServerError`]).

use std::path::PathBuf;

/// A [`Webhooks`](crate::Webhooks) description, or a configuration made from it, that
/// kube-apiserver or the server would not take.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// A path is unusable.
    #[error("webhook path {path:?} {problem}")]
    Path {
        /// The path.
        path: String,
        /// What is wrong with it.
        problem: &'static str,
    },
    /// An admission webhook's name or settings are unusable.
    #[error("webhook {name:?} {problem}")]
    Webhook {
        /// The webhook's name.
        name: String,
        /// What is wrong with it.
        problem: &'static str,
    },
    /// A converter is inconsistent.
    #[error("the converter of {kind} {problem}")]
    Converter {
        /// The hub's kind.
        kind: String,
        /// What is wrong with it.
        problem: String,
    },
    /// A CRD's versions and its converter's differ, or no converter serves it.
    #[error("CustomResourceDefinition {crd}: {problem}")]
    Crd {
        /// The CRD's name.
        crd: String,
        /// What differs.
        problem: String,
    },
    /// The CA bundle file could not be read or holds no certificate.
    #[error("the CA bundle {path}: {message}")]
    CaBundle {
        /// The file.
        path: PathBuf,
        /// Why it cannot be used.
        message: String,
    },
}

/// Why the server could not start or stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServerError {
    /// The description is unusable.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// Binding the address failed.
    #[error("binding {addr}: {source}")]
    Bind {
        /// The address asked for.
        addr: std::net::SocketAddr,
        /// The error.
        source: std::io::Error,
    },
    /// The certificate or key could not be read or used.
    #[error("the TLS certificate {cert} / key {key}: {message}")]
    Tls {
        /// The certificate file.
        cert: PathBuf,
        /// The key file.
        key: PathBuf,
        /// Why.
        message: String,
    },
    /// Neither TLS files nor plain HTTP were chosen.
    #[error(
        "no TLS certificate: call ServerBuilder::tls_files (kube-apiserver calls webhooks over HTTPS only), or plain_http behind a TLS-terminating proxy"
    )]
    NoTls,
}
