//! Connect subresources served for real: `pods/exec` and `pods/attach` over WebSocket
//! (`v5.channel.k8s.io`, `v4.channel.k8s.io`), `pods/portforward` over SPDY/3.1 (tunneled in a
//! WebSocket as kubectl 1.31+ does, or by a direct `Upgrade: SPDY/3.1`, kubectl's fallback)
//! and over the WebSocket channel protocol (kinform's client), the `proxy` subresource of
//! pods, services and nodes, and `pods/log` (`log`: what the kubelet answers, or the text a
//! test sets with [`TestApiServer::set_pod_log`]).
//!
//! A real API server hands these to the kubelet and the container runtime; here tests stand
//! in for them:
//! - exec and attach run a programmable container runtime: [`TestApiServer::on_exec`]
//!   registers a handler per pod (it receives the command, stdin, stdout, stderr and terminal
//!   resizes, and returns the exit code); without one, a few built-in commands run
//!   (`echo`, `cat`, `env`, `true`, `false`, `sleep 0`, and `sh -c` over `;`-separated
//!   commands among these and `exit N`, with `>&2` sending echo to stderr), so kubectl
//!   works with no setup. Attach without a handler echoes stdin to stdout;
//! - port-forward connects each forwarded connection to the loopback address a test
//!   registered with [`TestApiServer::port_forward_backend`] for the pod's port, and reports
//!   a kubelet-worded message on the connection's error stream (channel) when there is none
//!   or it cannot be reached (`portforward`: the SPDY stream pairing of the kubelet, `spdy`:
//!   the protocol, `tunnel`: SPDY inside WebSocket messages);
//! - proxy forwards to the base URL registered with [`TestApiServer::proxy_backend`] for
//!   the pod, service or node, and answers 503 with a Status when there is none.
//!
//! Checks as the real server: the pod (service, node) must exist (404), the container must
//! be in the pod's spec and must be named when the pod has several (400); an exec or attach
//! that is not a WebSocket upgrade (kubectl's SPDY fallback) gets 400; a SPDY port-forward
//! upgrade is negotiated as the kubelet does (`X-Stream-Protocol-Version`: 400 without it,
//! 403 with no protocol in common). Not reproduced: the pod's phase (exec and port-forward
//! work on a pod that is not Running; kubectl checks it for port-forward), SPDY for exec and
//! attach, the base64 protocols, and of port-forward: SPDY flow control (neither does the
//! kubelet's spdystream enforce it), the kubelet's 4-hour idle timeout, the
//! `X-Accepted-Stream-Protocol-Versions` header of a 403, and the pod in error messages
//! (`namespace/name` here, the sandbox id with a CRI runtime). Refusals are `Status` objects
//! where the kubelet writes plain text.

mod exec;
pub(crate) mod log;
mod portforward;
mod proxy;
mod spdy;
mod tunnel;
mod upgrade;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;

use http::{Request, Response};
use hyper::body::Incoming;
use parking_lot::RwLock;
use serde_json::Value;

pub(crate) use exec::resolve_container;
pub use exec::{ExecContext, ExecResult};

use crate::handlers::negotiation::body::Body;
use crate::status::ApiError;
use crate::storage::object_key;
use crate::{State, TestApiServer};

/// What a connect request points at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ConnectTarget {
    /// `pods`, `services` or `nodes`.
    plural: &'static str,
    namespace: String,
    /// The path's name segment: `name`, `name:port` or `scheme:name:port` for proxy.
    raw_name: String,
    /// `exec`, `attach`, `portforward` or `proxy`.
    sub: &'static str,
    /// For proxy: the path after `proxy` (`""` or `/...`).
    rest: String,
}

