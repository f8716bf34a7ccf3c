//! Errors of an established connection (exec, attach, portforward): the WebSocket failed or
//! was cut, a frame broke the channel protocol, or the error channel could not be decoded.
//!
//! Errors before the connection is established (the pod does not exist, the container is
//! not in its spec, the server refused the upgrade) are the client's [`Error`](crate::Error)
//! with the server's Status, returned by the call that opens the connection.

/// What can go wrong on an established exec, attach or portforward connection.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConnectError {
    /// The WebSocket failed (read or write error, a connection cut without a close handshake).
    #[error("{request}: the WebSocket connection failed: {source}")]
    WebSocket {
        /// The request that opened the connection, e.g. `GET /api/v1/namespaces/ns/pods/p/exec?...`.
        request: String,
        /// The WebSocket error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A frame does not follow the channel protocol (unknown channel, text frame on a binary
    /// protocol, a port-forward channel whose first frame does not carry its port).
    #[error("{request}: malformed frame{}: {message}", channel.map(|c| format!(" on channel {c}")).unwrap_or_default())]
    Frame {
        /// The request.
        request: String,
        /// The channel the frame was sent on, when it had one.
        channel: Option<u8>,
        /// What is wrong with it.
        message: String,
    },
    /// The error channel carried something that is not a `metav1.Status`.
    #[error("{request}: the error channel does not hold a Status: {source}")]
    Status {
        /// The request.
        request: String,
        /// The decode error.
        #[source]
        source: serde_json::Error,
    },
    /// The connection ended before the process reported how it ended.
    #[error("{request}: the connection was closed before the {what}")]
    Closed {
        /// The request.
        request: String,
        /// What was still expected.
        what: String,
    },
}

impl ConnectError {
    pub(crate) fn websocket(
        request: &str,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        Self::WebSocket {
            request: request.to_owned(),
            source: Box::new(source),
        }
    }

    pub(crate) fn frame(request: &str, channel: Option<u8>, message: impl Into<String>) -> Self {
        Self::Frame {
            request: request.to_owned(),
            channel,
            message: message.into(),
        }
    }
}
