//! The status and scale subresources through the client: status writes ignore spec changes
//! and ordinary writes ignore status changes; `generation` follows spec changes only; the
//! scale subresource of a Deployment and of a CRD that declares one.

use k8s_openapi::api::apps::v1::{Deployment, DeploymentStatus};
use k8s_openapi::api::autoscaling::v1::Scale;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kinform::client::{Patch, PatchParams, PostParams};
use kinform::{Api, ApiResource, DynamicObject, Scope};
use kinform_tests::env::env;
use serde_json::json;

// A Deployment's `spec` is an `Option` in k8s-openapi up to v1_36 and required from v1_37 on;
// these tests build at every supported version, so they reach the spec through its JSON.
fn deployment(name: &str, replicas: i32) -> Deployment {
    serde_json::from_value(json!({
        "metadata": {"name": name},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}}}
    }))
    .unwrap()
}

fn spec_replicas(d: &Deployment) -> Option<i32> {
    let v = serde_json::to_value(d).unwrap();
    v["spec"]["replicas"]
        .as_i64()
        .and_then(|r| i32::try_from(r).ok())
}

fn set_spec_replicas(d: &mut Deployment, replicas: i32) {
    let mut v = serde_json::to_value(&*d).unwrap();
    v["spec"]["replicas"] = json!(replicas);
    *d = serde_json::from_value(v).unwrap();
}

fn status_replicas(d: &Deployment) -> Option<i32> {
    d.status.as_ref().and_then(|s| s.replicas)
}

#[tokio::test]
async fn status_and_spec_writes_are_separate() {
    let e = env().await;
    let api: Api<Deployment> = Api::namespaced(e.client.clone(), "default");
    let created = api
        .create(&PostParams::default(), &deployment("web", 1))
        .await
        .unwrap();
    let gen0 = created.metadata.generation;

    // PUT status: the status is taken, the spec change ignored, the generation kept.
    let mut obj = created.clone();
    set_spec_replicas(&mut obj, 5);
    obj.status = Some(DeploymentStatus {
        replicas: Some(3),
        ..DeploymentStatus::default()
    });
    let after_status = api
        .replace_status("web", &PostParams::default(), &obj)
        .await
        .unwrap();
    assert_eq!(status_replicas(&after_status), Some(3));
    assert_eq!(spec_replicas(&after_status), Some(1));
    assert_eq!(after_status.metadata.generation, gen0);
    assert_eq!(api.get_status("web").await.unwrap(), after_status);

    // PUT object: the spec change is taken, the status change ignored, generation bumped.
    let mut obj = after_status.clone();
    set_spec_replicas(&mut obj, 2);
    obj.status.as_mut().unwrap().replicas = Some(9);
    let after_spec = api
        .replace("web", &PostParams::default(), &obj)
        .await
        .unwrap();
    assert_eq!(spec_replicas(&after_spec), Some(2));
    assert_eq!(status_replicas(&after_spec), Some(3));
    assert!(after_spec.metadata.generation > gen0);

    // Metadata changes do not bump the generation.
    let labelled = api
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"x": "y"}}})),
        )
        .await
        .unwrap();
    assert_eq!(labelled.metadata.generation, after_spec.metadata.generation);

    // PATCH status: same separation.
    let patched = api
        .patch_status(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": 7}, "status": {"availableReplicas": 2}})),
        )
        .await
        .unwrap();
    assert_eq!(patched.status.as_ref().unwrap().available_replicas, Some(2));
    assert_eq!(spec_replicas(&patched), Some(2));
    assert_eq!(patched.metadata.generation, after_spec.metadata.generation);

    // PATCH object: a status change is ignored.
    let patched = api
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"availableReplicas": 0}})),
        )
        .await
        .unwrap();
    assert_eq!(patched.status.as_ref().unwrap().available_replicas, Some(2));

    // The status subresource keeps optimistic concurrency.
    let err = api
        .replace_status("web", &PostParams::default(), &created)
        .await
        .unwrap_err();
    assert!(err.is_conflict(), "{err}");

    let err = api.get_status("missing").await.unwrap_err();
    assert!(err.is_not_found(), "{err}");
}

