//! Groups, versions and resources: what clients, listers, informers and factory accessors are
//! emitted for.

use std::collections::{BTreeMap, BTreeSet};

/// Everything a generator run knows about: groups by name (`""` is the core group).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ApiModel {
    /// API groups by name.
    pub groups: BTreeMap<String, ApiGroup>,
}

/// One API group.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ApiGroup {
    /// Group name, `""` for the core group.
    pub name: String,
    /// Versions by name.
    pub versions: BTreeMap<String, GroupVersion>,
}

/// One version of a group.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GroupVersion {
    /// Group name, `""` for the core group.
    pub group: String,
    /// Version, e.g. `v1`.
    pub version: String,
    /// Resources by plural name.
    pub resources: BTreeMap<String, ResourceDef>,
}

/// Namespaced or cluster-scoped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scope {
    /// Lives in a namespace.
    Namespaced,
    /// Cluster-wide.
    Cluster,
}

/// A verb a resource (or subresource) supports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Verb {
    /// GET one object.
    Get,
    /// LIST the collection.
    List,
    /// WATCH the collection.
    Watch,
    /// POST a new object.
    Create,
    /// PUT (replace) an object.
    Update,
    /// PATCH an object.
    Patch,
    /// DELETE one object.
    Delete,
    /// DELETE the collection.
    DeleteCollection,
    /// CONNECT: an upgraded (exec, attach, portforward) or proxied (proxy) connection to a
    /// subresource (`x-kubernetes-action: connect`).
    Connect,
}

/// Where the Rust type of a resource's objects comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RootType {
    /// An existing type, named by its full path, e.g. `k8s_openapi::api::core::v1::Pod`.
    External(String),
    /// A type the generator emits from the type graph, by its Rust name.
    Generated(String),
}

/// A subresource such as `status`, `scale`, `eviction` or `log`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Subresource {
    /// Its name in the URL, e.g. `status`.
    pub name: String,
    /// Supported verbs (`Get`, `Update`, `Patch`, `Create`).
    pub verbs: BTreeSet<Verb>,
    /// The request/response body type when it differs from the resource's own (e.g.
    /// `k8s_openapi::api::autoscaling::v1::Scale`); `None` means the resource's type, and
    /// [`Subresource::streams`] means a byte stream (log).
    pub body_type: Option<RootType>,
    /// Whether the response is a stream of bytes (`pods/log`) rather than JSON.
    pub streams: bool,
    /// For `scale`: JSON paths of spec/status replicas and the label selector.
    pub scale_paths: Option<ScalePaths>,
}

/// The JSON paths a `scale` subresource reads (CRD `subresources.scale`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScalePaths {
    /// `.spec.replicas`.
    pub spec_replicas_path: String,
    /// `.status.replicas`.
    pub status_replicas_path: String,
    /// `.status.selector`, when set.
    pub label_selector_path: Option<String>,
}

/// A `kubectl get` column (CRD `additionalPrinterColumns`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrinterColumn {
    /// Column name.
    pub name: String,
    /// OpenAPI type of the value.
    pub type_: String,
    /// JSON path of the value.
    pub json_path: String,
    /// Description.
    pub description: Option<String>,
    /// Format hint.
    pub format: Option<String>,
    /// Priority (0 shows by default).
    pub priority: i32,
}

/// One resource of a group version.
#[derive(Clone, Debug, PartialEq)]
pub struct ResourceDef {
    /// Kind, e.g. `Pod`.
    pub kind: String,
    /// Plural name used in URLs, e.g. `pods`.
    pub plural: String,
    /// Singular name, when known.
    pub singular: Option<String>,
    /// List kind, e.g. `PodList`.
    pub list_kind: Option<String>,
    /// Scope.
    pub scope: Scope,
    /// Verbs on the resource itself.
    pub verbs: BTreeSet<Verb>,
    /// Subresources by name.
    pub subresources: BTreeMap<String, Subresource>,
    /// Short names (`po`).
    pub short_names: Vec<String>,
    /// Categories (`all`).
    pub categories: Vec<String>,
    /// Printer columns.
    pub printer_columns: Vec<PrinterColumn>,
    /// Whether this version is served.
    pub served: bool,
    /// Whether this version is the storage version.
    pub storage: bool,
    /// `Some(warning)` when the version is deprecated.
    pub deprecated: Option<Option<String>>,
    /// The Rust type of the objects.
    pub root: RootType,
    /// Documentation.
    pub docs: Option<String>,
}
