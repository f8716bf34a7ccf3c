//! The DeltaFIFO's state behind its lock, and the client-go algorithms over it
//! (`queueActionLocked`, `Delete`, `Replace`, `Resync`, `Pop`, `addIfNotPresent`).
//!
//! Like the store, no key string is kept: queued `Deltas` live in a slab, the key table holds
//! slot numbers hashed through the key of each entry's newest delta (the hash is kept per
//! entry, so popping and rehashing never touch the objects), and the queue is a ring of slot
//! numbers in order of first arrival. Delta buffers of popped keys are recycled, so a
//! steady add/pop stream allocates nothing.

use std::collections::VecDeque;
use std::sync::Arc;

use hashbrown::{DefaultHashBuilder, HashTable};

use super::delta::{Deleted, Delta, Deltas};
use super::known::KnownObjects;
use crate::consistency::{Watermark, parse_resource_version};
use crate::store::{ObjectKey, hash_key};
use kinform_core::resource::HasMetadata;

/// Recycled delta buffers kept at most.
const POOL_MAX: usize = 256;
/// Recycled delta buffers larger than this are freed instead.
const POOL_BUFFER_MAX: usize = 16;

fn key_at<K: HasMetadata>(entries: &[Option<Deltas<K>>], slot: u32) -> ObjectKey<'_> {
    entries[slot as usize]
        .as_ref()
        .expect("the key table only refers to queued entries")
        .key()
}

/// Everything the FIFO's lock protects.
pub(crate) struct State<K> {
    hasher: DefaultHashBuilder,
    table: HashTable<u32>,
    entries: Vec<Option<Deltas<K>>>,
    /// The key hash of each entry, so that popping and rehashing do not touch the objects.
    hashes: Vec<u64>,
    free: Vec<u32>,
    queue: VecDeque<u32>,
    pool: Vec<Vec<Delta<K>>>,
    /// Whether Add/Update/Delete/Replace has been called (client-go's `populated`).
    populated: bool,
    /// Pops left before the first Replace's population is delivered.
    initial_population: usize,
    pub(crate) closed: bool,
    /// The consumer's watermark, when the FIFO tracks how far the consumer has caught up.
    watermark: Option<Watermark>,
    /// The resourceVersion of the last event, list or bookmark pushed (0: none).
    pushed: u64,
    /// Per slot: `pushed` when the entry's key entered the queue, so that everything at or
    /// below the front entry's value has been popped.
    since: Vec<u64>,
    /// A requeued entry broke the queue's order of versions: progress is held until the
    /// queue is empty once.
    stalled: bool,
}

impl<K> Default for State<K> {
    fn default() -> Self {
        Self {
            hasher: DefaultHashBuilder::default(),
            table: HashTable::new(),
            entries: Vec::new(),
            hashes: Vec::new(),
            free: Vec::new(),
            queue: VecDeque::new(),
            pool: Vec::new(),
            populated: false,
            initial_population: 0,
            closed: false,
            watermark: None,
            pushed: 0,
            since: Vec::new(),
            stalled: false,
        }
    }
}

impl<K: HasMetadata> State<K> {
    /// A state that tracks how far its consumer has caught up in `watermark`.
    pub(crate) fn with_watermark(watermark: Watermark) -> Self {
        Self {
            watermark: Some(watermark),
            ..Self::default()
        }
    }

    /// Notes that a change at `resource_version` was pushed (when tracking): the entries
    /// that enter the queue after it start from there.
    pub(crate) fn note_pushed(&mut self, resource_version: &str) {
        let rv = self.tracked_version(resource_version);
        self.set_pushed(rv);
    }

    /// The version to note for `resource_version`, when tracking and comparable (an
    /// incomparable one is counted).
    fn tracked_version(&self, resource_version: &str) -> Option<u64> {
        let w = self.watermark.as_ref()?;
        let rv = parse_resource_version(resource_version);
        if rv.is_none() {
            w.count_incomparable();
        }
        rv
    }

    fn set_pushed(&mut self, rv: Option<u64>) {
        if let Some(rv) = rv {
            self.pushed = self.pushed.max(rv);
        }
    }

    /// How far the consumer has caught up once it has applied what was popped: the version
    /// pushed last when the queue is empty, else the one pushed just before the front
    /// entry's oldest delta (everything before it was in entries popped earlier, as a key
    /// joins the queue behind every key pushed before it). Advances the watermark to it.
    /// Called under the lock after each pop and each push that may leave the queue empty.
    pub(crate) fn publish_progress(&mut self) {
        let Some(w) = &self.watermark else { return };
        let progress = match self.queue.front() {
            None => {
                self.stalled = false;
                self.pushed
            }
            Some(_) if self.stalled => 0,
            Some(&slot) => self.since[slot as usize],
        };
        if progress > 0 {
            w.advance_to(progress);
        }
    }

