//! Indexed, thread-safe object store: client-go's `ThreadSafeStore` + `Indexer`
//! (`k8s.io/client-go/tools/cache/thread_safe_store.go`, `index.go`).
//!
//! The informer applies popped deltas to a [`Store`]; listers and controllers read it. What
//! it reproduces from client-go:
//!
//! - Objects are keyed by `namespace/name` (or `name` for cluster-scoped objects), as
//!   `MetaNamespaceKeyFunc`; `add` and `update` both insert-or-replace, `delete` removes.
//! - Named indexes with multi-valued index functions ([`IndexFn`], client-go's `IndexFunc`):
//!   every add, update and delete keeps every index exact, and a bucket that becomes empty is
//!   removed, so [`Store::index_values`] only reports values that have objects.
//!   [`Store::add_indexers`] may be called after objects are stored: it indexes them.
//! - The namespace index ([`NAMESPACE_INDEX`], `MetaNamespaceIndexFunc`) is always present;
//!   cluster-scoped objects are indexed under `""`.
//! - [`Store::replace`] swaps the whole content for a new list and records the list's
//!   resource version ([`Store::last_sync_resource_version`]).
//!
//! What it adds:
//!
//! - A label index ([`LABEL_INDEX`], values `key=value`), partitioned by namespace, serving
//!   [`Store::list_by_labels`]: a selector list touches only candidate objects, so its cost
//!   grows with the result and not with the store (see the `select` and `labels` modules;
//!   client-go scans the whole cache).
//! - No key strings are stored: entries live in a slab, the key table and every index bucket
//!   hold slot numbers, and keys are hashed and compared through the stored object's own
//!   `metadata.namespace`/`metadata.name` ([`ObjectKey`]; the layout is in the `inner`
//!   module). An update that keeps the namespace, labels and custom index values costs no
//!   index work and no allocation.
//! - `replace` runs in place under the write lock: readers see the old content or the new
//!   one, never a mix, and the store never holds two copies of its tables (client-go builds a
//!   second map and rebuilds every index). Objects leaving the store are dropped after the
//!   lock is released, so readers do not wait for deallocation.
//!
//! Index functions must be pure: an update or delete recomputes the values of the stored
//! (old) object to find the buckets to leave, as client-go does.

mod bucket;
mod error;
mod index;
mod inner;
mod labels;
mod select;

use std::fmt;
use std::sync::Arc;

use parking_lot::RwLock;

pub use self::error::StoreError;
use self::inner::Inner;
pub(crate) use self::inner::Inner as StoreInner;
pub(crate) use self::inner::hash_key;
use crate::consistency::Watermark;
use crate::reflector::{ReflectorSink, SinkClosed};
pub use kinform_core::ObjectKey;
use kinform_core::resource::HasMetadata;
use kinform_core::selector::LabelSelector;

/// A multi-valued index function (client-go's `IndexFunc`): the values under which an object
/// is indexed. It must be pure (the same object always gives the same values).
pub type IndexFn<K> = Arc<dyn Fn(&K) -> Vec<String> + Send + Sync>;

/// Name of the built-in namespace index (client-go's `cache.NamespaceIndex`). Cluster-scoped
/// objects are indexed under `""`.
pub const NAMESPACE_INDEX: &str = "namespace";

/// Name of the built-in label index. Its values are `key=value` pairs, one per label of an
/// object: `by_index(LABEL_INDEX, "app=web")`.
pub const LABEL_INDEX: &str = "labels";

/// A thread-safe, indexed store of `Arc<K>` keyed by `namespace/name`.
///
/// Cloning is cheap and shares the content.
pub struct Store<K> {
    inner: Arc<RwLock<Inner<K>>>,
    watermark: Watermark,
}

impl<K> Clone for Store<K> {
    fn clone(&self) -> Self {
        Self {
            inner: Arc::clone(&self.inner),
            watermark: self.watermark.clone(),
        }
    }
}

impl<K: HasMetadata> Default for Store<K> {
    fn default() -> Self {
        Self::new()
    }
}

impl<K: HasMetadata> fmt::Debug for Store<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let inner = self.inner.read();
        f.debug_struct("Store")
            .field("len", &inner.len())
            .field("indexes", &inner.indexes.names())
            .field("resource_version", &inner.resource_version)
            .finish()
    }
}

