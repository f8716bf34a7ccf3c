//! The `proxy` subresource of pods, services and nodes: an HTTP request passed through the
//! API server to the object's backend (`.../pods/{name}[:port]/proxy/{path}`), as client-go's
//! `ProxyGet` and `kubectl get --raw .../proxy/...`.
//!
//! The caller's method, path (under `proxy/`), query, headers and body are sent as given and
//! the answer comes back whatever its code: a non-2xx may be the backend's own answer, so it
//! is not turned into an error unless asked ([`ProxyResponse::error_for_status`]). Proxied
//! requests are never retried. The name may carry a port (`web:8080`) and, for services and
//! pods, a scheme (`https:web:8443`), as the API server reads it.

use bytes::Bytes;
use http::{HeaderMap, StatusCode};
use hyper::body::Incoming;

use crate::transport::{api_error, stream_body};
use crate::{Api, ByteStream, Client, Error, Result};

/// The answer of a proxied request.
#[derive(Debug)]
pub struct ProxyResponse {
    client: Client,
    request: String,
    response: http::Response<Incoming>,
}

impl ProxyResponse {
    /// The HTTP status.
    pub fn status(&self) -> StatusCode {
        self.response.status()
    }

    /// The response headers.
    pub fn headers(&self) -> &HeaderMap {
        self.response.headers()
    }

    /// The request, e.g. `GET /api/v1/namespaces/ns/pods/web/proxy/healthz`.
    pub fn request(&self) -> &str {
        &self.request
    }

    /// The whole body.
    pub async fn bytes(self) -> Result<Bytes> {
        let body = self
            .client
            .collect_body(self.response, &self.request)
            .await?;
        Ok(Bytes::from(body))
    }

    /// The whole body as UTF-8 text.
    pub async fn text(self) -> Result<String> {
        let request = self.request.clone();
        let bytes = self.bytes().await?;
        String::from_utf8(bytes.to_vec()).map_err(|e| Error::Transport {
            request,
            message: "response body is not UTF-8".into(),
            source: Some(Box::new(e)),
        })
    }

    /// The body as a stream of chunks, as they arrive.
    pub fn into_stream(self) -> ByteStream {
        stream_body(&self.client, self.response, &self.request)
    }

    /// `self` for a 2xx answer; otherwise reads the body and returns it as an [`Error::Api`]
    /// (the server's Status when the body is one, e.g. 404 for a missing pod or 503 when no
    /// backend answers).
    pub async fn error_for_status(self) -> Result<Self> {
        let code = self.status();
        if code.is_success() {
            return Ok(self);
        }
        let headers = self.response.headers().clone();
        let request = self.request.clone();
        let body = self
            .client
            .collect_body(self.response, &request)
            .await
            .unwrap_or_default();
        Err(api_error(&request, code, &headers, &body))
    }
}

impl<K> Api<K> {
    /// Sends `request` through the `proxy` subresource of the object `name` (a pod, a
    /// service or a node; `name` may be `name:port`). The request's URI is the path and query
    /// under `proxy/` (`/healthz?verbose=1`; `/` for the root).
    pub async fn proxy(
        &self,
        name: &str,
        request: http::Request<Vec<u8>>,
    ) -> Result<ProxyResponse> {
        let (mut parts, body) = request.into_parts();
        let pq = parts.uri.path_and_query().map_or("/", |p| p.as_str());
        let pq = if pq.starts_with('/') {
            pq.to_owned()
        } else {
            format!("/{pq}")
        };
        let full = format!("{}/proxy{pq}", self.connect_path(name));
        parts.uri = full
            .parse()
            .map_err(|e: http::uri::InvalidUri| Error::Transport {
                request: format!("{} {full}", parts.method),
                message: format!("invalid proxy path: {e}"),
                source: None,
            })?;
        let req = http::Request::from_parts(parts, body);
        let client = self.client().clone();
        let (request, response) = client.send_once(req).await?;
        Ok(ProxyResponse {
            client,
            request,
            response,
        })
    }

    /// `GET` through the proxy; the body of a 2xx answer, an [`Error::Api`] otherwise (what
    /// client-go's `ProxyGet(...).DoRaw` gives).
    pub async fn proxy_get(&self, name: &str, path_and_query: &str) -> Result<Vec<u8>> {
        let req = http::Request::get(path_and_query)
            .body(Vec::new())
            .map_err(|e| Error::Transport {
                request: format!("GET {path_and_query}"),
                message: format!("invalid proxy path: {e}"),
                source: None,
            })?;
        let resp = self.proxy(name, req).await?.error_for_status().await?;
        resp.client.collect_body(resp.response, &resp.request).await
    }
}
