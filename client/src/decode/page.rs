//! Decoding a LIST page for a reflector: items cut into byte ranges by the [`scan`] module,
//! decoded on two threads by the [`object`](super::object) module (simd-json,
//! exact capacities, `metadata.managedFields` skipped when the informer drops it anyway), and
//! items that the cache already holds at the same resourceVersion reused instead of decoded.
//!
//! The reuse follows client-go's rule: its reflector does not reuse objects, but its informer
//! treats an unchanged resourceVersion as "the same object" (a relisted object with the cached
//! resourceVersion is delivered as a resync, not an update). The DeltaFIFO still receives
//! every listed object in its `Replace`, so the deltas and notifications are those client-go
//! produces (why: `docs/performance.md`, "Cached objects reused on a relist").
//!
//! A page is refused exactly when `Api::list`'s plain `serde_json` decoding refuses it
//! (`differential_tests` checks the two paths against each other over real and mutated
//! bodies). Items reused from the cache are checked structurally by the scanner (nesting,
//! strings, separators) but not decoded; every other item is validated by simd-json or,
//! failing that, `serde_json`, and the list's other members by `serde_json`: their values as
//! it skips an ignored value, their keys as it reads a field name (UTF-8 checked). When the
//! scanner rejects a body, the whole body is decoded by `serde_json`, so the error a caller
//! sees is serde_json's, with the request and the resource named.

use std::any::Any;
use std::ops::Range;
use std::sync::Arc;

use crate::wire::list::{ListMetadata, RawList};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ListMeta;
use serde::de::{DeserializeOwned, IgnoredAny};

use super::hints::ListHints;
use super::in_place::Current;
use super::object::Decoder;
use super::parallel;
use super::scan::{self, ListParts};
use crate::{Error, ObjectList, Result};
use kinform_core::ObjectKey;
use kinform_core::resource::HasMetadata;

/// Below this many bytes of items a page is decoded on one thread.
const PARALLEL_MIN_BYTES: usize = 128 * 1024;

/// A failed item decode: the item's index and serde_json's error.
type ItemError = (usize, serde_json::Error);

/// Names what failed to decode, for [`Error::Decode`].
#[derive(Clone, Debug)]
pub(crate) struct ListOrigin {
    /// The request, e.g. `GET /api/v1/pods?limit=500`.
    pub request: String,
    /// The resource, e.g. `v1/pods`.
    pub resource: String,
}

impl ListOrigin {
    fn error(&self, what: String, source: serde_json::Error) -> Error {
        Error::Decode {
            request: self.request.clone(),
            what: format!("{} {what}", self.resource),
            source,
        }
    }
}

/// The whole body with serde_json, as the plain list does: the fallback when the scanner
/// rejects the body, so that the error is serde_json's.
fn decode_whole<K: DeserializeOwned>(
    bytes: &[u8],
    hints: &ListHints<K>,
    origin: &ListOrigin,
) -> Result<ObjectList<Arc<K>>> {
    let raw: RawList<K> =
        serde_json::from_slice(bytes).map_err(|e| origin.error("list".into(), e))?;
    let items = raw
        .items
        .unwrap_or_default()
        .into_iter()
        .map(|mut o| {
            if let Some(t) = &hints.transform {
                t(&mut o);
            }
            Arc::new(o)
        })
        .collect();
    Ok(ObjectList {
        metadata: raw.metadata.meta,
        shard_info: raw.metadata.shard_info,
        items,
    })
}

/// A LIST body, scanned: the list's metadata and its items' byte ranges, or `None` when
/// the scanner does not take the body (it is then decoded whole by serde_json). Scanning
/// is a pass over the whole page on one thread, so a page fetched ahead is scanned by the
/// task that fetched it, while the page before it decodes (see `pager`).
pub(crate) struct ScannedList {
    bytes: Vec<u8>,
    parts: Option<(ListMetadata, Vec<Range<usize>>)>,
}

impl ScannedList {
    /// Scans `bytes` (and checks the members other than the items with serde_json).
    pub(crate) fn new(bytes: Vec<u8>) -> Self {
        let parts = scan::list_parts(&bytes)
            .ok()
            .and_then(|parts| check_parts(&bytes, parts).ok());
        Self { bytes, parts }
    }

    /// Whether an item of the page carries `metadata.managedFields` (module
    /// `managed_fields`), `None` when the page has no items to tell. A body the scanner
    /// rejected is searched whole.
    pub(crate) fn items_carry_managed_fields(&self) -> Option<bool> {
        use crate::managed_fields::carries_managed_fields;
        match &self.parts {
            Some((_, ranges)) => {
                let (first, last) = (ranges.first()?, ranges.last()?);
                Some(carries_managed_fields(&self.bytes[first.start..last.end]))
            }
            None => carries_managed_fields(&self.bytes).then_some(true),
        }
    }
}

