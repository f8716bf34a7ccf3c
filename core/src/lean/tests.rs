use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use serde_json::{Value, json};

use super::*;

fn pod_json() -> Value {
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {
            "name": "web-0", "namespace": "prod", "resourceVersion": "17", "uid": "u-1",
            "labels": {"app": "web", "tier": "front"},
            "annotations": {"note": "x\"y"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web",
                                 "uid": "u-0", "controller": true}],
            "managedFields": [{"manager": "kubectl", "operation": "Update"}],
        },
        "spec": {"nodeName": "node-7",
                 "containers": [{"name": "app", "image": "nginx:1.27",
                                 "resources": {"limits": {"cpu": "500m"}}}]},
        "status": {"phase": "Running"},
    })
}

#[test]
fn metadata_is_decoded_and_the_body_holds_the_rest() {
    let lean: Lean<Pod> = serde_json::from_value(pod_json()).unwrap();
    assert_eq!(lean.name(), "web-0");
    assert_eq!(lean.namespace(), Some("prod"));
    assert_eq!(lean.resource_version(), "17");
    assert_eq!(lean.labels()["tier"], "front");
    assert_eq!(lean.owner_references()[0].name, "web");
    assert_eq!(lean.managed_fields().len(), 1);
    assert!(!lean.body_json().contains("metadata"));
    let body: Value = serde_json::from_str(lean.body_json()).unwrap();
    assert_eq!(body["spec"]["nodeName"], "node-7");
    assert_eq!(body["kind"], "Pod");
}

#[test]
fn decode_gives_the_object_the_json_gives() {
    let direct: Pod = serde_json::from_value(pod_json()).unwrap();
    let lean: Lean<Pod> = serde_json::from_value(pod_json()).unwrap();
    assert_eq!(lean.decode().unwrap(), direct);
    assert_eq!(
        serde_json::to_value(&lean).unwrap(),
        serde_json::to_value(&direct).unwrap()
    );
    let again = Lean::from_object(&direct).unwrap();
    assert_eq!(again.decode().unwrap(), direct);
}

#[test]
fn metadata_changes_reach_the_decoded_object() {
    let mut lean: Lean<Pod> = serde_json::from_value(pod_json()).unwrap();
    lean.metadata_mut().managed_fields = None;
    lean.labels_mut().insert("added".into(), "yes".into());
    let pod = lean.decode().unwrap();
    assert!(pod.metadata.managed_fields.is_none());
    assert_eq!(pod.metadata.labels.unwrap()["added"], "yes");
}

#[test]
fn modify_changes_the_body() {
    let mut lean: Lean<Pod> = serde_json::from_value(pod_json()).unwrap();
    lean.modify(|p| p.spec.as_mut().unwrap().node_name = Some("node-8".into()))
        .unwrap();
    let pod = lean.decode().unwrap();
    assert_eq!(pod.spec.unwrap().node_name.as_deref(), Some("node-8"));
    assert_eq!(pod.metadata.name.as_deref(), Some("web-0"));
}

#[test]
fn views_borrow_from_the_body() {
    #[derive(Deserialize)]
    struct View<'a> {
        #[serde(borrow)]
        spec: Spec<'a>,
    }
    #[derive(Deserialize)]
    struct Spec<'a> {
        #[serde(rename = "nodeName")]
        node_name: &'a str,
    }
    let lean: Lean<Pod> = serde_json::from_value(pod_json()).unwrap();
    let view: View<'_> = lean.view().unwrap();
    assert_eq!(view.spec.node_name, "node-7");
    let body = lean.body_json().as_bytes().as_ptr_range();
    assert!(
        body.contains(&view.spec.node_name.as_ptr()),
        "borrowed, not copied"
    );
}

#[test]
fn metadata_forms_decode_as_k_decodes_them() {
    for doc in [
        json!({"apiVersion": "v1", "kind": "ConfigMap", "data": {"a": "b"}}),
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": null}),
        json!({"metadata": {"name": "only"}, "apiVersion": "v1", "kind": "ConfigMap"}),
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}}),
    ] {
        let direct: ConfigMap = serde_json::from_value(doc.clone()).unwrap();
        let lean: Lean<ConfigMap> = serde_json::from_value(doc.clone()).unwrap();
        assert_eq!(lean.decode().unwrap(), direct, "{doc}");
    }
}

#[test]
fn what_k_refuses_decode_refuses_naming_the_object() {
    let doc = json!({"apiVersion": "v1", "kind": "Pod",
                     "metadata": {"name": "bad", "namespace": "ns"},
                     "spec": {"containers": 7}});
    let lean: Lean<Pod> = serde_json::from_value(doc).unwrap();
    let err = lean.decode().unwrap_err().to_string();
    assert!(err.contains("Pod ns/bad"), "{err}");
    assert!(err.contains("invalid type"), "{err}");
    // A wrong kind is refused by k8s-openapi's own check, as for the JSON.
    let doc = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}});
    let lean: Lean<Pod> = serde_json::from_value(doc).unwrap();
    assert!(lean.decode().is_err());
}

#[test]
fn invalid_metadata_and_duplicates_are_refused_at_once() {
    let bad = r#"{"apiVersion":"v1","kind":"Pod","metadata":{"labels":7}}"#;
    assert!(serde_json::from_str::<Lean<Pod>>(bad).is_err());
    let twice = r#"{"metadata":{},"kind":"Pod","metadata":{}}"#;
    let err = serde_json::from_str::<Lean<Pod>>(twice).unwrap_err();
    assert!(
        err.to_string().contains("duplicate field `metadata`"),
        "{err}"
    );
    assert!(serde_json::from_str::<Lean<Pod>>("[1]").is_err());
}

#[test]
fn is_a_resource_of_its_type() {
    assert_eq!(Lean::<Pod>::api_resource(), Pod::api_resource());
    assert_eq!(<Lean<Pod> as Resource>::KIND, "Pod");
}
