//! Reading response bodies: whole (into one contiguous buffer) or as a stream, gunzipping
//! `Content-Encoding: gzip` on the fly.
//!
//! Whole bodies are read for ordinary requests so lists decode with one
//! `serde_json::from_slice` over one buffer; the silence between chunks is bounded by the
//! read timeout, and the size (after gunzipping, checked every 8 KiB of gzip input so a
//! gzip bomb cannot get far past it) by `Config::max_body_bytes`. Streams (watches, logs) hand
//! each chunk on as it arrives, gunzipped a bounded piece at a time (`Gunzip`), and have no
//! idle limit: a watch with no events for minutes is healthy.
//!
//! Every body is read through [`Counted`], which adds the bytes of each data frame, as they
//! came over the connection (gzip-compressed where the server compressed them), to the
//! client's counter ([`Client::received_body_bytes`](crate::Client::received_body_bytes)).

use std::io::Write as _;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use flate2::write::GzDecoder;
use futures_util::stream::{self, BoxStream};
use http_body_util::BodyExt as _;
use hyper::body::{Body, Frame, Incoming, SizeHint};

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

/// A response body whose data frames are counted, as received, into a client's counter.
pub(crate) struct Counted {
    body: Incoming,
    received: Arc<AtomicU64>,
}

impl Counted {
    pub(crate) fn new(body: Incoming, received: &Arc<AtomicU64>) -> Self {
        Counted {
            body,
            received: Arc::clone(received),
        }
    }
}