#[tokio::test]
async fn deployment_scale_subresource() {
    let e = env().await;
    let api: Api<Deployment> = Api::namespaced(e.client.clone(), "default");
    api.create(&PostParams::default(), &deployment("s", 2))
        .await
        .unwrap();
    let scale: Scale = api.get_subresource("scale", "s").await.unwrap();
    assert_eq!(scale.spec.as_ref().unwrap().replicas, Some(2));
    let patched: Scale = api
        .patch_subresource(
            "scale",
            "s",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": 4}})),
        )
        .await
        .unwrap();
    assert_eq!(patched.spec.as_ref().unwrap().replicas, Some(4));
    assert_eq!(spec_replicas(&api.get("s").await.unwrap()), Some(4));

    // Resources without a scale subresource answer 404.
    let cms: Api<k8s_openapi::api::core::v1::ConfigMap> =
        Api::namespaced(e.client.clone(), "default");
    let err = cms
        .get_subresource::<Scale>("scale", "s")
        .await
        .unwrap_err();
    assert!(err.is_not_found(), "{err}");
}

const WIDGETS_CRD: &str = r#"{
  "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
  "metadata": {"name": "widgets.example.com"},
  "spec": {"group": "example.com", "scope": "Namespaced",
    "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
    "versions": [{"name": "v1", "served": true, "storage": true,
      "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
      "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas",
        "statusReplicasPath": ".status.replicas", "labelSelectorPath": ".status.selector"}}}]}
}"#;

fn widgets() -> ApiResource {
    ApiResource {
        group: "example.com".into(),
        version: "v1".into(),
        kind: "Widget".into(),
        plural: "widgets".into(),
        scope: Scope::Namespaced,
    }
}

#[tokio::test]
async fn custom_resource_scale_and_status() {
    let e = env().await;
    let crds: Api<CustomResourceDefinition> = Api::all(e.client.clone());
    let crd: CustomResourceDefinition = serde_json::from_str(WIDGETS_CRD).unwrap();
    crds.create(&PostParams::default(), &crd).await.unwrap();

    let ar = widgets();
    let api: Api<DynamicObject> = Api::namespaced_with(e.client.clone(), "default", &ar);
    let w = DynamicObject::new("w1", &ar)
        .within("default")
        .data(json!({"spec": {"replicas": 1, "size": "L"}}));
    api.create(&PostParams::default(), &w).await.unwrap();
    let with_status = api
        .patch_status(
            "w1",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"replicas": 1, "selector": "app=w1"}})),
        )
        .await
        .unwrap();
    assert_eq!(with_status.data["status"]["replicas"], 1);

    let scale: Scale = api.get_subresource("scale", "w1").await.unwrap();
    assert_eq!(scale.spec.as_ref().unwrap().replicas, Some(1));
    let st = scale.status.as_ref().unwrap();
    assert_eq!((st.replicas, st.selector.as_deref()), (1, Some("app=w1")));

    let mut want = scale.clone();
    want.spec.as_mut().unwrap().replicas = Some(3);
    let replaced: Scale = api
        .replace_subresource("scale", "w1", &PostParams::default(), &want)
        .await
        .unwrap();
    assert_eq!(replaced.spec.unwrap().replicas, Some(3));
    let obj = api.get("w1").await.unwrap();
    assert_eq!(obj.data["spec"]["replicas"], 3);
    assert_eq!(
        obj.data["spec"]["size"], "L",
        "other spec fields survive a scale"
    );

    // A stale Scale resourceVersion is a conflict, as for the object.
    let err = api
        .replace_subresource("scale", "w1", &PostParams::default(), &want)
        .await
        .unwrap_err();
    assert!(err.is_conflict(), "{err}");
}
