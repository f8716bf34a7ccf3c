//! The list/watch decoding pipeline: how a reflector's LIST pages and WATCH streams become
//! shared, transformed objects, fast.
//!
//! This module is the one seam between the client and the runtime's reflector: two functions,
//! [`list`] and [`watch`], take an [`Api<K>`] (URI, transport, the page fetched ahead), the
//! request parameters and the reflector's [`ListHints`], and answer pages of `Arc<K>` and
//! batches of watch events of `Arc<K>`. Everything behind them is private to this module.
//! The user verbs of `Api<K>` (`list`, `watch`) do not go through it: they decode with
//! `serde_json` alone, which is simpler and fast enough for one request.
//!
//! # The map
//!
//! A LIST page (paged list, `limit=500`):
//!
//! 1. **Fetch and scan, on a task of its own** (`next_page`): the page's request is sent,
//!    its body read into one buffer (at most `Config::max_body_bytes`, 256 MiB by default,
//!    else the list fails with `Error::TooLarge`) and scanned (`scan`: where each item's bytes are and
//!    what its `metadata` says, without decoding). As soon as a page's continue token is
//!    known, the request for the next page is sent from [`list`], so the server serializes
//!    page N+1 while page N decodes (client-go's pager waits; the server sees the same
//!    requests in the same order, only earlier). At most one page is held ahead, and of it
//!    at most `Config::read_ahead_bytes` (4 MiB by default) is read before the reflector
//!    asks for it; the rest waits in the server (flow control) until then.
//! 2. **Reuse** (`list_decode`): an item whose namespace, name and resourceVersion are
//!    those of the object the reflector's store holds ([`ListHints::cached`]) is that
//!    object's `Arc`, not decoded again (a resourceVersion names one state of one object,
//!    the rule client-go's informer uses to tell resyncs from updates). A relist after a 410
//!    then costs no second copy of the cache.
//! 3. **Decode on the two decoding threads** (`two_threads`, `decode_threads`): the two
//!    threads the process keeps for decoding take chunks of items from a shared counter, so
//!    they finish together however either is slowed; results keep the list's order. Every
//!    object a reflector caches is made on one of these threads, and freed there (below).
//!    Each thread first grows its heap by about five times its share of JSON
//!    (`heap_ahead`), so glibc extends the thread's arena one `mprotect` per 96 KiB block
//!    instead of per 4 KiB page.
//! 4. **Each item** (`fast_decode`): simd-json builds a tape of the item, and `K` is built
//!    from the tape with exact `Vec` capacities (objects live as long as the cache): by the
//!    in-place walk from `K`'s default for a k8s-openapi built-in type (`in_place`), else by
//!    serde; the `metadata.managedFields` member is cut off the tape when
//!    [`ListHints::skip_managed_fields`] says the transform drops it anyway; anything
//!    simd-json does not take (too deep, invalid, a type it cannot drive) is decoded by
//!    `serde_json`, whose result and errors are the ones returned. Then the transform runs
//!    and the object is shared.
//!
//! A WATCH (and a streaming list, which is a watch with `sendInitialEvents=true`):
//!
//! 1. **Read ahead, on a task of its own** (`read_ahead`): the body's chunks are read
//!    into a queue whenever they arrive, so reading does not wait for the decoding of the
//!    batch before (a task woken on the decoding worker would sit in its LIFO slot until the
//!    decoding ended). Each chunk is copied into a block the watch reuses once the chunk is
//!    decoded, so hyper reads into one buffer in place instead of into fresh pages. The
//!    chunks read and not yet decoded hold at most
//!    `Config::read_ahead_bytes` (4 MiB by default); at the bound the task stops reading,
//!    so a slow consumer stops the server's writes (TCP / HTTP/2 flow control) instead of
//!    growing the client's memory. Beyond it, the batch being split and decoded holds at
//!    most about 256 KiB of lines (`watch_lines`).
//! 2. **Lines** (`watch_lines`): chunks are split at newlines with `memchr`; the complete
//!    lines of every chunk ready at once form one batch; only an unfinished tail is copied. A
//!    line longer than `Config::max_watch_event_bytes` (16 MiB by default), finished or not,
//!    ends the watch with `Error::TooLarge` (a reflector then relists).
//! 3. **Events** (`watch_shared`): each line is split into `type` and `object` by the
//!    scanner; during a streaming list's initial events an ADDED object at the cached
//!    resourceVersion is reused as in a list; other objects are decoded as list items are,
//!    and a large batch's lines on both decoding threads. Two batches decode at once, so
//!    the next batch decodes while the reflector takes in the one before; results keep the
//!    stream's order. A line that is not an event becomes an error in its place, naming
//!    the request and the resource; the stream goes on.
//! 4. **Replaced objects freed where objects are made** (`reclaim`, `decode_threads`):
//!    once the initial events are over, an informer's watch (one whose hints carry a
//!    [`Reclaim`]) decodes each batch as one job on a decoding thread, which takes one of the
//!    objects the informer handed back (the replaced or deleted states its handlers have
//!    seen) for each object it decodes. A k8s-openapi built-in type, or its lean form, is
//!    decoded into it (`in_place`: the new state written into the old one's strings,
//!    vectors and maps, so an event whose object fits the old one's memory allocates and
//!    frees nothing); any other type drops it first, so the memory one event frees is what the next one's
//!    object is made of. Freed by the handlers' thread instead, the same pod events
//!    cost twice the CPU in glibc's malloc; made on threads that stop allocating (a blocking
//!    thread, the worker a task left), a burst that replaces the cache grows the heap by the
//!    share of objects those threads made (BENCHMARKS.md, "Where a burst's memory goes").
//!
//! # Why each trick: figures
//!
//! Measured with `benches/compare` (kinform and kube-rs side by side on one TestApiServer
//! with 10,000 realistic pods and a burst of 20,000 ConfigMap events; `cd benches/compare &&
//! KINFORM_COMPARE_RUNS=3 cargo run --release -- 10000 20000`). `BENCHMARKS.md` has the
//! tables and the machine ("Informer"), and, in "Why each trick", the A/B runs behind each
//! line below with their commits and commands:
//!
//! - **All together** (the latest full run, 10,000 pods, and the spread of five burst runs):
//!   a sync takes 0.24-0.33x kube-rs's time (streaming list, the default) and 0.30-0.33x
//!   (paged); the cache holds 0.72x kube-rs's live heap and 0.70-0.71x its RSS per object; a
//!   relist peaks at 1.01-1.04x the steady RSS where kube-rs doubles (1.94x); a burst of pod
//!   changes runs at 3.9-7.0x kube-rs's events per second, at 0.21-0.38x its CPU per event,
//!   and peaks at 1.06-1.11x the steady RSS (kube-rs 1.31-1.81x).
//! - **simd-json** (`fast_decode`): sync time 1.03-1.12x -> 0.52-0.74x the one-thread
//!   `serde_json` floor; its tape gives every `Vec` its exact capacity, which keeps the 5 KB
//!   of slack that `serde_json`'s doubling leaves in a cached pod out of the cache (live heap
//!   0.72x kube-rs's, against 0.87x for a path without exact capacities).
//! - **Cached reuse** (`list_decode`, `watch_shared`): relist peak 1.93x (paged, RSS)
//!   and 1.99x (streaming, live heap) -> 1.01-1.03x the steady figure.
//! - **Next page ahead** (`next_page`): paged sync 0.32-0.39 s -> 0.27-0.28 s.
//! - **Chunks from one counter** (`two_threads`): sync time 0.415x -> 0.368x kube-rs's
//!   (paged), 0.45x -> 0.375x (streaming).
//! - **Read ahead** (`read_ahead`): streaming sync median 0.34 s -> 0.30 s; watch burst
//!   +12% events/s.
//! - **Chunks copied into reused blocks** (`read_ahead`): minor faults per pod event
//!   0.63-0.95 -> 0.30-0.44 (streaming), client CPU per event 26.2 -> 21.7 µs (median of six
//!   bursts each, 10,000 pods).
//! - **Heap grown ahead** (`heap_ahead`): `mprotect` from 12-15% to 2-4% of the client's
//!   CPU; single-page `mprotect` calls in a streaming sync 5,800 -> 300
//!   (`strace -f -e trace=mprotect`).
//! - **Tape reused** (`fast_decode`): user CPU per watch event 3.06-4.01 µs -> 2.63-3.01 µs
//!   (-14% to -25%).
//! - **Replaced objects freed on the decoding thread** (`reclaim`, `watch_shared`): client
//!   CPU per pod watch event 0.52-0.58x kube-rs's -> 0.42-0.49x (2,000 pods, median of 3);
//!   the decode floor shows why: 28 µs per pod when the replaced pod is dropped on the
//!   decoding thread, 58 µs when another thread drops it.
//! - **The decoding threads** (`decode_threads`): a burst's peak RSS 1.45-1.88x -> 1.06-1.10x
//!   the steady RSS, page faults per event 1.6-3.1 -> 0.2-0.7; with two batches of a watch
//!   decoding at once (`watch_shared`), burst events/s 1.8-2.7x -> 2.3-3.1x kube-rs's.
//!
//! - **Decoding into replaced objects** (`in_place`): a burst's allocations per pod event
//!   151 -> 9-14 (221 -> 20 with managedFields kept), client CPU per event 0.52-0.66x ->
//!   0.23-0.33x kube-rs's (0.69-0.70x -> 0.32-0.37x with managedFields kept), events/s
//!   2.1-3.1x -> 4.2-6.2x (two alternating runs of each build). Then timestamps read
//!   without jiff's general parser (`in_place/time.rs`) and the depth check walking only
//!   into large containers (`fast_decode`): with managedFields kept, 0.34x -> 0.28-0.29x.
//!   The lean cache decoded in place too (`in_place/lean.rs`): 29 -> 4-5 allocations per
//!   event; its body then written from the tape's nodes, not through serde's driver: user
//!   CPU per event 18.0-21.6 µs -> 15.2-20.7 µs. Maps whose keys changed refilled from
//!   their own entries instead of afresh: with managedFields kept, allocations per event
//!   20 -> 13-15, client CPU per event 25.4-27.4 µs -> 22.7-24.5 µs (streaming) and
//!   23.0-23.1 µs -> 21.7-22.1 µs (paged). New built-in objects built by the same walk
//!   from a default instead of by serde: a 10,000-pod sync's wall and CPU time 1-10% less
//!   (medians of 6-8 rounds).
//!
//! What bounds the watch path now: in a burst with managedFields kept, simd-json's tape is
//! about a fifth of the client's CPU, the in-place walk about as much (an eighth in matching
//! the keys of `managedFields`' JSON values against those of the replaced object, cold in
//! the CPU's caches), the socket's copy 5%; malloc, free and drop are under 2%
//! (BENCHMARKS.md, "Why each trick").

