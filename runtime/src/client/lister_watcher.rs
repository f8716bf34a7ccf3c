//! The seam between the reflector and the API (client-go's `cache.ListerWatcher`).

use std::future::Future;
use std::sync::Arc;

use futures_util::StreamExt as _;
use futures_util::stream::BoxStream;

use super::{Error, ListParams, ObjectList, WatchEvent, WatchParams};
use crate::store::ObjectKey;

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

    /// Opens a WATCH whose events come in batches with their objects shared and
    /// transformed, decoded with `hints` (the reflector's entry point for watches and
    /// streaming lists; `hints.cached` is set only for a streaming list's initial events).
    /// The default shares and transforms the events of [`watch_batches`](Self::watch_batches);
    /// [`Api`](super::Api) decodes each event's object as [`list_shared`](Self::list_shared)
    /// decodes items (exact capacities, `managedFields` skipped, cached objects reused for
    /// ADDED events) and a large batch on two threads.
    fn watch_shared(
        &self,
        params: &WatchParams,
        hints: &ListHints<K>,
    ) -> impl Future<Output = Result<WatchBatchStream<Arc<K>>, Error>> + Send
    where
        K: Send + Sync + 'static,
    {
        let opened = self.watch_batches(params);
        let transform = hints.transform.clone();
        async move {
            let batches = opened.await?;
            Ok(batches
                .map(move |batch| {
                    batch
                        .into_iter()
                        .map(|item| {
                            item.map(|ev| {
                                ev.map(|mut obj| {
                                    if let Some(t) = &transform {
                                        t(&mut obj);
                                    }
                                    Arc::new(obj)
                                })
                            })
                        })
                        .collect()
                })
                .boxed())
        }
    }

    /// One LIST request whose objects come shared and transformed, decoded with `hints`
    /// (the reflector's entry point). The default calls [`list`](Self::list) and applies
    /// the transform; [`Api`](super::Api) decodes the items on two threads, skips
    /// `managedFields` and reuses cached objects as the hints allow.
    fn list_shared(
        &self,
        params: &ListParams,
        hints: &ListHints<K>,
    ) -> impl Future<Output = Result<ObjectList<Arc<K>>, Error>> + Send
    where
        K: Send,
    {
        async move {
            let list = self.list(params).await?;
            let items = list
                .items
                .into_iter()
                .map(|mut obj| {
                    if let Some(t) = &hints.transform {
                        t(&mut obj);
                    }
                    Arc::new(obj)
                })
                .collect();
            Ok(ObjectList {
                metadata: list.metadata,
                items,
            })
        }
    }
}

/// Looks up the cached object with a key at a resourceVersion (see [`ListHints::cached`]).
pub type CachedLookup<K> = Arc<dyn Fn(ObjectKey<'_>, &str) -> Option<Arc<K>> + Send + Sync>;

/// What a reflector tells a list request (or a watch, see
/// [`ListerWatcher::watch_shared`]) about the objects it wants, so that an implementation
/// can decode less: every field is a hint that may be ignored, and ignoring them all gives
/// the same list or events (only slower).
pub struct ListHints<K> {
    /// The objects' `metadata.managedFields` is dropped anyway (the informer factory's
    /// default transform): the implementation may skip it while decoding.
    pub skip_managed_fields: bool,
    /// Applied to every object the implementation decodes, before sharing it (the
    /// reflector's transform, client-go's `TransformFunc`). Objects returned by
    /// [`cached`](Self::cached) were transformed when they were first decoded.
    pub transform: Option<crate::reflector::Transform<K>>,
    /// The object the reflector's sink holds under a key at a resourceVersion, if any: a
    /// listed item with that key and resourceVersion is that object (a resourceVersion
    /// identifies one state of one object), so the implementation may return the cached
    /// `Arc` instead of decoding the item again.
    pub cached: Option<CachedLookup<K>>,
}

impl<K> Clone for ListHints<K> {
    fn clone(&self) -> Self {
        Self {
            skip_managed_fields: self.skip_managed_fields,
            transform: self.transform.clone(),
            cached: self.cached.clone(),
        }
    }
}

impl<K> Default for ListHints<K> {
    fn default() -> Self {
        Self {
            skip_managed_fields: false,
            transform: None,
            cached: None,
        }
    }
}

impl<K> std::fmt::Debug for ListHints<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ListHints")
            .field("skip_managed_fields", &self.skip_managed_fields)
            .field("transform", &self.transform.is_some())
            .field("cached", &self.cached.is_some())
            .finish()
    }
}
