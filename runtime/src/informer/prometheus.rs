//! Prometheus export of the informers of a factory (feature `prometheus`): a
//! [`Collector`] that reads [`InformerFactory::informers`] at every scrape, so it costs
//! nothing between scrapes and needs no hook in the reflector's hot path.
//!
//! Every family has the labels `informer` (the informer's name, e.g. `v1/configmaps in
//! default`), `type` (the cached Rust type without paths, e.g. `ConfigMap` or `Lean<Pod>`),
//! `label_selector` and `field_selector` (empty when none):
//!
//! | name | kind | value |
//! | --- | --- | --- |
//! | `kinform_informer_synced` | gauge | 1 once the initial list reached the handlers, else 0 |
//! | `kinform_informer_objects` | gauge | objects in the cache |
//! | `kinform_informer_pending_notifications` | gauge | notifications waiting in the handlers' buffers |
//! | `kinform_reflector_lists_total` | counter | completed lists (paged or streaming) |
//! | `kinform_reflector_list_errors_total` | counter | failed LIST requests |
//! | `kinform_reflector_watches_total` | counter | watches opened |
//! | `kinform_reflector_short_watches_total` | counter | watches that ended in under a second without events |
//! | `kinform_reflector_watch_errors_total` | counter | failed watches |
//! | `kinform_reflector_items_listed_total` | counter | objects received by lists |
//! | `kinform_reflector_watch_events_total` | counter | watch events after the initial state, bookmarks included |
//! | `kinform_reflector_last_resource_version` | gauge | the last resourceVersion synced to, when it is an integer (as kube-apiserver's are) |
//!
//! client-go declares reflector metrics (`reflector_lists_total`, ...) behind a provider that
//! Kubernetes never installs; these are kinform's own names, prefixed so they cannot clash.

use prometheus::core::{Collector, Desc};
use prometheus::proto::MetricFamily;
use prometheus::{IntCounterVec, IntGaugeVec, Opts};

use super::factory::InformerFactory;
use super::snapshot::InformerSnapshot;

const LABELS: [&str; 4] = ["informer", "type", "label_selector", "field_selector"];

type Value = fn(&InformerSnapshot) -> Option<u64>;

/// The families, each a name, a help text, whether it is a counter, and its value.
const FAMILIES: [(&str, &str, bool, Value); 11] = [
    (
        "kinform_informer_synced",
        "Whether the informer's initial list has reached its handlers",
        false,
        |i| Some(u64::from(i.synced)),
    ),
    (
        "kinform_informer_objects",
        "Objects in the informer's cache",
        false,
        |i| Some(i.objects as u64),
    ),
    (
        "kinform_informer_pending_notifications",
        "Notifications waiting in the informer's handler buffers",
        false,
        |i| Some(i.pending_notifications as u64),
    ),
    (
        "kinform_reflector_lists_total",
        "Completed lists of the informer's reflector",
        true,
        |i| Some(i.reflector.lists),
    ),
    (
        "kinform_reflector_list_errors_total",
        "Failed LIST requests of the informer's reflector",
        true,
        |i| Some(i.reflector.list_errors),
    ),
    (
        "kinform_reflector_watches_total",
        "Watches opened by the informer's reflector",
        true,
        |i| Some(i.reflector.watches),
    ),
    (
        "kinform_reflector_short_watches_total",
        "Watches of the informer's reflector that ended in under a second without events",
        true,
        |i| Some(i.reflector.short_watches),
    ),
    (
        "kinform_reflector_watch_errors_total",
        "Failed watches of the informer's reflector",
        true,
        |i| Some(i.reflector.watch_errors),
    ),
    (
        "kinform_reflector_items_listed_total",
        "Objects received by the lists of the informer's reflector",
        true,
        |i| Some(i.reflector.items_listed),
    ),
    (
        "kinform_reflector_watch_events_total",
        "Watch events received by the informer's reflector after its initial state",
        true,
        |i| Some(i.reflector.watch_events),
    ),
    (
        "kinform_reflector_last_resource_version",
        "The last resourceVersion the informer's reflector synced to, when an integer",
        false,
        |i| i.reflector.last_resource_version.parse().ok(),
    ),
];

