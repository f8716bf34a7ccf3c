//! Deletion, dry runs and the request details clients see, each checked against the
//! kube-apiserver behaviour its test names, over raw HTTP.

use std::time::Duration;

use kinform_tests::eventually;
use kinform_tests::http::{Raw, configmap, names, pod};
use kinform_testserver::TestApiServer;
use serde_json::{Value, json};

const CMS: &str = "/api/v1/namespaces/default/configmaps";
const PODS: &str = "/api/v1/namespaces/default/pods";
const RSS: &str = "/apis/apps/v1/namespaces/default/replicasets";

fn owner_ref(kind: &str, obj: &Value) -> Value {
    json!({
        "apiVersion": obj["apiVersion"], "kind": kind,
        "name": obj["metadata"]["name"], "uid": obj["metadata"]["uid"],
        "controller": true, "blockOwnerDeletion": true,
    })
}

fn replicaset(name: &str) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "ReplicaSet",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}},
                         "spec": {"containers": [{"name": "c", "image": "nginx"}]}},
        },
    })
}

/// A ReplicaSet owning two pods.
async fn owner_with_pods(raw: &Raw, name: &str) -> Value {
    let rs = raw.post(RSS, &replicaset(name)).await;
    assert_eq!(rs.status, 201, "{}", rs.body);
    for i in 0..2 {
        let mut p = pod("default", &format!("{name}-{i}"), json!({"app": name}));
        p["metadata"]["ownerReferences"] = json!([owner_ref("ReplicaSet", &rs.body)]);
        assert_eq!(raw.post(PODS, &p).await.status, 201);
    }
    rs.body
}

async fn pod_names(raw: &Raw) -> Vec<String> {
    names(&raw.get(PODS).await.body)
}

/// `dryRun=All` (query, or `dryRun: [All]` in DeleteOptions) runs create, update, patch,
/// delete and delete-collection and persists nothing; a dry-run create answers without a
/// resourceVersion; any other value is refused with 400.
#[tokio::test]
async fn dry_run_persists_nothing() {
    let server = TestApiServer::start().await.unwrap();
    let raw = Raw::new(&server.url());
    let created = raw
        .post(
            &format!("{CMS}?dryRun=All"),
            &configmap("default", "a", json!({})),
        )
        .await;
    assert_eq!(created.status, 201, "{}", created.body);
    assert!(created.body["metadata"]["uid"].is_string());
    assert!(created.body["metadata"].get("resourceVersion").is_none());
    assert_eq!(raw.get(&format!("{CMS}/a")).await.status, 404);

    assert_eq!(
        raw.post(CMS, &configmap("default", "b", json!({})))
            .await
            .status,
        201
    );
    let rv = server.resource_version();
    let mut changed = configmap("default", "b", json!({"x": "1"}));
    changed["data"] = json!({"k": "changed"});
    let put = raw.put(&format!("{CMS}/b?dryRun=All"), &changed).await;
    assert_eq!(put.status, 200);
    assert_eq!(put.body["data"]["k"], "changed");
    let patch = raw
        .patch(
            &format!("{CMS}/b?dryRun=All"),
            "application/merge-patch+json",
            &json!({"data": {"k": "patched"}}),
        )
        .await;
    assert_eq!(patch.body["data"]["k"], "patched");
    let del = raw
        .request(
            "DELETE",
            &format!("{CMS}/b"),
            Some(&json!({"dryRun": ["All"]})),
        )
        .await;
    assert_eq!(del.status, 200, "{}", del.body);
    let all = raw
        .request("DELETE", &format!("{CMS}?dryRun=All"), None)
        .await;
    assert_eq!(names(&all.body), ["b"]);
    let stored = raw.get(&format!("{CMS}/b")).await;
    assert_eq!(stored.status, 200);
    assert_eq!(stored.body["data"]["k"], "v");
    assert_eq!(
        server.resource_version(),
        rv,
        "a dry run took a resourceVersion"
    );

    let bad = raw
        .post(
            &format!("{CMS}?dryRun=Yes"),
            &configmap("default", "c", json!({})),
        )
        .await;
    assert_eq!(bad.status, 400);
    let bad = raw
        .request(
            "DELETE",
            &format!("{CMS}/b"),
            Some(&json!({"dryRun": ["Most"]})),
        )
        .await;
    assert_eq!(bad.status, 400);
    server.shutdown().await;
}

