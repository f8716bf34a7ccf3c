//! Streaming decode of watch responses: newline-delimited JSON `WatchEvent`s, each decoded as
//! soon as its line is complete.
//!
//! Chunks are scanned for newlines (memchr); complete lines are decoded straight from the chunk
//! and only the unfinished tail of a chunk is kept, so a long watch is never re-buffered. All
//! the lines of the chunks ready at once are decoded together and handed out as one batch
//! ([`decode_batches`]): the reflector pays its per-item costs (wake-ups, locks) per batch,
//! not per event; the per-event stream of `Api::watch` is the same batches, flattened. The
//! object of each event is decoded once, from the borrowed raw JSON of the line. A line that is
//! not a watch event yields an [`Error::Decode`] naming the request and the resource and the
//! stream goes on; a last line cut off by the end of the stream yields one too.
//!
//! One line is bounded by `Config::max_watch_event_bytes` (16 MiB by default): a longer line,
//! complete or not (a server that never sends a newline), ends the stream with an
//! [`Error::TooLarge`] naming the request, after the lines before it; a reflector then relists
//! as after any broken watch. Only the length is checked per line.
//!
//! Lines inside one chunk are handed on as slices of it ([`RawBatch`]); the reflector's
//! decoding of them (shared objects, two threads) is in `decode::events`.

use std::collections::BTreeMap;
use std::fmt;
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures_util::stream::{self, BoxStream};
use futures_util::{Stream, StreamExt as _};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Status;
use serde::Deserialize;
use serde::de::{
    DeserializeOwned, DeserializeSeed, Deserializer, Error as _, IgnoredAny, MapAccess, Visitor,
};
use serde_json::value::RawValue;

use crate::{Bookmark, Error, WatchEvent, WatchStream};

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

/// Consecutive events of one watch, in order (never empty).
pub type WatchBatch<K> = Vec<Result<WatchEvent<K>, Error>>;

/// A stream of watch event batches; ends when the server closes the watch.
pub type WatchBatchStream<K> = BoxStream<'static, WatchBatch<K>>;

/// What a decode error names, and the longest line the stream takes.
#[derive(Clone)]
pub(crate) struct Origin {
    pub(crate) request: String,
    pub(crate) resource: String,
    /// The longest line (one event), `Config::max_watch_event_bytes`.
    pub(crate) max_line: usize,
}

impl Origin {
    fn too_large(&self) -> Error {
        Error::TooLarge {
            request: self.request.clone(),
            what: format!("a {} watch event", self.resource),
            limit: self.max_line,
            setting: "Config::max_watch_event_bytes",
        }
    }

    pub(crate) fn error(&self, source: serde_json::Error) -> Error {
        Error::Decode {
            request: self.request.clone(),
            what: format!("a {} watch event", self.resource),
            source,
        }
    }
}

/// Decodes one line of a watch response (one `{"type":...,"object":...}` event).
///
/// One pass: when `type` comes before `object` (as every API server writes it), the object
/// is decoded straight into its type; otherwise it is kept as borrowed raw JSON and decoded
/// once the type is known.
pub fn decode_watch_line<K: DeserializeOwned>(
    line: &[u8],
) -> Result<WatchEvent<K>, serde_json::Error> {
    serde_json::from_slice::<Line<K>>(line).map(|l| l.0)
}

/// The `type` of a watch event.
#[derive(Clone, Copy)]
pub(crate) enum Kind {
    Added,
    Modified,
    Deleted,
    Bookmark,
    Error,
}

impl Kind {
    pub(crate) fn parse<E: serde::de::Error>(s: &str) -> Result<Self, E> {
        Ok(match s {
            "ADDED" => Kind::Added,
            "MODIFIED" => Kind::Modified,
            "DELETED" => Kind::Deleted,
            "BOOKMARK" => Kind::Bookmark,
            "ERROR" => Kind::Error,
            other => return Err(E::custom(format!("unknown watch event type {other:?}"))),
        })
    }

    /// Decodes the event's object with `de`.
    pub(crate) fn decode<'de, K: DeserializeOwned, D: Deserializer<'de>>(
        self,
        de: D,
    ) -> Result<WatchEvent<K>, D::Error> {
        Ok(match self {
            Kind::Added => WatchEvent::Added(K::deserialize(de)?),
            Kind::Modified => WatchEvent::Modified(K::deserialize(de)?),
            Kind::Deleted => WatchEvent::Deleted(K::deserialize(de)?),
            Kind::Bookmark => {
                let b = BookmarkObject::deserialize(de)?;
                WatchEvent::Bookmark(Bookmark {
                    resource_version: b.metadata.resource_version.unwrap_or_default(),
                    annotations: b.metadata.annotations.unwrap_or_default(),
                })
            }
            Kind::Error => WatchEvent::Error(Box::new(Status::deserialize(de)?)),
        })
    }
}

