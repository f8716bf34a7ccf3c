//! Which resources the server serves: the built-ins registered at start and the versions of
//! every CustomResourceDefinition created since.
//!
//! As the real apiextensions-apiserver does, creating a CRD makes each of its `served`
//! versions available at once under `/apis/{group}/{version}` with the CRD's scope, plural,
//! kind, short names, categories, printer columns and `status`/`scale` subresources; deleting
//! the CRD removes them (and its objects). All versions of a resource share one storage
//! (`group/plural`); CRDs are served with conversion strategy `None` semantics: reading through
//! another version only rewrites `apiVersion`. The core and `events.k8s.io` Events are two
//! versions of one resource, converted field by field (`events`). A CRD's group must be a
//! domain with a dot and, in the protected `*.k8s.io` and `*.kubernetes.io` groups, carry
//! the `api-approved.kubernetes.io` annotation ([`validate_crd`]); a CRD naming a built-in
//! resource is stored but never replaces it ([`is_builtin_resource`]).

pub(crate) mod builtin;
pub(crate) mod events;
pub(crate) mod spec;
pub(crate) mod strategy;

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;

use crate::status::ApiError;

/// One served group/version/resource.
#[derive(Clone, Debug, PartialEq)]
#[must_use]
pub struct ResourceInfo {
    /// API group, `""` for the core group.
    pub group: String,
    /// Version, e.g. `v1`.
    pub version: String,
    /// Kind, e.g. `Pod`.
    pub kind: String,
    /// Plural resource name, e.g. `pods`.
    pub plural: String,
    /// Singular name, e.g. `pod`.
    pub singular: String,
    /// Whether objects live in namespaces.
    pub namespaced: bool,
    /// Short names (`po`).
    pub short_names: Vec<String>,
    /// Categories (`all`).
    pub categories: Vec<String>,
    /// Whether a `status` subresource separates status writes from spec writes.
    pub status_subresource: bool,
    /// The `scale` subresource, when declared.
    pub scale: Option<ScalePaths>,
    /// Printer columns from a CRD's `additionalPrinterColumns` (name, type, jsonPath).
    pub printer_columns: Vec<(String, String, String)>,
    /// Field selectors accepted beyond `metadata.name` and `metadata.namespace`.
    pub selectable_fields: Vec<String>,
    /// The verbs discovery lists (`create`, `get`, `list`, ...).
    pub verbs: Vec<String>,
    /// Subresources beyond `status` and `scale` that discovery lists (`exec`, `log`, ...).
    pub subresources: Vec<String>,
    /// The `Warning` every answer about the resource carries when its version is deprecated
    /// (`v1 ComponentStatus is deprecated in v1.19+`): a built-in's from the OpenAPI
    /// document, a deprecated CRD version's `deprecationWarning` or the default text.
    pub deprecation_warning: Option<String>,
}

impl ResourceInfo {
    /// The verbs of a resource with the generic registry's full API (every CRD's).
    pub const ALL_VERBS: [&'static str; 8] = [
        "create",
        "delete",
        "deletecollection",
        "get",
        "list",
        "patch",
        "update",
        "watch",
    ];

    /// Whether the resource answers `verb`.
    pub fn has_verb(&self, verb: &str) -> bool {
        self.verbs.iter().any(|v| v == verb)
    }

    /// `v1` or `apps/v1`.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// The storage shared by all versions: `group/plural`.
    pub fn storage_key(&self) -> String {
        if events::is_event(self) {
            // Both Event APIs read and write one store (module `events`).
            return events::STORAGE_KEY.to_owned();
        }
        format!("{}/{}", self.group, self.plural)
    }

    /// Whether this is the CRD resource itself.
    pub fn is_crd(&self) -> bool {
        self.group == "apiextensions.k8s.io" && self.plural == "customresourcedefinitions"
    }

    /// Whether this is the core namespaces resource.
    pub fn is_namespace(&self) -> bool {
        self.group.is_empty() && self.plural == "namespaces"
    }

    /// Whether `field` may be used in a field selector.
    pub fn field_supported(&self, field: &str) -> bool {
        field == "metadata.name"
            || field == "metadata.namespace"
            || self.selectable_fields.iter().any(|f| f == field)
    }
}

