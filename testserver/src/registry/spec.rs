//! The Kubernetes v1.35 OpenAPI documents this server embeds, and what it reads from them.
//!
//! kube-apiserver publishes the schemas of its built-in types at `/openapi/v2` and
//! `/openapi/v3/{api,apis/{group}}/{version}`; kubectl reads them for `explain`, for
//! client-side validation and to decide whether the server validates fields itself. The same
//! documents carry everything else the server needs to know about a built-in type: which
//! resources exist (the paths and their `x-kubernetes-action`s), how a strategic merge patch
//! merges each list (`x-kubernetes-patch-strategy`, `x-kubernetes-patch-merge-key`), how
//! server-side apply merges it (`x-kubernetes-list-type`, `x-kubernetes-list-map-keys`,
//! `x-kubernetes-map-type`), and the schema objects are validated against. So the server
//! embeds the real files (vendored gzip-compressed under `testserver/openapi/`, see its
//! `SOURCE.md`), decompresses and parses each once per process on first use, and serves them
//! unchanged.
//!
//! [`Schema`] walks a schema node the same way whether it comes from the v2 definitions
//! (`$ref: #/definitions/...`) or from a CRD's `openAPIV3Schema` (no references), so the
//! patch, apply and validation code have one view of both.

use std::collections::BTreeMap;
use std::io::Read;
use std::sync::OnceLock;

use serde_json::Value;

use crate::registry::{ResourceInfo, ScalePaths};

/// The gzip-compressed `swagger.json` of Kubernetes v1.35.
const SWAGGER_GZ: &[u8] = include_bytes!("../../openapi/swagger.json.gz");

/// The gzip-compressed OpenAPI v3 documents, by their path under `/openapi/v3/`.
const V3_GZ: &[(&str, &[u8])] = &include!("../../openapi/v3_files.rs");

fn gunzip(what: &str, gz: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(gz.len() * 12);
    // The input is a file vendored into this crate and checked by a test: failing to inflate
    // it is a build defect, not a run-time condition.
    flate2::read::GzDecoder::new(gz)
        .read_to_end(&mut out)
        .unwrap_or_else(|e| panic!("the vendored OpenAPI document {what} is corrupt: {e}"));
    out
}

/// `swagger.json`, the bytes served at `/openapi/v2`.
pub(crate) fn v2_bytes() -> &'static [u8] {
    static BYTES: OnceLock<Vec<u8>> = OnceLock::new();
    BYTES.get_or_init(|| gunzip("swagger.json", SWAGGER_GZ))
}

/// `swagger.json`, parsed.
pub(crate) fn v2() -> &'static Value {
    static DOC: OnceLock<Value> = OnceLock::new();
    DOC.get_or_init(|| {
        serde_json::from_slice(v2_bytes())
            .unwrap_or_else(|e| panic!("the vendored swagger.json is not JSON: {e}"))
    })
}

/// The OpenAPI v3 document of one group/version (`api/v1`, `apis/apps/v1`), as served.
pub(crate) fn v3_bytes(path: &str) -> Option<&'static [u8]> {
    static DOCS: OnceLock<BTreeMap<&'static str, OnceLock<Vec<u8>>>> = OnceLock::new();
    let docs = DOCS.get_or_init(|| V3_GZ.iter().map(|(p, _)| (*p, OnceLock::new())).collect());
    let (key, cell) = docs.get_key_value(path)?;
    let gz = V3_GZ.iter().find(|(p, _)| p == key)?.1;
    Some(cell.get_or_init(|| gunzip(key, gz)))
}

/// The group/version paths that have an OpenAPI v3 document (`api/v1`, `apis/apps/v1`, ...).
pub(crate) fn v3_paths() -> impl Iterator<Item = &'static str> {
    V3_GZ.iter().map(|(p, _)| *p)
}

/// A schema node and the definitions its `$ref`s resolve against.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Schema<'a> {
    /// `definitions` of the v2 document, or `Null` for a self-contained schema (a CRD's).
    definitions: &'a Value,
    node: &'a Value,
    /// The node as written where it is used, before references are followed: a property's
    /// extensions (`x-kubernetes-patch-strategy`, `x-kubernetes-list-type`, ...) may sit
    /// beside its `$ref`.
    site: &'a Value,
}

