//! Event handlers: what an informer tells its subscribers (client-go's
//! `ResourceEventHandler`).

use std::fmt;
use std::sync::Arc;

use crate::fifo::Deleted;
use crate::store::ObjectKey;
use kinform_core::resource::HasMetadata;

/// Receives an informer's notifications. Methods run on the handler's own task, one at a
/// time, in the order of the object's changes; they should be short (typically: put the key
/// into a workqueue). The objects are shared with the cache: read-only by construction.
pub trait EventHandler<K>: Send + Sync + 'static {
    /// An object appeared. `is_in_initial_list` is true for objects of the initial list (and
    /// for the cached objects replayed to a handler added after start).
    fn on_add(&self, obj: &Arc<K>, is_in_initial_list: bool) {
        let _ = (obj, is_in_initial_list);
    }
    /// An object changed from `old` to `new`; on resync both have the same resourceVersion.
    fn on_update(&self, old: &Arc<K>, new: &Arc<K>) {
        let _ = (old, new);
    }
    /// An object was deleted: its final state, or a tombstone when the deletion was seen
    /// only by a relist.
    fn on_delete(&self, deleted: &Deleted<K>) {
        let _ = deleted;
    }
}

type AddFn<K> = Box<dyn Fn(&Arc<K>, bool) + Send + Sync>;
type UpdateFn<K> = Box<dyn Fn(&Arc<K>, &Arc<K>) + Send + Sync>;
type DeleteFn<K> = Box<dyn Fn(&Deleted<K>) + Send + Sync>;

/// An [`EventHandler`] from closures (client-go's `ResourceEventHandlerFuncs`); the ones not
/// set do nothing.
#[must_use]
pub struct EventHandlerFns<K> {
    add: Option<AddFn<K>>,
    update: Option<UpdateFn<K>>,
    delete: Option<DeleteFn<K>>,
}

impl<K> Default for EventHandlerFns<K> {
    fn default() -> Self {
        Self {
            add: None,
            update: None,
            delete: None,
        }
    }
}

impl<K> fmt::Debug for EventHandlerFns<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EventHandlerFns")
            .field("add", &self.add.is_some())
            .field("update", &self.update.is_some())
            .field("delete", &self.delete.is_some())
            .finish()
    }
}

impl<K> EventHandlerFns<K> {
    /// A handler that does nothing yet.
    pub fn new() -> Self {
        Self::default()
    }
    /// Sets the add callback.
    pub fn on_add(mut self, f: impl Fn(&Arc<K>, bool) + Send + Sync + 'static) -> Self {
        self.add = Some(Box::new(f));
        self
    }
    /// Sets the update callback.
    pub fn on_update(mut self, f: impl Fn(&Arc<K>, &Arc<K>) + Send + Sync + 'static) -> Self {
        self.update = Some(Box::new(f));
        self
    }
    /// Sets the delete callback.
    pub fn on_delete(mut self, f: impl Fn(&Deleted<K>) + Send + Sync + 'static) -> Self {
        self.delete = Some(Box::new(f));
        self
    }
}

impl<K: Send + Sync + 'static> EventHandler<K> for EventHandlerFns<K> {
    fn on_add(&self, obj: &Arc<K>, is_in_initial_list: bool) {
        if let Some(f) = &self.add {
            f(obj, is_in_initial_list);
        }
    }
    fn on_update(&self, old: &Arc<K>, new: &Arc<K>) {
        if let Some(f) = &self.update {
            f(old, new);
        }
    }
    fn on_delete(&self, deleted: &Deleted<K>) {
        if let Some(f) = &self.delete {
            f(deleted);
        }
    }
}

/// One notification waiting in a handler's buffer.
#[derive(Debug)]
pub enum Notification<K> {
    /// `on_add`.
    Add {
        /// The object.
        obj: Arc<K>,
        /// Whether it belongs to the initial list.
        initial: bool,
    },
    /// `on_update`.
    Update {
        /// The state the handler saw last.
        old: Arc<K>,
        /// The new state.
        new: Arc<K>,
    },
    /// `on_delete`.
    Delete(Deleted<K>),
}

impl<K> Clone for Notification<K> {
    fn clone(&self) -> Self {
        match self {
            Notification::Add { obj, initial } => Notification::Add {
                obj: Arc::clone(obj),
                initial: *initial,
            },
            Notification::Update { old, new } => Notification::Update {
                old: Arc::clone(old),
                new: Arc::clone(new),
            },
            Notification::Delete(d) => Notification::Delete(d.clone()),
        }
    }
}

impl<K> Notification<K> {
    /// Whether this is an add of the initial list.
    pub fn is_initial_add(&self) -> bool {
        matches!(self, Notification::Add { initial: true, .. })
    }
}

impl<K> Notification<K> {
    /// The object this notification may have been the last holder of, once delivered: an
    /// update's old state, a deletion's last state (an add's object is in the cache).
    pub(crate) fn into_released(self) -> Option<Arc<K>> {
        match self {
            Notification::Add { .. } => None,
            Notification::Update { old, .. } => Some(old),
            Notification::Delete(Deleted::Object(o)) => Some(o),
            Notification::Delete(Deleted::FinalStateUnknown { last_known, .. }) => last_known,
        }
    }
}

impl<K: HasMetadata> Notification<K> {
    /// The key of the object this notification is about.
    pub(crate) fn key(&self) -> ObjectKey<'_> {
        match self {
            Notification::Add { obj, .. } | Notification::Update { new: obj, .. } => {
                ObjectKey::of(&**obj)
            }
            Notification::Delete(d) => d.key(),
        }
    }
}

impl<K: 'static> Notification<K> {
    /// Calls the matching method of `handler`.
    pub fn deliver(&self, handler: &dyn EventHandler<K>) {
        match self {
            Notification::Add { obj, initial } => handler.on_add(obj, *initial),
            Notification::Update { old, new } => handler.on_update(old, new),
            Notification::Delete(d) => handler.on_delete(d),
        }
    }
}
