//! `pods/exec` and `pods/attach` over a WebSocket: [`AttachParams`] in, an
//! [`AttachedProcess`] out (stdin writer, stdout/stderr readers, terminal resize, and the
//! process's final Status), the shape of kube-rs's `AttachedProcess` and of client-go's
//! `remotecommand.StreamOptions` + `Executor.StreamWithContext`.
//!
//! `v5.channel.k8s.io` is offered first, then `v4.channel.k8s.io`, as client-go's WebSocket
//! executor does. Under v5, closing the stdin writer (dropping it or `shutdown`) sends the
//! close signal, so a process reading stdin to its end (`cat`) sees EOF; v4 cannot say that,
//! and the process only sees the end of stdin when the connection ends.
//!
//! Output is pumped into bounded pipes: a caller that does not read stdout slows the
//! connection down instead of growing a buffer. Output of a stream the caller dropped is
//! discarded. The error channel is read to its end; an empty one means success (client-go's
//! v4 error decoder does the same), a `metav1.Status` is the outcome, anything else is a
//! [`ConnectError::Status`].

use std::sync::Arc;

use futures_util::{SinkExt, StreamExt};
use http::Method;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Status;
use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::Role;
use tokio_util::sync::CancellationToken;

use super::ConnectError;
use super::ws::{self, Incoming, V4_PROTOCOL, V5_PROTOCOL, channel};
use crate::transport::UpgradedIo;
use crate::{Api, Error, Result};

/// Size of each pipe between the connection and the caller's streams.
const PIPE: usize = 64 * 1024;

/// Options of an exec or attach (`PodExecOptions` / `PodAttachOptions`).
///
/// The default streams stdout and stderr, without stdin or a TTY.
#[derive(Clone, Debug, PartialEq, Eq)]
#[must_use]
pub struct AttachParams {
    /// The container; the server picks the pod's only (or default) container when `None`.
    pub container: Option<String>,
    /// Send stdin (the process gets [`AttachedProcess::stdin`]).
    pub stdin: bool,
    /// Receive stdout.
    pub stdout: bool,
    /// Receive stderr (must be false with a TTY: the terminal merges it into stdout).
    pub stderr: bool,
    /// Allocate a TTY; its size is set through [`AttachedProcess::terminal_size`].
    pub tty: bool,
}

impl Default for AttachParams {
    fn default() -> Self {
        Self {
            container: None,
            stdin: false,
            stdout: true,
            stderr: true,
            tty: false,
        }
    }
}

impl AttachParams {
    /// An interactive terminal: stdin, stdout and a TTY (no separate stderr), as
    /// `kubectl exec -it`.
    pub fn interactive_tty() -> Self {
        Self {
            container: None,
            stdin: true,
            stdout: true,
            stderr: false,
            tty: true,
        }
    }

    /// In `container`.
    pub fn container(mut self, container: impl Into<String>) -> Self {
        self.container = Some(container.into());
        self
    }

    /// Whether to send stdin.
    pub fn stdin(mut self, enabled: bool) -> Self {
        self.stdin = enabled;
        self
    }

    /// Whether to receive stdout.
    pub fn stdout(mut self, enabled: bool) -> Self {
        self.stdout = enabled;
        self
    }

    /// Whether to receive stderr.
    pub fn stderr(mut self, enabled: bool) -> Self {
        self.stderr = enabled;
        self
    }

    /// Whether to allocate a TTY.
    pub fn tty(mut self, enabled: bool) -> Self {
        self.tty = enabled;
        self
    }

    /// The query string (without `?`), or why the options are invalid.
    fn query(&self, command: &[&str]) -> std::result::Result<String, &'static str> {
        if !(self.stdin || self.stdout || self.stderr) {
            return Err("at least one of stdin, stdout and stderr must be requested");
        }
        if self.tty && self.stderr {
            return Err("stderr must be false with a TTY (the terminal merges it into stdout)");
        }
        let mut q = String::new();
        let mut push = |k: &str, v: &str| {
            if !q.is_empty() {
                q.push('&');
            }
            q.push_str(k);
            q.push('=');
            q.push_str(&super::encode(v));
        };
        for c in command {
            push("command", c);
        }
        if let Some(c) = &self.container {
            push("container", c);
        }
        for (k, on) in [
            ("stdin", self.stdin),
            ("stdout", self.stdout),
            ("stderr", self.stderr),
            ("tty", self.tty),
        ] {
            if on {
                push(k, "true");
            }
        }
        Ok(q)
    }
}

