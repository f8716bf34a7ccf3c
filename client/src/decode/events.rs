//! Decoding watch events for a reflector: the list path's machinery ([`page`]) applied
//! to each event's `object`, and the lines of a large batch decoded on both decoding threads.
//!
//! A streaming list (a watch with `sendInitialEvents=true`, the reflector's default) is the
//! initial LIST delivered as ADDED events, so it gets what the paged list gets: simd-json
//! with exact vector capacities and `metadata.managedFields` skipped when the informer drops
//! it anyway (the `object` module), both cores, and on a relist the cached `Arc` of every
//! object whose namespace, name and resourceVersion are unchanged (pre-scanned with
//! `scan::item_meta`) in place of a second decoded copy, by client-go's rule as in [`page`].
//! Reuse is asked for only during the initial events of a streaming list (the caller's
//! hints); after the `k8s.io/initial-events-end` bookmark the stream stops looking up the
//! cache, since an ordinary watch event always carries a new resourceVersion.
//!
//! A line is split into its `type` and `object` by the structural scanner; a line the
//! scanner does not take (escaped keys, repeated members, bad JSON) is decoded by
//! `serde_json` as [`decode_watch_line`] does, so a bad line's error is serde_json's, named
//! with the request and the resource, in the line's place in the batch. The scanner takes a
//! line only when [`decode_watch_line`] would: keys read as strings (UTF-8 checked), and an
//! `object` that comes before the `type` valid UTF-8 (serde_json keeps it as a raw value).

use std::cell::RefCell;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use bytes::Bytes;
use futures_util::StreamExt as _;
use futures_util::stream::BoxStream;
use serde::de::{DeserializeOwned, IgnoredAny};

use super::hints::ListHints;
use super::object::Decoder;
use super::page::decode_item;
use super::parallel;
use super::reclaim;
use super::scan;
use super::threads;
use super::watch_body;
use crate::wire::watch::{Kind, Origin, RawBatch, decode_watch_line, raw_batches};
use crate::wire::watch::{WatchBatch, WatchBatchStream};
use crate::{Error, WatchEvent};
use kinform_core::resource::HasMetadata;

/// Below this many bytes of lines a batch is decoded on one thread.
const PARALLEL_MIN_BYTES: usize = 64 * 1024;

/// The hints for ADDED objects (which may be reused from the cache) and for the others.
struct LineHints<K> {
    added: ListHints<K>,
    other: ListHints<K>,
}

impl<K> LineHints<K> {
    fn new(hints: ListHints<K>) -> Self {
        let other = ListHints {
            cached: None,
            ..hints.clone()
        };
        Self {
            added: hints,
            other,
        }
    }

    /// The same without cache lookups.
    fn without_cache(&self) -> Self {
        Self::new(self.other.clone())
    }
}

/// The `type` and the `object` range of a line in the API server's own layout,
/// `{"type":"ADDED","object":{...}}` (the object's end is the line's last `}` but one), found
/// without scanning the object: the object's decoding checks that the range is one value, and
/// the caller takes [`split_line`] when it is not.
fn split_line_fast(line: &[u8]) -> Option<(Kind, std::ops::Range<usize>)> {
    let rest = line.strip_prefix(b"{\"type\":\"")?;
    let (kind, rest) = if let Some(r) = rest.strip_prefix(b"ADDED") {
        (Kind::Added, r)
    } else if let Some(r) = rest.strip_prefix(b"MODIFIED") {
        (Kind::Modified, r)
    } else if let Some(r) = rest.strip_prefix(b"DELETED") {
        (Kind::Deleted, r)
    } else {
        return None;
    };
    let rest = rest.strip_prefix(b"\",\"object\":{")?;
    let start = line.len() - rest.len() - 1;
    let end = line.trim_ascii_end().len().checked_sub(1)?;
    (line[end] == b'}' && end > start).then_some((kind, start..end))
}

/// The `type` and the `object` range of a watch line, when the scanner takes the line.
///
/// The line must be what [`decode_watch_line`] takes: keys are read as strings (UTF-8
/// checked), and an `object` met before the `type` is kept as a raw value, which must be
/// UTF-8.
fn split_line(line: &[u8]) -> Option<(Kind, std::ops::Range<usize>)> {
    let mut kind: Option<Kind> = None;
    let mut object = None;
    let mut ok = true;
    let start = scan::skip_ws(line, 0);
    let end = scan::members(line, start, |m| {
        if m.key_escaped {
            ok = false;
        } else if scan::key_is(line, m, "type") {
            let v = &line[m.value.clone()];
            let parsed = v
                .strip_prefix(b"\"")
                .and_then(|v| v.strip_suffix(b"\""))
                .and_then(|v| std::str::from_utf8(v).ok())
                .and_then(|v| Kind::parse::<serde_json::Error>(v).ok());
            match parsed {
                Some(k) => ok &= kind.replace(k).is_none(),
                None => ok = false,
            }
        } else if scan::key_is(line, m, "object") {
            ok &= object.replace(m.value.clone()).is_none();
            ok &= kind.is_some() || std::str::from_utf8(&line[m.value.clone()]).is_ok();
        } else {
            ok &= scan::valid_key(line, m.key.start - 1..m.key.end + 1)
                && serde_json::from_slice::<IgnoredAny>(&line[m.value.clone()]).is_ok();
        }
        Ok(())
    })
    .ok()?;
    if !ok || scan::skip_ws(line, end) != line.len() {
        return None;
    }
    Some((kind?, object?))
}

