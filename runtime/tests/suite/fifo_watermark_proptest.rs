//! Property test of the DeltaFIFO's watermark ([`DeltaFifo::with_watermark`]): random
//! watch events (adds, updates, deletes at increasing resourceVersions), bookmarks and
//! relists are pushed while a consumer pops batches of random sizes, as the informer does.
//! After every step the watermark never claims a change the consumer has not applied: for
//! every event at or below it, the consumer has applied that event's key at least up to the
//! event's version. And it is live: once everything is popped it is at the last version
//! pushed.

use std::collections::HashMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::ConfigMap;
use kinform_runtime::consistency::Watermark;
use kinform_runtime::fifo::{Delta, DeltaFifo, KnownObjects};
use kinform_runtime::reflector::{ReflectorSink, SinkOp};
use kinform_runtime::store::Store;
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Op {
    Add(u8),
    Update(u8),
    Delete(u8),
    /// A batch of watch events applied as one sink call.
    Batch(Vec<u8>),
    Bookmark,
    Relist,
    Pop(usize),
}

fn op() -> impl Strategy<Value = Op> {
    let name = 0u8..8;
    prop_oneof![
        3 => name.clone().prop_map(Op::Add),
        3 => name.clone().prop_map(Op::Update),
        1 => name.clone().prop_map(Op::Delete),
        1 => prop::collection::vec(name, 1..6).prop_map(Op::Batch),
        1 => Just(Op::Bookmark),
        1 => Just(Op::Relist),
        4 => (1usize..4).prop_map(Op::Pop),
    ]
}

fn cm(name: u8, rv: u64) -> Arc<ConfigMap> {
    let mut o = ConfigMap::default();
    o.metadata.namespace = Some("ns".into());
    o.metadata.name = Some(format!("o{name}"));
    o.metadata.resource_version = Some(rv.to_string());
    Arc::new(o)
}

fn version(d: &Delta<ConfigMap>) -> u64 {
    let o = d.object().expect("only tombstones may lack an object");
    o.metadata
        .resource_version
        .as_deref()
        .unwrap()
        .parse()
        .unwrap()
}

struct World {
    fifo: DeltaFifo<ConfigMap>,
    store: Store<ConfigMap>,
    watermark: Watermark,
    rv: u64,
    /// Every event pushed: key and version.
    events: Vec<(u8, u64)>,
    /// Per key: the highest version the consumer has applied.
    applied: HashMap<String, u64>,
    /// What the server holds now (for relists and deletes).
    live: HashMap<u8, u64>,
}

impl World {
    fn new() -> Self {
        let store = Store::new();
        let known: Arc<dyn KnownObjects<ConfigMap>> = Arc::new(store.clone());
        let watermark = Watermark::new();
        Self {
            fifo: DeltaFifo::with_watermark(Some(known), watermark.clone()),
            store,
            watermark,
            rv: 0,
            events: Vec::new(),
            applied: HashMap::new(),
            live: HashMap::new(),
        }
    }

    fn next_rv(&mut self) -> u64 {
        self.rv += 1;
        self.rv
    }

    /// The sink op of a watch event on `name`, recorded as pushed.
    fn event(&mut self, name: u8, delete: bool) -> SinkOp<ConfigMap> {
        let rv = self.next_rv();
        self.events.push((name, rv));
        // Only what exists is deleted (a FIFO ignores the deletion of an unknown key).
        if delete && self.live.contains_key(&name) {
            self.live.remove(&name);
            SinkOp::Delete(cm(name, rv))
        } else if self.live.insert(name, rv).is_some() {
            SinkOp::Update(cm(name, rv))
        } else {
            SinkOp::Add(cm(name, rv))
        }
    }

