//! `/openapi/v2` and `/openapi/v3`: the published schemas, as kube-apiserver publishes them.
//!
//! kubectl reads them for `kubectl explain` (v3), to compute client-side apply patches (v3:
//! a kind whose PATCH operation accepts `application/strategic-merge-patch+json` gets a
//! strategic merge patch, any other a JSON merge patch), and to learn that the server
//! validates fields itself (`QueryParamVerifierV3`: a PATCH operation of the kind that lists
//! the `fieldValidation` parameter), in which case it sends `fieldValidation=Strict` instead of
//! validating on the client.
//!
//! - Built-in group versions are answered with the real Kubernetes v1.35 documents, byte for
//!   byte (module `spec`); the v3 index lists only the group versions this server serves.
//! - The group versions of CRDs get a document built the way apiextensions-apiserver builds
//!   one: list and item paths per resource (the PATCH operation takes JSON patch, merge patch
//!   and apply patch, not strategic merge patch, as for every custom resource), and the
//!   version's `openAPIV3Schema` as the kind's schema, with `metadata` referring to
//!   `ObjectMeta` and the `x-kubernetes-group-version-kind` extension.
//! - `/openapi/v2` answers the real v1.35 `swagger.json` to clients that accept JSON. It does
//!   not include CRD definitions, and a client that accepts only the protobuf form (client-go's
//!   OpenAPI v2 client) gets 404, which kubectl treats as "no v2 document" and falls back on
//!   v3 or its built-in types.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde_json::{Value, json};

use crate::registry::ResourceInfo;
use crate::registry::spec;
use crate::storage::Inner;

fn gv_path(group: &str, version: &str) -> String {
    if group.is_empty() {
        format!("api/{version}")
    } else {
        format!("apis/{group}/{version}")
    }
}

/// Every served group/version, the core one first.
fn all_gvs(inner: &Inner) -> Vec<(String, String)> {
    let named = inner
        .registry
        .groups()
        .into_iter()
        .flat_map(|(g, vs)| vs.into_iter().map(move |v| (g.clone(), v)));
    std::iter::once((String::new(), "v1".to_owned()))
        .chain(named)
        .collect()
}

fn hash(bytes: &[u8]) -> String {
    let h = bytes.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    format!("{h:016X}")
}

/// The hash of a vendored document, computed once.
fn builtin_hash(path: &str) -> Option<&'static str> {
    static HASHES: OnceLock<BTreeMap<&'static str, OnceLock<String>>> = OnceLock::new();
    let hashes = HASHES.get_or_init(|| spec::v3_paths().map(|p| (p, OnceLock::new())).collect());
    let cell = hashes.get(path)?;
    let bytes = spec::v3_bytes(path)?;
    Some(cell.get_or_init(|| hash(bytes)).as_str())
}

/// Whether a served group/version is a built-in one, answered with the vendored document.
fn is_builtin(inner: &Inner, group: &str, version: &str) -> bool {
    spec::v3_bytes(&gv_path(group, version)).is_some()
        && inner
            .registry
            .resources_of(group, version)
            .iter()
            .all(|r| inner.crd_of(r).is_none())
}

/// `/openapi/v3`: the index of group/version documents.
pub(crate) fn root(inner: &Inner) -> Value {
    let mut paths = serde_json::Map::new();
    for (g, v) in all_gvs(inner) {
        let p = gv_path(&g, &v);
        let h = match builtin_hash(&p).filter(|_| is_builtin(inner, &g, &v)) {
            Some(h) => h.to_owned(),
            None => hash(crd_group_version(inner, &g, &v).to_string().as_bytes()),
        };
        let url = format!("/openapi/v3/{p}?hash={h}");
        paths.insert(p, json!({ "serverRelativeURL": url }));
    }
    json!({ "paths": paths })
}

/// A v3 document: the vendored bytes of a built-in group version, or the document of a CRD
/// group version.
pub(crate) enum Document {
    /// Served as is.
    Builtin(&'static [u8]),
    /// Built from the CRDs.
    Custom(Value),
}

/// `/openapi/v3/api/v1` or `/openapi/v3/apis/{group}/{version}`, if served.
pub(crate) fn group_version_doc(inner: &Inner, rest: &[&str]) -> Option<Document> {
    let (g, v) = match rest {
        ["api", v] => ("", *v),
        ["apis", g, v] => (*g, *v),
        _ => return None,
    };
    let core = g.is_empty() && v == "v1";
    if !core && !inner.registry.has_group_version(g, v) {
        return None;
    }
    if is_builtin(inner, g, v) {
        return spec::v3_bytes(&gv_path(g, v)).map(Document::Builtin);
    }
    Some(Document::Custom(crd_group_version(inner, g, v)))
}

/// The `openAPIV3Schema` of a custom resource's version, from its CRD.
fn crd_schema(inner: &Inner, r: &ResourceInfo) -> Option<Value> {
    crate::handlers::validate::crd_version_schema(inner, r).map(|s| Value::clone(&s))
}

/// The schema name apiextensions-apiserver gives a kind: the reversed group, the version and
/// the kind (`com.example.v1.Widget`).
fn schema_name(group: &str, version: &str, kind: &str) -> String {
    let reversed: Vec<&str> = group.split('.').rev().collect();
    format!("{}.{version}.{kind}", reversed.join("."))
}

/// `ObjectMeta` and the schemas it refers to, from the core v3 document.
fn object_meta_schemas() -> &'static serde_json::Map<String, Value> {
    static SCHEMAS: OnceLock<serde_json::Map<String, Value>> = OnceLock::new();
    SCHEMAS.get_or_init(|| {
        let core: Value = spec::v3_bytes("api/v1")
            .and_then(|b| serde_json::from_slice(b).ok())
            .unwrap_or_default();
        let all = &core["components"]["schemas"];
        let mut out = serde_json::Map::new();
        let mut todo = vec!["io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta".to_owned()];
        while let Some(name) = todo.pop() {
            if out.contains_key(&name) {
                continue;
            }
            let Some(schema) = all.get(&name) else {
                continue;
            };
            collect_refs(schema, &mut todo);
            out.insert(name, schema.clone());
        }
        out
    })
}

