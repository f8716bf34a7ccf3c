//! Shared informers and their factory (client-go's `tools/cache/shared_informer.go` and
//! `informers.SharedInformerFactory`).
//!
//! An informer keeps an indexed cache of one collection equal to the server's state, through
//! a [`Reflector`](crate::reflector::Reflector) feeding a [`DeltaFifo`](crate::fifo::DeltaFifo)
//! whose deltas the informer applies to its [`Store`](crate::store::Store), and tells any
//! number of handlers about every change. The [`InformerFactory`] shares one informer per
//! type, namespace and selectors between all the controllers of a process.
//!
//! # The contract
//!
//! This is client-go's `SharedInformer` contract, restated for this crate; each sentence is
//! tested (unit tests here, `tests/tests/suite/informer_*.rs` against `TestApiServer`).
//!
//! 1. **Eventual consistency.** When changes stop, the cache ends up holding exactly the
//!    server's objects (same keys, same resourceVersions), whatever watch drops, 410s,
//!    throttling and restarts happened meanwhile.
//! 2. **The cache first.** When a handler is told about a change, the cache already holds it
//!    (or no longer holds a deleted object): a handler that reads the lister sees at least
//!    the state it was told about.
//! 3. **Per-object order.** For each object, a handler receives an in-order *subsequence* of
//!    the object's states, ending in its latest state. Intermediate states may be skipped:
//!    every handler has its own buffer, and while a notification about a key waits in it,
//!    newer ones are folded into it, so a slow handler never blocks the others or the
//!    reflector, and its buffer is bounded by the number of keys (see
//!    [`Registration::pending`]). An object deleted while its first notification still waits
//!    in a handler's buffer is not mentioned to that handler at all (it never saw the
//!    object; client-go would deliver an add and a delete). No order is promised across
//!    objects.
//! 4. **Deletes carry something.** Every deletion of an object a handler was told about
//!    reaches its `on_delete` with either the final
//!    state ([`Deleted::Object`](crate::fifo::Deleted)) or, when the deletion was only seen by
//!    a relist, a tombstone with the key and the last known state
//!    ([`Deleted::FinalStateUnknown`](crate::fifo::Deleted)): an enum, not a type assertion.
//! 5. **Initial list and late handlers.** Objects of the initial list arrive as
//!    `on_add(obj, true)`. A handler added after start first receives `on_add(obj, true)` for
//!    every cached object, then the changes after them. A [`Registration`] is synced once the
//!    informer is and every such initial add has been delivered to it.
//! 6. **Resync.** A relist that finds an object unchanged (same resourceVersion), and a
//!    periodic resync, notify (as `on_update(old, new)` with equal resourceVersions) only the
//!    handlers whose resync period is due; handlers without a period never see them.
//! 7. **Read-only objects.** Handlers and listers get `Arc<K>`: the Go rule "do not mutate
//!    the cache" holds by type.
//! 8. **Transform** runs once per object before it is stored; the factory's default drops
//!    `metadata.managedFields`, as kube-controller-manager does (opt out with
//!    [`InformerFactoryBuilder::keep_managed_fields`]).
//!
//! **The lean cache.** An informer of [`Lean<K>`](kinform_core::Lean)
//! (`factory.informer::<Lean<Pod>>()`) caches each object as its decoded metadata and the
//! JSON of the rest, decoded into `K` only when a handler or worker asks
//! (`lean.decode()`, or `lean.view::<V>()` for a few fields): a fraction of the memory of a
//! decoded `K` (BENCHMARKS.md, "Lean cache"). Everything above holds for it as for `K`; the
//! contract's tests run with both caches (`tests/tests/suite/informer_*.rs`, `lean_cache::*`).
//! Index functions and label selectors read the metadata, never the body.
//!
//! Handlers run on their own tokio tasks, one notification at a time; they should be short
//! (typically: enqueue the key in a workqueue) and must not block the thread. A handler's
//! task takes up to 64 pending notifications from its buffer at once; when the handler is
//! stopped, it still delivers the ones it has taken, so that an informer stopped and started
//! again does not lose them.

mod buffer;
mod factory;
mod handler;
#[cfg(feature = "prometheus")]
mod prometheus;
mod registration;
mod shared;
mod snapshot;

pub(crate) use factory::Tweak;
pub use factory::{
    CacheSyncError, InformerFactory, InformerFactoryBuilder, InformerScope, drop_managed_fields,
};
pub use handler::{EventHandler, EventHandlerFns, Notification};
#[cfg(feature = "prometheus")]
pub use prometheus::PrometheusInformerMetrics;
pub use registration::Registration;
pub(crate) use shared::CacheView;
pub use shared::{AlreadyStarted, MINIMUM_RESYNC_PERIOD, SharedIndexInformer};
pub use snapshot::InformerSnapshot;