/// Where a resource keeps what its `scale` subresource shows (JSON paths like
/// `.spec.replicas`, as in a CRD's `subresources.scale`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScalePaths {
    /// `specReplicasPath`.
    pub spec_replicas: String,
    /// `statusReplicasPath`.
    pub status_replicas: String,
    /// `labelSelectorPath`.
    pub label_selector: Option<String>,
}

/// Where a group comes in discovery (kube-apiserver's group priorities put these first).
fn group_priority(group: &str) -> usize {
    const FIRST: &[&str] = &[
        "",
        "apiregistration.k8s.io",
        "apps",
        "events.k8s.io",
        "authentication.k8s.io",
        "authorization.k8s.io",
        "autoscaling",
        "batch",
        "certificates.k8s.io",
        "networking.k8s.io",
        "policy",
        "rbac.authorization.k8s.io",
        "storage.k8s.io",
        "admissionregistration.k8s.io",
        "apiextensions.k8s.io",
        "scheduling.k8s.io",
        "coordination.k8s.io",
        "node.k8s.io",
        "discovery.k8s.io",
        "flowcontrol.apiserver.k8s.io",
        "resource.k8s.io",
    ];
    FIRST
        .iter()
        .position(|g| *g == group)
        .unwrap_or(FIRST.len())
}

/// The set of served resources.
#[derive(Clone, Debug, Default)]
pub struct Registry {
    /// `(group, version, plural)` to resource.
    resources: BTreeMap<(String, String, String), Arc<ResourceInfo>>,
    /// Group to its versions in preference order.
    groups: BTreeMap<String, Vec<String>>,
    /// The order in which groups were first registered (discovery lists them so).
    group_order: Vec<String>,
}

impl Registry {
    /// The built-in resources a fresh server serves: every resource of Kubernetes v1.35's
    /// GA versions, from the embedded OpenAPI document (see [`super::spec::builtin_resources`]).
    pub fn with_builtins() -> Self {
        let mut r = Self::default();
        // Discovery lists the groups in kube-apiserver's order: the core group, then the
        // groups most clients look for first.
        let mut all = crate::registry::spec::builtin_resources();
        all.sort_by_key(|i| (group_priority(&i.group), i.group.clone(), i.plural.clone()));
        for info in all {
            r.add(info);
        }
        r
    }

    /// Registers (or replaces) one resource version. A group's versions are kept in
    /// Kubernetes' priority order ([`version_priority`], highest first), as discovery lists
    /// them: the first is the group's preferred version, the one kubectl uses for a resource
    /// named without a version.
    pub fn add(&mut self, info: ResourceInfo) {
        let versions = self.groups.entry(info.group.clone()).or_default();
        if !versions.contains(&info.version) {
            versions.push(info.version.clone());
            versions.sort_by(|a, b| version_preference(a, b));
        }
        if !self.group_order.contains(&info.group) {
            self.group_order.push(info.group.clone());
        }
        self.resources.insert(
            (
                info.group.clone(),
                info.version.clone(),
                info.plural.clone(),
            ),
            Arc::new(info),
        );
    }

    /// Removes every version of `group/plural`.
    pub fn remove(&mut self, group: &str, plural: &str) {
        self.resources
            .retain(|(g, _, p), _| !(g == group && p == plural));
        let remaining: Vec<String> = self
            .resources
            .keys()
            .filter(|(g, _, _)| g == group)
            .map(|(_, v, _)| v.clone())
            .collect();
        if let Some(versions) = self.groups.get_mut(group) {
            versions.retain(|v| remaining.contains(v));
            if versions.is_empty() {
                self.groups.remove(group);
                self.group_order.retain(|g| g != group);
            }
        }
    }

    /// The resource served at `group/version/plural`.
    pub fn get(&self, group: &str, version: &str, plural: &str) -> Option<Arc<ResourceInfo>> {
        self.resources
            .get(&(group.to_owned(), version.to_owned(), plural.to_owned()))
            .cloned()
    }

