//! What kinform needs to know about a Kubernetes object type.
//!
//! Two traits split the static and the per-object knowledge, so that untyped objects
//! (`DynamicObject`, `PartialObjectMetadata`) can flow through the same store, FIFO and
//! informer as generated types:
//!
//! - [`HasMetadata`]: access to an object's `ObjectMeta`. This is all the caches need: keys are
//!   computed from it (client-go's `MetaNamespaceKeyFunc`).
//! - [`Resource`]: the type's group, version, kind, plural and scope, known at compile time.
//!   Typed `Api<K>` constructors use it; dynamic types pass an [`ApiResource`] instead.
//!
//! [`HasMetadata`]'s provided methods are the accessors of kube-rs's `ResourceExt`, borrowed
//! (their differences are on the trait).
//!
//! Every k8s-openapi type with `ObjectMeta` gets both through blanket impls, as kube-core does;
//! generated and derived custom resource types implement them directly.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    ManagedFieldsEntry, ObjectMeta, OwnerReference, Time,
};
use serde::{Deserialize, Serialize, de::DeserializeOwned};

/// Whether objects of a resource live inside a namespace.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Scope {
    /// Objects live in a namespace (`/namespaces/{ns}/{plural}`).
    Namespaced,
    /// Objects are cluster-wide (`/{plural}`).
    Cluster,
}

/// Access to an object's `ObjectMeta`.
///
/// The provided methods are the accessors kube-rs users know from `ResourceExt`
/// (`name_any`, `namespace`, `labels`, `annotations`, `owner_references`, `finalizers`,
/// `uid`, `resource_version`, `creation_timestamp`, `managed_fields` and the `_mut` forms),
/// borrowed, never cloned. Where kube-rs answers owned `String`s these answer `&str`, and
/// `""` where it answers `None` for an unset name, uid or resourceVersion (an unset and an
/// empty value mean the same to the API server). kube-rs's panicking `name_unchecked` has no
/// counterpart: [`HasMetadata::name`] answers `""` instead.
pub trait HasMetadata: Send + Sync + 'static {
    /// The object's metadata.
    fn metadata(&self) -> &ObjectMeta;
    /// The object's metadata, mutably.
    fn metadata_mut(&mut self) -> &mut ObjectMeta;

    /// The type's in-place decoders for the informers' watch path, when it has them: an
    /// opaque value only kinform-client reads (its `custom_in_place!` macro writes this
    /// method for a generated or derived type). `None`, the default, keeps the type on the
    /// serde path; k8s-openapi's types are found by kinform-client without it.
    #[doc(hidden)]
    fn __in_place() -> Option<&'static (dyn std::any::Any + Send + Sync)>
    where
        Self: Sized,
    {
        None
    }

    /// `metadata.name`, or `""` when unset.
    fn name(&self) -> &str {
        self.metadata().name.as_deref().unwrap_or("")
    }
    /// `metadata.namespace`, or `None` for cluster-scoped objects.
    fn namespace(&self) -> Option<&str> {
        self.metadata()
            .namespace
            .as_deref()
            .filter(|ns| !ns.is_empty())
    }
    /// `metadata.resourceVersion`, or `""` when unset.
    fn resource_version(&self) -> &str {
        self.metadata().resource_version.as_deref().unwrap_or("")
    }
    /// `metadata.uid`, or `""` when unset.
    fn uid(&self) -> &str {
        self.metadata().uid.as_deref().unwrap_or("")
    }
    /// The cache key: `namespace/name`, or `name` for cluster-scoped objects.
    fn key(&self) -> String {
        object_key(self.namespace(), self.name())
    }
    /// `metadata.name`, or `metadata.generateName` when the name is not set yet (an object
    /// about to be created), as kube-rs's `ResourceExt::name_any`.
    fn name_any(&self) -> &str {
        match self.name() {
            "" => self.metadata().generate_name.as_deref().unwrap_or(""),
            name => name,
        }
    }
    /// `metadata.labels`, empty when unset.
    fn labels(&self) -> &BTreeMap<String, String> {
        self.metadata().labels.as_ref().unwrap_or(&EMPTY_MAP)
    }
    /// `metadata.annotations`, empty when unset.
    fn annotations(&self) -> &BTreeMap<String, String> {
        self.metadata().annotations.as_ref().unwrap_or(&EMPTY_MAP)
    }
    /// `metadata.ownerReferences`, empty when unset.
    fn owner_references(&self) -> &[OwnerReference] {
        self.metadata().owner_references.as_deref().unwrap_or(&[])
    }
    /// `metadata.finalizers`, empty when unset.
    fn finalizers(&self) -> &[String] {
        self.metadata().finalizers.as_deref().unwrap_or(&[])
    }
    /// `metadata.managedFields`, empty when unset (informer caches drop it unless asked to
    /// keep it).
    fn managed_fields(&self) -> &[ManagedFieldsEntry] {
        self.metadata().managed_fields.as_deref().unwrap_or(&[])
    }
    /// `metadata.creationTimestamp`, set by the API server on create.
    fn creation_timestamp(&self) -> Option<&Time> {
        self.metadata().creation_timestamp.as_ref()
    }
    /// `metadata.deletionTimestamp`: set once deletion was asked for while finalizers hold
    /// the object.
    fn deletion_timestamp(&self) -> Option<&Time> {
        self.metadata().deletion_timestamp.as_ref()
    }
    /// `metadata.generation`: the version of the desired state (spec) on kinds that track
    /// it, `None` on others.
    fn generation(&self) -> Option<i64> {
        self.metadata().generation
    }
    /// `metadata.labels` to change, created empty when unset.
    fn labels_mut(&mut self) -> &mut BTreeMap<String, String> {
        self.metadata_mut().labels.get_or_insert_with(BTreeMap::new)
    }
    /// `metadata.annotations` to change, created empty when unset.
    fn annotations_mut(&mut self) -> &mut BTreeMap<String, String> {
        self.metadata_mut()
            .annotations
            .get_or_insert_with(BTreeMap::new)
    }
    /// `metadata.ownerReferences` to change, created empty when unset.
    fn owner_references_mut(&mut self) -> &mut Vec<OwnerReference> {
        self.metadata_mut()
            .owner_references
            .get_or_insert_with(Vec::new)
    }
    /// `metadata.finalizers` to change, created empty when unset.
    fn finalizers_mut(&mut self) -> &mut Vec<String> {
        self.metadata_mut().finalizers.get_or_insert_with(Vec::new)
    }
    /// `metadata.managedFields` to change, created empty when unset.
    fn managed_fields_mut(&mut self) -> &mut Vec<ManagedFieldsEntry> {
        self.metadata_mut()
            .managed_fields
            .get_or_insert_with(Vec::new)
    }
}