/// The object of a decoded event, transformed and shared.
fn share<K>(ev: WatchEvent<K>, hints: &ListHints<K>) -> WatchEvent<Arc<K>> {
    ev.map(|mut o| {
        if let Some(t) = &hints.transform {
            t(&mut o);
        }
        Arc::new(o)
    })
}

/// One watch line as a shared event, decoded as the hints allow (see the module docs):
/// `added` for the object of an ADDED event (the only one that may be reused from the
/// cache), `other` for the rest; `reuse` as for `decode_item`.
pub(crate) fn decode_line_shared<K>(
    line: &[u8],
    added: &ListHints<K>,
    other: &ListHints<K>,
    decoder: &mut Decoder,
    reuse: Option<Arc<K>>,
) -> serde_json::Result<WatchEvent<Arc<K>>>
where
    K: HasMetadata + Clone + DeserializeOwned + 'static,
{
    if let Some((kind, object)) = split_line_fast(line) {
        let hints = if matches!(kind, Kind::Added) {
            added
        } else {
            other
        };
        if let Ok(obj) = decode_item(line, object, hints, decoder, reuse) {
            return Ok(match kind {
                Kind::Added => WatchEvent::Added(obj),
                Kind::Modified => WatchEvent::Modified(obj),
                _ => WatchEvent::Deleted(obj),
            });
        }
        // Not the layout it looked like, or a bad object: the careful path says which.
    }
    let Some((kind, object)) = split_line(line) else {
        return decode_watch_line(line).map(|ev| share(ev, other));
    };
    Ok(match kind {
        Kind::Added => WatchEvent::Added(decode_item(line, object, added, decoder, None)?),
        Kind::Modified => WatchEvent::Modified(decode_item(line, object, other, decoder, None)?),
        Kind::Deleted => WatchEvent::Deleted(decode_item(line, object, other, decoder, None)?),
        Kind::Bookmark | Kind::Error => {
            let mut de = serde_json::Deserializer::from_slice(&line[object]);
            let ev = kind.decode::<K, _>(&mut de)?;
            de.end()?;
            share(ev, other)
        }
    })
}

/// Decodes `lines` in order, one result per line; with `reclaim`, each line takes an object
/// handed back through [`ListHints::reclaim`], decoded into or dropped first (see
/// `decode_item`), on this thread.
fn decode_lines<K>(
    decoder: &mut Decoder,
    lines: &[Bytes],
    hints: &LineHints<K>,
    origin: &Origin,
    reclaim: bool,
) -> WatchBatch<Arc<K>>
where
    K: HasMetadata + Clone + DeserializeOwned,
{
    let mut replaced = Vec::new();
    if reclaim && let Some(r) = &hints.other.reclaim {
        r.take(lines.len(), &mut replaced);
    }
    lines
        .iter()
        .map(|l| {
            let reuse = replaced.pop();
            decode_line_shared(l, &hints.added, &hints.other, decoder, reuse)
                .map_err(|e| origin.error(e))
        })
        .collect()
}

/// Decodes one batch of lines, in order; a large one on both decoding threads
/// (see [`parallel`]).
async fn decode_batch<K>(
    raw: RawBatch,
    hints: &Arc<LineHints<K>>,
    origin: &Arc<Origin>,
) -> WatchBatch<Arc<K>>
where
    K: HasMetadata + Clone + DeserializeOwned,
{
    let total: usize = raw.lines.iter().map(Bytes::len).sum();
    let (hints, origin) = (Arc::clone(hints), Arc::clone(origin));
    let parts = parallel::decode(
        raw.lines,
        total,
        PARALLEL_MIN_BYTES,
        move |decoder, part, _| decode_lines(decoder, part, &hints, &origin, false),
    )
    .await;
    let mut out: WatchBatch<Arc<K>> = parts.into_iter().flatten().collect();
    out.extend(raw.error.map(Err));
    out
}

/// Batches of one watch body decoded at once: while the reflector takes in one batch, the
/// next decodes, on the other decoding thread when it is free. Measured against the code
/// before the decoding threads, which decoded one batch at a time on the watch's task
/// (docs/performance.md, "A/B measurements"): burst events/s rose from 1.8-2.7x kube-rs's to
/// 2.3-3.1x; the CPU per event did not move beyond the runs' noise.
const IN_FLIGHT: usize = 2;

