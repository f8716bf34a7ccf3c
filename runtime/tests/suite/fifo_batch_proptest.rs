//! Property test: a DeltaFIFO fed watch writes in batches (`ReflectorSink::apply_batch`, as
//! the reflector feeds it) ends in exactly the state of one fed the same writes one by one,
//! and popping it in batches (`pop_many`, as the informer pops) hands over the same keys with
//! the same deltas as popping it key by key (`pop`).
//!
//! Both FIFOs have a store as their known objects, updated on pop as an informer does, so
//! deletions of unknown keys and Replace's tombstones are exercised too.

use std::sync::Arc;

use k8s_openapi::api::core::v1::ConfigMap;
use kinform_runtime::fifo::{Delta, DeltaFifo, DeltaType, Deltas, KnownObjects};
use kinform_runtime::reflector::{ReflectorSink, SinkOp};
use kinform_runtime::store::Store;
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Op {
    Add(u8),
    Update(u8),
    Delete(u8),
    Replace(Vec<u8>),
}

fn op() -> impl Strategy<Value = Op> {
    let name = 0u8..8;
    prop_oneof![
        4 => name.clone().prop_map(Op::Add),
        4 => name.clone().prop_map(Op::Update),
        3 => name.clone().prop_map(Op::Delete),
        1 => prop::collection::vec(name, 0..6).prop_map(Op::Replace),
    ]
}

/// A run of writes, then (maybe) a pop of up to `pop` keys.
#[derive(Clone, Debug)]
struct Step {
    ops: Vec<Op>,
    pop: usize,
}

fn step() -> impl Strategy<Value = Step> {
    (prop::collection::vec(op(), 0..12), 0usize..6).prop_map(|(ops, pop)| Step { ops, pop })
}

fn obj(name: u8, version: usize) -> Arc<ConfigMap> {
    let mut o = ConfigMap::default();
    o.metadata.namespace = Some("ns".into());
    o.metadata.name = Some(format!("o{name}"));
    o.metadata.resource_version = Some(version.to_string());
    Arc::new(o)
}

fn sink_op(op: &Op, version: usize) -> SinkOp<ConfigMap> {
    match op {
        Op::Add(n) => SinkOp::Add(obj(*n, version)),
        Op::Update(n) => SinkOp::Update(obj(*n, version)),
        Op::Delete(n) => SinkOp::Delete(obj(*n, version)),
        Op::Replace(names) => SinkOp::Replace {
            items: names.iter().map(|n| obj(*n, version)).collect(),
            resource_version: version.to_string(),
        },
    }
}

type Seen = (String, Vec<(DeltaType, Option<String>, bool)>, bool);

fn seen(d: &Deltas<ConfigMap>) -> Seen {
    let key = d.newest().key().to_key();
    let deltas = d
        .iter()
        .map(|d| {
            (
                d.delta_type(),
                d.object().and_then(|o| o.metadata.resource_version.clone()),
                matches!(d, Delta::Deleted(del) if del.is_final_state_unknown()),
            )
        })
        .collect();
    (key, deltas, d.is_in_initial_list())
}

fn apply_to_store(store: &Store<ConfigMap>, d: &Deltas<ConfigMap>) {
    for delta in d {
        match delta {
            Delta::Deleted(del) => drop(store.delete_key(del.key())),
            other => store.add(Arc::clone(other.object().expect("a live delta"))),
        }
    }
}

struct Side {
    fifo: DeltaFifo<ConfigMap>,
    store: Store<ConfigMap>,
}

impl Side {
    fn new() -> Self {
        let store = Store::new();
        let known: Arc<dyn KnownObjects<ConfigMap>> = Arc::new(store.clone());
        Self {
            fifo: DeltaFifo::new(Some(known)),
            store,
        }
    }

    /// The queued keys (sorted) with their deltas, and `has_synced`.
    fn state(&self) -> (Vec<(String, Option<Seen>)>, bool) {
        let mut keys = self.fifo.list_keys();
        keys.sort();
        let queued = keys
            .into_iter()
            .map(|k| {
                let d = self.fifo.get(&k).map(|d| seen(&d));
                (k, d)
            })
            .collect();
        (queued, self.fifo.has_synced())
    }
}

fn run(steps: Vec<Step>) -> Result<(), TestCaseError> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    rt.block_on(async {
        let one = Side::new();
        let batched = Side::new();
        let mut version = 0;
        for step in steps {
            let mut ops = Vec::new();
            for op in &step.ops {
                version += 1;
                match sink_op(op, version) {
                    SinkOp::Add(o) => one.fifo.add(Arc::clone(&o)).unwrap(),
                    SinkOp::Update(o) => one.fifo.update(Arc::clone(&o)).unwrap(),
                    SinkOp::Delete(o) => one.fifo.delete(Arc::clone(&o)).unwrap(),
                    SinkOp::Replace {
                        items,
                        resource_version,
                    } => one.fifo.replace(items, resource_version).unwrap(),
                    SinkOp::Bookmark(rv) => one.fifo.bookmark(&rv).unwrap(),
                }
                ops.push(sink_op(op, version));
            }
            batched.fifo.apply_batch(ops).unwrap();
            prop_assert_eq!(one.state(), batched.state());

            let n = step.pop.min(one.fifo.len());
            if n == 0 {
                continue;
            }
            let mut popped_one = Vec::new();
            for _ in 0..n {
                let s = one
                    .fifo
                    .pop(|d| {
                        apply_to_store(&one.store, d);
                        Ok::<_, ()>(seen(d))
                    })
                    .await
                    .unwrap()
                    .unwrap();
                popped_one.push(s);
            }
            let popped_batched = batched
                .fifo
                .pop_many(n, |batch| {
                    batch
                        .iter()
                        .map(|d| {
                            apply_to_store(&batched.store, d);
                            seen(d)
                        })
                        .collect::<Vec<_>>()
                })
                .await
                .unwrap();
            prop_assert_eq!(popped_one, popped_batched);
            prop_assert_eq!(one.state(), batched.state());
            let mut a = one.store.list_keys();
            let mut b = batched.store.list_keys();
            a.sort();
            b.sort();
            prop_assert_eq!(a, b);
        }
        Ok(())
    })
}

proptest! {
    #[test]
    fn batched_writes_and_pops_equal_one_by_one(steps in prop::collection::vec(step(), 1..12)) {
        run(steps)?;
    }
}
