//! Strategic merge patch against the real v1.35 schemas. Each test names the behaviour of
//! `k8s.io/apimachinery/pkg/util/strategicpatch` (as kube-apiserver runs it) that it checks.

use serde_json::{Value, json};

use super::*;
use crate::registry::spec::builtin_schema;

fn schema(group: &str, kind: &str) -> Schema<'static> {
    builtin_schema(group, "v1", kind).unwrap_or_else(|| panic!("schema of {kind}"))
}

fn smp(group: &str, kind: &str, original: Value, patch: Value) -> Result<Value, Error> {
    apply(
        original,
        &serde_json::to_vec(&patch).unwrap(),
        schema(group, kind),
    )
}

fn ok(group: &str, kind: &str, original: Value, patch: Value) -> Value {
    smp(group, kind, original, patch).unwrap_or_else(|e| panic!("{e:?}"))
}

fn deployment(containers: Value) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web", "tier": "fe"}},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": containers}
            }
        }
    })
}

fn two_containers() -> Value {
    deployment(json!([
        {"name": "app", "image": "nginx:1", "args": ["-a", "-b"],
         "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}, {"name": "C", "value": "3"}],
         "ports": [{"containerPort": 80, "protocol": "TCP"}],
         "volumeMounts": [{"name": "data", "mountPath": "/data"}]},
        {"name": "sidecar", "image": "busybox:1"}
    ]))
}

fn containers(v: &Value) -> &Value {
    &v["spec"]["template"]["spec"]["containers"]
}

fn names(list: &Value) -> Vec<&str> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect()
}

// mergeMap: maps merge key by key, `null` deletes, scalars replace.
#[test]
fn maps_merge_and_null_deletes() {
    let out = ok(
        "apps",
        "Deployment",
        two_containers(),
        json!({"metadata": {"labels": {"tier": null, "new": "x"}}, "spec": {"replicas": 5}}),
    );
    assert_eq!(out["metadata"]["labels"], json!({"app": "web", "new": "x"}));
    assert_eq!(out["metadata"]["name"], "web");
    assert_eq!(out["spec"]["replicas"], 5);
    assert_eq!(
        out["spec"]["selector"],
        json!({"matchLabels": {"app": "web"}})
    );
    // A null for a key the object lacks is dropped, not stored.
    let out = ok(
        "apps",
        "Deployment",
        two_containers(),
        json!({"spec": {"paused": null, "minReadySeconds": 3}}),
    );
    assert!(out["spec"].get("paused").is_none());
    assert_eq!(out["spec"]["minReadySeconds"], 3);
}

