//! The registry rules of built-in kinds that kube-apiserver enforces beyond the OpenAPI
//! schema, over raw HTTP: Secret `stringData`, the Job strategy's generated selector and
//! restart policy rule, immutable fields, CRD group rules, immortal namespaces, the scale
//! subresource's bounds, metadata a patch may not change, and YAML request bodies.

use base64::Engine as _;
use kinform_tests::http::Raw;
use kinform_testserver::TestApiServer;
use serde_json::{Value, json};

const SECRETS: &str = "/api/v1/namespaces/default/secrets";
const CONFIGMAPS: &str = "/api/v1/namespaces/default/configmaps";
const JOBS: &str = "/apis/batch/v1/namespaces/default/jobs";
const DEPLOYMENTS: &str = "/apis/apps/v1/namespaces/default/deployments";
const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
const MERGE: &str = "application/merge-patch+json";
const JSON_PATCH: &str = "application/json-patch+json";
const APPLY: &str = "application/apply-patch+yaml";

fn b64(s: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(s)
}

fn cause(r: &kinform_tests::http::Resp) -> (&str, &str, &str) {
    let c = &r.body["details"]["causes"][0];
    (
        c["field"].as_str().unwrap_or_default(),
        c["reason"].as_str().unwrap_or_default(),
        c["message"].as_str().unwrap_or_default(),
    )
}

/// `Convert_v1_Secret_To_core_Secret`: `stringData` is merged into `data` (base64, winning a
/// clash) on create, update, patch and apply, and never stored or answered.
#[tokio::test]
async fn secret_string_data_is_merged_into_data() {
    let server = TestApiServer::start().await.unwrap();
    let raw = Raw::new(&server.url());
    let r = raw
        .post(
            SECRETS,
            &json!({"metadata": {"name": "s"},
                    "data": {"a": b64("old"), "b": b64("kept")},
                    "stringData": {"a": "new", "c": "plain"}}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert!(r.body.get("stringData").is_none(), "{}", r.body);
    assert_eq!(
        r.body["data"],
        json!({"a": b64("new"), "b": b64("kept"), "c": b64("plain")})
    );
    let read = raw.get(&format!("{SECRETS}/s")).await;
    assert!(read.body.get("stringData").is_none());
    assert_eq!(read.body["data"]["c"], b64("plain"));

    let mut put = read.body.clone();
    put["stringData"] = json!({"d": "put"});
    let r = raw.put(&format!("{SECRETS}/s"), &put).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["data"]["d"], b64("put"));
    assert!(r.body.get("stringData").is_none());

    let r = raw
        .patch(
            &format!("{SECRETS}/s"),
            MERGE,
            &json!({"stringData": {"b": "patched"}}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["data"]["b"], b64("patched"));
    assert!(r.body.get("stringData").is_none());

    let r = raw
        .patch(
            &format!("{SECRETS}/applied?fieldManager=me"),
            APPLY,
            &json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "applied"},
                    "stringData": {"token": "t"}}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.body["data"]["token"], b64("t"));
    assert!(r.body.get("stringData").is_none());
    server.shutdown().await;
}

fn job(name: &str, restart: Option<&str>) -> Value {
    let mut pod = json!({"containers": [{"name": "c", "image": "busybox:1"}]});
    if let Some(r) = restart {
        pod["restartPolicy"] = json!(r);
    }
    json!({"metadata": {"name": name},
           "spec": {"template": {"metadata": {"labels": {"app": "batch"}}, "spec": pod}}})
}