    /// A watch bookmark: nothing up to `resource_version` is left to come.
    pub(crate) fn bookmark(&mut self, resource_version: &str) {
        self.note_pushed(resource_version);
        self.publish_progress();
    }

    /// Number of queued keys.
    pub(crate) fn len(&self) -> usize {
        self.queue.len()
    }

    /// client-go's `hasSynced_locked`.
    pub(crate) fn has_synced(&self) -> bool {
        self.populated && self.initial_population == 0
    }

    /// The queued keys, in queue order.
    pub(crate) fn keys(&self) -> Vec<String> {
        self.queue
            .iter()
            .map(|&s| key_at(&self.entries, s).to_key())
            .collect()
    }

    /// The queued deltas of `key`.
    pub(crate) fn get(&self, key: ObjectKey<'_>) -> Option<&Deltas<K>> {
        self.find(key).map(|s| {
            self.entries[s as usize]
                .as_ref()
                .expect("found entries are queued")
        })
    }

    fn find(&self, key: ObjectKey<'_>) -> Option<u32> {
        let hash = hash_key(&self.hasher, key);
        let entries = &self.entries;
        self.table
            .find(hash, |&s| key_at(entries, s) == key)
            .copied()
    }

    /// Puts a new key's deltas at the back of the queue.
    fn insert_new(&mut self, hash: u64, deltas: Deltas<K>) -> u32 {
        let slot = match self.free.pop() {
            Some(slot) => {
                self.entries[slot as usize] = Some(deltas);
                self.hashes[slot as usize] = hash;
                self.since[slot as usize] = self.pushed;
                slot
            }
            None => {
                let slot = u32::try_from(self.entries.len())
                    .expect("a DeltaFIFO holds at most u32::MAX keys");
                self.entries.push(Some(deltas));
                self.hashes.push(hash);
                self.since.push(self.pushed);
                slot
            }
        };
        let hashes = &self.hashes;
        self.table
            .insert_unique(hash, slot, |&s| hashes[s as usize]);
        self.queue.push_back(slot);
        slot
    }

    /// client-go's `queueActionLocked`: appends `delta` to its key's deltas (deduplicating
    /// deletions), queueing the key at the back if it was not queued. Returns the entry's slot
    /// and whether the key is new to the queue.
    pub(crate) fn queue_action(&mut self, delta: Delta<K>) -> (u32, bool) {
        let key = delta.key();
        let hash = hash_key(&self.hasher, key);
        let entries = &self.entries;
        if let Some(&slot) = self.table.find(hash, |&s| key_at(entries, s) == key) {
            self.entries[slot as usize]
                .as_mut()
                .expect("found entries are queued")
                .push(delta);
            return (slot, false);
        }
        let buffer = self.pool.pop().unwrap_or_default();
        let slot = self.insert_new(hash, Deltas::with_buffer(buffer, delta));
        (slot, true)
    }

    /// client-go's `Add`/`Update`: marks the FIFO populated and queues the delta.
    pub(crate) fn add(&mut self, delta: Delta<K>) -> bool {
        self.populated = true;
        // Noted after queueing: a new entry starts from the version pushed before it.
        let rv = delta
            .object()
            .and_then(|o| self.tracked_version(o.resource_version()));
        let new = self.queue_action(delta).1;
        self.set_pushed(rv);
        new
    }

    /// client-go's `Delete`: ignored when the key is neither queued nor known.
    pub(crate) fn delete(&mut self, obj: Arc<K>, known: Option<&dyn KnownObjects<K>>) -> bool {
        self.populated = true;
        let key = ObjectKey::of(&*obj);
        if self.find(key).is_none() && known.is_none_or(|k| k.get_key(key).is_none()) {
            // Nothing to apply, and nothing older left behind it.
            self.note_pushed(obj.resource_version());
            self.publish_progress();
            return false;
        }
        let rv = self.tracked_version(obj.resource_version());
        let new = self.queue_action(Delta::Deleted(Deleted::Object(obj))).1;
        self.set_pushed(rv);
        new
    }

    /// client-go's `Replace` (with `EmitDeltaTypeReplaced`): a `Replaced` delta per listed
    /// object, then a tombstone for every queued or known key absent from the list, carrying
    /// the last known state. The first call sets the initial population. Returns the number
    /// of keys new to the queue.
    pub(crate) fn replace(
        &mut self,
        list: Vec<Arc<K>>,
        resource_version: &str,
        known: Option<&dyn KnownObjects<K>>,
    ) -> usize {
        let new_keys = self.replace_entries(list, known);
        self.note_pushed(resource_version);
        // An empty list of an empty cache leaves nothing to pop.
        self.publish_progress();
        new_keys
    }

