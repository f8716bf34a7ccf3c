//! Streaming decode of watch responses: newline-delimited JSON `WatchEvent`s, each decoded as
//! soon as its line is complete.
//!
//! Chunks are scanned for newlines; complete lines are decoded straight from the chunk and
//! only the unfinished tail of a chunk is kept, so a long watch is never re-buffered. The
//! object of each event is decoded once, from the borrowed raw JSON of the line. A line that is
//! not a watch event yields an [`Error::Decode`] naming the request and the resource and the
//! stream goes on; a last line cut off by the end of the stream yields one too.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use bytes::Bytes;
use futures_util::StreamExt as _;
use futures_util::stream::{self, BoxStream};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Status;
use serde::Deserialize;
use serde::de::{DeserializeOwned, Error as _};
use serde_json::value::RawValue;

use crate::client::{Bookmark, Error, WatchEvent, WatchStream};

#[derive(Deserialize)]
struct RawEvent<'a> {
    #[serde(rename = "type", borrow)]
    kind: &'a str,
    #[serde(borrow)]
    object: &'a RawValue,
}

#[derive(Deserialize, Default)]
struct BookmarkObject {
    #[serde(default)]
    metadata: BookmarkMeta,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct BookmarkMeta {
    #[serde(default)]
    resource_version: Option<String>,
    #[serde(default)]
    annotations: Option<BTreeMap<String, String>>,
}

/// What a decode error names.
pub(crate) struct Origin {
    pub(crate) request: String,
    pub(crate) resource: String,
}

impl Origin {
    fn error(&self, source: serde_json::Error) -> Error {
        Error::Decode {
            request: self.request.clone(),
            what: format!("a {} watch event", self.resource),
            source,
        }
    }
}

/// Decodes one line of a watch response (one `{"type":...,"object":...}` event).
pub fn decode_watch_line<K: DeserializeOwned>(
    line: &[u8],
) -> Result<WatchEvent<K>, serde_json::Error> {
    let raw: RawEvent<'_> = serde_json::from_slice(line)?;
    let json = raw.object.get();
    Ok(match raw.kind {
        "ADDED" => WatchEvent::Added(serde_json::from_str(json)?),
        "MODIFIED" => WatchEvent::Modified(serde_json::from_str(json)?),
        "DELETED" => WatchEvent::Deleted(serde_json::from_str(json)?),
        "BOOKMARK" => {
            let b: BookmarkObject = serde_json::from_str(json)?;
            WatchEvent::Bookmark(Bookmark {
                resource_version: b.metadata.resource_version.unwrap_or_default(),
                annotations: b.metadata.annotations.unwrap_or_default(),
            })
        }
        "ERROR" => WatchEvent::Error(Box::new(serde_json::from_str::<Status>(json)?)),
        other => {
            return Err(serde_json::Error::custom(format!(
                "unknown watch event type {other:?}"
            )));
        }
    })
}

fn is_blank(line: &[u8]) -> bool {
    line.iter().all(u8::is_ascii_whitespace)
}

struct State<K> {
    src: BoxStream<'static, Result<Bytes, Error>>,
    tail: Vec<u8>,
    ready: VecDeque<Result<WatchEvent<K>, Error>>,
    origin: Arc<Origin>,
    done: bool,
}

impl<K: DeserializeOwned> State<K> {
    fn push_line(&mut self, line: &[u8]) {
        if is_blank(line) {
            return;
        }
        let ev = decode_watch_line(line).map_err(|e| self.origin.error(e));
        self.ready.push_back(ev);
    }

    fn feed(&mut self, chunk: &[u8]) {
        let mut rest = chunk;
        if !self.tail.is_empty() {
            match memchr(rest) {
                Some(i) => {
                    let mut line = std::mem::take(&mut self.tail);
                    line.extend_from_slice(&rest[..i]);
                    self.push_line(&line);
                    rest = &rest[i + 1..];
                }
                None => {
                    self.tail.extend_from_slice(rest);
                    return;
                }
            }
        }
        while let Some(i) = memchr(rest) {
            self.push_line(&rest[..i]);
            rest = &rest[i + 1..];
        }
        self.tail.extend_from_slice(rest);
    }

