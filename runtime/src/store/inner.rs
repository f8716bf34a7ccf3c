//! The store's state behind its lock: a slab of objects, a hash table from key to slot, and
//! the indexes.
//!
//! No key string is stored: the table holds slot numbers and compares them through the
//! [`ObjectKey`] of the object in the slot. Each table entry also keeps 32 bits of its key's
//! hash, so that growing the table (and rejecting most non-matching entries) does not reach
//! into the objects: rehashing by key would visit every cached object once per growth. The
//! per-object overhead is the slab entry (one pointer), one table entry (eight bytes) and one
//! index entry per index value (four bytes).

use std::hash::BuildHasher;
use std::sync::Arc;

use hashbrown::{DefaultHashBuilder, HashTable};

use super::IndexFn;
use super::bucket::Slot;
use super::index::Indexes;
use kinform_core::ObjectKey;
use kinform_core::resource::HasMetadata;

/// Hashes a key; the same for a key string and for an object with that key.
pub(crate) fn hash_key(hasher: &DefaultHashBuilder, key: ObjectKey<'_>) -> u64 {
    hasher.hash_one(key)
}

/// A key table entry: the slot and 32 bits of its key's hash.
#[derive(Clone, Copy, Debug)]
struct Entry {
    slot: Slot,
    hash: u32,
}

/// The 32 bits a table entry keeps of a key's hash.
fn fold(hash: u64) -> u32 {
    (hash ^ (hash >> 32)) as u32
}

/// The table's hash of an entry with `hash` (both halves carry the folded bits: hashbrown
/// takes its bucket from the low bits and its tag from the high ones).
fn spread(hash: u32) -> u64 {
    u64::from(hash) | (u64::from(hash) << 32)
}

fn key_at<K: HasMetadata>(slots: &[Option<Arc<K>>], slot: Slot) -> ObjectKey<'_> {
    ObjectKey::of(
        slots[slot as usize]
            .as_deref()
            .expect("the key table only refers to occupied slots"),
    )
}

/// Everything the store's lock protects.
pub(crate) struct Inner<K> {
    hasher: DefaultHashBuilder,
    table: HashTable<Entry>,
    slots: Vec<Option<Arc<K>>>,
    free: Vec<Slot>,
    pub(crate) indexes: Indexes<K>,
    pub(crate) resource_version: String,
}

impl<K> Default for Inner<K> {
    fn default() -> Self {
        Self {
            hasher: DefaultHashBuilder::default(),
            table: HashTable::new(),
            slots: Vec::new(),
            free: Vec::new(),
            indexes: Indexes::default(),
            resource_version: String::new(),
        }
    }
}

impl<K: HasMetadata> Inner<K> {
    /// Number of stored objects.
    pub(crate) fn len(&self) -> usize {
        self.table.len()
    }

    fn find(&self, key: ObjectKey<'_>) -> Option<Slot> {
        let hash = fold(hash_key(&self.hasher, key));
        let slots = &self.slots;
        self.table
            .find(spread(hash), |e| {
                e.hash == hash && key_at(slots, e.slot) == key
            })
            .map(|e| e.slot)
    }

    /// The object stored under `key`.
    pub(crate) fn get(&self, key: ObjectKey<'_>) -> Option<&Arc<K>> {
        self.find(key).map(|s| self.object(s))
    }

    /// The object in an occupied slot.
    pub(crate) fn object(&self, slot: Slot) -> &Arc<K> {
        self.slots[slot as usize]
            .as_ref()
            .expect("indexes only refer to occupied slots")
    }

