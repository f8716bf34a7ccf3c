//! [`InformerSnapshot`]: what one informer of an [`InformerFactory`](super::InformerFactory)
//! looks like now, whatever its object type ([`InformerFactory::informers`](super::InformerFactory::informers)):
//! the read-only view the admin endpoint's state page and the informer metrics are built from.

use super::factory::InformerScope;
use crate::reflector::MetricsSnapshot;
use kinform_core::resource::ApiResource;

/// One informer of a factory, as it is at the moment of the call.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct InformerSnapshot {
    /// The informer's name (its reflector's), e.g. `v1/configmaps in default`.
    pub name: String,
    /// The resource it lists and watches.
    pub resource: ApiResource,
    /// The Rust type it caches, without module paths (`ConfigMap`, `Lean<Pod>`,
    /// `PartialObjectMetadata`, `DynamicObject`): two informers of one resource and scope
    /// may cache different types.
    pub cache_type: String,
    /// Its namespace and selectors.
    pub scope: InformerScope,
    /// Whether the factory started it (and has not shut it down since).
    pub started: bool,
    /// Whether its tasks run now.
    pub running: bool,
    /// Whether its initial list has been stored and handed to the handlers
    /// (client-go's `HasSynced`).
    pub synced: bool,
    /// Objects in its cache.
    pub objects: usize,
    /// Notifications waiting in its handlers' buffers (the handlers' backlog).
    pub pending_notifications: usize,
    /// Its reflector's counters: lists, watches, errors, the last resourceVersion.
    pub reflector: MetricsSnapshot,
}

/// `type_name` without module paths: `k8s_openapi::api::core::v1::Pod` is `Pod`,
/// `kinform_core::lean::Lean<k8s_openapi::api::core::v1::Pod>` is `Lean<Pod>`.
pub(crate) fn short_type_name(full: &str) -> String {
    let mut out = String::with_capacity(full.len());
    let mut segment = String::new();
    for c in full.chars() {
        if c.is_alphanumeric() || c == '_' || c == ':' {
            segment.push(c);
        } else {
            out.push_str(segment.rsplit("::").next().unwrap_or(&segment));
            segment.clear();
            out.push(c);
        }
    }
    out.push_str(segment.rsplit("::").next().unwrap_or(&segment));
    out
}

#[cfg(test)]
mod tests {
    use super::short_type_name;

    #[test]
    fn module_paths_are_cut_inside_generics_too() {
        assert_eq!(short_type_name("k8s_openapi::api::core::v1::Pod"), "Pod");
        assert_eq!(
            short_type_name("kinform_core::lean::Lean<k8s_openapi::api::core::v1::Pod>"),
            "Lean<Pod>"
        );
        assert_eq!(short_type_name("a::B<c::D, e::F>"), "B<D, F>");
        assert_eq!(short_type_name("Plain"), "Plain");
    }
}
