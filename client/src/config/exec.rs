//! Exec credential plugins (client.authentication.k8s.io v1 and v1beta1).
//!
//! As client-go's `plugin/pkg/client/auth/exec`: the plugin is run with its `args` and `env`
//! plus `KUBERNETES_EXEC_INFO`, a JSON `ExecCredential` whose `spec` says whether the plugin
//! may interact (never, here) and, with `provideClusterInfo`, describes the cluster. It prints
//! an `ExecCredential` whose `status` carries a bearer token and/or a client certificate and
//! key, and optionally an `expirationTimestamp` after which it is run again. The answer's
//! `apiVersion` must be the one requested.
//!
//! The plugin's stderr is the process's stderr, as client-go wires it (`cmd.Stderr =
//! os.Stderr`), so its prompts and diagnostics reach the user the way kubectl shows them, and
//! never an error value that could be logged elsewhere.
//!
//! A plugin that hangs is bounded, which client-go does not do (it decided against killing
//! plugins because an interactive first login may take long; kinform never runs a plugin
//! interactively): after [`ExecAuth::timeout`] (default [`DEFAULT_EXEC_TIMEOUT`]) the
//! plugin's whole process group is killed (it runs in a group of its own, so helpers it
//! started go too, and a grandchild holding its stdout open cannot keep the wait alive) and
//! the error says so. The same happens when the run is cancelled (its future dropped, e.g.
//! by a timeout around the request that needed the credential): a run that did not finish
//! takes its process group with it, whichever way it ends.

use std::process::Stdio;
use std::time::Duration;

use serde::Deserialize;

use super::{ConfigError, ExecAuth};
use crate::secret::Secret;

const V1: &str = "client.authentication.k8s.io/v1";
const V1BETA1: &str = "client.authentication.k8s.io/v1beta1";

/// How long a plugin may run before it is killed, unless [`ExecAuth::timeout`] says
/// otherwise: long enough for a plugin that fetches a token over a slow network, short
/// enough that a hung plugin surfaces as an error.
pub const DEFAULT_EXEC_TIMEOUT: Duration = Duration::from_secs(120);

