//! The WebSocket channel protocol of port-forward (`v4.channel.k8s.io`,
//! `portforward.k8s.io`), kinform's client's: ports in the query, two channels per port (data
//! and error), each starting with the port number in two little-endian bytes.

use futures_util::{SinkExt, StreamExt};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message;

use crate::connect::portforward::Pod;
use crate::status::ApiError;
use kinform_client::connect::ws::{self, Incoming as Frame};

/// The `ports` of the query, as kube-apiserver's `PortForwardOptions` reads them (400 when
/// none or not a port).
pub(super) fn ports(query: Option<&str>) -> Result<Vec<u16>, ApiError> {
    let mut out = Vec::new();
    for pair in query.unwrap_or_default().split('&') {
        let Some(("ports" | "port", v)) = pair.split_once('=') else {
            continue;
        };
        let v = percent_encoding::percent_decode_str(v).decode_utf8_lossy();
        for p in v.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let port: u16 = p
                .parse()
                .ok()
                .filter(|p| *p > 0)
                .ok_or_else(|| ApiError::bad_request(format!("invalid port {p:?}")))?;
            out.push(port);
        }
    }
    if out.is_empty() {
        return Err(ApiError::bad_request(
            "query parameter \"ports\" is required",
        ));
    }
    if out.len() > 127 {
        return Err(ApiError::bad_request(
            "at most 127 ports can be forwarded at once",
        ));
    }
    Ok(out)
}

/// Serves the channels of `ports` on `ws` until every port's backend has closed or the client
/// leaves.
pub(super) async fn session<S>(ws: ws::Ws<S>, ports: Vec<u16>, pod: Pod)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    let (mut sink, mut stream) = ws.split();
    let (out_tx, mut out_rx) = mpsc::channel::<Message>(16);
    let mut writers = Vec::new();
    let mut open = 0usize;
    for (i, &port) in ports.iter().enumerate() {
        let data_ch = u8::try_from(2 * i).unwrap_or(u8::MAX);
        let le = port.to_le_bytes();
        for ch in [data_ch, data_ch + 1] {
            if sink.send(ws::frame(ch, &le)).await.is_err() {
                return;
            }
        }
        let conn = match pod.backend(port) {
            Err(message) => Err(message),
            Ok(addr) => TcpStream::connect(addr)
                .await
                .map_err(|e| pod.failure(port, format!("dial {addr}: {e}"))),
        };
        match conn {
            Err(message) => {
                writers.push(None);
                if sink
                    .send(ws::frame(data_ch + 1, message.as_bytes()))
                    .await
                    .is_err()
                {
                    return;
                }
            }
            Ok(tcp) => {
                let (mut rd, wr) = tcp.into_split();
                writers.push(Some(wr));
                open += 1;
                let tx = out_tx.clone();
                tokio::spawn(async move {
                    let mut buf = vec![0u8; 32 * 1024];
                    while let Ok(n) = rd.read(&mut buf).await {
                        if n == 0 || tx.send(ws::frame(data_ch, &buf[..n])).await.is_err() {
                            break;
                        }
                    }
                    // An empty message on the error channel marks this port's end.
                    let _ = tx.send(Message::Binary(bytes::Bytes::new())).await;
                });
            }
        }
    }
    drop(out_tx);
    while open > 0 {
        tokio::select! {
            out = out_rx.recv() => match out {
                Some(Message::Binary(b)) if b.is_empty() => open -= 1,
                Some(m) => {
                    if sink.send(m).await.is_err() {
                        return;
                    }
                }
                None => break,
            },
            msg = stream.next() => match msg.map(|m| m.map(ws::parse)) {
                Some(Ok(Frame::Data(ch, data))) => {
                    let i = usize::from(ch / 2);
                    if ch % 2 == 0
                        && let Some(Some(w)) = writers.get_mut(i)
                        && w.write_all(&data).await.is_err()
                    {
                        writers[i] = None;
                    }
                }
                Some(Ok(Frame::Skip)) => {}
                _ => return,
            },
        }
    }
    let _ = sink.send(ws::close_normal()).await;
    let _ = sink.close().await;
}
