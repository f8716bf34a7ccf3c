//! The store's indexes: the built-in namespace and label indexes and the named custom ones.
//!
//! Every index maps a value to a [`Bucket`] of slots. Adding, updating and deleting an object
//! keep them exact (client-go's `storeIndex.updateIndices`): an update computes the values of
//! the old and the new object and touches only the buckets that differ, so the common update
//! (same namespace, same labels) costs no index work and no allocation. Buckets that become
//! empty are removed, so `index_values` never reports a value without objects.

use super::bucket::{Bucket, Slot, ValueIndex};
use super::labels::LabelIndex;
use super::{IndexFn, LABEL_INDEX, NAMESPACE_INDEX, StoreError};
use kinform_core::resource::HasMetadata;

/// A named index defined by an [`IndexFn`].
pub(crate) struct CustomIndex<K> {
    name: Box<str>,
    func: IndexFn<K>,
    index: ValueIndex,
}

/// An index as seen by lookups.
#[derive(Clone, Copy)]
pub(crate) enum IndexRef<'a> {
    /// An index of plain values (namespace and custom indexes).
    Values(&'a ValueIndex),
    /// The label index, queried with `key=value`.
    Labels(&'a LabelIndex),
}

/// All indexes of a store.
pub(crate) struct Indexes<K> {
    namespaces: ValueIndex,
    labels: LabelIndex,
    custom: Vec<CustomIndex<K>>,
}

impl<K> Default for Indexes<K> {
    fn default() -> Self {
        Self {
            namespaces: ValueIndex::default(),
            labels: LabelIndex::default(),
            custom: Vec::new(),
        }
    }
}

/// The namespace index value: client-go's `MetaNamespaceIndexFunc` indexes cluster-scoped
/// objects under `""`.
fn namespace_of<K: HasMetadata>(obj: &K) -> &str {
    obj.namespace().unwrap_or("")
}

impl<K: HasMetadata> Indexes<K> {
    /// Indexes a newly stored object.
    pub(crate) fn insert(&mut self, slot: Slot, obj: &K) {
        self.namespaces.insert(namespace_of(obj), slot);
        self.labels
            .insert_all(namespace_of(obj), obj.metadata().labels.as_ref(), slot);
        for c in &mut self.custom {
            for v in (c.func)(obj) {
                c.index.insert(&v, slot);
            }
        }
    }

    /// Removes a deleted object from every index.
    pub(crate) fn remove(&mut self, slot: Slot, obj: &K) {
        self.namespaces.remove(namespace_of(obj), slot);
        self.labels
            .remove_all(namespace_of(obj), obj.metadata().labels.as_ref(), slot);
        for c in &mut self.custom {
            for v in (c.func)(obj) {
                c.index.remove(&v, slot);
            }
        }
    }

    /// Moves `slot` from the buckets of `old`'s values to those of `new`'s, touching only the
    /// values that differ.
    pub(crate) fn update(&mut self, slot: Slot, old: &K, new: &K) {
        let (old_ns, new_ns) = (namespace_of(old), namespace_of(new));
        if old_ns != new_ns {
            self.namespaces.remove(old_ns, slot);
            self.namespaces.insert(new_ns, slot);
        }
        self.labels.update(
            (old_ns, old.metadata().labels.as_ref()),
            (new_ns, new.metadata().labels.as_ref()),
            slot,
        );
        for c in &mut self.custom {
            let old_values = (c.func)(old);
            let new_values = (c.func)(new);
            if old_values == new_values {
                continue;
            }
            for v in old_values.iter().filter(|v| !new_values.contains(v)) {
                c.index.remove(v, slot);
            }
            for v in new_values.iter().filter(|v| !old_values.contains(v)) {
                c.index.insert(v, slot);
            }
        }
    }

    /// Empties every index (the store is being cleared).
    pub(crate) fn clear(&mut self) {
        self.namespaces.clear();
        self.labels = LabelIndex::default();
        for c in &mut self.custom {
            c.index.clear();
        }
    }

    /// Checks that none of `names` is taken (by a built-in or existing index, or twice).
    pub(crate) fn check_new_names<'a>(
        &self,
        names: impl IntoIterator<Item = &'a str>,
    ) -> Result<(), StoreError> {
        let mut seen: Vec<&str> = Vec::new();
        for name in names {
            let taken = name == NAMESPACE_INDEX
                || name == LABEL_INDEX
                || self.custom.iter().any(|c| &*c.name == name)
                || seen.contains(&name);
            if taken {
                return Err(StoreError::IndexConflict {
                    index: name.to_owned(),
                });
            }
            seen.push(name);
        }
        Ok(())
    }

    /// Adds a custom index and indexes the given existing objects into it.
    pub(crate) fn add_custom<'a>(
        &mut self,
        name: String,
        func: IndexFn<K>,
        existing: impl Iterator<Item = (Slot, &'a K)>,
    ) {
        let mut index = ValueIndex::default();
        for (slot, obj) in existing {
            for v in func(obj) {
                index.insert(&v, slot);
            }
        }
        self.custom.push(CustomIndex {
            name: name.into(),
            func,
            index,
        });
    }

    /// The index called `name`.
    pub(crate) fn get(&self, name: &str) -> Result<IndexRef<'_>, StoreError> {
        match name {
            NAMESPACE_INDEX => Ok(IndexRef::Values(&self.namespaces)),
            LABEL_INDEX => Ok(IndexRef::Labels(&self.labels)),
            _ => self
                .custom
                .iter()
                .find(|c| &*c.name == name)
                .map(|c| IndexRef::Values(&c.index))
                .ok_or_else(|| StoreError::IndexNotFound {
                    index: name.to_owned(),
                }),
        }
    }

    /// The namespace index.
    pub(crate) fn namespaces(&self) -> &ValueIndex {
        &self.namespaces
    }

    /// The label index.
    pub(crate) fn labels(&self) -> &LabelIndex {
        &self.labels
    }

    /// The names of all indexes, built-in first.
    pub(crate) fn names(&self) -> Vec<String> {
        [NAMESPACE_INDEX, LABEL_INDEX]
            .into_iter()
            .map(str::to_owned)
            .chain(self.custom.iter().map(|c| c.name.to_string()))
            .collect()
    }
}

impl<'a> IndexRef<'a> {
    /// The buckets for `value` (`key=value` for the label index, one bucket per namespace).
    pub(crate) fn buckets(self, index: &str, value: &str) -> Result<Vec<&'a Bucket>, StoreError> {
        match self {
            IndexRef::Values(ix) => Ok(ix.get(value).into_iter().collect()),
            IndexRef::Labels(labels) => {
                let (k, v) =
                    value
                        .split_once('=')
                        .ok_or_else(|| StoreError::InvalidIndexValue {
                            index: index.to_owned(),
                            value: value.to_owned(),
                            reason: "the label index is queried with key=value".to_owned(),
                        })?;
                Ok(labels.buckets(k, v).collect())
            }
        }
    }

    /// Every value of the index (`key=value` pairs for the label index).
    pub(crate) fn values(self) -> Vec<String> {
        match self {
            IndexRef::Values(ix) => ix.iter().map(|(v, _)| v.to_owned()).collect(),
            IndexRef::Labels(labels) => labels.pairs(),
        }
    }
}
