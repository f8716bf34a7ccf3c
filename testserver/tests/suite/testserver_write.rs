//! Writes against TestApiServer over raw HTTP: create, update with preconditions, patches,
//! status subresource, generation, finalizers, delete_collection, CRD registration, scale.

use kinform_tests::http::{Raw, configmap, names, pod, rv};
use kinform_testserver::TestApiServer;
use serde_json::json;

const PODS: &str = "/api/v1/namespaces/default/pods";

#[tokio::test]
async fn create_stamps_metadata_and_checks_conflicts() {
    let server = TestApiServer::start().await.unwrap();
    let raw = Raw::new(&server.url());
    let r = raw.post(PODS, &pod("default", "a", json!({}))).await;
    assert_eq!(r.status, 201);
    let m = &r.body["metadata"];
    assert_eq!(m["uid"].as_str().unwrap().len(), 36);
    assert!(m["creationTimestamp"].as_str().unwrap().ends_with('Z'));
    assert_eq!(m["generation"], 1);
    assert_eq!(rv(&r.body), server.resource_version());
    let dup = raw.post(PODS, &pod("default", "a", json!({}))).await;
    assert_eq!(
        (dup.status, dup.body["reason"].as_str()),
        (409, Some("AlreadyExists"))
    );
    assert_eq!(dup.body["details"]["name"], "a");
    let generated = raw
        .post(
            PODS,
            &json!({"metadata": {"generateName": "web-"},
                    "spec": {"containers": [{"name": "c", "image": "nginx"}]}}),
        )
        .await;
    assert_eq!(generated.status, 201);
    let name = generated.body["metadata"]["name"].as_str().unwrap();
    assert!(name.starts_with("web-") && name.len() == 9, "{name}");
    let noname = raw.post(PODS, &json!({"metadata": {}})).await;
    assert_eq!(
        (noname.status, noname.body["reason"].as_str()),
        (422, Some("Invalid"))
    );
    let badname = raw.post(PODS, &pod("default", "Bad_Name", json!({}))).await;
    assert_eq!(badname.status, 422);
    let nons = raw
        .post("/api/v1/namespaces/nope/pods", &pod("nope", "a", json!({})))
        .await;
    assert_eq!(
        (nons.status, nons.body["reason"].as_str()),
        (404, Some("NotFound"))
    );
    let mismatch = raw.post(PODS, &pod("other", "b", json!({}))).await;
    assert_eq!(mismatch.status, 400);
    let wrong_kind = raw.post(PODS, &configmap("default", "c", json!({}))).await;
    assert_eq!(wrong_kind.status, 400);
    let not_json = raw
        .request_with("POST", PODS, None, "application/json", None)
        .await;
    assert_eq!(not_json.status, 400);
    let missing = raw.get(&format!("{PODS}/zzz")).await;
    assert_eq!(missing.status, 404);
    assert_eq!(missing.body["message"], "pods \"zzz\" not found");
    server.shutdown().await;
}

#[tokio::test]
async fn update_needs_the_current_resource_version() {
    let server = TestApiServer::start().await.unwrap();
    let raw = Raw::new(&server.url());
    let created = raw.post(PODS, &pod("default", "a", json!({}))).await.body;
    let mut v1 = created.clone();
    v1["metadata"]["labels"] = json!({"x": "1"});
    let ok = raw.put(&format!("{PODS}/a"), &v1).await;
    assert_eq!(ok.status, 200);
    assert!(rv(&ok.body) > rv(&created));
    assert_eq!(
        ok.body["metadata"]["generation"], 1,
        "metadata changes keep generation"
    );
    // The stale copy conflicts.
    let stale = raw.put(&format!("{PODS}/a"), &v1).await;
    assert_eq!(
        (stale.status, stale.body["reason"].as_str()),
        (409, Some("Conflict"))
    );
    // Spec changes bump generation; a no-op update keeps the resourceVersion.
    let mut v2 = ok.body.clone();
    v2["spec"]["containers"][0]["image"] = json!("nginx:2");
    let bumped = raw.put(&format!("{PODS}/a"), &v2).await.body;
    assert_eq!(bumped["metadata"]["generation"], 2);
    let mut same = bumped.clone();
    same["metadata"]["resourceVersion"] = json!("");
    let noop = raw.put(&format!("{PODS}/a"), &same).await.body;
    assert_eq!(rv(&noop), rv(&bumped));
    assert_eq!(
        raw.put(&format!("{PODS}/zzz"), &pod("default", "zzz", json!({})))
            .await
            .status,
        404
    );
    server.shutdown().await;
}

