//! The synchronous state machine behind [`Queue`](super::Queue).
//!
//! client-go keeps three structures: `queue` (a FIFO of items to hand out), `dirty` (items that
//! need processing) and `processing` (items handed to a worker and not yet done). Here the
//! three are one table of *slots*: each distinct item lives once, in a slot that carries its
//! `dirty` and `processing` flags (and its metric timestamps), and the FIFO holds slot indices.
//! So an add moves the item into the table (no clone), a get clones it once for the caller and
//! involves no hashing, and a done removes it with a single lookup. A slot exists exactly while
//! its item is dirty or processing; the FIFO holds a slot iff it is dirty and not processing.

use std::collections::VecDeque;
use std::hash::{BuildHasher, Hash};

use hashbrown::{DefaultHashBuilder, HashTable};
use tokio::time::Instant;

use super::metrics::QueueMetrics;

struct Slot<T> {
    item: T,
    dirty: bool,
    processing: bool,
    added: Option<Instant>,
    started: Option<Instant>,
}

/// What an add did, so that the caller knows whether to wake a getter.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Added {
    /// The item was queued: a waiting getter can take it.
    Queued,
    /// Dropped (duplicate of a dirty item, or marked dirty while processing, or shut down).
    NotQueued,
}

/// What a done did.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Finished {
    /// The item was not being processed: nothing happened.
    NotProcessing,
    /// Processing ended; the item had been re-added meanwhile and is queued again.
    Requeued,
    /// Processing ended and the item left the queue.
    Removed,
}

pub(crate) struct State<T> {
    hasher: DefaultHashBuilder,
    index: HashTable<usize>,
    slots: Vec<Option<Slot<T>>>,
    free: Vec<usize>,
    queue: VecDeque<usize>,
    processing: usize,
    pub(crate) shutting_down: bool,
    pub(crate) drain: bool,
    /// Getters registered on the wake-up list and not yet woken by us.
    pub(crate) waiting_getters: usize,
}

impl<T> State<T> {
    /// Items waiting to be handed out (client-go `Len`).
    pub(crate) fn len(&self) -> usize {
        self.queue.len()
    }

    /// Items handed out and not yet done.
    pub(crate) fn processing(&self) -> usize {
        self.processing
    }
}

impl<T: Hash + Eq + Clone> State<T> {
    pub(crate) fn new() -> Self {
        Self {
            hasher: DefaultHashBuilder::default(),
            index: HashTable::new(),
            slots: Vec::new(),
            free: Vec::new(),
            queue: VecDeque::new(),
            processing: 0,
            shutting_down: false,
            drain: false,
            waiting_getters: 0,
        }
    }

    fn slot_mut(slots: &mut [Option<Slot<T>>], i: usize) -> &mut Slot<T> {
        slots[i]
            .as_mut()
            .expect("workqueue invariant: indexed slots are occupied")
    }

    pub(crate) fn add(&mut self, item: T, metrics: Option<&QueueMetrics>) -> Added {
        if self.shutting_down {
            return Added::NotQueued;
        }
        let Self {
            hasher,
            index,
            slots,
            free,
            queue,
            ..
        } = self;
        let hash = hasher.hash_one(&item);
        let found = index
            .find(hash, |&i| slots[i].as_ref().is_some_and(|s| s.item == item))
            .copied();
        if let Some(i) = found {
            let slot = Self::slot_mut(slots, i);
            if slot.dirty {
                return Added::NotQueued;
            }
            slot.dirty = true;
            if let Some(m) = metrics {
                m.add(&mut slot.added);
            }
            if slot.processing {
                // Queued again by `done`.
                return Added::NotQueued;
            }
            // Unreachable while the invariant holds (a slot that is neither dirty nor
            // processing is removed); queue it rather than lose it.
            queue.push_back(i);
            return Added::Queued;
        }
        let mut slot = Slot {
            item,
            dirty: true,
            processing: false,
            added: None,
            started: None,
        };
        if let Some(m) = metrics {
            m.add(&mut slot.added);
        }
        let i = match free.pop() {
            Some(i) => {
                slots[i] = Some(slot);
                i
            }
            None => {
                slots.push(Some(slot));
                slots.len() - 1
            }
        };
        index.insert_unique(hash, i, |&j| match &slots[j] {
            Some(s) => hasher.hash_one(&s.item),
            None => 0,
        });
        queue.push_back(i);
        Added::Queued
    }

    /// Hands out the next item, marking it processing (client-go `Get` once an item is there).
    pub(crate) fn pop(&mut self, metrics: Option<&QueueMetrics>) -> Option<T> {
        let i = self.queue.pop_front()?;
        let slot = Self::slot_mut(&mut self.slots, i);
        slot.dirty = false;
        slot.processing = true;
        if let Some(m) = metrics {
            m.get(&mut slot.added, &mut slot.started);
        }
        self.processing += 1;
        Some(slot.item.clone())
    }

    pub(crate) fn done(&mut self, item: &T, metrics: Option<&QueueMetrics>) -> Finished {
        let Self {
            hasher,
            index,
            slots,
            free,
            queue,
            ..
        } = self;
        let hash = hasher.hash_one(item);
        let Ok(entry) = index.find_entry(hash, |&i| {
            slots[i].as_ref().is_some_and(|s| s.item == *item)
        }) else {
            return Finished::NotProcessing;
        };
        let i = *entry.get();
        let slot = Self::slot_mut(slots, i);
        if !slot.processing {
            return Finished::NotProcessing;
        }
        slot.processing = false;
        if let Some(m) = metrics {
            m.done(&mut slot.started);
        }
        self.processing -= 1;
        if slot.dirty {
            queue.push_back(i);
            return Finished::Requeued;
        }
        entry.remove();
        slots[i] = None;
        if index.is_empty() {
            // Everything left: forget the slots so that an emptied queue gives memory back.
            slots.clear();
            free.clear();
        } else {
            free.push(i);
        }
        Finished::Removed
    }

    /// Start times of the items in progress (for the unfinished-work gauges).
    pub(crate) fn processing_start_times(&self) -> impl Iterator<Item = Instant> + '_ {
        self.slots
            .iter()
            .filter_map(|s| s.as_ref())
            .filter(|s| s.processing)
            .filter_map(|s| s.started)
    }
}
