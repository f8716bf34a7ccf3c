//! `pods/portforward` over a WebSocket: one connection carries every requested port, each
//! as a byte stream the caller reads and writes, with its own error channel (kube-rs's
//! `Portforwarder`; the API server's WebSocket port-forward protocol, kubelet's
//! `portforward/websocket.go`).
//!
//! The ports go in the query (`?ports=80,443`); the `i`th port gets channels `2i` (data) and
//! `2i + 1` (error), and the server's first message on each is the port, 2 bytes
//! little-endian, which is checked. One connection is one forwarded connection per port, as
//! with kubectl's WebSocket transport: open another `Portforwarder` for another connection.
//!
//! The protocol has no half-close: the caller ending its writes does not reach the backend;
//! the backend closing (or the server reporting an error) ends the connection, and every
//! port's stream then reads end-of-file.

use std::collections::HashMap;
use std::sync::Arc;

use futures_util::{SinkExt, StreamExt};
use http::Method;
use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::Role;

use super::ConnectError;
use super::ws::{self, Incoming, PORT_FORWARD_PROTOCOL, V4_PROTOCOL};
use crate::{Api, Error, Result};

const PIPE: usize = 64 * 1024;

/// Forwarded ports of one pod, over one WebSocket.
#[derive(Debug)]
pub struct Portforwarder {
    request: Arc<str>,
    ports: Vec<u16>,
    streams: HashMap<u16, DuplexStream>,
    errors: HashMap<u16, oneshot::Receiver<String>>,
    outcome: oneshot::Receiver<std::result::Result<(), ConnectError>>,
    task: JoinHandle<()>,
}

impl Portforwarder {
    /// The requested ports, in order.
    pub fn ports(&self) -> &[u16] {
        &self.ports
    }

    /// The stream of `port` (once): bytes written go to the pod's port, bytes read come from
    /// it.
    pub fn take_stream(&mut self, port: u16) -> Option<DuplexStream> {
        self.streams.remove(&port)
    }

    /// The first error the server reports for `port` (once), e.g. nothing listens on it;
    /// resolves to `None` when the connection ends without one.
    pub fn take_error(
        &mut self,
        port: u16,
    ) -> Option<impl std::future::Future<Output = Option<String>> + Send + 'static> {
        let rx = self.errors.remove(&port)?;
        Some(async move { rx.await.ok() })
    }

    /// Waits for the connection to end.
    pub async fn join(self) -> std::result::Result<(), ConnectError> {
        drop(self.streams);
        match self.outcome.await {
            Ok(r) => r,
            Err(_) => Err(ConnectError::Closed {
                request: self.request.to_string(),
                what: "port-forward connection ended (the connection task stopped)".into(),
            }),
        }
    }

    /// Ends the connection at once.
    pub fn abort(&self) {
        self.task.abort();
    }
}

impl<K> Api<K> {
    /// Forwards `ports` of the pod `name` (`pods/{name}/portforward`), as
    /// `kubectl port-forward`.
    pub async fn portforward(&self, name: &str, ports: &[u16]) -> Result<Portforwarder> {
        let path = format!("{}/portforward", self.connect_path(name));
        let mut unique = ports.to_vec();
        unique.sort_unstable();
        unique.dedup();
        if ports.is_empty() || unique.len() != ports.len() || ports.len() > 127 {
            return Err(Error::Transport {
                request: format!("GET {path}"),
                message: "port-forward needs 1 to 127 distinct ports".into(),
                source: None,
            });
        }
        let list: Vec<String> = ports.iter().map(u16::to_string).collect();
        let pq = format!("{path}?ports={}", list.join(","));
        let (io, _protocol) = self
            .client()
            .upgrade_websocket(Method::GET, &pq, &[V4_PROTOCOL, PORT_FORWARD_PROTOCOL])
            .await?;
        let request: Arc<str> = Arc::from(format!("GET {pq}"));
        let ws = ws::websocket(io, Role::Client).await;
        let mut streams = HashMap::new();
        let mut errors = HashMap::new();
        let mut ends = Vec::new();
        for &port in ports {
            let (user, driver) = tokio::io::duplex(PIPE);
            let (tx, rx) = oneshot::channel();
            streams.insert(port, user);
            errors.insert(port, rx);
            ends.push(PortEnds {
                port,
                pipe: Some(driver),
                error: Some(tx),
                seen_data: false,
                seen_error: false,
            });
        }
        let (outcome_tx, outcome) = oneshot::channel();
        let req = request.clone();
        let task = tokio::spawn(async move {
            let _ = outcome_tx.send(drive(ws, ends, req).await);
        });
        Ok(Portforwarder {
            request,
            ports: ports.to_vec(),
            streams,
            errors,
            outcome,
            task,
        })
    }
}

