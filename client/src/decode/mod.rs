//! The list/watch decoding pipeline: how a reflector's LIST pages and WATCH streams become
//! shared, transformed objects, fast.
//!
//! This module is the one seam between the client and the runtime's reflector: two functions,
//! [`list`] and [`watch`], take an [`Api<K>`] (URI, transport), the request parameters and
//! the reflector's [`ListHints`] (what may be skipped or reused, and the page fetched
//! ahead), and answer pages of `Arc<K>` and batches of watch events of `Arc<K>`.
//! Everything behind them is private to this module.
//! The user verbs of `Api<K>` (`list`, `watch`) do not go through it: they decode with
//! `serde_json` alone, through the wire pieces both share (`crate::wire`).
//! The seam runs one way: `decode` uses `api` and `wire`, `api` uses only `wire`.
//!
//! # The map
//!
//! A LIST page (paged list, `limit=500`):
//!
//! 1. **Fetch and scan, on a task of its own** (`pager`): the page's request is sent,
//!    its body read into one buffer (at most `Config::max_body_bytes`, 256 MiB by default,
//!    else the list fails with `Error::TooLarge`) and scanned (`scan`: where each item's
//!    bytes are and what its `metadata` says, without decoding). As soon as a page's continue
//!    token is known, the request for the next page is sent from [`list`], so the server
//!    serializes page N+1 while page N decodes (client-go's pager waits; the server sees the
//!    same requests in the same order, only earlier). At most one page is held ahead, and of
//!    it at most `Config::read_ahead_bytes` (4 MiB by default) is read before the reflector
//!    asks for it; the rest waits in the server (flow control) until then.
//! 2. **Reuse** (`page`): an item whose namespace, name and resourceVersion are
//!    those of the object the reflector's store holds ([`ListHints::cached`]) is that
//!    object's `Arc`, not decoded again (a resourceVersion names one state of one object,
//!    the rule client-go's informer uses to tell resyncs from updates). A relist after a 410
//!    then costs no second copy of the cache.
//! 3. **Decode on the two decoding threads** (`parallel`, `threads`): the two
//!    threads the process keeps for decoding take chunks of items from a shared counter, so
//!    they finish together however either is slowed; results keep the list's order. Every
//!    object a reflector caches is made on one of these threads, and freed there (below).
//!    Each thread first grows its heap by what its share of objects will take
//!    (`heap`), so glibc extends the thread's arena one `mprotect` per block, not one per
//!    page.
//! 4. **Each item** (`object`): simd-json builds a tape of the item, and `K` is built
//!    from the tape with exact `Vec` capacities (objects live as long as the cache): by the
//!    in-place walk from `K`'s default for a k8s-openapi built-in type (`in_place`), else by
//!    serde; the `metadata.managedFields` member is cut off the tape when
//!    [`ListHints::skip_managed_fields`] says the transform drops it anyway (the requests
//!    then ask the server to drop it too, `managed_fields`: KEP-5958); anything
//!    simd-json does not take (too deep, invalid, a type it cannot drive) is decoded by
//!    `serde_json`, whose result and errors are the ones returned. Then the transform runs
//!    and the object is shared.
//!
//! A WATCH (and a streaming list, which is a watch with `sendInitialEvents=true`):
//!
//! 1. **Read ahead, on a task of its own** (`watch_body`): the body's chunks are read
//!    into a queue whenever they arrive, so reading does not wait for the decoding of the
//!    batch before (a task woken on the decoding worker would sit in its LIFO slot until the
//!    decoding ended). Each chunk is copied into a block the watch reuses once the chunk is
//!    decoded, so hyper reads into one buffer in place, not into fresh pages. The chunks
//!    read and not yet decoded hold at most `Config::read_ahead_bytes` (4 MiB by default);
//!    at the bound the task stops reading, so a slow consumer stops the server's writes
//!    (TCP / HTTP/2 flow control) instead of growing the client's memory. Beyond it, the
//!    batch being split and decoded holds at most about 256 KiB of lines (`wire::watch`).
//! 2. **Lines** (`wire::watch`): chunks are split at newlines with `memchr`; the complete
//!    lines of every chunk ready at once form one batch; only an unfinished tail is copied. A
//!    line longer than `Config::max_watch_event_bytes` (16 MiB by default), finished or not,
//!    ends the watch with `Error::TooLarge` (a reflector then relists).
//! 3. **Events** (`events`): each line is split into `type` and `object` by the
//!    scanner; during a streaming list's initial events an ADDED object at the cached
//!    resourceVersion is reused as in a list; other objects are decoded as list items are,
//!    and a large batch's lines on both decoding threads. Two batches decode at once, so
//!    the next batch decodes while the reflector takes in the one before; results keep the
//!    stream's order. A line that is not an event becomes an error in its place, naming
//!    the request and the resource; the stream goes on.
//! 4. **Replaced objects freed where objects are made** (`reclaim`, `threads`):
//!    once the initial events are over, an informer's watch (one whose hints carry a
//!    [`Reclaim`]) decodes each batch as one job on a decoding thread, which takes one of the
//!    objects the informer handed back (the replaced or deleted states its handlers have
//!    seen) for each object it decodes. A k8s-openapi built-in type, or its lean form, is
//!    decoded into it (`in_place`: the new state written into the old one's strings,
//!    vectors and maps, so an event whose object fits the old one's memory allocates and
//!    frees nothing); any other type drops it first, so the memory one event frees is what
//!    the next one's object is made of (why the thread matters: `reclaim`, `threads`).
//!
//! # Figures
//!
//! Why each trick above helps, with the A/B run behind each: `docs/performance.md`. The
//! current measurements, each with the command that reproduces it: `BENCHMARKS.md`
//! ("Informer").