impl ConnectTarget {
    /// The verb the authorizer checks: `create` for exec, attach and port-forward (their
    /// WebSocket upgrade needs it since Kubernetes 1.35), the HTTP verb for proxy.
    pub(crate) fn verb(&self, method: &http::Method) -> &'static str {
        match (self.sub, method.as_str()) {
            ("proxy", "GET" | "HEAD" | "OPTIONS") => "get",
            ("proxy", "PUT") => "update",
            ("proxy", "PATCH") => "patch",
            ("proxy", "DELETE") => "delete",
            _ => "create",
        }
    }

    /// The request as the authorizer sees it.
    pub(crate) fn attributes(&self, verb: &'static str) -> crate::authorization::Attributes<'_> {
        crate::authorization::Attributes {
            verb,
            group: "",
            resource: self.plural,
            subresource: Some(self.sub),
            namespace: (!self.namespace.is_empty()).then_some(self.namespace.as_str()),
            name: Some(self.name()),
        }
    }

    /// The object's name, without scheme and port.
    fn name(&self) -> &str {
        let parts: Vec<&str> = self.raw_name.split(':').collect();
        match parts.as_slice() {
            [_, name, _] => name,
            [name, _] | [name] => name,
            _ => &self.raw_name,
        }
    }
}

/// Recognises a connect path (`segs` are the path's segments).
pub(crate) fn target(raw_path: &str) -> Option<ConnectTarget> {
    let segs: Vec<&str> = raw_path.split('/').skip(1).collect();
    let decode = |s: &str| {
        percent_encoding::percent_decode_str(s)
            .decode_utf8_lossy()
            .into_owned()
    };
    let rest_after = |n: usize| -> String {
        let tail: Vec<&str> = segs.iter().skip(n).copied().collect();
        if tail.is_empty() {
            String::new()
        } else {
            format!("/{}", tail.join("/"))
        }
    };
    let sub_of = |s: &str| -> Option<&'static str> {
        Some(match s {
            "exec" => "exec",
            "attach" => "attach",
            "portforward" => "portforward",
            "proxy" => "proxy",
            _ => return None,
        })
    };
    match segs.as_slice() {
        [
            "api",
            "v1",
            "namespaces",
            ns,
            plural @ ("pods" | "services"),
            name,
            sub,
            tail @ ..,
        ] => {
            let sub = sub_of(sub)?;
            let plural = if *plural == "pods" {
                "pods"
            } else {
                "services"
            };
            if sub != "proxy" && (plural == "services" || !tail.is_empty()) {
                return None;
            }
            Some(ConnectTarget {
                plural,
                namespace: decode(ns),
                raw_name: decode(name),
                sub,
                rest: rest_after(7),
            })
        }
        ["api", "v1", "nodes", name, "proxy", ..] => Some(ConnectTarget {
            plural: "nodes",
            namespace: String::new(),
            raw_name: decode(name),
            sub: "proxy",
            rest: rest_after(5),
        }),
        _ => None,
    }
}

/// Registered exec handlers and backends.
#[derive(Default)]
pub(crate) struct Connect {
    exec: RwLock<HashMap<(String, String), exec::Handler>>,
    port_backends: RwLock<HashMap<(String, String, u16), SocketAddr>>,
    proxy_backends: RwLock<HashMap<(String, String, String), String>>,
    /// Container logs by (namespace, pod, container), served by `log`.
    logs: RwLock<HashMap<(String, String, String), String>>,
}

impl Connect {
    /// The log a test registered for a container.
    pub(crate) fn pod_log(&self, namespace: &str, pod: &str, container: &str) -> Option<String> {
        self.logs
            .read()
            .get(&(namespace.to_owned(), pod.to_owned(), container.to_owned()))
            .cloned()
    }
}

/// Serves one connect request.
pub(crate) async fn handle(
    state: &Arc<State>,
    req: Request<Incoming>,
    t: ConnectTarget,
) -> Result<Response<Body>, ApiError> {
    let object = lookup(state, &t)?;
    match t.sub {
        "exec" | "attach" => exec::serve(state, req, &t, &object),
        "portforward" => portforward::serve(state, req, &t, &object),
        _ => proxy::serve(state, req, &t).await,
    }
}

