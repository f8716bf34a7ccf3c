//! Label-selector lists served by the label index.
//!
//! client-go's `ListAllByNamespace` and kube-rs' `Store::state().filter(..)` scan every cached
//! object and test the selector. Here each requirement that pins the label to a finite set
//! (`key=value`, `key in (..)`) or demands its existence (`key`) names a set of candidate
//! buckets in the label index; the namespace names another. The smallest candidate set is
//! walked and every candidate is checked against the whole selector, so the cost grows with
//! the smallest candidate set (at most the size of the tightest requirement's matches), not
//! with the store. Selectors with only negative requirements (`!=`, `notin`, `!key`, `>`, `<`)
//! fall back to the namespace bucket, or to a scan when no namespace is given.

use std::sync::Arc;

use super::bucket::{Bucket, ValueIndex};
use super::inner::Inner;
use crate::resource::HasMetadata;
use crate::selector::{LabelOp, LabelSelector};

/// The values of an `in` requirement without repetitions (a hand-built selector may repeat
/// one; each label value's bucket must be walked once).
fn distinct(values: &[String]) -> impl Iterator<Item = &str> + '_ {
    values
        .iter()
        .enumerate()
        .filter(|(i, v)| !values[..*i].contains(v))
        .map(|(_, v)| v.as_str())
}

/// Where the candidates of a selection come from.
enum Candidates<'a> {
    /// Every stored object.
    All,
    /// One bucket (a namespace).
    Bucket(&'a Bucket),
    /// The buckets of some values of one label key.
    Values(&'a ValueIndex, &'a [String]),
    /// Every bucket of one label key.
    AnyValue(&'a ValueIndex),
}

impl<K: HasMetadata> Inner<K> {
    /// Picks the smallest candidate set; `None` when the selection is certainly empty.
    fn plan<'a>(
        &'a self,
        namespace: Option<&str>,
        selector: &'a LabelSelector,
    ) -> Option<(usize, Candidates<'a>)> {
        let mut best = (self.len(), Candidates::All);
        if let Some(ns) = namespace {
            let bucket = self.indexes.namespaces().get(ns)?;
            best = (bucket.len(), Candidates::Bucket(bucket));
        }
        let labels = self.indexes.labels();
        for req in selector.requirements() {
            let candidate = if let Some(values) = req.required_values() {
                let index = labels.values_of(&req.key)?;
                let size = distinct(values)
                    .filter_map(|v| index.get(v))
                    .map(Bucket::len)
                    .sum();
                (size, Candidates::Values(index, values))
            } else if req.op == LabelOp::Exists {
                let index = labels.values_of(&req.key)?;
                let size = index.iter().map(|(_, b)| b.len()).sum();
                (size, Candidates::AnyValue(index))
            } else {
                continue;
            };
            if candidate.0 == 0 {
                return None;
            }
            if candidate.0 < best.0 {
                best = candidate;
            }
        }
        Some(best)
    }

    /// The objects in `namespace` (all when `None`) whose labels match `selector`.
    pub(crate) fn select(&self, namespace: Option<&str>, selector: &LabelSelector) -> Vec<Arc<K>> {
        let namespace = namespace.filter(|ns| !ns.is_empty());
        let Some((size, candidates)) = self.plan(namespace, selector) else {
            return Vec::new();
        };
        let mut out = Vec::with_capacity(size);
        let mut consider = |obj: &Arc<K>| {
            let in_namespace = namespace.is_none_or(|ns| obj.namespace().unwrap_or("") == ns);
            if in_namespace && selector.matches(obj.metadata().labels.as_ref()) {
                out.push(Arc::clone(obj));
            }
        };
        match candidates {
            Candidates::All => self.iter().for_each(|(_, obj)| consider(obj)),
            Candidates::Bucket(bucket) => bucket.iter().for_each(|s| consider(self.object(s))),
            Candidates::Values(index, values) => {
                for bucket in distinct(values).filter_map(|v| index.get(v)) {
                    bucket.iter().for_each(|s| consider(self.object(s)));
                }
            }
            Candidates::AnyValue(index) => {
                for (_, bucket) in index.iter() {
                    bucket.iter().for_each(|s| consider(self.object(s)));
                }
            }
        }
        out
    }
}