/// What [`HasMetadata::labels`] and [`HasMetadata::annotations`] answer when unset.
static EMPTY_MAP: BTreeMap<String, String> = BTreeMap::new();

/// Static type information of a Kubernetes resource.
pub trait Resource: HasMetadata + Clone + Serialize + DeserializeOwned {
    /// API group, `""` for the core group.
    const GROUP: &'static str;
    /// API version within the group, e.g. `v1`.
    const VERSION: &'static str;
    /// `apiVersion` as written in objects: `group/version`, or `version` for the core group.
    const API_VERSION: &'static str;
    /// Kind, e.g. `Pod`.
    const KIND: &'static str;
    /// Plural resource name used in URLs, e.g. `pods`.
    const PLURAL: &'static str;
    /// Namespaced or cluster-scoped.
    const SCOPE: Scope;

    /// The same information as a runtime value.
    fn api_resource() -> ApiResource {
        ApiResource {
            group: Cow::Borrowed(Self::GROUP),
            version: Cow::Borrowed(Self::VERSION),
            kind: Cow::Borrowed(Self::KIND),
            plural: Cow::Borrowed(Self::PLURAL),
            scope: Self::SCOPE,
        }
    }
}

/// A GroupVersionResource with its kind and scope, known at run time.
///
/// Used by dynamic clients and informers for resources without generated types. Make one
/// with [`ApiResource::new`] (from discovery, a CRD, configuration), or from a typed
/// resource with [`Resource::api_resource`] (kube-rs's `ApiResource::erase`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ApiResource {
    /// API group, `""` for the core group.
    pub group: Cow<'static, str>,
    /// API version within the group.
    pub version: Cow<'static, str>,
    /// Kind.
    pub kind: Cow<'static, str>,
    /// Plural resource name used in URLs.
    pub plural: Cow<'static, str>,
    /// Namespaced or cluster-scoped.
    pub scope: Scope,
}