/// A watch event's `type`, read from a string without allocating.
struct KindVisitor;

impl Visitor<'_> for KindVisitor {
    type Value = Kind;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a watch event type")
    }
    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Kind, E> {
        Kind::parse(v)
    }
}

impl<'de> Deserialize<'de> for Kind {
    fn deserialize<D: Deserializer<'de>>(de: D) -> Result<Self, D::Error> {
        de.deserialize_str(KindVisitor)
    }
}

/// Decodes the object of an event whose type is known, in place.
struct ObjectSeed<K>(Kind, PhantomData<fn() -> K>);

impl<'de, K: DeserializeOwned> DeserializeSeed<'de> for ObjectSeed<K> {
    type Value = WatchEvent<K>;
    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<Self::Value, D::Error> {
        self.0.decode(de)
    }
}

/// The fields of a watch event.
enum Field {
    Type,
    Object,
    Other,
}

struct FieldVisitor;

impl Visitor<'_> for FieldVisitor {
    type Value = Field;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a watch event field")
    }
    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Field, E> {
        Ok(match v {
            "type" => Field::Type,
            "object" => Field::Object,
            _ => Field::Other,
        })
    }
}

impl<'de> Deserialize<'de> for Field {
    fn deserialize<D: Deserializer<'de>>(de: D) -> Result<Self, D::Error> {
        de.deserialize_identifier(FieldVisitor)
    }
}

/// One watch event line.
struct Line<K>(WatchEvent<K>);

struct LineVisitor<K>(PhantomData<fn() -> K>);

impl<'de, K: DeserializeOwned> Visitor<'de> for LineVisitor<K> {
    type Value = Line<K>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a watch event object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Line<K>, A::Error> {
        let mut kind: Option<Kind> = None;
        let mut event: Option<WatchEvent<K>> = None;
        let mut early: Option<&'de RawValue> = None;
        while let Some(field) = map.next_key::<Field>()? {
            match field {
                Field::Type if kind.is_some() => return Err(A::Error::duplicate_field("type")),
                Field::Type => kind = Some(map.next_value()?),
                Field::Object if event.is_some() || early.is_some() => {
                    return Err(A::Error::duplicate_field("object"));
                }
                Field::Object => match kind {
                    Some(k) => event = Some(map.next_value_seed(ObjectSeed(k, PhantomData))?),
                    None => early = Some(map.next_value()?),
                },
                Field::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        let kind = kind.ok_or_else(|| A::Error::missing_field("type"))?;
        match (event, early) {
            (Some(ev), _) => Ok(Line(ev)),
            (None, Some(raw)) => {
                let mut de = serde_json::Deserializer::from_str(raw.get());
                kind.decode(&mut de).map(Line).map_err(A::Error::custom)
            }
            (None, None) => Err(A::Error::missing_field("object")),
        }
    }
}

impl<'de, K: DeserializeOwned> Deserialize<'de> for Line<K> {
    fn deserialize<D: Deserializer<'de>>(de: D) -> Result<Self, D::Error> {
        de.deserialize_map(LineVisitor(PhantomData))
    }
}

fn is_blank(line: &[u8]) -> bool {
    line.iter().all(u8::is_ascii_whitespace)
}

/// Bytes of received chunks decoded into one batch at most, when more chunks are ready.
///
/// Why 256 KiB (about 40 realistic pods), not more: during a burst of changes an event's
/// object is decoded into an object the informer has let go of (`reclaim`), and the first
/// events of a burst find none, since none has reached its handlers yet; every event of
/// the batches in flight until then is built afresh, in fresh memory. With 1 MiB batches
/// that was several hundred pods per burst: a burst's peak RSS 1.07-1.09x the RSS after
/// the sync, against 1.03-1.04x with 256 KiB, and half the page faults and about 40% fewer
/// allocations per event (docs/performance.md, "A/B measurements"). Batches of this size still
/// go to both decoding threads (`events`'s `PARALLEL_MIN_BYTES`).
const BATCH_BYTES: usize = 256 << 10;

/// The complete lines of the chunks ready at one poll, and the transport error that ended
/// the body after them, if any (never both empty).
pub(crate) struct RawBatch {
    /// Non-blank lines, without their newline, in order.
    pub lines: Vec<Bytes>,
    /// Reading the body failed after these lines (the stream ends).
    pub error: Option<Error>,
}

/// Splits received chunks into lines: a line inside one chunk is a slice of it (no copy);
/// only a line split across chunks is joined. A line longer than `max` is refused.
struct LineSplitter {
    tail: Vec<u8>,
    max: usize,
}

/// A line longer than the limit was met.
struct LineTooLong;

impl LineSplitter {
    fn push_line(line: Bytes, out: &mut Vec<Bytes>) {
        if !is_blank(&line) {
            out.push(line);
        }
    }

