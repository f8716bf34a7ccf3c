//! The seam between the reflector and the API (client-go's `cache.ListerWatcher`).

use std::future::Future;

use futures_util::stream::BoxStream;

use super::{Error, ListParams, ObjectList, WatchEvent, WatchParams};

/// A stream of watch events; ends when the server closes the watch.
pub type WatchStream<K> = BoxStream<'static, Result<WatchEvent<K>, Error>>;

/// Lists and watches one collection of objects.
///
/// Namespace and resource are bound into the implementation (an `Api<K>`); selectors, paging
/// and resourceVersion come with each call.
pub trait ListerWatcher<K>: Send + Sync + 'static {
    /// One LIST request.
    fn list(
        &self,
        params: &ListParams,
    ) -> impl Future<Output = Result<ObjectList<K>, Error>> + Send;
    /// Opens a WATCH; events are decoded as their bytes arrive.
    fn watch(
        &self,
        params: &WatchParams,
    ) -> impl Future<Output = Result<WatchStream<K>, Error>> + Send;
}