impl<'a> Schema<'a> {
    /// A self-contained schema, such as a CRD version's `openAPIV3Schema`.
    pub fn standalone(node: &'a Value) -> Self {
        Self {
            definitions: &Value::Null,
            node,
            site: node,
        }
        .resolved()
    }

    /// The node itself, with `$ref` and single-element `allOf` references followed.
    pub fn node(self) -> &'a Value {
        self.node
    }

    fn at(self, node: &'a Value) -> Self {
        Self {
            definitions: self.definitions,
            node,
            site: node,
        }
        .resolved()
    }

    fn resolved(mut self) -> Self {
        // Bounded: the v2 definitions never reference a reference, but a CRD schema is user
        // input and must not loop.
        for _ in 0..8 {
            if let Some(r) = self.node.get("$ref").and_then(Value::as_str) {
                let name = r.rsplit('/').next().unwrap_or_default();
                match self.definitions.get(name) {
                    Some(n) => self.node = n,
                    None => return self,
                }
            } else if let Some([only]) = self
                .node
                .get("allOf")
                .and_then(Value::as_array)
                .map(Vec::as_slice)
            {
                self.node = only;
            } else {
                return self;
            }
        }
        self
    }

    /// The schema of property `name`, if declared.
    pub fn property(self, name: &str) -> Option<Self> {
        self.node
            .get("properties")
            .and_then(|p| p.get(name))
            .map(|n| self.at(n))
    }

    /// The schema of a list's items.
    pub fn items(self) -> Option<Self> {
        self.node.get("items").map(|n| self.at(n))
    }

    /// The schema of a map's values (`additionalProperties` when it is a schema).
    pub fn additional_properties(self) -> Option<Self> {
        self.node
            .get("additionalProperties")
            .filter(|n| n.is_object())
            .map(|n| self.at(n))
    }

    /// A string-valued keyword or extension, such as `type` or `x-kubernetes-list-type`
    /// (where it is used first, then on the referenced schema).
    pub fn str(self, key: &str) -> Option<&'a str> {
        self.get(key).and_then(Value::as_str)
    }

    /// A keyword or extension as JSON (where it is used first, then on the referenced
    /// schema).
    pub fn get(self, key: &str) -> Option<&'a Value> {
        self.site.get(key).or_else(|| self.node.get(key))
    }

    /// `x-kubernetes-list-map-keys` (or the v2 patch merge key when that is all there is).
    pub fn list_map_keys(self) -> Vec<&'a str> {
        match self
            .node
            .get("x-kubernetes-list-map-keys")
            .and_then(Value::as_array)
        {
            Some(keys) => keys.iter().filter_map(Value::as_str).collect(),
            None => self
                .str("x-kubernetes-patch-merge-key")
                .into_iter()
                .collect(),
        }
    }
}

/// The schema of a built-in kind, from the v2 definitions.
pub(crate) fn builtin_schema(group: &str, version: &str, kind: &str) -> Option<Schema<'static>> {
    static BY_GVK: OnceLock<BTreeMap<(String, String, String), String>> = OnceLock::new();
    let doc = v2();
    let by_gvk = BY_GVK.get_or_init(|| {
        let mut m = BTreeMap::new();
        for (name, def) in doc["definitions"].as_object().into_iter().flatten() {
            for gvk in def["x-kubernetes-group-version-kind"]
                .as_array()
                .into_iter()
                .flatten()
            {
                let s = |k: &str| gvk[k].as_str().unwrap_or_default().to_owned();
                // ListOptions, DeleteOptions, WatchEvent and friends name every group; the
                // kind's own definition is the one whose name ends in the kind.
                if name.rsplit('.').next() == Some(gvk["kind"].as_str().unwrap_or_default()) {
                    m.entry((s("group"), s("version"), s("kind")))
                        .or_insert_with(|| name.clone());
                }
            }
        }
        m
    });
    let name = by_gvk.get(&(group.to_owned(), version.to_owned(), kind.to_owned()))?;
    Some(
        Schema {
            definitions: &doc["definitions"],
            node: &doc["definitions"][name.as_str()],
            site: &doc["definitions"][name.as_str()],
        }
        .resolved(),
    )
}