    /// Every line `chunk` completes; keeps the unfinished rest for the next chunk. A line
    /// longer than the limit stops the split (the lines before it are in `out`).
    fn feed(&mut self, chunk: &Bytes, out: &mut Vec<Bytes>) -> Result<(), LineTooLong> {
        let mut start = 0;
        if !self.tail.is_empty() {
            let Some(i) = memchr::memchr(b'\n', chunk) else {
                if self.tail.len() + chunk.len() > self.max {
                    return Err(LineTooLong);
                }
                self.tail.extend_from_slice(chunk);
                return Ok(());
            };
            if self.tail.len() + i > self.max {
                return Err(LineTooLong);
            }
            let mut line = std::mem::take(&mut self.tail);
            line.extend_from_slice(&chunk[..i]);
            Self::push_line(Bytes::from(line), out);
            start = i + 1;
        }
        let base = start;
        for i in memchr::memchr_iter(b'\n', &chunk[base..]) {
            if base + i - start > self.max {
                return Err(LineTooLong);
            }
            Self::push_line(chunk.slice(start..base + i), out);
            start = base + i + 1;
        }
        if chunk.len() - start > self.max {
            return Err(LineTooLong);
        }
        self.tail.extend_from_slice(&chunk[start..]);
        Ok(())
    }

    /// The stream ended: a non-blank unfinished line is a (cut) event and fails to decode.
    fn finish(&mut self, out: &mut Vec<Bytes>) {
        Self::push_line(Bytes::from(std::mem::take(&mut self.tail)), out);
    }
}

/// The lines of a watch body in batches: each item holds every complete line of the chunks
/// that were ready when it was polled.
struct RawBatchStream {
    src: BoxStream<'static, Result<Bytes, Error>>,
    splitter: LineSplitter,
    done: bool,
    /// What the error of a line over the limit names.
    origin: Origin,
}

impl Stream for RawBatchStream {
    type Item = RawBatch;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        let mut lines = Vec::new();
        let mut error = None;
        let mut read = 0;
        while !this.done && read < BATCH_BYTES {
            match this.src.poll_next_unpin(cx) {
                Poll::Ready(Some(Ok(chunk))) => {
                    read += chunk.len();
                    if this.splitter.feed(&chunk, &mut lines).is_err() {
                        this.done = true;
                        this.splitter.tail = Vec::new();
                        error = Some(this.origin.too_large());
                    }
                }
                Poll::Ready(Some(Err(e))) => {
                    this.done = true;
                    this.splitter.tail.clear();
                    error = Some(e);
                }
                Poll::Ready(None) => {
                    this.done = true;
                    this.splitter.finish(&mut lines);
                }
                Poll::Pending if lines.is_empty() => return Poll::Pending,
                Poll::Pending => break,
            }
        }
        if lines.is_empty() && error.is_none() {
            // Ended with nothing left, or a budget's worth of chunks without a complete line.
            if this.done {
                return Poll::Ready(None);
            }
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        Poll::Ready(Some(RawBatch { lines, error }))
    }
}

/// Splits a watch body stream into batches of lines (see [`RawBatch`]), each line at most
/// `origin.max_line` bytes; fused.
pub(crate) fn raw_batches(
    src: BoxStream<'static, Result<Bytes, Error>>,
    origin: &Origin,
) -> BoxStream<'static, RawBatch> {
    RawBatchStream {
        src,
        splitter: LineSplitter {
            tail: Vec::new(),
            max: origin.max_line,
        },
        done: false,
        origin: origin.clone(),
    }
    .boxed()
}

