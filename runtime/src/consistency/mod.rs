//! Read-your-own-writes for caches: how far a cache has caught up ([`Watermark`]), and how
//! resourceVersions compare ([`compare_resource_versions`], KEP-5504).
//!
//! A cache lags the API server: a controller that writes an object and reads its informer's
//! lister a moment later may still find the old state, and act on it twice (a second create
//! that fails with AlreadyExists, a status computed from an old spec). Kubernetes now lets
//! clients order resourceVersions (KEP-5504: they are integers; compare them as such) and
//! kube-controller-manager uses that to hold back a controller until its cache has seen its
//! own writes (KEP-5647). This module is the cache side of that:
//!
//! - Every [`Store`](crate::store::Store) carries a [`Watermark`]: the highest
//!   resourceVersion such that every change of the collection at or below it is in the
//!   store. An informer advances it as it applies the DeltaFIFO's deltas: its DeltaFIFO
//!   knows, for the key at the front of its queue, the version pushed just before that key's
//!   oldest pending delta; everything up to there is applied (per-key coalescing reorders
//!   keys, never the versions before the front). When the FIFO is empty, the last pushed
//!   version, the last list's or the last bookmark's, is the watermark. A reflector feeding
//!   a plain store advances it with every write.
//! - [`Lister::wait_for_resource_version`](crate::lister::Lister::wait_for_resource_version)
//!   and [`SharedIndexInformer::wait_for_resource_version`](crate::informer::SharedIndexInformer::wait_for_resource_version)
//!   wait, with a timeout, until the cache has seen a write: read-your-own-writes for code
//!   outside a controller.
//! - The controller toolkit's consistency guard (see [`controller`](crate::controller))
//!   remembers each reconcile's writes and holds the key's next reconcile back, without a
//!   worker, until the watermarks pass them.
//!
//! **Incomparable versions fail open.** A version that is not a well-formed integer (an
//! aggregated API server's own scheme, say) cannot be ordered: questions about it are
//! answered "caught up", and each one is counted ([`Watermark::incomparable`]), so a
//! controller of such an API behaves as without the guard, and says so in its metrics.
//!
//! client-go has the comparison (`CompareResourceVersion`), and KEP-5647 gives its event
//! handlers the bookmarks so that a controller can follow the versions its informers have
//! seen; controller-runtime's read-your-own-writes client (#3472) keeps a minimum version
//! per key and blocks `Get`/`List` until the informer reaches it. Written by hand: no crate of the field orders Kubernetes versions, and the
//! watermark is one atomic and a `tokio::sync::watch` channel.

mod version;
mod watermark;

pub use version::{
    IncomparableVersion, compare_resource_versions, is_comparable, parse_resource_version,
};
pub use watermark::{Advances, Seen, WaitError, Watermark};
