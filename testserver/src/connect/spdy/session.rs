//! The server side of one SPDY/3.1 session, as the kubelet runs it through apimachinery's
//! `httpstream/spdy` (spdystream underneath): the client opens streams with SYN_STREAM, the
//! server accepts each with an empty SYN_REPLY or refuses it with RST_STREAM, both sides send
//! DATA and half-close with FIN, and client PINGs are echoed.
//!
//! What the session keeps from the protocol, and why:
//! - stream ids must be odd (client-initiated) and increasing, else the stream is reset with
//!   PROTOCOL_ERROR, as spdystream's `validateStreamId`;
//! - every header block goes through the one decompressor, also of frames the session
//!   otherwise ignores (HEADERS, SYN_REPLY), so that the zlib stream stays in step; a broken
//!   block ends the session with GOAWAY PROTOCOL_ERROR;
//! - SETTINGS, WINDOW_UPDATE and unknown control frames are read and ignored: spdystream
//!   does no flow control either (its peers never wait for window updates);
//! - after the client's GOAWAY, new streams are refused; the session ends when the
//!   connection does, and then every stream ends too (its reader sees the end, its writer
//!   fails, its [`StreamWriter::closed`] token fires).
//!
//! Buffers are bounded: frames up to the 24-bit maximum, [`INBOUND_CHUNKS`] data chunks per
//! stream (the session stops reading while a stream's consumer is behind, which pushes back
//! on the client as TCP does), [`MAX_STREAMS`] open streams, and a bounded queue of frames to
//! send.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use bytes::{Bytes, BytesMut};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::frame::{self, FLAG_FIN, Frame};
use super::headers::{Compressor, Decompressor, Headers};

/// Data chunks buffered per stream before the session waits for the stream's consumer.
pub(crate) const INBOUND_CHUNKS: usize = 8;
/// Streams open at once; more are refused (RST_STREAM REFUSED_STREAM).
pub(crate) const MAX_STREAMS: usize = 1024;
/// Frames queued for sending before writers wait.
const OUTBOUND_FRAMES: usize = 64;
/// Bytes read from the connection at a time.
const READ_CHUNK: usize = 64 * 1024;

/// A frame to send; header blocks are compressed by the writer, in sending order.
enum Out {
    Reply(u32),
    Data { stream: u32, data: Bytes, fin: bool },
    Reset { stream: u32, status: u32 },
    Ping(u32),
    GoAway { last_good: u32, status: u32 },
}

/// A stream the client opened and the session accepted.
pub(crate) struct Stream {
    /// Its id.
    pub id: u32,
    /// The headers of its SYN_STREAM.
    pub headers: Headers,
    /// The client's data; ends at the client's FIN, at its RST_STREAM and when the session
    /// ends.
    pub incoming: mpsc::Receiver<Bytes>,
    /// Sends on the stream.
    pub writer: StreamWriter,
}

/// The sending half of a stream.
#[derive(Clone)]
pub(crate) struct StreamWriter {
    id: u32,
    out: mpsc::Sender<Out>,
    /// Fires when the client resets the stream or the session ends.
    gone: CancellationToken,
    /// Set once this side sent FIN or RST.
    done: Arc<AtomicBool>,
}

impl StreamWriter {
    /// Sends `data`; false when the stream can take no more (reset, closed, session over).
    pub(crate) async fn write(&self, data: &[u8]) -> bool {
        if self.gone.is_cancelled() || self.done.load(Ordering::Acquire) {
            return false;
        }
        for chunk in data.chunks(frame::MAX_PAYLOAD) {
            let out = Out::Data {
                stream: self.id,
                data: Bytes::copy_from_slice(chunk),
                fin: false,
            };
            if self.out.send(out).await.is_err() {
                return false;
            }
        }
        true
    }

    /// Half-closes the stream (an empty DATA frame with FIN), once.
    pub(crate) async fn close(&self) {
        if !self.done.swap(true, Ordering::AcqRel) && !self.gone.is_cancelled() {
            let _ = self
                .out
                .send(Out::Data {
                    stream: self.id,
                    data: Bytes::new(),
                    fin: true,
                })
                .await;
        }
    }

