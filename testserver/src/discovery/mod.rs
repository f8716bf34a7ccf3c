//! Discovery documents: `/version`, `/api`, `/api/v1`, `/apis`, `/apis/{group}` and
//! `/apis/{group}/{version}`, in the legacy forms (`APIVersions`, `APIGroupList`, `APIGroup`,
//! `APIResourceList`) and, when the client asks for it in `Accept` (kubectl and client-go do
//! since 1.26), the aggregated form `apidiscovery.k8s.io/v2` `APIGroupDiscoveryList` that
//! answers all groups, versions and resources in one document.

pub(crate) mod openapi;

use serde_json::{Value, json};

use crate::registry::{Registry, ResourceInfo};

/// The `Content-Type` of an aggregated discovery answer.
pub(crate) const AGGREGATED_V2: &str =
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

/// Whether the `Accept` header asks for aggregated discovery (v2).
pub(crate) fn wants_aggregated(accept: Option<&str>) -> bool {
    accept.is_some_and(|a| {
        a.split(',').any(|part| {
            let p: Vec<&str> = part.split(';').map(str::trim).collect();
            p.contains(&"g=apidiscovery.k8s.io")
                && p.contains(&"v=v2")
                && p.contains(&"as=APIGroupDiscoveryList")
        })
    })
}

/// `/version`: the Kubernetes version whose API this server reproduces (v1.35, the embedded
/// OpenAPI documents'), marked as kinform's in `gitVersion`.
pub(crate) fn version() -> Value {
    json!({
        "major": "1",
        "minor": "35",
        "emulationMajor": "1",
        "emulationMinor": "35",
        "minCompatibilityMajor": "1",
        "minCompatibilityMinor": "34",
        "gitVersion": "v1.35.0-kinform",
        "gitCommit": "0000000000000000000000000000000000000000",
        "gitTreeState": "clean",
        "buildDate": "2025-12-17T00:00:00Z",
        "goVersion": "go1.25.5",
        "compiler": "gc",
        "platform": "linux/amd64",
    })
}

/// `/api`.
pub(crate) fn api_versions(addr: &str) -> Value {
    json!({
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": addr}],
    })
}

fn group_entry(group: &str, versions: &[String]) -> Value {
    let gv = |v: &String| json!({"groupVersion": format!("{group}/{v}"), "version": v});
    json!({
        "name": group,
        "versions": versions.iter().map(gv).collect::<Vec<_>>(),
        "preferredVersion": versions.first().map(gv),
    })
}

