//! A WebSocket as a byte stream: the server end of client-go's `TunnelingConnection`, which
//! kubectl (1.31+) uses to carry SPDY inside the port-forward WebSocket (subprotocol
//! `SPDY/3.1+portforward.k8s.io`). Each binary message is a run of bytes with no framing of
//! its own; a normal close is the end of the stream. Text messages are not part of the
//! tunnel and end it, as they end the Go side.

use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, DuplexStream};
use tokio_tungstenite::tungstenite::Message;

use kinform_client::connect::ws;

/// Bytes buffered each way between the WebSocket and the byte stream.
const BUFFER: usize = 64 * 1024;

/// Returns the byte stream carried by `ws`; a task pumps between them until both directions
/// have ended.
pub(crate) fn byte_stream<S>(ws: ws::Ws<S>) -> DuplexStream
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (ours, theirs) = tokio::io::duplex(BUFFER);
    tokio::spawn(pump(ws, theirs));
    ours
}

async fn pump<S>(ws: ws::Ws<S>, io: DuplexStream)
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let (mut sink, mut stream) = ws.split();
    let (mut rd, mut wr) = tokio::io::split(io);
    let inbound = async move {
        while let Some(Ok(msg)) = stream.next().await {
            match msg {
                Message::Binary(b) => {
                    if wr.write_all(&b).await.is_err() {
                        break;
                    }
                }
                Message::Ping(_) | Message::Pong(_) | Message::Frame(_) => {}
                Message::Text(_) | Message::Close(_) => break,
            }
        }
        let _ = wr.shutdown().await;
    };
    let outbound = async move {
        let mut buf = vec![0u8; BUFFER];
        loop {
            match rd.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    let msg = Message::Binary(Bytes::copy_from_slice(&buf[..n]));
                    if sink.send(msg).await.is_err() {
                        return;
                    }
                }
            }
        }
        let _ = sink.send(ws::close_normal()).await;
        let _ = sink.close().await;
    };
    futures_util::future::join(inbound, outbound).await;
}