    /// Resets the stream (RST_STREAM with `status`), unless it was closed or reset before.
    pub(crate) async fn reset(&self, status: u32) {
        if !self.done.swap(true, Ordering::AcqRel) && !self.gone.is_cancelled() {
            let _ = self
                .out
                .send(Out::Reset {
                    stream: self.id,
                    status,
                })
                .await;
        }
    }

    /// Fires when the client resets the stream or the session ends.
    pub(crate) fn gone(&self) -> &CancellationToken {
        &self.gone
    }
}

/// What the session remembers of an open stream.
struct Open {
    /// Feeds [`Stream::incoming`]; `None` after the client's FIN.
    tx: Option<mpsc::Sender<Bytes>>,
    gone: CancellationToken,
    done: Arc<AtomicBool>,
}

/// Serves a SPDY/3.1 session on `io` until the connection ends. `accept` decides on each new
/// stream from its headers (an `Err` resets it, as kubelet's stream handler rejecting it);
/// accepted streams go to `streams` in the order the client opened them.
pub(crate) async fn serve<IO, F>(io: IO, accept: F, streams: mpsc::Sender<Stream>)
where
    IO: AsyncRead + AsyncWrite + Send + 'static,
    F: Fn(&Headers) -> Result<(), String>,
{
    let (rd, wr) = tokio::io::split(io);
    let (out_tx, out_rx) = mpsc::channel(OUTBOUND_FRAMES);
    let session = CancellationToken::new();
    let writer = tokio::spawn(write_frames(wr, out_rx, session.clone()));
    let mut reader = Reader {
        out: out_tx,
        session: session.clone(),
        streams,
        open: HashMap::new(),
        last_id: 0,
        gone_away: false,
        headers: Decompressor::new(),
    };
    reader.run(rd, &accept).await;
    // Every stream ends with the session.
    drop(reader);
    session.cancel();
    let _ = writer.await;
}

struct Reader {
    out: mpsc::Sender<Out>,
    session: CancellationToken,
    streams: mpsc::Sender<Stream>,
    open: HashMap<u32, Open>,
    last_id: u32,
    gone_away: bool,
    headers: Decompressor,
}

