//! [`Filter`]: which update events of a watch queue a key (controller-runtime's
//! `pkg/predicate`: `GenerationChangedPredicate`, `LabelChangedPredicate`,
//! `AnnotationChangedPredicate`, `ResourceVersionChangedPredicate`, `NewPredicateFuncs`,
//! `And`, `Or`); the rules, and where kinform differs, are on the type.
//!
//! Filters are plain closures behind an `Arc`; no predicate crate was considered, as the
//! pieces are a few comparisons of metadata.

use std::fmt;
use std::sync::Arc;

use kinform_core::resource::HasMetadata;

/// A predicate on a watch's update events: `true` queues the key. Cloning is cheap.
///
/// A filter sees the old and the new state of an updated object and says whether the update
/// reaches the workqueue. Adds and deletes always pass (the reconcile of a new or gone object
/// is never filtered away), as upstream's update predicates do. A resync is an update whose
/// two states are the same object: the metadata filters drop it, as upstream's do.
///
/// Where kinform differs: [`Filter::generation_changed`] also passes the update that marks an
/// object for deletion. The API server does not bump `metadata.generation` when it sets
/// `deletionTimestamp` on an object that finalizers hold, so upstream's
/// `GenerationChangedPredicate` alone filters that update out, and a controller's finalizer
/// cleanup never runs (kubernetes-sigs/node-readiness-controller#213).
///
/// Give it to [`ControllerBuilder::filter`](super::ControllerBuilder::filter) (the
/// controller's own type) or [`filter_related`](super::ControllerBuilder::filter_related)
/// (a type of [`owns`](super::ControllerBuilder::owns) or
/// [`watches`](super::ControllerBuilder::watches)); several filters on one watch must all
/// pass.
///
/// ```
/// use k8s_openapi::api::apps::v1::Deployment;
/// use kinform_runtime::controller::Filter;
///
/// // Spec changes, label changes, or a change of one annotation.
/// let filter = Filter::<Deployment>::generation_changed()
///     .or(Filter::labels_changed())
///     .or(Filter::new(|old: &Deployment, new: &Deployment| {
///         let paused = |d: &Deployment| d.metadata.annotations.as_ref()
///             .and_then(|a| a.get("example.com/paused").cloned());
///         paused(old) != paused(new)
///     }));
/// let mut old = Deployment::default();
/// old.metadata.generation = Some(1);
/// let mut new = old.clone();
/// assert!(!filter.passes(&old, &new)); // a status write: same generation
/// new.metadata.generation = Some(2);
/// assert!(filter.passes(&old, &new));
/// ```
pub struct Filter<K> {
    pass: Arc<Predicate<K>>,
}

/// The predicate of a [`Filter`]: `(old, new)`.
type Predicate<K> = dyn Fn(&K, &K) -> bool + Send + Sync;

impl<K> Clone for Filter<K> {
    fn clone(&self) -> Self {
        Self {
            pass: Arc::clone(&self.pass),
        }
    }
}

impl<K> fmt::Debug for Filter<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Filter").finish_non_exhaustive()
    }
}

impl<K: 'static> Filter<K> {
    /// A filter of one's own: `pass(old, new)` says whether the update queues the key
    /// (controller-runtime's `NewPredicateFuncs` for updates).
    pub fn new(pass: impl Fn(&K, &K) -> bool + Send + Sync + 'static) -> Self {
        Self {
            pass: Arc::new(pass),
        }
    }

    /// Whether the update from `old` to `new` passes.
    pub fn passes(&self, old: &K, new: &K) -> bool {
        (self.pass)(old, new)
    }

    /// Passes when both pass (controller-runtime's `And`).
    #[must_use]
    pub fn and(self, other: Filter<K>) -> Self {
        Self::new(move |old, new| self.passes(old, new) && other.passes(old, new))
    }

    /// Passes when either passes (controller-runtime's `Or`).
    #[must_use]
    pub fn or(self, other: Filter<K>) -> Self {
        Self::new(move |old, new| self.passes(old, new) || other.passes(old, new))
    }
}

