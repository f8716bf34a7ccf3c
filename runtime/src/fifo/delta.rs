//! Deltas: what happened to one object while its key waited in the FIFO
//! (client-go's `Delta`, `Deltas`, `DeletedFinalStateUnknown`).

use std::fmt;
use std::sync::Arc;

use crate::store::ObjectKey;
use kinform_core::resource::HasMetadata;

/// The kind of a [`Delta`] (client-go's `DeltaType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DeltaType {
    /// The object was added (watch `ADDED`).
    Added,
    /// The object was modified (watch `MODIFIED`).
    Updated,
    /// The object was deleted (watch `DELETED`, or absent from a relist).
    Deleted,
    /// The object is part of a complete list (`Replace`).
    Replaced,
    /// A periodic resync re-delivers the known object.
    Sync,
}

impl DeltaType {
    /// The name client-go uses (`"Added"`, `"Updated"`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            DeltaType::Added => "Added",
            DeltaType::Updated => "Updated",
            DeltaType::Deleted => "Deleted",
            DeltaType::Replaced => "Replaced",
            DeltaType::Sync => "Sync",
        }
    }
}

impl fmt::Display for DeltaType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A deleted object: either its final state, or a tombstone when the deletion was inferred
/// from a relist and the final state is unknown.
///
/// This replaces client-go's `DeletedFinalStateUnknown`, which handlers must type-assert (and
/// often panic on): here the two cases are variants, and both name the key.
#[derive(Debug)]
pub enum Deleted<K> {
    /// The object's last state, as the watch `DELETED` event carried it.
    Object(Arc<K>),
    /// The object disappeared between two lists; `last_known` is the newest state the FIFO or
    /// the known objects had, if any. It may be stale.
    FinalStateUnknown {
        /// The object's key.
        key: String,
        /// The last known state of the object.
        last_known: Option<Arc<K>>,
    },
}

impl<K> Clone for Deleted<K> {
    fn clone(&self) -> Self {
        match self {
            Deleted::Object(o) => Deleted::Object(Arc::clone(o)),
            Deleted::FinalStateUnknown { key, last_known } => Deleted::FinalStateUnknown {
                key: key.clone(),
                last_known: last_known.clone(),
            },
        }
    }
}

impl<K> Deleted<K> {
    /// The final state, or the last known state of a tombstone.
    pub fn object(&self) -> Option<&Arc<K>> {
        match self {
            Deleted::Object(o) => Some(o),
            Deleted::FinalStateUnknown { last_known, .. } => last_known.as_ref(),
        }
    }

    /// Whether this is a tombstone (the final state is unknown).
    pub fn is_final_state_unknown(&self) -> bool {
        matches!(self, Deleted::FinalStateUnknown { .. })
    }
}

impl<K: HasMetadata> Deleted<K> {
    /// The deleted object's key.
    pub fn key(&self) -> ObjectKey<'_> {
        match self {
            Deleted::Object(o) => ObjectKey::of(&**o),
            Deleted::FinalStateUnknown { key, .. } => ObjectKey::parse(key),
        }
    }
}

/// One change to an object (client-go's `Delta`).
#[derive(Debug)]
pub enum Delta<K> {
    /// The object was added.
    Added(Arc<K>),
    /// The object was updated; this is its new state.
    Updated(Arc<K>),
    /// The object was deleted.
    Deleted(Deleted<K>),
    /// The object is part of a complete list.
    Replaced(Arc<K>),
    /// A resync re-delivers the known object.
    Sync(Arc<K>),
}

impl<K> Clone for Delta<K> {
    fn clone(&self) -> Self {
        match self {
            Delta::Added(o) => Delta::Added(Arc::clone(o)),
            Delta::Updated(o) => Delta::Updated(Arc::clone(o)),
            Delta::Deleted(d) => Delta::Deleted(d.clone()),
            Delta::Replaced(o) => Delta::Replaced(Arc::clone(o)),
            Delta::Sync(o) => Delta::Sync(Arc::clone(o)),
        }
    }
}

