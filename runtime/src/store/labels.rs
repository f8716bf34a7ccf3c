//! The label index, partitioned by namespace: namespace -> label key -> label value -> slots.
//!
//! Partitioning by namespace makes a namespaced selector list exact: `app=web` in namespace
//! `prod` is one bucket holding exactly the matching objects, so its cost is the result size
//! whatever the rest of the store holds. An all-namespaces query visits one map per namespace
//! (a hash lookup each) plus the result. Every (object, label) pair is still indexed once.

use std::collections::{BTreeMap, BTreeSet};

use hashbrown::HashMap;

use super::bucket::{Bucket, Slot, ValueIndex};

type Labels = BTreeMap<String, String>;

/// The labels of one namespace: label key -> label value -> slots.
#[derive(Clone, Debug, Default)]
pub(crate) struct NsLabels {
    keys: HashMap<Box<str>, ValueIndex>,
}

impl NsLabels {
    fn insert(&mut self, key: &str, value: &str, slot: Slot) {
        match self.keys.get_mut(key) {
            Some(values) => values.insert(value, slot),
            None => {
                let mut values = ValueIndex::default();
                values.insert(value, slot);
                self.keys.insert(key.into(), values);
            }
        }
    }

    fn remove(&mut self, key: &str, value: &str, slot: Slot) {
        if let Some(values) = self.keys.get_mut(key) {
            values.remove(value, slot);
            if values.is_empty() {
                self.keys.remove(key);
            }
        }
    }

    pub(crate) fn insert_all(&mut self, labels: Option<&Labels>, slot: Slot) {
        for (k, v) in labels.into_iter().flatten() {
            self.insert(k, v, slot);
        }
    }

    pub(crate) fn remove_all(&mut self, labels: Option<&Labels>, slot: Slot) {
        for (k, v) in labels.into_iter().flatten() {
            self.remove(k, v, slot);
        }
    }

    /// Applies the difference between two label sets with one merge walk of the sorted maps.
    pub(crate) fn update(&mut self, old: Option<&Labels>, new: Option<&Labels>, slot: Slot) {
        let mut old = old.into_iter().flatten().peekable();
        let mut new = new.into_iter().flatten().peekable();
        loop {
            match (old.peek(), new.peek()) {
                (None, None) => break,
                (Some(&(k, v)), None) => {
                    self.remove(k, v, slot);
                    old.next();
                }
                (None, Some(&(k, v))) => {
                    self.insert(k, v, slot);
                    new.next();
                }
                (Some(&(ok, ov)), Some(&(nk, nv))) => match ok.cmp(nk) {
                    std::cmp::Ordering::Less => {
                        self.remove(ok, ov, slot);
                        old.next();
                    }
                    std::cmp::Ordering::Greater => {
                        self.insert(nk, nv, slot);
                        new.next();
                    }
                    std::cmp::Ordering::Equal => {
                        if ov != nv {
                            self.remove(ok, ov, slot);
                            self.insert(nk, nv, slot);
                        }
                        old.next();
                        new.next();
                    }
                },
            }
        }
    }

    /// The slots whose object carries `key=value`.
    pub(crate) fn get(&self, key: &str, value: &str) -> Option<&Bucket> {
        self.keys.get(key)?.get(value)
    }

    /// The values of label `key`, each with its bucket.
    pub(crate) fn values_of(&self, key: &str) -> Option<&ValueIndex> {
        self.keys.get(key)
    }

    /// Whether no label is indexed.
    pub(crate) fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Every label key with its values.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&str, &ValueIndex)> + '_ {
        self.keys.iter().map(|(k, v)| (&**k, v))
    }
}

/// The label index of a whole store.
#[derive(Clone, Debug, Default)]
pub(crate) struct LabelIndex {
    namespaces: HashMap<Box<str>, NsLabels>,
}

impl LabelIndex {
    fn with_ns(&mut self, namespace: &str, f: impl FnOnce(&mut NsLabels)) {
        match self.namespaces.get_mut(namespace) {
            Some(labels) => {
                f(labels);
                if labels.is_empty() {
                    self.namespaces.remove(namespace);
                }
            }
            None => {
                let mut labels = NsLabels::default();
                f(&mut labels);
                if !labels.is_empty() {
                    self.namespaces.insert(namespace.into(), labels);
                }
            }
        }
    }

    /// Indexes the labels of a new object.
    pub(crate) fn insert_all(&mut self, namespace: &str, labels: Option<&Labels>, slot: Slot) {
        if labels.is_some_and(|l| !l.is_empty()) {
            self.with_ns(namespace, |ns| ns.insert_all(labels, slot));
        }
    }

    /// Removes the labels of a deleted object.
    pub(crate) fn remove_all(&mut self, namespace: &str, labels: Option<&Labels>, slot: Slot) {
        if labels.is_some_and(|l| !l.is_empty()) {
            self.with_ns(namespace, |ns| ns.remove_all(labels, slot));
        }
    }

    /// Moves an updated object from its old labels to its new ones.
    pub(crate) fn update(
        &mut self,
        (old_ns, old): (&str, Option<&Labels>),
        (new_ns, new): (&str, Option<&Labels>),
        slot: Slot,
    ) {
        if old_ns != new_ns {
            self.remove_all(old_ns, old, slot);
            self.insert_all(new_ns, new, slot);
        } else if old != new {
            self.with_ns(new_ns, |ns| ns.update(old, new, slot));
        }
    }

    /// The labels of one namespace (`""` for cluster-scoped objects).
    pub(crate) fn namespace(&self, namespace: &str) -> Option<&NsLabels> {
        self.namespaces.get(namespace)
    }

    /// The labels of every namespace.
    pub(crate) fn namespaces(&self) -> impl Iterator<Item = &NsLabels> + '_ {
        self.namespaces.values()
    }

    /// The buckets of `key=value`, one per namespace that has it.
    pub(crate) fn buckets<'s>(
        &'s self,
        key: &str,
        value: &str,
    ) -> impl Iterator<Item = &'s Bucket> {
        self.namespaces
            .values()
            .filter_map(move |ns| ns.get(key, value))
    }

    /// Every indexed `key=value` pair, once.
    pub(crate) fn pairs(&self) -> Vec<String> {
        let pairs: BTreeSet<(&str, &str)> = self
            .namespaces
            .values()
            .flat_map(|ns| ns.iter())
            .flat_map(|(k, values)| values.iter().map(move |(v, _)| (k, v)))
            .collect();
        pairs.into_iter().map(|(k, v)| format!("{k}={v}")).collect()
    }
}
