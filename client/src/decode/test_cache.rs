//! A cache of objects for the decoding tests: it answers [`ListHints::cached`] as a
//! reflector's sink does (the object under a key, when it is at the asked resourceVersion),
//! without the runtime's store, which this crate cannot import.

use std::collections::HashMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::ConfigMap;
use kinform_core::{HasMetadata, ObjectKey};
use parking_lot::Mutex;

use super::hints::CachedLookup;
#[cfg(doc)]
use super::hints::ListHints;

/// ConfigMaps by key.
#[derive(Clone, Default)]
pub(crate) struct Cache(Arc<Mutex<HashMap<String, Arc<ConfigMap>>>>);

impl Cache {
    /// Keeps `obj` under its key.
    pub(crate) fn add(&self, obj: Arc<ConfigMap>) {
        let key = ObjectKey::of(&*obj).to_key();
        self.0.lock().insert(key, obj);
    }

    /// The object under `key` at resourceVersion `rv`, if any.
    pub(crate) fn cached(&self, key: ObjectKey<'_>, rv: &str) -> Option<Arc<ConfigMap>> {
        let map = self.0.lock();
        let obj = map.get(&key.to_key())?;
        (obj.resource_version() == rv).then(|| Arc::clone(obj))
    }

    /// [`cached`](Self::cached) as a [`ListHints::cached`] lookup.
    pub(crate) fn lookup(&self) -> CachedLookup<ConfigMap> {
        let cache = self.clone();
        Arc::new(move |key, rv: &str| cache.cached(key, rv))
    }
}
