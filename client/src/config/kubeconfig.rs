//! The kubeconfig file format and kubectl's loading rules.
//!
//! Reproduces client-go's `clientcmd` loading: `KUBECONFIG` lists several files (`:`
//! separated on Unix) which are merged in order — for clusters, users and contexts the first
//! file that defines a name wins, and the first non-empty `current-context` wins — and
//! without `KUBECONFIG` the file is `~/.kube/config`. Relative paths inside a file
//! (certificate-authority, client-certificate, client-key, tokenFile, exec command) are
//! resolved against that file's directory, as `clientcmd.ResolveLocalPaths` does.
//!
//! Secrets (tokens, passwords, key data, exec env values) are [`Secret`]s so `Debug` never
//! prints them; as client-go's `AuthProviderConfig.String` and `ExecConfig.String` do,
//! `Debug` also hides an auth provider's `config` and an exec plugin's `args`, and prints a
//! cluster's `server` and `proxy-url` without their userinfo.
//!
//! A file that does not parse is reported with its path, line and column and the parser's
//! message with every quoted span of the document left out ([`redact_parse_message`]): the
//! YAML around a fault may hold a token, and kubectl's own message would quote it. The
//! parser's source snippet is never used.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::ConfigError;
use crate::secret::{RedactedUrl, Secret};

/// A kubeconfig file (`clientcmdapi.Config`), or several merged.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct Kubeconfig {
    /// `apiVersion` (`v1`).
    #[serde(
        default,
        rename = "apiVersion",
        skip_serializing_if = "Option::is_none"
    )]
    pub api_version: Option<String>,
    /// `kind` (`Config`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Named clusters.
    #[serde(default, deserialize_with = "null_as_default")]
    pub clusters: Vec<NamedCluster>,
    /// Named users.
    #[serde(default, rename = "users", deserialize_with = "null_as_default")]
    pub auth_infos: Vec<NamedAuthInfo>,
    /// Named contexts.
    #[serde(default, deserialize_with = "null_as_default")]
    pub contexts: Vec<NamedContext>,
    /// The context used when none is named.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_context: Option<String>,
}

/// A cluster with its name.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct NamedCluster {
    /// The name contexts refer to.
    pub name: String,
    /// The cluster.
    #[serde(default)]
    pub cluster: Cluster,
}

/// How to reach an API server. `Debug` prints `server` and `proxy-url` without their
/// userinfo (`http://user:password@proxy:3128` as `http://***@proxy:3128`).
#[derive(Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct Cluster {
    /// `server`: the API server URL.
    #[serde(default)]
    pub server: Option<String>,
    /// `certificate-authority`: path of a PEM CA bundle.
    #[serde(default)]
    pub certificate_authority: Option<String>,
    /// `certificate-authority-data`: base64 of a PEM CA bundle.
    #[serde(default)]
    pub certificate_authority_data: Option<String>,
    /// `insecure-skip-tls-verify`.
    #[serde(default)]
    pub insecure_skip_tls_verify: bool,
    /// `tls-server-name`: the name to verify the server certificate against.
    #[serde(default)]
    pub tls_server_name: Option<String>,
    /// `proxy-url`: an `http://` proxy reached with CONNECT.
    #[serde(default)]
    pub proxy_url: Option<String>,
    /// `disable-compression`: do not ask for gzip responses.
    #[serde(default)]
    pub disable_compression: bool,
}

impl fmt::Debug for Cluster {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Destructured so that a new field cannot be forgotten here.
        let Self {
            server,
            certificate_authority,
            certificate_authority_data,
            insecure_skip_tls_verify,
            tls_server_name,
            proxy_url,
            disable_compression,
        } = self;
        f.debug_struct("Cluster")
            .field("server", &server.as_deref().map(RedactedUrl))
            .field("certificate_authority", certificate_authority)
            .field("certificate_authority_data", certificate_authority_data)
            .field("insecure_skip_tls_verify", insecure_skip_tls_verify)
            .field("tls_server_name", tls_server_name)
            .field("proxy_url", &proxy_url.as_deref().map(RedactedUrl))
            .field("disable_compression", disable_compression)
            .finish()
    }
}