impl<K: HasMetadata> Filter<K> {
    /// `metadata.generation` changed (a write to the spec, on kinds that track it), or the
    /// object was just marked for deletion (`deletionTimestamp` set), which the server does
    /// not count as a new generation (see [`Filter`]). Kinds without a
    /// generation (ConfigMaps, Secrets, ...) pass only the deletion mark.
    pub fn generation_changed() -> Self {
        Self::new(|old: &K, new: &K| {
            old.generation() != new.generation()
                || (old.deletion_timestamp().is_none() && new.deletion_timestamp().is_some())
        })
    }

    /// `metadata.labels` changed (controller-runtime's `LabelChangedPredicate`).
    pub fn labels_changed() -> Self {
        Self::new(|old: &K, new: &K| old.labels() != new.labels())
    }

    /// `metadata.annotations` changed (controller-runtime's `AnnotationChangedPredicate`).
    pub fn annotations_changed() -> Self {
        Self::new(|old: &K, new: &K| old.annotations() != new.annotations())
    }

    /// `metadata.resourceVersion` changed: drops resyncs only
    /// (controller-runtime's `ResourceVersionChangedPredicate`).
    pub fn resource_version_changed() -> Self {
        Self::new(|old: &K, new: &K| old.resource_version() != new.resource_version())
    }
}

/// Several filters that must all pass (those given to one watch), `None` when there is none.
pub(crate) fn all<K: 'static>(filters: Option<Filter<K>>, next: Filter<K>) -> Option<Filter<K>> {
    Some(match filters {
        Some(f) => f.and(next),
        None => next,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

    fn cm(rv: &str, generation: Option<i64>, label: &str, note: &str) -> ConfigMap {
        let mut cm = ConfigMap::default();
        cm.metadata.resource_version = Some(rv.to_owned());
        cm.metadata.generation = generation;
        cm.metadata.labels = Some([("l".to_owned(), label.to_owned())].into());
        cm.metadata.annotations = Some([("a".to_owned(), note.to_owned())].into());
        cm
    }

    #[test]
    fn metadata_filters_compare_their_field() {
        let old = cm("1", Some(1), "x", "n");
        let cases = [
            (cm("2", Some(2), "x", "n"), [true, false, false, true]),
            (cm("2", Some(1), "y", "n"), [false, true, false, true]),
            (cm("2", Some(1), "x", "m"), [false, false, true, true]),
            // A resync: the same object.
            (cm("1", Some(1), "x", "n"), [false, false, false, false]),
        ];
        for (new, want) in cases {
            let got = [
                Filter::generation_changed().passes(&old, &new),
                Filter::labels_changed().passes(&old, &new),
                Filter::annotations_changed().passes(&old, &new),
                Filter::resource_version_changed().passes(&old, &new),
            ];
            assert_eq!(got, want, "{:?}", new.metadata);
        }
    }

    #[test]
    fn generation_changed_passes_the_deletion_mark_once() {
        let old = cm("1", None, "x", "n");
        let mut marked = cm("2", None, "x", "n");
        marked.metadata.deletion_timestamp = Some(Time(jiff::Timestamp::UNIX_EPOCH));
        let filter = Filter::<ConfigMap>::generation_changed();
        assert!(filter.passes(&old, &marked));
        assert!(!filter.passes(&marked, &marked));
    }

    #[test]
    fn combinators() {
        let yes = Filter::<u8>::new(|_, _| true);
        let no = Filter::<u8>::new(|_, _| false);
        assert!(!yes.clone().and(no.clone()).passes(&0, &0));
        assert!(yes.clone().or(no.clone()).passes(&0, &0));
        assert!(all(None, yes.clone()).is_some_and(|f| f.passes(&0, &0)));
        assert!(!all(Some(yes), no).is_some_and(|f| f.passes(&0, &0)));
    }
}