fn collect_refs(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            if let Some(r) = m.get("$ref").and_then(Value::as_str) {
                out.push(r.rsplit('/').next().unwrap_or_default().to_owned());
            }
            m.values().for_each(|v| collect_refs(v, out));
        }
        Value::Array(a) => a.iter().for_each(|v| collect_refs(v, out)),
        _ => {}
    }
}

fn crd_group_version(inner: &Inner, group: &str, version: &str) -> Value {
    let mut paths = serde_json::Map::new();
    let mut schemas = object_meta_schemas().clone();
    let prefix = format!("/{}", gv_path(group, version));
    let query = |name: &str| json!({"name": name, "in": "query", "schema": {"type": "string", "uniqueItems": true}});
    for r in inner.registry.resources_of(group, version) {
        let name = schema_name(group, version, &r.kind);
        let gvk = json!({"group": group, "version": version, "kind": r.kind});
        let reference = json!({"$ref": format!("#/components/schemas/{name}")});
        let ok = |schema: &Value| json!({"200": {"description": "OK", "content": {"application/json": {"schema": schema}}}});
        let op = |action: &str, id: &str| {
            json!({
                "operationId": format!("{id}{}", r.kind),
                "x-kubernetes-action": action,
                "x-kubernetes-group-version-kind": gvk,
                "responses": ok(&reference),
            })
        };
        let collection = if r.namespaced {
            format!("{prefix}/namespaces/{{namespace}}/{}", r.plural)
        } else {
            format!("{prefix}/{}", r.plural)
        };
        let mut patch = op("patch", "patch");
        patch["parameters"] = json!([
            query("dryRun"),
            query("fieldManager"),
            query("fieldValidation"),
            query("force")
        ]);
        patch["requestBody"] = json!({"content": {
            "application/json-patch+json": {"schema": {"type": "object"}},
            "application/merge-patch+json": {"schema": {"type": "object"}},
            "application/apply-patch+yaml": {"schema": {"type": "object"}},
        }});
        paths.insert(
            collection.clone(),
            json!({"get": op("list", "list"), "post": op("post", "create")}),
        );
        paths.insert(
            format!("{collection}/{{name}}"),
            json!({
                "get": op("get", "read"),
                "put": op("put", "replace"),
                "patch": patch,
                "delete": op("delete", "delete"),
            }),
        );
        let mut schema = crd_schema(inner, &r).unwrap_or_else(|| json!({"type": "object"}));
        if let Some(props) = schema
            .as_object_mut()
            .map(|s| s.entry("properties").or_insert_with(|| json!({})))
            && let Some(props) = props.as_object_mut()
        {
            props.insert(
                "metadata".into(),
                json!({"allOf": [{"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}],
                       "description": "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"}),
            );
        }
        schema["x-kubernetes-group-version-kind"] = json!([gvk]);
        schemas.insert(name, schema);
    }
    json!({
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes CRD Swagger", "version": "v0.1.0"},
        "paths": paths,
        "components": {"schemas": schemas},
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::Storage;

    #[test]
    fn builtin_documents_are_the_real_ones() {
        let storage = Storage::new(10, 10);
        let inner = storage.lock();
        let root = root(&inner);
        assert!(
            root["paths"]["api/v1"]["serverRelativeURL"]
                .as_str()
                .unwrap()
                .starts_with("/openapi/v3/api/v1?hash=")
        );
        // Only served (GA) group versions are listed.
        assert!(root["paths"].get("apis/resource.k8s.io/v1beta1").is_none());
        let Some(Document::Builtin(bytes)) = group_version_doc(&inner, &["apis", "apps", "v1"])
        else {
            panic!("apps/v1 is built in");
        };
        let doc: Value = serde_json::from_slice(bytes).unwrap();
        let op = &doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["patch"];
        assert_eq!(op["x-kubernetes-group-version-kind"]["kind"], "Deployment");
        assert!(doc["components"]["schemas"]["io.k8s.api.apps.v1.Deployment"].is_object());
        assert!(group_version_doc(&inner, &["apis", "nope", "v1"]).is_none());
        assert_eq!(
            schema_name("stable.example.com", "v1", "CronTab"),
            "com.example.stable.v1.CronTab"
        );
    }
}
