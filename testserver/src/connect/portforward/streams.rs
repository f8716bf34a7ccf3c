//! Port-forward over SPDY streams, as the kubelet serves it (`cri/streaming/portforward/
//! httpstream.go`): each forwarded connection is a pair of streams, `error` and `data`, with
//! the headers `streamType`, `port` and `requestID`.
//!
//! - A stream without a valid `port` (1..65535) or `streamType` (`error`, `data`) is
//!   refused when it opens.
//! - Streams are paired by `requestID`; a client that sends none gets the kubelet's guess
//!   from the stream ids (an error stream's id, a data stream's id minus 2). A second stream
//!   of the same type for a request is reported on the pair's error stream; a pair not
//!   complete within [`PAIR_TIMEOUT`] gets "timed out waiting for streams".
//! - A complete pair dials the port's backend and copies both ways: the client's FIN
//!   half-closes the backend connection, the backend's end sends FIN on the data stream, and
//!   the client's reset of the data stream stops both. Then the error stream is closed
//!   (FIN): empty when all went well, carrying the kubelet-worded failure when there is no
//!   backend or it cannot be dialled (kubectl prints it and, since 1.30, stops forwarding).

use std::collections::HashMap;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::connect::portforward::Pod;
use crate::connect::spdy::{self, Headers, Stream};

/// How long the kubelet waits for both streams of a pair (its `streamCreationTimeout`).
pub(crate) const PAIR_TIMEOUT: Duration = Duration::from_secs(30);
/// Bytes read from the backend at a time (one DATA frame).
const CHUNK: usize = 32 * 1024;

const STREAM_TYPE: &str = "streamType";
const PORT: &str = "port";
const REQUEST_ID: &str = "requestID";

/// Serves port-forward streams on the SPDY session carried by `io` until it ends.
pub(super) async fn serve<IO>(io: IO, pod: Pod)
where
    IO: AsyncRead + AsyncWrite + Send + 'static,
{
    let (tx, rx) = mpsc::channel(16);
    tokio::join!(spdy::serve(io, check, tx), pair(rx, pod));
}

/// The kubelet's check of a new stream's headers.
fn check(h: &Headers) -> Result<(), String> {
    port(h)?;
    match h.get(STREAM_TYPE) {
        None | Some("") => Err(format!("{STREAM_TYPE:?} header is required")),
        Some("error" | "data") => Ok(()),
        Some(other) => Err(format!("invalid stream type {other:?}")),
    }
}

fn port(h: &Headers) -> Result<u16, String> {
    let p = h
        .get(PORT)
        .filter(|p| !p.is_empty())
        .ok_or_else(|| format!("{PORT:?} header is required"))?;
    match p.parse::<u16>() {
        Ok(0) => Err(format!("port {p:?} must be > 0")),
        Ok(port) => Ok(port),
        Err(e) => Err(format!("unable to parse {p:?} as a port: {e}")),
    }
}

/// The request a stream belongs to: its `requestID`, or for clients that send none, the
/// kubelet's guess from the stream id.
fn request_id(s: &Stream) -> String {
    match s.headers.get(REQUEST_ID).filter(|r| !r.is_empty()) {
        Some(r) => r.to_owned(),
        None if s.headers.get(STREAM_TYPE) == Some("data") => (i64::from(s.id) - 2).to_string(),
        None => s.id.to_string(),
    }
}

/// One request's streams as they arrive.
struct Pair {
    error: Option<Stream>,
    data: Option<Stream>,
    deadline: Instant,
}

