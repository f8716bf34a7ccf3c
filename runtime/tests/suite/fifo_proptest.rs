//! Property test: random Add/Update/Delete/Replace/Resync/Pop/PopBatch sequences drive a
//! DeltaFIFO (with a store as its known objects, updated on pop as an informer does) and a
//! reference model written the way client-go's `delta_fifo.go` reads (strings, vectors,
//! linear scans). After every step: same queue (order of first arrival), same deltas per key,
//! same `has_synced`; every pop hands over the same key with the same deltas and the same
//! `is_in_initial_list`.
//!
//! Keys that one Replace or Resync appends from the known objects have no defined relative
//! order (client-go iterates a Go map); the model tags them with one group and accepts any
//! order inside a group.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use k8s_openapi::api::core::v1::ConfigMap;
use kinform_runtime::fifo::{Delta, DeltaFifo, DeltaType, Deltas, KnownObjects};
use kinform_runtime::reflector::ReflectorSink;
use kinform_runtime::store::Store;
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Op {
    Add(u8),
    Update(u8),
    Delete(u8),
    Replace(Vec<u8>),
    Resync,
    Pop { fail: bool },
    PopBatch { max: usize, fail_mask: u8 },
}

fn op() -> impl Strategy<Value = Op> {
    let name = 0u8..6;
    prop_oneof![
        3 => name.clone().prop_map(Op::Add),
        3 => name.clone().prop_map(Op::Update),
        2 => name.clone().prop_map(Op::Delete),
        1 => prop::collection::vec(name, 0..6).prop_map(Op::Replace),
        1 => Just(Op::Resync),
        4 => prop::bool::weighted(0.2).prop_map(|fail| Op::Pop { fail }),
        2 => (1usize..5, any::<u8>()).prop_map(|(max, fail_mask)| Op::PopBatch { max, fail_mask }),
    ]
}

fn obj(name: u8, version: usize) -> Arc<ConfigMap> {
    let mut o = ConfigMap::default();
    o.metadata.namespace = Some("ns".into());
    o.metadata.name = Some(format!("o{name}"));
    o.metadata.resource_version = Some(version.to_string());
    Arc::new(o)
}

/// A delta as the model sees it: type, carried resource version, tombstone flag.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Md {
    ty: DeltaType,
    rv: Option<String>,
    tomb: bool,
}

fn md_of(d: &Delta<ConfigMap>) -> Md {
    Md {
        ty: d.delta_type(),
        rv: d.object().and_then(|o| o.metadata.resource_version.clone()),
        tomb: matches!(d, Delta::Deleted(del) if del.is_final_state_unknown()),
    }
}

fn mds_of(d: &Deltas<ConfigMap>) -> Vec<Md> {
    d.iter().map(md_of).collect()
}

#[derive(Default)]
struct Model {
    queue: Vec<(String, u64)>,
    items: HashMap<String, Vec<Md>>,
    known: BTreeMap<String, Arc<ConfigMap>>,
    populated: bool,
    initial: usize,
    groups: u64,
}

impl Model {
    fn group(&mut self) -> u64 {
        self.groups += 1;
        self.groups
    }

    /// queueActionLocked with dedupDeltas.
    fn push(&mut self, key: &str, md: Md, group: Option<u64>) {
        if !self.items.contains_key(key) {
            let g = group.unwrap_or_else(|| self.group());
            self.queue.push((key.to_owned(), g));
        }
        let list = self.items.entry(key.to_owned()).or_default();
        list.push(md);
        let n = list.len();
        if n >= 2 && list[n - 1].ty == DeltaType::Deleted && list[n - 2].ty == DeltaType::Deleted {
            let newer = list.pop().unwrap();
            if !newer.tomb {
                list[n - 2] = newer;
            }
        }
    }

    fn md(ty: DeltaType, o: &ConfigMap, tomb: bool) -> Md {
        Md {
            ty,
            rv: o.metadata.resource_version.clone(),
            tomb,
        }
    }

    fn add(&mut self, ty: DeltaType, o: &ConfigMap) {
        self.populated = true;
        let k = format!("ns/{}", o.metadata.name.as_deref().unwrap());
        self.push(&k, Self::md(ty, o, false), None);
    }

    fn delete(&mut self, o: &ConfigMap) {
        self.populated = true;
        let k = format!("ns/{}", o.metadata.name.as_deref().unwrap());
        if !self.items.contains_key(&k) && !self.known.contains_key(&k) {
            return;
        }
        self.push(&k, Self::md(DeltaType::Deleted, o, false), None);
    }

