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
//! Keys are handed out in the order in which they first became pending; a key's own
//! notifications keep their order.

use std::collections::VecDeque;

use hashbrown::HashMap;

use super::handler::Notification;

struct Pending<K> {
    deleted: Option<Notification<K>>,
    live: Option<Notification<K>>,
}

/// Pending notifications of one handler.
pub(crate) struct Buffer<K> {
    order: VecDeque<String>,
    pending: HashMap<String, Pending<K>>,
    count: usize,
    initial: usize,
}

impl<K> Default for Buffer<K> {
    fn default() -> Self {
        Self {
            order: VecDeque::new(),
            pending: HashMap::new(),
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

    /// Queues `n` about `key`, folding it into what is pending for the key.
    pub fn push(&mut self, key: String, n: Notification<K>) {
        let initial = n.is_initial_add();
        let p = match self.pending.get_mut(&key) {
            Some(p) => p,
            None => {
                self.order.push_back(key.clone());
                self.pending.entry(key).or_insert(Pending {
                    deleted: None,
                    live: None,
                })
            }
        };
        let mut dropped = None;
        let mut added = 0;
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
                // (With `unseen`, the key's entry is left empty; `pop` skips it.)
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
    /// [`delivered`](Self::delivered) is called for it.
    pub fn pop(&mut self) -> Option<Notification<K>> {
        // Skip keys whose notifications cancelled out (see `push`).
        while let Some(key) = self.order.front()
            && self
                .pending
                .get(key)
                .is_some_and(|p| p.deleted.is_none() && p.live.is_none())
        {
            self.pending.remove(key);
            self.order.pop_front();
        }
        let key = self.order.front()?;
        let p = self.pending.get_mut(key)?;
        let n = match p.deleted.take() {
            Some(d) => {
                if p.live.is_none() {
                    self.pending.remove(key);
                    self.order.pop_front();
                }
                d
            }
            None => {
                let n = p.live.take();
                self.pending.remove(key);
                self.order.pop_front();
                n?
            }
        };
        self.count -= 1;
        Some(n)
    }

    /// A popped notification was handled.
    pub fn delivered(&mut self, n: &Notification<K>) {
        if n.is_initial_add() {
            self.initial -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::fifo::Deleted;

    fn add(v: u32, initial: bool) -> Notification<u32> {
        Notification::Add {
            obj: Arc::new(v),
            initial,
        }
    }
    fn upd(a: u32, b: u32) -> Notification<u32> {
        Notification::Update {
            old: Arc::new(a),
            new: Arc::new(b),
        }
    }
    fn del(v: u32) -> Notification<u32> {
        Notification::Delete(Deleted::Object(Arc::new(v)))
    }
    fn show(n: &Notification<u32>) -> String {
        match n {
            Notification::Add { obj, initial } => {
                format!("add {obj}{}", if *initial { "*" } else { "" })
            }
            Notification::Update { old, new } => format!("update {old}->{new}"),
            Notification::Delete(d) => format!("delete {}", d.object().unwrap()),
        }
    }
    fn drain(b: &mut Buffer<u32>) -> Vec<String> {
        let mut out = Vec::new();
        while let Some(n) = b.pop() {
            out.push(show(&n));
            b.delivered(&n);
        }
        assert_eq!(b.len(), 0);
        assert_eq!(b.initial_outstanding(), 0);
        out
    }

    #[test]
    fn folds_per_key_and_keeps_key_order() {
        let mut b = Buffer::default();
        b.push("a".into(), add(1, true));
        b.push("b".into(), add(10, false));
        b.push("a".into(), upd(1, 2));
        b.push("a".into(), upd(2, 3));
        assert_eq!(b.len(), 2);
        assert_eq!(b.initial_outstanding(), 1);
        assert_eq!(drain(&mut b), ["add 3*", "add 10"]);

        b.push("a".into(), upd(3, 4));
        b.push("a".into(), upd(4, 5));
        assert_eq!(drain(&mut b), ["update 3->5"]);
    }

    #[test]
    fn delete_wins_over_pending_state_and_a_recreation_follows_it() {
        let mut b = Buffer::default();
        // The handler saw 1 (delivered), then 1 changed and went away.
        b.push("a".into(), add(1, true));
        assert_eq!(drain(&mut b), ["add 1*"]);
        b.push("a".into(), upd(1, 2));
        b.push("a".into(), del(2));
        b.push("a".into(), add(7, false));
        b.push("a".into(), upd(7, 8));
        b.push("a".into(), del(8));
        b.push("a".into(), add(9, false));
        assert_eq!(b.len(), 2);
        assert_eq!(drain(&mut b), ["delete 2", "add 9"]);
    }

    #[test]
    fn an_object_deleted_before_its_add_was_delivered_is_never_mentioned() {
        let mut b = Buffer::default();
        b.push("a".into(), add(1, true));
        b.push("b".into(), add(10, false));
        b.push("a".into(), upd(1, 2));
        b.push("a".into(), del(2));
        assert_eq!(b.len(), 1);
        assert_eq!(
            b.initial_outstanding(),
            0,
            "a cancelled initial add no longer blocks sync"
        );
        // The key comes back later: it is handed out in its new state.
        b.push("c".into(), add(20, false));
        b.push("a".into(), add(3, false));
        assert_eq!(drain(&mut b), ["add 3", "add 10", "add 20"]);
        b.push("a".into(), add(4, false));
        b.push("a".into(), del(4));
        assert_eq!(drain(&mut b), Vec::<String>::new());
    }

    #[test]
    fn bounded_by_keys_not_events() {
        let mut b = Buffer::default();
        for i in 0..10_000u32 {
            b.push(format!("k{}", i % 10), upd(i, i + 1));
        }
        assert_eq!(b.len(), 10);
        let out = drain(&mut b);
        assert_eq!(out[0], "update 0->9991");
    }

    #[test]
    fn initial_add_counts_until_delivered() {
        let mut b = Buffer::default();
        b.push("a".into(), add(1, true));
        let n = b.pop().unwrap();
        assert_eq!(b.initial_outstanding(), 1, "being delivered");
        b.delivered(&n);
        assert_eq!(b.initial_outstanding(), 0);
    }
}