// mergeSliceWithoutSpecialElements: containers (patchStrategy merge, patchMergeKey name) merge
// item by item; the untouched container and the untouched fields stay.
#[test]
fn containers_merge_by_name() {
    let out = ok(
        "apps",
        "Deployment",
        two_containers(),
        json!({"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "nginx:2"}]}}}}),
    );
    let c = containers(&out);
    assert_eq!(names(c), ["app", "sidecar"]);
    assert_eq!(c[0]["image"], "nginx:2");
    assert_eq!(c[0]["args"], json!(["-a", "-b"]));
    assert_eq!(c[0]["env"].as_array().unwrap().len(), 3);
    assert_eq!(c[1], json!({"name": "sidecar", "image": "busybox:1"}));
}

// mergeSlice + normalizeElementOrder/mergeSortedSlice: without $setElementOrder, an item new
// to the list is placed before the server's items that do not follow a patch item (the
// library takes the patch's side whenever it cannot compare two items).
#[test]
fn new_items_are_placed_as_the_library_places_them() {
    let out = ok(
        "apps",
        "Deployment",
        two_containers(),
        json!({"spec": {"template": {"spec": {"containers": [{"name": "init", "image": "x"}]}}}}),
    );
    assert_eq!(names(containers(&out)), ["init", "app", "sidecar"]);
    // After a merged item, the new one follows it.
    let out = ok(
        "apps",
        "Deployment",
        two_containers(),
        json!({"spec": {"template": {"spec": {"containers": [
            {"name": "app", "image": "nginx:3"}, {"name": "logger", "image": "y"}
        ]}}}}),
    );
    assert_eq!(names(containers(&out)), ["app", "logger", "sidecar"]);
}

// Nested merging lists: env (merge key name), ports (merge key containerPort, an integer),
// volumeMounts (merge key mountPath) inside a merged container.
#[test]
fn nested_lists_merge_by_their_own_keys() {
    let out = ok(
        "apps",
        "Deployment",
        two_containers(),
        json!({"spec": {"template": {"spec": {"containers": [{
            "name": "app",
            "env": [{"name": "B", "value": "two"}],
            "ports": [{"containerPort": 80, "name": "http"}, {"containerPort": 443}],
            "volumeMounts": [{"mountPath": "/data", "readOnly": true}]
        }]}}}}),
    );
    let app = &containers(&out)[0];
    assert_eq!(
        app["env"],
        json!([{"name": "A", "value": "1"}, {"name": "B", "value": "two"}, {"name": "C", "value": "3"}])
    );
    assert_eq!(
        app["ports"],
        json!([{"containerPort": 80, "protocol": "TCP", "name": "http"}, {"containerPort": 443}])
    );
    assert_eq!(
        app["volumeMounts"],
        json!([{"name": "data", "mountPath": "/data", "readOnly": true}])
    );
}

// mergeSliceHandler: lists without patchStrategy merge (args, tolerations) are replaced.
#[test]
fn other_lists_are_replaced_whole() {
    let out = ok(
        "apps",
        "Deployment",
        two_containers(),
        json!({"spec": {"template": {"spec": {"containers": [{"name": "app", "args": ["-z"]}]}}}}),
    );
    assert_eq!(containers(&out)[0]["args"], json!(["-z"]));
    let pod = json!({"metadata": {"name": "p"}, "spec": {
        "containers": [{"name": "c", "image": "i"}],
        "tolerations": [{"key": "a", "operator": "Exists"}, {"key": "b", "operator": "Exists"}]
    }});
    let out = ok(
        "",
        "Pod",
        pod,
        json!({"spec": {"tolerations": [{"key": "c", "operator": "Exists"}]}}),
    );
    assert_eq!(
        out["spec"]["tolerations"],
        json!([{"key": "c", "operator": "Exists"}])
    );
}

// Service ports: patchStrategy merge, patchMergeKey port.
#[test]
fn service_ports_merge_by_port() {
    let svc = json!({"metadata": {"name": "s"}, "spec": {
        "selector": {"app": "web"},
        "ports": [{"port": 80, "targetPort": 8080, "protocol": "TCP"}, {"port": 443, "protocol": "TCP"}]
    }});
    let out = ok(
        "",
        "Service",
        svc,
        json!({"spec": {"ports": [{"port": 80, "targetPort": 9090}], "selector": {"app": "api"}}}),
    );
    assert_eq!(
        out["spec"]["ports"],
        json!([{"port": 80, "targetPort": 9090, "protocol": "TCP"}, {"port": 443, "protocol": "TCP"}])
    );
    assert_eq!(out["spec"]["selector"], json!({"app": "api"}));
}

// Lists of scalars with patchStrategy merge (metadata.finalizers) are unioned without
// duplicates; $deleteFromPrimitiveList removes items, also from a list without the strategy
// (a container's args), and never adds the list.
#[test]
fn primitive_lists_union_and_delete() {
    let mut d = two_containers();
    d["metadata"]["finalizers"] = json!(["a", "b"]);
    let out = ok(
        "apps",
        "Deployment",
        d.clone(),
        json!({"metadata": {"finalizers": ["b", "c"]}}),
    );
    assert_eq!(out["metadata"]["finalizers"], json!(["a", "b", "c"]));
    let out = ok(
        "apps",
        "Deployment",
        d.clone(),
        json!({"metadata": {"$deleteFromPrimitiveList/finalizers": ["a", "zz"]}}),
    );
    assert_eq!(out["metadata"]["finalizers"], json!(["b"]));
    let out = ok(
        "apps",
        "Deployment",
        d.clone(),
        json!({"spec": {"template": {"spec": {"containers": [
            {"name": "app", "$deleteFromPrimitiveList/args": ["-a"]}
        ]}}}}),
    );
    assert_eq!(containers(&out)[0]["args"], json!(["-b"]));
    let out = ok(
        "apps",
        "Deployment",
        two_containers(),
        json!({"metadata": {"$deleteFromPrimitiveList/finalizers": ["a"]}}),
    );
    assert!(out["metadata"].get("finalizers").is_none());
    assert!(
        out["metadata"]
            .get("$deleteFromPrimitiveList/finalizers")
            .is_none()
    );
}

// handleDirectiveInMergeMap / mergeSliceWithSpecialElements: `$patch: replace`.
#[test]
fn patch_replace_on_a_map_and_in_a_list() {
    let out = ok(
        "apps",
        "Deployment",
        two_containers(),
        json!({"metadata": {"labels": {"$patch": "replace", "only": "this"}}}),
    );
    assert_eq!(out["metadata"]["labels"], json!({"only": "this"}));
    let out = ok(
        "apps",
        "Deployment",
        two_containers(),
        json!({"spec": {"template": {"spec": {"containers": [
            {"$patch": "replace"}, {"name": "solo", "image": "z"}
        ]}}}}),
    );
    assert_eq!(containers(&out), &json!([{"name": "solo", "image": "z"}]));
}

// `$patch: delete`: a whole map becomes empty; in a merging list, the items with the merge key.
#[test]
fn patch_delete_on_a_map_and_in_a_list() {
    let out = ok(
        "apps",
        "Deployment",
        two_containers(),
        json!({"spec": {"strategy": {"$patch": "delete"}}}),
    );
    assert_eq!(out["spec"]["strategy"], json!({}));
    let out = ok(
        "apps",
        "Deployment",
        two_containers(),
        json!({"spec": {"template": {"spec": {"containers": [
            {"name": "sidecar", "$patch": "delete"},
            {"name": "app", "env": [{"name": "A", "$patch": "delete"}, {"name": "nope", "$patch": "delete"}]}
        ]}}}}),
    );
    assert_eq!(names(containers(&out)), ["app"]);
    assert_eq!(names(&containers(&out)[0]["env"]), ["B", "C"]);
}

// mergePatchIntoOriginal: $setElementOrder orders the merged list; items of the server it does
// not name keep their place relative to their neighbours.
#[test]
fn set_element_order_orders_the_list() {
    let out = ok(
        "apps",
        "Deployment",
        two_containers(),
        json!({"spec": {"template": {"spec": {
            "$setElementOrder/containers": [{"name": "sidecar"}, {"name": "app"}]
        }}}}),
    );
    assert_eq!(names(containers(&out)), ["sidecar", "app"]);
    assert_eq!(containers(&out)[1]["image"], "nginx:1");
    // With a patch list: new items take their place in the order.
    let out = ok(
        "apps",
        "Deployment",
        two_containers(),
        json!({"spec": {"template": {"spec": {
            "$setElementOrder/containers": [{"name": "app"}, {"name": "new"}, {"name": "sidecar"}],
            "containers": [{"name": "new", "image": "n"}]
        }}}}),
    );
    assert_eq!(names(containers(&out)), ["app", "new", "sidecar"]);
    // Server-only items (D, not named) stay after their predecessor.
    let out = ok(
        "apps",
        "Deployment",
        two_containers(),
        json!({"spec": {"template": {"spec": {"containers": [{
            "name": "app",
            "$setElementOrder/env": [{"name": "C"}, {"name": "A"}],
            "env": [{"name": "C", "value": "three"}]
        }]}}}}),
    );
    // B sits before C on the server, so mergeSortedSlice places it first.
    let env = &containers(&out)[0]["env"];
    assert_eq!(names(env), ["B", "C", "A"]);
    assert_eq!(env[1]["value"], "three");
    // Lists of scalars too.
    let mut d = two_containers();
    d["metadata"]["finalizers"] = json!(["a", "b", "c"]);
    let out = ok(
        "apps",
        "Deployment",
        d,
        json!({"metadata": {"$setElementOrder/finalizers": ["c", "a", "b"]}}),
    );
    assert_eq!(out["metadata"]["finalizers"], json!(["c", "a", "b"]));
}

// mergePatchIntoOriginal orders the merged list only: an item named by $setElementOrder but in
// neither list is not added (apimachinery's "$setElementOrder contains item that is not
// present in the list to be merged").
#[test]
fn set_element_order_adds_nothing() {
    let out = ok(
        "apps",
        "Deployment",
        two_containers(),
        json!({"spec": {"template": {"spec": {
            "$setElementOrder/containers": [{"name": "sidecar"}, {"name": "ghost"}, {"name": "app"}]
        }}}}),
    );
    assert_eq!(names(containers(&out)), ["sidecar", "app"]);
}

// validatePatchWithSetOrderList: the patch's items must follow the order list.
#[test]
fn set_element_order_must_match_the_patch() {
    let e = smp(
        "apps",
        "Deployment",
        two_containers(),
        json!({"spec": {"template": {"spec": {
            "$setElementOrder/containers": [{"name": "app"}, {"name": "sidecar"}],
            "containers": [{"name": "sidecar", "image": "s"}, {"name": "app", "image": "a"}]
        }}}}),
    )
    .unwrap_err();
    let Error::Internal(m) = e else {
        panic!("{e:?}")
    };
    assert!(m.starts_with("The order in patch list:\n[map[image:s name:sidecar] map[image:a name:app]]\n doesn't match $setElementOrder list:"), "{m}");
    assert_eq!(
        smp(
            "apps",
            "Deployment",
            two_containers(),
            json!({"spec": {"template": {"spec": {"$setElementOrder": [{"name": "app"}]}}}}),
        ),
        Err(Error::BadRequest(ERR_SET_ELEMENT_ORDER.into()))
    );
    assert_eq!(
        smp(
            "apps",
            "Deployment",
            two_containers(),
            json!({"spec": {"template": {"spec": {"$setElementOrder/containers": "app"}}}}),
        ),
        Err(Error::Internal(
            "expected a []interface {}, but received a string".into()
        ))
    );
}

// applyRetainKeysDirective: Deployment spec.strategy (patchStrategy retainKeys) switched to
// Recreate clears rollingUpdate; a volume (merge,retainKeys) switched from emptyDir to
// hostPath loses emptyDir. A patch setting a key not listed is refused (400).
#[test]
fn retain_keys_clears_unlisted_fields() {
    let out = ok(
        "apps",
        "Deployment",
        two_containers(),
        json!({"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}}),
    );
    assert_eq!(out["spec"]["strategy"], json!({"type": "Recreate"}));
    let pod = json!({"metadata": {"name": "p"}, "spec": {
        "containers": [{"name": "c", "image": "i"}],
        "volumes": [{"name": "data", "emptyDir": {}}, {"name": "cfg", "configMap": {"name": "x"}}]
    }});
    let out = ok(
        "",
        "Pod",
        pod.clone(),
        json!({"spec": {"volumes": [
            {"$retainKeys": ["hostPath", "name"], "name": "data", "hostPath": {"path": "/d"}}
        ]}}),
    );
    assert_eq!(
        out["spec"]["volumes"],
        json!([{"name": "data", "hostPath": {"path": "/d"}}, {"name": "cfg", "configMap": {"name": "x"}}])
    );
    assert_eq!(
        smp(
            "",
            "Pod",
            pod.clone(),
            json!({"spec": {"volumes": [
                {"$retainKeys": ["name"], "name": "data", "hostPath": {"path": "/d"}}
            ]}}),
        ),
        Err(Error::BadRequest(ERR_RETAIN_KEYS.into()))
    );
    assert_eq!(
        smp(
            "",
            "Pod",
            pod,
            json!({"spec": {"$retainKeys": "containers"}}),
        ),
        Err(Error::BadRequest(ERR_RETAIN_KEYS.into()))
    );
}

// mergeMapHandler: a map field with patchStrategy replace (PodDisruptionBudget spec.selector)
// is replaced whole.
#[test]
fn replace_strategy_replaces_a_map() {
    let pdb = json!({"metadata": {"name": "p"}, "spec": {
        "minAvailable": 1,
        "selector": {"matchLabels": {"app": "web"}, "matchExpressions": [{"key": "k", "operator": "Exists"}]}
    }});
    let out = ok(
        "policy",
        "PodDisruptionBudget",
        pdb,
        json!({"spec": {"selector": {"matchLabels": {"app": "api"}}}}),
    );
    assert_eq!(
        out["spec"]["selector"],
        json!({"matchLabels": {"app": "api"}})
    );
    assert_eq!(out["spec"]["minAvailable"], 1);
}

// removeDirectives / discardNullValuesFromPatch: a value set where the object had none loses
// its `$patch` maps and its nulls.
#[test]
fn added_values_lose_directives_and_nulls() {
    let pod =
        json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "i"}]}});
    let out = ok(
        "",
        "Pod",
        pod,
        json!({"spec": {
            "volumes": [{"name": "gone", "$patch": "delete"}, {"name": "v", "emptyDir": {"medium": null}}],
            "nodeSelector": {"a": "b", "c": null}
        }}),
    );
    assert_eq!(
        out["spec"]["volumes"],
        json!([{"name": "v", "emptyDir": {}}])
    );
    assert_eq!(out["spec"]["nodeSelector"], json!({"a": "b"}));
}

