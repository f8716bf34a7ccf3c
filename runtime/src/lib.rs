//! # kinform-runtime
//!
//! The controller runtime: the third layer of kinform (see the repository's
//! `ARCHITECTURE.md`), reproducing client-go's `tools/cache`, `util/workqueue`,
//! `tools/leaderelection` and `tools/events`, and controller-runtime's controller loop. It
//! imports `kinform-core` and `kinform-client`, never the reverse; the reflector reads the API
//! through the client's decoding seam ([`reflector::ListerWatcher`], implemented for `Api<K>`).
//!
//! The flow of one object: [`reflector`] (list + watch) -> [`fifo`] (DeltaFIFO, per-key
//! deltas) -> [`informer`] (applies each delta to the [`store`] and notifies handlers) ->
//! handlers -> [`workqueue`] -> [`controller`] workers reading [`lister`]s. [`leader`]
//! elects one active replica on a Lease; [`events`] records Events; [`admin`] serves a
//! process's probes, metrics and live state over HTTP. [`consistency`] tracks how far each
//! cache has caught up (resourceVersion watermarks), for read-your-own-writes.
//!
//! Objects are decoded once and shared as [`Arc<K>`](std::sync::Arc) between the FIFO, the
//! indexer, event handlers and listers. Keys are `namespace/name`, or `name` for
//! cluster-scoped objects, as client-go's `MetaNamespaceKeyFunc`.

pub mod admin;
pub mod consistency;
pub mod controller;
pub mod events;
pub mod fifo;
pub mod informer;
pub mod leader;
pub mod lister;
pub mod reflector;
pub mod store;
pub mod workqueue;
