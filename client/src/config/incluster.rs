//! In-cluster configuration (client-go's `rest.InClusterConfig`).

use std::path::Path;

use super::{AuthConfig, Config, ConfigError, parse_url};

/// Where Kubernetes mounts a pod's service account token, CA and namespace.
pub const SERVICE_ACCOUNT_DIR: &str = "/var/run/secrets/kubernetes.io/serviceaccount";

/// The in-cluster config from an explicit service host, port and service account directory
/// (`token`, `ca.crt`, `namespace`). [`Config::incluster`] passes the environment's values.
pub fn incluster_with(host: &str, port: &str, sa_dir: &Path) -> Result<Config, ConfigError> {
    if host.is_empty() || port.is_empty() {
        return Err(ConfigError::NotInCluster(
            "KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set".into(),
        ));
    }
    let host = if host.contains(':') && !host.starts_with('[') {
        format!("[{host}]") // IPv6, as net.JoinHostPort
    } else {
        host.to_owned()
    };
    let url = parse_url(&format!("https://{host}:{port}"), "KUBERNETES_SERVICE_HOST")?;
    let token = sa_dir.join("token");
    std::fs::metadata(&token).map_err(|source| ConfigError::ReadFile {
        what: "service account token",
        path: token.clone(),
        source,
    })?;
    let ca_path = sa_dir.join("ca.crt");
    let ca = std::fs::read(&ca_path).map_err(|source| ConfigError::ReadFile {
        what: "service account ca.crt",
        path: ca_path,
        source,
    })?;
    let mut config = Config::new(url);
    config.root_cert_pem = Some(ca);
    config.auth = AuthConfig::TokenFile(token);
    if let Ok(ns) = std::fs::read_to_string(sa_dir.join("namespace")) {
        let ns = ns.trim();
        if !ns.is_empty() {
            config.default_namespace = ns.to_owned();
        }
    }
    Ok(config)
}