    fn step(&mut self, op: &Op) {
        match op {
            Op::Add(n) | Op::Update(n) => {
                let e = self.event(*n, false);
                self.fifo.apply_batch(vec![e]).unwrap();
            }
            Op::Delete(n) => {
                let e = self.event(*n, true);
                self.fifo.apply_batch(vec![e]).unwrap();
            }
            Op::Batch(names) => {
                let ops = names
                    .iter()
                    .enumerate()
                    .map(|(i, n)| self.event(*n, i % 3 == 2))
                    .collect();
                self.fifo.apply_batch(ops).unwrap();
            }
            Op::Bookmark => {
                let rv = self.next_rv();
                self.fifo.bookmark(&rv.to_string()).unwrap();
            }
            Op::Relist => {
                // The server's state at a new version: its objects, at their versions.
                let rv = self.next_rv();
                let items = self.live.iter().map(|(n, v)| cm(*n, *v)).collect();
                self.fifo.replace(items, rv.to_string()).unwrap();
            }
            Op::Pop(max) => {
                if self.fifo.is_empty() {
                    return;
                }
                let store = &self.store;
                let applied = &mut self.applied;
                let pop = self.fifo.pop_many(*max, |batch| {
                    for deltas in batch {
                        let key = deltas.key().to_key();
                        let newest = deltas.newest();
                        // A tombstone carries the last known state, not the deletion's version.
                        for d in deltas.iter() {
                            if let Delta::Deleted(del) = d
                                && del.is_final_state_unknown()
                            {
                                continue;
                            }
                            let a = applied.entry(key.clone()).or_default();
                            *a = (*a).max(version(d));
                        }
                        match newest {
                            Delta::Deleted(_) => drop(store.delete(&key)),
                            other => store.update(Arc::clone(other.object().unwrap())),
                        }
                    }
                });
                futures_util::FutureExt::now_or_never(pop).unwrap().unwrap();
            }
        }
    }

    fn check(&self) {
        let seen = self.watermark.seen().unwrap_or(0);
        for (name, rv) in self.events.iter().filter(|(_, rv)| *rv <= seen) {
            let key = format!("ns/o{name}");
            let applied = self.applied.get(&key).copied().unwrap_or(0);
            assert!(
                applied >= *rv,
                "the watermark is at {seen} but {key} is applied only up to {applied} < {rv}"
            );
        }
    }
}

proptest! {
    #[test]
    fn the_watermark_never_passes_an_unapplied_change(ops in prop::collection::vec(op(), 1..60)) {
        let mut world = World::new();
        for op in &ops {
            world.step(op);
            world.check();
        }
        while !world.fifo.is_empty() {
            world.step(&Op::Pop(8));
            world.check();
        }
        let last = world.rv;
        if last > 0 {
            prop_assert_eq!(world.watermark.seen(), Some(last), "caught up once drained");
        }
    }
}

#[test]
fn a_bookmark_advances_an_empty_fifo_and_waits_behind_a_queued_key() {
    let mut world = World::new();
    world.step(&Op::Bookmark);
    assert_eq!(world.watermark.seen(), Some(1));
    world.step(&Op::Add(0)); // rv 2, queued
    world.step(&Op::Bookmark); // rv 3
    assert_eq!(
        world.watermark.seen(),
        Some(1),
        "the queued add at 2 holds it"
    );
    world.step(&Op::Pop(1));
    assert_eq!(world.watermark.seen(), Some(3));
}

#[test]
fn a_key_queued_first_and_updated_later_does_not_hide_the_keys_behind_it() {
    let mut world = World::new();
    world.step(&Op::Add(0)); // rv 1
    world.step(&Op::Add(1)); // rv 2
    world.step(&Op::Update(0)); // rv 3 joins o0's deltas, ahead of o1 in the queue
    world.step(&Op::Pop(1)); // o0 at 3 applied, o1 at 2 not
    assert_eq!(world.watermark.seen(), Some(1));
    world.check();
    world.step(&Op::Pop(1));
    assert_eq!(world.watermark.seen(), Some(3));
}

#[test]
fn incomparable_versions_are_counted_and_skipped() {
    let world = World::new();
    let mut o = ConfigMap::default();
    o.metadata.name = Some("x".into());
    o.metadata.namespace = Some("ns".into());
    o.metadata.resource_version = Some("opaque".into());
    world.fifo.add(Arc::new(o)).unwrap();
    world.fifo.bookmark("also-opaque").unwrap();
    assert_eq!(world.watermark.incomparable(), 2);
    assert_eq!(world.watermark.seen(), None);
}
