//! What the reflector tells the decoding pipeline about the objects it wants.

use std::sync::Arc;

use kinform_core::{ObjectKey, Transform};

use super::pager::PageAhead;
use super::reclaim::Reclaim;

/// Looks up the cached object with a key at a resourceVersion (see [`ListHints::cached`]).
pub type CachedLookup<K> = Arc<dyn Fn(ObjectKey<'_>, &str) -> Option<Arc<K>> + Send + Sync>;

/// Looks up the object cached under a key now, at any resourceVersion (see
/// [`ListHints::current`]).
pub type CurrentLookup<K> = Arc<dyn Fn(ObjectKey<'_>) -> Option<Arc<K>> + Send + Sync>;

/// What a reflector tells a list request or a watch (see [`list`](super::list) and
/// [`watch`](super::watch)) about the objects it wants, so that the pipeline can decode less:
/// every field but the transform is a hint that may be ignored, and ignoring them all gives
/// the same objects (only slower).
#[must_use]
pub struct ListHints<K> {
    /// The objects' `metadata.managedFields` is dropped anyway (the informer factory's
    /// default transform): the pipeline may skip it while decoding.
    pub skip_managed_fields: bool,
    /// Applied to every object the pipeline decodes, before sharing it (the reflector's
    /// transform, client-go's `TransformFunc`). Objects returned by [`cached`](Self::cached)
    /// were transformed when they were first decoded.
    pub transform: Option<Transform<K>>,
    /// The object the reflector's sink holds under a key at a resourceVersion, if any: a
    /// listed item with that key and resourceVersion is that object (a resourceVersion
    /// identifies one state of one object), so the pipeline may return the cached `Arc`
    /// instead of decoding the item again.
    pub cached: Option<CachedLookup<K>>,
    /// The object the reflector's sink holds under a key now, if any: an object decoded
    /// for an event may share what the event left unchanged from it (the body of a lean
    /// object; see `in_place`). Read only by the watch's decoding of lean objects.
    pub current: Option<CurrentLookup<K>>,
    /// Objects that left the reflector's cache, for a watch to decode into (a built-in type)
    /// or drop, on a decoding thread, for each object it decodes there (see [`Reclaim`]).
    pub reclaim: Option<Arc<Reclaim<K>>>,
    /// The next page of a paged list, requested while the current one decodes: one per
    /// reflector, shared by the clones of its hints (see [`PageAhead`]).
    pub page_ahead: PageAhead,
}

impl<K> ListHints<K> {
    /// `obj` transformed (when a transform is set) and shared: what a lister-watcher that
    /// decodes by other means (a test double, a cache of its own) hands the reflector.
    pub fn share(&self, mut obj: K) -> Arc<K> {
        if let Some(t) = &self.transform {
            t(&mut obj);
        }
        Arc::new(obj)
    }
}

impl<K> Clone for ListHints<K> {
    fn clone(&self) -> Self {
        Self {
            skip_managed_fields: self.skip_managed_fields,
            transform: self.transform.clone(),
            cached: self.cached.clone(),
            current: self.current.clone(),
            reclaim: self.reclaim.clone(),
            page_ahead: self.page_ahead.clone(),
        }
    }
}

impl<K> Default for ListHints<K> {
    fn default() -> Self {
        Self {
            skip_managed_fields: false,
            transform: None,
            cached: None,
            current: None,
            reclaim: None,
            page_ahead: PageAhead::default(),
        }
    }
}

impl<K> std::fmt::Debug for ListHints<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ListHints")
            .field("skip_managed_fields", &self.skip_managed_fields)
            .field("transform", &self.transform.is_some())
            .field("cached", &self.cached.is_some())
            .field("current", &self.current.is_some())
            .field("reclaim", &self.reclaim)
            .field("page_ahead", &self.page_ahead)
            .finish()
    }
}
