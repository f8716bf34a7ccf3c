//! Server-side apply and managedFields against TestApiServer over real HTTP, each test naming
//! the kube-apiserver behaviour it checks; the last ones drive the real kubectl.

use kinform_tests::http::{Raw, Resp, rv};
use kinform_tests::kubectl::Kubectl;
use kinform_testserver::TestApiServer;
use serde_json::{Value, json};

const APPLY: &str = "application/apply-patch+yaml";
const CMS: &str = "/api/v1/namespaces/default/configmaps";
const DEPLOYS: &str = "/apis/apps/v1/namespaces/default/deployments";

async fn apply(raw: &Raw, path: &str, manager: &str, force: bool, body: &Value) -> Resp {
    let q = if force { "&force=true" } else { "" };
    raw.patch(&format!("{path}?fieldManager={manager}{q}"), APPLY, body)
        .await
}

fn cm(name: &str, data: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data})
}

/// The managedFields entry of `manager` with `operation`.
fn entry<'a>(obj: &'a Value, manager: &str, operation: &str) -> Option<&'a Value> {
    obj["metadata"]["managedFields"]
        .as_array()?
        .iter()
        .find(|e| e["manager"] == manager && e["operation"] == operation)
}

/// kube-apiserver: an apply to a missing object creates it (201) with one `Apply` entry
/// owning exactly the applied fields; a re-apply that drops a field removes it (the applier
/// owned it alone); an identical re-apply changes nothing, not even the resourceVersion.
#[tokio::test]
async fn apply_creates_then_prunes_dropped_fields() {
    let server = TestApiServer::start().await.unwrap();
    let raw = Raw::new(&server.url());
    let path = format!("{CMS}/settings");
    let r = apply(
        &raw,
        &path,
        "ctl",
        false,
        &cm("settings", json!({"a": "1", "b": "2"})),
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.body["data"], json!({"a": "1", "b": "2"}));
    let e = entry(&r.body, "ctl", "Apply").expect("Apply entry");
    assert_eq!(e["apiVersion"], "v1");
    assert_eq!(e["fieldsType"], "FieldsV1");
    assert_eq!(e["fieldsV1"], json!({"f:data": {"f:a": {}, "f:b": {}}}));
    assert!(e["time"].as_str().unwrap().ends_with('Z'));
    assert_eq!(
        r.body["metadata"]["managedFields"]
            .as_array()
            .unwrap()
            .len(),
        1
    );

    let r = apply(
        &raw,
        &path,
        "ctl",
        false,
        &cm("settings", json!({"a": "1"})),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["data"], json!({"a": "1"}));
    let e = entry(&r.body, "ctl", "Apply").unwrap();
    assert_eq!(e["fieldsV1"], json!({"f:data": {"f:a": {}}}));

    let before = rv(&r.body);
    let again = apply(
        &raw,
        &path,
        "ctl",
        false,
        &cm("settings", json!({"a": "1"})),
    )
    .await;
    assert_eq!(again.status, 200);
    assert_eq!(rv(&again.body), before, "a no-op apply commits nothing");
    assert_eq!(
        again.body["metadata"]["managedFields"],
        r.body["metadata"]["managedFields"]
    );
}