/// A completed delete answers a `Status` of `Success` naming the object (group, resource as
/// `kind`, uid) for most resources, and the object itself for pods (their storage's
/// `ReturnDeletedObject`); a body that is not a DeleteOptions object is a 400, never a crash.
#[tokio::test]
async fn delete_answers_status_or_object() {
    let server = TestApiServer::start().await.unwrap();
    let raw = Raw::new(&server.url());
    let cm = raw
        .post(CMS, &configmap("default", "a", json!({})))
        .await
        .body;
    let gone = raw.delete(&format!("{CMS}/a")).await;
    assert_eq!(gone.status, 200);
    assert_eq!(gone.body["kind"], "Status");
    assert_eq!(gone.body["status"], "Success");
    assert_eq!(
        gone.body["details"],
        json!({"name": "a", "kind": "configmaps", "uid": cm["metadata"]["uid"]})
    );
    raw.post(PODS, &pod("default", "p", json!({}))).await;
    let gone = raw.delete(&format!("{PODS}/p")).await;
    assert_eq!(gone.body["kind"], "Pod");

    raw.post(CMS, &configmap("default", "b", json!({}))).await;
    for body in [
        json!([1, 2]),
        json!("Orphan"),
        json!({"propagationPolicy": "Sideways"}),
    ] {
        let r = raw
            .request(
                "DELETE",
                &format!("{CMS}/b?propagationPolicy=Orphan"),
                Some(&body),
            )
            .await;
        assert!(r.status == 400 || r.status == 422, "{body}: {}", r.status);
    }
    assert_eq!(raw.get(&format!("{CMS}/b")).await.status, 200);
    server.shutdown().await;
}

/// `propagationPolicy: Orphan`: the owner goes, its dependents stay and lose their
/// ownerReference to it (the garbage collector's orphaning).
#[tokio::test]
async fn orphan_keeps_dependents() {
    let server = TestApiServer::start().await.unwrap();
    let raw = Raw::new(&server.url());
    owner_with_pods(&raw, "web").await;
    let r = raw
        .request(
            "DELETE",
            &format!("{RSS}/web"),
            Some(&json!({"propagationPolicy": "Orphan"})),
        )
        .await;
    assert_eq!(r.status, 200);
    assert!(
        r.body["metadata"]["deletionTimestamp"].is_string(),
        "{}",
        r.body
    );
    assert_eq!(r.body["metadata"]["finalizers"], json!(["orphan"]));
    assert_eq!(raw.get(&format!("{RSS}/web")).await.status, 404);
    // Give the background collector time to act wrongly before checking it did not.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(pod_names(&raw).await, ["web-0", "web-1"]);
    let p = raw.get(&format!("{PODS}/web-0")).await.body;
    assert!(p["metadata"].get("ownerReferences").is_none(), "{p}");
    server.shutdown().await;
}

/// `propagationPolicy: Foreground`: the owner stays, marked with `deletionTimestamp` and the
/// `foregroundDeletion` finalizer, until its dependents are gone; a dependent kept by a
/// finalizer of its own keeps the owner too, until it goes.
#[tokio::test]
async fn foreground_deletes_dependents_first() {
    let server = TestApiServer::start().await.unwrap();
    let raw = Raw::new(&server.url());
    owner_with_pods(&raw, "web").await;
    raw.patch(
        &format!("{PODS}/web-1"),
        "application/merge-patch+json",
        &json!({"metadata": {"finalizers": ["example.com/hold"]}}),
    )
    .await;
    let r = raw
        .request(
            "DELETE",
            &format!("{RSS}/web?propagationPolicy=Foreground"),
            None,
        )
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(
        r.body["metadata"]["finalizers"],
        json!(["foregroundDeletion"])
    );
    assert_eq!(raw.get(&format!("{PODS}/web-0")).await.status, 404);
    let held = raw.get(&format!("{RSS}/web")).await;
    assert_eq!(held.status, 200, "the owner went before its dependents");
    raw.patch(
        &format!("{PODS}/web-1"),
        "application/merge-patch+json",
        &json!({"metadata": {"finalizers": null}}),
    )
    .await;
    assert!(
        eventually(Duration::from_secs(5), async || {
            raw.get(&format!("{RSS}/web")).await.status == 404
        })
        .await,
        "the owner stayed after its last dependent went"
    );
    assert!(pod_names(&raw).await.is_empty());
    server.shutdown().await;
}

/// `propagationPolicy: Background` (the default): the owner goes at once and the garbage
/// collector deletes its dependents afterwards.
#[tokio::test]
async fn background_collects_dependents_after() {
    let server = TestApiServer::start().await.unwrap();
    let raw = Raw::new(&server.url());
    owner_with_pods(&raw, "web").await;
    let r = raw.delete(&format!("{RSS}/web")).await;
    assert_eq!(r.body["status"], "Success");
    assert!(
        eventually(Duration::from_secs(5), async || pod_names(&raw)
            .await
            .is_empty())
        .await
    );
    server.shutdown().await;
}