impl Reader {
    async fn run<R, F>(&mut self, mut rd: R, accept: &F)
    where
        R: AsyncRead + Unpin,
        F: Fn(&Headers) -> Result<(), String>,
    {
        let mut buf = BytesMut::with_capacity(READ_CHUNK);
        loop {
            match frame::decode(&mut buf, frame::MAX_PAYLOAD) {
                Ok(Some(f)) => {
                    if self.frame(f, accept).await.is_err() {
                        return self.protocol_error().await;
                    }
                    continue;
                }
                Ok(None) => {}
                Err(e) => {
                    tracing::debug!("SPDY session: {e}");
                    return self.protocol_error().await;
                }
            }
            buf.reserve(READ_CHUNK);
            match (&mut rd).take(READ_CHUNK as u64).read_buf(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    }

    async fn protocol_error(&mut self) {
        let _ = self
            .out
            .send(Out::GoAway {
                last_good: self.last_id,
                status: frame::GOAWAY_PROTOCOL_ERROR,
            })
            .await;
    }

    /// Handles one frame; `Err` is a session-level protocol error.
    async fn frame<F>(&mut self, f: Frame, accept: &F) -> Result<(), ()>
    where
        F: Fn(&Headers) -> Result<(), String>,
    {
        match f {
            Frame::SynStream {
                stream,
                flags,
                headers,
                ..
            } => {
                let headers = self.headers.decompress(&headers).map_err(|e| {
                    tracing::debug!("SPDY session: {e}");
                })?;
                self.open_stream(stream, flags, headers, accept).await;
            }
            Frame::SynReply { headers, .. } | Frame::Headers { headers, .. } => {
                self.headers.decompress(&headers).map_err(|_| ())?;
            }
            Frame::Data {
                stream,
                flags,
                data,
            } => {
                if let Some(open) = self.open.get_mut(&stream) {
                    if !data.is_empty()
                        && let Some(tx) = &open.tx
                        && tx.send(data).await.is_err()
                    {
                        // The consumer is gone: the rest of the stream's data is dropped.
                        open.tx = None;
                    }
                    if flags & FLAG_FIN != 0 {
                        open.tx = None;
                    }
                }
            }
            Frame::RstStream { stream, .. } => {
                if let Some(open) = self.open.remove(&stream) {
                    open.gone.cancel();
                }
            }
            Frame::Ping { id } => {
                // Odd ids are the client's: echo them. Even ids would answer our own pings.
                if id % 2 == 1 {
                    let _ = self.out.send(Out::Ping(id)).await;
                }
            }
            Frame::GoAway { .. } => self.gone_away = true,
            Frame::Settings { .. } | Frame::WindowUpdate { .. } | Frame::Unknown { .. } => {}
        }
        Ok(())
    }

    async fn open_stream<F>(&mut self, id: u32, flags: u8, headers: Headers, accept: &F)
    where
        F: Fn(&Headers) -> Result<(), String>,
    {
        if id.is_multiple_of(2) || id <= self.last_id {
            let _ = self
                .out
                .send(Out::Reset {
                    stream: id,
                    status: 1, // PROTOCOL_ERROR
                })
                .await;
            return;
        }
        self.last_id = id;
        // Forget streams both sides have finished.
        self.open
            .retain(|_, o| o.tx.is_some() || !o.done.load(Ordering::Acquire));
        let refuse = if self.gone_away || self.open.len() >= MAX_STREAMS {
            Some(frame::RST_REFUSED_STREAM)
        } else if let Err(why) = accept(&headers) {
            tracing::debug!("SPDY stream {id} rejected: {why}");
            Some(frame::RST_CANCEL)
        } else {
            None
        };
        if let Some(status) = refuse {
            let _ = self.out.send(Out::Reset { stream: id, status }).await;
            return;
        }
        // The reply is queued before the stream is handed out, so it precedes its data.
        let _ = self.out.send(Out::Reply(id)).await;
        let (tx, rx) = mpsc::channel(INBOUND_CHUNKS);
        let gone = self.session.child_token();
        let done = Arc::new(AtomicBool::new(false));
        self.open.insert(
            id,
            Open {
                tx: (flags & FLAG_FIN == 0).then_some(tx),
                gone: gone.clone(),
                done: done.clone(),
            },
        );
        let stream = Stream {
            id,
            headers,
            incoming: rx,
            writer: StreamWriter {
                id,
                out: self.out.clone(),
                gone,
                done,
            },
        };
        let _ = self.streams.send(stream).await;
    }
}

/// Encodes and writes queued frames until the session ends; then writes what is already
/// queued (a GOAWAY among it) and shuts the connection's sending side.
async fn write_frames<W>(mut wr: W, mut rx: mpsc::Receiver<Out>, session: CancellationToken)
where
    W: AsyncWrite + Unpin,
{
    let mut headers = Compressor::new();
    let mut buf = BytesMut::new();
    loop {
        let out = tokio::select! {
            biased;
            out = rx.recv() => out,
            _ = session.cancelled() => None,
        };
        let Some(out) = out else { break };
        buf.clear();
        encode(out, &mut headers, &mut buf);
        // Batch what else is already queued into the same write.
        while buf.len() < READ_CHUNK
            && let Ok(out) = rx.try_recv()
        {
            encode(out, &mut headers, &mut buf);
        }
        if wr.write_all(&buf).await.is_err() || wr.flush().await.is_err() {
            return;
        }
    }
    buf.clear();
    while let Ok(out) = rx.try_recv() {
        encode(out, &mut headers, &mut buf);
    }
    let _ = wr.write_all(&buf).await;
    let _ = wr.shutdown().await;
}

fn encode(out: Out, headers: &mut Compressor, buf: &mut BytesMut) {
    let frame = match out {
        Out::Reply(stream) => match headers.compress(&Headers::default()) {
            Ok(block) => Frame::SynReply {
                stream,
                flags: 0,
                headers: block,
            },
            Err(e) => {
                tracing::debug!("SPDY session: {e}");
                return;
            }
        },
        Out::Data { stream, data, fin } => Frame::Data {
            stream,
            flags: if fin { FLAG_FIN } else { 0 },
            data,
        },
        Out::Reset { stream, status } => Frame::RstStream { stream, status },
        Out::Ping(id) => Frame::Ping { id },
        Out::GoAway { last_good, status } => Frame::GoAway { last_good, status },
    };
    if let Err(e) = frame::encode(&frame, buf) {
        tracing::debug!("SPDY session: {e}");
    }
}
