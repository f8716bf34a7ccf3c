//! The objects the FIFO's consumer already knows (client-go's `KeyListerGetter`, the
//! `knownObjects` of a DeltaFIFO): normally the informer's indexer.
//!
//! Replace uses them to synthesize tombstones for objects that disappeared while the watch
//! was down, Resync re-delivers them, and Delete of a key that is neither queued nor known
//! is ignored.

use std::sync::Arc;

use crate::store::{ObjectKey, Store};
use kinform_core::resource::HasMetadata;

/// Read access to the objects the consumer of a [`DeltaFifo`](super::DeltaFifo) knows.
pub trait KnownObjects<K>: Send + Sync {
    /// Every known key.
    fn list_keys(&self) -> Vec<String>;

    /// The known object under `key`.
    fn get(&self, key: &str) -> Option<Arc<K>>;

    /// The known object under `key`, without building the key string when the
    /// implementation can avoid it.
    fn get_key(&self, key: ObjectKey<'_>) -> Option<Arc<K>> {
        self.get(&key.to_key())
    }

    /// Whether no object is known. The default lists the keys; stores override it.
    fn is_empty(&self) -> bool {
        self.list_keys().is_empty()
    }

    /// Every known object. The default goes through [`KnownObjects::list_keys`] and
    /// [`KnownObjects::get`]; stores override it to avoid building the keys.
    fn list(&self) -> Vec<Arc<K>> {
        self.list_keys()
            .iter()
            .filter_map(|k| self.get(k))
            .collect()
    }
}

impl<K: HasMetadata> KnownObjects<K> for Store<K> {
    fn list_keys(&self) -> Vec<String> {
        Store::list_keys(self)
    }

    fn get(&self, key: &str) -> Option<Arc<K>> {
        Store::get(self, key)
    }

    fn get_key(&self, key: ObjectKey<'_>) -> Option<Arc<K>> {
        Store::get_key(self, key)
    }

    fn list(&self) -> Vec<Arc<K>> {
        Store::list(self)
    }

    fn is_empty(&self) -> bool {
        Store::is_empty(self)
    }
}