thread_local! {
    /// The decoder of ordinary watch events on each decoding thread, kept for its buffers.
    static DECODER: RefCell<Decoder> = RefCell::new(Decoder::default());
}

/// Where one watch body's decoding stands, shared by the batches decoding at once.
struct Phase<K> {
    /// The hints during a streaming list's initial events, and after them (no cache
    /// lookups: an ordinary event always carries a new resourceVersion).
    initial: Arc<LineHints<K>>,
    ordinary: Arc<LineHints<K>>,
    /// Whether the initial events are over (the initial-events-end bookmark was decoded).
    over: AtomicBool,
}

impl<K> Phase<K>
where
    K: HasMetadata + Clone + DeserializeOwned + Send + Sync + 'static,
{
    /// Decodes one batch as the phase stands when it is started. A batch started before the
    /// bookmark's batch was decoded is decoded as an initial one: the same events, only
    /// slower.
    ///
    /// Ordinary events, for an informer that hands replaced objects back
    /// ([`ListHints::reclaim`]), are decoded as one job on a decoding thread, which takes a
    /// handed-back object for each line, to decode into (`in_place`) or to free first: an
    /// object is best reused, or freed, on a thread that keeps allocating the objects that
    /// replace it (see `reclaim` and `threads`).
    /// Measured with the comparison bench (2,000 pods, 20,000 changes, one run of each
    /// build, streaming list, before the decoding threads): client CPU per pod event 0.54x
    /// kube-rs's before, 0.60x with the objects handed back but each batch split over two
    /// threads, 0.68x on one thread without them, 0.37x with both.
    async fn decode(&self, batch: RawBatch, origin: &Arc<Origin>) -> WatchBatch<Arc<K>> {
        let over = self.over.load(Ordering::Acquire);
        let hints = if over { &self.ordinary } else { &self.initial };
        if !(over && hints.other.reclaim.is_some()) {
            return decode_batch(batch, hints, origin).await;
        }
        let (hints, origin) = (Arc::clone(hints), Arc::clone(origin));
        threads::run(move || {
            DECODER.with_borrow_mut(|decoder| {
                decoder.prepare_for_new(added_bytes(&batch.lines));
                let mut out = decode_lines(decoder, &batch.lines, &hints, &origin, true);
                out.extend(batch.error.map(Err));
                out
            })
        })
        .await
    }

    /// Notes the end of the initial events when `out` holds their bookmark.
    fn saw(&self, out: &WatchBatch<Arc<K>>) {
        let ended = |e: &Result<WatchEvent<Arc<K>>, Error>| matches!(e, Ok(WatchEvent::Bookmark(b)) if b.is_initial_events_end());
        if !self.over.load(Ordering::Relaxed) && out.iter().any(ended) {
            self.over.store(true, Ordering::Release);
        }
    }
}

/// The JSON bytes of the ADDED events among `lines` (the API server's layout; others are
/// not counted: this only sizes the heap grown ahead).
fn added_bytes(lines: &[Bytes]) -> usize {
    lines
        .iter()
        .filter(|l| l.starts_with(b"{\"type\":\"ADDED\""))
        .map(Bytes::len)
        .sum()
}

/// Decodes a watch body stream into batches of shared events following `hints` (see the
/// module docs): the batches of [`decode_batches`](crate::wire::watch::decode_batches), with the
/// body read ahead by a task of its own, at most `read_ahead_bytes` ahead (see
/// [`watch_body`]), the transform applied, managedFields skipped, exact capacities, two
/// threads for a large batch, [`IN_FLIGHT`] batches decoding at once (in order), until the
/// initial-events-end bookmark cached objects reused, and what the hints' `reclaim` holds
/// freed when the body falls quiet ([`reclaim::free_when_quiet`]). Fused.
pub(crate) fn decode_shared_batches<K>(
    src: BoxStream<'static, Result<Bytes, Error>>,
    origin: Origin,
    hints: ListHints<K>,
    initial_events: bool,
    read_ahead_bytes: usize,
) -> WatchBatchStream<Arc<K>>
where
    K: HasMetadata + Clone + DeserializeOwned + Send + Sync + 'static,
{
    let mut raw = raw_batches(watch_body::watch_body(src, read_ahead_bytes), &origin);
    if let Some(r) = &hints.reclaim {
        raw = reclaim::free_when_quiet(raw, Arc::clone(r));
    }
    let origin = Arc::new(origin);
    let initial = LineHints::new(hints);
    let phase = Arc::new(Phase {
        ordinary: Arc::new(initial.without_cache()),
        initial: Arc::new(initial),
        over: AtomicBool::new(!initial_events),
    });
    let seen = Arc::clone(&phase);
    raw.map(move |batch| {
        let (phase, origin) = (Arc::clone(&phase), Arc::clone(&origin));
        async move { phase.decode(batch, &origin).await }
    })
    .buffered(IN_FLIGHT)
    .inspect(move |out| seen.saw(out))
    .fuse()
    .boxed()
}

#[cfg(test)]
mod tests;
