//! proxy: forwards a request to the backend registered for a pod, service or node.

use std::sync::Arc;

use bytes::Bytes;
use http::{HeaderName, Request, Response};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;

use crate::State;
use crate::connect::ConnectTarget;
use crate::handlers::negotiation::body::{Body, full};
use crate::status::ApiError;

/// Headers that belong to one hop (RFC 9110 section 7.6.1), plus the ones re-derived here.
const HOP: &[&str] = &[
    "connection",
    "keep-alive",
    "proxy-connection",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "host",
    "authorization",
    "content-length",
];

fn hop(name: &HeaderName) -> bool {
    HOP.contains(&name.as_str())
}

pub(crate) async fn serve(
    state: &Arc<State>,
    req: Request<Incoming>,
    t: &ConnectTarget,
) -> Result<Response<Body>, ApiError> {
    let backend = state
        .connect
        .proxy_backends
        .read()
        .get(&(
            t.plural.to_owned(),
            t.namespace.clone(),
            t.name().to_owned(),
        ))
        .cloned();
    let what = match t.plural {
        "nodes" => format!("node {}", t.name()),
        "services" => format!("service {}/{}", t.namespace, t.name()),
        _ => format!("pod {}/{}", t.namespace, t.name()),
    };
    let Some(base) = backend else {
        return Err(ApiError::new(
            503,
            "ServiceUnavailable",
            format!(
                "no endpoints available for {what}: no proxy backend is registered (TestApiServer::proxy_backend)"
            ),
        ));
    };
    let (parts, body) = req.into_parts();
    let body = body
        .collect()
        .await
        .map_err(|e| ApiError::bad_request(format!("reading the request body: {e}")))?
        .to_bytes();
    let mut uri = format!("{base}{}", if t.rest.is_empty() { "/" } else { &t.rest });
    if let Some(q) = parts.uri.query() {
        uri.push('?');
        uri.push_str(q);
    }
    let mut out = Request::new(Full::new(body));
    *out.method_mut() = parts.method;
    *out.uri_mut() = uri
        .parse()
        .map_err(|e| ApiError::internal(format!("proxy backend URL {uri:?}: {e}")))?;
    for (k, v) in &parts.headers {
        if !hop(k) && k != http::header::ACCEPT_ENCODING {
            out.headers_mut().append(k.clone(), v.clone());
        }
    }
    let client: Client<HttpConnector, Full<Bytes>> =
        Client::builder(TokioExecutor::new()).build_http();
    let unreachable = |e: String| {
        ApiError::new(
            503,
            "ServiceUnavailable",
            format!("error trying to reach {what}: {e}"),
        )
    };
    let resp = client
        .request(out)
        .await
        .map_err(|e| unreachable(e.to_string()))?;
    let (rparts, rbody) = resp.into_parts();
    let bytes = rbody
        .collect()
        .await
        .map_err(|e| unreachable(e.to_string()))?
        .to_bytes();
    let mut answer = Response::new(full(bytes));
    *answer.status_mut() = rparts.status;
    for (k, v) in &rparts.headers {
        if !hop(k) {
            answer.headers_mut().append(k.clone(), v.clone());
        }
    }
    Ok(answer)
}