/// A terminal size, sent on the resize channel (`remotecommand.TerminalSize`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct TerminalSize {
    /// Columns.
    #[serde(rename = "Width")]
    pub width: u16,
    /// Rows.
    #[serde(rename = "Height")]
    pub height: u16,
}

/// How a process ended: the Status the server sent on the error channel.
#[derive(Clone, Debug, PartialEq)]
pub struct ExecStatus {
    status: Status,
}

impl ExecStatus {
    /// Wraps a Status.
    pub fn new(status: Status) -> Self {
        Self { status }
    }

    /// The server's Status.
    pub fn status(&self) -> &Status {
        &self.status
    }

    /// The Status, owned.
    pub fn into_status(self) -> Status {
        self.status
    }

    /// Whether the process exited with code 0.
    pub fn success(&self) -> bool {
        self.status.status.as_deref() == Some("Success")
    }

    /// The exit code: 0 on success, the `ExitCode` cause of a `NonZeroExitCode` failure;
    /// `None` when the server reports another failure (the command could not start, ...).
    pub fn exit_code(&self) -> Option<i32> {
        if self.success() {
            return Some(0);
        }
        if self.status.reason.as_deref() != Some("NonZeroExitCode") {
            return None;
        }
        self.status
            .details
            .as_ref()?
            .causes
            .as_ref()?
            .iter()
            .find(|c| c.reason.as_deref() == Some("ExitCode"))?
            .message
            .as_deref()?
            .trim()
            .parse()
            .ok()
    }

    /// The server's message (empty on success).
    pub fn message(&self) -> &str {
        self.status.message.as_deref().unwrap_or_default()
    }
}

/// A process started by exec or joined by attach.
///
/// Take the streams you asked for with [`stdin`](Self::stdin), [`stdout`](Self::stdout)
/// and [`stderr`](Self::stderr), then [`join`](Self::join) for the outcome. Dropping the
/// `AttachedProcess` does not end the connection: [`abort`](Self::abort) does.
#[derive(Debug)]
pub struct AttachedProcess {
    request: Arc<str>,
    protocol: String,
    stdin: Option<DuplexStream>,
    stdout: Option<DuplexStream>,
    stderr: Option<DuplexStream>,
    resize: Option<mpsc::Sender<TerminalSize>>,
    outcome: oneshot::Receiver<std::result::Result<ExecStatus, ConnectError>>,
    task: JoinHandle<()>,
}

impl AttachedProcess {
    /// The process's stdin (once; `None` unless asked for). Close it (drop or `shutdown`) to
    /// send end-of-file under `v5.channel.k8s.io`.
    pub fn stdin(&mut self) -> Option<DuplexStream> {
        self.stdin.take()
    }

    /// The process's stdout (once; `None` unless asked for). Ends when the process ends.
    pub fn stdout(&mut self) -> Option<DuplexStream> {
        self.stdout.take()
    }

    /// The process's stderr (once; `None` unless asked for).
    pub fn stderr(&mut self) -> Option<DuplexStream> {
        self.stderr.take()
    }

    /// A sender of terminal sizes (once; `None` without a TTY).
    pub fn terminal_size(&mut self) -> Option<mpsc::Sender<TerminalSize>> {
        self.resize.take()
    }

    /// The subprotocol the server chose (`v5.channel.k8s.io` or `v4.channel.k8s.io`).
    pub fn protocol(&self) -> &str {
        &self.protocol
    }

    /// The request that started the process.
    pub fn request(&self) -> &str {
        &self.request
    }

    /// Waits for the process to end; its Status (the exit code is
    /// [`ExecStatus::exit_code`]), or what broke the connection.
    pub async fn join(self) -> std::result::Result<ExecStatus, ConnectError> {
        let request = self.request.clone();
        drop(self.stdin);
        match self.outcome.await {
            Ok(outcome) => outcome,
            Err(_) => Err(ConnectError::Closed {
                request: request.to_string(),
                what: "process ended (the connection task stopped)".into(),
            }),
        }
    }

    /// Ends the connection at once.
    pub fn abort(&self) {
        self.task.abort();
    }
}