/// kube-apiserver's `ValidatePatchOptions` and field manager checks: apply without
/// `fieldManager` is 422 Invalid on `PatchOptions.meta.k8s.io`; `force` on a non-apply patch
/// is 422; the configuration's apiVersion/kind must be the resource's (400 "invalid object
/// type"); managedFields may not be applied (400); the name must match the URL (400).
#[tokio::test]
async fn apply_checks_its_options_and_configuration() {
    let server = TestApiServer::start().await.unwrap();
    let raw = Raw::new(&server.url());
    let path = format!("{CMS}/x");
    let r = raw.patch(&path, APPLY, &cm("x", json!({}))).await;
    assert_eq!(
        (r.status, r.body["reason"].as_str()),
        (422, Some("Invalid"))
    );
    assert_eq!(
        r.body["message"],
        "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch"
    );
    assert_eq!(r.body["details"]["causes"][0]["field"], "fieldManager");

    let mut wrong = cm("x", json!({}));
    wrong["kind"] = json!("Secret");
    let r = apply(&raw, &path, "m", false, &wrong).await;
    assert_eq!(r.status, 400);
    assert_eq!(r.body["message"], "invalid object type: /v1, Kind=Secret");

    let mut with_mf = cm("x", json!({}));
    with_mf["metadata"]["managedFields"] = json!([]);
    let r = apply(&raw, &path, "m", false, &with_mf).await;
    assert_eq!(
        (r.status, r.body["message"].as_str()),
        (400, Some("metadata.managedFields must be nil"))
    );

    let r = apply(&raw, &path, "m", false, &cm("y", json!({}))).await;
    assert_eq!(r.status, 400);

    // dryRun: the answer of a real apply, nothing persisted.
    let r = raw
        .patch(
            &format!("{path}?fieldManager=m&dryRun=All"),
            APPLY,
            &cm("x", json!({"a": "1"})),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert!(entry(&r.body, "m", "Apply").is_some());
    assert_eq!(raw.get(&path).await.status, 404);

    assert_eq!(
        apply(&raw, &path, "m", false, &cm("x", json!({})))
            .await
            .status,
        201
    );
    let r = raw
        .patch(
            &format!("{path}?force=true"),
            "application/merge-patch+json",
            &json!({"data": {"a": "1"}}),
        )
        .await;
    assert_eq!(r.status, 422);
    assert_eq!(r.body["details"]["causes"][0]["field"], "force");
}

/// structured-merge-diff conflicts: a second applier setting a field another manager owns
/// to a different value gets 409 Conflict with one `FieldManagerConflict` cause per field
/// (`conflict with "<manager>"`); applying the same value shares ownership; `force=true`
/// takes the field, and the first applier then no longer owns it.
#[tokio::test]
async fn conflicts_between_managers_and_force() {
    let server = TestApiServer::start().await.unwrap();
    let raw = Raw::new(&server.url());
    let path = format!("{CMS}/shared");
    let first = apply(
        &raw,
        &path,
        "alice",
        false,
        &cm("shared", json!({"a": "1", "b": "1"})),
    )
    .await;
    assert_eq!(first.status, 201);

    let r = apply(
        &raw,
        &path,
        "bob",
        false,
        &cm("shared", json!({"a": "2", "b": "2"})),
    )
    .await;
    assert_eq!(
        (r.status, r.body["reason"].as_str()),
        (409, Some("Conflict"))
    );
    assert_eq!(
        r.body["message"],
        "Apply failed with 2 conflicts: conflicts with \"alice\":\n- .data.a\n- .data.b"
    );
    let causes = r.body["details"]["causes"].as_array().unwrap();
    assert_eq!(causes.len(), 2);
    assert_eq!(causes[0]["reason"], "FieldManagerConflict");
    assert_eq!(causes[0]["message"], "conflict with \"alice\"");
    assert_eq!(causes[0]["field"], ".data.a");
    assert_eq!(causes[1]["field"], ".data.b");
    // Nothing was written.
    let live = raw.get(&path).await;
    assert_eq!(rv(&live.body), rv(&first.body));

    // The same value: no conflict, both own it.
    let r = apply(&raw, &path, "bob", false, &cm("shared", json!({"a": "1"}))).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(
        entry(&r.body, "bob", "Apply").unwrap()["fieldsV1"],
        json!({"f:data": {"f:a": {}}})
    );
    assert_eq!(
        entry(&r.body, "alice", "Apply").unwrap()["fieldsV1"],
        json!({"f:data": {"f:a": {}, "f:b": {}}})
    );

    // Forced: bob takes data.b.
    let r = apply(
        &raw,
        &path,
        "bob",
        true,
        &cm("shared", json!({"a": "1", "b": "9"})),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["data"], json!({"a": "1", "b": "9"}));
    assert_eq!(
        entry(&r.body, "alice", "Apply").unwrap()["fieldsV1"],
        json!({"f:data": {"f:a": {}}})
    );

    // An Update owner conflicts too, printed with its apiVersion.
    let r = raw
        .patch(
            &format!("{path}?fieldManager=editor"),
            "application/merge-patch+json",
            &json!({"data": {"c": "1"}}),
        )
        .await;
    assert_eq!(r.status, 200);
    let r = apply(
        &raw,
        &path,
        "alice",
        false,
        &cm("shared", json!({"a": "1", "c": "2"})),
    )
    .await;
    assert_eq!(r.status, 409);
    assert_eq!(
        r.body["message"],
        "Apply failed with 1 conflict: conflict with \"editor\" using v1: .data.c"
    );
}

/// Managed fields on every write (kube-apiserver's `Update` operations): create, replace and
/// patch record an entry for `fieldManager`, else the User-Agent's product; the same manager's
/// writes merge into one entry; a field changed by another manager moves to it; a status write
/// is recorded with `subresource: status`; managedFields sent in a body replace the stored
/// ones, and `[]` removes them.
#[tokio::test]
async fn every_write_records_managed_fields() {
    let server = TestApiServer::start().await.unwrap();
    let raw = Raw::new(&server.url());
    let r = raw
        .request_as(
            "kubectl-create/v1.35.0 (linux/amd64) kubernetes/abcdef",
            "POST",
            CMS,
            &cm("c", json!({"a": "1"})),
        )
        .await;
    assert_eq!(r.status, 201);
    let e = entry(&r.body, "kubectl-create", "Update").expect("Update entry from the UA");
    assert_eq!(e["apiVersion"], "v1");
    assert_eq!(e["fieldsV1"], json!({"f:data": {".": {}, "f:a": {}}}));

    let path = format!("{CMS}/c");
    let r = raw
        .patch(
            &format!("{path}?fieldManager=kubectl-create"),
            "application/merge-patch+json",
            &json!({"metadata": {"labels": {"x": "1"}}}),
        )
        .await;
    let mfs = r.body["metadata"]["managedFields"].as_array().unwrap();
    assert_eq!(mfs.len(), 1, "one manager, one entry: {mfs:?}");
    assert_eq!(
        mfs[0]["fieldsV1"],
        json!({"f:data": {".": {}, "f:a": {}}, "f:metadata": {"f:labels": {".": {}, "f:x": {}}}})
    );

    let mut replaced = r.body.clone();
    replaced["data"]["a"] = json!("2");
    replaced["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("managedFields");
    let r = raw
        .put(&format!("{path}?fieldManager=other"), &replaced)
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(
        entry(&r.body, "other", "Update").unwrap()["fieldsV1"],
        json!({"f:data": {"f:a": {}}})
    );
    assert_eq!(
        entry(&r.body, "kubectl-create", "Update").unwrap()["fieldsV1"],
        json!({"f:data": {}, "f:metadata": {"f:labels": {".": {}, "f:x": {}}}})
    );

    // Client-sent managedFields replace the stored ones.
    let mut custom = r.body.clone();
    custom["metadata"]["managedFields"] = json!([{"manager": "imported", "operation": "Update",
        "apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {"f:a": {}}}}]);
    let r = raw.put(&path, &custom).await;
    assert_eq!(r.status, 200);
    let managers: Vec<&str> = r.body["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["manager"].as_str().unwrap())
        .collect();
    assert_eq!(managers, ["imported"]);
    // An empty list resets them.
    let r = raw
        .patch(
            &path,
            "application/merge-patch+json",
            &json!({"metadata": {"managedFields": []}}),
        )
        .await;
    assert_eq!(r.status, 200);
    assert!(
        r.body["metadata"].get("managedFields").is_none(),
        "{}",
        r.body
    );

    // A status write of a pod is recorded for the status subresource.
    let pods = "/api/v1/namespaces/default/pods";
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "image": "busybox"}]}});
    let r = raw
        .post(&format!("{pods}?fieldManager=creator"), &pod)
        .await;
    assert_eq!(r.status, 201);
    // The creator owns what it sent and what the pod strategy defaulted (as on a real
    // cluster); `spec` and `containers` exist in the Go zero value, so only the item is a
    // member of its own.
    let owned = &entry(&r.body, "creator", "Update").unwrap()["fieldsV1"]["f:spec"];
    assert_eq!(
        owned["f:containers"],
        json!({"k:{\"name\":\"c\"}": {".": {}, "f:image": {}, "f:imagePullPolicy": {},
            "f:name": {}, "f:resources": {}, "f:terminationMessagePath": {},
            "f:terminationMessagePolicy": {}}})
    );
    assert_eq!(owned["f:restartPolicy"], json!({}));
    assert!(owned.get(".").is_none());
    let r = raw
        .patch(
            &format!("{pods}/p/status?fieldManager=kubelet"),
            "application/merge-patch+json",
            &json!({"status": {"phase": "Running"}}),
        )
        .await;
    assert_eq!(r.status, 200);
    let e = entry(&r.body, "kubelet", "Update").unwrap();
    assert_eq!(e["subresource"], "status");
    assert_eq!(e["fieldsV1"], json!({"f:status": {"f:phase": {}}}));
}

fn deployment(containers: Value) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
        "spec": {"selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": containers}}}})
}