#[doc(hidden)]
pub mod bench;
#[cfg(test)]
mod differential_tests;
mod events;
mod heap;
mod hints;
mod in_place;
#[doc(hidden)]
pub use in_place::custom;
#[cfg(test)]
mod lean_tests;
mod object;
mod page;
mod pager;
mod parallel;
mod reclaim;
mod scan;
#[cfg(test)]
mod test_cache;
mod threads;
mod watch_body;

use std::sync::Arc;

use http::Method;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ListMeta;
use kinform_core::{HasMetadata, ListParams, ObjectList, WatchParams};
use serde::de::DeserializeOwned;

pub use crate::wire::watch::{WatchBatch, WatchBatchStream};
pub use hints::{CachedLookup, CurrentLookup, ListHints};
pub use pager::PageAhead;
pub use reclaim::{RECLAIM_QUIET, Reclaim};

use crate::{Api, Result};

/// One LIST page for a reflector: the objects shared and transformed, decoded as `hints`
/// allow (items on the two decoding threads, `managedFields` skipped, cached objects
/// reused), with the next page requested while this one decodes.
pub async fn list<K>(
    api: &Api<K>,
    params: &ListParams,
    hints: &ListHints<K>,
) -> Result<ObjectList<Arc<K>>>
where
    K: HasMetadata + Clone + DeserializeOwned + Send + Sync + 'static,
{
    let uri = api.list_uri(params);
    let fetched = match hints.page_ahead.take(&uri).await {
        Some(fetched) => fetched,
        None => {
            let mut req = api.request(Method::GET, uri, Vec::new(), None, true)?;
            crate::managed_fields::ask(&mut req, hints.skip_managed_fields);
            pager::fetch(api.client(), req, None).await
        }
    };
    let (request, page) = fetched?;
    if hints.skip_managed_fields && !api.is_metadata_only() {
        let carried = page.items_carry_managed_fields();
        api.client().opt_out_record().observe(carried, &request);
    }
    let origin = page::ListOrigin {
        request,
        resource: api.resource().to_string(),
    };
    let send_next = |meta: &ListMeta| {
        hints
            .page_ahead
            .send_next(api, params, meta, hints.skip_managed_fields)
    };
    page::decode_list(page, hints, &origin, send_next).await
}

/// A WATCH for a reflector: batches of events whose objects are shared and transformed,
/// decoded as `hints` allow (`hints.cached` is consulted only for a streaming list's initial
/// events, up to the `k8s.io/initial-events-end` bookmark).
pub async fn watch<K>(
    api: &Api<K>,
    params: &WatchParams,
    hints: &ListHints<K>,
) -> Result<WatchBatchStream<Arc<K>>>
where
    K: HasMetadata + Clone + DeserializeOwned + Send + Sync + 'static,
{
    let (body, origin) = api.open_watch(params, hints.skip_managed_fields).await?;
    Ok(events::decode_shared_batches(
        body,
        origin,
        hints.clone(),
        params.send_initial_events,
        api.client().read_ahead_bytes(),
    ))
}