/// The deprecation warning kube-apiserver sends with every answer about a deprecated built-in
/// kind (`Warning: 299 - "v1 ComponentStatus is deprecated in v1.19+"`), or `None`.
///
/// kube-apiserver takes the releases from the types' `prerelease-lifecycle-gen` tags and words
/// the warning in `k8s.io/apiserver/pkg/endpoints/deprecation` (`WarningMessage`):
/// `{group/version} {Kind} is deprecated in v{major}.{minor}+`, then `; use {group/version}
/// {Kind}` when the type names its replacement. The same tags write the sentence
/// `Deprecated: This API is deprecated in v1.33+. Use discoveryv1.EndpointSlice.` into the
/// type's description in the OpenAPI document, which is where this server reads them; the
/// replacement's Go package (`discoveryv1`) is resolved to the served group whose first
/// label and version it names.
fn deprecation_warning(group: &str, version: &str, kind: &str) -> Option<&'static str> {
    static WARNINGS: OnceLock<BTreeMap<(String, String, String), String>> = OnceLock::new();
    let warnings = WARNINGS.get_or_init(|| {
        let defs = v2()["definitions"].as_object();
        let gvks = || {
            defs.into_iter().flatten().filter_map(|(name, def)| {
                let gvk = def["x-kubernetes-group-version-kind"].as_array()?.first()?;
                let s = |k: &str| gvk[k].as_str().unwrap_or_default().to_owned();
                // The kind's own definition, not the options kinds that name every group.
                (name.rsplit('.').next() == gvk["kind"].as_str())
                    .then(|| (def, (s("group"), s("version"), s("kind"))))
            })
        };
        let mut m = BTreeMap::new();
        for (def, (g, v, k)) in gvks() {
            let Some(text) = def["description"].as_str() else {
                continue;
            };
            let Some((release, rest)) = text
                .split_once("This API is deprecated in v")
                .and_then(|(_, rest)| rest.split_once('+'))
            else {
                continue;
            };
            let api_version = |g: &str, v: &str| {
                if g.is_empty() {
                    v.to_owned()
                } else {
                    format!("{g}/{v}")
                }
            };
            let mut warning = format!("{} {k} is deprecated in v{release}+", api_version(&g, &v));
            // ". Use discoveryv1.EndpointSlice."
            let replacement = rest
                .trim_start_matches('.')
                .trim_start()
                .strip_prefix("Use ")
                .and_then(|r| r.split_whitespace().next())
                .map(|r| r.trim_end_matches('.'))
                .and_then(|r| r.split_once('.'));
            if let Some((package, new_kind)) = replacement {
                let found = gvks().find(|(_, (rg, rv, rk))| {
                    rk == new_kind
                        && package.strip_suffix(rv.as_str()).is_some_and(|p| {
                            p == rg.split('.').next().unwrap_or_default()
                                || (p == "core" && rg.is_empty())
                        })
                });
                if let Some((_, (rg, rv, rk))) = found {
                    warning.push_str(&format!("; use {} {rk}", api_version(&rg, &rv)));
                }
            }
            m.insert((g, v, k), warning);
        }
        m
    });
    warnings
        .get(&(group.to_owned(), version.to_owned(), kind.to_owned()))
        .map(String::as_str)
}

