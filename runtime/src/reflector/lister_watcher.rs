//! The seam between the reflector and the API (client-go's `cache.ListerWatcher`).
//!
//! A reflector needs two requests: one LIST page and one WATCH, each answered with objects
//! already shared (`Arc<K>`) and transformed, so that decoding happens once, before the
//! objects reach the DeltaFIFO and the store. [`Api<K>`] implements it through the client's
//! decoding pipeline ([`kinform_client::decode`]); a test double implements the two methods
//! with [`ListHints::share`] for each object it hands out.

use std::future::Future;
use std::sync::Arc;

use kinform_client::decode::{self, ListHints, WatchBatchStream};
use kinform_client::{Api, Error};
use kinform_core::{HasMetadata, ListParams, ObjectList, WatchParams};
use serde::de::DeserializeOwned;

/// Lists and watches one collection of objects for a reflector.
///
/// Namespace and resource are bound into the implementation (an `Api<K>`); selectors, paging
/// and resourceVersion come with each call, and [`ListHints`] say what the reflector does
/// with the objects: the transform to apply before sharing them (required), and what may be
/// skipped or reused while decoding (optional: ignoring these only costs time).
pub trait ListerWatcher<K>: Send + Sync + 'static {
    /// One LIST request; its objects shared and transformed.
    fn list(
        &self,
        params: &ListParams,
        hints: &ListHints<K>,
    ) -> impl Future<Output = Result<ObjectList<Arc<K>>, Error>> + Send;

    /// Opens a WATCH whose events come in batches (each the events decoded from the bytes
    /// received so far, so the reflector applies them under one lock), their objects shared
    /// and transformed; the stream ends when the server closes the watch.
    fn watch(
        &self,
        params: &WatchParams,
        hints: &ListHints<K>,
    ) -> impl Future<Output = Result<WatchBatchStream<Arc<K>>, Error>> + Send;
}

impl<K> ListerWatcher<K> for Api<K>
where
    K: HasMetadata + Clone + DeserializeOwned + Send + Sync + 'static,
{
    fn list(
        &self,
        params: &ListParams,
        hints: &ListHints<K>,
    ) -> impl Future<Output = Result<ObjectList<Arc<K>>, Error>> + Send {
        decode::list(self, params, hints)
    }

    fn watch(
        &self,
        params: &WatchParams,
        hints: &ListHints<K>,
    ) -> impl Future<Output = Result<WatchBatchStream<Arc<K>>, Error>> + Send {
        decode::watch(self, params, hints)
    }
}

impl<K, L: ListerWatcher<K>> ListerWatcher<K> for Arc<L> {
    fn list(
        &self,
        params: &ListParams,
        hints: &ListHints<K>,
    ) -> impl Future<Output = Result<ObjectList<Arc<K>>, Error>> + Send {
        L::list(self, params, hints)
    }

    fn watch(
        &self,
        params: &WatchParams,
        hints: &ListHints<K>,
    ) -> impl Future<Output = Result<WatchBatchStream<Arc<K>>, Error>> + Send {
        L::watch(self, params, hints)
    }
}