/// A user with its name.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct NamedAuthInfo {
    /// The name contexts refer to.
    pub name: String,
    /// The credentials.
    #[serde(default)]
    pub user: AuthInfo,
}

/// Credentials (`clientcmdapi.AuthInfo`).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct AuthInfo {
    /// `token`: a bearer token.
    #[serde(default)]
    pub token: Option<Secret<String>>,
    /// `tokenFile`: a file holding a bearer token, re-read as it rotates.
    #[serde(default, rename = "tokenFile")]
    pub token_file: Option<String>,
    /// `client-certificate`: path of a PEM client certificate.
    #[serde(default)]
    pub client_certificate: Option<String>,
    /// `client-certificate-data`: base64 of a PEM client certificate.
    #[serde(default)]
    pub client_certificate_data: Option<String>,
    /// `client-key`: path of a PEM private key.
    #[serde(default)]
    pub client_key: Option<String>,
    /// `client-key-data`: base64 of a PEM private key.
    #[serde(default)]
    pub client_key_data: Option<Secret<String>>,
    /// `username` for basic authentication.
    #[serde(default)]
    pub username: Option<String>,
    /// `password` for basic authentication.
    #[serde(default)]
    pub password: Option<Secret<String>>,
    /// `exec`: a credential plugin.
    #[serde(default)]
    pub exec: Option<ExecConfig>,
    /// `auth-provider`: legacy in-tree providers (not supported; rejected with a clear error).
    #[serde(default, rename = "auth-provider")]
    pub auth_provider: Option<AuthProviderConfig>,
    /// `as`: impersonated user name.
    #[serde(default, rename = "as")]
    pub impersonate: Option<String>,
    /// `as-groups`: impersonated groups.
    #[serde(default, rename = "as-groups")]
    pub impersonate_groups: Option<Vec<String>>,
}

/// A legacy auth provider (`clientcmdapi.AuthProviderConfig`): its `config` holds client
/// secrets, id and refresh tokens, so it is a [`Secret`].
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct AuthProviderConfig {
    /// The provider's name, e.g. `oidc`.
    #[serde(default)]
    pub name: String,
    /// The provider's settings.
    #[serde(default)]
    pub config: Option<Secret<BTreeMap<String, String>>>,
}

/// An exec credential plugin (`clientcmdapi.ExecConfig`). `Debug` hides `args` (they may
/// carry secrets, as client-go's `ExecConfig.String` assumes); `env` values are [`Secret`]s.
#[derive(Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExecConfig {
    /// `client.authentication.k8s.io/v1` or `/v1beta1`.
    pub api_version: Option<String>,
    /// The program.
    pub command: String,
    /// Its arguments.
    #[serde(default, deserialize_with = "null_as_default")]
    pub args: Vec<String>,
    /// Extra environment variables (their values may be secrets).
    #[serde(default, deserialize_with = "null_as_default")]
    pub env: Vec<ExecEnvVar>,
    /// Printed when the command is missing.
    #[serde(default)]
    pub install_hint: Option<String>,
    /// Pass the cluster's server and CA to the plugin in `KUBERNETES_EXEC_INFO`.
    #[serde(default)]
    pub provide_cluster_info: bool,
    /// `Never`, `IfAvailable` or `Always`; kinform never has a terminal, so `Always` fails.
    #[serde(default)]
    pub interactive_mode: Option<String>,
}

impl fmt::Debug for ExecConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let args = if self.args.is_empty() {
            "[]".to_owned()
        } else {
            format!("[redacted; {} args]", self.args.len())
        };
        f.debug_struct("ExecConfig")
            .field("api_version", &self.api_version)
            .field("command", &self.command)
            .field("args", &format_args!("{args}"))
            .field("env", &self.env)
            .field("install_hint", &self.install_hint)
            .field("provide_cluster_info", &self.provide_cluster_info)
            .field("interactive_mode", &self.interactive_mode)
            .finish()
    }
}