/// The Job strategy's `generateSelector` and `ValidateJob`'s restart policy rule.
#[tokio::test]
async fn jobs_get_a_generated_selector_and_need_a_terminating_restart_policy() {
    let server = TestApiServer::start().await.unwrap();
    let raw = Raw::new(&server.url());
    let r = raw.post(JOBS, &job("work", Some("Never"))).await;
    assert_eq!(r.status, 201, "{}", r.body);
    let uid = r.body["metadata"]["uid"].as_str().unwrap();
    let spec = &r.body["spec"];
    assert_eq!(spec["manualSelector"], false);
    assert_eq!(
        spec["selector"],
        json!({"matchLabels": {"batch.kubernetes.io/controller-uid": uid}})
    );
    assert_eq!(
        spec["template"]["metadata"]["labels"],
        json!({"app": "batch", "batch.kubernetes.io/controller-uid": uid,
               "batch.kubernetes.io/job-name": "work", "controller-uid": uid, "job-name": "work"})
    );
    assert_eq!(r.body["metadata"]["labels"]["app"], "batch");

    // Unset, the pod defaulting makes it Always: refused as a required value.
    for restart in [None, Some("Always")] {
        let r = raw.post(JOBS, &job("bad", restart)).await;
        assert_eq!(r.status, 422, "{}", r.body);
        assert_eq!(
            cause(&r),
            (
                "spec.template.spec.restartPolicy",
                "FieldValueRequired",
                "Required value: valid values: \"OnFailure\", \"Never\""
            )
        );
        assert_eq!(
            r.body["message"],
            "Job.batch \"bad\" is invalid: spec.template.spec.restartPolicy: Required value: valid values: \"OnFailure\", \"Never\""
        );
    }

    // A manual selector is the client's: required, and it must select the template.
    let mut manual = job("manual", Some("OnFailure"));
    manual["spec"]["manualSelector"] = json!(true);
    let r = raw.post(JOBS, &manual).await;
    assert_eq!(r.status, 422);
    assert_eq!(cause(&r).0, "spec.selector");
    manual["spec"]["selector"] = json!({"matchLabels": {"app": "other"}});
    let r = raw.post(JOBS, &manual).await;
    assert_eq!(r.status, 422);
    assert_eq!(cause(&r).0, "spec.template.metadata.labels");
    manual["spec"]["selector"] = json!({"matchLabels": {"app": "batch"}});
    let r = raw.post(JOBS, &manual).await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(
        r.body["spec"]["template"]["metadata"]["labels"],
        json!({"app": "batch"})
    );

    // `ValidateJobUpdate`: the selector is immutable.
    let r = raw
        .patch(
            &format!("{JOBS}/manual"),
            MERGE,
            &json!({"spec": {"selector": {"matchLabels": {"app": "batch", "x": "y"}},
                    "template": {"metadata": {"labels": {"x": "y"}}}}}),
        )
        .await;
    assert_eq!(r.status, 422, "{}", r.body);
    assert_eq!(cause(&r).0, "spec.selector");
    server.shutdown().await;
}

/// `ValidateImmutableField` on apps/v1 selectors, and `ValidateConfigMapUpdate` /
/// `ValidateSecretUpdate` on objects with `immutable: true`.
#[tokio::test]
async fn immutable_fields_are_refused() {
    let server = TestApiServer::start().await.unwrap();
    let raw = Raw::new(&server.url());
    let dep = json!({"metadata": {"name": "web"},
        "spec": {"selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}},
                              "spec": {"containers": [{"name": "c", "image": "nginx:1"}]}}}});
    assert_eq!(raw.post(DEPLOYMENTS, &dep).await.status, 201);
    let r = raw
        .patch(
            &format!("{DEPLOYMENTS}/web"),
            MERGE,
            &json!({"spec": {"selector": {"matchLabels": {"app": "web2"}},
                    "template": {"metadata": {"labels": {"app": "web2"}}}}}),
        )
        .await;
    assert_eq!(r.status, 422, "{}", r.body);
    let (field, reason, message) = cause(&r);
    assert_eq!((field, reason), ("spec.selector", "FieldValueInvalid"));
    assert!(message.ends_with(": field is immutable"), "{message}");
    assert!(
        r.body["message"]
            .as_str()
            .unwrap()
            .starts_with("Deployment.apps \"web\" is invalid: spec.selector: Invalid value: ")
    );
    let r = raw
        .patch(
            &format!("{DEPLOYMENTS}/web"),
            MERGE,
            &json!({"spec": {"replicas": -1}}),
        )
        .await;
    assert_eq!(r.status, 422);
    assert_eq!(
        cause(&r),
        (
            "spec.replicas",
            "FieldValueInvalid",
            "Invalid value: -1: must be greater than or equal to 0"
        )
    );

    let cm = json!({"metadata": {"name": "frozen"}, "immutable": true, "data": {"k": "v"}});
    assert_eq!(raw.post(CONFIGMAPS, &cm).await.status, 201);
    let immutable = "Forbidden: field is immutable when `immutable` is set";
    for (patch, field) in [
        (json!({"data": {"k": "w"}}), "data"),
        (json!({"binaryData": {"b": b64("x")}}), "binaryData"),
        (json!({"immutable": null}), "immutable"),
        (json!({"immutable": false}), "immutable"),
    ] {
        let r = raw
            .patch(&format!("{CONFIGMAPS}/frozen"), MERGE, &patch)
            .await;
        assert_eq!(r.status, 422, "{patch}: {}", r.body);
        assert_eq!(cause(&r), (field, "FieldValueForbidden", immutable));
    }
    // A write that changes nothing else passes.
    let r = raw
        .patch(
            &format!("{CONFIGMAPS}/frozen"),
            MERGE,
            &json!({"metadata": {"labels": {"a": "b"}}}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);

    let secret = json!({"metadata": {"name": "frozen"}, "immutable": true,
                        "data": {"k": b64("v")}});
    assert_eq!(raw.post(SECRETS, &secret).await.status, 201);
    let r = raw
        .patch(
            &format!("{SECRETS}/frozen"),
            MERGE,
            &json!({"stringData": {"k": "w"}}),
        )
        .await;
    assert_eq!(r.status, 422, "{}", r.body);
    assert_eq!(cause(&r), ("data", "FieldValueForbidden", immutable));
    assert_eq!(
        r.body["message"],
        "Secret \"frozen\" is invalid: data: Forbidden: field is immutable when `immutable` is set"
    );
    server.shutdown().await;
}

