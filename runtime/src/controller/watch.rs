//! The informer handlers a controller registers: its own type, owned types and mapped
//! related types, each turning notifications into keys of the controlled type.

use std::sync::Arc;

use futures_util::future::BoxFuture;

use super::filter::Filter;
use super::owner::owner_key;
use super::queue::{ControllerQueue, listed};
use super::shard::Shared;
use crate::fifo::Deleted;
use crate::informer::{EventHandler, Registration};
use crate::workqueue::Priority;
use kinform_core::resource::{HasMetadata, Resource};

/// A registered handler, whatever the type it watches.
pub(crate) trait Watch: Send + Sync {
    /// The watched resource, for logs.
    fn describe(&self) -> &str;
    /// Whether the handler has received its initial list.
    fn has_synced(&self) -> bool;
    /// Waits for [`has_synced`](Self::has_synced).
    fn wait_for_sync(&self) -> BoxFuture<'_, ()>;
    /// Unregisters the handler.
    fn remove(&self);
}

pub(crate) struct Registered<C> {
    pub(crate) what: String,
    pub(crate) registration: Registration<C>,
}

impl<C: HasMetadata> Watch for Registered<C> {
    fn describe(&self) -> &str {
        &self.what
    }
    fn has_synced(&self) -> bool {
        self.registration.has_synced()
    }
    fn wait_for_sync(&self) -> BoxFuture<'_, ()> {
        Box::pin(self.registration.wait_for_sync())
    }
    fn remove(&self) {
        self.registration.remove();
    }
}

/// Enqueues the key of every notified object of the controlled type itself, deletions
/// included (the reconcile then finds no object and cleans up what ownerReferences do not).
/// In a sharded replica a deletion is also remembered, so that the worker reconciles the
/// deletion of an object this replica held and of no other. Updates pass through the
/// builder's [`filter`](super::ControllerBuilder::filter), if any.
pub(crate) struct EnqueueSelf<K> {
    pub(crate) queue: ControllerQueue,
    pub(crate) shard: Option<Arc<Shared>>,
    pub(crate) filter: Option<Filter<K>>,
}

impl<K: HasMetadata> EventHandler<K> for EnqueueSelf<K> {
    fn on_add(&self, obj: &Arc<K>, is_in_initial_list: bool) {
        self.queue
            .add_with_priority(obj.key(), listed(is_in_initial_list));
    }
    fn on_update(&self, old: &Arc<K>, new: &Arc<K>) {
        if self.filter.as_ref().is_some_and(|f| !f.passes(old, new)) {
            return;
        }
        let resync = old.resource_version() == new.resource_version();
        self.queue.add_with_priority(new.key(), listed(resync));
    }
    fn on_delete(&self, deleted: &Deleted<K>) {
        let key = deleted.key().to_string();
        if let Some(shard) = &self.shard {
            shard.deleted.lock().insert(key.clone());
        }
        self.queue.add(key);
    }
}

/// The keys to enqueue for a related object (a user's mapper, or the owner lookup).
pub(crate) type Mapper<C> = Arc<dyn Fn(&C) -> Vec<String> + Send + Sync>;

/// Enqueues the keys a related object maps to, for its old and new states on update (so a
/// change of owner or of the mapped field reaches both sides, as client-go's ReplicaSet
/// controller does for a changed controller reference) and its last known state on delete.
pub(crate) struct EnqueueMapped<C> {
    pub(crate) queue: ControllerQueue,
    pub(crate) mapper: Mapper<C>,
    /// Skip updates with an unchanged resourceVersion (resyncs): sample-controller's
    /// `handleObject` does, as a resync of a dependent says nothing new about its owner.
    pub(crate) skip_resync: bool,
    /// The builder's [`filter_related`](super::ControllerBuilder::filter_related) for `C`.
    pub(crate) filter: Option<Filter<C>>,
}

impl<C: HasMetadata> EnqueueMapped<C> {
    fn enqueue(&self, obj: &C, priority: Priority) {
        for key in (self.mapper)(obj) {
            self.queue.add_with_priority(key, priority);
        }
    }
}

impl<C: HasMetadata> EventHandler<C> for EnqueueMapped<C> {
    fn on_add(&self, obj: &Arc<C>, is_in_initial_list: bool) {
        self.enqueue(obj, listed(is_in_initial_list));
    }
    fn on_update(&self, old: &Arc<C>, new: &Arc<C>) {
        let resync = old.resource_version() == new.resource_version();
        if (self.skip_resync && resync) || self.filter.as_ref().is_some_and(|f| !f.passes(old, new))
        {
            return;
        }
        let priority = listed(resync);
        let old_keys = (self.mapper)(old);
        let new_keys = (self.mapper)(new);
        for key in new_keys
            .iter()
            .chain(old_keys.iter().filter(|k| !new_keys.contains(k)))
        {
            self.queue.add_with_priority(key.clone(), priority);
        }
    }
    fn on_delete(&self, deleted: &Deleted<C>) {
        if let Some(obj) = deleted.object() {
            self.enqueue(obj, Priority::NORMAL);
        }
    }
}

/// The mapper of [`owns`](super::ControllerBuilder::owns): the controller reference's key.
pub(crate) fn owner_mapper<K: Resource, C: HasMetadata>() -> Mapper<C> {
    Arc::new(|obj: &C| owner_key::<K, C>(obj).into_iter().collect())
}