/// One environment variable of an exec plugin.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ExecEnvVar {
    /// Name.
    pub name: String,
    /// Value.
    pub value: Secret<String>,
}

/// A context with its name.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct NamedContext {
    /// The context's name.
    pub name: String,
    /// The context.
    #[serde(default)]
    pub context: Context,
}

/// A cluster, a user and a default namespace.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Context {
    /// The cluster's name.
    #[serde(default)]
    pub cluster: String,
    /// The user's name.
    #[serde(default)]
    pub user: String,
    /// The default namespace.
    #[serde(default)]
    pub namespace: Option<String>,
}

fn null_as_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// The parser's error without anything of the document: its line and column, the field
/// path of the fault when it can be found ([`fault_path`]), and the parser's message without
/// the source snippet and with quoted spans redacted.
fn parse_message(text: &str, e: &serde_saphyr::Error) -> String {
    let inner = e.without_snippet();
    let mut out = match inner.location() {
        Some(at) => format!("line {} column {}", at.line(), at.column()),
        None => String::new(),
    };
    if let Some(path) = fault_path(text) {
        if !out.is_empty() {
            out.push_str(", ");
        }
        out.push_str("at ");
        out.push_str(&path);
    }
    if !out.is_empty() {
        out.push_str(": ");
    }
    out.push_str(&redact_parse_message(&inner.to_string()));
    out
}

/// The field path (e.g. `users[0].user.token`) of the smallest part of a document that is
/// well-formed YAML but not a kubeconfig: found by taking parts away until the rest parses.
/// Only run after a parse failed; `None` when the document is not YAML at all. At most
/// [`FAULT_PATH_TRIES`] parses are spent, and none on a file over
/// [`FAULT_PATH_MAX_BYTES`]: a huge file gets its line and column only.
fn fault_path(text: &str) -> Option<String> {
    if text.len() > FAULT_PATH_MAX_BYTES {
        return None;
    }
    let doc: serde_json::Value = serde_saphyr::from_str(text).ok()?;
    let tries = std::cell::Cell::new(0usize);
    let parses = |v: &serde_json::Value| {
        tries.set(tries.get() + 1);
        Kubeconfig::deserialize(v).is_ok()
    };
    if parses(&doc) {
        return None;
    }
    let mut path = String::new();
    let mut at: Vec<PathStep> = Vec::new();
    loop {
        let node = at.iter().try_fold(&doc, |v, step| step.get(v))?;
        let children: Vec<PathStep> = match node {
            serde_json::Value::Object(m) => m.keys().cloned().map(PathStep::Key).collect(),
            serde_json::Value::Array(a) => (0..a.len()).map(PathStep::Index).collect(),
            _ => break,
        };
        let faulty = children.into_iter().find(|child| {
            if tries.get() >= FAULT_PATH_TRIES {
                return false;
            }
            let mut without = doc.clone();
            let parent = at.iter().try_fold(&mut without, |v, step| step.get_mut(v));
            match parent {
                Some(p) => {
                    child.remove(p);
                    parses(&without)
                }
                None => false,
            }
        });
        match faulty {
            Some(step) => {
                step.push_to(&mut path);
                at.push(step);
            }
            None => break,
        }
    }
    (!path.is_empty()).then_some(path)
}

/// The most parses [`fault_path`] spends on one document.
const FAULT_PATH_TRIES: usize = 200;

/// The largest document [`fault_path`] searches (kubeconfigs are a few KiB).
const FAULT_PATH_MAX_BYTES: usize = 64 * 1024;

/// One step of a field path.
enum PathStep {
    Key(String),
    Index(usize),
}

