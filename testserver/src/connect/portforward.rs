//! port-forward: the server side of the WebSocket port-forward protocol, connecting each
//! requested port to the backend a test registered.

use std::sync::Arc;

use futures_util::{SinkExt, StreamExt};
use http::{Request, Response};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::Role;

use super::super::State;
use super::super::body::Body;
use super::super::status::ApiError;
use super::ConnectTarget;
use super::upgrade;
use kinform_client::connect::ws::{self, Incoming as Frame, PORT_FORWARD_PROTOCOL, V4_PROTOCOL};

fn ports(query: Option<&str>) -> Result<Vec<u16>, ApiError> {
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

pub(crate) fn serve(
    state: &Arc<State>,
    mut req: Request<Incoming>,
    t: &ConnectTarget,
) -> Result<Response<Body>, ApiError> {
    let ports = ports(req.uri().query())?;
    let accepted = upgrade::accept(&mut req, &[V4_PROTOCOL, PORT_FORWARD_PROTOCOL])?;
    let backends: Vec<_> = {
        let map = state.connect.port_backends.read();
        ports
            .iter()
            .map(|p| {
                map.get(&(t.namespace.clone(), t.name().to_owned(), *p))
                    .copied()
            })
            .collect()
    };
    let pod = format!("{}/{}", t.namespace, t.name());
    let cancel = state.cancel.clone();
    let on_upgrade = accepted.on_upgrade;
    tokio::spawn(async move {
        let Ok(upgraded) = on_upgrade.await else {
            return;
        };
        let ws = ws::websocket(TokioIo::new(upgraded), Role::Server).await;
        tokio::select! {
            _ = session(ws, ports, backends, pod) => {}
            _ = cancel.cancelled() => {}
        }
    });
    Ok(accepted.response)
}

async fn session<S>(
    ws: ws::Ws<S>,
    ports: Vec<u16>,
    backends: Vec<Option<std::net::SocketAddr>>,
    pod: String,
) where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    let (mut sink, mut stream) = ws.split();
    let (out_tx, mut out_rx) = mpsc::channel::<Message>(16);
    let mut writers = Vec::new();
    let mut open = 0usize;
    for (i, (&port, backend)) in ports.iter().zip(&backends).enumerate() {
        let data_ch = u8::try_from(2 * i).unwrap_or(u8::MAX);
        let le = port.to_le_bytes();
        for ch in [data_ch, data_ch + 1] {
            if sink.send(ws::frame(ch, &le)).await.is_err() {
                return;
            }
        }
        let conn = match backend {
            None => Err(format!(
                "error forwarding port {port} to pod {pod}: no backend is registered for this port (TestApiServer::port_forward_backend)"
            )),
            Some(addr) => TcpStream::connect(addr).await.map_err(|e| {
                format!("error forwarding port {port} to pod {pod}: dial {addr}: {e}")
            }),
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
