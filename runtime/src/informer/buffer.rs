//! A handler's buffer of pending notifications, coalesced per key.
//!
//! client-go gives every listener an unbounded ring buffer, so a slow handler makes memory
//! grow with the event rate. The informer contract only promises each handler an in-order
//! *subsequence* of every object's states ending in the latest, so this buffer keeps at most
//! two pending notifications per key (a deletion, then the live object's add or update) and
//! folds newer states into them: memory is bounded by the number of keys, not of events.
//!
//! Folding rules (pending, then new):
//! - add(a), update(a→b)        → add(b)           (the handler never saw `a`)
//! - update(o→a), update(a→b)   → update(o→b)      (`o` is what the handler saw last)
//! - update, delete(d)          → delete(d)        (the handler's last state ends deleted)
//! - add, delete(d)             → nothing          (the handler never saw the object)
//! - delete(d), add(c)          → delete(d), add(c) (a new incarnation after the deletion)
//! - delete(d1), delete(d2)     → delete(d1)       (the deletion of what the handler knew)
//!
//! Keys are handed out in the order in which they became pending (again, after their
//! notifications cancelled out); a key's own notifications keep their order.
//!
//! No key string is built per notification: like the store and the DeltaFIFO, the buffer
//! derives an entry's key from the objects of its notifications, keeps the key's hash in the
//! entry, and its hash table holds slot numbers into a slab of entries.

use std::collections::VecDeque;

use hashbrown::{DefaultHashBuilder, HashTable};

use super::handler::Notification;
use crate::store::{ObjectKey, hash_key};
use kinform_core::resource::HasMetadata;

/// The pending notifications of one key: at most a deletion, then the live object's.
struct Pending<K> {
    hash: u64,
    deleted: Option<Notification<K>>,
    live: Option<Notification<K>>,
}

impl<K: HasMetadata> Pending<K> {
    /// The key, from the first notification still pending (`None` once both are taken).
    fn key(&self) -> Option<ObjectKey<'_>> {
        self.deleted
            .as_ref()
            .or(self.live.as_ref())
            .map(Notification::key)
    }
}

/// Pending notifications of one handler.
pub(crate) struct Buffer<K> {
    hasher: DefaultHashBuilder,
    /// Slots of the entries that hold notifications, by key.
    table: HashTable<u32>,
    entries: Vec<Option<Pending<K>>>,
    free: Vec<u32>,
    /// Slots in the order their keys became pending; an entry emptied by a cancellation
    /// stays here (out of the table) until `pop` reaches and frees it.
    order: VecDeque<u32>,
    count: usize,
    initial: usize,
}

impl<K> Default for Buffer<K> {
    fn default() -> Self {
        Self {
            hasher: DefaultHashBuilder::default(),
            table: HashTable::new(),
            entries: Vec::new(),
            free: Vec::new(),
            order: VecDeque::new(),
            count: 0,
            initial: 0,
        }
    }
}

impl<K> Buffer<K> {
    /// Pending notifications.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Initial-list adds not yet delivered (pending, or being delivered).
    pub fn initial_outstanding(&self) -> usize {
        self.initial
    }

    fn forget(&mut self, n: &Notification<K>) {
        self.count -= 1;
        if n.is_initial_add() {
            self.initial -= 1;
        }
    }

    /// A popped notification was handled.
    pub fn delivered(&mut self, n: &Notification<K>) {
        if n.is_initial_add() {
            self.initial -= 1;
        }
    }
}

impl<K: HasMetadata> Buffer<K> {
    /// The slot of the entry pending for `key` (hashed to `hash`), creating it at the back
    /// of the order when there is none.
    fn entry(&mut self, hash: u64, key: ObjectKey<'_>) -> u32 {
        let entries = &self.entries;
        let found = self.table.find(hash, |&s| {
            entries[s as usize]
                .as_ref()
                .and_then(Pending::key)
                .is_some_and(|k| k == key)
        });
        if let Some(&slot) = found {
            return slot;
        }
        let pending = Pending {
            hash,
            deleted: None,
            live: None,
        };
        let slot = match self.free.pop() {
            Some(slot) => {
                self.entries[slot as usize] = Some(pending);
                slot
            }
            None => {
                let slot = u32::try_from(self.entries.len())
                    .expect("a handler buffer holds at most u32::MAX keys");
                self.entries.push(Some(pending));
                slot
            }
        };
        let entries = &self.entries;
        self.table.insert_unique(hash, slot, |&s| {
            entries[s as usize].as_ref().map_or(0, |p| p.hash)
        });
        self.order.push_back(slot);
        slot
    }

    /// Takes `slot` out of the key table (its entry has lost, or is losing, its last
    /// notification).
    fn unlist(&mut self, slot: u32) {
        let hash = self.entries[slot as usize].as_ref().map_or(0, |p| p.hash);
        if let Ok(e) = self.table.find_entry(hash, |&s| s == slot) {
            e.remove();
        }
    }

