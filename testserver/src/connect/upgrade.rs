//! The server half of the WebSocket handshake (RFC 6455 section 4.2) on hyper's upgrade.

use http::header::{
    CONNECTION, SEC_WEBSOCKET_ACCEPT, SEC_WEBSOCKET_KEY, SEC_WEBSOCKET_PROTOCOL, UPGRADE,
};
use http::{HeaderValue, Request, Response};
use hyper::body::Incoming;
use hyper::upgrade::OnUpgrade;
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;

use super::super::body::{Body, full};
use super::super::status::ApiError;

/// An accepted upgrade: the 101 answer, the connection to come and the chosen protocol.
pub(crate) struct Accepted {
    pub response: Response<Body>,
    pub on_upgrade: OnUpgrade,
    pub protocol: String,
}

/// Accepts a WebSocket upgrade offering one of `supported` (the client's order decides, as
/// the API server's `wsstream` does); anything else is a 400 Status.
pub(crate) fn accept(
    req: &mut Request<Incoming>,
    supported: &[&str],
) -> Result<Accepted, ApiError> {
    let header = |name| {
        req.headers()
            .get_all(name)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .collect::<Vec<_>>()
            .join(",")
    };
    let upgrade = header(UPGRADE);
    if !upgrade.eq_ignore_ascii_case("websocket") {
        let message = if upgrade.to_ascii_lowercase().starts_with("spdy") {
            "SPDY is not supported by this test server: use the WebSocket protocols (v5.channel.k8s.io, v4.channel.k8s.io)".to_owned()
        } else {
            "Upgrade request required: this endpoint is a WebSocket (v5.channel.k8s.io, v4.channel.k8s.io)".to_owned()
        };
        return Err(ApiError::bad_request(message));
    }
    let key = req
        .headers()
        .get(SEC_WEBSOCKET_KEY)
        .ok_or_else(|| ApiError::bad_request("the WebSocket upgrade has no Sec-WebSocket-Key"))?;
    let accept = derive_accept_key(key.as_bytes());
    let offered = header(SEC_WEBSOCKET_PROTOCOL);
    let protocol = offered
        .split(',')
        .map(str::trim)
        .find(|p| supported.contains(p))
        .ok_or_else(|| {
            ApiError::bad_request(format!(
                "none of the offered WebSocket subprotocols {offered:?} is supported (want one of {supported:?})"
            ))
        })?
        .to_owned();
    let on_upgrade = hyper::upgrade::on(req);
    let mut response = Response::new(full(""));
    *response.status_mut() = http::StatusCode::SWITCHING_PROTOCOLS;
    let h = response.headers_mut();
    h.insert(UPGRADE, HeaderValue::from_static("websocket"));
    h.insert(CONNECTION, HeaderValue::from_static("Upgrade"));
    h.insert(
        SEC_WEBSOCKET_ACCEPT,
        HeaderValue::try_from(accept).map_err(|e| ApiError::internal(e.to_string()))?,
    );
    h.insert(
        SEC_WEBSOCKET_PROTOCOL,
        HeaderValue::try_from(protocol.as_str()).map_err(|e| ApiError::internal(e.to_string()))?,
    );
    Ok(Accepted {
        response,
        on_upgrade,
        protocol,
    })
}