impl ApiResource {
    /// The resource `plural` of kind `kind` in `group` (`""` for the core group) at
    /// `version`, namespaced or not (kube-rs's `ApiResource::from_gvk_with_plural`, with
    /// the scope, which kinform's clients need to build URLs). Nothing is checked against a
    /// server: a wrong plural or scope shows as 404s.
    ///
    /// ```
    /// use kinform_core::resource::{ApiResource, Scope};
    ///
    /// let crontabs = ApiResource::new("stable.example.com", "v1", "CronTab", "crontabs", Scope::Namespaced);
    /// assert_eq!(crontabs.api_version(), "stable.example.com/v1");
    /// assert_eq!(
    ///     crontabs.collection_path(Some("default")),
    ///     "/apis/stable.example.com/v1/namespaces/default/crontabs"
    /// );
    /// ```
    pub fn new(
        group: impl Into<Cow<'static, str>>,
        version: impl Into<Cow<'static, str>>,
        kind: impl Into<Cow<'static, str>>,
        plural: impl Into<Cow<'static, str>>,
        scope: Scope,
    ) -> Self {
        Self {
            group: group.into(),
            version: version.into(),
            kind: kind.into(),
            plural: plural.into(),
            scope,
        }
    }

    /// `apiVersion` as written in objects.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.to_string()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// The URL prefix of the group version: `/api/v1` or `/apis/{group}/{version}`.
    pub fn group_version_path(&self) -> String {
        if self.group.is_empty() {
            format!("/api/{}", self.version)
        } else {
            format!("/apis/{}/{}", self.group, self.version)
        }
    }

    /// The collection URL path, in `namespace` when given and the resource is namespaced.
    pub fn collection_path(&self, namespace: Option<&str>) -> String {
        let base = self.group_version_path();
        match (self.scope, namespace) {
            (Scope::Namespaced, Some(ns)) => format!("{base}/namespaces/{ns}/{}", self.plural),
            _ => format!("{base}/{}", self.plural),
        }
    }
}

impl fmt::Display for ApiResource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.group.is_empty() {
            write!(f, "{}/{}", self.version, self.plural)
        } else {
            write!(f, "{}/{}/{}", self.group, self.version, self.plural)
        }
    }
}

/// The cache key of an object: `namespace/name`, or `name` when `namespace` is `None` or empty.
pub fn object_key(namespace: Option<&str>, name: &str) -> String {
    match namespace {
        Some(ns) if !ns.is_empty() => {
            let mut key = String::with_capacity(ns.len() + 1 + name.len());
            key.push_str(ns);
            key.push('/');
            key.push_str(name);
            key
        }
        _ => name.to_owned(),
    }
}

/// Splits a cache key into `(namespace, name)`, as client-go's `SplitMetaNamespaceKey`.
pub fn split_key(key: &str) -> (Option<&str>, &str) {
    match key.split_once('/') {
        Some((ns, name)) => (Some(ns), name),
        None => (None, key),
    }
}

/// Maps k8s-openapi's scope marker types to [`Scope`].
pub trait ScopeMarker {
    /// The scope the marker stands for.
    const SCOPE: Scope;
}

impl ScopeMarker for k8s_openapi::NamespaceResourceScope {
    const SCOPE: Scope = Scope::Namespaced;
}

impl ScopeMarker for k8s_openapi::ClusterResourceScope {
    const SCOPE: Scope = Scope::Cluster;
}

impl<K> HasMetadata for K
where
    K: k8s_openapi::Metadata<Ty = ObjectMeta> + Send + Sync + 'static,
{
    fn metadata(&self) -> &ObjectMeta {
        k8s_openapi::Metadata::metadata(self)
    }
    fn metadata_mut(&mut self) -> &mut ObjectMeta {
        k8s_openapi::Metadata::metadata_mut(self)
    }
}