/// Deployment containers are `x-kubernetes-list-type: map` keyed by `name`: two appliers
/// each own their container, items merge by key, and an applier dropping its container
/// removes only that one.
#[tokio::test]
async fn deployment_containers_merge_by_name() {
    let server = TestApiServer::start().await.unwrap();
    let raw = Raw::new(&server.url());
    let path = format!("{DEPLOYS}/web");
    let r = apply(
        &raw,
        &path,
        "app",
        false,
        &deployment(json!([{"name": "app", "image": "app:1"}])),
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.body);
    // The sidecar injector applies only its container and nothing of the selector.
    let sidecar = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web"}, "spec": {"template": {"spec": {"containers": [
            {"name": "proxy", "image": "proxy:1"}]}}}});
    let r = apply(&raw, &path, "injector", false, &sidecar).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let names = |v: &Value| -> Vec<String> {
        v["spec"]["template"]["spec"]["containers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(names(&r.body), ["app", "proxy"]);
    let inj = entry(&r.body, "injector", "Apply").unwrap();
    assert_eq!(
        inj["fieldsV1"],
        json!({"f:spec": {"f:template": {"f:spec": {"f:containers": {
            "k:{\"name\":\"proxy\"}": {".": {}, "f:image": {}, "f:name": {}}}}}}})
    );
    // The app changes its image: no conflict, the proxy stays.
    let r = apply(
        &raw,
        &path,
        "app",
        false,
        &deployment(json!([{"name": "app", "image": "app:2"}])),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(names(&r.body), ["app", "proxy"]);
    // The app applying the proxy's image conflicts on that one field.
    let r = apply(
        &raw,
        &path,
        "app",
        false,
        &deployment(json!([{"name": "app", "image": "app:2"},
            {"name": "proxy", "image": "proxy:evil"}])),
    )
    .await;
    assert_eq!(r.status, 409);
    assert_eq!(
        r.body["details"]["causes"][0]["field"],
        ".spec.template.spec.containers[name=\"proxy\"].image"
    );
    // The injector drops its container: only it goes.
    let mut gone = sidecar.clone();
    gone["spec"]["template"]["spec"]["containers"] = json!([]);
    let r = apply(&raw, &path, "injector", false, &gone).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(names(&r.body), ["app"]);
    assert_eq!(
        r.body["spec"]["template"]["spec"]["containers"][0]["image"],
        "app:2"
    );
}

/// For custom resources the list semantics come from the CRD's `openAPIV3Schema`: an
/// `x-kubernetes-list-type: map` list merges by its `x-kubernetes-list-map-keys`, an
/// undeclared (atomic) list is replaced whole; `metadata` is typed as `ObjectMeta`. Applies
/// are accepted as YAML.
#[tokio::test]
async fn custom_resource_list_map_merges_by_key() {
    let server = TestApiServer::start().await.unwrap();
    let raw = Raw::new(&server.url());
    let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "routes.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"plural": "routes", "singular": "route", "kind": "Route", "listKind": "RouteList"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {
                        "backends": {"type": "array", "x-kubernetes-list-type": "map",
                            "x-kubernetes-list-map-keys": ["host", "port"],
                            "items": {"type": "object", "properties": {
                                "host": {"type": "string"}, "port": {"type": "integer"},
                                "weight": {"type": "integer"}}}},
                        "hosts": {"type": "array", "items": {"type": "string"}}}}}}}}]}});
    let r = raw
        .post(
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
            &crd,
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    let path = "/apis/example.com/v1/namespaces/default/routes/r";
    let yaml = b"apiVersion: example.com/v1\nkind: Route\nmetadata:\n  name: r\nspec:\n  hosts: [a, b]\n  backends:\n  - host: a\n    port: 80\n    weight: 1\n";
    let r = raw
        .request_bytes(
            "PATCH",
            &format!("{path}?fieldManager=one"),
            &yaml[..],
            APPLY,
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(
        entry(&r.body, "one", "Apply").unwrap()["fieldsV1"],
        json!({"f:spec": {"f:backends": {"k:{\"host\":\"a\",\"port\":80}": {
            ".": {}, "f:host": {}, "f:port": {}, "f:weight": {}}}, "f:hosts": {}}})
    );
    let two = json!({"apiVersion": "example.com/v1", "kind": "Route", "metadata": {"name": "r"},
        "spec": {"hosts": ["c"], "backends": [{"host": "a", "port": 81, "weight": 5}]}});
    let r = apply(&raw, path, "two", false, &two).await;
    // `hosts` is atomic and owned by "one" with another value.
    assert_eq!(r.status, 409, "{}", r.body);
    assert_eq!(r.body["details"]["causes"][0]["field"], ".spec.hosts");
    let mut two = two;
    two["spec"].as_object_mut().unwrap().remove("hosts");
    let r = apply(&raw, path, "two", false, &two).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(
        r.body["spec"]["backends"],
        json!([{"host": "a", "port": 80, "weight": 1}, {"host": "a", "port": 81, "weight": 5}])
    );
    assert_eq!(r.body["spec"]["hosts"], json!(["a", "b"]));
}

/// An apply to `/status` owns and changes only `status` (the status strategy's reset
/// fields), and is recorded with `subresource: status`; an apply to the main resource of a
/// kind with a status subresource leaves `status` alone.
#[tokio::test]
async fn status_applies_touch_only_status() {
    let server = TestApiServer::start().await.unwrap();
    let raw = Raw::new(&server.url());
    let path = format!("{DEPLOYS}/web");
    let mut d = deployment(json!([{"name": "app", "image": "app:1"}]));
    d["status"] = json!({"replicas": 7});
    let r = apply(&raw, &path, "app", false, &d).await;
    assert_eq!(r.status, 201, "{}", r.body);
    let e = entry(&r.body, "app", "Apply").unwrap();
    assert!(e["fieldsV1"].get("f:status").is_none(), "{e}");
    let mut st = deployment(json!([{"name": "app", "image": "changed"}]));
    st["status"] = json!({"replicas": 3});
    let r = apply(&raw, &format!("{path}/status"), "ctrl", false, &st).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["status"]["replicas"], 3);
    assert_eq!(
        r.body["spec"]["template"]["spec"]["containers"][0]["image"],
        "app:1"
    );
    let e = entry(&r.body, "ctrl", "Apply").unwrap();
    assert_eq!(e["subresource"], "status");
    assert_eq!(e["fieldsV1"], json!({"f:status": {"f:replicas": {}}}));
}