    /// The resource for an object's `apiVersion` and `kind`.
    pub fn by_kind(&self, api_version: &str, kind: &str) -> Option<Arc<ResourceInfo>> {
        let (group, version) = split_api_version(api_version);
        self.resources
            .iter()
            .find(|((g, v, _), info)| g == group && v == version && info.kind == kind)
            .map(|(_, i)| i.clone())
    }

    /// Whether `group/version` is served.
    pub fn has_group_version(&self, group: &str, version: &str) -> bool {
        self.groups
            .get(group)
            .is_some_and(|vs| vs.iter().any(|v| v == version))
    }

    /// The resources of one group/version.
    pub fn resources_of(&self, group: &str, version: &str) -> Vec<Arc<ResourceInfo>> {
        self.resources
            .iter()
            .filter(|((g, v, _), _)| g == group && v == version)
            .map(|(_, i)| i.clone())
            .collect()
    }

    /// Named groups (not the core group) with their versions, preferred first.
    pub fn groups(&self) -> Vec<(String, Vec<String>)> {
        self.group_order
            .iter()
            .filter(|g| !g.is_empty())
            .filter_map(|g| self.groups.get(g).map(|vs| (g.clone(), vs.clone())))
            .collect()
    }
}

/// Whether `group/plural` is a built-in resource. A CRD naming one is stored but does not
/// take its place: kube-apiserver's built-in handlers answer before apiextensions-apiserver
/// is asked.
pub fn is_builtin_resource(group: &str, plural: &str) -> bool {
    type ByGroup = std::collections::BTreeMap<String, std::collections::BTreeSet<String>>;
    static BUILTIN: std::sync::OnceLock<ByGroup> = std::sync::OnceLock::new();
    BUILTIN
        .get_or_init(|| {
            let mut by_group = ByGroup::new();
            for i in spec::builtin_resources() {
                by_group.entry(i.group).or_default().insert(i.plural);
            }
            by_group
        })
        .get(group)
        .is_some_and(|plurals| plurals.contains(plural))
}

/// The order of a group's versions in discovery, most preferred first, as apimachinery's
/// `version.CompareKubeAwareVersionStrings` ranks them: Kubernetes-like versions
/// (`v<major>[alpha|beta<minor>]`) before others, GA before beta before alpha, then the
/// higher major, then the higher minor; other versions in lexical order.
pub fn version_preference(a: &str, b: &str) -> std::cmp::Ordering {
    match (kube_version(a), kube_version(b)) {
        (Some(x), Some(y)) => y.cmp(&x),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => a.cmp(b),
    }
}

/// `(stability, major, minor)` of a Kubernetes-like version: stability 2 for GA, 1 beta, 0
/// alpha. Numbers too large for a u64 make the version not Kubernetes-like, as Go's `Atoi`
/// failing does.
fn kube_version(v: &str) -> Option<(u8, u64, u64)> {
    let rest = v.strip_prefix('v')?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return None;
    }
    let major: u64 = rest[..digits].parse().ok()?;
    let tail = &rest[digits..];
    if tail.is_empty() {
        return Some((2, major, 0));
    }
    let (stability, minor) = if let Some(m) = tail.strip_prefix("beta") {
        (1, m)
    } else {
        (0, tail.strip_prefix("alpha")?)
    };
    if minor.is_empty() || !minor.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((stability, major, minor.parse().ok()?))
}

/// Splits `apps/v1` into `("apps", "v1")` and `v1` into `("", "v1")`.
pub fn split_api_version(api_version: &str) -> (&str, &str) {
    api_version.split_once('/').unwrap_or(("", api_version))
}

/// The annotation a CRD of a protected group (`k8s.io`, `kubernetes.io` and their
/// subdomains) must carry.
const API_APPROVED: &str = "api-approved.kubernetes.io";

/// Where the API approval of a protected group is explained, as the messages cite it.
const API_APPROVAL_DOC: &str = "https://github.com/kubernetes/enhancements/pull/1111";