#[tokio::test]
async fn status_subresource_is_separate_from_spec() {
    let server = TestApiServer::start().await.unwrap();
    let raw = Raw::new(&server.url());
    let created = raw.post(PODS, &pod("default", "a", json!({}))).await.body;
    let mut with_status = created.clone();
    with_status["status"] = json!({"phase": "Running"});
    with_status["spec"]["nodeName"] = json!("ignored");
    let s = raw.put(&format!("{PODS}/a/status"), &with_status).await;
    assert_eq!(s.status, 200, "{}", s.body);
    assert_eq!(s.body["status"]["phase"], "Running");
    assert!(
        s.body["spec"]["nodeName"].is_null(),
        "status writes keep the spec"
    );
    let main = raw
        .patch(
            &format!("{PODS}/a"),
            "application/merge-patch+json",
            &json!({"status": {"phase": "Failed"}, "spec": {"nodeName": "n1"}}),
        )
        .await
        .body;
    assert_eq!(
        main["status"]["phase"], "Running",
        "main writes keep the status"
    );
    assert_eq!(main["spec"]["nodeName"], "n1");
    let p = raw
        .patch(
            &format!("{PODS}/a/status"),
            "application/merge-patch+json",
            &json!({"status": {"phase": "Succeeded"}}),
        )
        .await
        .body;
    assert_eq!(p["status"]["phase"], "Succeeded");
    let f = raw
        .get("/api/v1/pods?fieldSelector=status.phase%3DSucceeded")
        .await;
    assert_eq!(names(&f.body), ["a"]);
    assert_eq!(
        raw.get("/api/v1/namespaces/default/configmaps/x/status")
            .await
            .status,
        404
    );
    server.shutdown().await;
}

#[tokio::test]
async fn patches_merge_json_and_strategic() {
    let server = TestApiServer::start().await.unwrap();
    let raw = Raw::new(&server.url());
    raw.post(
        "/api/v1/namespaces/default/configmaps",
        &configmap("default", "c", json!({"a": "1"})),
    )
    .await;
    let path = "/api/v1/namespaces/default/configmaps/c";
    let m = raw
        .patch(
            path,
            "application/merge-patch+json",
            &json!({"metadata": {"labels": {"a": null, "b": "2"}}}),
        )
        .await;
    assert_eq!(m.body["metadata"]["labels"], json!({"b": "2"}));
    let j = raw
        .patch(path, "application/json-patch+json", &json!([{"op": "add", "path": "/data/z", "value": "9"}, {"op": "remove", "path": "/data/k"}]))
        .await;
    assert_eq!(j.body["data"], json!({"z": "9"}));
    let s = raw
        .patch(
            path,
            "application/strategic-merge-patch+json",
            &json!({"data": {"y": "8"}}),
        )
        .await;
    assert_eq!(s.body["data"], json!({"y": "8", "z": "9"}));
    let failed = raw
        .patch(
            path,
            "application/json-patch+json",
            &json!([{"op": "test", "path": "/data/y", "value": "0"}]),
        )
        .await;
    assert_eq!(failed.status, 422);
    // Server-side apply is served (tests/server_side_apply.rs); without a field manager it is
    // 422, as kube-apiserver answers.
    let apply = raw
        .patch(path, "application/apply-patch+yaml", &json!({}))
        .await;
    assert_eq!(apply.status, 422);
    let stale = raw
        .patch(
            path,
            "application/merge-patch+json",
            &json!({"metadata": {"resourceVersion": "1"}}),
        )
        .await;
    assert_eq!(stale.status, 409);
    server.shutdown().await;
}

