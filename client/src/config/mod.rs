//! Where the API server is and how to authenticate: client-go's `rest.Config`.
//!
//! A [`Config`] comes from a kubeconfig ([`Config::from_kubeconfig`], following kubectl's
//! loading rules in [`Kubeconfig`]), from the pod's service account
//! ([`Config::incluster`], client-go's `rest.InClusterConfig`), from whichever of the two is
//! available ([`Config::infer`]), or from a plain URL ([`Config::new`], e.g. a TestApiServer on
//! `http://127.0.0.1:port`). It carries the resolved server URL, TLS material, credentials and
//! the transport's knobs (timeouts, QPS/burst, retries, compression, and the bounds on what
//! the client buffers: a whole body, one watch event).
//!
//! `Debug` output never contains a secret: tokens, passwords, private keys, exec env values
//! and auth-provider settings are [`Secret`]s, exec plugin arguments are hidden, and URLs
//! (the server, `proxy-url`, the `proxy-url` told to an exec plugin) are printed without
//! their userinfo, in `Debug` and in the errors about them alike.

mod error;
mod exec;
mod incluster;
mod kubeconfig;

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use base64::Engine as _;

pub use error::ConfigError;
pub use exec::{DEFAULT_EXEC_TIMEOUT, ExecCredential, run_exec_plugin};
pub use incluster::{SERVICE_ACCOUNT_DIR, incluster_with};
pub use kubeconfig::{
    AuthInfo, AuthProviderConfig, Cluster, Context, ExecConfig, ExecEnvVar, Kubeconfig,
    NamedAuthInfo, NamedCluster, NamedContext,
};

use super::secret::{RedactedUrl, Secret, redact_userinfo};

/// Which context, cluster and user of a kubeconfig to use (kubectl's `--context`,
/// `--cluster`, `--user`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KubeConfigOptions {
    /// The context; `None` uses `current-context`.
    pub context: Option<String>,
    /// Overrides the context's cluster.
    pub cluster: Option<String>,
    /// Overrides the context's user.
    pub user: Option<String>,
}

/// How requests authenticate.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub enum AuthConfig {
    /// No credentials (or client certificates only).
    #[default]
    None,
    /// A fixed bearer token.
    Token(Secret<String>),
    /// A bearer token read from a file and re-read every minute, as client-go's
    /// `cachingTokenSource` does for rotated service account tokens.
    TokenFile(PathBuf),
    /// HTTP basic authentication.
    Basic {
        /// User name.
        username: String,
        /// Password.
        password: Secret<String>,
    },
    /// An exec credential plugin, run again when its credential expires or on a 401.
    Exec(Box<ExecAuth>),
}

/// An exec plugin with what it is told about the cluster. `Debug` prints the `proxy-url`
/// of `cluster_info` without its userinfo.
#[derive(Clone)]
pub struct ExecAuth {
    /// The plugin.
    pub config: ExecConfig,
    /// `spec.cluster` of `KUBERNETES_EXEC_INFO` when `provideClusterInfo` is set.
    pub cluster_info: Option<serde_json::Value>,
    /// How long one run of the plugin may take before its process group is killed;
    /// `None` is [`DEFAULT_EXEC_TIMEOUT`].
    pub timeout: Option<Duration>,
}

impl fmt::Debug for ExecAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Self {
            config,
            cluster_info,
            timeout,
        } = self;
        let mut shown = cluster_info.clone();
        if let Some(url) = shown
            .as_mut()
            .and_then(|info| info.get_mut("proxy-url"))
            .filter(|url| url.is_string())
        {
            let redacted = redact_userinfo(url.as_str().unwrap_or_default()).into_owned();
            *url = redacted.into();
        }
        f.debug_struct("ExecAuth")
            .field("config", config)
            .field("cluster_info", &shown)
            .field("timeout", timeout)
            .finish()
    }
}

/// A client certificate chain and its private key, both PEM.
#[derive(Clone, Debug)]
pub struct Identity {
    /// PEM certificate chain.
    pub cert_pem: Vec<u8>,
    /// PEM private key (PKCS#8, PKCS#1 or SEC1).
    pub key_pem: Secret<Vec<u8>>,
}

