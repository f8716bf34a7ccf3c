//! Acceptance: the patches kubectl sends for built-in kinds (`apply`, `set image`, `set env`,
//! `patch --type strategic`) are strategic merge patches, which TestApiServer must apply as
//! kube-apiserver does, list by list and key by key; and the patch types' refusals (415 for
//! custom resources, JSON patch bounds). Runs the kubectl tests only when `kubectl` is on the
//! PATH (otherwise they pass after saying they were skipped).

use std::time::{Duration, Instant};

use kinform_tests::http::Raw;
use kinform_tests::kubectl::Kubectl;
use kinform_testserver::TestApiServer;
use serde_json::{Value, json};

const WEB: &str = "/apis/apps/v1/namespaces/default/deployments/web";

fn deployment(app_image: &str, app_env: Value) -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web"}},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [
                    {"name": "app", "image": app_image, "env": app_env,
                     "ports": [{"containerPort": 80}]},
                    {"name": "sidecar", "image": "busybox:1.36", "command": ["sleep", "3600"]}
                ]}
            }
        }
    })
}

fn containers(d: &Value) -> &Vec<Value> {
    d["spec"]["template"]["spec"]["containers"]
        .as_array()
        .expect("containers")
}

fn names(list: &Value) -> Vec<&str> {
    list.as_array()
        .expect("a list")
        .iter()
        .map(|v| v["name"].as_str().expect("a name"))
        .collect()
}

/// `name=value` of each env var of a container.
fn env(c: &Value) -> Vec<String> {
    c["env"]
        .as_array()
        .expect("env")
        .iter()
        .map(|e| {
            format!(
                "{}={}",
                e["name"].as_str().unwrap(),
                e["value"].as_str().unwrap()
            )
        })
        .collect()
}