    fn replace(&mut self, list: &[Arc<ConfigMap>]) {
        let mut listed = BTreeSet::new();
        for o in list {
            let k = format!("ns/{}", o.metadata.name.as_deref().unwrap());
            listed.insert(k.clone());
            self.push(&k, Self::md(DeltaType::Replaced, o, false), None);
        }
        let mut deletions = 0;
        for (k, _) in self.queue.clone() {
            if listed.contains(&k) {
                continue;
            }
            let rv = self.items[&k].last().unwrap().rv.clone();
            self.push(
                &k,
                Md {
                    ty: DeltaType::Deleted,
                    rv,
                    tomb: true,
                },
                None,
            );
            deletions += 1;
        }
        let g = self.group();
        for (k, o) in self.known.clone() {
            if listed.contains(&k) || self.items.contains_key(&k) {
                continue;
            }
            self.push(&k, Self::md(DeltaType::Deleted, &o, true), Some(g));
            deletions += 1;
        }
        if !self.populated {
            self.populated = true;
            self.initial = listed.len() + deletions;
        }
    }

    fn resync(&mut self) {
        let g = self.group();
        for (k, o) in self.known.clone() {
            if !self.items.contains_key(&k) {
                self.push(&k, Self::md(DeltaType::Sync, &o, false), Some(g));
            }
        }
    }

    fn has_synced(&self) -> bool {
        self.populated && self.initial == 0
    }

    /// Pops `key`, which must belong to the front group; applies it to the known objects on
    /// success, requeues it on failure. Returns its deltas and the initial-list flag.
    fn pop(
        &mut self,
        key: &str,
        ok: bool,
        objects: &[Arc<ConfigMap>],
    ) -> Result<(Vec<Md>, bool), TestCaseError> {
        let front = self.queue.first().map(|(_, g)| *g);
        let pos = self.queue.iter().position(|(k, _)| k == key);
        prop_assert!(
            pos.is_some(),
            "popped {} which the model has not queued",
            key
        );
        let pos = pos.unwrap();
        prop_assert!(
            self.queue[..=pos].iter().all(|(_, g)| Some(*g) == front),
            "popped {} out of order; model queue {:?}",
            key,
            self.queue
        );
        self.queue.remove(pos);
        let in_initial = !self.has_synced();
        self.initial = self.initial.saturating_sub(1);
        let mds = self.items.remove(key).unwrap();
        if ok {
            // The informer applies the newest state.
            match objects.last() {
                Some(o) if mds.last().unwrap().ty != DeltaType::Deleted => {
                    self.known.insert(key.to_owned(), Arc::clone(o));
                }
                _ => {
                    self.known.remove(key);
                }
            }
        } else {
            self.populated = true;
            let g = self.group();
            self.queue.push((key.to_owned(), g));
            self.items.insert(key.to_owned(), mds.clone());
        }
        Ok((mds, in_initial))
    }

    fn check(
        &self,
        fifo: &DeltaFifo<ConfigMap>,
        store: &Store<ConfigMap>,
    ) -> Result<(), TestCaseError> {
        prop_assert_eq!(fifo.len(), self.queue.len());
        prop_assert_eq!(fifo.has_synced(), self.has_synced());
        let real = fifo.list_keys();
        let mut i = 0;
        while i < self.queue.len() {
            let g = self.queue[i].1;
            let j = i + self.queue[i..].iter().take_while(|(_, h)| *h == g).count();
            let want: BTreeSet<&str> = self.queue[i..j].iter().map(|(k, _)| k.as_str()).collect();
            let got: BTreeSet<&str> = real[i..j].iter().map(String::as_str).collect();
            prop_assert_eq!(got, want, "queue {:?} vs model {:?}", real, self.queue);
            i = j;
        }
        for (k, mds) in &self.items {
            prop_assert_eq!(&mds_of(&fifo.get(k).unwrap()), mds);
        }
        let known: BTreeSet<String> = store.list_keys().into_iter().collect();
        prop_assert_eq!(known, self.known.keys().cloned().collect::<BTreeSet<_>>());
        Ok(())
    }
}

/// What a pop closure saw: key, deltas, initial-list flag, the objects (for the model).
type Popped = (String, Vec<Md>, bool, Vec<Arc<ConfigMap>>);