/// Decodes a watch body stream into batches of events: every complete line of the chunks
/// ready at each poll (up to about 256 KiB of them) is decoded at once, so the consumer pays
/// its per-item costs (wake-ups, locks) once per batch instead of once per event. A batch is
/// never empty; events keep their order across and within batches.
///
/// The stream is fused: once it has ended, polling it again answers `None`.
pub(crate) fn decode_batches<K: DeserializeOwned + Send + 'static>(
    src: BoxStream<'static, Result<Bytes, Error>>,
    origin: Origin,
) -> WatchBatchStream<K> {
    let raw = raw_batches(src, &origin);
    let origin = Arc::new(origin);
    raw.map(move |raw| {
        let mut out: WatchBatch<K> = raw
            .lines
            .iter()
            .map(|l| decode_watch_line(l).map_err(|e| origin.error(e)))
            .collect();
        out.extend(raw.error.map(Err));
        out
    })
    .boxed()
}

/// Decodes a watch body stream into events, one at a time (the batches of
/// [`decode_batches`], flattened).
///
/// The stream is fused: once it has ended, polling it again answers `None` instead of
/// panicking, so callers that poll an ended watch once more, e.g. in a `select!` loop, are
/// safe.
pub(crate) fn decode_stream<K: DeserializeOwned + Send + 'static>(
    src: BoxStream<'static, Result<Bytes, Error>>,
    origin: Origin,
) -> WatchStream<K> {
    decode_batches(src, origin)
        .flat_map(stream::iter)
        .fuse()
        .boxed()
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;

    fn origin() -> Origin {
        Origin {
            request: "GET /api/v1/configmaps?watch=true".into(),
            resource: "v1/configmaps".into(),
            max_line: crate::config::DEFAULT_MAX_WATCH_EVENT_BYTES,
        }
    }

    async fn run(chunks: Vec<&'static [u8]>) -> Vec<Result<WatchEvent<ConfigMap>, Error>> {
        let src = stream::iter(chunks.into_iter().map(|c| Ok(Bytes::from_static(c)))).boxed();
        decode_stream::<ConfigMap>(src, origin()).collect().await
    }

    async fn run_batches(chunks: Vec<&'static [u8]>) -> Vec<WatchBatch<ConfigMap>> {
        let src = stream::iter(chunks.into_iter().map(|c| Ok(Bytes::from_static(c)))).boxed();
        decode_batches::<ConfigMap>(src, origin()).collect().await
    }

    fn names(batch: &WatchBatch<ConfigMap>) -> Vec<String> {
        batch
            .iter()
            .map(|e| match e {
                Ok(WatchEvent::Added(cm) | WatchEvent::Modified(cm)) => {
                    cm.metadata.name.clone().unwrap_or_default()
                }
                Ok(other) => format!("{other:?}"),
                Err(e) => format!("error: {e}"),
            })
            .collect()
    }

    #[tokio::test]
    async fn ready_chunks_form_one_batch_and_split_lines_are_joined() {
        // Every chunk of an iterator is ready at once: one batch, lines joined across
        // chunks (including a line split in three), blank lines skipped.
        let batches = run_batches(vec![
            b"{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\"}}}\n{\"type\":\"ADD",
            b"ED\",\"object\":{\"metadata\":",
            b"{\"name\":\"b\"}}}\n\n  \n{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"name\":\"c\"}}}\n",
        ])
        .await;
        assert_eq!(batches.len(), 1);
        assert_eq!(names(&batches[0]), ["a", "b", "c"]);
    }

    #[tokio::test]
    async fn a_batch_ends_once_it_has_read_batch_bytes() {
        // Chunks all ready at once, five times `BATCH_BYTES` in all: each batch stops
        // reading at the chunk that takes it to `BATCH_BYTES`, so that a burst's events are
        // not all in flight at once (see the constant's doc).
        const LINES_PER_CHUNK: usize = 1000;
        let line = b"{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\"}}}\n";
        let chunk = Bytes::from(line.repeat(LINES_PER_CHUNK));
        let chunks = 5 * BATCH_BYTES / chunk.len();
        let src = stream::iter((0..chunks).map({
            let chunk = chunk.clone();
            move |_| Ok(chunk.clone())
        }))
        .boxed();
        let batches: Vec<_> = decode_batches::<ConfigMap>(src, origin()).collect().await;
        let most = BATCH_BYTES.div_ceil(chunk.len()) * LINES_PER_CHUNK;
        let sizes: Vec<usize> = batches.iter().map(|b| b.len()).collect();
        assert!(sizes.len() >= 5, "{sizes:?}");
        assert!(
            sizes.iter().all(|&n| n <= most),
            "{sizes:?}, at most {most}"
        );
        assert_eq!(sizes.iter().sum::<usize>(), chunks * LINES_PER_CHUNK);
    }

    #[tokio::test]
    async fn batches_follow_arrivals_and_keep_order() {
        // Chunks that arrive apart form separate batches; a line split across two arrivals
        // belongs to the batch of its end.
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<Result<Bytes, Error>>();
        let rx = stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|c| (c, rx)) });
        let mut batches = decode_batches::<ConfigMap>(rx.boxed(), origin());
        let line = |n: &str| {
            format!("{{\"type\":\"ADDED\",\"object\":{{\"metadata\":{{\"name\":\"{n}\"}}}}}}\n")
        };
        let first = format!("{}{}", line("a"), line("b"));
        let cut = line("c");
        let (head, rest) = cut.split_at(10);
        tx.send(Ok(Bytes::from(format!("{first}{head}")))).unwrap();
        assert_eq!(names(&batches.next().await.unwrap()), ["a", "b"]);
        tx.send(Ok(Bytes::from(format!("{rest}{}", line("d")))))
            .unwrap();
        assert_eq!(names(&batches.next().await.unwrap()), ["c", "d"]);
        drop(tx);
        assert!(batches.next().await.is_none());
        assert!(batches.next().await.is_none(), "fused");
    }

    #[tokio::test]
    async fn a_cut_last_line_is_a_typed_error_in_the_last_batch() {
        let batches = run_batches(vec![
            b"{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\"}}}\n",
            b"{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"na",
        ])
        .await;
        let events: Vec<_> = batches.into_iter().flatten().collect();
        assert_eq!(events.len(), 2);
        assert!(matches!(&events[0], Ok(WatchEvent::Added(_))));
        match &events[1] {
            Err(Error::Decode {
                request,
                what,
                source,
            }) => {
                assert!(source.is_eof());
                assert!(request.contains("watch=true"));
                assert!(what.contains("v1/configmaps"));
            }
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn a_transport_error_ends_the_batch_stream_after_the_decoded_events() {
        let src = stream::iter([
            Ok(Bytes::from_static(
                b"{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\"}}}\n{\"ty",
            )),
            Err(Error::Transport {
                request: "GET /api/v1/configmaps?watch=true".into(),
                message: "connection reset".into(),
                source: None,
            }),
            Ok(Bytes::from_static(b"pe\":\"ADDED\"}\n")),
        ])
        .boxed();
        let events: Vec<_> = decode_batches::<ConfigMap>(src, origin())
            .collect::<Vec<_>>()
            .await
            .into_iter()
            .flatten()
            .collect();
        assert_eq!(events.len(), 2, "{events:?}");
        assert!(matches!(&events[0], Ok(WatchEvent::Added(_))));
        assert!(matches!(&events[1], Err(Error::Transport { .. })));
    }

    #[test]
    fn one_pass_decode_takes_any_field_order_and_names_unknown_types() {
        let typed_first: WatchEvent<ConfigMap> = decode_watch_line(
            br#"{"type":"MODIFIED","object":{"metadata":{"name":"a"}},"extra":[1,{"x":2}]}"#,
        )
        .unwrap();
        let object_first: WatchEvent<ConfigMap> = decode_watch_line(
            br#"{"object":{"metadata":{"name":"a"}},"extra":null,"type":"MODIFIED"}"#,
        )
        .unwrap();
        assert_eq!(typed_first, object_first);
        assert!(
            matches!(&typed_first, WatchEvent::Modified(cm) if cm.metadata.name.as_deref() == Some("a"))
        );
        let bookmark: WatchEvent<ConfigMap> = decode_watch_line(
            br#"{"object":{"kind":"ConfigMap","metadata":{"resourceVersion":"7"}},"type":"BOOKMARK"}"#,
        )
        .unwrap();
        assert!(matches!(bookmark, WatchEvent::Bookmark(b) if b.resource_version == "7"));
        let unknown =
            decode_watch_line::<ConfigMap>(br#"{"type":"RENAMED","object":{}}"#).unwrap_err();
        assert!(unknown.to_string().contains("RENAMED"), "{unknown}");
        for bad in [
            &br#"{"object":{}}"#[..],
            br#"{"type":"ADDED"}"#,
            br#"{"type":"ADDED","type":"ADDED","object":{}}"#,
            br#"{"type":"ADDED","object":{"metadata":{"name":5}}}"#,
        ] {
            assert!(decode_watch_line::<ConfigMap>(bad).is_err());
        }
    }

    #[tokio::test]
    async fn polling_an_ended_stream_again_is_none() {
        let src = stream::iter([Ok(Bytes::from_static(b"not json\n"))]).boxed();
        let mut s = decode_stream::<ConfigMap>(src, origin());
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
