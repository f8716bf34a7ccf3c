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
/// common case and pay for no hash set. A value most objects carry (a namespace, `app=web`
/// on a store of web pods) becomes a bit set over the slot numbers once it holds one slot in
/// [`DENSE_MIN_SHARE`] or more: a bit per slot instead of about eight bytes per member, and
/// the slots of new objects (taken in order from the slab's end) set neighbouring bits
/// where a hash set scatters them over its table, one cache miss each (the index inserts
/// were a quarter of the store's time in a burst of 200k new ConfigMaps: docs/performance.md,
/// "A/B measurements").
#[derive(Clone, Debug)]
pub(crate) enum Bucket {
    One(Slot),
    Many(Box<HashSet<Slot, SlotHash>>),
    Dense(Box<SlotBits>),
}

/// A hash set becomes a bit set when it is about to grow and at least one slot in this many
/// below its highest belongs to it (the bit set then takes at most eight bytes per member).
const DENSE_MIN_SHARE: usize = 64;

/// A bit set becomes a hash set again when fewer than one slot in this many belongs to it
/// (four times sparser than [`DENSE_MIN_SHARE`], so that no bucket flips back and forth).
const DENSE_MAX_SPARSITY: usize = 256;

/// Hash sets this small stay hash sets.
const DENSE_MIN_LEN: usize = 64;

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
                if set.len() >= DENSE_MIN_LEN && set.len() == set.capacity() {
                    let highest = set.iter().copied().chain([slot]).max().unwrap_or(slot);
                    if (highest as usize) < set.len() * DENSE_MIN_SHARE {
                        let mut bits = SlotBits::default();
                        for &s in set.iter().chain([&slot]) {
                            bits.insert(s);
                        }
                        *self = Bucket::Dense(Box::new(bits));
                        return;
                    }
                }
                set.insert(slot);
            }
            Bucket::Dense(bits) => bits.insert(slot),
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
            Bucket::Dense(bits) => {
                bits.remove(slot);
                if bits.len == 0 {
                    return true;
                }
                if bits.len * DENSE_MAX_SPARSITY < bits.words.len() * 64 {
                    *self = match bits.len {
                        1 => Bucket::One(bits.iter().next().expect("len is 1")),
                        _ => {
                            let mut set = HashSet::with_capacity_and_hasher(bits.len, SlotHash);
                            set.extend(bits.iter());
                            Bucket::Many(Box::new(set))
                        }
                    };
                }
                false
            }
        }
    }

    /// Number of slots.
    pub(crate) fn len(&self) -> usize {
        match self {
            Bucket::One(_) => 1,
            Bucket::Many(set) => set.len(),
            Bucket::Dense(bits) => bits.len,
        }
    }

    /// The slots, in no particular order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = Slot> + '_ {
        let (one, many, dense) = match self {
            Bucket::One(s) => (Some(*s), None, None),
            Bucket::Many(set) => (None, Some(set.iter().copied()), None),
            Bucket::Dense(bits) => (None, None, Some(bits.iter())),
        };
        one.into_iter()
            .chain(many.into_iter().flatten())
            .chain(dense.into_iter().flatten())
    }
}

/// A set of slots as one bit per slot number, up to the highest member.
#[derive(Clone, Debug, Default)]
pub(crate) struct SlotBits {
    /// Bit `s % 64` of word `s / 64` is set for member `s`; the last word is never zero.
    words: Vec<u64>,
    len: usize,
}

impl SlotBits {
    fn insert(&mut self, slot: Slot) {
        let (word, bit) = (slot as usize / 64, 1u64 << (slot % 64));
        if word >= self.words.len() {
            self.words.resize(word + 1, 0);
        }
        if self.words[word] & bit == 0 {
            self.words[word] |= bit;
            self.len += 1;
        }
    }

    fn remove(&mut self, slot: Slot) {
        let (word, bit) = (slot as usize / 64, 1u64 << (slot % 64));
        if let Some(w) = self.words.get_mut(word)
            && *w & bit != 0
        {
            *w &= !bit;
            self.len -= 1;
            while self.words.last() == Some(&0) {
                self.words.pop();
            }
        }
    }

    /// The members in increasing order.
    fn iter(&self) -> impl Iterator<Item = Slot> + '_ {
        self.words.iter().enumerate().flat_map(|(i, &w)| {
            let base = (i * 64) as Slot;
            std::iter::successors((w != 0).then_some(w), |&w| {
                let rest = w & (w - 1);
                (rest != 0).then_some(rest)
            })
            .map(move |w| base + w.trailing_zeros())
        })
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

    /// Inserts and removes `ops` (true: insert) into a bucket and a `BTreeSet`; the bucket
    /// must have the same length after every step and the same slots at the end. Returns the
    /// bucket (`None` once emptied).
    fn run(ops: &[(bool, Slot)]) -> Option<Bucket> {
        let mut bucket: Option<Bucket> = None;
        let mut model = std::collections::BTreeSet::new();
        for &(add, slot) in ops {
            if add {
                model.insert(slot);
                match &mut bucket {
                    Some(b) => b.insert(slot),
                    None => bucket = Some(Bucket::One(slot)),
                }
            } else if model.remove(&slot) {
                let b = bucket.as_mut().expect("a member's bucket exists");
                if b.remove(slot) {
                    bucket = None;
                }
            }
            assert_eq!(bucket.as_ref().map_or(0, Bucket::len), model.len());
        }
        let mut got: Vec<Slot> = bucket.iter().flat_map(Bucket::iter).collect();
        got.sort_unstable();
        assert_eq!(got, model.into_iter().collect::<Vec<_>>());
        bucket
    }

    #[test]
    fn a_value_most_slots_carry_becomes_a_bit_set_and_a_sparse_one_a_hash_set_again() {
        // New objects take slots 0, 1, 2, ...: every one carries the value.
        let fill: Vec<(bool, Slot)> = (0..10_000).map(|s| (true, s)).collect();
        assert!(matches!(run(&fill), Some(Bucket::Dense(_))));
        // One slot in a thousand carries it: it stays a hash set.
        let sparse: Vec<(bool, Slot)> = (0..1_000).map(|s| (true, s * 1_000)).collect();
        assert!(matches!(run(&sparse), Some(Bucket::Many(_))));
        // Most members leave: back to a hash set, then to one slot.
        let mut ops = fill.clone();
        ops.extend((0..9_990).map(|s| (false, s)));
        assert!(matches!(run(&ops), Some(Bucket::Many(_))));
        ops.extend((9_990..9_999).map(|s| (false, s)));
        assert!(matches!(run(&ops), Some(Bucket::One(9_999))));
    }

    proptest::proptest! {
        #[test]
        fn a_bucket_holds_exactly_its_slots(
            ops in proptest::collection::vec((proptest::bool::weighted(0.7), 0u32..1_000), 0..600)
        ) {
            run(&ops);
        }
    }
}