/// The informer's process step: apply the newest state to the store.
fn apply(store: &Store<ConfigMap>, deltas: &Deltas<ConfigMap>) {
    match deltas.newest() {
        Delta::Deleted(d) => {
            store.delete_key(d.key());
        }
        other => store.update(Arc::clone(other.object().unwrap())),
    }
}

fn record(deltas: &Deltas<ConfigMap>) -> Popped {
    (
        deltas.key().to_string(),
        mds_of(deltas),
        deltas.is_in_initial_list(),
        deltas.iter().filter_map(|d| d.object().cloned()).collect(),
    )
}

fn run(ops: Vec<Op>) -> Result<(), TestCaseError> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let store: Store<ConfigMap> = Store::new();
    let known: Arc<dyn KnownObjects<ConfigMap>> = Arc::new(store.clone());
    let fifo = DeltaFifo::new(Some(known));
    let mut model = Model::default();
    for (version, op) in ops.into_iter().enumerate() {
        match op {
            Op::Add(n) => {
                let o = obj(n, version);
                model.add(DeltaType::Added, &o);
                fifo.add(o).unwrap();
            }
            Op::Update(n) => {
                let o = obj(n, version);
                model.add(DeltaType::Updated, &o);
                fifo.update(o).unwrap();
            }
            Op::Delete(n) => {
                let o = obj(n, version);
                model.delete(&o);
                fifo.delete(o).unwrap();
            }
            Op::Replace(names) => {
                let list: Vec<_> = names.iter().map(|&n| obj(n, version)).collect();
                model.replace(&list);
                fifo.replace(list, version.to_string()).unwrap();
            }
            Op::Resync => {
                model.resync();
                fifo.resync().unwrap();
            }
            Op::Pop { fail } => {
                if model.queue.is_empty() {
                    continue;
                }
                let popped = rt
                    .block_on(fifo.pop(|d| {
                        let seen = record(d);
                        if fail {
                            Err(seen)
                        } else {
                            apply(&store, d);
                            Ok(seen)
                        }
                    }))
                    .unwrap();
                let ok = popped.is_ok();
                let (k, mds, initial, objects) = popped.unwrap_or_else(|e| e);
                let (want, want_initial) = model.pop(&k, ok, &objects)?;
                prop_assert_eq!(mds, want);
                prop_assert_eq!(initial, want_initial);
            }
            Op::PopBatch { max, fail_mask } => {
                if model.queue.is_empty() {
                    continue;
                }
                let mut seen = Vec::new();
                let batch = rt
                    .block_on(fifo.pop_batch(max, |d| {
                        let fail = fail_mask & (1 << (seen.len() % 8)) != 0;
                        seen.push((record(d), !fail));
                        if fail {
                            Err(())
                        } else {
                            apply(&store, d);
                            Ok(())
                        }
                    }))
                    .unwrap();
                prop_assert_eq!(batch.popped, max.min(model.queue.len()));
                prop_assert_eq!(batch.popped, seen.len());
                prop_assert_eq!(
                    batch.errors.len(),
                    seen.iter().filter(|(_, ok)| !ok).count()
                );
                let mut keys = BTreeSet::new();
                for ((k, mds, initial, objects), ok) in seen {
                    prop_assert!(keys.insert(k.clone()), "batch popped {} twice", k);
                    let (want, want_initial) = model.pop(&k, ok, &objects)?;
                    prop_assert_eq!(mds, want);
                    prop_assert_eq!(initial, want_initial);
                }
            }
        }
        model.check(&fifo, &store)?;
    }
    // Drain: every queued key comes out exactly once more, then the FIFO is empty.
    fifo.close();
    while !model.queue.is_empty() {
        let (k, mds, initial, objects) = rt
            .block_on(fifo.pop(|d| {
                apply(&store, d);
                Ok::<_, ()>(record(d))
            }))
            .unwrap()
            .unwrap();
        let (want, want_initial) = model.pop(&k, true, &objects)?;
        prop_assert_eq!(mds, want);
        prop_assert_eq!(initial, want_initial);
    }
    model.check(&fifo, &store)?;
    prop_assert!(rt.block_on(fifo.pop(|_| Ok::<_, ()>(()))).is_err());
    Ok(())
}

proptest! {

    #[test]
    fn delta_fifo_matches_the_client_go_model(ops in prop::collection::vec(op(), 1..60)) {
        run(ops)?;
    }
}
