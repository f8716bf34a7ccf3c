//! Errors of configuration loading: kubeconfig files, in-cluster files, exec plugins.

use std::path::PathBuf;

/// What can go wrong building a [`Config`](super::Config) or fetching credentials.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// No kubeconfig file was found where one was expected.
    #[error("no kubeconfig found: {0}")]
    NoKubeconfig(String),
    /// A file named by the configuration could not be read.
    #[error("cannot read {what} {path}: {source}")]
    ReadFile {
        /// What the file is, e.g. `kubeconfig`, `certificate-authority`, `tokenFile`.
        what: &'static str,
        /// The path.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A kubeconfig file is not valid YAML of the expected shape.
    #[error("cannot parse kubeconfig {path}: {message}")]
    ParseKubeconfig {
        /// The file.
        path: PathBuf,
        /// The parser's message.
        message: String,
    },
    /// The requested (or current) context does not exist.
    #[error("context {0:?} not found in kubeconfig")]
    ContextNotFound(String),
    /// No context was named and the kubeconfig has no `current-context`.
    #[error("kubeconfig has no current-context and no context was given")]
    NoCurrentContext,
    /// A context names a cluster that does not exist.
    #[error("cluster {0:?} not found in kubeconfig")]
    ClusterNotFound(String),
    /// A context names a user that does not exist.
    #[error("user {0:?} not found in kubeconfig")]
    UserNotFound(String),
    /// A field has an invalid value.
    #[error("invalid {field}: {message}")]
    InvalidField {
        /// The field, e.g. `clusters[prod].server`.
        field: String,
        /// What is wrong.
        message: String,
    },
    /// Certificate or key material cannot be used.
    #[error("invalid TLS material ({what}): {message}")]
    Tls {
        /// Which material, e.g. `client-key-data of user admin`.
        what: String,
        /// What is wrong.
        message: String,
    },
    /// Not running inside a cluster (KUBERNETES_SERVICE_HOST/PORT unset).
    #[error("not running in a cluster: {0}")]
    NotInCluster(String),
    /// An exec credential plugin failed.
    #[error("exec plugin {command:?}: {message}")]
    Exec {
        /// The plugin command.
        command: String,
        /// What failed (never the credential itself).
        message: String,
    },
    /// A feature of the kubeconfig that kinform does not implement.
    #[error("unsupported kubeconfig feature: {0}")]
    Unsupported(String),
}
