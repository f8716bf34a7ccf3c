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

use crate::connect::spdy::frame::{self, FLAG_FIN, Frame};
use crate::connect::spdy::headers::{Compressor, Decompressor, Headers};

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
    // Dropped unfinished (the server shutting down), the session still ends its streams and
    // its writer.
    let _ends_with_session = session.clone().drop_guard();
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

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::DuplexStream;

    /// The client end of a session under test, speaking frames built by `frame` and
    /// `headers` as spdystream's client would.
    struct Client {
        io: DuplexStream,
        buf: BytesMut,
        compress: Compressor,
        decompress: Decompressor,
    }

    impl Client {
        async fn send(&mut self, f: Frame) {
            let mut b = BytesMut::new();
            frame::encode(&f, &mut b).unwrap();
            self.io.write_all(&b).await.unwrap();
        }

        async fn open(&mut self, id: u32, pairs: &[(&str, &str)], flags: u8) {
            let mut h = Headers::default();
            for (k, v) in pairs {
                h.add(k, v);
            }
            let headers = self.compress.compress(&h).unwrap();
            self.send(Frame::SynStream {
                stream: id,
                associated: 0,
                priority: 0,
                slot: 0,
                flags,
                headers,
            })
            .await;
        }

        /// The next frame from the server, or `None` once it closed the connection.
        async fn next(&mut self) -> Option<Frame> {
            loop {
                if let Some(f) = frame::decode(&mut self.buf, frame::MAX_PAYLOAD).unwrap() {
                    if let Frame::SynReply { headers, .. } = &f {
                        assert_eq!(
                            self.decompress.decompress(headers).unwrap(),
                            Headers::default()
                        );
                    }
                    return Some(f);
                }
                let read = tokio::time::timeout(
                    std::time::Duration::from_secs(10),
                    self.io.read_buf(&mut self.buf),
                );
                if read.await.expect("the server said nothing in 10s").unwrap() == 0 {
                    return None;
                }
            }
        }
    }

    /// Starts a session that accepts streams with an `ok` header; returns the client end
    /// and the accepted streams.
    fn start() -> (Client, mpsc::Receiver<Stream>, tokio::task::JoinHandle<()>) {
        let (client, server) = tokio::io::duplex(1 << 20);
        let (tx, rx) = mpsc::channel(16);
        let accept = |h: &Headers| match h.get("ok") {
            Some(_) => Ok(()),
            None => Err("no ok header".to_owned()),
        };
        let task = tokio::spawn(serve(server, accept, tx));
        let client = Client {
            io: client,
            buf: BytesMut::new(),
            compress: Compressor::new(),
            decompress: Decompressor::new(),
        };
        (client, rx, task)
    }

    #[tokio::test]
    async fn streams_are_accepted_carry_data_both_ways_and_half_close() {
        let (mut c, mut streams, task) = start();
        c.open(1, &[("ok", "1"), ("streamType", "data")], 0).await;
        assert!(matches!(
            c.next().await,
            Some(Frame::SynReply {
                stream: 1,
                flags: 0,
                ..
            })
        ));
        let mut s = streams.recv().await.unwrap();
        assert_eq!((s.id, s.headers.get("streamtype")), (1, Some("data")));

        c.send(Frame::Data {
            stream: 1,
            flags: 0,
            data: Bytes::from_static(b"up"),
        })
        .await;
        c.send(Frame::Data {
            stream: 1,
            flags: FLAG_FIN,
            data: Bytes::from_static(b"!"),
        })
        .await;
        assert_eq!(s.incoming.recv().await.unwrap(), "up");
        assert_eq!(s.incoming.recv().await.unwrap(), "!");
        assert_eq!(
            s.incoming.recv().await,
            None,
            "the client's FIN ends the stream"
        );

        assert!(s.writer.write(b"down").await);
        s.writer.close().await;
        assert!(!s.writer.write(b"late").await, "nothing after FIN");
        assert_eq!(
            c.next().await,
            Some(Frame::Data {
                stream: 1,
                flags: 0,
                data: Bytes::from_static(b"down")
            })
        );
        assert_eq!(
            c.next().await,
            Some(Frame::Data {
                stream: 1,
                flags: FLAG_FIN,
                data: Bytes::new()
            })
        );

        // A SYN_STREAM with FIN opens a stream the client sends nothing on.
        c.open(3, &[("ok", "1")], FLAG_FIN).await;
        assert!(matches!(
            c.next().await,
            Some(Frame::SynReply { stream: 3, .. })
        ));
        let mut s3 = streams.recv().await.unwrap();
        assert_eq!(s3.incoming.recv().await, None);

        // The client's end of the connection ends the session and every stream.
        drop(c);
        task.await.unwrap();
        assert!(s3.writer.gone().is_cancelled());
        assert!(!s3.writer.write(b"x").await);
    }

    #[tokio::test]
    async fn refused_streams_resets_and_pings() {
        let (mut c, mut streams, _task) = start();
        // the accept function says no: RST_STREAM CANCEL, as spdystream's Reset
        c.open(1, &[("nope", "1")], 0).await;
        assert_eq!(
            c.next().await,
            Some(Frame::RstStream {
                stream: 1,
                status: frame::RST_CANCEL
            })
        );
        // an even (server-side) id, and an id not above the last: PROTOCOL_ERROR
        c.open(4, &[("ok", "1")], 0).await;
        assert_eq!(
            c.next().await,
            Some(Frame::RstStream {
                stream: 4,
                status: 1
            })
        );
        c.open(1, &[("ok", "1")], 0).await;
        assert_eq!(
            c.next().await,
            Some(Frame::RstStream {
                stream: 1,
                status: 1
            })
        );
        // the client's pings are echoed; settings and window updates are ignored
        c.send(Frame::Settings {
            flags: 0,
            entries: vec![],
        })
        .await;
        c.send(Frame::WindowUpdate {
            stream: 0,
            delta: 1,
        })
        .await;
        c.send(Frame::Ping { id: 5 }).await;
        assert_eq!(c.next().await, Some(Frame::Ping { id: 5 }));

        // the client's reset of a stream ends it on both sides
        c.open(7, &[("ok", "1")], 0).await;
        assert!(matches!(
            c.next().await,
            Some(Frame::SynReply { stream: 7, .. })
        ));
        let mut s = streams.recv().await.unwrap();
        c.send(Frame::RstStream {
            stream: 7,
            status: frame::RST_CANCEL,
        })
        .await;
        assert_eq!(s.incoming.recv().await, None);
        s.writer.gone().cancelled().await;
        assert!(!s.writer.write(b"x").await);

        // after GOAWAY, new streams are refused
        c.send(Frame::GoAway {
            last_good: 0,
            status: 0,
        })
        .await;
        c.open(9, &[("ok", "1")], 0).await;
        assert_eq!(
            c.next().await,
            Some(Frame::RstStream {
                stream: 9,
                status: frame::RST_REFUSED_STREAM
            })
        );
    }

    #[tokio::test]
    async fn stopping_the_session_ends_its_streams() {
        let (mut c, mut streams, task) = start();
        c.open(1, &[("ok", "1")], 0).await;
        assert!(matches!(
            c.next().await,
            Some(Frame::SynReply { stream: 1, .. })
        ));
        let s = streams.recv().await.unwrap();
        // as when the server shuts down: the session's task is dropped unfinished
        task.abort();
        let _ = task.await;
        tokio::time::timeout(
            std::time::Duration::from_secs(10),
            s.writer.gone().cancelled(),
        )
        .await
        .expect("the stream outlived its session");
        assert!(!s.writer.write(b"x").await);
    }

    #[tokio::test]
    async fn a_broken_header_block_ends_the_session_with_goaway() {
        let (mut c, _streams, task) = start();
        c.send(Frame::SynStream {
            stream: 1,
            associated: 0,
            priority: 0,
            slot: 0,
            flags: 0,
            headers: Bytes::from_static(b"\x78\xbb garbage"),
        })
        .await;
        assert_eq!(
            c.next().await,
            Some(Frame::GoAway {
                last_good: 0,
                status: frame::GOAWAY_PROTOCOL_ERROR
            })
        );
        assert_eq!(c.next().await, None, "the server closes the connection");
        task.await.unwrap();
    }

    #[tokio::test]
    async fn arbitrary_input_ends_the_session_without_panicking() {
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        for round in 0..200 {
            let (mut c, _streams, task) = start();
            let mut junk = Vec::new();
            for _ in 0..(round % 97) {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                junk.push(seed as u8);
            }
            if round % 2 == 0 && junk.len() >= 8 {
                // a version-3 control frame head, to get past the first check
                junk[0] = 0x80;
                junk[1] = 3;
                junk[5] = 0;
            }
            c.io.write_all(&junk).await.unwrap();
            drop(c);
            task.await.expect("the session task panicked");
        }
    }
}