/// Short names and categories kube-apiserver's registries declare (they are not in the
/// OpenAPI document). `(group, plural, short names, in category "all")`.
const SHORT_NAMES: &[(&str, &str, &[&str], bool)] = &[
    ("", "componentstatuses", &["cs"], false),
    ("", "configmaps", &["cm"], false),
    ("", "endpoints", &["ep"], false),
    ("", "events", &["ev"], false),
    ("", "limitranges", &["limits"], false),
    ("", "namespaces", &["ns"], false),
    ("", "nodes", &["no"], false),
    ("", "persistentvolumeclaims", &["pvc"], false),
    ("", "persistentvolumes", &["pv"], false),
    ("", "pods", &["po"], true),
    ("", "replicationcontrollers", &["rc"], true),
    ("", "resourcequotas", &["quota"], false),
    ("", "serviceaccounts", &["sa"], false),
    ("", "services", &["svc"], true),
    ("apps", "daemonsets", &["ds"], true),
    ("apps", "deployments", &["deploy"], true),
    ("apps", "replicasets", &["rs"], true),
    ("apps", "statefulsets", &["sts"], true),
    ("autoscaling", "horizontalpodautoscalers", &["hpa"], true),
    ("batch", "cronjobs", &["cj"], true),
    ("batch", "jobs", &[], true),
    (
        "certificates.k8s.io",
        "certificatesigningrequests",
        &["csr"],
        false,
    ),
    ("events.k8s.io", "events", &["ev"], false),
    ("networking.k8s.io", "ingresses", &["ing"], false),
    ("networking.k8s.io", "networkpolicies", &["netpol"], false),
    ("policy", "poddisruptionbudgets", &["pdb"], false),
    ("scheduling.k8s.io", "priorityclasses", &["pc"], false),
    ("storage.k8s.io", "storageclasses", &["sc"], false),
    (
        "apiextensions.k8s.io",
        "customresourcedefinitions",
        &["crd", "crds"],
        false,
    ),
];

/// Field selectors each registry accepts beyond `metadata.name` and `metadata.namespace`
/// (its `GetAttrs`/`SelectableFields`).
const SELECTABLE: &[(&str, &str, &[&str])] = &[
    ("", "namespaces", &["status.phase"]),
    (
        "",
        "pods",
        &[
            "spec.nodeName",
            "spec.restartPolicy",
            "spec.schedulerName",
            "spec.serviceAccountName",
            "spec.hostNetwork",
            "status.phase",
            "status.podIP",
            "status.nominatedNodeName",
        ],
    ),
    ("", "secrets", &["type"]),
    ("", "nodes", &["spec.unschedulable"]),
    ("", "replicationcontrollers", &["status.replicas"]),
    (
        "",
        "events",
        &[
            "involvedObject.kind",
            "involvedObject.namespace",
            "involvedObject.name",
            "involvedObject.uid",
            "involvedObject.apiVersion",
            "involvedObject.resourceVersion",
            "involvedObject.fieldPath",
            "reason",
            "reportingComponent",
            "source",
            "type",
        ],
    ),
    (
        "events.k8s.io",
        "events",
        &[
            "regarding.kind",
            "regarding.namespace",
            "regarding.name",
            "reason",
            "type",
        ],
    ),
    ("apps", "replicasets", &["status.replicas"]),
    ("batch", "jobs", &["status.successful"]),
    (
        "certificates.k8s.io",
        "certificatesigningrequests",
        &["spec.signerName"],
    ),
];

/// Whether a version is generally available (`v1`, `v2`): kube-apiserver serves beta and alpha
/// versions only when enabled with `--runtime-config`, and this server serves GA versions.
fn is_ga(version: &str) -> bool {
    version
        .strip_prefix('v')
        .is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()))
}