async fn apply(k: &Kubectl, manifest: &Value) -> String {
    let out = k
        .output(&["apply", "-f", "-"], Some(manifest.to_string().as_bytes()))
        .await;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "kubectl apply failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_apply_set_and_patch_merge_lists_by_key() {
    let server = TestApiServer::start().await.unwrap();
    let Some(k) = Kubectl::for_server(&server, "the kubectl strategic merge patch test") else {
        return;
    };
    let raw = Raw::new(&server.url());
    let three = json!([
        {"name": "A", "value": "1"}, {"name": "B", "value": "2"}, {"name": "C", "value": "3"}
    ]);

    // Client-side apply creates the object (POST) with its last-applied annotation.
    let out = apply(&k, &deployment("nginx:1.25", three.clone())).await;
    assert!(out.contains("deployment.apps/web created"), "{out}");
    let d = raw.get(WEB).await.body;
    assert_eq!(
        names(&d["spec"]["template"]["spec"]["containers"]),
        ["app", "sidecar"]
    );
    assert!(
        d["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"]
            .is_string()
    );

    // `kubectl set env` sends a two-way strategic merge patch of the one container: env
    // merges by name (patchMergeKey name), the other container is untouched.
    k.run(&["set", "env", "deployment/web", "-c", "app", "E=5"])
        .await;
    let d = raw.get(WEB).await.body;
    let c = containers(&d);
    assert_eq!(env(&c[0]), ["A=1", "B=2", "C=3", "E=5"]);
    assert_eq!(c[1]["image"], "busybox:1.36");
    assert_eq!(c[1]["command"], json!(["sleep", "3600"]));

    // Re-apply with a new image and B removed: kubectl sends a three-way patch with
    // `$setElementOrder/containers`, `$setElementOrder/env` and `{"$patch": "delete", "name":
    // "B"}`. kube-apiserver merges it into the live list: the image changes, B goes, E (set
    // by another writer, not in the last applied configuration) stays, the sidecar stays.
    let out = apply(
        &k,
        &deployment(
            "nginx:1.26",
            json!([{"name": "A", "value": "1"}, {"name": "C", "value": "3"}]),
        ),
    )
    .await;
    assert!(out.contains("deployment.apps/web configured"), "{out}");
    let d = raw.get(WEB).await.body;
    let c = containers(&d);
    assert_eq!(
        names(&d["spec"]["template"]["spec"]["containers"]),
        ["app", "sidecar"]
    );
    assert_eq!(c[0]["image"], "nginx:1.26");
    assert_eq!(env(&c[0]), ["A=1", "C=3", "E=5"]);
    // The server's defaults (`protocol: TCP`, the container defaults) come on top.
    assert_eq!(
        c[0]["ports"],
        json!([{"containerPort": 80, "protocol": "TCP"}])
    );
    assert_eq!(
        (&c[1]["name"], &c[1]["image"], &c[1]["command"]),
        (
            &json!("sidecar"),
            &json!("busybox:1.36"),
            &json!(["sleep", "3600"])
        )
    );
    assert_eq!(d["spec"]["replicas"], 2);
    assert_eq!(d["metadata"]["generation"], 3);
    let text = d.to_string();
    assert!(
        !text.contains("$setElementOrder") && !text.contains("\"$patch\""),
        "{text}"
    );

    // `kubectl set image` patches one container's image by name.
    k.run(&["set", "image", "deployment/web", "sidecar=busybox:1.37"])
        .await;
    let d = raw.get(WEB).await.body;
    let c = containers(&d);
    assert_eq!(c[1]["image"], "busybox:1.37");
    assert_eq!(c[0]["image"], "nginx:1.26");
    assert_eq!(env(&c[0]), ["A=1", "C=3", "E=5"]);

    // `kubectl patch --type strategic` with the directives: `$setElementOrder/containers`
    // reorders the list, `$patch: delete` removes the env item with merge key A.
    let p = json!({"spec": {"template": {"spec": {
        "$setElementOrder/containers": [{"name": "sidecar"}, {"name": "app"}],
        "containers": [{"name": "app", "env": [{"name": "A", "$patch": "delete"}]}]
    }}}});
    k.run(&[
        "patch",
        "deployment",
        "web",
        "--type",
        "strategic",
        "-p",
        &p.to_string(),
    ])
    .await;
    let d = raw.get(WEB).await.body;
    let c = containers(&d);
    assert_eq!(
        names(&d["spec"]["template"]["spec"]["containers"]),
        ["sidecar", "app"]
    );
    assert_eq!(env(&c[1]), ["C=3", "E=5"]);
    assert_eq!(c[1]["image"], "nginx:1.26");
    assert_eq!(c[0]["image"], "busybox:1.37");

    // `$retainKeys` on Deployment spec.strategy (patchStrategy retainKeys): switching to
    // Recreate clears rollingUpdate.
    let p =
        json!({"spec": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}}});
    k.run(&["patch", "deployment", "web", "-p", &p.to_string()])
        .await;
    let p = json!({"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}});
    k.run(&["patch", "deployment", "web", "-p", &p.to_string()])
        .await;
    let d = raw.get(WEB).await.body;
    assert_eq!(d["spec"]["strategy"], json!({"type": "Recreate"}));

    // A malformed directive is kube-apiserver's 400, which kubectl reports.
    let p = json!({"spec": {"strategy": {"$retainKeys": "type"}}});
    let out = k
        .output(&["patch", "deployment", "web", "-p", &p.to_string()], None)
        .await;
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("invalid patch format of retainKeys"),
        "{stderr}"
    );
    server.shutdown().await;
}