impl PathStep {
    fn get<'v>(&self, v: &'v serde_json::Value) -> Option<&'v serde_json::Value> {
        match self {
            PathStep::Key(k) => v.get(k),
            PathStep::Index(i) => v.get(i),
        }
    }

    fn get_mut<'v>(&self, v: &'v mut serde_json::Value) -> Option<&'v mut serde_json::Value> {
        match self {
            PathStep::Key(k) => v.get_mut(k),
            PathStep::Index(i) => v.get_mut(i),
        }
    }

    fn remove(&self, parent: &mut serde_json::Value) {
        match (self, parent) {
            (PathStep::Key(k), serde_json::Value::Object(m)) => {
                m.remove(k);
            }
            (PathStep::Index(i), serde_json::Value::Array(a)) if *i < a.len() => {
                a.remove(*i);
            }
            _ => {}
        }
    }

    /// Appends the step; a key is written as is only when it is a plain name (a key of the
    /// document could be anything, even a secret pasted in the wrong place).
    fn push_to(&self, path: &mut String) {
        match self {
            PathStep::Key(k)
                if !k.is_empty()
                    && k.len() <= 64
                    && k.bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_') =>
            {
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(k);
            }
            PathStep::Key(_) => path.push_str(".[redacted key]"),
            PathStep::Index(i) => {
                path.push('[');
                path.push_str(&i.to_string());
                path.push(']');
            }
        }
    }
}

/// Redacts what a YAML or serde message may quote from the document: every `"..."` and
/// `'...'` span, and every `` `...` `` span except a field name of the kubeconfig's own shape
/// (serde's `missing field` and `duplicate field` name our fields, not the document's
/// values; unknown fields are ignored, as client-go does, so never named). The parser's own ` at line L column C` suffix is
/// dropped (the caller prints the location).
pub fn redact_parse_message(message: &str) -> String {
    let message = match message.find(" at line ") {
        Some(i) => &message[..i],
        None => message,
    };
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(i) = rest.find(['"', '\'', '`']) {
        let (head, tail) = rest.split_at(i);
        out.push_str(head);
        let quote = tail.as_bytes()[0] as char;
        let Some(end) = tail[1..].find(quote) else {
            // An unbalanced quote: drop the rest, which may be a value.
            out.push_str("[redacted]");
            return out;
        };
        let span = &tail[..end + 2];
        let names_field =
            quote == '`' && (out.ends_with("missing field ") || out.ends_with("duplicate field "));
        if names_field {
            out.push_str(span);
        } else {
            out.push_str("[redacted]");
        }
        rest = &tail[end + 2..];
    }
    out.push_str(rest);
    out
}

impl Kubeconfig {
    /// Parses one kubeconfig document; relative paths are resolved against `path`'s directory.
    pub fn parse(text: &str, path: &Path) -> Result<Self, ConfigError> {
        if text.trim().is_empty() {
            return Ok(Self::default());
        }
        let mut config: Kubeconfig =
            serde_saphyr::from_str(text).map_err(|e| ConfigError::ParseKubeconfig {
                path: path.to_owned(),
                message: parse_message(text, &e),
            })?;
        if let Some(dir) = path.parent() {
            config.resolve_paths(dir);
        }
        Ok(config)
    }