    fn replace_entries(&mut self, list: Vec<Arc<K>>, known: Option<&dyn KnownObjects<K>>) -> usize {
        let mut listed = vec![0u64; self.entries.len().div_ceil(64)];
        let mut distinct = 0;
        let mut new_keys = 0;
        for obj in list {
            let (slot, new) = self.queue_action(Delta::Replaced(obj));
            new_keys += usize::from(new);
            let (word, bit) = (slot as usize / 64, slot % 64);
            if word >= listed.len() {
                listed.resize(word + 1, 0);
            }
            if listed[word] & (1 << bit) == 0 {
                listed[word] |= 1 << bit;
                distinct += 1;
            }
        }
        let is_listed = |slot: u32| {
            listed
                .get(slot as usize / 64)
                .is_some_and(|w| w & (1 << (slot % 64)) != 0)
        };

        // Queued keys absent from the list: the watch missed their deletion.
        let mut queued_deletions = 0;
        for i in 0..self.queue.len() {
            let slot = self.queue[i];
            if is_listed(slot) {
                continue;
            }
            let deltas = self.entries[slot as usize]
                .as_mut()
                .expect("queued entries are present");
            let last_known = deltas.newest().object().cloned();
            let key = deltas.key().to_key();
            deltas.push(Delta::Deleted(Deleted::FinalStateUnknown {
                key,
                last_known,
            }));
            queued_deletions += 1;
        }

        // Known keys absent from the list and not queued (every listed key is queued now).
        if let Some(known) = known {
            for obj in known.list() {
                let key = ObjectKey::of(&*obj);
                if self.find(key).is_some() {
                    continue;
                }
                let key = key.to_key();
                let tombstone = Deleted::FinalStateUnknown {
                    key,
                    last_known: Some(obj),
                };
                self.queue_action(Delta::Deleted(tombstone));
                new_keys += 1;
                queued_deletions += 1;
            }
        }

        if !self.populated {
            self.populated = true;
            self.initial_population = distinct + queued_deletions;
        }
        new_keys
    }

    /// client-go's `Resync`: a `Sync` delta for every known key without pending deltas (a
    /// queued key's known state is older than what is queued: syncing it would go back in
    /// time). Returns the number of keys queued.
    pub(crate) fn resync(&mut self, known: Option<&dyn KnownObjects<K>>) -> usize {
        let Some(known) = known else { return 0 };
        let mut queued = 0;
        for obj in known.list() {
            if self.find(ObjectKey::of(&*obj)).is_some() {
                continue;
            }
            self.queue_action(Delta::Sync(obj));
            queued += 1;
        }
        queued
    }

    /// Takes the key at the front of the queue with its deltas (client-go's `Pop` before
    /// `process`): marks whether it belongs to the initial list and counts it off the
    /// initial population.
    pub(crate) fn pop_front(&mut self) -> Option<Deltas<K>> {
        let slot = self.queue.pop_front()?;
        let mut deltas = self.entries[slot as usize]
            .take()
            .expect("queued entries are present");
        self.free.push(slot);
        let hash = self.hashes[slot as usize];
        if let Ok(entry) = self.table.find_entry(hash, |&s| s == slot) {
            entry.remove();
        }
        deltas.set_in_initial_list(!self.has_synced());
        self.initial_population = self.initial_population.saturating_sub(1);
        Some(deltas)
    }

    /// client-go's `addIfNotPresent`: queues processed-but-failed deltas again at the back,
    /// unless the key was queued meanwhile (then the newer deltas win). Returns whether the
    /// key was queued.
    pub(crate) fn requeue(&mut self, deltas: Deltas<K>) -> bool {
        self.populated = true;
        // Its deltas are older than the entries it goes behind.
        self.stalled = true;
        let key = deltas.key();
        let hash = hash_key(&self.hasher, key);
        let entries = &self.entries;
        if self
            .table
            .find(hash, |&s| key_at(entries, s) == key)
            .is_some()
        {
            self.recycle(deltas);
            return false;
        }
        self.insert_new(hash, deltas);
        true
    }

    /// Keeps the buffer of processed deltas for a future key.
    pub(crate) fn recycle(&mut self, deltas: Deltas<K>) {
        let mut buffer = deltas.into_vec();
        if self.pool.len() < POOL_MAX && buffer.capacity() <= POOL_BUFFER_MAX {
            buffer.clear();
            self.pool.push(buffer);
        }
    }
}
