//! DeltaFIFO: client-go's `tools/cache/delta_fifo.go`, typed.
//!
//! The reflector pushes what it lists and watches into a [`DeltaFifo`] (through
//! [`ReflectorSink`](crate::reflector::ReflectorSink)); the informer pops one key at a time,
//! applies the key's [`Deltas`] to its store and notifies its handlers. The FIFO decouples the
//! two and accumulates, per key, everything that happened while the key waited. Semantics, as
//! client-go defines them:
//!
//! - **Per-key deltas, queue order of first arrival.** A key enters the back of the queue when
//!   its first delta arrives; later deltas of the same key join its [`Deltas`] (oldest first)
//!   without moving it. Pop hands over all of them, the newest last.
//! - **Delta types** ([`DeltaType`]): `Added`, `Updated`, `Deleted`, `Replaced` (an item of a
//!   complete list; client-go's `EmitDeltaTypeReplaced` behaviour) and `Sync` (resync).
//! - **Deletion dedup.** Only a `Deleted` following a `Deleted` collapses, keeping the more
//!   informative: a real final state wins over a [`Deleted::FinalStateUnknown`] tombstone
//!   (client-go's `isDeletionDup`).
//! - **Delete of an unknown key is ignored**: when the key is neither queued nor among the
//!   [`KnownObjects`] (without known objects: when it is not queued).
//! - **Replace(list)** queues `Replaced` for each item, then a tombstone `Deleted` for every
//!   key that is queued or known but absent from the list, carrying the last known state (the
//!   newest queued object, else the known object). The first Replace sets the initial
//!   population: the list's distinct keys plus the synthesized deletions.
//! - **Resync** queues `Sync` for every known key that has no pending deltas.
//! - **has_synced** is true once the initial population has been popped, or when an Add,
//!   Update or Delete came before any Replace.
//! - **Typed deletions.** [`Deleted`] is an enum, so the `DeletedFinalStateUnknown`
//!   type-assertion panics of Go handlers cannot happen.
//! - **Pop under the lock, not handlers.** [`DeltaFifo::pop`] runs its closure with the deltas
//!   of exactly one key while holding the FIFO lock, as client-go runs `Process`: nothing can
//!   be queued and no Replace/Resync can read the known objects between the pop and the store
//!   update, so tombstones and syncs are computed against a store that already reflects every
//!   popped delta. The informer's closure only updates its store and pushes into handler
//!   buffers; user handlers never run under this lock. [`DeltaFifo::pop_batch`] does the same
//!   for several distinct keys per lock acquisition. A closure returning `Err` requeues the
//!   deltas (client-go's `ErrRequeue` / `addIfNotPresent`).
//! - **How far the consumer has caught up** (kinform's, for read-your-own-writes:
//!   [`DeltaFifo::with_watermark`]). Queue order is the order of first arrival, so the key at
//!   the front entered after everything older had been popped: after each pop the watermark
//!   advances to the version pushed just before the front key's oldest delta, or, with
//!   nothing queued, to the last version pushed (event, list or bookmark). See
//!   [`consistency`](crate::consistency).
//! - **Close** wakes every waiting consumer; queued keys are still handed out, then pops fail
//!   with [`FifoClosed`]. Producers get [`SinkClosed`](crate::reflector::SinkClosed) after
//!   close, which stops the reflector.
//!
//! Keys are not stored as strings (see [`ObjectKey`](crate::store::ObjectKey)): a queued key
//! costs a slab entry, four bytes in the key table and four in the queue, and delta buffers are
//! recycled, so a steady add/pop stream does not allocate.

mod delta;
mod delta_fifo;
mod known;
mod state;

pub use self::delta::{Deleted, Delta, DeltaType, Deltas};
pub use self::delta_fifo::{DeltaFifo, FifoClosed, PopBatch};
pub use self::known::KnownObjects;
