//! exec and attach: the programmable container runtime behind `pods/exec` and
//! `pods/attach`, and the server side of the remote command channel protocol.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use http::{Request, Response};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream};
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::protocol::Role;

use crate::State;
use crate::connect::ConnectTarget;
use crate::connect::upgrade;
use crate::handlers::negotiation::body::Body;
use crate::handlers::params::Query;
use crate::status::ApiError;
use kinform_client::TerminalSize;
use kinform_client::connect::ws::{self, Incoming as Frame, V4_PROTOCOL, V5_PROTOCOL, channel};

/// What an exec handler returns: the exit code, or why the command could not run (the
/// server reports it as a Failure Status with reason `InternalError`).
pub type ExecResult = Result<i32, String>;

/// A registered exec handler.
pub(crate) type Handler =
    Arc<dyn Fn(ExecContext) -> Pin<Box<dyn Future<Output = ExecResult> + Send>> + Send + Sync>;

/// One exec or attach, as the container runtime sees it.
#[derive(Debug)]
pub struct ExecContext {
    /// The pod's namespace.
    pub namespace: String,
    /// The pod.
    pub pod: String,
    /// The container.
    pub container: String,
    /// The command (empty for attach).
    pub command: Vec<String>,
    /// Whether this is an attach to the container's main process.
    pub attach: bool,
    /// Whether the client asked for a TTY.
    pub tty: bool,
    /// The container's environment: its `env` entries with literal values, and `HOSTNAME`.
    pub env: Vec<(String, String)>,
    /// The client's stdin; at end-of-file at once when the client sends none, and when the
    /// client closes it (`v5.channel.k8s.io`) or the connection ends.
    pub stdin: DuplexStream,
    /// Written bytes reach the client's stdout (discarded when it did not ask for it).
    pub stdout: DuplexStream,
    /// Written bytes reach the client's stderr (discarded when it did not ask for it).
    pub stderr: DuplexStream,
    /// Terminal sizes the client sends (TTY only).
    pub resize: mpsc::Receiver<TerminalSize>,
}

/// The query of an exec or attach.
#[derive(Debug, Default)]
struct Options {
    command: Vec<String>,
    container: Option<String>,
    stdin: bool,
    stdout: bool,
    stderr: bool,
    tty: bool,
}

/// `PodExecOptions` / `PodAttachOptions` as kube-apiserver decodes them from the query:
/// `command` repeated, the rest by their first value, and the booleans by the same
/// conversion as every query boolean (`Query::flag`: `0` and `false` in any case are false,
/// anything else true; the Python client sends `stdout=True`).
fn parse_query(q: Option<&str>) -> Options {
    let mut o = Options::default();
    for pair in q.unwrap_or_default().split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        if k == "command" {
            let v = v.replace('+', " ");
            let v = percent_encoding::percent_decode_str(&v)
                .decode_utf8_lossy()
                .into_owned();
            o.command.push(v);
        }
    }
    let query = Query::parse(q);
    let flag = |k: &str| query.flag(k).unwrap_or(false);
    o.container = query.get("container").map(str::to_owned);
    o.stdin = flag("stdin");
    o.stdout = flag("stdout");
    o.stderr = flag("stderr");
    o.tty = flag("tty");
    o
}

/// The container a connect or log request names, resolved as kube-apiserver's
/// `validateContainer` and `FindContainerByName` do: without a name the pod's only entry of
/// `spec.containers`, otherwise 400 listing every container (init, regular, ephemeral); a
/// name must be one of them (400 `container x is not valid for pod y`).
pub(crate) fn resolve_container<'a>(
    pod: &'a Value,
    name: &str,
    wanted: Option<&str>,
) -> Result<&'a Value, ApiError> {
    let spec = &pod["spec"];
    let all: Vec<&Value> = ["initContainers", "containers", "ephemeralContainers"]
        .iter()
        .filter_map(|k| spec[*k].as_array())
        .flatten()
        .collect();
    let regular: Vec<&Value> = spec["containers"]
        .as_array()
        .into_iter()
        .flatten()
        .collect();
    let wanted = match wanted.filter(|w| !w.is_empty()) {
        Some(w) => w.to_owned(),
        None => match regular.as_slice() {
            [only] => only["name"].as_str().unwrap_or_default().to_owned(),
            [] => {
                return Err(ApiError::bad_request(format!(
                    "a container name must be specified for pod {name}"
                )));
            }
            _ => {
                let names: Vec<&str> = all.iter().filter_map(|c| c["name"].as_str()).collect();
                return Err(ApiError::bad_request(format!(
                    "a container name must be specified for pod {name}, choose one of: [{}]",
                    names.join(" ")
                )));
            }
        },
    };
    all.into_iter()
        .find(|c| c["name"].as_str() == Some(wanted.as_str()))
        .ok_or_else(|| {
            ApiError::bad_request(format!("container {wanted} is not valid for pod {name}"))
        })
}