impl<K> Delta<K> {
    /// The kind of change.
    pub fn delta_type(&self) -> DeltaType {
        match self {
            Delta::Added(_) => DeltaType::Added,
            Delta::Updated(_) => DeltaType::Updated,
            Delta::Deleted(_) => DeltaType::Deleted,
            Delta::Replaced(_) => DeltaType::Replaced,
            Delta::Sync(_) => DeltaType::Sync,
        }
    }

    /// The object the delta carries (for a tombstone, its last known state, if any).
    pub fn object(&self) -> Option<&Arc<K>> {
        match self {
            Delta::Added(o) | Delta::Updated(o) | Delta::Replaced(o) | Delta::Sync(o) => Some(o),
            Delta::Deleted(d) => d.object(),
        }
    }
}

impl<K: HasMetadata> Delta<K> {
    /// The key of the object the delta is about.
    pub fn key(&self) -> ObjectKey<'_> {
        match self {
            Delta::Added(o) | Delta::Updated(o) | Delta::Replaced(o) | Delta::Sync(o) => {
                ObjectKey::of(&**o)
            }
            Delta::Deleted(d) => d.key(),
        }
    }
}

/// The changes to one key, oldest first (client-go's `Deltas`). Never empty.
#[derive(Debug)]
pub struct Deltas<K> {
    deltas: Vec<Delta<K>>,
    in_initial_list: bool,
}

impl<K> Clone for Deltas<K> {
    fn clone(&self) -> Self {
        Self {
            deltas: self.deltas.clone(),
            in_initial_list: self.in_initial_list,
        }
    }
}

impl<K> Deltas<K> {
    /// Deltas holding one change.
    pub fn new(first: Delta<K>) -> Self {
        Self::with_buffer(Vec::new(), first)
    }

    /// Deltas holding one change, reusing `buffer`'s allocation (it must be empty).
    pub(crate) fn with_buffer(mut buffer: Vec<Delta<K>>, first: Delta<K>) -> Self {
        debug_assert!(buffer.is_empty());
        buffer.push(first);
        Self {
            deltas: buffer,
            in_initial_list: false,
        }
    }

    /// Appends a change, collapsing a deletion that follows a deletion into the more
    /// informative of the two (client-go's `dedupDeltas`/`isDeletionDup`): a tombstone never
    /// replaces an earlier deletion, a real final state replaces an earlier one. The caller
    /// must only push changes of the same key.
    pub fn push(&mut self, delta: Delta<K>) {
        if let (Some(Delta::Deleted(prev)), Delta::Deleted(new)) = (self.deltas.last_mut(), &delta)
        {
            if !new.is_final_state_unknown()
                && let Delta::Deleted(new) = delta
            {
                *prev = new;
            }
            return;
        }
        self.deltas.push(delta);
    }

    /// The changes, oldest first.
    pub fn iter(&self) -> std::slice::Iter<'_, Delta<K>> {
        self.deltas.iter()
    }

    /// The changes, oldest first.
    pub fn as_slice(&self) -> &[Delta<K>] {
        &self.deltas
    }

    /// The newest change (the object's latest known state).
    pub fn newest(&self) -> &Delta<K> {
        self.deltas.last().expect("Deltas are never empty")
    }

    /// The oldest change.
    pub fn oldest(&self) -> &Delta<K> {
        self.deltas.first().expect("Deltas are never empty")
    }

    /// Whether these deltas were popped before the FIFO had synced, i.e. they belong to the
    /// initial list (client-go's `isInInitialList` argument of `PopProcessFunc`).
    pub fn is_in_initial_list(&self) -> bool {
        self.in_initial_list
    }

    pub(crate) fn set_in_initial_list(&mut self, value: bool) {
        self.in_initial_list = value;
    }

    /// The changes, oldest first.
    pub fn into_vec(self) -> Vec<Delta<K>> {
        self.deltas
    }
}

impl<K: HasMetadata> Deltas<K> {
    /// The key all these changes are about.
    pub fn key(&self) -> ObjectKey<'_> {
        self.newest().key()
    }
}

impl<'a, K> IntoIterator for &'a Deltas<K> {
    type Item = &'a Delta<K>;
    type IntoIter = std::slice::Iter<'a, Delta<K>>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}
