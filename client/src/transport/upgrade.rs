//! Requests that leave the pooled request/response path: WebSocket upgrades (exec, attach,
//! portforward) and single-shot proxied requests (`.../proxy/...`).
//!
//! An upgrade needs HTTP/1.1 (`Connection: Upgrade` does not exist in HTTP/2), so it dials
//! its own connection with the same connector (TCP, `proxy-url` CONNECT tunnel, TLS with the
//! kubeconfig's roots, client certificate and server name) but offers only `http/1.1` through
//! ALPN, as client-go's WebSocket executor does with its own `http.Transport`. Credentials,
//! impersonation and the user agent are those of every other request; a 401 with a
//! refreshable credential is retried once after refreshing it.
//!
//! Proxied requests go through the pooled client but are never retried: a 503 or a reset may
//! come from the proxied backend, for which the API server's retry rules do not hold.

use http::header::{
    CONNECTION, HOST, SEC_WEBSOCKET_ACCEPT, SEC_WEBSOCKET_KEY, SEC_WEBSOCKET_PROTOCOL,
    SEC_WEBSOCKET_VERSION, UPGRADE,
};
use http::{HeaderValue, Method, StatusCode};
use http_body_util::{Empty, Full};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use tokio_tungstenite::tungstenite::handshake::{client::generate_key, derive_accept_key};

use super::{Client, body, status_from_body};
use crate::{Error, Result};

/// The IO of an upgraded connection.
pub(crate) type UpgradedIo = TokioIo<hyper::upgrade::Upgraded>;

impl Client {
    /// Opens a WebSocket on `path_and_query` offering `protocols` (best first); returns the
    /// upgraded connection and the subprotocol the server picked.
    ///
    /// A refusal (any answer but 101) is an [`Error::Api`] with the server's Status.
    pub(crate) async fn upgrade_websocket(
        &self,
        method: Method,
        path_and_query: &str,
        protocols: &[&str],
    ) -> Result<(UpgradedIo, String)> {
        let inner = &*self.inner;
        let desc = format!("{method} {path_and_query}");
        let uri = self.uri_for(
            &path_and_query
                .parse::<http::Uri>()
                .map_err(|e| super::invalid("request URI", e.to_string()))?,
        )?;
        let transport =
            |message: String, source: Option<Box<dyn std::error::Error + Send + Sync>>| {
                Error::Transport {
                    request: desc.clone(),
                    message,
                    source,
                }
            };
        let mut refreshed_auth = false;
        loop {
            if let Some(limiter) = &inner.limiter {
                limiter.acquire().await;
            }
            let conn = tower::ServiceExt::oneshot(inner.upgrade_connector.clone(), uri.clone())
                .await
                .map_err(|e| transport(format!("cannot connect: {e}"), Some(Box::new(e))))?;
            let (mut sender, connection) = hyper::client::conn::http1::handshake(conn)
                .await
                .map_err(|e| transport(format!("HTTP/1.1 handshake: {e}"), Some(Box::new(e))))?;
            tokio::spawn(async move {
                if let Err(e) = connection.with_upgrades().await {
                    tracing::debug!(error = %e, "upgrade connection ended with an error");
                }
            });
            let key = generate_key();
            let mut req = http::Request::new(Empty::<bytes::Bytes>::new());
            *req.method_mut() = method.clone();
            *req.uri_mut() = uri
                .path_and_query()
                .map_or("/", |p| p.as_str())
                .parse()
                .map_err(|e: http::uri::InvalidUri| transport(e.to_string(), None))?;
            let headers = req.headers_mut();
            if let Some(authority) = uri.authority()
                && let Ok(v) = HeaderValue::try_from(authority.as_str())
            {
                headers.insert(HOST, v);
            }
            headers.insert(CONNECTION, HeaderValue::from_static("Upgrade"));
            headers.insert(UPGRADE, HeaderValue::from_static("websocket"));
            headers.insert(SEC_WEBSOCKET_VERSION, HeaderValue::from_static("13"));
            headers.insert(
                SEC_WEBSOCKET_KEY,
                HeaderValue::try_from(key.as_str()).map_err(|e| transport(e.to_string(), None))?,
            );
            headers.insert(
                SEC_WEBSOCKET_PROTOCOL,
                HeaderValue::try_from(protocols.join(", "))
                    .map_err(|e| transport(e.to_string(), None))?,
            );
            inner.identify(headers).await?;
            let resp = sender
                .send_request(req)
                .await
                .map_err(|e| transport(format!("request failed: {e}"), Some(Box::new(e))))?;
            let code = resp.status();
            if code == StatusCode::UNAUTHORIZED && inner.auth.refreshable() && !refreshed_auth {
                refreshed_auth = true;
                inner.auth.invalidate().await;
                continue;
            }
            if code != StatusCode::SWITCHING_PROTOCOLS {
                let retry_after = super::retry::retry_after(resp.headers());
                let gzip = body::is_gzip(resp.headers());
                let bytes = body::collect(
                    self.counted(resp),
                    gzip,
                    0,
                    inner.read_timeout,
                    &desc,
                    inner.max_body_bytes,
                )
                .await
                .unwrap_or_default();
                return Err(Error::Api {
                    request: desc,
                    status: Box::new(status_from_body(code, &bytes)),
                    retry_after,
                });
            }
            let expected = derive_accept_key(key.as_bytes());
            let accept = resp
                .headers()
                .get(SEC_WEBSOCKET_ACCEPT)
                .and_then(|v| v.to_str().ok());
            if accept != Some(expected.as_str()) {
                return Err(transport(
                    format!("the server's Sec-WebSocket-Accept {accept:?} does not match the key"),
                    None,
                ));
            }
            let protocol = resp
                .headers()
                .get(SEC_WEBSOCKET_PROTOCOL)
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default()
                .trim()
                .to_owned();
            if !protocols.contains(&protocol.as_str()) {
                return Err(transport(
                    format!(
                        "the server picked subprotocol {protocol:?}, not one of {protocols:?} offered"
                    ),
                    None,
                ));
            }
            let upgraded = hyper::upgrade::on(resp)
                .await
                .map_err(|e| transport(format!("upgrade failed: {e}"), Some(Box::new(e))))?;
            return Ok((TokioIo::new(upgraded), protocol));
        }
    }