/// What apiextensions' `ValidateCustomResourceDefinition` checks of a CRD's group beyond
/// [`crd_resources`] (`old`: the stored CRD, on update): the group is a domain with a dot
/// (which refuses the built-in groups without one: `apps`, `batch`, `policy`, ...), and a
/// CRD of a protected group (`*.k8s.io`, `*.kubernetes.io`) carries the
/// `api-approved.kubernetes.io` annotation with a URL or a reason starting with
/// `unapproved` (`validateAPIApproval`; an update that leaves the approval state as it was
/// passes).
pub fn validate_crd(crd: &Value, old: Option<&Value>) -> Result<(), ApiError> {
    let name = crd["metadata"]["name"].as_str().unwrap_or_default();
    let group = crd["spec"]["group"].as_str().unwrap_or_default();
    if !group.is_empty() && !group.contains('.') {
        return Err(crd_invalid(
            name,
            "FieldValueInvalid",
            "spec.group",
            &format!("Invalid value: {group:?}: should be a domain with at least one dot"),
        ));
    }
    let protected = ["k8s.io", "kubernetes.io"]
        .iter()
        .any(|p| group == *p || group.ends_with(&format!(".{p}")));
    if !protected {
        return Ok(());
    }
    let state = |crd: &Value| approval_state(crd["metadata"]["annotations"][API_APPROVED].as_str());
    let new_state = state(crd);
    if old.is_some_and(|o| state(o) == new_state) {
        return Ok(());
    }
    let field = format!("metadata.annotations[{API_APPROVED}]");
    match new_state {
        Approval::Missing => Err(crd_invalid(
            name,
            "FieldValueRequired",
            &field,
            &format!(
                "Required value: protected groups must have approval annotation {API_APPROVED:?}, see {API_APPROVAL_DOC}"
            ),
        )),
        Approval::Invalid(value) => Err(crd_invalid(
            name,
            "FieldValueInvalid",
            &field,
            &format!(
                "Invalid value: {value:?}: protected groups must have approval annotation {API_APPROVED:?} with either a URL or a reason starting with \"unapproved\", see {API_APPROVAL_DOC}"
            ),
        )),
        Approval::Approved | Approval::Unapproved => Ok(()),
    }
}

/// 422 Invalid of a CRD with one cause, as `errors.NewInvalid` words it.
fn crd_invalid(name: &str, reason: &str, field: &str, message: &str) -> ApiError {
    let mut e = ApiError::new(
        422,
        "Invalid",
        format!(
            "CustomResourceDefinition.apiextensions.k8s.io {name:?} is invalid: {field}: {message}"
        ),
    );
    e.details = Some(serde_json::json!({
        "name": name, "group": "apiextensions.k8s.io", "kind": "CustomResourceDefinition",
        "causes": [{"reason": reason, "message": message, "field": field}],
    }));
    e
}

/// The approval states of `apihelpers.GetAPIApprovalState`.
#[derive(Debug, PartialEq)]
enum Approval {
    Missing,
    Invalid(String),
    Approved,
    Unapproved,
}

fn approval_state(annotation: Option<&str>) -> Approval {
    match annotation {
        None => Approval::Missing,
        Some(v) if v.starts_with("unapproved") => Approval::Unapproved,
        Some(v) if url_like(v) => Approval::Approved,
        Some(v) => Approval::Invalid(v.to_owned()),
    }
}

/// Whether an approval is a URL (`url.ParseRequestURI` accepts it): a scheme and a host, or
/// an absolute path.
fn url_like(v: &str) -> bool {
    if v.starts_with('/') {
        return !v.contains(char::is_whitespace);
    }
    v.split_once("://").is_some_and(|(scheme, rest)| {
        !scheme.is_empty()
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
            && !rest.is_empty()
            && !rest.contains(char::is_whitespace)
    })
}