/// Everything needed to talk to one API server. `Debug` prints the URLs without their
/// userinfo (a `proxy-url` may carry a password) and no secret.
#[derive(Clone)]
#[non_exhaustive]
pub struct Config {
    /// The server URL, `http://` or `https://`, optionally with a path prefix.
    pub cluster_url: http::Uri,
    /// The namespace of `Api::default_namespaced` (the context's namespace, or `default`).
    pub default_namespace: String,
    /// PEM CA bundle to trust instead of the system roots.
    pub root_cert_pem: Option<Vec<u8>>,
    /// `insecure-skip-tls-verify`: accept any server certificate.
    pub accept_invalid_certs: bool,
    /// `tls-server-name`: verify the server certificate against this name.
    pub tls_server_name: Option<String>,
    /// `proxy-url`: an `http://` proxy tunnelled through with CONNECT.
    pub proxy_url: Option<http::Uri>,
    /// Request authentication.
    pub auth: AuthConfig,
    /// Client certificate authentication.
    pub identity: Option<Identity>,
    /// Impersonated user (`Impersonate-User`).
    pub impersonate: Option<String>,
    /// Impersonated groups (`Impersonate-Group`).
    pub impersonate_groups: Vec<String>,
    /// Limit on establishing a connection (TCP, proxy, TLS).
    pub connect_timeout: Option<Duration>,
    /// Limit on waiting for response headers, and on the silence between body chunks of
    /// ordinary requests. Watch and other streaming bodies are exempt: a quiet watch is normal.
    pub read_timeout: Option<Duration>,
    /// Client-side rate limit in requests per second (client-go's `QPS`); `None` is unlimited.
    pub qps: Option<f32>,
    /// Token bucket size for `qps` (client-go's `Burst`).
    pub burst: u32,
    /// Retries of 429 answers, and of 503 answers, 504 answers carrying `Retry-After` (but not
    /// a "too large resource version" one) and connection errors of idempotent requests.
    pub max_retries: u32,
    /// Do not ask for gzip responses.
    pub disable_compression: bool,
    /// Offer HTTP/2 in the TLS handshake (used when the server picks it).
    pub http2: bool,
    /// The `User-Agent` header.
    pub user_agent: String,
    /// The largest response body read whole (a LIST page, an object, an error Status, a proxy
    /// answer), after gunzipping: a larger one fails its request with [`Error::TooLarge`]
    /// instead of growing the client's memory without bound. Default
    /// [`DEFAULT_MAX_BODY_BYTES`].
    ///
    /// [`Error::TooLarge`]: crate::Error::TooLarge
    pub max_body_bytes: usize,
    /// The largest single watch event (one line of a watch body): a longer line fails its
    /// watch with [`Error::TooLarge`] (a reflector then relists, as after any broken watch).
    /// Default [`DEFAULT_MAX_WATCH_EVENT_BYTES`].
    ///
    /// [`Error::TooLarge`]: crate::Error::TooLarge
    pub max_watch_event_bytes: usize,
    /// How many bytes of a response a reflector's decoding reads ahead of the decoder: of a
    /// watch body (a streaming list's included), the blocks holding the chunks read and not
    /// yet decoded (each chunk is copied into a block of the next power of two; as much
    /// again in free blocks is kept for the next chunks until the watch ends); of a
    /// paged LIST, the part of the next page fetched before the reflector asks for it. At
    /// the bound the client stops reading, so the server's writes wait on TCP (HTTP/2) flow
    /// control instead of the client's memory growing with a slow consumer. Larger values
    /// let the two decoding threads take larger batches; the default,
    /// [`DEFAULT_READ_AHEAD_BYTES`], holds a whole 500-object page of realistic pods.
    pub read_ahead_bytes: usize,
}