/// A fresh metric vector of one family.
enum Vector {
    Counter(IntCounterVec),
    Gauge(IntGaugeVec),
}

/// One family: its vector and how an informer's value is read.
struct Family {
    vector: Vector,
    value: Value,
}

impl Family {
    /// `None` if prometheus refuses the family (it cannot: the names, help texts and labels
    /// are valid constants, as the unit test checks).
    fn new((name, help, counter, value): &(&str, &str, bool, Value)) -> Option<Self> {
        let opts = Opts::new(*name, *help);
        let vector = if *counter {
            Vector::Counter(IntCounterVec::new(opts, &LABELS).ok()?)
        } else {
            Vector::Gauge(IntGaugeVec::new(opts, &LABELS).ok()?)
        };
        Some(Self {
            vector,
            value: *value,
        })
    }

    fn set(&self, labels: &[&str; 4], value: u64) {
        match &self.vector {
            Vector::Counter(c) => c.with_label_values(labels).inc_by(value),
            Vector::Gauge(g) => g
                .with_label_values(labels)
                .set(i64::try_from(value).unwrap_or(i64::MAX)),
        }
    }

    fn desc(&self) -> Vec<&Desc> {
        match &self.vector {
            Vector::Counter(c) => c.desc(),
            Vector::Gauge(g) => g.desc(),
        }
    }

    fn collect(&self) -> Vec<MetricFamily> {
        match &self.vector {
            Vector::Counter(c) => c.collect(),
            Vector::Gauge(g) => g.collect(),
        }
    }
}

fn families() -> Vec<Family> {
    FAMILIES.iter().filter_map(Family::new).collect()
}

/// The informer metrics of one or more factories, read at each scrape. Register it in a
/// [`prometheus::Registry`] (`registry.register(Box::new(metrics))`), or let the admin
/// endpoint add it beside a registry's own metrics.
pub struct PrometheusInformerMetrics {
    factories: Vec<InformerFactory>,
    descs: Vec<Family>,
}

impl std::fmt::Debug for PrometheusInformerMetrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PrometheusInformerMetrics")
            .field("factories", &self.factories.len())
            .finish_non_exhaustive()
    }
}

impl PrometheusInformerMetrics {
    /// The metrics of `factory`'s informers, those created later included.
    pub fn new(factory: &InformerFactory) -> Self {
        Self::of(std::slice::from_ref(factory))
    }

    /// The metrics of the informers of several factories.
    pub fn of(factories: &[InformerFactory]) -> Self {
        Self {
            factories: factories.to_vec(),
            descs: families(),
        }
    }

    /// The names of the families (to tell them from a registry's own).
    pub fn names() -> impl Iterator<Item = &'static str> {
        FAMILIES.iter().map(|(name, ..)| *name)
    }
}

impl Collector for PrometheusInformerMetrics {
    fn desc(&self) -> Vec<&Desc> {
        self.descs.iter().flat_map(Family::desc).collect()
    }

    fn collect(&self) -> Vec<MetricFamily> {
        let out = families();
        // A family without a sample cannot be encoded: only those given one are collected.
        let mut sampled = vec![false; out.len()];
        for informer in self.factories.iter().flat_map(InformerFactory::informers) {
            let labels = [
                informer.name.as_str(),
                informer.cache_type.as_str(),
                informer.scope.label_selector.as_deref().unwrap_or(""),
                informer.scope.field_selector.as_deref().unwrap_or(""),
            ];
            for (family, sampled) in out.iter().zip(sampled.iter_mut()) {
                if let Some(v) = (family.value)(&informer) {
                    family.set(&labels, v);
                    *sampled = true;
                }
            }
        }
        out.iter()
            .zip(sampled)
            .filter(|(_, sampled)| *sampled)
            .flat_map(|(family, _)| family.collect())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_family_is_valid_and_named_once() {
        let f = families();
        assert_eq!(f.len(), FAMILIES.len());
        let mut names: Vec<&str> = PrometheusInformerMetrics::names().collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), FAMILIES.len());
        assert!(f.iter().all(|f| f.desc().len() == 1));
    }
}
