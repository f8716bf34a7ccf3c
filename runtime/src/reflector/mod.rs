//! The reflector: ListAndWatch into a [`ReflectorSink`] (client-go's `cache.Reflector`).
//!
//! A reflector keeps a sink (the informer's DeltaFIFO, or a plain store) equal to the
//! server's state of one collection: it obtains the full state once, then applies watch
//! events, and obtains the full state again whenever the watch cannot resume. It reproduces
//! client-go's `tools/cache/reflector.go` with its defaults:
//!
//! - **Initial state** by streaming list (a watch with `sendInitialEvents=true`,
//!   `resourceVersionMatch=NotOlderThan`, up to the bookmark annotated
//!   `k8s.io/initial-events-end`, then one `Replace`), falling back to a paged LIST
//!   (`limit=500`, `continue`) when the server does not support it ([`ListMode`]).
//! - **resourceVersion rules**: the first list is at `"0"` (any cached state), a relist at
//!   the last synced RV, and a consistent read (`""`) after the list answered 410 Expired or
//!   "too large resource version". A relist at a known RV is not paged (the server answers it
//!   from its watch cache) unless the first list was paged. A continue token that expired
//!   (410) falls back to one full list.
//! - **Paged-list retries** (beyond client-go): a 429/500/502/503/504 or a connection error on
//!   one page retries that page from its continue token with backoff, keeping the pages read.
//! - **Watch** with `allowWatchBookmarks` and a random `timeoutSeconds` in [5, 10] minutes;
//!   every event and bookmark advances the RV (a bookmark also reaches the sink,
//!   [`ReflectorSink::bookmark`], which advances its cache's
//!   [watermark](crate::consistency::Watermark)). A watch that closes normally is reopened at
//!   once from the last RV; a 410 (HTTP status or ERROR event) backs off and relists; a
//!   connection error or 429 (honouring Retry-After) on opening backs off and re-watches from
//!   the same RV without relisting; a watch that ends in under a second without events counts
//!   as an error.
//! - **Backoff**: 800 ms doubling with jitter up to 30 s, reset after 2 minutes without
//!   errors ([`BackoffConfig`]). Tests whose server drops watches on purpose converge
//!   slowly under it (a few short watches in a row and the next watch waits up to 30 s), so
//!   they opt into a test-sized profile, same rules with millisecond delays:
//!   [`ReflectorConfig::test_backoff`], or for a whole informer factory
//!   `InformerFactory::builder(client).test_backoff()`.
//! - **Shards** (beyond client-go, KEP-5866): with [`ReflectorConfig::shard_selector`] every
//!   list and watch carries `shardSelector`, and only the shard's objects reach the sink,
//!   whether the server filtered them (its list says so with `metadata.shardInfo`) or
//!   ignored the parameter (gate off, or older than 1.36) and sent them all; the RV still
//!   advances with every event dropped.
//! - A **watch error hook** sees every error the reflector recovers from, and
//!   [`ReflectorMetrics`] counts lists, watches, short watches, items and the last RV.
//!
//! The loop is an explicit [`State`] and one step, [`Machine::step`], from `(state, input,
//! now)` to `(output, next state)`, as kube-rs's `watcher` is written. The step does no I/O
//! and reads no clock; it updates the [`Machine`]'s own bookkeeping (the last synced RV,
//! backoffs, a seedable random source for timeouts and jitter) and counts into its
//! [`ReflectorMetrics`]. The [`Reflector`] driver only performs the request each state names
//! and writes outputs to the sink, so every rule above is a unit-tested transition.

mod backoff;
mod config;
mod driver;
mod error;
mod lister_watcher;
mod metrics;
mod sink;
mod state;

#[cfg(test)]
mod tests;

pub use backoff::{Backoff, BackoffConfig};
pub use config::{ListMode, ReflectorConfig};
pub use driver::{Reflector, ShouldResync, WatchErrorHook};
pub use error::ReflectorError;
pub use kinform_client::decode::{
    CachedLookup, CurrentLookup, ListHints, RECLAIM_QUIET, Reclaim, WatchBatch, WatchBatchStream,
};
pub use kinform_core::Transform;
pub use lister_watcher::ListerWatcher;
pub use metrics::{MetricsSnapshot, ReflectorMetrics};
pub use sink::{ReflectorSink, SinkClosed};
pub use state::{Command, Input, Listing, Machine, Output, SinkOp, State};