impl fmt::Debug for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Destructured so that a new field cannot be forgotten here.
        let Self {
            cluster_url,
            default_namespace,
            root_cert_pem,
            accept_invalid_certs,
            tls_server_name,
            proxy_url,
            auth,
            identity,
            impersonate,
            impersonate_groups,
            connect_timeout,
            read_timeout,
            qps,
            burst,
            max_retries,
            disable_compression,
            http2,
            user_agent,
            max_body_bytes,
            max_watch_event_bytes,
            read_ahead_bytes,
        } = self;
        let cluster_url = cluster_url.to_string();
        let proxy_url = proxy_url.as_ref().map(ToString::to_string);
        f.debug_struct("Config")
            .field("cluster_url", &RedactedUrl(&cluster_url))
            .field("default_namespace", default_namespace)
            .field("root_cert_pem", root_cert_pem)
            .field("accept_invalid_certs", accept_invalid_certs)
            .field("tls_server_name", tls_server_name)
            .field("proxy_url", &proxy_url.as_deref().map(RedactedUrl))
            .field("auth", auth)
            .field("identity", identity)
            .field("impersonate", impersonate)
            .field("impersonate_groups", impersonate_groups)
            .field("connect_timeout", connect_timeout)
            .field("read_timeout", read_timeout)
            .field("qps", qps)
            .field("burst", burst)
            .field("max_retries", max_retries)
            .field("disable_compression", disable_compression)
            .field("http2", http2)
            .field("user_agent", user_agent)
            .field("max_body_bytes", max_body_bytes)
            .field("max_watch_event_bytes", max_watch_event_bytes)
            .field("read_ahead_bytes", read_ahead_bytes)
            .finish()
    }
}

/// Default of [`Config::max_body_bytes`]: 256 MiB, far above a 500-object LIST page of
/// the largest objects etcd stores (1.5 MiB each by default) that a client would page
/// through, yet a bound.
pub const DEFAULT_MAX_BODY_BYTES: usize = 256 << 20;

/// Default of [`Config::read_ahead_bytes`]: 4 MiB (a 500-pod page is about 3 MB; a watch
/// batch is decoded from at most about 256 KiB of lines).
pub const DEFAULT_READ_AHEAD_BYTES: usize = 4 << 20;

/// Default of [`Config::max_watch_event_bytes`]: 16 MiB, well above the largest object the
/// API server accepts (its request body limit is 3 MiB, and etcd's value limit 1.5 MiB) with
/// the event's JSON overhead.
pub const DEFAULT_MAX_WATCH_EVENT_BYTES: usize = 16 << 20;

impl Config {
    /// A config for `cluster_url` with no credentials and default knobs; plain `http://` works.
    pub fn new(cluster_url: http::Uri) -> Self {
        Self {
            cluster_url,
            default_namespace: "default".into(),
            root_cert_pem: None,
            accept_invalid_certs: false,
            tls_server_name: None,
            proxy_url: None,
            auth: AuthConfig::None,
            identity: None,
            impersonate: None,
            impersonate_groups: Vec::new(),
            connect_timeout: Some(Duration::from_secs(30)),
            read_timeout: Some(Duration::from_secs(60)),
            qps: None,
            burst: 10,
            max_retries: 5,
            disable_compression: false,
            http2: true,
            user_agent: concat!("kinform/", env!("CARGO_PKG_VERSION")).into(),
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            max_watch_event_bytes: DEFAULT_MAX_WATCH_EVENT_BYTES,
            read_ahead_bytes: DEFAULT_READ_AHEAD_BYTES,
        }
    }

    /// kubeconfig (`KUBECONFIG` or `~/.kube/config`) if there is one, else the in-cluster
    /// service account, as kube-rs's `Config::infer` and client-go's deferred loader do.
    pub async fn infer() -> Result<Self, ConfigError> {
        match Self::from_kubeconfig(&KubeConfigOptions::default()).await {
            Err(ConfigError::NoKubeconfig(why)) => Self::incluster().map_err(|e| {
                ConfigError::NoKubeconfig(format!("{why}; in-cluster config failed too: {e}"))
            }),
            other => other,
        }
    }

    /// The in-cluster config of a pod: `KUBERNETES_SERVICE_HOST`/`_PORT`, and the service
    /// account's token (re-read as it rotates), CA and namespace.
    pub fn incluster() -> Result<Self, ConfigError> {
        let host = std::env::var("KUBERNETES_SERVICE_HOST").unwrap_or_default();
        let port = std::env::var("KUBERNETES_SERVICE_PORT").unwrap_or_default();
        incluster_with(&host, &port, std::path::Path::new(SERVICE_ACCOUNT_DIR))
    }

    /// Loads the kubeconfig as kubectl does and builds the config of the chosen context.
    pub async fn from_kubeconfig(options: &KubeConfigOptions) -> Result<Self, ConfigError> {
        let kubeconfig = Kubeconfig::read_from_env()?;
        Self::from_custom_kubeconfig(kubeconfig, options)
    }

