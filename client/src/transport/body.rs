//! Reading response bodies: whole (into one contiguous buffer) or as a stream, gunzipping
//! `Content-Encoding: gzip` on the fly.
//!
//! Whole bodies are read for ordinary requests so lists decode with one
//! `serde_json::from_slice` over one buffer; the silence between chunks is bounded by the
//! read timeout, and the size (after gunzipping, checked every 8 KiB of gzip input so a
//! gzip bomb cannot get far past it) by `Config::max_body_bytes`. Streams (watches, logs) hand each chunk on as it arrives and have no idle
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

fn too_large(request: &str, limit: usize) -> Error {
    Error::TooLarge {
        request: request.to_owned(),
        what: "the response body".into(),
        limit,
        setting: "Config::max_body_bytes",
    }
}

/// Gzip input fed to the decoder at once, so its output is checked against the limit often.
const GZIP_PIECE: usize = 8 * 1024;

/// Reads a whole body of at most `limit` bytes (gunzipped) into one buffer.
pub(crate) async fn collect(
    mut body: Incoming,
    gzip: bool,
    size_hint: usize,
    idle: Option<Duration>,
    request: &str,
    limit: usize,
) -> Result<Vec<u8>, Error> {
    if !gzip && size_hint > limit {
        return Err(too_large(request, limit));
    }
    let mut plain = Vec::with_capacity(size_hint.min(64 << 20).min(limit));
    let mut decoder = gzip.then(|| {
        GzDecoder::new(Vec::with_capacity(
            size_hint.saturating_mul(4).min(256 << 20).min(limit),
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
                Some(d) => {
                    for piece in data.chunks(GZIP_PIECE) {
                        d.write_all(piece).map_err(|e| {
                            transport(request, "bad gzip response body".into(), Some(Box::new(e)))
                        })?;
                        if d.get_ref().len() > limit {
                            return Err(too_large(request, limit));
                        }
                    }
                }
                None if plain.len() + data.len() > limit => {
                    return Err(too_large(request, limit));
                }
                None => plain.extend_from_slice(&data),
            }
        }
    }
    match decoder {
        Some(d) => {
            let out = d.finish().map_err(|e| {
                transport(request, "bad gzip response body".into(), Some(Box::new(e)))
            })?;
            if out.len() > limit {
                return Err(too_large(request, limit));
            }
            Ok(out)
        }
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
