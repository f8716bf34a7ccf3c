//! The seam between the reflector and the API (client-go's `cache.ListerWatcher`).

use std::future::Future;

use futures_util::StreamExt as _;
use futures_util::stream::BoxStream;

use super::{Error, ListParams, ObjectList, WatchEvent, WatchParams};

/// A stream of watch events; ends when the server closes the watch.
pub type WatchStream<K> = BoxStream<'static, Result<WatchEvent<K>, Error>>;

/// Consecutive events of one watch, in order (never empty).
pub type WatchBatch<K> = Vec<Result<WatchEvent<K>, Error>>;

/// A stream of watch event batches; ends when the server closes the watch.
pub type WatchBatchStream<K> = BoxStream<'static, WatchBatch<K>>;

/// Events per batch of the default [`ListerWatcher::watch_batches`].
const DEFAULT_BATCH: usize = 1024;

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

    /// Opens a WATCH whose events come in batches: each item holds the events decoded from
    /// the bytes received so far, so that a consumer can apply them under one lock. The
    /// reflector reads watches through this method. The default batches the events of
    /// [`watch`](Self::watch) that are ready at once; `Api<K>` decodes every complete line of
    /// the received chunks into one batch.
    fn watch_batches(
        &self,
        params: &WatchParams,
    ) -> impl Future<Output = Result<WatchBatchStream<K>, Error>> + Send
    where
        K: Send + 'static,
    {
        let opened = self.watch(params);
        async move { Ok(opened.await?.ready_chunks(DEFAULT_BATCH).boxed()) }
    }
}
