//! A minimal OpenAPI v3 surface for kubectl.
//!
//! kubectl (1.27+) validates manifests with `--validate=strict` by default: it asks
//! `/openapi/v3` whether the server supports the `fieldValidation` query parameter for the
//! object's group/version/kind (`QueryParamVerifierV3` looks for a PATCH operation tagged with
//! `x-kubernetes-group-version-kind` that lists a `fieldValidation` query parameter). If the
//! server does, kubectl skips client-side schema validation and sends `fieldValidation=Strict`;
//! if `/openapi/v3` and `/openapi/v2` both answer 404, `kubectl create -f` fails with "failed
//! to download openapi". So this module serves the root index and, per group/version, a
//! document with one PATCH operation per resource declaring that parameter. Schemas are not
//! published (`components.schemas` is empty): `kubectl explain` and client-side validation
//! are not supported.

use serde_json::{Value, json};

use super::registry::Registry;

fn gv_path(group: &str, version: &str) -> String {
    if group.is_empty() {
        format!("api/{version}")
    } else {
        format!("apis/{group}/{version}")
    }
}

fn all_gvs(reg: &Registry) -> Vec<(String, String)> {
    let mut out = vec![(String::new(), "v1".to_owned())];
    for (g, vs) in reg.groups() {
        out.extend(vs.into_iter().map(|v| (g.clone(), v)));
    }
    out
}

fn hash(text: &str) -> String {
    let h = text.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    format!("{h:016X}")
}

/// `/openapi/v3`: the index of group/version documents.
pub(crate) fn root(reg: &Registry) -> Value {
    let mut paths = serde_json::Map::new();
    for (g, v) in all_gvs(reg) {
        let p = gv_path(&g, &v);
        let doc = group_version(reg, &g, &v);
        let url = format!("/openapi/v3/{p}?hash={}", hash(&doc.to_string()));
        paths.insert(p, json!({ "serverRelativeURL": url }));
    }
    json!({ "paths": paths })
}

/// `/openapi/v3/api/v1` or `/openapi/v3/apis/{group}/{version}`, if served.
pub(crate) fn group_version_doc(reg: &Registry, rest: &[&str]) -> Option<Value> {
    let (g, v) = match rest {
        ["api", v] => ("", *v),
        ["apis", g, v] => (*g, *v),
        _ => return None,
    };
    let served = (g.is_empty() && v == "v1") || reg.has_group_version(g, v);
    served.then(|| group_version(reg, g, v))
}

fn group_version(reg: &Registry, group: &str, version: &str) -> Value {
    let mut paths = serde_json::Map::new();
    let prefix = if group.is_empty() {
        format!("/api/{version}")
    } else {
        format!("/apis/{group}/{version}")
    };
    for r in reg.resources_of(group, version) {
        let item = if r.namespaced {
            format!("{prefix}/namespaces/{{namespace}}/{}/{{name}}", r.plural)
        } else {
            format!("{prefix}/{}/{{name}}", r.plural)
        };
        let gvk = json!({"group": group, "version": version, "kind": r.kind});
        let query = |name: &str| json!({"name": name, "in": "query", "schema": {"type": "string", "uniqueItems": true}});
        paths.insert(
            item,
            json!({
                "patch": {
                    "operationId": format!("patch{}", r.kind),
                    "x-kubernetes-action": "patch",
                    "x-kubernetes-group-version-kind": gvk,
                    "parameters": [query("dryRun"), query("fieldManager"), query("fieldValidation"), query("force")],
                    "responses": {"200": {"description": "OK"}},
                }
            }),
        );
    }
    json!({
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": "v1.32.0-kinform"},
        "paths": paths,
        "components": {"schemas": {}},
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn advertises_field_validation_per_kind() {
        let reg = Registry::with_builtins();
        let root = root(&reg);
        assert!(
            root["paths"]["api/v1"]["serverRelativeURL"]
                .as_str()
                .unwrap()
                .starts_with("/openapi/v3/api/v1?hash=")
        );
        let doc = group_version_doc(&reg, &["apis", "apps", "v1"]).unwrap();
        let op = &doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["patch"];
        assert_eq!(op["x-kubernetes-group-version-kind"]["kind"], "Deployment");
        assert!(group_version_doc(&reg, &["apis", "nope", "v1"]).is_none());
    }
}