fn crd(group: &str, annotations: Value) -> Value {
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("widgets.{group}"), "annotations": annotations},
        "spec": {"group": group, "scope": "Namespaced",
                 "names": {"plural": "widgets", "kind": "Widget"},
                 "versions": [{"name": "v1", "served": true, "storage": true,
                               "schema": {"openAPIV3Schema": {"type": "object"}}}]}})
}

/// apiextensions' group validation: a domain with a dot (so no built-in group such as
/// `apps`), and `validateAPIApproval` for the protected `*.k8s.io` groups. A CRD naming a
/// built-in resource does not replace it.
#[tokio::test]
async fn crd_groups_follow_apiextensions_rules() {
    let server = TestApiServer::start().await.unwrap();
    let raw = Raw::new(&server.url());
    let r = raw.post(CRDS, &crd("apps", json!({}))).await;
    assert_eq!(r.status, 422, "{}", r.body);
    assert_eq!(
        r.body["message"],
        "CustomResourceDefinition.apiextensions.k8s.io \"widgets.apps\" is invalid: spec.group: Invalid value: \"apps\": should be a domain with at least one dot"
    );
    let r = raw.post(CRDS, &crd("example.k8s.io", json!({}))).await;
    assert_eq!(r.status, 422, "{}", r.body);
    assert_eq!(
        cause(&r),
        (
            "metadata.annotations[api-approved.kubernetes.io]",
            "FieldValueRequired",
            "Required value: protected groups must have approval annotation \"api-approved.kubernetes.io\", see https://github.com/kubernetes/enhancements/pull/1111"
        )
    );
    let r = raw
        .post(
            CRDS,
            &crd(
                "x.kubernetes.io",
                json!({"api-approved.kubernetes.io": "not a url"}),
            ),
        )
        .await;
    assert_eq!(r.status, 422, "{}", r.body);
    assert_eq!(cause(&r).1, "FieldValueInvalid");
    for approval in [
        "https://github.com/kubernetes/kubernetes/pull/1",
        "unapproved, testing",
    ] {
        let group = if approval.starts_with("https") {
            "a.k8s.io"
        } else {
            "b.k8s.io"
        };
        let r = raw
            .post(
                CRDS,
                &crd(group, json!({"api-approved.kubernetes.io": approval})),
            )
            .await;
        assert_eq!(r.status, 201, "{}", r.body);
    }
    // A CRD naming a built-in resource leaves the built-in served.
    let mut shadow = crd(
        "networking.k8s.io",
        json!({"api-approved.kubernetes.io": "unapproved"}),
    );
    shadow["metadata"]["name"] = json!("ingresses.networking.k8s.io");
    shadow["spec"]["names"] = json!({"plural": "ingresses", "kind": "Ingress"});
    let r = raw.post(CRDS, &shadow).await;
    assert_eq!(r.status, 201, "{}", r.body);
    let ing = json!({"metadata": {"name": "i"}, "spec": {"defaultBackend": {
        "service": {"name": "s", "port": {"number": 80}}}}});
    let path = "/apis/networking.k8s.io/v1/namespaces/default/ingresses";
    let r = raw.post(path, &ing).await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert!(r.body["status"].is_object() || r.body["status"].is_null());
    let del = raw
        .delete(&format!("{CRDS}/ingresses.networking.k8s.io"))
        .await;
    assert_eq!(del.status, 200);
    assert_eq!(raw.get(&format!("{path}/i")).await.status, 200);
    server.shutdown().await;
}