impl<K> Api<K> {
    /// Runs `command` in the pod `name` (`POST pods/{name}/exec` upgraded to a WebSocket),
    /// as `kubectl exec`.
    ///
    /// The pod must exist (404) and the container be in its spec (400); both come back as
    /// [`Error::Api`] with the server's Status.
    pub async fn exec<I, S>(
        &self,
        name: &str,
        command: I,
        params: &AttachParams,
    ) -> Result<AttachedProcess>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let command: Vec<String> = command.into_iter().map(|s| s.as_ref().to_owned()).collect();
        let args: Vec<&str> = command.iter().map(String::as_str).collect();
        self.remote_command(name, "exec", &args, params).await
    }

    /// Attaches to the running main process of a container of the pod `name`
    /// (`pods/{name}/attach`), as `kubectl attach`.
    pub async fn attach(&self, name: &str, params: &AttachParams) -> Result<AttachedProcess> {
        self.remote_command(name, "attach", &[], params).await
    }

    async fn remote_command(
        &self,
        name: &str,
        sub: &str,
        command: &[&str],
        params: &AttachParams,
    ) -> Result<AttachedProcess> {
        let path = format!("{}/{sub}", self.connect_path(name));
        let query = params.query(command).map_err(|m| Error::Transport {
            request: format!("GET {path}"),
            message: format!("invalid attach parameters: {m}"),
            source: None,
        })?;
        let pq = format!("{path}?{query}");
        let (io, protocol) = self
            .client()
            .upgrade_websocket(Method::GET, &pq, &[V5_PROTOCOL, V4_PROTOCOL])
            .await?;
        let request: Arc<str> = Arc::from(format!("GET {pq}"));
        Ok(start(io, protocol, request, params).await)
    }
}

async fn start(
    io: UpgradedIo,
    protocol: String,
    request: Arc<str>,
    params: &AttachParams,
) -> AttachedProcess {
    let ws = ws::websocket(io, Role::Client).await;
    let pipe = |on: bool| {
        if on {
            let (a, b) = tokio::io::duplex(PIPE);
            (Some(a), Some(b))
        } else {
            (None, None)
        }
    };
    let (stdin_user, stdin_driver) = pipe(params.stdin);
    let (stdout_user, stdout_driver) = pipe(params.stdout);
    let (stderr_user, stderr_driver) = pipe(params.stderr);
    let (resize_tx, resize_rx) = if params.tty {
        let (tx, rx) = mpsc::channel(4);
        (Some(tx), Some(rx))
    } else {
        (None, None)
    };
    let (outcome_tx, outcome) = oneshot::channel();
    let driver = Driver {
        request: request.clone(),
        v5: protocol == V5_PROTOCOL,
    };
    let task = tokio::spawn(async move {
        let result = driver
            .run(ws, stdin_driver, stdout_driver, stderr_driver, resize_rx)
            .await;
        let _ = outcome_tx.send(result);
    });
    AttachedProcess {
        request,
        protocol,
        stdin: stdin_user,
        stdout: stdout_user,
        stderr: stderr_user,
        resize: resize_tx,
        outcome,
        task,
    }
}

struct Driver {
    request: Arc<str>,
    v5: bool,
}

impl Driver {
    async fn run(
        self,
        ws: ws::Ws<UpgradedIo>,
        stdin: Option<DuplexStream>,
        stdout: Option<DuplexStream>,
        stderr: Option<DuplexStream>,
        resize: Option<mpsc::Receiver<TerminalSize>>,
    ) -> std::result::Result<ExecStatus, ConnectError> {
        let (sink, stream) = ws.split();
        let done = CancellationToken::new();
        let writer = self.write_loop(sink, stdin, resize, done.clone());
        let reader = async {
            let r = self.read_loop(stream, stdout, stderr).await;
            done.cancel();
            r
        };
        let ((), outcome) = tokio::join!(writer, reader);
        outcome
    }

    /// Sends stdin and resizes until the reader is done, then closes the WebSocket.
    async fn write_loop<S>(
        &self,
        mut sink: S,
        mut stdin: Option<DuplexStream>,
        mut resize: Option<mpsc::Receiver<TerminalSize>>,
        done: CancellationToken,
    ) where
        S: futures_util::Sink<Message> + Unpin,
        S::Error: std::fmt::Display,
    {
        let mut buf = vec![0u8; 32 * 1024];
        loop {
            let msg = tokio::select! {
                _ = done.cancelled() => break,
                n = async { stdin.as_mut().expect("guarded").read(&mut buf).await }, if stdin.is_some() => {
                    match n {
                        Ok(0) | Err(_) => {
                            stdin = None;
                            if !self.v5 {
                                continue;
                            }
                            ws::frame(channel::CLOSE, &[channel::STDIN])
                        }
                        Ok(n) => ws::frame(channel::STDIN, &buf[..n]),
                    }
                }
                size = async { resize.as_mut().expect("guarded").recv().await }, if resize.is_some() => {
                    match size {
                        None => { resize = None; continue; }
                        Some(size) => match serde_json::to_vec(&size) {
                            Ok(json) => ws::frame(channel::RESIZE, &json),
                            Err(_) => continue,
                        },
                    }
                }
            };
            if let Err(e) = sink.send(msg).await {
                // The process may have ended while stdin was still being sent; the reader
                // reports how the connection ended.
                tracing::debug!(request = &*self.request, error = %e, "exec: send failed");
                return;
            }
        }
        let _ = sink.send(ws::close_normal()).await;
        let _ = sink.close().await;
    }

