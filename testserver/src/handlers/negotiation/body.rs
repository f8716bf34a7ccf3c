//! Response bodies: whole buffers, LIST bodies streamed in large chunks straight from the
//! stored bytes, and channel-fed chunked bodies for WATCH; and the one request-body
//! transcoding the router does before a handler reads JSON: `application/yaml` bodies of
//! create, update and delete become JSON, as kube-apiserver's YAML serializer converts them
//! (a body that is not one YAML document, or not UTF-8, is 400 BadRequest).

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::{BufMut, Bytes, BytesMut};
use http_body::{Body as HttpBody, Frame, SizeHint};
use http_body_util::{BodyExt, Full, combinators::BoxBody};
use tokio::sync::mpsc;

use crate::status::ApiError;

/// The body type of every response.
pub(crate) type Body = BoxBody<Bytes, Infallible>;

/// A body of one buffer.
pub(crate) fn full(bytes: impl Into<Bytes>) -> Body {
    Full::new(bytes.into()).boxed()
}

/// Whether a request `Content-Type` is YAML (`application/yaml`, kube-apiserver's YAML
/// media type).
pub(crate) fn is_yaml(content_type: &str) -> bool {
    content_type
        .split(';')
        .next()
        .is_some_and(|t| t.trim().eq_ignore_ascii_case("application/yaml"))
}

/// A YAML request body as the JSON a handler decodes.
pub(crate) fn yaml_to_json(body: &[u8]) -> Result<Bytes, ApiError> {
    let bad = |e: &dyn std::fmt::Display| {
        ApiError::bad_request(format!("error converting YAML to JSON: {e}"))
    };
    let text = std::str::from_utf8(body).map_err(|e| bad(&e))?;
    let value: serde_json::Value = serde_saphyr::from_str(text).map_err(|e| bad(&e))?;
    serde_json::to_vec(&value)
        .map(Bytes::from)
        .map_err(|e| bad(&e))
}

/// Target size of one LIST body frame.
const CHUNK: usize = 256 * 1024;

/// A LIST response: `head`, the items separated by commas, then `tail`, written in frames of
/// about 256 KiB without building the whole document in memory.
pub(crate) struct ListBody {
    head: Option<Bytes>,
    items: std::vec::IntoIter<Bytes>,
    first: bool,
    tail: Option<Bytes>,
    remaining: u64,
}

impl ListBody {
    pub(crate) fn new(head: Bytes, items: Vec<Bytes>, tail: Bytes) -> Self {
        let remaining = head.len() as u64
            + tail.len() as u64
            + items.iter().map(|i| i.len() as u64 + 1).sum::<u64>()
            - u64::from(!items.is_empty());
        Self {
            head: Some(head),
            items: items.into_iter(),
            first: true,
            tail: Some(tail),
            remaining,
        }
    }
}

impl HttpBody for ListBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let this = &mut *self;
        if this.tail.is_none() {
            return Poll::Ready(None);
        }
        let mut buf = BytesMut::with_capacity(CHUNK + 8 * 1024);
        if let Some(h) = this.head.take() {
            buf.put_slice(&h);
        }
        while buf.len() < CHUNK {
            match this.items.next() {
                Some(item) => {
                    if !this.first {
                        buf.put_u8(b',');
                    }
                    this.first = false;
                    buf.put_slice(&item);
                }
                None => {
                    if let Some(t) = this.tail.take() {
                        buf.put_slice(&t);
                    }
                    break;
                }
            }
        }
        this.remaining = this.remaining.saturating_sub(buf.len() as u64);
        Poll::Ready(Some(Ok(Frame::data(buf.freeze()))))
    }

    fn is_end_stream(&self) -> bool {
        self.tail.is_none()
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.remaining)
    }
}

/// A chunked body fed by a channel of watch event lines; lines already queued when the
/// connection asks for data are written as one chunk.
pub(crate) struct ChannelBody {
    rx: mpsc::Receiver<Bytes>,
}

impl ChannelBody {
    pub(crate) fn new(rx: mpsc::Receiver<Bytes>) -> Self {
        Self { rx }
    }
}

impl HttpBody for ChannelBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let first = match self.rx.poll_recv(cx) {
            Poll::Ready(Some(b)) => b,
            Poll::Ready(None) => return Poll::Ready(None),
            Poll::Pending => return Poll::Pending,
        };
        // Coalesce the events already queued into one frame: fewer chunks and syscalls
        // when a watch is busy, no added delay when it is not.
        let Ok(second) = self.rx.try_recv() else {
            return Poll::Ready(Some(Ok(Frame::data(first))));
        };
        let mut buf = BytesMut::with_capacity(first.len() * 4 + second.len());
        buf.put_slice(&first);
        buf.put_slice(&second);
        while buf.len() < CHUNK {
            match self.rx.try_recv() {
                Ok(b) => buf.put_slice(&b),
                Err(_) => break,
            }
        }
        Poll::Ready(Some(Ok(Frame::data(buf.freeze()))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// kube-apiserver decodes `application/yaml` create and update bodies.
    #[test]
    fn yaml_bodies_become_json() {
        assert!(is_yaml("application/yaml; charset=utf-8"));
        assert!(!is_yaml("application/json"));
        let json = yaml_to_json(b"apiVersion: v1\nkind: ConfigMap\ndata:\n  a: '1'\n").unwrap();
        let v: serde_json::Value = serde_json::from_slice(&json).unwrap();
        assert_eq!(v["data"]["a"], "1");
        assert_eq!(yaml_to_json(b"a: [").unwrap_err().code, 400);
        assert_eq!(yaml_to_json(b"\xff").unwrap_err().code, 400);
    }

    #[tokio::test]
    async fn list_body_joins_items() {
        let body = ListBody::new(
            Bytes::from_static(b"{\"items\":["),
            vec![Bytes::from_static(b"1"), Bytes::from_static(b"2")],
            Bytes::from_static(b"]}"),
        );
        assert_eq!(body.size_hint().exact(), Some(15));
        let out = body.collect().await.unwrap().to_bytes();
        assert_eq!(&out[..], b"{\"items\":[1,2]}");
        let empty = ListBody::new(Bytes::from_static(b"["), vec![], Bytes::from_static(b"]"));
        assert_eq!(&empty.collect().await.unwrap().to_bytes()[..], b"[]");
    }
}