    /// Reads and parses one file.
    pub fn read_from(path: impl AsRef<Path>) -> Result<Self, ConfigError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::ReadFile {
            what: "kubeconfig",
            path: path.to_owned(),
            source,
        })?;
        Self::parse(&text, path)
    }

    /// Reads and merges several files with kubectl's rules (first definition wins).
    ///
    /// Files that do not exist are skipped, as kubectl does for `KUBECONFIG` entries; if none
    /// exists the result is [`ConfigError::NoKubeconfig`].
    pub fn read_merged(paths: &[PathBuf]) -> Result<Self, ConfigError> {
        let mut merged: Option<Kubeconfig> = None;
        for path in paths {
            if path.as_os_str().is_empty() || !path.exists() {
                continue;
            }
            let next = Self::read_from(path)?;
            merged = Some(match merged {
                None => next,
                Some(m) => m.merge(next),
            });
        }
        merged.ok_or_else(|| {
            ConfigError::NoKubeconfig(format!(
                "none of {} exists",
                paths
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })
    }

    /// The files named by a `KUBECONFIG` value (`:`-separated on Unix, `;` on Windows).
    pub fn paths_from_env_value(value: &OsStr) -> Vec<PathBuf> {
        std::env::split_paths(value)
            .filter(|p| !p.as_os_str().is_empty())
            .collect()
    }

    /// Loads what kubectl would: the files of `KUBECONFIG` merged, else `~/.kube/config`.
    pub fn read_from_env() -> Result<Self, ConfigError> {
        match std::env::var_os("KUBECONFIG") {
            Some(v) if !v.is_empty() => Self::read_merged(&Self::paths_from_env_value(&v)),
            _ => {
                let home = std::env::var_os("HOME")
                    .or_else(|| std::env::var_os("USERPROFILE"))
                    .ok_or_else(|| {
                        ConfigError::NoKubeconfig("KUBECONFIG and HOME are unset".into())
                    })?;
                let path = Path::new(&home).join(".kube").join("config");
                if !path.exists() {
                    return Err(ConfigError::NoKubeconfig(format!(
                        "KUBECONFIG is unset and {} does not exist",
                        path.display()
                    )));
                }
                Self::read_from(path)
            }
        }
    }

    /// Merges `other` into `self`: entries of `self` win, as the earlier file does in kubectl.
    #[must_use]
    pub fn merge(mut self, other: Kubeconfig) -> Kubeconfig {
        if self.current_context.as_deref().is_none_or(str::is_empty) {
            self.current_context = other.current_context;
        }
        for c in other.clusters {
            if !self.clusters.iter().any(|x| x.name == c.name) {
                self.clusters.push(c);
            }
        }
        for u in other.auth_infos {
            if !self.auth_infos.iter().any(|x| x.name == u.name) {
                self.auth_infos.push(u);
            }
        }
        for c in other.contexts {
            if !self.contexts.iter().any(|x| x.name == c.name) {
                self.contexts.push(c);
            }
        }
        self
    }

    fn resolve_paths(&mut self, dir: &Path) {
        let fix = |p: &mut Option<String>| {
            if let Some(s) = p.as_mut()
                && !s.is_empty()
                && Path::new(s.as_str()).is_relative()
            {
                *s = dir.join(s.as_str()).to_string_lossy().into_owned();
            }
        };
        for c in &mut self.clusters {
            fix(&mut c.cluster.certificate_authority);
        }
        for u in &mut self.auth_infos {
            fix(&mut u.user.client_certificate);
            fix(&mut u.user.client_key);
            fix(&mut u.user.token_file);
            if let Some(exec) = u.user.exec.as_mut() {
                // kubectl resolves a command with a path separator against the file's dir;
                // a bare name is looked up on PATH.
                if exec.command.contains('/') && Path::new(&exec.command).is_relative() {
                    exec.command = dir.join(&exec.command).to_string_lossy().into_owned();
                }
            }
        }
    }

    /// The context named `name`.
    pub fn context(&self, name: &str) -> Option<&Context> {
        self.contexts
            .iter()
            .find(|c| c.name == name)
            .map(|c| &c.context)
    }

    /// The cluster named `name`.
    pub fn cluster(&self, name: &str) -> Option<&Cluster> {
        self.clusters
            .iter()
            .find(|c| c.name == name)
            .map(|c| &c.cluster)
    }

    /// The user named `name`.
    pub fn auth_info(&self, name: &str) -> Option<&AuthInfo> {
        self.auth_infos
            .iter()
            .find(|c| c.name == name)
            .map(|c| &c.user)
    }
}
