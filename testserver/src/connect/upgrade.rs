//! The server half of the connection upgrades on hyper's upgrade: the WebSocket handshake
//! (RFC 6455 section 4.2) and, for port-forward, the SPDY/3.1 upgrade with apimachinery's
//! `X-Stream-Protocol-Version` negotiation (`httpstream.Handshake` then the SPDY response
//! upgrader, as the kubelet answers it).

use http::header::{
    CONNECTION, SEC_WEBSOCKET_ACCEPT, SEC_WEBSOCKET_KEY, SEC_WEBSOCKET_PROTOCOL, UPGRADE,
};
use http::{HeaderValue, Request, Response};
use hyper::body::Incoming;
use hyper::upgrade::OnUpgrade;
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;

use crate::handlers::negotiation::body::{Body, full};
use crate::status::ApiError;

/// An accepted upgrade: the 101 answer, the connection to come and the chosen protocol.
pub(crate) struct Accepted {
    pub response: Response<Body>,
    pub on_upgrade: OnUpgrade,
    pub protocol: String,
}

/// The SPDY upgrade token, as `Upgrade: SPDY/3.1`.
pub(crate) const SPDY_31: &str = "SPDY/3.1";
/// The header carrying the stream protocols a SPDY client offers, and the one chosen.
const PROTOCOL_VERSION: &str = "X-Stream-Protocol-Version";

/// Whether `req` asks for a SPDY upgrade rather than a WebSocket.
pub(crate) fn is_spdy(req: &Request<Incoming>) -> bool {
    req.headers()
        .get_all(UPGRADE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .any(|v| v.to_ascii_lowercase().contains("spdy/"))
}

/// The checks of [`accept_spdy`] on the request's headers: the negotiated protocol, or the
/// refusal.
fn negotiate_spdy(headers: &http::HeaderMap, supported: &[&str]) -> Result<String, ApiError> {
    let values: Vec<&str> = headers
        .get_all(PROTOCOL_VERSION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .collect();
    if values.is_empty() {
        return Err(ApiError::bad_request(format!(
            "unable to upgrade: header {PROTOCOL_VERSION} does not exist in request"
        )));
    }
    let offered: Vec<&str> = values
        .iter()
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect();
    if offered.is_empty() {
        return Err(ApiError::bad_request(format!(
            "unable to upgrade: header {PROTOCOL_VERSION} contains {values:?}, but no valid protocols"
        )));
    }
    let protocol = offered
        .iter()
        .find(|p| supported.contains(p))
        .ok_or_else(|| {
            ApiError::new(
                403,
                "Forbidden",
                format!(
                    "unable to upgrade: unable to negotiate protocol: client supports {offered:?}, server accepts {supported:?}"
                ),
            )
        })?
        .to_string();
    let has = |name, token: &str| {
        headers
            .get_all(name)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .any(|v| v.to_ascii_lowercase().contains(token))
    };
    if !has(CONNECTION, "upgrade") || !has(UPGRADE, "spdy/3.1") {
        return Err(ApiError::bad_request(
            "unable to upgrade: missing upgrade headers in request",
        ));
    }
    Ok(protocol)
}

/// Accepts a SPDY/3.1 upgrade offering one of `supported` in `X-Stream-Protocol-Version`
/// (the client's order decides, as `httpstream.Handshake`). As there: no header, or an
/// empty one, is a 400; no protocol in common a 403; `Connection` without `upgrade` or an
/// `Upgrade` other than SPDY/3.1 a 400.
pub(crate) fn accept_spdy(
    req: &mut Request<Incoming>,
    supported: &[&str],
) -> Result<Accepted, ApiError> {
    let protocol = negotiate_spdy(req.headers(), supported)?;
    let on_upgrade = hyper::upgrade::on(req);
    let mut response = Response::new(full(""));
    *response.status_mut() = http::StatusCode::SWITCHING_PROTOCOLS;
    let h = response.headers_mut();
    h.insert(CONNECTION, HeaderValue::from_static("Upgrade"));
    h.insert(UPGRADE, HeaderValue::from_static(SPDY_31));
    h.insert(
        PROTOCOL_VERSION,
        HeaderValue::try_from(protocol.as_str()).map_err(|e| ApiError::internal(e.to_string()))?,
    );
    Ok(Accepted {
        response,
        on_upgrade,
        protocol,
    })
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

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> http::HeaderMap {
        let mut h = http::HeaderMap::new();
        for (k, v) in pairs {
            h.append(
                http::HeaderName::try_from(*k).unwrap(),
                HeaderValue::try_from(*v).unwrap(),
            );
        }
        h
    }

    const UPGRADE_HEADERS: [(&str, &str); 2] = [("connection", "Upgrade"), ("upgrade", "SPDY/3.1")];

    /// apimachinery's `httpstream.Handshake` then the SPDY response upgrader, as the kubelet
    /// answers kubectl's SPDY upgrade.
    #[test]
    fn spdy_negotiation_is_the_kubelets() {
        let pf = ["portforward.k8s.io"];
        // the client's first protocol the server supports wins, across repeated headers
        let mut h = headers(&UPGRADE_HEADERS);
        h.append(
            PROTOCOL_VERSION,
            HeaderValue::from_static("v9, portforward.k8s.io"),
        );
        assert_eq!(negotiate_spdy(&h, &pf).unwrap(), "portforward.k8s.io");
        // no X-Stream-Protocol-Version, or an empty one: 400
        assert_eq!(
            negotiate_spdy(&headers(&UPGRADE_HEADERS), &pf)
                .unwrap_err()
                .code,
            400
        );
        let mut h = headers(&UPGRADE_HEADERS);
        h.append(PROTOCOL_VERSION, HeaderValue::from_static(" , "));
        assert_eq!(negotiate_spdy(&h, &pf).unwrap_err().code, 400);
        // nothing in common: 403
        let mut h = headers(&UPGRADE_HEADERS);
        h.append(
            PROTOCOL_VERSION,
            HeaderValue::from_static("v4.channel.k8s.io"),
        );
        let err = negotiate_spdy(&h, &pf).unwrap_err();
        assert_eq!((err.code, err.reason), (403, "Forbidden"));
        // not an upgrade to SPDY/3.1: 400
        let h = headers(&[
            ("connection", "keep-alive"),
            ("upgrade", "SPDY/3.1"),
            ("x-stream-protocol-version", "portforward.k8s.io"),
        ]);
        assert_eq!(negotiate_spdy(&h, &pf).unwrap_err().code, 400);
        let h = headers(&[
            ("connection", "Upgrade"),
            ("upgrade", "SPDY/2"),
            ("x-stream-protocol-version", "portforward.k8s.io"),
        ]);
        assert_eq!(negotiate_spdy(&h, &pf).unwrap_err().code, 400);
    }
}
