//! Index buckets: the set of slots whose object has one index value.
//!
//! A slot is the position of an object in the store's slab (a `u32`), so an index entry costs
//! four bytes plus the hash table's overhead, not a copy of the key string. Buckets of one
//! element (unique label values, names) are stored inline without a hash set.

use std::hash::{BuildHasher, Hasher};

use hashbrown::{HashMap, HashSet};

/// Position of an object in the store's slab.
pub(crate) type Slot = u32;

/// A hasher for slot numbers: one multiplication (slots are dense small integers).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct SlotHash;

/// The [`Hasher`] of [`SlotHash`].
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct SlotHasher(u64);

impl Hasher for SlotHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_u32(&mut self, n: u32) {
        self.0 = u64::from(n).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

impl BuildHasher for SlotHash {
    type Hasher = SlotHasher;
    fn build_hasher(&self) -> SlotHasher {
        SlotHasher(0)
    }
}

/// The slots indexed under one value. Never empty: empty buckets are removed.
///
/// Sixteen bytes: unique values (a pod's `instance` label, a custom index by uid) are the
/// common case and pay for no hash set.
#[derive(Clone, Debug)]
pub(crate) enum Bucket {
    One(Slot),
    Many(Box<HashSet<Slot, SlotHash>>),
}

impl Bucket {
    /// Adds `slot` (idempotent).
    pub(crate) fn insert(&mut self, slot: Slot) {
        match self {
            Bucket::One(s) if *s == slot => {}
            Bucket::One(s) => {
                let mut set = HashSet::with_capacity_and_hasher(2, SlotHash);
                set.insert(*s);
                set.insert(slot);
                *self = Bucket::Many(Box::new(set));
            }
            Bucket::Many(set) => {
                set.insert(slot);
            }
        }
    }

    /// Removes `slot`; returns `true` when the bucket became empty and must be dropped.
    pub(crate) fn remove(&mut self, slot: Slot) -> bool {
        match self {
            Bucket::One(s) => *s == slot,
            Bucket::Many(set) => {
                set.remove(&slot);
                match set.len() {
                    0 => true,
                    1 => {
                        let last = *set.iter().next().expect("len is 1");
                        *self = Bucket::One(last);
                        false
                    }
                    _ => false,
                }
            }
        }
    }

    /// Number of slots.
    pub(crate) fn len(&self) -> usize {
        match self {
            Bucket::One(_) => 1,
            Bucket::Many(set) => set.len(),
        }
    }

    /// The slots, in no particular order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = Slot> + '_ {
        let (one, many) = match self {
            Bucket::One(s) => (Some(*s), None),
            Bucket::Many(set) => (None, Some(set.iter().copied())),
        };
        one.into_iter().chain(many.into_iter().flatten())
    }
}

/// One index: value -> bucket of slots.
#[derive(Clone, Debug, Default)]
pub(crate) struct ValueIndex {
    buckets: HashMap<Box<str>, Bucket>,
}

impl ValueIndex {
    /// Indexes `slot` under `value`. Allocates only when `value` is new to the index.
    pub(crate) fn insert(&mut self, value: &str, slot: Slot) {
        match self.buckets.get_mut(value) {
            Some(bucket) => bucket.insert(slot),
            None => {
                self.buckets.insert(value.into(), Bucket::One(slot));
            }
        }
    }

    /// Removes `slot` from `value`'s bucket, dropping the bucket when it becomes empty.
    pub(crate) fn remove(&mut self, value: &str, slot: Slot) {
        if let Some(bucket) = self.buckets.get_mut(value)
            && bucket.remove(slot)
        {
            self.buckets.remove(value);
        }
    }

    /// The bucket of `value`.
    pub(crate) fn get(&self, value: &str) -> Option<&Bucket> {
        self.buckets.get(value)
    }

    /// Every value with its bucket.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&str, &Bucket)> + '_ {
        self.buckets.iter().map(|(v, b)| (&**v, b))
    }

    /// Whether no value is indexed.
    pub(crate) fn is_empty(&self) -> bool {
        self.buckets.is_empty()
    }

    /// Drops every bucket.
    pub(crate) fn clear(&mut self) {
        self.buckets.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_grow_shrink_and_empty() {
        let mut b = Bucket::One(1);
        b.insert(1);
        assert_eq!(b.len(), 1);
        b.insert(2);
        b.insert(3);
        assert_eq!(b.len(), 3);
        assert!(!b.remove(2));
        assert!(!b.remove(3));
        assert!(matches!(b, Bucket::One(1)));
        assert!(b.remove(1));

        let mut idx = ValueIndex::default();
        idx.insert("a", 1);
        idx.insert("a", 2);
        idx.remove("a", 1);
        idx.remove("a", 2);
        idx.remove("missing", 2);
        assert!(idx.is_empty());
    }
}