    /// Every stored object with its slot.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (Slot, &Arc<K>)> + '_ {
        self.slots
            .iter()
            .enumerate()
            .filter_map(|(i, o)| o.as_ref().map(|o| (i as Slot, o)))
    }

    /// Adds or replaces the object with `obj`'s key; returns its slot and the object it
    /// replaced.
    pub(crate) fn upsert(&mut self, obj: Arc<K>) -> (Slot, Option<Arc<K>>) {
        let key = ObjectKey::of(&*obj);
        let hash = fold(hash_key(&self.hasher, key));
        let slots = &self.slots;
        if let Some(&Entry { slot, .. }) = self.table.find(spread(hash), |e| {
            e.hash == hash && key_at(slots, e.slot) == key
        }) {
            let cell = &mut self.slots[slot as usize];
            let old = cell.as_deref().expect("found slots are occupied");
            self.indexes.update(slot, old, &obj);
            return (slot, cell.replace(obj));
        }
        let slot = match self.free.pop() {
            Some(slot) => {
                self.slots[slot as usize] = Some(obj);
                slot
            }
            None => {
                let slot = Slot::try_from(self.slots.len())
                    .expect("a store holds at most u32::MAX objects");
                self.slots.push(Some(obj));
                slot
            }
        };
        self.table
            .insert_unique(spread(hash), Entry { slot, hash }, |e| spread(e.hash));
        let obj = self.slots[slot as usize].as_deref().expect("just stored");
        self.indexes.insert(slot, obj);
        (slot, None)
    }

    /// Adds a custom index over the objects already stored.
    pub(crate) fn add_index(&mut self, name: String, func: IndexFn<K>) {
        let existing = self
            .slots
            .iter()
            .enumerate()
            .filter_map(|(i, o)| o.as_deref().map(|o| (i as Slot, o)));
        self.indexes.add_custom(name, func, existing);
    }

    /// Removes the object stored under `key`.
    pub(crate) fn remove(&mut self, key: ObjectKey<'_>) -> Option<Arc<K>> {
        let slot = self.find(key)?;
        Some(self.remove_slot(slot))
    }

    /// Removes the object in an occupied slot.
    fn remove_slot(&mut self, slot: Slot) -> Arc<K> {
        let hash = fold(hash_key(&self.hasher, key_at(&self.slots, slot)));
        if let Ok(entry) = self.table.find_entry(spread(hash), |e| e.slot == slot) {
            entry.remove();
        }
        let obj = self.slots[slot as usize]
            .take()
            .expect("removed slots are occupied");
        self.indexes.remove(slot, &obj);
        self.free.push(slot);
        obj
    }

    /// Makes the content exactly `objs`, in place: objects with a key already present are
    /// updated (touching only the index buckets that change), new keys are added, and keys
    /// absent from `objs` are removed. Returns the objects that left the store so that the
    /// caller drops them after releasing the lock.
    pub(crate) fn replace(&mut self, objs: Vec<Arc<K>>, resource_version: String) -> Vec<Arc<K>> {
        let mut garbage = Vec::new();
        if objs.is_empty() || self.table.is_empty() {
            // Fast paths: nothing to keep from the old content.
            garbage.extend(self.slots.drain(..).flatten());
            self.table.clear();
            self.free.clear();
            self.indexes.clear();
            self.table.reserve(objs.len(), |e| spread(e.hash));
            self.slots.reserve(objs.len());
            for obj in objs {
                if let (_, Some(old)) = self.upsert(obj) {
                    garbage.push(old);
                }
            }
        } else {
            let mut seen = vec![0u64; self.slots.len().div_ceil(64)];
            for obj in objs {
                let (slot, old) = self.upsert(obj);
                let (word, bit) = (slot as usize / 64, slot % 64);
                if word >= seen.len() {
                    seen.resize(word + 1, 0);
                }
                seen[word] |= 1 << bit;
                garbage.extend(old);
            }
            for slot in 0..self.slots.len() {
                let marked = seen
                    .get(slot / 64)
                    .is_some_and(|w| w & (1 << (slot % 64)) != 0);
                if !marked && self.slots[slot].is_some() {
                    garbage.push(self.remove_slot(slot as Slot));
                }
            }
        }
        self.resource_version = resource_version;
        garbage
    }
}
