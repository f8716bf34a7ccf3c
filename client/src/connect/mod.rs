//! Connect subresources: `pods/exec`, `pods/attach`, `pods/portforward` (WebSocket upgrades)
//! and the `proxy` subresource of pods, services and nodes (HTTP passthrough).
//!
//! These are the `x-kubernetes-action: connect` endpoints of the API: they do not answer
//! objects but open a stream to a container or a backend. kinform speaks the WebSocket forms
//! the API server serves since Kubernetes 1.30 (KEP-4006), which client-go and kubectl use
//! by default; SPDY, the older transport, is not implemented. See `ws` for the channel
//! protocol, [`AttachedProcess`] for exec/attach, [`Portforwarder`] for port-forward and
//! [`ProxyResponse`] for proxy.
//!
//! The upgrade dials a fresh HTTP/1.1 connection through the client's connector (TLS,
//! `proxy-url`, credentials); errors before the upgrade are the client's
//! [`Error`](crate::Error) with the server's Status (404 for a missing pod, 400 for a
//! missing container), errors after it are [`ConnectError`].

mod error;
mod exec;
mod portforward;
mod proxy;
pub mod ws;

pub use error::ConnectError;
pub use exec::{AttachParams, AttachedProcess, ExecStatus, TerminalSize};
pub use portforward::Portforwarder;
pub use proxy::ProxyResponse;
pub use ws::{PORT_FORWARD_PROTOCOL, V4_PROTOCOL, V5_PROTOCOL};

/// The request of [`Api::proxy`](crate::Api::proxy): method, path and query under `proxy/`,
/// headers and body.
pub type ProxyRequest = http::Request<Vec<u8>>;

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};

use crate::Api;

/// Query values: everything but RFC 3986 unreserved characters is escaped.
const QUERY: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

/// Path segments: as query values, but `:` (the `name:port` of proxy) stays readable.
const SEGMENT: &AsciiSet = &QUERY.remove(b':');

fn encode(value: &str) -> String {
    utf8_percent_encode(value, QUERY).to_string()
}

impl<K> Api<K> {
    /// `collection/name` of a connect request.
    fn connect_path(&self, name: &str) -> String {
        format!(
            "{}/{}",
            self.resource().collection_path(self.namespace()),
            utf8_percent_encode(name, SEGMENT)
        )
    }
}