#[tokio::test]
async fn finalizers_delay_deletion() {
    let server = TestApiServer::start().await.unwrap();
    let raw = Raw::new(&server.url());
    let mut p = pod("default", "a", json!({}));
    p["metadata"]["finalizers"] = json!(["example.com/hold"]);
    let created = raw.post(PODS, &p).await.body;
    let from = rv(&created);
    let d = raw.delete(&format!("{PODS}/a")).await;
    assert_eq!(d.status, 200);
    assert!(d.body["metadata"]["deletionTimestamp"].is_string());
    let still = raw.get(&format!("{PODS}/a")).await;
    assert_eq!(still.status, 200);
    let released = raw
        .patch(
            &format!("{PODS}/a"),
            "application/merge-patch+json",
            &json!({"metadata": {"finalizers": null}}),
        )
        .await;
    assert_eq!(released.status, 200);
    assert_eq!(raw.get(&format!("{PODS}/a")).await.status, 404);
    let mut w = raw
        .watch(&format!("{PODS}?watch=true&resourceVersion={from}"))
        .await;
    let e1 = w.next().await.unwrap();
    let e2 = w.next().await.unwrap();
    assert_eq!(e1["type"], "MODIFIED");
    assert!(e1["object"]["metadata"]["deletionTimestamp"].is_string());
    assert_eq!(e2["type"], "DELETED");
    // Preconditions.
    let b = raw.post(PODS, &pod("default", "b", json!({}))).await.body;
    let wrong = raw
        .request(
            "DELETE",
            &format!("{PODS}/b"),
            Some(&json!({"preconditions": {"uid": "nope"}})),
        )
        .await;
    assert_eq!(wrong.status, 409);
    let right = raw
        .request("DELETE", &format!("{PODS}/b"), Some(&json!({"preconditions": {"uid": b["metadata"]["uid"], "resourceVersion": b["metadata"]["resourceVersion"]}})))
        .await;
    assert_eq!(right.status, 200);
    assert_eq!(raw.delete(&format!("{PODS}/b")).await.status, 404);
    server.shutdown().await;
}

#[tokio::test]
async fn delete_collection_and_namespace_cascade() {
    let server = TestApiServer::start().await.unwrap();
    server.create_namespace("team").unwrap();
    let raw = Raw::new(&server.url());
    for (n, app) in [("a", "web"), ("b", "web"), ("c", "db")] {
        raw.post(
            "/api/v1/namespaces/team/pods",
            &pod("team", n, json!({"app": app})),
        )
        .await;
    }
    let r = raw
        .request(
            "DELETE",
            "/api/v1/namespaces/team/pods?labelSelector=app%3Dweb",
            None,
        )
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body["kind"], "PodList");
    assert_eq!(names(&r.body), ["a", "b"]);
    assert_eq!(
        names(&raw.get("/api/v1/namespaces/team/pods").await.body),
        ["c"]
    );
    assert_eq!(raw.delete("/api/v1/namespaces/team").await.status, 200);
    assert!(names(&raw.get("/api/v1/pods").await.body).is_empty());
    assert_eq!(raw.get("/api/v1/namespaces/team").await.status, 404);
    server.shutdown().await;
}