// The Go decoder drops directive keys left in values copied whole (a new container carrying
// its own $setElementOrder, a replaced map): none is stored. A free-form value (a
// ControllerRevision's data, itself a patch) keeps its keys.
#[test]
fn directive_keys_are_never_stored() {
    let out = ok(
        "apps",
        "Deployment",
        two_containers(),
        json!({"spec": {"template": {"spec": {
            "$setElementOrder/containers": [{"name": "app"}, {"name": "sidecar"}, {"name": "extra"}],
            "containers": [{"name": "extra", "image": "e",
                "$setElementOrder/env": [{"name": "X"}], "env": [{"name": "X", "value": "1"}],
                "$retainKeys": ["name"]}]
        }}}}),
    );
    let text = out.to_string();
    assert!(
        !text.contains("$setElementOrder") && !text.contains("$retainKeys"),
        "{text}"
    );
    assert_eq!(names(containers(&out)), ["app", "sidecar", "extra"]);
    assert_eq!(
        containers(&out)[2]["env"],
        json!([{"name": "X", "value": "1"}])
    );
    let cr = json!({"metadata": {"name": "r"}, "revision": 1, "data": {"spec": {"template": {"$patch": "replace"}}}});
    let out = ok(
        "apps",
        "ControllerRevision",
        cr,
        json!({"metadata": {"labels": {"a": "b"}}}),
    );
    assert_eq!(out["data"]["spec"]["template"]["$patch"], "replace");
}