/// The real kubectl: `kubectl apply --server-side` creates then reports `serverside-applied`
/// again; another `--field-manager` changing a field conflicts (kubectl prints the
/// server's conflict) and `--force-conflicts` takes it over.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_server_side_apply() {
    let server = TestApiServer::start().await.unwrap();
    let Some(k) = Kubectl::for_server(&server, "kubectl server-side apply") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cm.yaml");
    let write = |data: &str| {
        std::fs::write(
            &file,
            format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n  namespace: default\ndata:\n  {data}\n"),
        )
        .unwrap()
    };
    let f = file.to_str().unwrap().to_owned();
    write("mode: fast");
    let out = k.run(&["apply", "--server-side", "-f", &f]).await;
    assert!(out.contains("configmap/app serverside-applied"), "{out}");
    let out = k.run(&["apply", "--server-side", "-f", &f]).await;
    assert!(out.contains("configmap/app serverside-applied"), "{out}");

    write("mode: slow");
    let out = k
        .output(
            &["apply", "--server-side", "--field-manager", "ops", "-f", &f],
            None,
        )
        .await;
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("conflict with \"kubectl\"") && err.contains(".data.mode"),
        "{err}"
    );
    let out = k
        .run(&[
            "apply",
            "--server-side",
            "--field-manager",
            "ops",
            "--force-conflicts",
            "-f",
            &f,
        ])
        .await;
    assert!(out.contains("serverside-applied"), "{out}");
    let got = k
        .run(&[
            "get",
            "configmap",
            "app",
            "-o",
            "json",
            "--show-managed-fields",
        ])
        .await;
    let got: Value = serde_json::from_str(&got).unwrap();
    assert_eq!(got["data"]["mode"], "slow");
    assert_eq!(
        entry(&got, "ops", "Apply").unwrap()["fieldsV1"],
        json!({"f:data": {"f:mode": {}}})
    );
    assert!(entry(&got, "kubectl", "Apply").is_none(), "{got}");
}