#[tokio::test]
async fn crds_register_and_unregister_their_resources() {
    let server = TestApiServer::start().await.unwrap();
    let raw = Raw::new(&server.url());
    let crd = json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
                 "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "shortNames": ["wd"]},
                 "versions": [
                     {"name": "v1", "served": true, "storage": true,
                      "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}},
                      "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}},
                     {"name": "v1beta1", "served": true, "storage": false,
                      "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}
    });
    let c = raw
        .post(
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
            &crd,
        )
        .await;
    assert_eq!(c.status, 201, "{}", c.body);
    assert_eq!(c.body["status"]["conditions"][1]["type"], "Established");
    let disc = raw.get("/apis/example.com/v1").await.body;
    let res: Vec<&str> = disc["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(res, ["widgets", "widgets/status", "widgets/scale"]);
    let groups = raw.get("/apis").await.body;
    assert!(
        groups["groups"]
            .as_array()
            .unwrap()
            .iter()
            .any(|g| g["name"] == "example.com")
    );
    let path = "/apis/example.com/v1/namespaces/default/widgets";
    let w = json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"},
                   "spec": {"replicas": 1}, "status": {"replicas": 5}});
    let created = raw.post(path, &w).await;
    assert_eq!(created.status, 201);
    assert!(
        created.body["status"].is_null(),
        "status is dropped on create with a status subresource"
    );
    // Other served version: same storage, apiVersion rewritten.
    let beta = raw
        .get("/apis/example.com/v1beta1/namespaces/default/widgets/w")
        .await
        .body;
    assert_eq!(beta["apiVersion"], "example.com/v1beta1");
    // Scale subresource.
    let scale = raw.get(&format!("{path}/w/scale")).await.body;
    assert_eq!(
        (scale["kind"].as_str(), scale["spec"]["replicas"].as_i64()),
        (Some("Scale"), Some(1))
    );
    let scaled = raw
        .patch(
            &format!("{path}/w/scale"),
            "application/merge-patch+json",
            &json!({"spec": {"replicas": 4}}),
        )
        .await;
    assert_eq!(scaled.body["spec"]["replicas"], 4);
    assert_eq!(
        raw.get(&format!("{path}/w")).await.body["spec"]["replicas"],
        4
    );
    // Deleting the CRD removes its objects and its API.
    let from = server.resource_version();
    let mut watch = raw
        .watch(&format!("{path}?watch=true&resourceVersion={from}"))
        .await;
    assert_eq!(
        raw.delete("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com")
            .await
            .status,
        200
    );
    assert_eq!(watch.next().await.unwrap()["type"], "DELETED");
    assert_eq!(raw.get(path).await.status, 404);
    assert_eq!(raw.get("/apis/example.com/v1").await.status, 404);
    // The direct helper registers from YAML.
    let yaml = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../shared/corpus/crds/keda/keda.sh_scaledobjects.yaml"
    ))
    .unwrap();
    server.register_crd_yaml(&yaml).unwrap();
    assert_eq!(
        raw.get("/apis/keda.sh/v1alpha1/scaledobjects").await.status,
        200
    );
    server.shutdown().await;
}

#[tokio::test]
async fn deployments_scale_and_direct_helpers() {
    let server = TestApiServer::start().await.unwrap();
    let raw = Raw::new(&server.url());
    let d = server
        .create_object(json!({"apiVersion": "apps/v1", "kind": "Deployment",
                               "metadata": {"name": "web", "namespace": "default"},
                               "spec": {"replicas": 2,
                                        "selector": {"matchLabels": {"app": "web"}},
                                        "template": {"metadata": {"labels": {"app": "web"}},
                                                     "spec": {"containers": [{"name": "web", "image": "nginx"}]}}}}))
        .unwrap();
    assert_eq!(d["metadata"]["generation"], 1);
    let put = raw
        .put("/apis/apps/v1/namespaces/default/deployments/web/scale",
             &json!({"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "web", "namespace": "default"}, "spec": {"replicas": 3}}))
        .await;
    assert_eq!(put.status, 200, "{}", put.body);
    let after = raw
        .get("/apis/apps/v1/namespaces/default/deployments/web")
        .await
        .body;
    assert_eq!(
        (
            after["spec"]["replicas"].as_i64(),
            after["metadata"]["generation"].as_i64()
        ),
        (Some(3), Some(2))
    );
    assert!(
        server
            .create_object(json!({"apiVersion": "nope/v1", "kind": "X", "metadata": {"name": "x"}}))
            .is_err()
    );
    server.shutdown().await;
}