    fn finish(&mut self) {
        let tail = std::mem::take(&mut self.tail);
        self.push_line(&tail);
    }
}

fn memchr(s: &[u8]) -> Option<usize> {
    s.iter().position(|&b| b == b'\n')
}

/// Decodes a watch body stream into events.
///
/// The stream is fused: once it has ended, polling it again answers `None` instead of
/// panicking (a plain `unfold` panics there), so callers that poll an ended watch once more,
/// e.g. in a `select!` loop, are safe.
pub(crate) fn decode_stream<K: DeserializeOwned + Send + 'static>(
    src: BoxStream<'static, Result<Bytes, Error>>,
    origin: Origin,
) -> WatchStream<K> {
    let state = State {
        src,
        tail: Vec::new(),
        ready: VecDeque::new(),
        origin: Arc::new(origin),
        done: false,
    };
    stream::unfold(state, |mut s| async move {
        loop {
            if let Some(ev) = s.ready.pop_front() {
                return Some((ev, s));
            }
            if s.done {
                return None;
            }
            match s.src.next().await {
                Some(Ok(chunk)) => s.feed(&chunk),
                Some(Err(e)) => {
                    s.done = true;
                    s.tail.clear();
                    s.ready.push_back(Err(e));
                }
                None => {
                    s.done = true;
                    s.finish();
                }
            }
        }
    })
    .fuse()
    .boxed()
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;

    async fn run(chunks: Vec<&'static [u8]>) -> Vec<Result<WatchEvent<ConfigMap>, Error>> {
        let src = stream::iter(chunks.into_iter().map(|c| Ok(Bytes::from_static(c)))).boxed();
        let origin = Origin {
            request: "GET /api/v1/configmaps?watch=true".into(),
            resource: "v1/configmaps".into(),
        };
        decode_stream::<ConfigMap>(src, origin).collect().await
    }

    #[tokio::test]
    async fn polling_an_ended_stream_again_is_none() {
        let src = stream::iter([Ok(Bytes::from_static(b"not json\n"))]).boxed();
        let origin = Origin {
            request: "GET /api/v1/configmaps?watch=true".into(),
            resource: "v1/configmaps".into(),
        };
        let mut s = decode_stream::<ConfigMap>(src, origin);
        assert!(matches!(s.next().await, Some(Err(Error::Decode { .. }))));
        assert!(s.next().await.is_none());
        assert!(s.next().await.is_none());
    }

    #[tokio::test]
    async fn lines_split_across_chunks() {
        let evs = run(vec![
            br#"{"type":"ADDED","object":{"metadata":{"name":"a","resourceVersion":"1"}}}"#,
            b"\n{\"type\":\"MODI",
            br#"FIED","object":{"metadata":{"name":"a","resourceVersion":"2"}}}
{"type":"BOOKMARK","object":{"kind":"ConfigMap","metadata":{"resourceVersion":"3","annotations":{"k8s.io/initial-events-end":"true"}}}}
"#,
        ])
        .await;
        assert_eq!(evs.len(), 3);
        assert!(
            matches!(&evs[0], Ok(WatchEvent::Added(cm)) if cm.metadata.name.as_deref() == Some("a"))
        );
        assert!(
            matches!(&evs[1], Ok(WatchEvent::Modified(cm)) if cm.metadata.resource_version.as_deref() == Some("2"))
        );
        match &evs[2] {
            Ok(WatchEvent::Bookmark(b)) => {
                assert_eq!(b.resource_version, "3");
                assert!(b.is_initial_events_end());
            }
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn bad_and_cut_lines_are_typed_errors() {
        let evs = run(vec![
            b"not json\n",
            br#"{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","code":410,"reason":"Expired","message":"too old resource version"}}"#,
            b"\n{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"na",
        ])
        .await;
        assert_eq!(evs.len(), 3);
        match &evs[0] {
            Err(Error::Decode { request, what, .. }) => {
                assert!(request.contains("watch=true"));
                assert!(what.contains("v1/configmaps"));
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(&evs[1], Ok(WatchEvent::Error(s)) if s.code == Some(410)));
        assert!(matches!(&evs[2], Err(Error::Decode { source, .. }) if source.is_eof()));
    }
}