    /// Queues `n`, folding it into what is pending for its object's key.
    pub fn push(&mut self, n: Notification<K>) {
        let key = n.key();
        let hash = hash_key(&self.hasher, key);
        let slot = self.entry(hash, key);
        let initial = n.is_initial_add();
        let p = self.entries[slot as usize]
            .as_mut()
            .expect("entry() returns an occupied slot");
        let mut dropped = None;
        let mut added = 0;
        let mut emptied = false;
        match n {
            Notification::Delete(_) => {
                dropped = p.live.take();
                // A pending add with no deletion before it: the handler never saw the
                // object, and now never will; it hears of neither.
                let unseen =
                    p.deleted.is_none() && matches!(dropped, Some(Notification::Add { .. }));
                if p.deleted.is_none() && !unseen {
                    p.deleted = Some(n);
                    added = 1;
                }
                // (With `unseen`, the entry is left empty; `pop` frees it.)
                emptied = unseen;
            }
            Notification::Add { obj, .. } => {
                p.live = Some(match p.live.take() {
                    None => {
                        added = 1;
                        Notification::Add { obj, initial }
                    }
                    Some(Notification::Add { initial: was, .. }) => {
                        Notification::Add { obj, initial: was }
                    }
                    Some(Notification::Update { old, .. }) => {
                        Notification::Update { old, new: obj }
                    }
                    Some(d @ Notification::Delete(_)) => d,
                });
            }
            Notification::Update { old, new } => {
                p.live = Some(match p.live.take() {
                    None => {
                        added = 1;
                        Notification::Update { old, new }
                    }
                    Some(Notification::Add { initial: was, .. }) => Notification::Add {
                        obj: new,
                        initial: was,
                    },
                    Some(Notification::Update { old: seen, .. }) => {
                        Notification::Update { old: seen, new }
                    }
                    Some(d @ Notification::Delete(_)) => d,
                });
            }
        }
        if emptied {
            // The entry's key can no longer be read from it: take it out of the table now.
            self.unlist(slot);
        }
        if added == 1 {
            self.count += 1;
            if initial {
                self.initial += 1;
            }
        }
        if let Some(d) = dropped {
            self.forget(&d);
        }
    }