/// NamespaceLifecycle: `default`, `kube-system` and `kube-public` may not be deleted.
#[tokio::test]
async fn immortal_namespaces_are_not_deleted() {
    let server = TestApiServer::start().await.unwrap();
    let raw = Raw::new(&server.url());
    for ns in ["default", "kube-system", "kube-public"] {
        let r = raw.delete(&format!("/api/v1/namespaces/{ns}")).await;
        assert_eq!(r.status, 403, "{}", r.body);
        assert_eq!(r.body["reason"], "Forbidden");
        assert_eq!(
            r.body["message"],
            format!("namespaces \"{ns}\" is forbidden: this namespace may not be deleted")
        );
        let still = raw.get(&format!("/api/v1/namespaces/{ns}")).await;
        assert!(still.body["metadata"]["deletionTimestamp"].is_null());
    }
    server.shutdown().await;
}

/// `ValidateScale`, and what the patch and update handlers answer to a uid or namespace
/// change (`ValidateObjectMetaUpdate`'s immutable uid, `checkName`'s namespace check).
#[tokio::test]
async fn hostile_writes_get_a_clear_status() {
    let server = TestApiServer::start().await.unwrap();
    let raw = Raw::new(&server.url());
    let dep = json!({"metadata": {"name": "web"},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}},
                              "spec": {"containers": [{"name": "c", "image": "nginx:1"}]}}}});
    assert_eq!(raw.post(DEPLOYMENTS, &dep).await.status, 201);
    let scale = format!("{DEPLOYMENTS}/web/scale");
    let r = raw
        .patch(&scale, MERGE, &json!({"spec": {"replicas": -5}}))
        .await;
    assert_eq!(r.status, 422, "{}", r.body);
    assert_eq!(
        r.body["message"],
        "Scale.autoscaling \"web\" is invalid: spec.replicas: Invalid value: -5: must be greater than or equal to 0"
    );
    let mut put = raw.get(&scale).await.body;
    put["spec"]["replicas"] = json!(-5);
    assert_eq!(raw.put(&scale, &put).await.status, 422);
    assert_eq!(
        raw.get(&format!("{DEPLOYMENTS}/web")).await.body["spec"]["replicas"],
        2
    );

    let cm = json!({"metadata": {"name": "c"}, "data": {"a": "1"}});
    let created = raw.post(CONFIGMAPS, &cm).await.body;
    let r = raw
        .patch(
            &format!("{CONFIGMAPS}/c"),
            JSON_PATCH,
            &json!([{"op": "replace", "path": "/metadata/uid", "value": "0000"}]),
        )
        .await;
    assert_eq!(r.status, 422, "{}", r.body);
    assert_eq!(
        cause(&r),
        (
            "metadata.uid",
            "FieldValueInvalid",
            "Invalid value: \"0000\": field is immutable"
        )
    );
    let r = raw
        .patch(
            &format!("{CONFIGMAPS}/c"),
            JSON_PATCH,
            &json!([{"op": "replace", "path": "/metadata/namespace", "value": "kube-system"}]),
        )
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(
        r.body["message"],
        "the namespace of the object (kube-system) does not match the namespace on the request (default)"
    );
    let r = raw
        .patch(
            &format!("{CONFIGMAPS}/c"),
            JSON_PATCH,
            &json!([{"op": "replace", "path": "/metadata/name", "value": "d"}]),
        )
        .await;
    assert_eq!(r.status, 400);
    assert_eq!(
        r.body["message"],
        "the name of the object (d) does not match the name on the URL (c)"
    );
    let mut other_uid = created.clone();
    other_uid["metadata"]["uid"] = json!("0000");
    let r = raw.put(&format!("{CONFIGMAPS}/c"), &other_uid).await;
    assert_eq!(r.status, 422);
    let read = raw.get(&format!("{CONFIGMAPS}/c")).await.body;
    assert_eq!(read["metadata"]["uid"], created["metadata"]["uid"]);
    server.shutdown().await;
}

/// kube-apiserver's YAML serializer: `application/yaml` bodies of create and update.
#[tokio::test]
async fn yaml_bodies_are_decoded() {
    let server = TestApiServer::start().await.unwrap();
    let raw = Raw::new(&server.url());
    let yaml = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-yaml\ndata:\n  a: \"1\"\n";
    let r = raw
        .request_bytes(
            "POST",
            CONFIGMAPS,
            yaml.as_bytes().to_vec(),
            "application/yaml",
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.body["data"]["a"], "1");
    let update = format!("{yaml}  b: two\n");
    let r = raw
        .request_bytes(
            "PUT",
            &format!("{CONFIGMAPS}/from-yaml"),
            update.into_bytes(),
            "application/yaml",
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["data"]["b"], "two");
    let r = raw
        .request_bytes("POST", CONFIGMAPS, b"data: [".to_vec(), "application/yaml")
        .await;
    assert_eq!(
        (r.status, r.body["reason"].as_str()),
        (400, Some("BadRequest"))
    );
    server.shutdown().await;
}