impl<K: HasMetadata> Store<K> {
    /// An empty store with the namespace and label indexes.
    pub fn new() -> Self {
        Self {
            inner: Arc::new(RwLock::new(Inner::default())),
            watermark: Watermark::new(),
        }
    }

    /// How far the store has caught up with its collection (see [`Watermark`]): advanced by
    /// the informer that applies deltas to it, or by a reflector feeding it directly
    /// (its [`ReflectorSink`] implementation); the plain writes ([`add`](Self::add),
    /// [`replace`](Self::replace), ...) leave it alone.
    pub fn watermark(&self) -> &Watermark {
        &self.watermark
    }

    /// Inserts `obj`, replacing the object with the same key if any.
    pub fn add(&self, obj: Arc<K>) {
        drop(self.upsert(obj));
    }

    /// Inserts `obj` and returns the object it replaced, in one lock acquisition and one key
    /// lookup (an informer needs the old object for its update notification).
    pub fn upsert(&self, obj: Arc<K>) -> Option<Arc<K>> {
        self.inner.write().upsert(obj).1
    }

    /// Replaces the object with `obj`'s key, inserting it if absent (same as [`Store::add`],
    /// as in client-go).
    pub fn update(&self, obj: Arc<K>) {
        self.add(obj);
    }

    /// Removes and returns the object stored under `key` (`namespace/name` or `name`).
    pub fn delete(&self, key: &str) -> Option<Arc<K>> {
        self.delete_key(ObjectKey::parse(key))
    }

    /// Removes and returns the object stored under `key`.
    pub fn delete_key(&self, key: ObjectKey<'_>) -> Option<Arc<K>> {
        self.inner.write().remove(key)
    }

    /// The object stored under `key` (`namespace/name` or `name`).
    pub fn get(&self, key: &str) -> Option<Arc<K>> {
        self.get_key(ObjectKey::parse(key))
    }

    /// The object stored under `key`.
    pub fn get_key(&self, key: ObjectKey<'_>) -> Option<Arc<K>> {
        self.inner.read().get(key).cloned()
    }

    /// The object called `name` in `namespace` (`None` for cluster-scoped objects), without
    /// building the key string.
    pub fn get_by_name(&self, namespace: Option<&str>, name: &str) -> Option<Arc<K>> {
        self.get_key(ObjectKey::new(namespace, name))
    }

    /// Whether an object is stored under `key`.
    pub fn contains_key(&self, key: &str) -> bool {
        self.inner.read().get(ObjectKey::parse(key)).is_some()
    }

    /// Every stored object, in no particular order.
    pub fn list(&self) -> Vec<Arc<K>> {
        let inner = self.inner.read();
        let mut out = Vec::with_capacity(inner.len());
        out.extend(inner.iter().map(|(_, o)| Arc::clone(o)));
        out
    }

    /// Every key, in no particular order.
    pub fn list_keys(&self) -> Vec<String> {
        let inner = self.inner.read();
        let mut out = Vec::with_capacity(inner.len());
        out.extend(inner.iter().map(|(_, o)| ObjectKey::of(&**o).to_key()));
        out
    }

    /// Number of stored objects.
    pub fn len(&self) -> usize {
        self.inner.read().len()
    }

    /// Whether the store is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The objects indexed under `value` in the index called `index` (client-go's
    /// `ByIndex`). For [`LABEL_INDEX`], `value` is `key=value`.
    pub fn by_index(&self, index: &str, value: &str) -> Result<Vec<Arc<K>>, StoreError> {
        let inner = self.inner.read();
        let buckets = inner.indexes.get(index)?.buckets(index, value)?;
        let mut out = Vec::with_capacity(buckets.iter().map(|b| b.len()).sum());
        for b in buckets {
            out.extend(b.iter().map(|s| Arc::clone(inner.object(s))));
        }
        Ok(out)
    }

    /// The keys of the objects indexed under `value` (client-go's `IndexKeys`).
    pub fn index_keys(&self, index: &str, value: &str) -> Result<Vec<String>, StoreError> {
        let inner = self.inner.read();
        let buckets = inner.indexes.get(index)?.buckets(index, value)?;
        Ok(buckets
            .into_iter()
            .flat_map(|b| b.iter())
            .map(|s| ObjectKey::of(&**inner.object(s)).to_key())
            .collect())
    }

