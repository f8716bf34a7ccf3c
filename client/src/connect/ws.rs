//! The channel protocol of Kubernetes' streaming WebSockets (`*.channel.k8s.io`), shared by
//! the client and `TestApiServer`.
//!
//! Every binary message is one byte of channel number followed by that channel's data
//! (k8s.io/apimachinery `util/httpstream/wsstream`). Remote command (exec, attach) channels
//! are 0 stdin, 1 stdout, 2 stderr, 3 error (a `metav1.Status` since v4) and 4 resize (a
//! `TerminalSize` JSON, since v4); `v5.channel.k8s.io` adds the close signal: the message
//! `[255, channel]` half-closes a stream (the client's stdin), which v4 cannot express.
//! Port-forward uses channels `2i` (data) and `2i + 1` (error) for the `i`th requested port;
//! the server's first message on each of them is the port as 2 bytes little-endian.
//!
//! Public so that `kinform-testserver` speaks the same framing as the client; not meant for
//! controllers, which use [`AttachedProcess`](super::AttachedProcess) and
//! [`Portforwarder`](super::Portforwarder).
//!
//! Only the binary protocols are implemented; the base64 ones (`base64.channel.k8s.io`) that
//! browsers needed are not offered.

use bytes::Bytes;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::Role;

/// Remote command protocol v5: v4 plus the close signal.
pub const V5_PROTOCOL: &str = "v5.channel.k8s.io";
/// Remote command protocol v4: a Status on the error channel, terminal resize.
pub const V4_PROTOCOL: &str = "v4.channel.k8s.io";
/// The port-forward WebSocket protocol name kubelet also accepts.
pub const PORT_FORWARD_PROTOCOL: &str = "portforward.k8s.io";

/// Channel numbers of remote command (exec, attach) streams.
pub mod channel {
    /// The process's standard input.
    pub const STDIN: u8 = 0;
    /// The process's standard output.
    pub const STDOUT: u8 = 1;
    /// The process's standard error.
    pub const STDERR: u8 = 2;
    /// The outcome: a `metav1.Status` JSON (v4 and later).
    pub const ERROR: u8 = 3;
    /// Terminal resize events: a `TerminalSize` JSON (v4 and later).
    pub const RESIZE: u8 = 4;
    /// The v5 close signal: `[CLOSE, channel]`.
    pub const CLOSE: u8 = 255;
}

/// A WebSocket over any connection.
pub type Ws<S> = WebSocketStream<S>;

/// Wraps an upgraded connection as a WebSocket in `role`.
pub async fn websocket<S>(io: S, role: Role) -> Ws<S>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    WebSocketStream::from_raw_socket(io, role, None).await
}

/// The binary message carrying `data` on `channel`.
pub fn frame(channel: u8, data: &[u8]) -> Message {
    let mut v = Vec::with_capacity(data.len() + 1);
    v.push(channel);
    v.extend_from_slice(data);
    Message::Binary(Bytes::from(v))
}

/// A close frame with the normal closure code (1000): Go's WebSocket peers treat a close
/// without a code (1005) as an error.
pub fn close_normal() -> Message {
    use tokio_tungstenite::tungstenite::protocol::CloseFrame;
    use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
    Message::Close(Some(CloseFrame {
        code: CloseCode::Normal,
        reason: "".into(),
    }))
}

/// What one received message means.
#[derive(Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Incoming {
    /// Data on a channel (possibly empty).
    Data(u8, Bytes),
    /// The peer closed the WebSocket.
    Close,
    /// Control traffic (ping, pong) or an empty message, which the protocol ignores.
    Skip,
}

/// Splits a message into its channel and data. Binary and text messages alike carry data,
/// as kube-apiserver reads them.
pub fn parse(msg: Message) -> Incoming {
    match msg {
        Message::Binary(b) => data(b),
        // The API server reads text messages as data too (apimachinery's wsstream receives
        // every message as bytes); some clients, the Python `kubernetes` package among
        // them, write stdin as text messages.
        Message::Text(t) => data(Bytes::from(t)),
        Message::Close(_) => Incoming::Close,
        Message::Ping(_) | Message::Pong(_) | Message::Frame(_) => Incoming::Skip,
    }
}

/// A data message's channel byte and the data after it; an empty message is skipped.
fn data(b: Bytes) -> Incoming {
    match b.first() {
        None => Incoming::Skip,
        Some(&c) => Incoming::Data(c, b.slice(1..)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_round_trip() {
        let m = frame(channel::STDOUT, b"hi");
        assert_eq!(
            parse(m),
            Incoming::Data(channel::STDOUT, Bytes::from_static(b"hi"))
        );
        assert_eq!(parse(Message::Binary(Bytes::new())), Incoming::Skip);
        assert_eq!(
            parse(Message::Text("\u{1}hi".into())),
            Incoming::Data(channel::STDOUT, Bytes::from_static(b"hi"))
        );
        assert_eq!(parse(Message::Close(None)), Incoming::Close);
    }
}