// The patch kubectl apply sends on a re-apply (CreateThreeWayMergePatch): a changed image, a
// removed env var, the order lists and the last-applied annotation.
#[test]
fn kubectl_apply_patch() {
    let out = ok(
        "apps",
        "Deployment",
        two_containers(),
        json!({
            "metadata": {"annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}"}},
            "spec": {"template": {"spec": {
                "$setElementOrder/containers": [{"name": "app"}, {"name": "sidecar"}],
                "containers": [{
                    "$setElementOrder/env": [{"name": "A"}, {"name": "C"}],
                    "env": [{"$patch": "delete", "name": "B"}],
                    "image": "nginx:2",
                    "name": "app"
                }]
            }}}
        }),
    );
    let c = containers(&out);
    assert_eq!(names(c), ["app", "sidecar"]);
    assert_eq!(c[0]["image"], "nginx:2");
    assert_eq!(
        c[0]["env"],
        json!([{"name": "A", "value": "1"}, {"name": "C", "value": "3"}])
    );
    assert_eq!(
        out["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"],
        "{}"
    );
}

// The library's errors: missing merge key, `$patch: merge` and unknown directives, lists of
// lists, mixed element types, malformed parallel lists, bodies that are not objects.
#[test]
fn malformed_patches_are_refused() {
    let cases = [
        (
            json!({"spec": {"template": {"spec": {"containers": [{"image": "x"}]}}}}),
            Error::Internal("map: map[image:x] does not contain declared merge key: name".into()),
        ),
        (
            json!({"spec": {"template": {"spec": {"containers": [{"$patch": "merge"}]}}}}),
            Error::Internal("merging lists cannot yet be specified in the patch".into()),
        ),
        (
            json!({"spec": {"template": {"spec": {"containers": [{"name": "app", "$patch": 7}]}}}}),
            Error::Internal(
                "unknown patch type: %!s(int64=7) in map: map[$patch:7 name:app]".into(),
            ),
        ),
        (
            json!({"spec": {"$patch": "merge"}}),
            Error::Internal("unknown patch type: merge in map: map[$patch:merge]".into()),
        ),
        (
            json!({"metadata": {"finalizers": [["a"]]}}),
            Error::Unprocessable(ERR_LIST_OF_LISTS.into()),
        ),
        (
            json!({"metadata": {"$deleteFromPrimitiveListfinalizers": ["a"]}}),
            Error::BadRequest(ERR_PRIMITIVE_LIST.into()),
        ),
        (
            json!({"spec": {"template": {"spec": {"containers": [{"name": "app"}, "x"]}}}}),
            Error::Internal(
                "list element types are not identical: [[map[args:[-a -b] env:[map[name:A value:1] map[name:B value:2] map[name:C value:3]] image:nginx:1 name:app ports:[map[containerPort:80 protocol:TCP]] volumeMounts:[map[mountPath:/data name:data]]] map[image:busybox:1 name:sidecar]] [map[name:app] x]]".into(),
            ),
        ),
    ];
    for (patch, want) in cases {
        let mut d = two_containers();
        d["metadata"]["finalizers"] = json!([]);
        assert_eq!(
            smp("apps", "Deployment", d, patch.clone()),
            Err(want),
            "{patch}"
        );
    }
    let d = schema("apps", "Deployment");
    assert!(
        matches!(apply(json!({}), b"[1]", d), Err(Error::BadRequest(m)) if m == "json: cannot unmarshal array into Go value of type map[string]interface {}")
    );
    assert!(matches!(
        apply(json!({}), b"{", d),
        Err(Error::BadRequest(_))
    ));
    // A null body merges nothing.
    assert_eq!(apply(two_containers(), b"null", d), Ok(two_containers()));
}

