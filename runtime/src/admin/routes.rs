//! The answer to one request: the path and method decide, nothing else of the request is
//! read (no body, no headers), and a panic while answering becomes a `500`.

use std::panic::AssertUnwindSafe;

use bytes::Bytes;
use http_body_util::Full;
use hyper::header::{ALLOW, CACHE_CONTROL, CONTENT_TYPE, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};

use super::Sources;
use super::state;

const TEXT: &str = "text/plain; charset=utf-8";
const JSON: &str = "application/json";

/// A response before it becomes HTTP.
pub(crate) struct Reply {
    pub(crate) status: StatusCode,
    pub(crate) content_type: &'static str,
    pub(crate) body: Vec<u8>,
}

impl Reply {
    pub(crate) fn text(status: StatusCode, body: impl Into<String>) -> Self {
        Self {
            status,
            content_type: TEXT,
            body: body.into().into_bytes(),
        }
    }
}

/// The paths served.
fn is_served(path: &str) -> bool {
    matches!(path, "/healthz" | "/readyz" | "/debug/state")
        || (path == "/metrics" && cfg!(feature = "prometheus"))
}

/// Answers `request`.
pub(crate) fn answer<B>(sources: &Sources, request: &Request<B>) -> Response<Full<Bytes>> {
    let method = request.method();
    let path = request.uri().path();
    let query = request.uri().query().unwrap_or("");
    let reply = if !is_served(path) {
        Reply::text(
            StatusCode::NOT_FOUND,
            format!("404 page not found: {path}\n"),
        )
    } else if method != Method::GET && method != Method::HEAD {
        Reply::text(
            StatusCode::METHOD_NOT_ALLOWED,
            format!("405 method {method} not allowed on {path}: GET or HEAD\n"),
        )
    } else {
        std::panic::catch_unwind(AssertUnwindSafe(|| route(sources, path, query))).unwrap_or_else(
            |_| {
                tracing::error!(%path, "admin endpoint: panicked while answering");
                Reply::text(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "500 internal error while answering\n",
                )
            },
        )
    };
    let allow = reply.status == StatusCode::METHOD_NOT_ALLOWED;
    let body = if method == Method::HEAD {
        Bytes::new()
    } else {
        Bytes::from(reply.body)
    };
    let mut response = Response::new(Full::new(body));
    *response.status_mut() = reply.status;
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(reply.content_type));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    if allow {
        headers.insert(ALLOW, HeaderValue::from_static("GET, HEAD"));
    }
    response
}

fn route(sources: &Sources, path: &str, query: &str) -> Reply {
    match path {
        "/healthz" => Reply::text(StatusCode::OK, "ok\n"),
        "/readyz" => readyz(
            sources,
            query
                .split('&')
                .any(|q| q == "verbose" || q.starts_with("verbose=")),
        ),
        "/debug/state" => match serde_json::to_vec_pretty(&state::state(sources)) {
            Ok(body) => Reply {
                status: StatusCode::OK,
                content_type: JSON,
                body,
            },
            Err(error) => Reply::text(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("500 cannot encode the state: {error}\n"),
            ),
        },
        #[cfg(feature = "prometheus")]
        "/metrics" => super::state::metrics(sources),
        _ => Reply::text(
            StatusCode::NOT_FOUND,
            format!("404 page not found: {path}\n"),
        ),
    }
}

/// `/readyz`: `ok`, or one `[-]` line per failed check; with `verbose` every check.
fn readyz(sources: &Sources, verbose: bool) -> Reply {
    let checks = state::readiness(sources);
    let ready = checks.iter().all(|(_, r)| r.is_ok());
    let mut body = String::new();
    for (name, result) in &checks {
        match result {
            Ok(()) if verbose => body.push_str(&format!("[+]{name} ok\n")),
            Ok(()) => {}
            Err(reason) => body.push_str(&format!("[-]{name} failed: {reason}\n")),
        }
    }
    let status = if ready {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    match (ready, verbose) {
        (true, false) => body.push_str("ok\n"),
        (true, true) => body.push_str("readyz check passed\n"),
        (false, _) => body.push_str("readyz check failed\n"),
    }
    Reply::text(status, body)
}
