//! SPDY/3.1, the stream protocol kubectl port-forward speaks to the kubelet through the API
//! server: either tunneled inside WebSocket binary messages (subprotocol
//! `SPDY/3.1+portforward.k8s.io`, kubectl 1.31+) or after a plain `Upgrade: SPDY/3.1` (the
//! fallback when the WebSocket upgrade fails). Only the server side is here: the test server
//! never opens streams itself.
//!
//! - `frame`: the frames on the wire, read and written without I/O;
//! - `headers`: header blocks and their zlib compression with SPDY/3's dictionary;
//! - `session`: one session over a byte stream: stream set-up, data, half-close, reset, pings.
//!
//! Written here rather than taken from crates.io: the one SPDY/3.1 crate found there,
//! `spdy-mux`, is a client-side multiplexer over pooled WebSocket transports (it opens stream
//! pairs; it does not accept them on a connection it is handed), young and with a single
//! author. zlib with a preset dictionary comes from `flate2` (its `zlib-rs` backend).

pub(crate) mod frame;
pub(crate) mod headers;
pub(crate) mod session;

pub(crate) use headers::Headers;
pub(crate) use session::{Stream, serve};