impl<K, S> Resource for K
where
    K: k8s_openapi::Resource<Scope = S>
        + k8s_openapi::Metadata<Ty = ObjectMeta>
        + Clone
        + Serialize
        + DeserializeOwned
        + Send
        + Sync
        + 'static,
    S: ScopeMarker,
{
    const GROUP: &'static str = <K as k8s_openapi::Resource>::GROUP;
    const VERSION: &'static str = <K as k8s_openapi::Resource>::VERSION;
    const API_VERSION: &'static str = <K as k8s_openapi::Resource>::API_VERSION;
    const KIND: &'static str = <K as k8s_openapi::Resource>::KIND;
    const PLURAL: &'static str = <K as k8s_openapi::Resource>::URL_PATH_SEGMENT;
    const SCOPE: Scope = S::SCOPE;
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{Namespace, Pod};

    #[test]
    fn k8s_openapi_types_are_resources() {
        assert_eq!(Pod::PLURAL, "pods");
        assert_eq!(Pod::SCOPE, Scope::Namespaced);
        assert_eq!(Namespace::SCOPE, Scope::Cluster);
        let ar = Pod::api_resource();
        assert_eq!(
            ar.collection_path(Some("default")),
            "/api/v1/namespaces/default/pods"
        );
        assert_eq!(ar.collection_path(None), "/api/v1/pods");
        let dep = k8s_openapi::api::apps::v1::Deployment::api_resource();
        assert_eq!(dep.api_version(), "apps/v1");
        assert_eq!(dep.to_string(), "apps/v1/deployments");
    }

    #[test]
    fn api_resources_are_made_from_their_parts() {
        // Owned strings (from discovery, say) and literals alike.
        let group = String::from("apps");
        let made = ApiResource::new(group, "v1", "Deployment", "deployments", Scope::Namespaced);
        assert_eq!(made, k8s_openapi::api::apps::v1::Deployment::api_resource());
        let core = ApiResource::new("", "v1", "Namespace", "namespaces", Scope::Cluster);
        assert_eq!(core, Namespace::api_resource());
        assert_eq!(core.api_version(), "v1");
        assert_eq!(core.collection_path(Some("ignored")), "/api/v1/namespaces");
    }

    #[test]
    fn keys() {
        let mut pod = Pod::default();
        pod.metadata.name = Some("web".into());
        assert_eq!(pod.key(), "web");
        pod.metadata.namespace = Some("prod".into());
        assert_eq!(pod.key(), "prod/web");
        assert_eq!(split_key("prod/web"), (Some("prod"), "web"));
        assert_eq!(split_key("node-1"), (None, "node-1"));
    }

    #[test]
    fn resource_ext_accessors() {
        let mut pod = Pod::default();
        pod.metadata.generate_name = Some("web-".into());
        assert_eq!(pod.name_any(), "web-");
        assert!(pod.labels().is_empty() && pod.annotations().is_empty());
        assert!(pod.owner_references().is_empty() && pod.finalizers().is_empty());
        pod.metadata.name = Some("web-1".into());
        pod.metadata.labels = Some(BTreeMap::from([("app".into(), "web".into())]));
        pod.metadata.finalizers = Some(vec!["example.com/hold".into()]);
        assert_eq!(pod.name_any(), "web-1");
        assert_eq!(pod.labels()["app"], "web");
        assert_eq!(pod.finalizers(), ["example.com/hold"]);
    }

    #[test]
    fn identity_and_time_accessors() {
        let mut pod = Pod::default();
        assert_eq!((pod.uid(), pod.resource_version()), ("", ""));
        assert_eq!(pod.namespace(), None);
        assert!(pod.creation_timestamp().is_none() && pod.deletion_timestamp().is_none());
        assert!(pod.managed_fields().is_empty() && pod.generation().is_none());
        // An empty namespace is no namespace, as the API server reads it.
        pod.metadata.namespace = Some(String::new());
        assert_eq!(pod.namespace(), None);
        let created: Time = serde_json::from_str("\"2026-01-02T03:04:05Z\"").unwrap();
        pod.metadata = ObjectMeta {
            name: Some("web".into()),
            namespace: Some("prod".into()),
            uid: Some("0b7c".into()),
            resource_version: Some("42".into()),
            generation: Some(3),
            creation_timestamp: Some(created.clone()),
            deletion_timestamp: Some(created.clone()),
            managed_fields: Some(vec![ManagedFieldsEntry {
                manager: Some("kubectl".into()),
                ..Default::default()
            }]),
            ..Default::default()
        };
        assert_eq!(pod.namespace(), Some("prod"));
        assert_eq!((pod.uid(), pod.resource_version()), ("0b7c", "42"));
        assert_eq!(pod.generation(), Some(3));
        assert_eq!(pod.creation_timestamp(), Some(&created));
        assert_eq!(pod.deletion_timestamp(), Some(&created));
        assert_eq!(pod.managed_fields()[0].manager.as_deref(), Some("kubectl"));
    }

    #[test]
    fn mut_accessors_create_what_is_unset() {
        let mut pod = Pod::default();
        pod.labels_mut().insert("app".into(), "web".into());
        pod.annotations_mut().insert("note".into(), "x".into());
        pod.finalizers_mut().push("example.com/hold".into());
        pod.owner_references_mut().push(OwnerReference {
            name: "rs".into(),
            ..Default::default()
        });
        pod.managed_fields_mut().clear();
        assert_eq!(pod.metadata.labels.as_ref().unwrap()["app"], "web");
        assert_eq!(pod.metadata.annotations.as_ref().unwrap()["note"], "x");
        assert_eq!(pod.finalizers(), ["example.com/hold"]);
        assert_eq!(pod.owner_references()[0].name, "rs");
        assert_eq!(pod.metadata.managed_fields, Some(vec![]));
        // Existing values are changed in place, not replaced.
        pod.labels_mut().insert("tier".into(), "front".into());
        assert_eq!(pod.labels().len(), 2);
        pod.finalizers_mut().retain(|f| f != "example.com/hold");
        assert!(pod.finalizers().is_empty());
    }
}