/// The resource versions a CRD object declares as served.
pub fn crd_resources(crd: &Value) -> Result<Vec<ResourceInfo>, ApiError> {
    let name = crd["metadata"]["name"].as_str().unwrap_or_default();
    let invalid = |field: &str, msg: &str| {
        ApiError::invalid(
            "apiextensions.k8s.io",
            "CustomResourceDefinition",
            name,
            field,
            msg,
        )
    };
    let spec = &crd["spec"];
    let group = spec["group"]
        .as_str()
        .filter(|g| !g.is_empty())
        .ok_or_else(|| invalid("spec.group", "Required value"))?;
    let names = &spec["names"];
    let plural = names["plural"]
        .as_str()
        .filter(|p| !p.is_empty())
        .ok_or_else(|| invalid("spec.names.plural", "Required value"))?;
    let kind = names["kind"]
        .as_str()
        .filter(|k| !k.is_empty())
        .ok_or_else(|| invalid("spec.names.kind", "Required value"))?;
    if name != format!("{plural}.{group}") {
        return Err(invalid(
            "metadata.name",
            &format!("must be spec.names.plural+\".\"+spec.group ({plural}.{group})"),
        ));
    }
    let namespaced = match spec["scope"].as_str() {
        Some("Namespaced") => true,
        Some("Cluster") => false,
        _ => {
            return Err(invalid(
                "spec.scope",
                "Unsupported value: supported values: \"Cluster\", \"Namespaced\"",
            ));
        }
    };
    let strs = |v: &Value| -> Vec<String> {
        v.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    };
    let versions = spec["versions"]
        .as_array()
        .filter(|v| !v.is_empty())
        .ok_or_else(|| invalid("spec.versions", "Required value"))?;
    let mut out = Vec::new();
    for (i, v) in versions.iter().enumerate() {
        let version = v["name"]
            .as_str()
            .ok_or_else(|| invalid(&format!("spec.versions[{i}].name"), "Required value"))?;
        if !v["served"].as_bool().unwrap_or(false) {
            continue;
        }
        let columns = v["additionalPrinterColumns"]
            .as_array()
            .map(|cols| {
                cols.iter()
                    .filter_map(|c| {
                        Some((
                            c["name"].as_str()?.to_owned(),
                            c["type"].as_str().unwrap_or("string").to_owned(),
                            c["jsonPath"].as_str()?.to_owned(),
                        ))
                    })
                    .collect()
            })
            .unwrap_or_default();
        let selectable = v["selectableFields"]
            .as_array()
            .map(|fs| {
                fs.iter()
                    .filter_map(|f| f["jsonPath"].as_str())
                    .map(|p| p.trim_start_matches('.').to_owned())
                    .collect()
            })
            .unwrap_or_default();
        out.push(ResourceInfo {
            group: group.to_owned(),
            version: version.to_owned(),
            kind: kind.to_owned(),
            plural: plural.to_owned(),
            singular: names["singular"]
                .as_str()
                .map(str::to_owned)
                .unwrap_or_else(|| kind.to_ascii_lowercase()),
            namespaced,
            short_names: strs(&names["shortNames"]),
            categories: strs(&names["categories"]),
            status_subresource: v["subresources"]["status"].is_object(),
            scale: v["subresources"]["scale"].as_object().map(|sc| ScalePaths {
                spec_replicas: sc
                    .get("specReplicasPath")
                    .and_then(Value::as_str)
                    .unwrap_or(".spec.replicas")
                    .to_owned(),
                status_replicas: sc
                    .get("statusReplicasPath")
                    .and_then(Value::as_str)
                    .unwrap_or(".status.replicas")
                    .to_owned(),
                label_selector: sc
                    .get("labelSelectorPath")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
            }),
            printer_columns: columns,
            selectable_fields: selectable,
            verbs: ResourceInfo::ALL_VERBS
                .iter()
                .map(|v| v.to_string())
                .collect(),
            subresources: Vec::new(),
            deprecation_warning: v["deprecated"].as_bool().unwrap_or(false).then(|| {
                match v["deprecationWarning"].as_str() {
                    Some(text) => text.to_owned(),
                    None => crd_deprecation_warning(group, version, kind, versions),
                }
            }),
        });
    }
    Ok(out)
}

