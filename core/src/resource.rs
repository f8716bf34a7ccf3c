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
//! [`HasMetadata`]'s provided methods are the accessors kube-rs users know from
//! `ResourceExt` (`name_any`, `namespace`, `labels`, `annotations`, `owner_references`,
//! `finalizers`, `uid`, `resource_version`), borrowed, never cloned.
//!
//! Every k8s-openapi type with `ObjectMeta` gets both through blanket impls, as kube-core does;
//! generated and derived custom resource types implement them directly.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
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
pub trait HasMetadata: Send + Sync + 'static {
    /// The object's metadata.
    fn metadata(&self) -> &ObjectMeta;
    /// The object's metadata, mutably.
    fn metadata_mut(&mut self) -> &mut ObjectMeta;

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
/// Used by dynamic clients and informers for resources without generated types.
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
}