#[doc(hidden)]
pub mod bench;
mod decode_threads;
#[cfg(test)]
mod differential_tests;
mod fast_decode;
mod heap_ahead;
mod hints;
mod in_place;
#[cfg(test)]
mod lean_tests;
pub(crate) mod list_decode;
pub(crate) mod next_page;
mod read_ahead;
mod reclaim;
mod scan;
#[cfg(test)]
mod test_cache;
mod two_threads;
pub(crate) mod watch_lines;
mod watch_shared;

use std::sync::Arc;

use http::Method;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ListMeta;
use kinform_core::{HasMetadata, ListParams, ObjectList, WatchParams};
use serde::de::DeserializeOwned;

pub use hints::{CachedLookup, CurrentLookup, ListHints};
pub use reclaim::{RECLAIM_QUIET, Reclaim};
pub use watch_lines::{WatchBatch, WatchBatchStream};

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
    let fetched = match api.next_page.take(&uri).await {
        Some(fetched) => fetched,
        None => {
            let req = api.request(Method::GET, uri, Vec::new(), None, true)?;
            next_page::fetch(api.client(), req, None).await
        }
    };
    let (request, page) = fetched?;
    let origin = list_decode::ListOrigin {
        request,
        resource: api.resource().to_string(),
    };
    let send_next = |meta: &ListMeta| api.send_next_page(params, meta);
    list_decode::decode_list(page, hints, &origin, send_next).await
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
    let (body, origin) = api.open_watch(params).await?;
    Ok(watch_shared::decode_shared_batches(
        body,
        origin,
        hints.clone(),
        params.send_initial_events,
        api.client().read_ahead_bytes(),
    ))
}