    /// Every value of the index called `index` that has at least one object (client-go's
    /// `ListIndexFuncValues`).
    pub fn index_values(&self, index: &str) -> Result<Vec<String>, StoreError> {
        Ok(self.inner.read().indexes.get(index)?.values())
    }

    /// The names of all indexes, built-in ones first.
    pub fn index_names(&self) -> Vec<String> {
        self.inner.read().indexes.names()
    }

    /// Adds named indexes and indexes the objects already stored (client-go's
    /// `AddIndexers`). Fails without adding any when a name is taken or repeated.
    pub fn add_indexers(
        &self,
        indexers: impl IntoIterator<Item = (String, IndexFn<K>)>,
    ) -> Result<(), StoreError> {
        let indexers: Vec<_> = indexers.into_iter().collect();
        let mut inner = self.inner.write();
        inner
            .indexes
            .check_new_names(indexers.iter().map(|(n, _)| n.as_str()))?;
        for (name, func) in indexers {
            inner.add_index(name, func);
        }
        Ok(())
    }

    /// The objects in `namespace` (all namespaces when `None` or `Some("")`, client-go's
    /// `NamespaceAll`) whose labels match `selector`, served by the label index: the cost
    /// grows with the smallest candidate set of the selector, not with the store.
    pub fn list_by_labels(&self, namespace: Option<&str>, selector: &LabelSelector) -> Vec<Arc<K>> {
        self.inner.read().select(namespace, selector)
    }

    /// Replaces the whole content with `objs` and records `resource_version`. Readers see the
    /// old content or the new one, never a mix.
    pub fn replace(&self, objs: Vec<Arc<K>>, resource_version: String) {
        let garbage = self.inner.write().replace(objs, resource_version);
        drop(garbage);
    }

    /// Runs `f` with the write lock held: the informer applies a whole batch of popped deltas
    /// in one lock acquisition. Objects `f` removes or replaces should be dropped after it
    /// returns (outside the lock).
    pub(crate) fn write_with<R>(&self, f: impl FnOnce(&mut Inner<K>) -> R) -> R {
        f(&mut self.inner.write())
    }

    /// The resource version of the last [`Store::replace`] (client-go's
    /// `LastSyncResourceVersion`), `""` before the first.
    pub fn last_sync_resource_version(&self) -> String {
        self.inner.read().resource_version.clone()
    }
}

/// A reflector can feed a plain store (client-go's `Reflector` over a `cache.Store`). Each
/// write is applied at once, so the [watermark](Store::watermark) follows it: the written
/// object's resourceVersion, the list's, or the bookmark's.
impl<K: HasMetadata> ReflectorSink<K> for Store<K> {
    fn add(&self, obj: Arc<K>) -> Result<(), SinkClosed> {
        let rv = Arc::clone(&obj);
        Store::add(self, obj);
        self.watermark.observe(rv.resource_version());
        Ok(())
    }

    fn update(&self, obj: Arc<K>) -> Result<(), SinkClosed> {
        ReflectorSink::add(self, obj)
    }

    fn delete(&self, obj: Arc<K>) -> Result<(), SinkClosed> {
        let removed = self.delete_key(ObjectKey::of(&*obj));
        drop(removed);
        self.watermark.observe(obj.resource_version());
        Ok(())
    }

    fn replace(&self, list: Vec<Arc<K>>, resource_version: String) -> Result<(), SinkClosed> {
        let rv = resource_version.clone();
        Store::replace(self, list, resource_version);
        self.watermark.observe(&rv);
        Ok(())
    }

    fn bookmark(&self, resource_version: &str) -> Result<(), SinkClosed> {
        self.watermark.observe(resource_version);
        Ok(())
    }

    /// A plain store has nothing to resync (client-go's `threadSafeMap.Resync` is a no-op).
    fn resync(&self) -> Result<(), SinkClosed> {
        Ok(())
    }

    fn current(&self, key: ObjectKey<'_>) -> Option<Arc<K>> {
        self.get_key(key)
    }
}