/// Decodes a scanned LIST body into shared objects following `hints` (see the module
/// docs). `on_metadata` gets the list's metadata before the items are decoded (the caller
/// requests the next page then); a body the scanner rejected is decoded whole and
/// `on_metadata` is not called.
pub(crate) async fn decode_list<K>(
    list: ScannedList,
    hints: &ListHints<K>,
    origin: &ListOrigin,
    on_metadata: impl FnOnce(&ListMeta),
) -> Result<ObjectList<Arc<K>>>
where
    K: HasMetadata + Clone + DeserializeOwned,
{
    let ScannedList { bytes, parts } = list;
    let Some((metadata, ranges)) = parts else {
        return decode_whole(&bytes, hints, origin);
    };
    on_metadata(&metadata.meta);
    // Let what `on_metadata` started (the next page's request) run before the items keep
    // this worker busy: a task spawned on a busy worker waits in its slot, which other
    // workers do not take from.
    tokio::task::yield_now().await;
    let total: usize = ranges.iter().map(|r| r.len()).sum();
    let hints = hints.clone();
    let parts = parallel::decode(
        ranges,
        total,
        PARALLEL_MIN_BYTES,
        move |decoder, part, at| decode_items(decoder, &bytes, part, at, &hints),
    )
    .await;
    let mut items = Vec::with_capacity(parts.iter().map(|p| p.as_ref().map_or(0, Vec::len)).sum());
    for part in parts {
        items.extend(part.map_err(|(i, e)| origin.error(format!("list item {i}"), e))?);
    }
    Ok(ObjectList {
        metadata: metadata.meta,
        shard_info: metadata.shard_info,
        items,
    })
}

/// Validates the members other than `items` with serde_json; the ranges of the items.
fn check_parts(
    bytes: &[u8],
    parts: ListParts,
) -> std::result::Result<(ListMetadata, Vec<Range<usize>>), ()> {
    for r in parts.others.iter().chain(&parts.kind) {
        serde_json::from_slice::<IgnoredAny>(&bytes[r.clone()]).map_err(drop)?;
    }
    // Keys are read as strings by serde_json (its UTF-8 checked), values it ignores are not.
    if !parts
        .other_keys
        .iter()
        .all(|k| scan::valid_key(bytes, k.clone()))
    {
        return Err(());
    }
    let metadata = match &parts.metadata {
        Some(r) => ListMetadata::from_slice(&bytes[r.clone()]).map_err(drop)?,
        None => ListMetadata::default(),
    };
    match &parts.items {
        Some(r) if bytes[r.start] != b'[' && &bytes[r.clone()] != b"null" => Err(()),
        _ => Ok((metadata, parts.item_ranges)),
    }
}

/// Decodes `ranges` of `bytes` (items numbered from `first`), stopping at the first error.
fn decode_items<K>(
    decoder: &mut Decoder,
    bytes: &[u8],
    ranges: &[Range<usize>],
    first: usize,
    hints: &ListHints<K>,
) -> std::result::Result<Vec<Arc<K>>, ItemError>
where
    K: HasMetadata + Clone + DeserializeOwned,
{
    let mut out = Vec::with_capacity(ranges.len());
    for (i, r) in ranges.iter().enumerate() {
        let obj =
            decode_item(bytes, r.clone(), hints, decoder, None).map_err(|e| (first + i, e))?;
        out.push(obj);
    }
    Ok(out)
}

fn utf8<'b>(bytes: &'b [u8], r: &Option<Range<usize>>) -> Option<Option<&'b str>> {
    match r {
        None => Some(None),
        Some(r) => std::str::from_utf8(&bytes[r.clone()]).ok().map(Some),
    }
}

/// One item: the cached object when its key and resourceVersion match, else decoded (with
/// `managedFields` skipped when the hints allow) and transformed. `reuse`, an object the
/// cache let go of (see `reclaim`), is decoded into when this is its last reference and its
/// type allows (see `in_place`), sharing what it can with the cached object of the same key
/// (`hints.current`); else it is dropped before the item is decoded.
pub(crate) fn decode_item<K>(
    bytes: &[u8],
    item: Range<usize>,
    hints: &ListHints<K>,
    decoder: &mut Decoder,
    reuse: Option<Arc<K>>,
) -> serde_json::Result<Arc<K>>
where
    K: HasMetadata + Clone + DeserializeOwned + 'static,
{
    if let Some(cached) = &hints.cached
        && let Some(m) = scan::item_meta(bytes, item.clone())
        && !m.escaped
        && let (Some(Some(name)), Some(Some(rv)), Some(ns)) = (
            utf8(bytes, &m.name),
            utf8(bytes, &m.resource_version),
            utf8(bytes, &m.namespace),
        )
        && !rv.is_empty()
        && let Some(obj) = cached(ObjectKey::new(ns, name), rv)
    {
        return Ok(obj);
    }
    if let Some(mut reused) = reuse {
        let current = hints
            .current
            .as_ref()
            .map(|current| move |key: ObjectKey<'_>| current(key).map(|obj| obj as Arc<dyn Any>));
        if let Some(target) = Arc::get_mut(&mut reused)
            && decoder.decode_resource_into(
                target,
                &bytes[item.clone()],
                hints.skip_managed_fields,
                current.as_ref().map(|f| f as Current<'_>),
            )
        {
            if let Some(t) = &hints.transform {
                t(target);
            }
            return Ok(reused);
        }
        // Freed here, before its replacement is made.
        drop(reused);
    }
    let mut obj: K = decoder.decode_resource(&bytes[item], hints.skip_managed_fields)?;
    if let Some(t) = &hints.transform {
        t(&mut obj);
    }
    Ok(Arc::new(obj))
}

#[cfg(test)]
mod tests;