/// The connection's side of one port.
struct PortEnds {
    port: u16,
    pipe: Option<DuplexStream>,
    error: Option<oneshot::Sender<String>>,
    seen_data: bool,
    seen_error: bool,
}

async fn drive<S>(
    ws: ws::Ws<S>,
    mut ends: Vec<PortEnds>,
    request: Arc<str>,
) -> std::result::Result<(), ConnectError>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (mut sink, mut stream) = ws.split();
    // Each port's reader half feeds one queue of outgoing frames.
    let (out_tx, mut out_rx) = mpsc::channel::<Message>(16);
    let mut writers = Vec::new();
    let mut tasks = Vec::new();
    for (i, end) in ends.iter_mut().enumerate() {
        let Some(pipe) = end.pipe.take() else {
            writers.push(None);
            continue;
        };
        let (mut rd, wr) = tokio::io::split(pipe);
        writers.push(Some(wr));
        let ch = u8::try_from(2 * i).unwrap_or(u8::MAX);
        let tx = out_tx.clone();
        tasks.push(tokio::spawn(async move {
            let mut buf = vec![0u8; 32 * 1024];
            while let Ok(n) = rd.read(&mut buf).await {
                if n == 0 || tx.send(ws::frame(ch, &buf[..n])).await.is_err() {
                    break;
                }
            }
        }));
    }
    drop(out_tx);
    let result = loop {
        let msg = tokio::select! {
            m = stream.next() => m,
            Some(out) = out_rx.recv() => {
                if let Err(e) = sink.send(out).await {
                    break Err(ConnectError::websocket(&request, e));
                }
                continue;
            }
        };
        let msg = match msg {
            None => break Ok(()),
            Some(Ok(m)) => m,
            Some(Err(e)) => break Err(ConnectError::websocket(&request, e)),
        };
        let (ch, mut data) = match ws::parse(msg) {
            Incoming::Data(ch, d) => (ch, d),
            Incoming::Close => break Ok(()),
            Incoming::Skip => continue,
        };
        let i = usize::from(ch / 2);
        let Some(end) = ends.get_mut(i) else {
            break Err(ConnectError::frame(
                &request,
                Some(ch),
                format!("only {} ports were requested", ends.len()),
            ));
        };
        let is_error = ch % 2 == 1;
        let seen = if is_error {
            &mut end.seen_error
        } else {
            &mut end.seen_data
        };
        if !*seen {
            if data.len() < 2 {
                break Err(ConnectError::frame(
                    &request,
                    Some(ch),
                    "the first frame does not carry the port",
                ));
            }
            let port = u16::from_le_bytes([data[0], data[1]]);
            if port != end.port {
                break Err(ConnectError::frame(
                    &request,
                    Some(ch),
                    format!("announces port {port}, expected {}", end.port),
                ));
            }
            *seen = true;
            data = data.slice(2..);
        }
        if data.is_empty() {
            continue;
        }
        if is_error {
            if let Some(tx) = end.error.take() {
                let _ = tx.send(String::from_utf8_lossy(&data).into_owned());
            }
        } else if let Some(w) = writers.get_mut(i)
            && let Some(wr) = w
            && wr.write_all(&data).await.is_err()
        {
            *w = None;
        }
    };
    for task in tasks {
        task.abort();
    }
    for w in writers.iter_mut().flatten() {
        let _ = w.shutdown().await;
    }
    let _ = sink.send(ws::close_normal()).await;
    result
}