// LookupPatchMetadataForStruct on a Go map type fails: merging two map values of a map of
// structs is an error. A field the schema does not declare merges as a JSON merge patch.
#[test]
fn lookups_outside_structs() {
    let doc = json!({
        "type": "object",
        "properties": {
            "byName": {"type": "object", "additionalProperties": {
                "type": "object", "properties": {"items": {"type": "array", "items": {"type": "string"}}}
            }}
        }
    });
    let s = Schema::standalone(&doc);
    let original =
        json!({"byName": {"a": {"items": ["x"]}}, "extra": {"l": [1, 2], "m": {"k": 1}}});
    let e = apply(
        original.clone(),
        br#"{"byName": {"a": {"items": ["y"]}}}"#,
        s,
    );
    assert_eq!(
        e,
        Err(Error::Internal(
            "merging an object in json but data type is not struct, instead is: map".into()
        ))
    );
    let out = apply(
        original,
        br#"{"byName": {"b": {"items": ["z"]}}, "extra": {"l": [3], "m": {"j": 2}}}"#,
        s,
    )
    .unwrap();
    assert_eq!(out["byName"]["b"], json!({"items": ["z"]}));
    assert_eq!(out["extra"], json!({"l": [3], "m": {"k": 1, "j": 2}}));
}

// Nothing panics, whatever JSON stands where a directive, a list or a map is expected.
#[test]
fn arbitrary_values_never_panic() {
    let values = [
        json!(null),
        json!(1),
        json!(1.5),
        json!("s"),
        json!(true),
        json!([]),
        json!([1]),
        json!([[1]]),
        json!([null]),
        json!([{}]),
        json!([{"name": 1}]),
        json!([{"$patch": "delete"}]),
        json!([{"$patch": "replace"}, 1]),
        json!({}),
        json!({"$patch": "delete"}),
        json!({"$patch": ["x"]}),
        json!({"$retainKeys": [1]}),
        json!({"name": {"a": 1}}),
    ];
    let fields = [
        "containers",
        "$setElementOrder/containers",
        "$deleteFromPrimitiveList/containers",
        "$retainKeys",
        "$patch",
        "$setElementOrder/",
        "volumes",
        "nodeSelector",
        "unknown",
    ];
    let mut d = two_containers();
    d["spec"]["template"]["spec"]["volumes"] = json!([{"name": "v", "emptyDir": {}}]);
    d["spec"]["template"]["spec"]["nodeSelector"] = json!({"a": "b"});
    for field in fields {
        for v in &values {
            for w in &values {
                let patch = json!({"spec": {"template": {"spec": {field: v, "containers": w}}}});
                let _ = smp("apps", "Deployment", d.clone(), patch);
                let patch = json!({"metadata": {field: v, "finalizers": w}});
                let _ = smp("apps", "Deployment", d.clone(), patch);
            }
        }
    }
}