/// The object the request names, or the real server's 404.
fn lookup(state: &State, t: &ConnectTarget) -> Result<Value, ApiError> {
    let inner = state.storage.lock();
    let not_found = || ApiError::not_found("", t.plural, t.name());
    let info = inner
        .registry
        .get("", "v1", t.plural)
        .ok_or_else(not_found)?;
    let obj = inner
        .get(&info.storage_key(), &object_key(&t.namespace, t.name()))
        .ok_or_else(not_found)?;
    Ok(obj.value())
}

impl TestApiServer {
    /// Runs `handler` for every exec and attach in the pod `namespace/pod` (any container)
    /// instead of the built-in commands. The handler gets an [`ExecContext`] and returns the
    /// exit code (`Ok(0)` is success), or `Err(message)` when the command cannot run.
    ///
    /// ```no_run
    /// # async fn demo(server: kinform_testserver::TestApiServer) {
    /// use tokio::io::AsyncWriteExt;
    /// server.on_exec("default", "web", |mut ctx| async move {
    ///     ctx.stdout.write_all(format!("ran {:?}\n", ctx.command).as_bytes()).await.ok();
    ///     Ok(0)
    /// });
    /// # }
    /// ```
    pub fn on_exec<F, Fut>(&self, namespace: &str, pod: &str, handler: F)
    where
        F: Fn(ExecContext) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = ExecResult> + Send + 'static,
    {
        let handler: exec::Handler = Arc::new(move |ctx| Box::pin(handler(ctx)));
        self.state
            .connect
            .exec
            .write()
            .insert((namespace.to_owned(), pod.to_owned()), handler);
    }

    /// Connects port-forwards to `port` of the pod `namespace/pod` to `backend` (a loopback
    /// listener the test runs).
    pub fn port_forward_backend(&self, namespace: &str, pod: &str, port: u16, backend: SocketAddr) {
        self.state
            .connect
            .port_backends
            .write()
            .insert((namespace.to_owned(), pod.to_owned(), port), backend);
    }

    /// Makes `text` the log of `container` in the pod `namespace/pod`, as the kubelet would
    /// serve it: `pods/log` answers it once the pod is bound to a node (`spec.nodeName`),
    /// whatever the container's status (see module `connect::log`).
    pub fn set_pod_log(&self, namespace: &str, pod: &str, container: &str, text: &str) {
        self.state.connect.logs.write().insert(
            (namespace.to_owned(), pod.to_owned(), container.to_owned()),
            text.to_owned(),
        );
    }

    /// Sends `proxy` requests for the object `name` of `plural` (`pods`, `services` or
    /// `nodes`; `namespace` is ignored for nodes) to `base_url` (`http://127.0.0.1:PORT`,
    /// optionally with a path prefix).
    pub fn proxy_backend(&self, plural: &str, namespace: &str, name: &str, base_url: &str) {
        let ns = if plural == "nodes" { "" } else { namespace };
        self.state.connect.proxy_backends.write().insert(
            (plural.to_owned(), ns.to_owned(), name.to_owned()),
            base_url.trim_end_matches('/').to_owned(),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets() {
        let t = target("/api/v1/namespaces/ns/pods/web/exec").unwrap();
        assert_eq!((t.plural, t.sub, t.name()), ("pods", "exec", "web"));
        let t = target("/api/v1/namespaces/ns/pods/https:web:8443/proxy/a/b/").unwrap();
        assert_eq!((t.name(), t.rest.as_str()), ("web", "/a/b/"));
        let t = target("/api/v1/namespaces/ns/services/svc:80/proxy").unwrap();
        assert_eq!(
            (t.plural, t.name(), t.rest.as_str()),
            ("services", "svc", "")
        );
        let t = target("/api/v1/nodes/n1/proxy/metrics").unwrap();
        assert_eq!(
            (t.plural, t.name(), t.rest.as_str()),
            ("nodes", "n1", "/metrics")
        );
        assert!(target("/api/v1/namespaces/ns/services/svc/exec").is_none());
        assert!(target("/api/v1/namespaces/ns/pods/web/status").is_none());
        assert!(target("/api/v1/namespaces/ns/pods/web/exec/x").is_none());
    }
}