/// Pairs streams by request and starts forwarding each complete pair.
async fn pair(mut rx: mpsc::Receiver<Stream>, pod: Pod) {
    let mut pending: HashMap<String, Pair> = HashMap::new();
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    loop {
        let stream = tokio::select! {
            s = rx.recv() => match s {
                Some(s) => s,
                None => return,
            },
            _ = tick.tick() => {
                let now = Instant::now();
                let expired: Vec<String> = pending
                    .iter()
                    .filter(|(_, p)| p.deadline <= now)
                    .map(|(k, _)| k.clone())
                    .collect();
                for id in expired {
                    let Some(p) = pending.remove(&id) else { continue };
                    let msg = format!("(request={id}) timed out waiting for streams");
                    tokio::spawn(async move {
                        if let Some(error) = p.error {
                            error.writer.write(msg.as_bytes()).await;
                            error.writer.close().await;
                        }
                        if let Some(data) = p.data {
                            data.writer.reset(spdy::frame::RST_CANCEL).await;
                        }
                    });
                }
                continue;
            }
        };
        let mut stream = stream;
        let id = request_id(&stream);
        let is_data = stream.headers.get(STREAM_TYPE) == Some("data");
        if !is_data {
            // Nothing is read from an error stream (the client half-closes it at once): what
            // a client would send there is dropped rather than held.
            stream.incoming.close();
        }
        let p = pending.entry(id.clone()).or_insert_with(|| Pair {
            error: None,
            data: None,
            deadline: Instant::now() + PAIR_TIMEOUT,
        });
        let slot = if is_data { &mut p.data } else { &mut p.error };
        if slot.is_some() {
            let kind = if is_data { "data" } else { "error" };
            let msg =
                format!("error processing stream for request {id}: {kind} stream already assigned");
            tracing::debug!("port-forward: {msg}");
            if let Some(error) = &p.error {
                error.writer.write(msg.as_bytes()).await;
            }
            stream.writer.reset(spdy::frame::RST_CANCEL).await;
            continue;
        }
        *slot = Some(stream);
        if p.error.is_some()
            && p.data.is_some()
            && let Some(Pair {
                error: Some(error),
                data: Some(data),
                ..
            }) = pending.remove(&id)
        {
            tokio::spawn(forward(error, data, pod.clone()));
        }
    }
}

/// Forwards one connection: dials the backend, copies both ways, then closes both streams.
async fn forward(error: Stream, data: Stream, pod: Pod) {
    // Both streams were checked on arrival; the data stream's port is the one forwarded.
    let port = port(&data.headers).unwrap_or_default();
    let dialled = match pod.backend(port) {
        Err(message) => Err(message),
        Ok(addr) => TcpStream::connect(addr)
            .await
            .map_err(|e| pod.failure(port, format!("dial tcp {addr}: {e}"))),
    };
    match dialled {
        Ok(tcp) => copy(data.incoming, &data.writer, tcp).await,
        Err(message) => {
            tracing::debug!("port-forward: {message}");
            error.writer.write(message.as_bytes()).await;
        }
    }
    error.writer.close().await;
    data.writer.close().await;
}

/// Copies between the data stream and the backend until both directions have ended or the
/// client resets the stream.
async fn copy(
    mut incoming: mpsc::Receiver<bytes::Bytes>,
    writer: &spdy::session::StreamWriter,
    tcp: TcpStream,
) {
    let (mut rd, mut wr) = tcp.into_split();
    let up = async {
        while let Some(chunk) = incoming.recv().await {
            if wr.write_all(&chunk).await.is_err() {
                break;
            }
        }
        // The client's FIN (or reset): the backend sees the end of its input.
        let _ = wr.shutdown().await;
    };
    let down = async {
        let mut buf = vec![0u8; CHUNK];
        loop {
            match rd.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    if !writer.write(&buf[..n]).await {
                        return;
                    }
                }
            }
        }
        writer.close().await;
    };
    tokio::select! {
        _ = async { tokio::join!(up, down) } => {}
        _ = writer.gone().cancelled() => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> Headers {
        let mut h = Headers::default();
        for (k, v) in pairs {
            h.add(k, v);
        }
        h
    }

    /// kubelet's `httpStreamReceived`: a valid `port` and `streamType` are required.
    #[test]
    fn new_streams_are_checked_as_the_kubelet_does() {
        assert_eq!(
            check(&headers(&[("port", "80"), ("streamType", "data")])),
            Ok(())
        );
        assert_eq!(
            check(&headers(&[("port", "65535"), ("streamtype", "error")])),
            Ok(())
        );
        let err = |pairs: &[(&str, &str)]| check(&headers(pairs)).unwrap_err();
        assert!(err(&[("streamType", "data")]).contains("\"port\" header is required"));
        assert!(err(&[("port", ""), ("streamType", "data")]).contains("is required"));
        assert!(err(&[("port", "0"), ("streamType", "data")]).contains("must be > 0"));
        assert!(err(&[("port", "65536"), ("streamType", "data")]).contains("unable to parse"));
        assert!(err(&[("port", "x"), ("streamType", "data")]).contains("unable to parse"));
        assert!(err(&[("port", "80")]).contains("\"streamType\" header is required"));
        assert!(err(&[("port", "80"), ("streamType", "other")]).contains("invalid stream type"));
    }
}