    /// Sends one request as is (credentials, user agent and impersonation added) without
    /// retries or status checks, and returns the answer whatever its code.
    pub(crate) async fn send_once(
        &self,
        req: http::Request<Vec<u8>>,
    ) -> Result<(String, http::Response<Incoming>)> {
        let inner = &*self.inner;
        let (parts, body) = req.into_parts();
        let desc = super::describe(&parts.method, &parts.uri);
        let uri = self.uri_for(&parts.uri)?;
        if let Some(limiter) = &inner.limiter {
            limiter.acquire().await;
        }
        let mut req = http::Request::new(Full::new(bytes::Bytes::from(body)));
        *req.method_mut() = parts.method;
        *req.uri_mut() = uri;
        *req.headers_mut() = parts.headers;
        let headers = req.headers_mut();
        inner.identify(headers).await?;
        let sent = inner.http.request(req);
        let result = match inner.read_timeout {
            Some(limit) => {
                tokio::time::timeout(limit, sent)
                    .await
                    .map_err(|_| Error::Transport {
                        request: desc.clone(),
                        message: format!("no response within {limit:?}"),
                        source: None,
                    })?
            }
            None => sent.await,
        };
        match result {
            Ok(resp) => Ok((desc, resp)),
            Err(e) => Err(Error::Transport {
                request: desc,
                message: super::transport_message(&e),
                source: Some(Box::new(e)),
            }),
        }
    }
}

impl Client {
    /// The whole body of an answer from [`send_once`](Self::send_once), un-gzipped.
    pub(crate) async fn collect_body(
        &self,
        resp: http::Response<Incoming>,
        desc: &str,
    ) -> Result<Vec<u8>> {
        let gzip = body::is_gzip(resp.headers());
        let hint = super::content_length(resp.headers());
        body::collect(
            self.counted(resp),
            gzip,
            hint,
            self.inner.read_timeout,
            desc,
            self.inner.max_body_bytes,
        )
        .await
    }
}

/// The body of an answer from `client`, streamed as it arrives.
pub(crate) fn stream_body(
    client: &Client,
    resp: http::Response<Incoming>,
    desc: &str,
) -> crate::ByteStream {
    let gzip = body::is_gzip(resp.headers());
    body::stream(client.counted(resp), gzip, std::sync::Arc::from(desc))
}

/// The [`Error::Api`] of a non-2xx answer whose body was read.
pub(crate) fn api_error(
    desc: &str,
    code: StatusCode,
    headers: &http::HeaderMap,
    bytes: &[u8],
) -> Error {
    Error::Api {
        request: desc.to_owned(),
        status: Box::new(status_from_body(code, bytes)),
        retry_after: super::retry::retry_after(headers),
    }
}
