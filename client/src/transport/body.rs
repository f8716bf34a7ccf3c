//! Reading response bodies: whole (into one contiguous buffer) or as a stream, gunzipping
//! `Content-Encoding: gzip` on the fly.
//!
//! Whole bodies are read for ordinary requests so lists decode with one
//! `serde_json::from_slice` over one buffer; the silence between chunks is bounded by the
//! read timeout. Streams (watches, logs) hand each chunk on as it arrives and have no idle
//! limit: a watch with no events for minutes is healthy.

use std::io::Write as _;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use flate2::write::GzDecoder;
use futures_util::stream::{self, BoxStream};
use http_body_util::BodyExt as _;
use hyper::body::Incoming;

use crate::Error;

pub(crate) fn is_gzip(headers: &http::HeaderMap) -> bool {
    headers
        .get(http::header::CONTENT_ENCODING)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("gzip"))
}

fn transport(
    request: &str,
    message: String,
    source: Option<Box<dyn std::error::Error + Send + Sync>>,
) -> Error {
    Error::Transport {
        request: request.to_owned(),
        message,
        source,
    }
}

/// Reads a whole body into one buffer.
pub(crate) async fn collect(
    mut body: Incoming,
    gzip: bool,
    size_hint: usize,
    idle: Option<Duration>,
    request: &str,
) -> Result<Vec<u8>, Error> {
    let mut plain = Vec::with_capacity(size_hint.min(64 << 20));
    let mut decoder = gzip.then(|| {
        GzDecoder::new(Vec::with_capacity(
            size_hint.saturating_mul(4).min(256 << 20),
        ))
    });
    loop {
        let next = match idle {
            Some(limit) => tokio::time::timeout(limit, body.frame())
                .await
                .map_err(|_| transport(request, format!("no response data for {limit:?}"), None))?,
            None => body.frame().await,
        };
        let Some(frame) = next else { break };
        let frame = frame.map_err(|e| {
            transport(
                request,
                "reading the response body failed".into(),
                Some(Box::new(e)),
            )
        })?;
        if let Ok(data) = frame.into_data() {
            match decoder.as_mut() {
                Some(d) => d.write_all(&data).map_err(|e| {
                    transport(request, "bad gzip response body".into(), Some(Box::new(e)))
                })?,
                None => plain.extend_from_slice(&data),
            }
        }
    }
    match decoder {
        Some(d) => d
            .finish()
            .map_err(|e| transport(request, "bad gzip response body".into(), Some(Box::new(e)))),
        None => Ok(plain),
    }
}

struct StreamState {
    body: Incoming,
    decoder: Option<GzDecoder<Vec<u8>>>,
    request: Arc<str>,
    done: bool,
}

/// Turns a body into a stream of chunks as they arrive.
pub(crate) fn stream(
    body: Incoming,
    gzip: bool,
    request: Arc<str>,
) -> BoxStream<'static, Result<Bytes, Error>> {
    let state = StreamState {
        body,
        decoder: gzip.then(|| GzDecoder::new(Vec::new())),
        request,
        done: false,
    };
    Box::pin(stream::unfold(state, |mut s| async move {
        if s.done {
            return None;
        }
        loop {
            match s.body.frame().await {
                None => {
                    s.done = true;
                    let d = s.decoder.take()?;
                    return match d.finish() {
                        Ok(rest) if rest.is_empty() => None,
                        Ok(rest) => Some((Ok(Bytes::from(rest)), s)),
                        Err(e) => {
                            let err = transport(
                                &s.request,
                                "bad gzip response body".into(),
                                Some(Box::new(e)),
                            );
                            Some((Err(err), s))
                        }
                    };
                }
                Some(Err(e)) => {
                    s.done = true;
                    let err = transport(
                        &s.request,
                        "reading the response stream failed".into(),
                        Some(Box::new(e)),
                    );
                    return Some((Err(err), s));
                }
                Some(Ok(frame)) => {
                    let Ok(data) = frame.into_data() else {
                        continue;
                    };
                    match s.decoder.as_mut() {
                        None => return Some((Ok(data), s)),
                        Some(d) => {
                            if let Err(e) = d.write_all(&data).and_then(|()| d.flush()) {
                                s.done = true;
                                let err = transport(
                                    &s.request,
                                    "bad gzip response body".into(),
                                    Some(Box::new(e)),
                                );
                                return Some((Err(err), s));
                            }
                            let out = std::mem::take(d.get_mut());
                            if !out.is_empty() {
                                return Some((Ok(Bytes::from(out)), s));
                            }
                        }
                    }
                }
            }
        }
    }))
}