/// The container named by `wanted` in the pod, with its literal environment.
fn container(
    pod: &Value,
    name: &str,
    wanted: Option<&str>,
) -> Result<(String, Vec<(String, String)>), ApiError> {
    let found = resolve_container(pod, name, wanted)?;
    let mut env = vec![("HOSTNAME".to_owned(), name.to_owned())];
    for e in found["env"].as_array().into_iter().flatten() {
        if let (Some(k), Some(v)) = (e["name"].as_str(), e["value"].as_str()) {
            env.push((k.to_owned(), v.to_owned()));
        }
    }
    Ok((found["name"].as_str().unwrap_or_default().to_owned(), env))
}

/// Validates, answers 101 and runs the session on the upgraded connection.
pub(crate) fn serve(
    state: &Arc<State>,
    mut req: Request<Incoming>,
    t: &ConnectTarget,
    pod: &Value,
) -> Result<Response<Body>, ApiError> {
    let o = parse_query(req.uri().query());
    let attach = t.sub == "attach";
    if !attach && o.command.is_empty() {
        return Err(ApiError::bad_request("you must specify at least 1 command"));
    }
    if !(o.stdin || o.stdout || o.stderr) {
        return Err(ApiError::bad_request(
            "you must specify at least 1 of stdin, stdout, stderr",
        ));
    }
    let (container, env) = container(pod, t.name(), o.container.as_deref())?;
    let accepted = upgrade::accept(&mut req, &[V5_PROTOCOL, V4_PROTOCOL])?;
    let handler = state
        .connect
        .exec
        .read()
        .get(&(t.namespace.clone(), t.name().to_owned()))
        .cloned();
    let (stdin_rt, stdin_srv) = tokio::io::duplex(64 * 1024);
    let (stdout_rt, stdout_srv) = tokio::io::duplex(64 * 1024);
    let (stderr_rt, stderr_srv) = tokio::io::duplex(64 * 1024);
    let (resize_tx, resize_rx) = mpsc::channel(8);
    let ctx = ExecContext {
        namespace: t.namespace.clone(),
        pod: t.name().to_owned(),
        container,
        command: o.command.clone(),
        attach,
        tty: o.tty,
        env,
        stdin: stdin_rt,
        stdout: stdout_rt,
        stderr: stderr_rt,
        resize: resize_rx,
    };
    let v5 = accepted.protocol == V5_PROTOCOL;
    let cancel = state.cancel.clone();
    let on_upgrade = accepted.on_upgrade;
    tokio::spawn(async move {
        let Ok(upgraded) = on_upgrade.await else {
            return;
        };
        let ws = ws::websocket(TokioIo::new(upgraded), Role::Server).await;
        let run: Pin<Box<dyn Future<Output = ExecResult> + Send>> = match handler {
            Some(h) => h(ctx),
            None => Box::pin(builtin(ctx)),
        };
        let session = Session {
            v5,
            options: o,
            stdin: Some(stdin_srv),
            resize: Some(resize_tx),
        };
        tokio::select! {
            _ = session.run(ws, run, stdout_srv, stderr_srv) => {}
            _ = cancel.cancelled() => {}
        }
    });
    Ok(accepted.response)
}

struct Session {
    v5: bool,
    options: Options,
    stdin: Option<DuplexStream>,
    resize: Option<mpsc::Sender<TerminalSize>>,
}