/// The apiextensions-apiserver's warning of a deprecated CRD version without a
/// `deprecationWarning`: `{group}/{version} {Kind} is deprecated`, then `; use
/// {group}/{version} {Kind}` naming the served, not deprecated version of the highest
/// priority above it (Kubernetes' version order: GA, then beta, then alpha, by number).
fn crd_deprecation_warning(group: &str, version: &str, kind: &str, versions: &[Value]) -> String {
    let mut text = format!("{group}/{version} {kind} is deprecated");
    let newer = versions
        .iter()
        .filter(|v| v["served"].as_bool() == Some(true) && v["deprecated"].as_bool() != Some(true))
        .filter_map(|v| v["name"].as_str())
        .filter(|v| version_preference(v, version).is_lt())
        .min_by(|a, b| version_preference(a, b));
    if let Some(newer) = newer {
        text.push_str(&format!("; use {group}/{newer} {kind}"));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn builtins_and_crd_versions() {
        let mut r = Registry::with_builtins();
        assert!(r.get("", "v1", "pods").unwrap().namespaced);
        assert!(r.get("events.k8s.io", "v1", "events").is_some());
        let crd = json!({
            "metadata": {"name": "widgets.example.com"},
            "spec": {"group": "example.com", "scope": "Cluster",
                     "names": {"plural": "widgets", "kind": "Widget", "shortNames": ["wd"]},
                     "versions": [
                        {"name": "v1", "served": true, "storage": true,
                         "subresources": {"status": {}}},
                        {"name": "v0", "served": false, "storage": false}]}
        });
        let infos = crd_resources(&crd).unwrap();
        assert_eq!(infos.len(), 1);
        assert!(infos[0].status_subresource && !infos[0].namespaced);
        for i in infos {
            r.add(i);
        }
        assert!(r.has_group_version("example.com", "v1"));
        r.remove("example.com", "widgets");
        assert!(!r.has_group_version("example.com", "v1"));
        assert!(!r.groups().iter().any(|(g, _)| g == "example.com"));
        let bad = json!({"metadata": {"name": "x"}, "spec": {"group": "example.com"}});
        assert_eq!(crd_resources(&bad).unwrap_err().code, 422);
    }

    /// apimachinery's `CompareKubeAwareVersionStrings`: GA, then beta, then alpha, higher
    /// numbers first, versions that are not Kubernetes-like last and lexically.
    #[test]
    fn versions_ordered_by_kube_aware_priority() {
        let mut vs = vec![
            "foo1",
            "v1alpha1",
            "v10",
            "v2beta1",
            "v1",
            "v11alpha2",
            "v12alpha1",
            "v1beta2",
            "v3beta1",
            "v2",
            "foo10",
            "v1beta",
            "v01",
        ];
        vs.sort_by(|a, b| version_preference(a, b));
        assert_eq!(
            vs,
            [
                "v10",
                "v2",
                "v1",
                "v01",
                "v3beta1",
                "v2beta1",
                "v1beta2",
                "v12alpha1",
                "v11alpha2",
                "v1alpha1",
                "foo1",
                "foo10",
                "v1beta",
            ]
        );
    }

    #[test]
    fn deprecated_crd_versions_name_the_version_to_use() {
        let crd = json!({
            "metadata": {"name": "widgets.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced",
                     "names": {"plural": "widgets", "kind": "Widget"},
                     "versions": [
                        {"name": "v1alpha1", "served": true, "storage": false, "deprecated": true},
                        {"name": "v1beta1", "served": true, "storage": false, "deprecated": true,
                         "deprecationWarning": "widgets v1beta1 go away"},
                        {"name": "v1", "served": true, "storage": true},
                        {"name": "v2alpha1", "served": true, "storage": false}]}
        });
        let warnings: Vec<_> = crd_resources(&crd)
            .unwrap()
            .into_iter()
            .map(|i| (i.version, i.deprecation_warning))
            .collect();
        assert_eq!(
            warnings,
            [
                (
                    "v1alpha1".to_owned(),
                    Some(
                        "example.com/v1alpha1 Widget is deprecated; use example.com/v1 Widget"
                            .to_owned()
                    )
                ),
                (
                    "v1beta1".to_owned(),
                    Some("widgets v1beta1 go away".to_owned())
                ),
                ("v1".to_owned(), None),
                ("v2alpha1".to_owned(), None),
            ]
        );
        let mut r = Registry::with_builtins();
        for i in crd_resources(&crd).unwrap() {
            r.add(i);
        }
        let versions = r
            .groups()
            .into_iter()
            .find(|(g, _)| g == "example.com")
            .unwrap()
            .1;
        assert_eq!(versions, ["v1", "v1beta1", "v2alpha1", "v1alpha1"]);
    }
}