    /// Builds the config of the chosen context of an already loaded kubeconfig.
    pub fn from_custom_kubeconfig(
        kubeconfig: Kubeconfig,
        options: &KubeConfigOptions,
    ) -> Result<Self, ConfigError> {
        let context_name = match options
            .context
            .clone()
            .or_else(|| kubeconfig.current_context.clone().filter(|c| !c.is_empty()))
        {
            Some(name) => name,
            None => return Err(ConfigError::NoCurrentContext),
        };
        let context = kubeconfig
            .context(&context_name)
            .ok_or_else(|| ConfigError::ContextNotFound(context_name.clone()))?;
        let cluster_name = options.cluster.as_deref().unwrap_or(&context.cluster);
        let user_name = options.user.as_deref().unwrap_or(&context.user);
        let cluster = kubeconfig
            .cluster(cluster_name)
            .ok_or_else(|| ConfigError::ClusterNotFound(cluster_name.to_owned()))?;
        // kubectl accepts a context without a user: no credentials.
        let default_user = AuthInfo::default();
        let user = if user_name.is_empty() {
            &default_user
        } else {
            kubeconfig
                .auth_info(user_name)
                .ok_or_else(|| ConfigError::UserNotFound(user_name.to_owned()))?
        };

        let server = cluster
            .server
            .as_deref()
            .filter(|s| !s.is_empty())
            .ok_or_else(|| ConfigError::InvalidField {
                field: format!("clusters[{cluster_name}].server"),
                message: "missing".into(),
            })?;
        let mut config = Self::new(parse_url(
            server,
            &format!("clusters[{cluster_name}].server"),
        )?);
        if let Some(ns) = context.namespace.as_deref().filter(|n| !n.is_empty()) {
            config.default_namespace = ns.to_owned();
        }
        config.root_cert_pem = data_or_file(
            cluster.certificate_authority_data.as_deref(),
            cluster.certificate_authority.as_deref(),
            "certificate-authority",
            &format!("clusters[{cluster_name}]"),
        )?;
        config.accept_invalid_certs = cluster.insecure_skip_tls_verify;
        config.tls_server_name = cluster.tls_server_name.clone().filter(|s| !s.is_empty());
        config.proxy_url = match cluster.proxy_url.as_deref().filter(|s| !s.is_empty()) {
            Some(p) => Some(parse_url(
                p,
                &format!("clusters[{cluster_name}].proxy-url"),
            )?),
            None => None,
        };
        config.disable_compression = cluster.disable_compression;
        config.impersonate = user.impersonate.clone();
        config.impersonate_groups = user.impersonate_groups.clone().unwrap_or_default();
        config.apply_user(user, user_name, cluster, cluster_name)?;
        Ok(config)
    }