impl Session {
    async fn run<S>(
        mut self,
        ws: ws::Ws<S>,
        run: Pin<Box<dyn Future<Output = ExecResult> + Send>>,
        mut stdout: DuplexStream,
        mut stderr: DuplexStream,
    ) where
        S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
    {
        let (mut sink, mut stream) = ws.split();
        if !self.options.stdin {
            self.stdin = None;
        }
        let mut run = Some(run);
        let mut result: Option<ExecResult> = None;
        let (mut out_open, mut err_open, mut client_open) = (true, true, true);
        let mut out_buf = vec![0u8; 32 * 1024];
        let mut err_buf = vec![0u8; 32 * 1024];
        while result.is_none() || out_open || err_open {
            let frame = tokio::select! {
                r = async { run.as_mut().expect("guarded").await }, if run.is_some() => {
                    run = None;
                    result = Some(r);
                    continue;
                }
                n = stdout.read(&mut out_buf), if out_open => match n {
                    Ok(0) | Err(_) => { out_open = false; continue; }
                    Ok(n) if self.options.stdout => ws::frame(channel::STDOUT, &out_buf[..n]),
                    Ok(_) => continue,
                },
                n = stderr.read(&mut err_buf), if err_open => match n {
                    Ok(0) | Err(_) => { err_open = false; continue; }
                    Ok(n) if self.options.stderr => ws::frame(channel::STDERR, &err_buf[..n]),
                    Ok(_) => continue,
                },
                msg = stream.next(), if client_open => {
                    match msg.map(|m| m.map(ws::parse)) {
                        Some(Ok(Frame::Data(ch, data))) => self.client_frame(ch, data).await,
                        Some(Ok(Frame::Skip)) => {}
                        _ => {
                            // The client left: the process sees the end of stdin.
                            client_open = false;
                            self.stdin = None;
                            self.resize = None;
                        }
                    }
                    continue;
                }
            };
            if sink.send(frame).await.is_err() {
                client_open = false;
                self.stdin = None;
            }
        }
        let status = match result.unwrap_or(Ok(0)) {
            Ok(0) => json!({"metadata": {}, "status": "Success"}),
            Ok(code) => json!({
                "metadata": {},
                "status": "Failure",
                "message": format!("command terminated with non-zero exit code: error executing command {:?}, exit code {code}", self.options.command),
                "reason": "NonZeroExitCode",
                "details": {"causes": [{"reason": "ExitCode", "message": code.to_string()}]},
            }),
            Err(message) => json!({
                "metadata": {},
                "status": "Failure",
                "message": message,
                "reason": "InternalError",
                "code": 500,
            }),
        };
        let bytes = serde_json::to_vec(&status).unwrap_or_default();
        let _ = sink.send(ws::frame(channel::ERROR, &bytes)).await;
        let _ = sink.send(ws::close_normal()).await;
        let _ = sink.close().await;
    }

    async fn client_frame(&mut self, ch: u8, data: Bytes) {
        match ch {
            channel::STDIN => {
                if let Some(w) = &mut self.stdin
                    && w.write_all(&data).await.is_err()
                {
                    self.stdin = None;
                }
            }
            channel::RESIZE => {
                if let (Some(tx), Ok(size)) = (&self.resize, serde_json::from_slice(&data)) {
                    let _ = tx.try_send(size);
                }
            }
            channel::CLOSE if self.v5 && data.first() == Some(&channel::STDIN) => {
                self.stdin = None;
            }
            _ => {}
        }
    }
}

/// The built-in commands (see the module docs of `connect`).
async fn builtin(mut ctx: ExecContext) -> ExecResult {
    if ctx.attach {
        tokio::io::copy(&mut ctx.stdin, &mut ctx.stdout)
            .await
            .map_err(|e| e.to_string())?;
        return Ok(0);
    }
    let command = ctx.command.clone();
    match command.as_slice() {
        [sh, flag, script, ..] if is_shell(sh) && flag == "-c" => {
            for part in script.split(';').map(str::trim).filter(|p| !p.is_empty()) {
                let words = shell_words(part);
                if let [exit, code] = words.as_slice()
                    && exit == "exit"
                {
                    return code
                        .parse()
                        .map_err(|_| format!("exit: {code}: numeric argument required"));
                }
                let code = simple(&mut ctx, &words).await?;
                if code != 0 {
                    return Ok(code);
                }
            }
            Ok(0)
        }
        words => simple(&mut ctx, words).await,
    }
}

fn is_shell(s: &str) -> bool {
    matches!(s, "sh" | "bash" | "/bin/sh" | "/bin/bash")
}