/// Every built-in resource of Kubernetes v1.35 kube-apiserver serves by default, derived from
/// the v2 document's paths: one [`ResourceInfo`] per group/plural, at the newest GA version
/// (`autoscaling/v2` for horizontal pod autoscalers; the older `autoscaling/v1` needs a
/// conversion this server does not do), with its verbs and its `status`/`scale`
/// subresources.
pub(crate) fn builtin_resources() -> Vec<ResourceInfo> {
    // (group, plural) -> (version, kind, namespaced, verbs, subresources)
    struct Found {
        version: String,
        kind: String,
        namespaced: bool,
        verbs: Vec<String>,
        subresources: Vec<String>,
    }
    let mut found: BTreeMap<(String, String), Found> = BTreeMap::new();
    let paths = v2()["paths"].as_object().into_iter().flatten();
    for (path, item) in paths {
        let segs: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
        let (group, version, rest) = match segs.as_slice() {
            ["api", v, rest @ ..] => ("", *v, rest),
            ["apis", g, v, rest @ ..] => (*g, *v, rest),
            _ => continue,
        };
        if !is_ga(version) {
            continue;
        }
        let (namespaced, rest) = match rest {
            ["namespaces", "{namespace}", rest @ ..] if !rest.is_empty() => (true, rest),
            // The deprecated `/watch/` paths repeat the others.
            ["watch", ..] => continue,
            r => (false, r),
        };
        let Some(plural) = rest.first().map(|p| p.to_string()) else {
            continue;
        };
        if plural.starts_with('{') {
            continue;
        }
        let sub = match rest {
            [_, "{name}", sub] => Some(*sub),
            [_, "{name}"] | [_] => None,
            _ => continue,
        };
        for (method, op) in item.as_object().into_iter().flatten() {
            let Some(action) = op["x-kubernetes-action"].as_str() else {
                continue;
            };
            let gvk = &op["x-kubernetes-group-version-kind"];
            let key = (group.to_owned(), plural.clone());
            if let Some(sub) = sub {
                if let Some(f) = found.get_mut(&key)
                    && f.version == version
                    && !f.subresources.iter().any(|s| s == sub)
                {
                    f.subresources.push(sub.to_owned());
                }
                continue;
            }
            let verb = match (action, method.as_str()) {
                ("post", _) => "create",
                ("put", _) => "update",
                ("deletecollection", _) => "deletecollection",
                (a @ ("get" | "list" | "watch" | "patch" | "delete"), _) => a,
                _ => continue,
            };
            let kind = gvk["kind"].as_str().unwrap_or_default();
            let entry = found.entry(key).or_insert_with(|| Found {
                version: version.to_owned(),
                kind: kind.to_owned(),
                namespaced,
                verbs: Vec::new(),
                subresources: Vec::new(),
            });
            // The newest GA version wins (v2 over v1).
            if version_rank(version) > version_rank(&entry.version) {
                *entry = Found {
                    version: version.to_owned(),
                    kind: kind.to_owned(),
                    namespaced,
                    verbs: Vec::new(),
                    subresources: Vec::new(),
                };
            }
            if entry.version == version {
                entry.namespaced |= namespaced;
                if !entry.verbs.iter().any(|v| v == verb) {
                    entry.verbs.push(verb.to_owned());
                }
            }
        }
    }
    // Subresource paths may come before their resource's: a second pass attaches them.
    for (path, _) in v2()["paths"].as_object().into_iter().flatten() {
        let segs: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
        let (group, version, rest) = match segs.as_slice() {
            ["api", v, rest @ ..] => ("", *v, rest),
            ["apis", g, v, rest @ ..] => (*g, *v, rest),
            _ => continue,
        };
        let rest = match rest {
            ["namespaces", "{namespace}", rest @ ..] if !rest.is_empty() => rest,
            r => r,
        };
        if let [plural, "{name}", sub] = rest
            && let Some(f) = found.get_mut(&(group.to_owned(), plural.to_string()))
            && f.version == *version
            && !f.subresources.iter().any(|s| s == sub)
        {
            f.subresources.push(sub.to_string());
        }
    }
    found
        .into_iter()
        .filter(|(_, f)| !f.kind.is_empty())
        .map(|((group, plural), f)| {
            let mut verbs = f.verbs;
            // Watches are declared on the deprecated `/watch/` paths this walk skips; every
            // listable built-in is watchable.
            if verbs.iter().any(|v| v == "list") {
                verbs.push("watch".to_owned());
            }
            verbs.sort();
            let short = SHORT_NAMES
                .iter()
                .find(|(g, p, _, _)| *g == group && *p == plural);
            let selectable = SELECTABLE
                .iter()
                .find(|(g, p, _)| *g == group && *p == plural)
                .map(|(_, _, f)| f.iter().map(|s| s.to_string()).collect())
                .unwrap_or_default();
            let has = |s: &str| f.subresources.iter().any(|x| x == s);
            let deprecation = deprecation_warning(&group, &f.version, &f.kind).map(str::to_owned);
            ResourceInfo {
                singular: f.kind.to_ascii_lowercase(),
                short_names: short
                    .map(|(_, _, s, _)| s.iter().map(|s| s.to_string()).collect())
                    .unwrap_or_default(),
                categories: if short.is_some_and(|s| s.3) {
                    vec!["all".to_owned()]
                } else if group == "apiextensions.k8s.io" {
                    vec!["api-extensions".to_owned()]
                } else {
                    Vec::new()
                },
                status_subresource: has("status"),
                scale: has("scale").then(|| ScalePaths {
                    spec_replicas: ".spec.replicas".into(),
                    status_replicas: ".status.replicas".into(),
                    label_selector: Some(".status.selector".into()),
                }),
                printer_columns: Vec::new(),
                selectable_fields: selectable,
                verbs,
                subresources: f.subresources,
                deprecation_warning: deprecation,
                group,
                version: f.version,
                kind: f.kind,
                plural,
                namespaced: f.namespaced,
            }
        })
        .collect()
}

