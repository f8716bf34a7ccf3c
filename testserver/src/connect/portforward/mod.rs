//! port-forward: the three ways clients reach `pods/portforward`, each connecting a requested
//! port to the backend a test registered with [`TestApiServer::port_forward_backend`]
//! (standing in for the kubelet and the container runtime's dial inside the pod):
//!
//! - SPDY/3.1 tunneled inside WebSocket binary messages (subprotocol
//!   `SPDY/3.1+portforward.k8s.io`): kubectl 1.31+, which kube-apiserver 1.31+ accepts and
//!   relays to the kubelet's SPDY (`streamtunnel.go`); the streams are served by `streams`;
//! - a plain `Upgrade: SPDY/3.1` with `X-Stream-Protocol-Version: portforward.k8s.io`:
//!   kubectl's fallback when the WebSocket upgrade fails (and older clients), same streams;
//! - the WebSocket channel protocol (`v4.channel.k8s.io`, `portforward.k8s.io`) with the
//!   ports in the query: kinform's own client; served by `channels`.
//!
//! [`TestApiServer::port_forward_backend`]: crate::TestApiServer::port_forward_backend

mod channels;
mod streams;

use std::net::SocketAddr;
use std::sync::Arc;

use http::{Request, Response};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use serde_json::Value;
use tokio_tungstenite::tungstenite::protocol::Role;

use crate::State;
use crate::connect::ConnectTarget;
use crate::connect::{tunnel, upgrade};
use crate::handlers::negotiation::body::Body;
use crate::status::ApiError;
use kinform_client::connect::ws::{self, PORT_FORWARD_PROTOCOL, V4_PROTOCOL};

/// The WebSocket subprotocol of SPDY tunneled through WebSockets (client-go's
/// `WebsocketsSPDYTunnelingPrefix` and the port-forward protocol).
pub(crate) const TUNNEL_PROTOCOL: &str = "SPDY/3.1+portforward.k8s.io";

/// The pod a port-forward reaches, and where its ports lead.
#[derive(Clone)]
struct Pod {
    state: Arc<State>,
    namespace: String,
    name: String,
    uid: String,
}

impl Pod {
    /// The backend registered for `port`, or the message the client's error stream gets.
    fn backend(&self, port: u16) -> Result<SocketAddr, String> {
        self.state
            .connect
            .port_backends
            .read()
            .get(&(self.namespace.clone(), self.name.clone(), port))
            .copied()
            .ok_or_else(|| {
                self.failure(
                    port,
                    "no backend is registered for this port (TestApiServer::port_forward_backend)",
                )
            })
    }

    /// A forwarding failure worded as the kubelet's (`error forwarding port P to pod ...,
    /// uid ...: why`).
    fn failure(&self, port: u16, why: impl std::fmt::Display) -> String {
        format!(
            "error forwarding port {port} to pod {}/{}, uid {}: {why}",
            self.namespace, self.name, self.uid
        )
    }
}

/// Validates and upgrades one port-forward request, then serves it on the upgraded
/// connection.
pub(crate) fn serve(
    state: &Arc<State>,
    mut req: Request<Incoming>,
    t: &ConnectTarget,
    object: &Value,
) -> Result<Response<Body>, ApiError> {
    let pod = Pod {
        state: state.clone(),
        namespace: t.namespace.clone(),
        name: t.name().to_owned(),
        uid: object["metadata"]["uid"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
    };
    let cancel = state.cancel.clone();
    if upgrade::is_spdy(&req) {
        let accepted = upgrade::accept_spdy(&mut req, &[PORT_FORWARD_PROTOCOL])?;
        let on_upgrade = accepted.on_upgrade;
        tokio::spawn(async move {
            let Ok(upgraded) = on_upgrade.await else {
                return;
            };
            tokio::select! {
                _ = streams::serve(TokioIo::new(upgraded), pod) => {}
                _ = cancel.cancelled() => {}
            }
        });
        return Ok(accepted.response);
    }
    let accepted = upgrade::accept(
        &mut req,
        &[TUNNEL_PROTOCOL, V4_PROTOCOL, PORT_FORWARD_PROTOCOL],
    )?;
    // The channel protocol names its ports up front; SPDY streams name theirs in headers.
    let ports = if accepted.protocol == TUNNEL_PROTOCOL {
        Vec::new()
    } else {
        channels::ports(req.uri().query())?
    };
    let on_upgrade = accepted.on_upgrade;
    let tunneled = accepted.protocol == TUNNEL_PROTOCOL;
    tokio::spawn(async move {
        let Ok(upgraded) = on_upgrade.await else {
            return;
        };
        let ws = ws::websocket(TokioIo::new(upgraded), Role::Server).await;
        tokio::select! {
            _ = async {
                if tunneled {
                    streams::serve(tunnel::byte_stream(ws), pod).await;
                } else {
                    channels::session(ws, ports, pod).await;
                }
            } => {}
            _ = cancel.cancelled() => {}
        }
    });
    Ok(accepted.response)
}