    fn apply_user(
        &mut self,
        user: &AuthInfo,
        user_name: &str,
        cluster: &Cluster,
        cluster_name: &str,
    ) -> Result<(), ConfigError> {
        let at = format!("users[{user_name}]");
        if user.auth_provider.is_some() {
            return Err(ConfigError::Unsupported(format!(
                "{at}.auth-provider (legacy in-tree auth providers were removed from client-go; \
                 use an exec plugin)"
            )));
        }
        let cert = data_or_file(
            user.client_certificate_data.as_deref(),
            user.client_certificate.as_deref(),
            "client-certificate",
            &at,
        )?;
        let key = match user.client_key_data.as_ref() {
            Some(data) => Some(decode_base64(
                data.expose(),
                &format!("{at}.client-key-data"),
            )?),
            None => match user.client_key.as_deref() {
                Some(path) => Some(read_file(path, "client-key")?),
                None => None,
            },
        };
        self.identity = match (cert, key) {
            (Some(cert_pem), Some(key_pem)) => Some(Identity {
                cert_pem,
                key_pem: Secret::new(key_pem),
            }),
            (None, None) => None,
            (Some(_), None) => {
                return Err(ConfigError::InvalidField {
                    field: at,
                    message: "client certificate given without a client key".into(),
                });
            }
            (None, Some(_)) => {
                return Err(ConfigError::InvalidField {
                    field: at,
                    message: "client key given without a client certificate".into(),
                });
            }
        };
        self.auth = if let Some(token) = user.token.as_ref().filter(|t| !t.expose().is_empty()) {
            AuthConfig::Token(token.clone())
        } else if let Some(file) = user.token_file.as_deref().filter(|f| !f.is_empty()) {
            // Fail early on a missing file, as kubectl does.
            read_file(file, "tokenFile")?;
            AuthConfig::TokenFile(PathBuf::from(file))
        } else if let Some(exec) = user.exec.as_ref() {
            let cluster_info = exec.provide_cluster_info.then(|| {
                let mut info = serde_json::json!({ "server": self.cluster_url.to_string() });
                if let Some(name) = &cluster.tls_server_name {
                    info["tls-server-name"] = name.clone().into();
                }
                if cluster.insecure_skip_tls_verify {
                    info["insecure-skip-tls-verify"] = true.into();
                }
                if let Some(ca) = &self.root_cert_pem {
                    info["certificate-authority-data"] =
                        base64::engine::general_purpose::STANDARD.encode(ca).into();
                }
                if let Some(p) = &cluster.proxy_url {
                    info["proxy-url"] = p.clone().into();
                }
                let _ = cluster_name;
                info
            });
            AuthConfig::Exec(Box::new(ExecAuth {
                config: exec.clone(),
                cluster_info,
                timeout: None,
            }))
        } else if let (Some(username), Some(password)) = (&user.username, &user.password) {
            AuthConfig::Basic {
                username: username.clone(),
                password: password.clone(),
            }
        } else {
            AuthConfig::None
        };
        Ok(())
    }
}

/// Parses an `http://` or `https://` URL; the error quotes it without its userinfo.
pub(crate) fn parse_url(s: &str, field: &str) -> Result<http::Uri, ConfigError> {
    let shown = RedactedUrl(s);
    let uri: http::Uri = s.parse().map_err(|e| ConfigError::InvalidField {
        field: field.to_owned(),
        message: format!("{shown:?} is not a URL: {e}"),
    })?;
    let Some(authority) = uri
        .authority()
        .filter(|_| matches!(uri.scheme_str(), Some("http" | "https")))
    else {
        return Err(ConfigError::InvalidField {
            field: field.to_owned(),
            message: format!("{shown:?} is not an http:// or https:// URL"),
        });
    };
    // A port that is not a number is usually a password whose `@` and host were cut off
    // (`http://me:pw/x@proxy` parses as host `me`, port `pw`): neither is quoted.
    let hostport = authority.as_str().rsplit('@').next().unwrap_or_default();
    if let Some((_, port)) = hostport.rsplit_once(':')
        && !port.ends_with(']')
        && port.parse::<u16>().is_err()
    {
        return Err(ConfigError::InvalidField {
            field: field.to_owned(),
            message: format!(
                "the port of the {} URL is not a number (a password with an unescaped `/`, `?` \
                 or `#` ends the host early)",
                uri.scheme_str().unwrap_or_default()
            ),
        });
    }
    Ok(uri)
}

fn read_file(path: &str, what: &'static str) -> Result<Vec<u8>, ConfigError> {
    std::fs::read(path).map_err(|source| ConfigError::ReadFile {
        what,
        path: PathBuf::from(path),
        source,
    })
}

fn decode_base64(data: &str, field: &str) -> Result<Vec<u8>, ConfigError> {
    let compact: String = data.split_whitespace().collect();
    base64::engine::general_purpose::STANDARD
        .decode(compact.as_bytes())
        .map_err(|e| ConfigError::InvalidField {
            field: field.to_owned(),
            message: format!("not base64: {e}"),
        })
}

/// `X-data` wins over `X` (a file), as in client-go.
fn data_or_file(
    data: Option<&str>,
    file: Option<&str>,
    what: &'static str,
    at: &str,
) -> Result<Option<Vec<u8>>, ConfigError> {
    match (
        data.filter(|d| !d.is_empty()),
        file.filter(|f| !f.is_empty()),
    ) {
        (Some(d), _) => decode_base64(d, &format!("{at}.{what}-data")).map(Some),
        (None, Some(f)) => read_file(f, what).map(Some),
        (None, None) => Ok(None),
    }
}