/// Splits on spaces, honouring single and double quotes.
fn shell_words(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quote = None;
    let mut any = false;
    for c in s.chars() {
        match (quote, c) {
            (None, '\'' | '"') => {
                quote = Some(c);
                any = true;
            }
            (Some(q), c) if c == q => quote = None,
            (None, ' ' | '\t') => {
                if any {
                    out.push(std::mem::take(&mut cur));
                    any = false;
                }
            }
            (_, c) => {
                cur.push(c);
                any = true;
            }
        }
    }
    if any {
        out.push(cur);
    }
    out
}

async fn simple(ctx: &mut ExecContext, words: &[String]) -> ExecResult {
    let io = |e: std::io::Error| e.to_string();
    let Some((cmd, args)) = words.split_first() else {
        return Ok(0);
    };
    match cmd.as_str() {
        "echo" => {
            let (args, to_err) = match args.split_last() {
                Some((last, rest)) if last == ">&2" => (rest, true),
                _ => (args, false),
            };
            let line = format!("{}\n", args.join(" "));
            let out = if to_err {
                &mut ctx.stderr
            } else {
                &mut ctx.stdout
            };
            out.write_all(line.as_bytes()).await.map_err(io)?;
            Ok(0)
        }
        "cat" if args.is_empty() => {
            tokio::io::copy(&mut ctx.stdin, &mut ctx.stdout)
                .await
                .map_err(io)?;
            Ok(0)
        }
        "env" if args.is_empty() => {
            let mut text = String::new();
            for (k, v) in &ctx.env {
                text.push_str(&format!("{k}={v}\n"));
            }
            ctx.stdout.write_all(text.as_bytes()).await.map_err(io)?;
            Ok(0)
        }
        "true" => Ok(0),
        "false" => Ok(1),
        "sleep" if args.iter().all(|a| a == "0") => Ok(0),
        _ => Err(format!(
            "OCI runtime exec failed: exec failed: unable to start container process: exec: {cmd:?}: executable file not found in $PATH (TestApiServer runs echo, cat, env, true, false and sh -c; register others with on_exec)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_and_words() {
        let o = parse_query(Some(
            "command=sh&command=-c&command=echo+a%26b&stdin=true&tty=1",
        ));
        assert_eq!(o.command, ["sh", "-c", "echo a&b"]);
        assert!(o.stdin && o.tty && !o.stdout);
        assert_eq!(shell_words("echo 'a b' \"c\" d"), ["echo", "a b", "c", "d"]);
    }

    /// kube-apiserver decodes PodExecOptions' booleans as every query boolean
    /// (`Convert_Slice_string_To_bool`): `0` and `false` in any case are false, any other
    /// value true, so the Python client's `True` is true (and, unlike `strconv.ParseBool`,
    /// so are `f` and `yes`).
    #[test]
    fn exec_booleans_follow_the_query_conversion() {
        for yes in ["1", "t", "T", "TRUE", "true", "True", "f", "yes"] {
            let o = parse_query(Some(&format!(
                "command=ls&stdout={yes}&stderr={yes}&stdin={yes}&tty={yes}"
            )));
            assert!(o.stdout && o.stderr && o.stdin && o.tty, "{yes}");
        }
        for no in ["0", "FALSE", "false", "False"] {
            let o = parse_query(Some(&format!("command=ls&stdout={no}&tty={no}")));
            assert!(!o.stdout && !o.tty, "{no}");
        }
        assert!(!parse_query(Some("command=ls")).stdout);
    }

    #[test]
    fn container_rules() {
        let pod = json!({"spec": {"containers": [{"name": "a", "env": [{"name": "X", "value": "1"}]}, {"name": "b"}]}});
        assert_eq!(
            container(&pod, "p", Some("a")).unwrap().1[1],
            ("X".into(), "1".into())
        );
        assert_eq!(container(&pod, "p", Some("c")).unwrap_err().code, 400);
        let e = container(&pod, "p", None).unwrap_err();
        assert_eq!(
            e.message,
            "a container name must be specified for pod p, choose one of: [a b]"
        );
        // Without a name, the only regular container is taken even beside init containers.
        let pod =
            json!({"spec": {"initContainers": [{"name": "i"}], "containers": [{"name": "a"}]}});
        assert_eq!(container(&pod, "p", None).unwrap().0, "a");
    }
}