// apiextensions-apiserver serves custom resources with json-patch, merge-patch and
// apply-patch only: a strategic merge patch is 415 with its list of media types, answered
// before the object is looked up. A merge patch of the same object works.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn custom_resources_refuse_strategic_merge_patch() {
    let server = TestApiServer::start().await.unwrap();
    let raw = Raw::new(&server.url());
    let crd = json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
                 "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
                 "versions": [{"name": "v1", "served": true, "storage": true,
                               "subresources": {"scale": {"specReplicasPath": ".spec.replicas",
                                                          "statusReplicasPath": ".status.replicas"}},
                               "schema": {"openAPIV3Schema": {"type": "object",
                                   "x-kubernetes-preserve-unknown-fields": true}}}]}
    });
    let c = raw
        .post(
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
            &crd,
        )
        .await;
    assert_eq!(c.status, 201, "{}", c.body);
    let widgets = "/apis/example.com/v1/namespaces/default/widgets";
    let w = json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"},
                   "spec": {"replicas": 1, "items": [{"name": "a"}]}});
    assert_eq!(raw.post(widgets, &w).await.status, 201);
    let smp = "application/strategic-merge-patch+json";
    let patch = json!({"spec": {"items": [{"name": "b"}]}});
    for path in [
        format!("{widgets}/w"),
        format!("{widgets}/missing"),
        format!("{widgets}/w/scale"),
    ] {
        let r = raw.patch(&path, smp, &patch).await;
        assert_eq!(r.status, 415, "{path}: {}", r.body);
        assert_eq!(r.body["reason"], "UnsupportedMediaType");
        assert_eq!(
            r.body["message"],
            "the body of the request was in an unknown format - accepted media types include: \
             application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
        );
    }
    let r = raw
        .patch(
            &format!("{widgets}/w"),
            "application/merge-patch+json",
            &patch,
        )
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body["spec"]["items"], json!([{"name": "b"}]));

    if let Some(k) = Kubectl::for_server(&server, "kubectl patch --type strategic of a CR") {
        let out = k
            .output(
                &[
                    "patch",
                    "widgets.example.com",
                    "w",
                    "--type",
                    "strategic",
                    "-p",
                    &patch.to_string(),
                ],
                None,
            )
            .await;
        assert!(!out.status.success());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("unknown format"), "{stderr}");
    }
    server.shutdown().await;
}

// kube-apiserver's JSON patch bounds: more than 10000 operations is 413; copies add at most
// 3 MiB (JSONPatchMaxCopyBytes), so a 1.9 KB patch of doubling copies is a quick 422 instead
// of an object of gigabytes, and the object is unchanged.
#[tokio::test]
async fn json_patches_are_bounded() {
    let server = TestApiServer::start().await.unwrap();
    let raw = Raw::new(&server.url());
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": "c", "namespace": "default"}, "data": {"a": "1"}});
    assert_eq!(
        raw.post("/api/v1/namespaces/default/configmaps", &cm)
            .await
            .status,
        201
    );
    let path = "/api/v1/namespaces/default/configmaps/c";
    let jp = "application/json-patch+json";

    let mut ops =
        vec![json!({"op": "add", "path": "/metadata/annotations", "value": {"x": ["0123456789"]}})];
    ops.extend((0..46).map(|_| json!({"op": "copy", "from": "/metadata/annotations/x", "path": "/metadata/annotations/x/-"})));
    let bomb = Value::Array(ops);
    assert!(bomb.to_string().len() < 4096);
    let started = Instant::now();
    let r = raw.patch(path, jp, &bomb).await;
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(r.status, 422, "{}", r.body);
    assert_eq!(r.body["reason"], "Invalid");
    assert_eq!(
        r.body["message"],
        "the server rejected our request due to an error in our request"
    );
    let c = raw.get(path).await.body;
    assert!(c["metadata"].get("annotations").is_none());

    let many: Vec<Value> = (0..10_001)
        .map(|_| json!({"op": "test", "path": "/data/a", "value": "1"}))
        .collect();
    let r = raw.patch(path, jp, &Value::Array(many)).await;
    assert_eq!(r.status, 413, "{}", r.body);
    assert_eq!(r.body["reason"], "RequestEntityTooLarge");
    assert_eq!(
        r.body["message"],
        "Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001"
    );
    let r = raw
        .patch(
            path,
            jp,
            &json!([{"op": "add", "path": "/data/b", "value": "2"}]),
        )
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body["data"], json!({"a": "1", "b": "2"}));
    server.shutdown().await;
}