    /// Takes the next notification. An initial add stays counted as outstanding until
    /// [`delivered`](Buffer::delivered) is called for it.
    pub fn pop(&mut self) -> Option<Notification<K>> {
        loop {
            let &slot = self.order.front()?;
            let p = self.entries[slot as usize]
                .as_mut()
                .expect("ordered slots are occupied");
            let n = match p.deleted.take() {
                Some(d) if p.live.is_some() => {
                    // The live notification stays first in line.
                    self.count -= 1;
                    return Some(d);
                }
                Some(d) => Some(d),
                None => p.live.take(),
            };
            if n.is_some() {
                self.unlist(slot);
            }
            // (An entry emptied by a cancellation is already out of the table.)
            self.entries[slot as usize] = None;
            self.free.push(slot);
            self.order.pop_front();
            if let Some(n) = n {
                self.count -= 1;
                return Some(n);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use k8s_openapi::api::core::v1::ConfigMap;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
    use kinform_core::Lean;

    use super::*;
    use crate::fifo::Deleted;

    /// The buffer's tests run with each form of cached object: the decoded `ConfigMap` and
    /// the lean cache's `Lean<ConfigMap>` (`Obj`).
    trait Obj: HasMetadata + Sized {
        fn from_config_map(cm: ConfigMap) -> Self;
    }
    impl Obj for ConfigMap {
        fn from_config_map(cm: ConfigMap) -> Self {
            cm
        }
    }
    impl Obj for Lean<ConfigMap> {
        fn from_config_map(cm: ConfigMap) -> Self {
            Lean::from_object(&cm).unwrap()
        }
    }

    /// Object `key` in state `v` (kept in its resourceVersion).
    fn cm<K: Obj>(key: &str, v: u32) -> Arc<K> {
        Arc::new(K::from_config_map(ConfigMap {
            metadata: ObjectMeta {
                namespace: Some("ns".into()),
                name: Some(key.into()),
                resource_version: Some(v.to_string()),
                ..ObjectMeta::default()
            },
            data: Some([("k".to_owned(), format!("state {v}"))].into()),
            ..ConfigMap::default()
        }))
    }
    fn add<K: Obj>(key: &str, v: u32, initial: bool) -> Notification<K> {
        Notification::Add {
            obj: cm(key, v),
            initial,
        }
    }
    fn upd<K: Obj>(key: &str, a: u32, b: u32) -> Notification<K> {
        Notification::Update {
            old: cm(key, a),
            new: cm(key, b),
        }
    }
    fn del<K: Obj>(key: &str, v: u32) -> Notification<K> {
        Notification::Delete(Deleted::Object(cm(key, v)))
    }
    fn v<K: Obj>(o: &Arc<K>) -> &str {
        o.resource_version()
    }
    fn show<K: Obj>(n: &Notification<K>) -> String {
        match n {
            Notification::Add { obj, initial } => {
                format!("add {}{}", v(obj), if *initial { "*" } else { "" })
            }
            Notification::Update { old, new } => format!("update {}->{}", v(old), v(new)),
            Notification::Delete(d) => format!("delete {}", v(d.object().unwrap())),
        }
    }
    fn drain<K: Obj>(b: &mut Buffer<K>) -> Vec<String> {
        let mut out = Vec::new();
        while let Some(n) = b.pop() {
            out.push(show(&n));
            b.delivered(&n);
        }
        assert_eq!(b.len(), 0);
        assert_eq!(b.initial_outstanding(), 0);
        assert!(b.table.is_empty() && b.order.is_empty());
        out
    }

    fn folds_per_key_and_keeps_key_order<K: Obj>() {
        let mut b = Buffer::<K>::default();
        b.push(add("a", 1, true));
        b.push(add("b", 10, false));
        b.push(upd("a", 1, 2));
        b.push(upd("a", 2, 3));
        assert_eq!(b.len(), 2);
        assert_eq!(b.initial_outstanding(), 1);
        assert_eq!(drain(&mut b), ["add 3*", "add 10"]);

        b.push(upd("a", 3, 4));
        b.push(upd("a", 4, 5));
        assert_eq!(drain(&mut b), ["update 3->5"]);
    }

    fn delete_wins_over_pending_state_and_a_recreation_follows_it<K: Obj>() {
        let mut b = Buffer::<K>::default();
        // The handler saw 1 (delivered), then 1 changed and went away.
        b.push(add("a", 1, true));
        assert_eq!(drain(&mut b), ["add 1*"]);
        b.push(upd("a", 1, 2));
        b.push(del("a", 2));
        b.push(add("a", 7, false));
        b.push(upd("a", 7, 8));
        b.push(del("a", 8));
        b.push(add("a", 9, false));
        assert_eq!(b.len(), 2);
        assert_eq!(drain(&mut b), ["delete 2", "add 9"]);
    }

    fn a_deletion_and_a_recreation_come_out_together_before_later_keys<K: Obj>() {
        let mut b = Buffer::<K>::default();
        b.push(add("a", 1, true));
        assert_eq!(drain(&mut b), ["add 1*"]);
        b.push(del("a", 1));
        b.push(add("b", 10, false));
        b.push(add("a", 2, false));
        assert_eq!(drain(&mut b), ["delete 1", "add 2", "add 10"]);
    }

    fn an_object_deleted_before_its_add_was_delivered_is_never_mentioned<K: Obj>() {
        let mut b = Buffer::<K>::default();
        b.push(add("a", 1, true));
        b.push(add("b", 10, false));
        b.push(upd("a", 1, 2));
        b.push(del("a", 2));
        assert_eq!(b.len(), 1);
        assert_eq!(
            b.initial_outstanding(),
            0,
            "a cancelled initial add no longer blocks sync"
        );
        // The key comes back later: it is pending again, behind the keys already waiting.
        b.push(add("c", 20, false));
        b.push(add("a", 3, false));
        assert_eq!(drain(&mut b), ["add 10", "add 20", "add 3"]);
        b.push(add("a", 4, false));
        b.push(del("a", 4));
        assert_eq!(drain(&mut b), Vec::<String>::new());
    }

    fn bounded_by_keys_not_events<K: Obj>() {
        let mut b = Buffer::<K>::default();
        for i in 0..10_000u32 {
            b.push(upd(&format!("k{}", i % 10), i, i + 1));
        }
        assert_eq!(b.len(), 10);
        assert_eq!(b.entries.len(), 10);
        let out = drain(&mut b);
        assert_eq!(out[0], "update 0->9991");
    }

    fn tombstones_fold_by_their_key<K: Obj>() {
        let mut b = Buffer::<K>::default();
        b.push(add("a", 1, false));
        assert_eq!(drain(&mut b), ["add 1"]);
        b.push(upd("a", 1, 2));
        b.push(Notification::Delete(Deleted::FinalStateUnknown {
            key: "ns/a".into(),
            last_known: Some(cm("a", 2)),
        }));
        assert_eq!(b.len(), 1);
        assert_eq!(drain(&mut b), ["delete 2"]);
    }

    fn initial_add_counts_until_delivered<K: Obj>() {
        let mut b = Buffer::<K>::default();
        b.push(add("a", 1, true));
        let n = b.pop().unwrap();
        assert_eq!(b.initial_outstanding(), 1, "being delivered");
        b.delivered(&n);
        assert_eq!(b.initial_outstanding(), 0);
    }

    macro_rules! for_each_object {
        ($($test:ident),*) => {
            mod config_map {
                $(#[test] fn $test() { super::$test::<k8s_openapi::api::core::v1::ConfigMap>() })*
            }
            mod lean_config_map {
                $(#[test] fn $test() { super::$test::<kinform_core::Lean<k8s_openapi::api::core::v1::ConfigMap>>() })*
            }
        };
    }
    for_each_object!(
        folds_per_key_and_keeps_key_order,
        delete_wins_over_pending_state_and_a_recreation_follows_it,
        a_deletion_and_a_recreation_come_out_together_before_later_keys,
        an_object_deleted_before_its_add_was_delivered_is_never_mentioned,
        bounded_by_keys_not_events,
        tombstones_fold_by_their_key,
        initial_add_counts_until_delivered
    );
}