impl Body for Counted {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        let polled = Pin::new(&mut self.body).poll_frame(cx);
        if let Poll::Ready(Some(Ok(frame))) = &polled
            && let Some(data) = frame.data_ref()
        {
            self.received
                .fetch_add(data.len() as u64, Ordering::Relaxed);
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// Gzip input fed to the decoder at once, so its output is checked against the limit often.
const GZIP_PIECE: usize = 8 * 1024;

/// Reads a whole body of at most `limit` bytes (gunzipped) into one buffer.
pub(crate) async fn collect(
    body: Counted,
    gzip: bool,
    size_hint: usize,
    idle: Option<Duration>,
    request: &str,
    limit: usize,
) -> Result<Vec<u8>, Error> {
    collect_paused(body, gzip, size_hint, idle, request, limit, None).await
}

/// Where reading a body read ahead of its use stops until the body is wanted: once `after`
/// bytes (gunzipped) are held, nothing more is read from the connection until `until`
/// resolves (its sender sends or is dropped).
pub(crate) struct Pause {
    pub(crate) after: usize,
    pub(crate) until: tokio::sync::oneshot::Receiver<()>,
}

/// [`collect`], stopping at `pause` (see [`Pause`]); the idle timeout does not run while
/// paused.
pub(crate) async fn collect_paused(
    mut body: Counted,
    gzip: bool,
    size_hint: usize,
    idle: Option<Duration>,
    request: &str,
    limit: usize,
    mut pause: Option<Pause>,
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
        let held = decoder.as_ref().map_or(plain.len(), |d| d.get_ref().len());
        if let Some(p) = pause.take_if(|p| held >= p.after) {
            // Sent or dropped, the wait is over either way.
            let _ = p.until.await;
        }
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

/// Gunzips a stream a bounded piece at a time: each chunk it hands on comes from at most
/// [`GZIP_PIECE`] bytes of gzip input, so one network frame that inflates a thousandfold (a
/// gzip bomb inside one watch event) reaches the watch decoder, and its per-event size limit,
/// a few MiB at a time instead of all at once.
struct Gunzip {
    decoder: GzDecoder<Vec<u8>>,
    /// Gzip input received but not yet fed to the decoder.
    pending: Bytes,
}

impl Gunzip {
    fn new() -> Self {
        Gunzip {
            decoder: GzDecoder::new(Vec::new()),
            pending: Bytes::new(),
        }
    }

    /// Feeds pending input a piece at a time until some output appears; `Ok(None)` when all
    /// pending input is consumed without output.
    fn next_chunk(&mut self) -> std::io::Result<Option<Bytes>> {
        while !self.pending.is_empty() {
            let piece = self.pending.split_to(self.pending.len().min(GZIP_PIECE));
            self.decoder.write_all(&piece)?;
            self.decoder.flush()?;
            let out = std::mem::take(self.decoder.get_mut());
            if !out.is_empty() {
                return Ok(Some(Bytes::from(out)));
            }
        }
        Ok(None)
    }

    /// Ends the gzip stream, checking its trailer; returns what output remained.
    fn finish(self) -> std::io::Result<Vec<u8>> {
        self.decoder.finish()
    }
}

struct StreamState {
    body: Counted,
    gunzip: Option<Gunzip>,
    request: Arc<str>,
    done: bool,
}

impl StreamState {
    fn fail(
        mut self,
        message: &str,
        source: std::io::Error,
    ) -> Option<(Result<Bytes, Error>, Self)> {
        self.done = true;
        let err = transport(&self.request, message.into(), Some(Box::new(source)));
        Some((Err(err), self))
    }
}

/// Turns a body into a stream of chunks as they arrive.
pub(crate) fn stream(
    body: Counted,
    gzip: bool,
    request: Arc<str>,
) -> BoxStream<'static, Result<Bytes, Error>> {
    let state = StreamState {
        body,
        gunzip: gzip.then(Gunzip::new),
        request,
        done: false,
    };
    Box::pin(stream::unfold(state, |mut s| async move {
        if s.done {
            return None;
        }
        loop {
            if let Some(g) = s.gunzip.as_mut() {
                match g.next_chunk() {
                    Ok(Some(out)) => return Some((Ok(out), s)),
                    Ok(None) => {}
                    Err(e) => return s.fail("bad gzip response body", e),
                }
            }
            match s.body.frame().await {
                None => {
                    s.done = true;
                    let g = s.gunzip.take()?;
                    return match g.finish() {
                        Ok(rest) if rest.is_empty() => None,
                        Ok(rest) => Some((Ok(Bytes::from(rest)), s)),
                        Err(e) => s.fail("bad gzip response body", e),
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
                    match s.gunzip.as_mut() {
                        None => return Some((Ok(data), s)),
                        Some(g) => g.pending = data,
                    }
                }
            }
        }
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::Compression;
    use flate2::write::GzEncoder;

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut e = GzEncoder::new(Vec::new(), Compression::best());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    /// A gzip bomb in one frame (64 MiB of one byte, about 64 KiB compressed) comes out
    /// in chunks of a few MiB at most, so the watch decoder's per-event limit sees it early.
    #[test]
    fn one_frame_gzip_bomb_comes_out_in_bounded_chunks() {
        let bomb = gzip(&vec![b'a'; 64 << 20]);
        let mut g = Gunzip::new();
        g.pending = Bytes::from(bomb);
        let (mut total, mut largest) = (0usize, 0usize);
        while let Some(chunk) = g.next_chunk().unwrap() {
            total += chunk.len();
            largest = largest.max(chunk.len());
        }
        g.finish().unwrap();
        assert_eq!(total, 64 << 20);
        assert!(largest <= 9 << 20, "a chunk of {largest} bytes");
    }

    /// Split and whole input give the same bytes, and a corrupt stream is an error.
    #[test]
    fn gunzip_is_exact_and_refuses_corruption() {
        let text: Vec<u8> = (0..200_000u32).flat_map(|i| i.to_le_bytes()).collect();
        let packed = gzip(&text);
        let mut g = Gunzip::new();
        let mut out = Vec::new();
        for part in packed.chunks(1000) {
            g.pending = Bytes::copy_from_slice(part);
            while let Some(chunk) = g.next_chunk().unwrap() {
                out.extend_from_slice(&chunk);
            }
        }
        out.extend(g.finish().unwrap());
        assert_eq!(out, text);

        let mut g = Gunzip::new();
        g.pending = Bytes::from_static(b"\x1f\x8b\x08\x00garbage that is not deflate");
        let r = (|| {
            while g.next_chunk()?.is_some() {}
            g.finish()
        })();
        assert!(r.is_err());
    }
}
