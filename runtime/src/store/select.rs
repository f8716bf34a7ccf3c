//! Label-selector lists served by the label index.
//!
//! client-go's `ListAllByNamespace` and kube-rs' `Store::state().filter(..)` scan every cached
//! object and test the selector. Here each requirement that pins the label to a finite set
//! (`key=value`, `key in (..)`) or demands its existence (`key`) names a set of candidate
//! buckets in the (namespace-partitioned) label index; the namespace bucket is another. The
//! smallest candidate set is walked and each candidate is checked against the other
//! requirements only. A selector of one such requirement therefore costs the size of its
//! result (plus one lookup per namespace for an all-namespaces list), never the size of the
//! store; a conjunction costs the size of its most selective indexed requirement. Selectors
//! with only negative requirements (`!=`, `notin`, `!key`, `>`, `<`) fall back to the
//! namespace bucket, or to a scan when no namespace is given.

use std::sync::Arc;

use super::bucket::Bucket;
use super::inner::Inner;
use super::labels::NsLabels;
use kinform_core::resource::HasMetadata;
use kinform_core::selector::{LabelOp, LabelRequirement, LabelSelector};

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
    /// Some index buckets (a namespace, or label buckets of one or all namespaces).
    Buckets(Vec<&'a Bucket>),
}

/// The chosen candidates: how many, where from, and which requirement they already satisfy
/// (that one need not be checked again).
struct Plan<'a> {
    size: usize,
    candidates: Candidates<'a>,
    satisfied: Option<usize>,
}

impl<K: HasMetadata> Inner<K> {
    /// Picks the smallest candidate set; `None` when the selection is certainly empty.
    fn plan<'a>(
        &'a self,
        namespace: Option<&str>,
        selector: &'a LabelSelector,
    ) -> Option<Plan<'a>> {
        let labels = self.indexes.labels();
        let (mut best, scopes): (Plan<'a>, Vec<&'a NsLabels>) = match namespace {
            Some(ns) => {
                let bucket = self.indexes.namespaces().get(ns)?;
                let plan = Plan {
                    size: bucket.len(),
                    candidates: Candidates::Buckets(vec![bucket]),
                    satisfied: None,
                };
                (plan, labels.namespace(ns).into_iter().collect())
            }
            None => {
                let plan = Plan {
                    size: self.len(),
                    candidates: Candidates::All,
                    satisfied: None,
                };
                (plan, labels.namespaces().collect())
            }
        };
        for (i, req) in selector.requirements().iter().enumerate() {
            let per_ns = scopes.iter().filter_map(|ns| ns.values_of(&req.key));
            let buckets: Vec<&Bucket> = if let Some(values) = req.required_values() {
                per_ns
                    .flat_map(|index| distinct(values).filter_map(move |v| index.get(v)))
                    .collect()
            } else if req.op == LabelOp::Exists {
                per_ns
                    .flat_map(|index| index.iter().map(|(_, b)| b))
                    .collect()
            } else {
                continue;
            };
            let size = buckets.iter().map(|b| b.len()).sum();
            if size == 0 {
                return None;
            }
            if size < best.size {
                best = Plan {
                    size,
                    candidates: Candidates::Buckets(buckets),
                    satisfied: Some(i),
                };
            }
        }
        Some(best)
    }

    /// The objects in `namespace` (all when `None` or `Some("")`) whose labels match
    /// `selector`.
    pub(crate) fn select(&self, namespace: Option<&str>, selector: &LabelSelector) -> Vec<Arc<K>> {
        let namespace = namespace.filter(|ns| !ns.is_empty());
        let Some(plan) = self.plan(namespace, selector) else {
            return Vec::new();
        };
        // Candidates are already in the namespace and satisfy the requirement they came from.
        let to_check: Vec<&LabelRequirement> = selector
            .requirements()
            .iter()
            .enumerate()
            .filter(|(i, _)| Some(*i) != plan.satisfied)
            .map(|(_, r)| r)
            .collect();
        let mut out = Vec::with_capacity(plan.size);
        let mut consider = |obj: &Arc<K>| {
            let labels = obj.metadata().labels.as_ref();
            if to_check.iter().all(|r| r.matches(labels)) {
                out.push(Arc::clone(obj));
            }
        };
        match plan.candidates {
            Candidates::All => self.iter().for_each(|(_, obj)| consider(obj)),
            Candidates::Buckets(buckets) => {
                for bucket in buckets {
                    bucket.iter().for_each(|s| consider(self.object(s)));
                }
            }
        }
        out
    }
}