/// kube-apiserver checks the name after merging the applied configuration into the live
/// object (`checkName` after `applyPatchToCurrentObject` in the patch handler): a Lease body
/// without `metadata.name`, as kube-lease-manager applies, updates the Lease the URL names;
/// applied to a Lease that does not exist, the merged object has no name and the create is
/// refused with 400 "the name of the object () does not match the name on the URL".
#[tokio::test]
async fn apply_without_metadata_name_takes_the_live_objects_name() {
    use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
    use kinform_client::{Api, Patch, PatchParams, PostParams};
    let server = TestApiServer::start().await.unwrap();
    let leases: Api<Lease> = Api::namespaced(server.client().unwrap(), "default");
    let nameless = |holder: &str| Lease {
        spec: Some(LeaseSpec {
            holder_identity: Some(holder.into()),
            lease_duration_seconds: Some(15),
            ..LeaseSpec::default()
        }),
        ..Lease::default()
    };
    // Create: nothing to merge with, so no name.
    let pp = PatchParams::apply("lease-manager");
    let err = leases
        .patch("leader", &pp, &Patch::Apply(nameless("a")))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some(400), "{err}");
    assert!(
        err.to_string()
            .contains("the name of the object () does not match the name on the URL (leader)"),
        "{err}"
    );
    // Update: the live Lease's name is kept.
    let mut lease = Lease::default();
    lease.metadata.name = Some("leader".into());
    leases.create(&PostParams::default(), &lease).await.unwrap();
    let updated = leases
        .patch("leader", &pp, &Patch::Apply(nameless("b")))
        .await
        .unwrap();
    assert_eq!(updated.metadata.name.as_deref(), Some("leader"));
    let spec = updated.spec.unwrap();
    assert_eq!(spec.holder_identity.as_deref(), Some("b"));
    assert_eq!(spec.lease_duration_seconds, Some(15));
    // A body naming another object is still refused.
    let mut other = nameless("c");
    other.metadata.name = Some("follower".into());
    let err = leases
        .patch("leader", &pp, &Patch::Apply(other))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some(400), "{err}");
}