/// Orders GA versions: `v2` > `v1`.
fn version_rank(version: &str) -> u32 {
    version
        .strip_prefix('v')
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vendored_spec_matches_corpus() {
        let corpus =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus/openapi");
        let swagger = std::fs::read(corpus.join("swagger.json")).expect("corpus swagger.json");
        assert!(
            swagger == v2_bytes(),
            "testserver/openapi/swagger.json.gz is stale"
        );
        let mut n = 0;
        for entry in std::fs::read_dir(corpus.join("v3")).expect("corpus v3") {
            let path = entry.expect("dir entry").path();
            let file = path
                .file_name()
                .and_then(|f| f.to_str())
                .unwrap_or_default();
            let key = file.trim_end_matches("_openapi.json").replace("__", "/");
            let bytes = std::fs::read(&path).expect("corpus v3 file");
            assert!(
                v3_bytes(&key) == Some(&bytes[..]),
                "{file} is stale or missing"
            );
            n += 1;
        }
        assert_eq!(n, v3_paths().count());
    }

    #[test]
    fn deprecated_kinds_are_read_from_the_descriptions() {
        assert_eq!(
            deprecation_warning("", "v1", "ComponentStatus"),
            Some("v1 ComponentStatus is deprecated in v1.19+")
        );
        assert_eq!(
            deprecation_warning("", "v1", "Endpoints"),
            Some("v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice")
        );
        assert_eq!(deprecation_warning("", "v1", "Pod"), None);
        assert_eq!(deprecation_warning("apps", "v1", "Deployment"), None);
    }

    #[test]
    fn builtins_come_from_the_paths() {
        let all = builtin_resources();
        let get = |g: &str, p: &str| all.iter().find(|r| r.group == g && r.plural == p);
        let pods = get("", "pods").expect("pods");
        assert!(pods.namespaced && pods.status_subresource && pods.scale.is_none());
        assert!(pods.subresources.iter().any(|s| s == "exec"));
        assert_eq!(pods.short_names, ["po"]);
        let deploy = get("apps", "deployments").expect("deployments");
        assert!(deploy.scale.is_some() && deploy.verbs.contains(&"watch".to_owned()));
        assert_eq!(
            get("autoscaling", "horizontalpodautoscalers")
                .unwrap()
                .version,
            "v2"
        );
        let nodes = get("", "nodes").expect("nodes");
        assert!(!nodes.namespaced);
        let ssar = get("authorization.k8s.io", "selfsubjectaccessreviews").unwrap();
        assert_eq!(ssar.verbs, ["create"]);
        // No alpha or beta version is served by default.
        assert!(all.iter().all(|r| is_ga(&r.version)));
        assert!(all.len() > 50, "{}", all.len());
    }

    #[test]
    fn schemas_resolve_references() {
        let deploy = builtin_schema("apps", "v1", "Deployment").expect("Deployment");
        let containers = deploy
            .property("spec")
            .and_then(|s| s.property("template"))
            .and_then(|t| t.property("spec"))
            .and_then(|s| s.property("containers"))
            .expect("containers");
        assert_eq!(containers.str("x-kubernetes-patch-strategy"), Some("merge"));
        assert_eq!(containers.list_map_keys(), ["name"]);
        let image = containers.items().and_then(|c| c.property("image"));
        assert_eq!(image.and_then(|i| i.str("type")), Some("string"));
    }
}