/// `/apis`.
pub(crate) fn group_list(reg: &Registry) -> Value {
    let groups: Vec<Value> = reg
        .groups()
        .iter()
        .map(|(g, vs)| group_entry(g, vs))
        .collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

/// `/apis/{group}`.
pub(crate) fn group(reg: &Registry, name: &str) -> Option<Value> {
    let (g, vs) = reg.groups().into_iter().find(|(g, _)| g == name)?;
    let mut v = group_entry(&g, &vs);
    v["kind"] = json!("APIGroup");
    v["apiVersion"] = json!("v1");
    Some(v)
}

/// `/api/v1` or `/apis/{group}/{version}`.
pub(crate) fn resource_list(reg: &Registry, group: &str, version: &str) -> Value {
    let mut resources = Vec::new();
    for r in reg.resources_of(group, version) {
        resources.push(json!({
            "name": r.plural,
            "singularName": r.singular,
            "namespaced": r.namespaced,
            "kind": r.kind,
            "verbs": r.verbs,
            "shortNames": r.short_names,
            "categories": r.categories,
            "storageVersionHash": "",
        }));
        if r.status_subresource {
            resources.push(json!({
                "name": format!("{}/status", r.plural),
                "singularName": "",
                "namespaced": r.namespaced,
                "kind": r.kind,
                "verbs": ["get", "patch", "update"],
            }));
        }
        for sub in &r.subresources {
            if sub == "status" || sub == "scale" {
                continue;
            }
            let (kind, verbs) = subresource_shape(sub);
            let mut entry = json!({
                "name": format!("{}/{sub}", r.plural),
                "singularName": "",
                "namespaced": r.namespaced,
                "kind": kind.map_or(r.kind.as_str(), |(_, k)| k),
                "verbs": verbs,
            });
            if let Some((Some((group, version)), _)) = kind {
                entry["group"] = json!(group);
                entry["version"] = json!(version);
            }
            resources.push(entry);
        }
        if r.scale.is_some() {
            resources.push(json!({
                "name": format!("{}/scale", r.plural),
                "singularName": "",
                "namespaced": r.namespaced,
                "group": "autoscaling",
                "version": "v1",
                "kind": "Scale",
                "verbs": ["get", "patch", "update"],
            }));
        }
    }
    let gv = if group.is_empty() {
        version.to_owned()
    } else {
        format!("{group}/{version}")
    };
    json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": resources})
}

/// A subresource's kind when it is not the resource's own: (group, version, kind); the group
/// and version are the resource's when `None`.
type SubKind = (Option<(&'static str, &'static str)>, &'static str);

/// The kind (when not the resource's own) and verbs kube-apiserver lists for a subresource:
/// `serviceaccounts/token` answers an `authentication.k8s.io/v1` TokenRequest and
/// `pods/eviction` takes a `policy/v1` Eviction, which discovery names with their group and
/// version.
fn subresource_shape(sub: &str) -> (Option<SubKind>, &'static [&'static str]) {
    match sub {
        "exec" | "attach" | "portforward" => (Some((None, "PodExecOptions")), &["create", "get"]),
        "proxy" => (None, &["create", "delete", "get", "patch", "update"]),
        "log" => (Some((None, "Pod")), &["get"]),
        "binding" => (Some((None, "Binding")), &["create"]),
        "eviction" => (Some((Some(("policy", "v1")), "Eviction")), &["create"]),
        "token" => (
            Some((Some(("authentication.k8s.io", "v1")), "TokenRequest")),
            &["create"],
        ),
        _ => (None, &["get", "patch", "update"]),
    }
}

fn aggregated_resource(r: &ResourceInfo) -> Value {
    let kind = |k: &str| json!({"group": r.group, "version": r.version, "kind": k});
    let mut subresources = Vec::new();
    if r.status_subresource {
        subresources.push(
            json!({"subresource": "status", "responseKind": kind(&r.kind),
                                 "verbs": ["get", "patch", "update"]}),
        );
    }
    for sub in &r.subresources {
        if sub == "status" || sub == "scale" {
            continue;
        }
        let (k, verbs) = subresource_shape(sub);
        let response_kind = match k {
            Some((Some((group, version)), k)) => {
                json!({"group": group, "version": version, "kind": k})
            }
            Some((None, k)) => kind(k),
            None => kind(&r.kind),
        };
        subresources
            .push(json!({"subresource": sub, "responseKind": response_kind, "verbs": verbs}));
    }
    if r.scale.is_some() {
        subresources.push(json!({"subresource": "scale",
                                 "responseKind": {"group": "autoscaling", "version": "v1", "kind": "Scale"},
                                 "verbs": ["get", "patch", "update"]}));
    }
    json!({
        "resource": r.plural,
        "responseKind": kind(&r.kind),
        "scope": if r.namespaced { "Namespaced" } else { "Cluster" },
        "singularResource": r.singular,
        "verbs": r.verbs,
        "shortNames": r.short_names,
        "categories": r.categories,
        "subresources": subresources,
    })
}

/// Aggregated discovery for `/api` (`core` true) or `/apis`.
pub(crate) fn aggregated(reg: &Registry, core: bool) -> Value {
    let groups: Vec<(String, Vec<String>)> = if core {
        vec![(String::new(), vec!["v1".to_owned()])]
    } else {
        reg.groups()
    };
    let items: Vec<Value> = groups
        .iter()
        .map(|(g, vs)| {
            let versions: Vec<Value> = vs
                .iter()
                .map(|v| {
                    let resources: Vec<Value> = reg
                        .resources_of(g, v)
                        .iter()
                        .map(|r| aggregated_resource(r))
                        .collect();
                    json!({"version": v, "resources": resources, "freshness": "Current"})
                })
                .collect();
            let mut meta = json!({"creationTimestamp": null});
            if !g.is_empty() {
                meta["name"] = json!(g);
            }
            json!({"metadata": meta, "versions": versions})
        })
        .collect();
    json!({
        "kind": "APIGroupDiscoveryList",
        "apiVersion": "apidiscovery.k8s.io/v2",
        "metadata": {},
        "items": items,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn discovery_documents() {
        let reg = Registry::with_builtins();
        let apis = group_list(&reg);
        let names: Vec<_> = apis["groups"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| g["name"].as_str().unwrap())
            .collect();
        assert!(names.contains(&"apps") && names.contains(&"apiextensions.k8s.io"));
        let core = resource_list(&reg, "", "v1");
        assert!(
            core["resources"]
                .as_array()
                .unwrap()
                .iter()
                .any(|r| r["name"] == "pods/status")
        );
        let agg = aggregated(&reg, false);
        assert_eq!(agg["kind"], "APIGroupDiscoveryList");
        assert!(wants_aggregated(Some(
            "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json"
        )));
        assert!(!wants_aggregated(Some("application/json")));
    }
}