    async fn read_loop<S, E>(
        &self,
        mut stream: S,
        mut stdout: Option<DuplexStream>,
        mut stderr: Option<DuplexStream>,
    ) -> std::result::Result<ExecStatus, ConnectError>
    where
        S: futures_util::Stream<Item = std::result::Result<Message, E>> + Unpin,
        E: std::error::Error + Send + Sync + 'static,
    {
        let request = &*self.request;
        let mut error = Vec::new();
        loop {
            let msg = match stream.next().await {
                None => break,
                Some(Ok(msg)) => msg,
                // A connection cut after the Status arrived still reports the Status.
                Some(Err(_)) if !error.is_empty() => break,
                Some(Err(e)) => return Err(ConnectError::websocket(request, e)),
            };
            let (ch, data) = match ws::parse(msg) {
                Incoming::Data(ch, data) => (ch, data),
                Incoming::Close => break,
                Incoming::Skip => continue,
            };
            match ch {
                channel::STDOUT => pump(&mut stdout, &data).await,
                channel::STDERR => pump(&mut stderr, &data).await,
                channel::ERROR => error.extend_from_slice(&data),
                channel::CLOSE if self.v5 => match data.first() {
                    Some(&channel::STDOUT) => stdout = None,
                    Some(&channel::STDERR) => stderr = None,
                    _ => {}
                },
                other => {
                    return Err(ConnectError::frame(
                        request,
                        Some(other),
                        "not a channel the server sends on",
                    ));
                }
            }
        }
        drop((stdout, stderr));
        decode_status(request, &error)
    }
}

/// Writes to a caller's stream; a stream the caller dropped is discarded from then on.
async fn pump(out: &mut Option<DuplexStream>, data: &[u8]) {
    if let Some(w) = out
        && w.write_all(data).await.is_err()
    {
        *out = None;
    }
}

/// The outcome carried by the error channel (empty: success).
pub(crate) fn decode_status(
    request: &str,
    error: &[u8],
) -> std::result::Result<ExecStatus, ConnectError> {
    if error.iter().all(u8::is_ascii_whitespace) {
        return Ok(ExecStatus::new(Status {
            status: Some("Success".into()),
            ..Status::default()
        }));
    }
    serde_json::from_slice(error)
        .map(ExecStatus::new)
        .map_err(|source| ConnectError::Status {
            request: request.to_owned(),
            source,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_encodes_command_and_flags() {
        let q = AttachParams::default()
            .container("app")
            .stdin(true)
            .query(&["sh", "-c", "echo a&b"])
            .unwrap();
        assert_eq!(
            q,
            "command=sh&command=-c&command=echo%20a%26b&container=app&stdin=true&stdout=true&stderr=true"
        );
        assert!(AttachParams::default().tty(true).query(&[]).is_err());
        assert!(
            AttachParams::default()
                .stdout(false)
                .stderr(false)
                .query(&[])
                .is_err()
        );
    }

    #[test]
    fn exit_codes() {
        let ok = decode_status("r", b"").unwrap();
        assert_eq!(ok.exit_code(), Some(0));
        let failed = decode_status(
            "r",
            br#"{"status":"Failure","reason":"NonZeroExitCode","message":"exit code 3","details":{"causes":[{"reason":"ExitCode","message":"3"}]}}"#,
        )
        .unwrap();
        assert_eq!(failed.exit_code(), Some(3));
        assert!(!failed.success());
        let other =
            decode_status("r", br#"{"status":"Failure","reason":"InternalError"}"#).unwrap();
        assert_eq!(other.exit_code(), None);
        assert!(matches!(
            decode_status("r", b"not json"),
            Err(ConnectError::Status { .. })
        ));
    }

    #[test]
    fn terminal_size_json() {
        let json = serde_json::to_string(&TerminalSize {
            width: 80,
            height: 24,
        })
        .unwrap();
        assert_eq!(json, r#"{"Width":80,"Height":24}"#);
    }
}