/// The credential a plugin returned.
#[derive(Clone, Debug, Default)]
pub struct ExecCredential {
    /// Bearer token.
    pub token: Option<Secret<String>>,
    /// PEM client certificate.
    pub client_certificate_pem: Option<Vec<u8>>,
    /// PEM client key.
    pub client_key_pem: Option<Secret<Vec<u8>>>,
    /// When the credential stops being valid; `None` means never.
    pub expiration: Option<jiff::Timestamp>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawCredential {
    api_version: Option<String>,
    kind: Option<String>,
    status: Option<RawStatus>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawStatus {
    expiration_timestamp: Option<String>,
    token: Option<Secret<String>>,
    client_certificate_data: Option<String>,
    client_key_data: Option<Secret<String>>,
}

/// Runs the plugin once and parses its credential.
pub async fn run_exec_plugin(auth: &ExecAuth) -> Result<ExecCredential, ConfigError> {
    let exec = &auth.config;
    let fail = |message: String| ConfigError::Exec {
        command: exec.command.clone(),
        message,
    };
    let api_version = exec.api_version.as_deref().unwrap_or(V1BETA1);
    if api_version != V1 && api_version != V1BETA1 {
        return Err(fail(format!(
            "apiVersion {api_version:?} is not supported (use {V1} or {V1BETA1})"
        )));
    }
    if exec.interactive_mode.as_deref() == Some("Always") {
        return Err(fail(
            "interactiveMode Always needs a terminal, which kinform never has".into(),
        ));
    }
    let mut spec = serde_json::json!({ "interactive": false });
    if let Some(cluster) = &auth.cluster_info {
        spec["cluster"] = cluster.clone();
    }
    let info =
        serde_json::json!({ "apiVersion": api_version, "kind": "ExecCredential", "spec": spec });

    let mut cmd = tokio::process::Command::new(&exec.command);
    cmd.args(&exec.args)
        .env("KUBERNETES_EXEC_INFO", info.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        // Passed on as client-go does; never copied into an error (it may hold prompts or
        // secrets).
        .stderr(Stdio::inherit())
        .kill_on_drop(true);
    #[cfg(unix)]
    cmd.process_group(0);
    for var in &exec.env {
        cmd.env(&var.name, var.value.expose());
    }
    let child = cmd.spawn().map_err(|e| {
        let hint = exec
            .install_hint
            .as_deref()
            .map(|h| format!("; {h}"))
            .unwrap_or_default();
        fail(format!("cannot run: {e}{hint}"))
    })?;
    let mut run = Running::new(child);
    let limit = auth.timeout.unwrap_or(DEFAULT_EXEC_TIMEOUT);
    let (stdout, status) = match tokio::time::timeout(limit, run.output()).await {
        Ok(done) => done.map_err(|e| fail(format!("cannot read its output: {e}")))?,
        // Dropping `run` on the way out kills the group.
        Err(_) => {
            return Err(fail(format!(
                "did not finish within {limit:?}; it and its process group were killed"
            )));
        }
    };
    run.finished();
    if !status.success() {
        // stderr went to the process's stderr, as kubectl shows it.
        return Err(fail(format!("exited with {status}")));
    }
    parse_credential(&stdout, api_version).map_err(fail)
}

/// A started plugin. Unless [`Running::finished`] was called, dropping it (a timeout, an
/// error, or the caller's future being dropped mid-run) kills the plugin's process group,
/// then the plugin itself (`kill_on_drop`).
struct Running {
    child: tokio::process::Child,
    /// The plugin's pid, which is its process group's id (it was started as a group leader).
    group: Option<u32>,
    done: bool,
}

impl Running {
    fn new(child: tokio::process::Child) -> Self {
        Self {
            group: child.id(),
            child,
            done: false,
        }
    }

    /// All of stdout, and the exit status, read together (a plugin writing more than a pipe
    /// holds would otherwise never exit).
    async fn output(&mut self) -> std::io::Result<(Vec<u8>, std::process::ExitStatus)> {
        use tokio::io::AsyncReadExt as _;
        let mut stdout = self.child.stdout.take();
        let mut out = Vec::new();
        let read = async {
            match stdout.as_mut() {
                Some(pipe) => pipe.read_to_end(&mut out).await.map(drop),
                None => Ok(()),
            }
        };
        let (read, status) = tokio::join!(read, self.child.wait());
        read?;
        Ok((out, status?))
    }

    /// The plugin exited and its stdout was closed: its group is left alone.
    fn finished(&mut self) {
        self.done = true;
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if !self.done {
            kill_group(self.group);
        }
    }
}

/// Kills the process group `pgid`. While the plugin is unreaped its pid stays reserved, so
/// the group is the plugin's; after the plugin exited, a member holding stdout open (the
/// only way the run can still be unfinished then) keeps the group id in use.
#[cfg(unix)]
fn kill_group(pgid: Option<u32>) {
    let pgid = pgid
        .and_then(|p| i32::try_from(p).ok())
        .and_then(rustix::process::Pid::from_raw);
    if let Some(pgid) = pgid {
        // The group may be gone already; nothing else to do then.
        let _ = rustix::process::kill_process_group(pgid, rustix::process::Signal::KILL);
    }
}

#[cfg(not(unix))]
fn kill_group(_pgid: Option<u32>) {}

fn parse_credential(stdout: &[u8], api_version: &str) -> Result<ExecCredential, String> {
    let raw: RawCredential = serde_json::from_slice(stdout)
        .map_err(|e| format!("output is not an ExecCredential: {e}"))?;
    if raw.kind.as_deref() != Some("ExecCredential") {
        return Err(format!(
            "output has kind {:?}, want ExecCredential",
            raw.kind
        ));
    }
    if raw.api_version.as_deref() != Some(api_version) {
        return Err(format!(
            "output has apiVersion {:?}, want {api_version:?}",
            raw.api_version
        ));
    }
    let status = raw.status.ok_or("output has no status")?;
    let expiration = match status.expiration_timestamp.as_deref() {
        Some(ts) => Some(
            ts.parse::<jiff::Timestamp>()
                .map_err(|e| format!("bad expirationTimestamp {ts:?}: {e}"))?,
        ),
        None => None,
    };
    let cred = ExecCredential {
        token: status.token.filter(|t| !t.expose().is_empty()),
        client_certificate_pem: status.client_certificate_data.map(String::into_bytes),
        client_key_pem: status
            .client_key_data
            .map(|k| Secret::new(k.into_inner().into_bytes())),
        expiration,
    };
    if cred.client_certificate_pem.is_some() != cred.client_key_pem.is_some() {
        return Err("status has only one of clientCertificateData and clientKeyData".into());
    }
    if cred.token.is_none() && cred.client_certificate_pem.is_none() {
        return Err("status has neither a token nor a client certificate".into());
    }
    Ok(cred)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_v1_token_with_expiry() {
        let out = br#"{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential",
            "status":{"token":"abc","expirationTimestamp":"2030-01-01T00:00:00Z"}}"#;
        let c = parse_credential(out, V1).unwrap();
        assert_eq!(c.token.unwrap().expose(), "abc");
        assert_eq!(c.expiration.unwrap().to_string(), "2030-01-01T00:00:00Z");
    }

    #[test]
    fn rejects_wrong_version_and_empty_status() {
        let out = br#"{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"x"}}"#;
        assert!(
            parse_credential(out, V1BETA1)
                .unwrap_err()
                .contains("apiVersion")
        );
        let out = br#"{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{}}"#;
        assert!(parse_credential(out, V1).unwrap_err().contains("neither"));
        assert!(parse_credential(b"not json", V1).is_err());
    }
}