/// Deleting a namespace marks it `Terminating`, forbids new content (the NamespaceLifecycle
/// admission plugin answers 403), deletes what is in it honouring finalizers, and removes it
/// when it is empty (the namespace controller).
#[tokio::test]
async fn namespace_deletion_terminates_then_empties() {
    let server = TestApiServer::start().await.unwrap();
    let raw = Raw::new(&server.url());
    let ns = raw
        .post("/api/v1/namespaces", &json!({"metadata": {"name": "team"}}))
        .await;
    assert_eq!(ns.body["spec"]["finalizers"], json!(["kubernetes"]));
    let cms = "/api/v1/namespaces/team/configmaps";
    raw.post(cms, &configmap("team", "a", json!({}))).await;
    let mut held = pod("team", "held", json!({}));
    held["metadata"]["finalizers"] = json!(["example.com/hold"]);
    raw.post("/api/v1/namespaces/team/pods", &held).await;

    let r = raw.delete("/api/v1/namespaces/team").await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body["status"]["phase"], "Terminating");
    assert!(r.body["metadata"]["deletionTimestamp"].is_string());
    assert_eq!(raw.get(&format!("{cms}/a")).await.status, 404);
    let refused = raw.post(cms, &configmap("team", "b", json!({}))).await;
    assert_eq!(refused.status, 403, "{}", refused.body);
    assert_eq!(refused.body["reason"], "Forbidden");
    assert_eq!(raw.get("/api/v1/namespaces/team").await.status, 200);

    raw.patch(
        "/api/v1/namespaces/team/pods/held",
        "application/merge-patch+json",
        &json!({"metadata": {"finalizers": null}}),
    )
    .await;
    assert!(
        eventually(Duration::from_secs(5), async || {
            raw.get("/api/v1/namespaces/team").await.status == 404
        })
        .await,
        "the emptied namespace stayed"
    );
    server.shutdown().await;
}

/// Query booleans are parsed as kube-apiserver parses them: only `0` and `false` (any case)
/// are false, so the Python client's `watch=True` opens a watch.
#[tokio::test]
async fn query_booleans_as_the_real_server() {
    let server = TestApiServer::start().await.unwrap();
    let raw = Raw::new(&server.url());
    raw.post(CMS, &configmap("default", "a", json!({}))).await;
    let mut w = raw.watch(&format!("{CMS}?watch=True")).await;
    assert_eq!(w.next().await.unwrap()["type"], "ADDED");
    for off in ["false", "False", "0"] {
        let list = raw.get(&format!("{CMS}?watch={off}")).await;
        assert_eq!(list.body["kind"], "ConfigMapList", "watch={off}");
    }
    server.shutdown().await;
}

/// Errors carry a `Status` shaped as kube-apiserver's: a path that names nothing is a 404
/// with (empty) `details`; a verb a resource does not serve is a 405.
#[tokio::test]
async fn status_shapes_and_verbs() {
    let server = TestApiServer::start().await.unwrap();
    let raw = Raw::new(&server.url());
    let r = raw.get("/apis/nope.example.com/v1/things").await;
    assert_eq!(r.status, 404);
    assert_eq!(
        r.body["message"],
        "the server could not find the requested resource"
    );
    assert_eq!(r.body["details"], json!({}));
    let r = raw
        .get("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews")
        .await;
    assert_eq!(r.status, 405);
    let missing = raw.get(&format!("{CMS}/none")).await;
    assert_eq!(
        missing.body["details"],
        json!({"name": "none", "kind": "configmaps"})
    );
    server.shutdown().await;
}

/// `SelfSubjectAccessReview` (`kubectl auth can-i`) and `SelfSubjectReview` (`kubectl auth
/// whoami`) are created and answered with a status, and stored nowhere.
#[tokio::test]
async fn reviews_are_answered() {
    let server = TestApiServer::start().await.unwrap();
    let raw = Raw::new(&server.url());
    let ssar = raw
        .post(
            "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
            &json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
                    "spec": {"resourceAttributes": {"verb": "list", "resource": "pods"}}}),
        )
        .await;
    assert_eq!(ssar.status, 201);
    assert_eq!(ssar.body["status"]["allowed"], true);
    let bad = raw
        .post(
            "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
            &json!({"spec": {}}),
        )
        .await;
    assert_eq!(bad.status, 422);
    let ssr = raw
        .post(
            "/apis/authentication.k8s.io/v1/selfsubjectreviews",
            &json!({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}),
        )
        .await;
    assert_eq!(ssr.status, 201);
    assert!(ssr.body["status"]["userInfo"]["username"].is_string());
    let version = raw.get("/version").await.body;
    assert_eq!(
        (version["major"].as_str(), version["minor"].as_str()),
        (Some("1"), Some("35"))
    );
    server.shutdown().await;
}
