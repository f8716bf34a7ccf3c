//! Conformance: kubectl drives TestApiServer (HTTPS, through the kubeconfig the server
//! writes). Each test names the kubectl command and the kube-apiserver behaviour behind it.
//! Runs where `kubectl` is on the PATH (otherwise each test passes after saying it skipped, or
//! fails under `KINFORM_CONFORMANCE=require`, as in CI).
//!
//! A behaviour the server does not reproduce yet gets a test marked
//! `#[ignore = "not reproduced yet: ..."]` that says what the server answers instead (run
//! them with `-- --ignored`); none is left.

use std::path::Path;
use std::time::Duration;

use kinform_tests::kubectl::Kubectl;
use kinform_testserver::TestApiServer;
use serde_json::{Value, json};

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/corpus");

/// An HTTPS server with namespace `ns`, and kubectl for it (`None`: kubectl is missing).
async fn setup(test: &str) -> Option<(TestApiServer, Kubectl)> {
    let server = TestApiServer::builder().https().start().await.unwrap();
    let k = Kubectl::for_server(&server, test)?;
    server.create_namespace("ns").unwrap();
    Some((server, k))
}

/// `kubectl <args>` with `stdin`; (success, stdout, stderr).
async fn kubectl(k: &Kubectl, args: &[&str], stdin: Option<&str>) -> (bool, String, String) {
    let out = k.output(args, stdin.map(str::as_bytes)).await;
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `kubectl <args>` expected to fail; its stderr.
async fn fails(k: &Kubectl, args: &[&str]) -> String {
    let (ok, out, err) = kubectl(k, args, None).await;
    assert!(!ok, "kubectl {args:?} succeeded:\n{out}");
    err
}

/// `kubectl get <what> -n ns -o json`, parsed.
async fn get_json(k: &Kubectl, what: &[&str]) -> Value {
    let mut args = vec!["get"];
    args.extend(what);
    args.extend(["-n", "ns", "-o", "json"]);
    serde_json::from_str(&k.run(&args).await).unwrap()
}

/// Whether `kubectl get <what> -n ns` answers NotFound.
async fn absent(k: &Kubectl, what: &[&str]) -> bool {
    let mut args = vec!["get"];
    args.extend(what);
    args.extend(["-n", "ns"]);
    let (ok, _, err) = kubectl(k, &args, None).await;
    !ok && err.contains("NotFound")
}

fn deployment(name: &str, replicas: i64) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": "ns", "labels": {"app": name}},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [
                    {"name": "app", "image": "nginx:1.27"},
                    {"name": "sidecar", "image": "envoy:1"},
                ]},
            },
        },
    })
}

fn configmap(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": {"name": name, "namespace": "ns"}, "data": {"a": "1"}})
}

/// A Deployment owning a ReplicaSet owning a Pod, linked as the controllers link them.
fn owner_chain(server: &TestApiServer, name: &str) {
    let owner = |o: &Value, kind: &str| {
        json!([{"apiVersion": "apps/v1", "kind": kind, "name": o["metadata"]["name"],
                "uid": o["metadata"]["uid"], "controller": true, "blockOwnerDeletion": true}])
    };
    let d = server.create_object(deployment(name, 1)).unwrap();
    let mut rs = deployment(&format!("{name}-rs"), 1);
    rs["kind"] = json!("ReplicaSet");
    rs["metadata"]["ownerReferences"] = owner(&d, "Deployment");
    let rs = server.create_object(rs).unwrap();
    let pod = json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": format!("{name}-pod"), "namespace": "ns",
                     "ownerReferences": owner(&rs, "ReplicaSet")},
        "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]},
    });
    server.create_object(pod).unwrap();
}

/// Polls kubectl until `what` is NotFound, for at most 10 s.
async fn eventually_absent(k: &Kubectl, what: &[&str]) -> bool {
    for _ in 0..100 {
        if absent(k, what).await {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    false
}

/// Creates the KEDA ScaledObject CRD from the corpus and one object `web` in `ns`; the
/// served version.
async fn corpus_crd_object(k: &Kubectl) -> String {
    let crd = Path::new(CORPUS).join("crds/keda/keda.sh_scaledobjects.yaml");
    k.run(&["create", "-f", crd.to_str().unwrap()]).await;
    k.run(&[
        "wait",
        "--for=condition=Established",
        "crd/scaledobjects.keda.sh",
        "--timeout=10s",
    ])
    .await;
    let doc: Value =
        serde_saphyr::from_str(&std::fs::read_to_string(&crd).unwrap()).expect("CRD YAML");
    let version = doc["spec"]["versions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["storage"] == true)
        .and_then(|v| v["name"].as_str())
        .unwrap()
        .to_owned();
    let obj = json!({
        "apiVersion": format!("keda.sh/{version}"), "kind": "ScaledObject",
        "metadata": {"name": "web", "namespace": "ns"},
        "spec": {"scaleTargetRef": {"name": "web"},
                 "triggers": [{"type": "cpu", "metadata": {"value": "50"}}]},
    });
    let (ok, out, err) = kubectl(k, &["create", "-f", "-"], Some(&obj.to_string())).await;
    assert!(ok, "{out}{err}");
    version
}

// ---------------------------------------------------------------------------------------------
// Reproduced behaviours.

/// `kubectl create -f` (JSON and YAML through the dynamic client) creates each object, and
/// `get -o yaml`, `-o json`, `-o name` and `-o wide` print them: YAML and JSON are the
/// stored object (with the server-set uid, resourceVersion and creationTimestamp), `-o name`
/// is `kind.group/name`, `-o wide` is the server's Table.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_prints_yaml_json_name_and_wide() {
    let Some((_server, k)) = setup("kubectl get -o").await else {
        return;
    };
    let (ok, out, err) = kubectl(
        &k,
        &["create", "-f", "-"],
        Some(&deployment("web", 2).to_string()),
    )
    .await;
    assert!(
        ok && out.contains("deployment.apps/web created"),
        "{out}{err}"
    );

    let yaml = k
        .run(&["get", "deployment", "web", "-n", "ns", "-o", "yaml"])
        .await;
    let obj: Value = serde_saphyr::from_str(&yaml).unwrap();
    assert_eq!(obj["kind"], "Deployment");
    assert_eq!(obj["spec"]["replicas"], 2);
    assert!(obj["metadata"]["uid"].is_string() && obj["metadata"]["resourceVersion"].is_string());
    assert!(obj["metadata"]["creationTimestamp"].is_string());

    let obj = get_json(&k, &["deployment", "web"]).await;
    assert_eq!(obj["metadata"]["name"], "web");
    let list = get_json(&k, &["deployments"]).await;
    assert_eq!(list["kind"], "List");
    assert_eq!(list["items"][0]["metadata"]["name"], "web");

    let name = k.run(&["get", "deploy", "-n", "ns", "-o", "name"]).await;
    assert_eq!(name.trim(), "deployment.apps/web");

    let wide = k.run(&["get", "deploy", "-n", "ns", "-o", "wide"]).await;
    let mut lines = wide.lines();
    assert!(lines.next().unwrap().starts_with("NAME "), "{wide}");
    assert!(lines.next().unwrap().starts_with("web "), "{wide}");
}

/// `kubectl describe` reads the object (and its events) and prints kubectl's describer:
/// the Deployment's replicas and pod template, a ConfigMap's data.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn describe_prints_deployment_and_configmap() {
    let Some((server, k)) = setup("kubectl describe").await else {
        return;
    };
    server.create_object(deployment("web", 2)).unwrap();
    server.create_object(configmap("cfg")).unwrap();
    let out = k.run(&["describe", "deployment", "web", "-n", "ns"]).await;
    // The describer aligns its columns to the longest label (`RollingUpdateStrategy:` with
    // the defaults the server sets), so lines are compared word by word.
    let has_line = |out: &str, words: &[&str]| {
        out.lines().any(|l| {
            l.split_whitespace()
                .take(words.len())
                .eq(words.iter().copied())
        })
    };
    assert!(has_line(&out, &["Name:", "web"]), "{out}");
    assert!(has_line(&out, &["Replicas:", "2", "desired"]), "{out}");
    assert!(has_line(&out, &["StrategyType:", "RollingUpdate"]), "{out}");
    let images: Vec<_> = out
        .lines()
        .filter_map(|l| l.trim().strip_prefix("Image:"))
        .map(str::trim)
        .collect();
    assert_eq!(images, ["nginx:1.27", "envoy:1"], "{out}");
    let out = k.run(&["describe", "configmap", "cfg", "-n", "ns"]).await;
    assert!(out.contains("Name:         cfg"), "{out}");
    assert!(out.contains("a:\n----\n1"), "{out}");
}

/// `kubectl label` and `annotate` patch metadata: a new key is added, an existing key is
/// refused without `--overwrite` (kubectl checks the object it read), replaced with it, and
/// `key-` removes it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn label_and_annotate_add_overwrite_and_remove() {
    let Some((server, k)) = setup("kubectl label/annotate").await else {
        return;
    };
    server.create_object(configmap("cfg")).unwrap();
    let out = k
        .run(&["label", "cm", "cfg", "-n", "ns", "tier=gold"])
        .await;
    assert!(out.contains("configmap/cfg labeled"), "{out}");
    let err = fails(&k, &["label", "cm", "cfg", "-n", "ns", "tier=silver"]).await;
    assert!(err.contains("already has a value (gold)"), "{err}");
    k.run(&[
        "label",
        "cm",
        "cfg",
        "-n",
        "ns",
        "tier=silver",
        "--overwrite",
    ])
    .await;
    k.run(&["annotate", "cm", "cfg", "-n", "ns", "owner=team-a"])
        .await;
    let obj = get_json(&k, &["cm", "cfg"]).await;
    assert_eq!(obj["metadata"]["labels"]["tier"], "silver");
    assert_eq!(obj["metadata"]["annotations"]["owner"], "team-a");
    k.run(&["label", "cm", "cfg", "-n", "ns", "tier-"]).await;
    k.run(&["annotate", "cm", "cfg", "-n", "ns", "owner-"])
        .await;
    let obj = get_json(&k, &["cm", "cfg"]).await;
    assert!(obj["metadata"]["labels"].get("tier").is_none(), "{obj}");
    assert!(
        obj["metadata"]["annotations"].get("owner").is_none(),
        "{obj}"
    );
    // Label selection sees the change.
    k.run(&["label", "cm", "cfg", "-n", "ns", "pick=me"]).await;
    let out = k
        .run(&["get", "cm", "-n", "ns", "-l", "pick=me", "-o", "name"])
        .await;
    assert_eq!(out.trim(), "configmap/cfg");
}

/// `kubectl scale` writes the `scale` subresource: spec.replicas changes; with
/// `--current-replicas` that does not match, the precondition fails and nothing changes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scale_writes_the_scale_subresource() {
    let Some((server, k)) = setup("kubectl scale").await else {
        return;
    };
    server.create_object(deployment("web", 2)).unwrap();
    let out = k
        .run(&["scale", "deployment", "web", "-n", "ns", "--replicas=5"])
        .await;
    assert!(out.contains("deployment.apps/web scaled"), "{out}");
    assert_eq!(
        get_json(&k, &["deploy", "web"]).await["spec"]["replicas"],
        5
    );
    fails(
        &k,
        &[
            "scale",
            "deployment",
            "web",
            "-n",
            "ns",
            "--current-replicas=2",
            "--replicas=1",
        ],
    )
    .await;
    assert_eq!(
        get_json(&k, &["deploy", "web"]).await["spec"]["replicas"],
        5
    );
}

/// `kubectl replace -f` is a PUT of the whole object: the change is stored; replacing with
/// a stale resourceVersion is refused with 409 Conflict ("the object has been modified").
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replace_puts_the_object_with_optimistic_concurrency() {
    let Some((server, k)) = setup("kubectl replace").await else {
        return;
    };
    server.create_object(configmap("cfg")).unwrap();
    let mut obj = get_json(&k, &["cm", "cfg"]).await;
    let stale = obj.clone();
    obj["data"]["a"] = json!("2");
    let (ok, out, err) = kubectl(&k, &["replace", "-f", "-"], Some(&obj.to_string())).await;
    assert!(ok && out.contains("configmap/cfg replaced"), "{out}{err}");
    assert_eq!(get_json(&k, &["cm", "cfg"]).await["data"]["a"], "2");
    let (ok, _, err) = kubectl(&k, &["replace", "-f", "-"], Some(&stale.to_string())).await;
    assert!(!ok);
    assert!(
        err.contains("Conflict") && err.contains("the object has been modified"),
        "{err}"
    );
}

/// `kubectl patch --type=json` and `--type=merge` on a built-in, and the default
/// (strategic merge) on a map field of a Deployment.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn patch_json_and_merge_on_built_ins() {
    let Some((server, k)) = setup("kubectl patch").await else {
        return;
    };
    server.create_object(configmap("cfg")).unwrap();
    server.create_object(deployment("web", 1)).unwrap();
    let patch = r#"[{"op":"replace","path":"/data/a","value":"json"},{"op":"add","path":"/data/b","value":"2"}]"#;
    let out = k
        .run(&["patch", "cm", "cfg", "-n", "ns", "--type=json", "-p", patch])
        .await;
    assert!(out.contains("configmap/cfg patched"), "{out}");
    k.run(&[
        "patch",
        "cm",
        "cfg",
        "-n",
        "ns",
        "--type=merge",
        "-p",
        r#"{"data":{"b":null,"c":"merge"}}"#,
    ])
    .await;
    assert_eq!(
        get_json(&k, &["cm", "cfg"]).await["data"],
        json!({"a": "json", "c": "merge"})
    );
    k.run(&[
        "patch",
        "deploy",
        "web",
        "-n",
        "ns",
        "-p",
        r#"{"spec":{"replicas":3,"template":{"metadata":{"labels":{"extra":"yes"}}}}}"#,
    ])
    .await;
    let d = get_json(&k, &["deploy", "web"]).await;
    assert_eq!(d["spec"]["replicas"], 3);
    assert_eq!(
        d["spec"]["template"]["metadata"]["labels"],
        json!({"app": "web", "extra": "yes"})
    );
    // A failing JSON patch test op changes nothing.
    fails(
        &k,
        &[
            "patch",
            "cm",
            "cfg",
            "-n",
            "ns",
            "--type=json",
            "-p",
            r#"[{"op":"test","path":"/data/a","value":"other"},{"op":"remove","path":"/data/a"}]"#,
        ],
    )
    .await;
    assert_eq!(get_json(&k, &["cm", "cfg"]).await["data"]["a"], "json");
}

/// `kubectl patch --type=merge` and `--type=json` on a custom resource of a real CRD
/// (KEDA's ScaledObject from the corpus), and `--subresource=status` writing its status.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn patch_json_merge_and_status_on_a_corpus_crd() {
    let Some((_server, k)) = setup("kubectl patch on a CRD").await else {
        return;
    };
    corpus_crd_object(&k).await;
    k.run(&[
        "patch",
        "scaledobject",
        "web",
        "-n",
        "ns",
        "--type=merge",
        "-p",
        r#"{"spec":{"minReplicaCount":2}}"#,
    ])
    .await;
    k.run(&[
        "patch",
        "scaledobject",
        "web",
        "-n",
        "ns",
        "--type=json",
        "-p",
        r#"[{"op":"add","path":"/spec/maxReplicaCount","value":7}]"#,
    ])
    .await;
    let obj = get_json(&k, &["scaledobject", "web"]).await;
    assert_eq!(obj["spec"]["minReplicaCount"], 2);
    assert_eq!(obj["spec"]["maxReplicaCount"], 7);
    assert_eq!(obj["metadata"]["generation"], 3);
    // Status goes through /status only, and does not bump the generation.
    k.run(&[
        "patch",
        "scaledobject",
        "web",
        "-n",
        "ns",
        "--subresource=status",
        "--type=merge",
        "-p",
        r#"{"status":{"originalReplicaCount":4}}"#,
    ])
    .await;
    let obj = get_json(&k, &["scaledobject", "web"]).await;
    assert_eq!(obj["status"]["originalReplicaCount"], 4);
    assert_eq!(obj["metadata"]["generation"], 3);
}

/// `kubectl delete` (default cascade: background) removes the owner at once and the
/// garbage collector removes its ReplicaSet and Pod.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_default_and_background_cascade_remove_dependents() {
    let Some((server, k)) = setup("kubectl delete").await else {
        return;
    };
    owner_chain(&server, "bg");
    owner_chain(&server, "dflt");
    let out = k
        .run(&[
            "delete",
            "deployment",
            "bg",
            "-n",
            "ns",
            "--cascade=background",
        ])
        .await;
    assert!(out.contains("deployment.apps \"bg\" deleted"), "{out}");
    k.run(&["delete", "deployment", "dflt", "-n", "ns"]).await;
    for name in ["bg", "dflt"] {
        assert!(absent(&k, &["deployment", name]).await);
        assert!(eventually_absent(&k, &["rs", &format!("{name}-rs")]).await);
        assert!(eventually_absent(&k, &["pod", &format!("{name}-pod")]).await);
    }
}

/// `kubectl delete --cascade=foreground` deletes the dependents and then the owner
/// (kubectl waits for the owner to go).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_foreground_cascade_removes_dependents_and_owner() {
    let Some((server, k)) = setup("kubectl delete --cascade=foreground").await else {
        return;
    };
    owner_chain(&server, "fg");
    k.run(&[
        "delete",
        "deployment",
        "fg",
        "-n",
        "ns",
        "--cascade=foreground",
    ])
    .await;
    assert!(eventually_absent(&k, &["deployment", "fg"]).await);
    assert!(eventually_absent(&k, &["rs", "fg-rs"]).await);
    assert!(eventually_absent(&k, &["pod", "fg-pod"]).await);
}

/// `kubectl wait --for=delete` returns once the object is gone (at once for a missing
/// one); `--for=condition=...` once a condition written through the status subresource
/// holds, and times out while it does not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wait_for_delete_and_for_condition() {
    let Some((server, k)) = setup("kubectl wait").await else {
        return;
    };
    server.create_object(configmap("cfg")).unwrap();
    server.create_object(deployment("web", 1)).unwrap();
    let (deleted, waited) = tokio::join!(
        async {
            tokio::time::sleep(Duration::from_millis(300)).await;
            k.run(&["delete", "cm", "cfg", "-n", "ns", "--wait=false"])
                .await
        },
        kubectl(
            &k,
            &[
                "wait",
                "--for=delete",
                "cm/cfg",
                "-n",
                "ns",
                "--timeout=20s"
            ],
            None
        )
    );
    assert!(deleted.contains("deleted"), "{deleted}");
    assert!(waited.0, "{}{}", waited.1, waited.2);

    let err = fails(
        &k,
        &[
            "wait",
            "--for=condition=Available",
            "deploy/web",
            "-n",
            "ns",
            "--timeout=1s",
        ],
    )
    .await;
    assert!(err.contains("timed out"), "{err}");
    k.run(&[
        "patch",
        "deploy",
        "web",
        "-n",
        "ns",
        "--subresource=status",
        "--type=merge",
        "-p",
        r#"{"status":{"conditions":[{"type":"Available","status":"True","reason":"MinimumReplicasAvailable"}]}}"#,
    ])
    .await;
    let out = k
        .run(&[
            "wait",
            "--for=condition=Available",
            "deploy/web",
            "-n",
            "ns",
            "--timeout=20s",
        ])
        .await;
    assert!(out.contains("deployment.apps/web condition met"), "{out}");
}

/// `kubectl api-resources` prints discovery: names, short names, apiVersion, scope and
/// kind, filtered by `--namespaced` and `--api-group`, with verbs in `-o wide`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_resources_prints_discovery() {
    let Some((_server, k)) = setup("kubectl api-resources").await else {
        return;
    };
    let out = k.run(&["api-resources"]).await;
    let row = |name: &str| {
        out.lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("no {name} in\n{out}"))
            .split_whitespace()
            .collect::<Vec<_>>()
    };
    assert_eq!(
        row("deployments"),
        ["deployments", "deploy", "apps/v1", "true", "Deployment"]
    );
    assert_eq!(row("nodes"), ["nodes", "no", "v1", "false", "Node"]);
    let cluster = k
        .run(&["api-resources", "--namespaced=false", "-o", "name"])
        .await;
    assert!(cluster.lines().any(|l| l == "namespaces"), "{cluster}");
    assert!(!cluster.lines().any(|l| l == "pods"), "{cluster}");
    let apps = k
        .run(&["api-resources", "--api-group=apps", "-o", "name"])
        .await;
    assert!(apps.lines().all(|l| l.ends_with(".apps")), "{apps}");
    assert!(apps.lines().any(|l| l == "deployments.apps"), "{apps}");
    let wide = k.run(&["api-resources", "-o", "wide"]).await;
    let pods = wide
        .lines()
        .find(|l| l.starts_with("pods "))
        .unwrap_or_default();
    assert!(
        pods.contains("create,delete,deletecollection,get,list,patch,update,watch"),
        "{pods}"
    );
}

/// `kubectl api-versions` lists every served group/version, including a CRD's once
/// created.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_versions_lists_groups_and_crd_versions() {
    let Some((_server, k)) = setup("kubectl api-versions").await else {
        return;
    };
    let out = k.run(&["api-versions"]).await;
    for gv in [
        "v1",
        "apps/v1",
        "batch/v1",
        "rbac.authorization.k8s.io/v1",
        "apiextensions.k8s.io/v1",
    ] {
        assert!(out.lines().any(|l| l == gv), "{gv} missing in\n{out}");
    }
    let version = corpus_crd_object(&k).await;
    let out = k.run(&["api-versions"]).await;
    assert!(
        out.lines().any(|l| l == format!("keda.sh/{version}")),
        "{out}"
    );
}

/// `kubectl events` (and `get events`) list core Events of a namespace with their type,
/// reason, object and message; `--for` narrows to one object.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_lists_core_events() {
    let Some((server, k)) = setup("kubectl events").await else {
        return;
    };
    for (name, pod, reason) in [("e1", "web", "Scheduled"), ("e2", "db", "Pulled")] {
        server
            .create_object(json!({
                "apiVersion": "v1", "kind": "Event",
                "metadata": {"name": name, "namespace": "ns"},
                "involvedObject": {"kind": "Pod", "name": pod, "namespace": "ns", "apiVersion": "v1"},
                "reason": reason, "message": format!("{reason} {pod}"), "type": "Normal",
                "firstTimestamp": "2026-01-01T00:00:00Z", "lastTimestamp": "2026-01-01T00:00:00Z",
                "count": 1, "source": {"component": "conformance"},
            }))
            .unwrap();
    }
    let out = k.run(&["events", "-n", "ns"]).await;
    assert!(out.starts_with("LAST SEEN"), "{out}");
    let rows: Vec<Vec<&str>> = out
        .lines()
        .skip(1)
        .map(|l| l.split_whitespace().skip(1).collect())
        .collect();
    assert_eq!(
        rows,
        [
            ["Normal", "Scheduled", "Pod/web", "Scheduled", "web"],
            ["Normal", "Pulled", "Pod/db", "Pulled", "db"],
        ],
        "{out}"
    );
    let out = k.run(&["events", "-n", "ns", "--for", "pod/web"]).await;
    assert!(
        out.contains("Scheduled") && !out.contains("Pulled"),
        "{out}"
    );
    let out = k.run(&["get", "events", "-n", "ns", "-o", "name"]).await;
    assert_eq!(out.lines().count(), 2, "{out}");
}

/// `kubectl get` prints the server's Table with the built-in printers' columns:
/// Deployments `READY UP-TO-DATE AVAILABLE AGE` (`-o wide` adds `CONTAINERS IMAGES
/// SELECTOR`), ConfigMaps `DATA`, Services `TYPE CLUSTER-IP EXTERNAL-IP PORT(S)`,
/// RoleBindings `ROLE` and their subjects.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_prints_the_built_in_printer_columns() {
    let Some((server, k)) = setup("kubectl get tables").await else {
        return;
    };
    server.create_object(deployment("web", 2)).unwrap();
    server.create_object(configmap("cfg")).unwrap();
    server
        .create_object(json!({
            "apiVersion": "v1", "kind": "Service",
            "metadata": {"name": "svc", "namespace": "ns"},
            "spec": {"type": "ClusterIP", "clusterIP": "10.96.0.10",
                     "ports": [{"port": 80, "protocol": "TCP"}], "selector": {"app": "web"}},
        }))
        .unwrap();
    server
        .create_object(json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
            "metadata": {"name": "rb", "namespace": "ns"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "reader"},
            "subjects": [{"kind": "ServiceAccount", "name": "robot", "namespace": "ns"}],
        }))
        .unwrap();
    let table = |out: String| -> Vec<Vec<String>> {
        out.lines()
            .map(|l| {
                l.split("  ")
                    .map(str::trim)
                    .filter(|c| !c.is_empty())
                    .map(str::to_owned)
                    .collect()
            })
            .collect()
    };
    let t = table(k.run(&["get", "deploy", "-n", "ns"]).await);
    assert_eq!(t[0], ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"]);
    assert_eq!(t[1][..4], ["web", "0/2", "0", "0"]);
    let t = table(k.run(&["get", "deploy", "-n", "ns", "-o", "wide"]).await);
    assert_eq!(
        t[0],
        [
            "NAME",
            "READY",
            "UP-TO-DATE",
            "AVAILABLE",
            "AGE",
            "CONTAINERS",
            "IMAGES",
            "SELECTOR"
        ]
    );
    assert_eq!(t[1][5..], ["app,sidecar", "nginx:1.27,envoy:1", "app=web"]);
    let t = table(k.run(&["get", "cm", "-n", "ns"]).await);
    assert_eq!(t[0], ["NAME", "DATA", "AGE"]);
    assert_eq!(t[1][..2], ["cfg", "1"]);
    let t = table(k.run(&["get", "svc", "-n", "ns", "-o", "wide"]).await);
    assert_eq!(
        t[0],
        [
            "NAME",
            "TYPE",
            "CLUSTER-IP",
            "EXTERNAL-IP",
            "PORT(S)",
            "AGE",
            "SELECTOR"
        ]
    );
    assert_eq!(
        t[1][..5],
        ["svc", "ClusterIP", "10.96.0.10", "<none>", "80/TCP"]
    );
    assert_eq!(t[1][6], "app=web");
    let t = table(
        k.run(&["get", "rolebinding", "-n", "ns", "-o", "wide"])
            .await,
    );
    assert_eq!(
        t[0],
        ["NAME", "ROLE", "AGE", "USERS", "GROUPS", "SERVICEACCOUNTS"]
    );
    assert_eq!(t[1][..2], ["rb", "Role/reader"]);
    assert_eq!(t[1].last().map(String::as_str), Some("ns/robot"));
}

/// `kubectl create <generator>` (namespace, configmap --from-literal, secret generic,
/// deployment, service clusterip, job, cronjob, role, rolebinding, serviceaccount) creates
/// the object the generator builds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_generators_create_their_objects() {
    let Some((_server, k)) = setup("kubectl create generators").await else {
        return;
    };
    let cases: &[(&[&str], &str)] = &[
        (&["create", "namespace", "made"], "namespace/made created"),
        (
            &[
                "create",
                "configmap",
                "cfg",
                "-n",
                "ns",
                "--from-literal=a=1",
            ],
            "configmap/cfg created",
        ),
        (
            &[
                "create",
                "secret",
                "generic",
                "sec",
                "-n",
                "ns",
                "--from-literal=p=q",
            ],
            "secret/sec created",
        ),
        (
            &[
                "create",
                "deployment",
                "web",
                "-n",
                "ns",
                "--image=nginx",
                "--replicas=2",
            ],
            "deployment.apps/web created",
        ),
        (
            &[
                "create",
                "service",
                "clusterip",
                "svc",
                "-n",
                "ns",
                "--tcp=80:8080",
            ],
            "service/svc created",
        ),
        (
            &[
                "create",
                "job",
                "once",
                "-n",
                "ns",
                "--image=busybox",
                "--",
                "true",
            ],
            "job.batch/once created",
        ),
        (
            &[
                "create",
                "cronjob",
                "nightly",
                "-n",
                "ns",
                "--image=busybox",
                "--schedule=0 3 * * *",
                "--",
                "true",
            ],
            "cronjob.batch/nightly created",
        ),
        (
            &["create", "serviceaccount", "robot", "-n", "ns"],
            "serviceaccount/robot created",
        ),
        (
            &[
                "create",
                "role",
                "reader",
                "-n",
                "ns",
                "--verb=get",
                "--resource=pods",
            ],
            "role.rbac.authorization.k8s.io/reader created",
        ),
        (
            &[
                "create",
                "rolebinding",
                "reader",
                "-n",
                "ns",
                "--role=reader",
                "--serviceaccount=ns:robot",
            ],
            "rolebinding.rbac.authorization.k8s.io/reader created",
        ),
    ];
    for (args, expected) in cases {
        let (ok, out, err) = kubectl(&k, args, None).await;
        assert!(
            ok && out.contains(expected),
            "kubectl {args:?}:\n{out}{err}"
        );
    }
    assert_eq!(
        get_json(&k, &["cm", "cfg"]).await["data"],
        json!({"a": "1"})
    );
    assert_eq!(
        get_json(&k, &["secret", "sec"]).await["data"],
        json!({"p": "cQ=="})
    );
    assert_eq!(
        get_json(&k, &["deploy", "web"]).await["spec"]["replicas"],
        2
    );
    let svc = get_json(&k, &["svc", "svc"]).await;
    assert_eq!(svc["spec"]["ports"][0]["targetPort"], 8080);
    assert!(svc["spec"]["clusterIP"].is_string(), "{svc}");
    let binding = get_json(&k, &["rolebinding", "reader"]).await;
    assert_eq!(binding["subjects"][0]["name"], "robot");
}

/// The remaining `kubectl create` generators (clusterrole, clusterrolebinding, ingress,
/// poddisruptionbudget, priorityclass, quota, secret docker-registry and tls, service
/// externalname, loadbalancer and nodeport) create the objects they build, with what
/// kube-apiserver's registry adds: a NodePort or LoadBalancer Service gets a `nodePort` per
/// port from the node port range 30000-32767 (`pkg/registry/core/service/portallocator`),
/// distinct across Services; an ExternalName Service gets no cluster IP; a Secret keeps the
/// type the generator set.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_generators_of_cluster_objects_secrets_and_service_types() {
    let Some((_server, k)) = setup("kubectl create generators 2").await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let cert = rcgen::generate_simple_self_signed(vec!["example.com".to_owned()]).unwrap();
    let (crt, key) = (dir.path().join("tls.crt"), dir.path().join("tls.key"));
    std::fs::write(&crt, cert.cert.pem()).unwrap();
    std::fs::write(&key, cert.signing_key.serialize_pem()).unwrap();
    let cert_arg = format!("--cert={}", crt.display());
    let key_arg = format!("--key={}", key.display());
    let cases: &[(&[&str], &str)] = &[
        (
            &[
                "create",
                "clusterrole",
                "reader",
                "--verb=get,list",
                "--resource=pods",
            ],
            "clusterrole.rbac.authorization.k8s.io/reader created",
        ),
        (
            &[
                "create",
                "clusterrolebinding",
                "reader",
                "--clusterrole=reader",
                "--user=alice",
            ],
            "clusterrolebinding.rbac.authorization.k8s.io/reader created",
        ),
        (
            &[
                "create",
                "ingress",
                "web",
                "-n",
                "ns",
                "--rule=foo.com/bar=svc1:8080,tls=cert",
            ],
            "ingress.networking.k8s.io/web created",
        ),
        (
            &[
                "create",
                "poddisruptionbudget",
                "pdb",
                "-n",
                "ns",
                "--selector=app=web",
                "--min-available=1",
            ],
            "poddisruptionbudget.policy/pdb created",
        ),
        (
            &[
                "create",
                "priorityclass",
                "high",
                "--value=1000",
                "--description=important",
            ],
            "priorityclass.scheduling.k8s.io/high created",
        ),
        (
            &["create", "quota", "q", "-n", "ns", "--hard=cpu=1,pods=2"],
            "resourcequota/q created",
        ),
        (
            &[
                "create",
                "secret",
                "docker-registry",
                "reg",
                "-n",
                "ns",
                "--docker-server=registry.example.com",
                "--docker-username=u",
                "--docker-password=p",
            ],
            "secret/reg created",
        ),
        (
            &[
                "create", "secret", "tls", "tls", "-n", "ns", &cert_arg, &key_arg,
            ],
            "secret/tls created",
        ),
        (
            &[
                "create",
                "service",
                "externalname",
                "ext",
                "-n",
                "ns",
                "--external-name=example.com",
            ],
            "service/ext created",
        ),
        (
            &[
                "create",
                "service",
                "loadbalancer",
                "lb",
                "-n",
                "ns",
                "--tcp=80:8080",
            ],
            "service/lb created",
        ),
        (
            &[
                "create",
                "service",
                "nodeport",
                "np",
                "-n",
                "ns",
                "--tcp=80:8080,443:8443",
            ],
            "service/np created",
        ),
    ];
    for (args, expected) in cases {
        let (ok, out, err) = kubectl(&k, args, None).await;
        assert!(
            ok && out.contains(expected),
            "kubectl {args:?}:\n{out}{err}"
        );
    }
    let cr: Value =
        serde_json::from_str(&k.run(&["get", "clusterrole", "reader", "-o", "json"]).await)
            .unwrap();
    assert_eq!(cr["rules"][0]["verbs"], json!(["get", "list"]));
    assert_eq!(cr["rules"][0]["resources"], json!(["pods"]));
    let crb: Value = serde_json::from_str(
        &k.run(&["get", "clusterrolebinding", "reader", "-o", "json"])
            .await,
    )
    .unwrap();
    assert_eq!(crb["roleRef"]["name"], "reader");
    assert_eq!(crb["subjects"][0]["name"], "alice");
    let ing = get_json(&k, &["ingress", "web"]).await;
    let rule = &ing["spec"]["rules"][0];
    assert_eq!(rule["host"], "foo.com");
    assert_eq!(
        rule["http"]["paths"][0]["backend"]["service"]["port"]["number"],
        8080
    );
    assert_eq!(ing["spec"]["tls"][0]["secretName"], "cert");
    assert_eq!(ing["metadata"]["generation"], 1);
    let pdb = get_json(&k, &["pdb", "pdb"]).await;
    assert_eq!(pdb["spec"]["minAvailable"], 1);
    let pc: Value =
        serde_json::from_str(&k.run(&["get", "priorityclass", "high", "-o", "json"]).await)
            .unwrap();
    assert_eq!(
        (pc["value"].clone(), pc["description"].clone()),
        (json!(1000), json!("important"))
    );
    let quota = get_json(&k, &["quota", "q"]).await;
    assert_eq!(quota["spec"]["hard"], json!({"cpu": "1", "pods": "2"}));
    let reg = get_json(&k, &["secret", "reg"]).await;
    assert_eq!(reg["type"], "kubernetes.io/dockerconfigjson");
    assert!(reg["data"][".dockerconfigjson"].is_string(), "{reg}");
    let tls = get_json(&k, &["secret", "tls"]).await;
    assert_eq!(tls["type"], "kubernetes.io/tls");
    assert!(tls["data"]["tls.crt"].is_string() && tls["data"]["tls.key"].is_string());

    let ext = get_json(&k, &["svc", "ext"]).await;
    assert_eq!(ext["spec"]["type"], "ExternalName");
    assert_eq!(ext["spec"]["externalName"], "example.com");
    assert!(ext["spec"].get("clusterIP").is_none(), "{ext}");
    let mut node_ports = Vec::new();
    for name in ["lb", "np"] {
        let svc = get_json(&k, &["svc", name]).await;
        assert!(svc["spec"]["clusterIP"].is_string(), "{svc}");
        assert_eq!(svc["spec"]["externalTrafficPolicy"], "Cluster");
        for port in svc["spec"]["ports"].as_array().unwrap() {
            let n = port["nodePort"].as_u64().unwrap_or_else(|| panic!("{svc}"));
            assert!((30000..=32767).contains(&n), "{svc}");
            node_ports.push(n);
        }
    }
    assert_eq!(node_ports.len(), 3);
    node_ports.sort_unstable();
    node_ports.dedup();
    assert_eq!(node_ports.len(), 3, "node ports are distinct");
    let lb = get_json(&k, &["svc", "lb"]).await;
    assert_eq!(lb["spec"]["type"], "LoadBalancer");
    assert_eq!(lb["spec"]["allocateLoadBalancerNodePorts"], true);
}

/// The claims of a JWT (its middle part, base64url JSON).
fn jwt_claims(token: &str) -> Value {
    use base64::Engine;
    let payload = token
        .trim()
        .split('.')
        .nth(1)
        .expect("a JWT has three parts");
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload)
        .unwrap();
    serde_json::from_slice(&bytes).unwrap()
}

/// `kubectl create token` posts a TokenRequest to the `serviceaccounts/token` subresource,
/// as kube-apiserver's TokenREST answers it: 404 for a missing ServiceAccount; a JWT in
/// `status.token` whose `sub` is the ServiceAccount and whose `aud` and lifetime are
/// `--audience` and `--duration` (`spec.audiences` defaults to the API server's audience,
/// `spec.expirationSeconds` to 3600, echoed in the answer with `status.expirationTimestamp`);
/// a duration under ten minutes is refused (422 `may not specify a duration less than 10
/// minutes`). With RBAC on, the token authenticates as
/// `system:serviceaccount:<ns>:<name>` in the service account groups and is authorized by
/// what is bound to the ServiceAccount. Discovery lists `serviceaccounts/token` with kind
/// `authentication.k8s.io/v1` TokenRequest and the verb `create`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_token_requests_a_service_account_token() {
    let server = TestApiServer::builder()
        .https()
        .rbac()
        .start()
        .await
        .unwrap();
    let Some(k) = Kubectl::for_server(&server, "kubectl create token") else {
        return;
    };
    server.create_namespace("ns").unwrap();
    let err = fails(&k, &["create", "token", "robot", "-n", "ns"]).await;
    assert!(err.contains("serviceaccounts \"robot\" not found"), "{err}");

    k.run(&["create", "serviceaccount", "robot", "-n", "ns"])
        .await;
    let token = k
        .run(&[
            "create",
            "token",
            "robot",
            "-n",
            "ns",
            "--duration=20m",
            "--audience=https://a.example",
            "--audience=b",
        ])
        .await;
    let claims = jwt_claims(&token);
    assert_eq!(claims["sub"], "system:serviceaccount:ns:robot");
    assert_eq!(claims["aud"], json!(["https://a.example", "b"]));
    assert_eq!(
        claims["exp"].as_i64().unwrap() - claims["iat"].as_i64().unwrap(),
        1200
    );
    assert_eq!(claims["kubernetes.io"]["serviceaccount"]["name"], "robot");

    let answer: Value = serde_json::from_str(
        &k.run(&["create", "token", "robot", "-n", "ns", "-o", "json"])
            .await,
    )
    .unwrap();
    assert_eq!(answer["kind"], "TokenRequest");
    assert_eq!(answer["apiVersion"], "authentication.k8s.io/v1");
    assert_eq!(answer["spec"]["expirationSeconds"], 3600);
    assert_eq!(
        answer["spec"]["audiences"],
        json!(["https://kubernetes.default.svc.cluster.local"])
    );
    let expires = answer["status"]["expirationTimestamp"].as_str().unwrap();
    let created = answer["metadata"]["creationTimestamp"].as_str().unwrap();
    let secs = |t: &str| t.parse::<jiff::Timestamp>().unwrap().as_second();
    assert_eq!(secs(expires) - secs(created), 3600, "{answer}");

    let err = fails(
        &k,
        &["create", "token", "robot", "-n", "ns", "--duration=5m"],
    )
    .await;
    assert!(
        err.contains("may not specify a duration less than 10 minutes"),
        "{err}"
    );

    let as_robot = format!("--token={}", token.trim());
    let who: Value =
        serde_json::from_str(&k.run(&["auth", "whoami", "-o", "json", &as_robot]).await).unwrap();
    assert_eq!(
        who["status"]["userInfo"]["username"],
        "system:serviceaccount:ns:robot"
    );
    assert_eq!(
        who["status"]["userInfo"]["groups"],
        json!([
            "system:serviceaccounts",
            "system:serviceaccounts:ns",
            "system:authenticated"
        ])
    );
    let err = fails(&k, &["get", "pods", "-n", "ns", &as_robot]).await;
    assert!(
        err.contains("Forbidden") && err.contains("system:serviceaccount:ns:robot"),
        "{err}"
    );
    k.run(&[
        "create",
        "role",
        "reader",
        "-n",
        "ns",
        "--verb=list",
        "--resource=pods",
    ])
    .await;
    k.run(&[
        "create",
        "rolebinding",
        "reader",
        "-n",
        "ns",
        "--role=reader",
        "--serviceaccount=ns:robot",
    ])
    .await;
    let (ok, out, err) = kubectl(&k, &["get", "pods", "-n", "ns", &as_robot], None).await;
    assert!(ok, "{out}{err}");

    let core: Value = serde_json::from_str(&k.run(&["get", "--raw", "/api/v1"]).await).unwrap();
    let sub = core["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "serviceaccounts/token")
        .cloned()
        .expect("serviceaccounts/token listed");
    assert_eq!(
        (&sub["group"], &sub["version"], &sub["kind"], &sub["verbs"]),
        (
            &json!("authentication.k8s.io"),
            &json!("v1"),
            &json!("TokenRequest"),
            &json!(["create"])
        )
    );
}

/// managedFields keep at most ten `Update` entries: after eleven `kubectl annotate
/// --field-manager=mN` writes by eleven managers, kube-apiserver's field manager
/// (`capManagersManager`) has folded the oldest updates into one `ancient-changes` entry
/// that owns their fields, and the newest managers keep their own entries.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn managed_fields_keep_ten_update_entries() {
    let Some((server, k)) = setup("kubectl annotate ten managers").await else {
        return;
    };
    server.create_object(configmap("cfg")).unwrap();
    for i in 0..11 {
        let annotation = format!("k{i}=v");
        let manager = format!("--field-manager=m{i:02}");
        k.run(&["annotate", "cm", "cfg", "-n", "ns", &annotation, &manager])
            .await;
    }
    let cm = get_json(&k, &["cm", "cfg", "--show-managed-fields"]).await;
    let entries = cm["metadata"]["managedFields"].as_array().unwrap();
    assert_eq!(entries.len(), 10, "{cm}");
    let ancient = entries
        .iter()
        .find(|e| e["manager"] == "ancient-changes")
        .unwrap_or_else(|| panic!("{cm}"));
    assert_eq!(ancient["operation"], "Update");
    let owned: Vec<&String> = ancient["fieldsV1"]["f:metadata"]["f:annotations"]
        .as_object()
        .unwrap()
        .keys()
        .filter(|k| k.starts_with("f:"))
        .collect();
    assert_eq!(owned, ["f:k0", "f:k1"], "the two oldest folded: {ancient}");
    assert!(entries.iter().any(|e| e["manager"] == "m10"), "{cm}");
    let annotations = cm["metadata"]["annotations"].as_object().unwrap();
    assert_eq!(annotations.len(), 11);
}

/// The write options' `fieldManager` is validated as `ValidateFieldManager` does: longer than
/// 128 bytes or with a non-printable character, the create is refused with 422 Invalid
/// `CreateOptions.meta.k8s.io "" is invalid: fieldManager: ...` and nothing is stored.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_manager_length_and_characters_are_checked() {
    let Some((_server, k)) = setup("kubectl --field-manager checks").await else {
        return;
    };
    let long = format!("--field-manager={}", "m".repeat(129));
    let err = fails(&k, &["create", "cm", "a", "-n", "ns", &long]).await;
    assert!(
        err.contains(
            "CreateOptions.meta.k8s.io \"\" is invalid: fieldManager: Too long: may not be more than 128 bytes"
        ),
        "{err}"
    );
    let err = fails(
        &k,
        &["create", "cm", "a", "-n", "ns", "--field-manager=a\tb"],
    )
    .await;
    assert!(
        err.contains(
            "fieldManager: Invalid value: \"a\\tb\": invalid character U+0009 (at position 1)"
        ),
        "{err}"
    );
    assert!(absent(&k, &["cm", "a"]).await);
    let exact = format!("--field-manager={}", "m".repeat(128));
    k.run(&["create", "cm", "a", "-n", "ns", &exact]).await;
    let err = fails(
        &k,
        &[
            "label",
            "cm",
            "a",
            "-n",
            "ns",
            "x=y",
            "--field-manager=a\u{7f}",
        ],
    )
    .await;
    assert!(
        err.contains("PatchOptions \"\" is invalid")
            && err.contains("invalid character U+007F (at position 1)"),
        "{err}"
    );
}

/// A ConfigMap manifest with `data`.
fn configmap_with(name: &str, data: Value) -> String {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": {"name": name, "namespace": "ns"}, "data": data})
    .to_string()
}

/// `kubectl apply` then `kubectl apply --server-side`, as kube-apiserver's
/// `lastAppliedManager` and `lastAppliedUpdater` make them work together for the manager
/// `kubectl`: the server-side apply of a changed field that client-side apply owns does not
/// conflict while the live value is still the one the last-applied annotation recorded
/// (kubectl's documented upgrade path), but does once another manager changed it (409 naming
/// that manager), and always for another `--field-manager`; after a server-side apply the
/// annotation holds the applied configuration, so a later client-side `kubectl apply`
/// removes a key only the server-side apply had added.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn apply_client_side_then_server_side_upgrades_without_conflicts() {
    let Some((_server, k)) = setup("kubectl apply CSA then SSA").await else {
        return;
    };
    let apply = |args: &'static [&'static str], manifest: String| {
        let k = &k;
        async move {
            let mut all = vec!["apply"];
            all.extend(args);
            all.extend(["-f", "-"]);
            kubectl(k, &all, Some(&manifest)).await
        }
    };
    // Another manager changed `a` after the client-side apply: its conflict stands.
    let (ok, out, err) = apply(&[], configmap_with("moved", json!({"a": "1"}))).await;
    assert!(ok, "{out}{err}");
    k.run(&[
        "patch",
        "cm",
        "moved",
        "-n",
        "ns",
        "-p",
        r#"{"data":{"a":"9"}}"#,
    ])
    .await;
    let (ok, _, err) = apply(
        &["--server-side"],
        configmap_with("moved", json!({"a": "3"})),
    )
    .await;
    assert!(
        !ok && err.contains("conflict with \"kubectl-patch\"") && err.contains(".data.a"),
        "{err}"
    );

    let (ok, out, err) = apply(&[], configmap_with("cfg", json!({"a": "1", "b": "2"}))).await;
    assert!(ok, "{out}{err}");
    // Another field manager gets no upgrade.
    let (ok, _, err) = apply(
        &["--server-side", "--field-manager=other"],
        configmap_with("cfg", json!({"a": "3", "b": "2"})),
    )
    .await;
    assert!(
        !ok && err.contains("conflict with \"kubectl-client-side-apply\""),
        "{err}"
    );
    let (ok, out, err) = apply(
        &["--server-side"],
        configmap_with("cfg", json!({"a": "3", "b": "2", "c": "5"})),
    )
    .await;
    assert!(ok, "{out}{err}");
    let cm = get_json(&k, &["cm", "cfg", "--show-managed-fields"]).await;
    assert_eq!(cm["data"], json!({"a": "3", "b": "2", "c": "5"}));
    let last: Value = serde_json::from_str(
        cm["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(last["data"], json!({"a": "3", "b": "2", "c": "5"}), "{cm}");
    let kubectl_owns = cm["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["manager"] == "kubectl" && e["operation"] == "Apply")
        .map(|e| e["fieldsV1"]["f:data"].clone());
    assert_eq!(
        kubectl_owns,
        Some(json!({"f:a": {}, "f:b": {}, "f:c": {}})),
        "{cm}"
    );

    let (ok, out, err) = apply(&[], configmap_with("cfg", json!({"a": "3", "b": "2"}))).await;
    assert!(ok, "{out}{err}");
    assert_eq!(
        get_json(&k, &["cm", "cfg"]).await["data"],
        json!({"a": "3", "b": "2"})
    );
}

/// Service updates as kube-apiserver's service REST storage handles them: `kubectl patch`
/// making a ClusterIP Service a NodePort one allocates its node port (30000-32767) and keeps
/// its cluster IP; `kubectl replace` with a manifest that leaves out the cluster IP and the
/// node port keeps both (`patchAllocatedValues`); a node port another Service holds is
/// refused with 422 `provided port is already allocated`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn service_updates_keep_and_allocate_addresses() {
    let Some((_server, k)) = setup("kubectl service updates").await else {
        return;
    };
    k.run(&[
        "create",
        "service",
        "clusterip",
        "svc",
        "-n",
        "ns",
        "--tcp=80:8080",
    ])
    .await;
    let before = get_json(&k, &["svc", "svc"]).await;
    k.run(&[
        "patch",
        "svc",
        "svc",
        "-n",
        "ns",
        "-p",
        r#"{"spec":{"type":"NodePort"}}"#,
    ])
    .await;
    let after = get_json(&k, &["svc", "svc"]).await;
    assert_eq!(after["spec"]["clusterIP"], before["spec"]["clusterIP"]);
    let node_port = after["spec"]["ports"][0]["nodePort"]
        .as_u64()
        .unwrap_or_else(|| panic!("{after}"));
    assert!((30000..=32767).contains(&node_port), "{after}");

    let manifest = json!({"apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "svc", "namespace": "ns"},
        "spec": {"type": "NodePort", "selector": {"app": "svc"},
                 "ports": [{"name": "80-8080", "port": 80, "targetPort": 8080}]}});
    let (ok, out, err) = kubectl(&k, &["replace", "-f", "-"], Some(&manifest.to_string())).await;
    assert!(ok, "{out}{err}");
    let replaced = get_json(&k, &["svc", "svc"]).await;
    assert_eq!(replaced["spec"]["clusterIP"], before["spec"]["clusterIP"]);
    assert_eq!(replaced["spec"]["ports"][0]["nodePort"], node_port);

    let mut clash = manifest.clone();
    clash["metadata"]["name"] = json!("other");
    clash["spec"]["ports"][0]["nodePort"] = json!(node_port);
    let (ok, _, err) = kubectl(&k, &["create", "-f", "-"], Some(&clash.to_string())).await;
    assert!(
        !ok && err.contains("provided port is already allocated"),
        "{err}"
    );
}

/// `kubectl auth can-i` posts a SelfSubjectAccessReview and prints its `allowed`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auth_can_i_answers_yes() {
    let Some((_server, k)) = setup("kubectl auth can-i").await else {
        return;
    };
    assert_eq!(
        k.run(&["auth", "can-i", "create", "pods", "-n", "ns"])
            .await
            .trim(),
        "yes"
    );
}

/// `kubectl auth whoami` posts a SelfSubjectReview and prints the user.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auth_whoami_prints_the_user() {
    let Some((_server, k)) = setup("kubectl auth whoami").await else {
        return;
    };
    let out = k.run(&["auth", "whoami"]).await;
    assert!(out.contains("Username"), "{out}");
}

/// `kubectl explain` reads the resource's schema from `/openapi/v3`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn explain_prints_field_documentation() {
    let Some((_server, k)) = setup("kubectl explain").await else {
        return;
    };
    let out = k.run(&["explain", "deployment.spec.replicas"]).await;
    assert!(out.contains("FIELD: replicas <integer>"), "{out}");
    let out = k.run(&["explain", "pods", "--recursive"]).await;
    assert!(out.contains("containers"), "{out}");
}

/// `kubectl delete --dry-run=server` sends DeleteOptions{dryRun: [All]} in the body: the
/// answer says deleted, and the object is still there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_dry_run_server_keeps_the_object() {
    let Some((server, k)) = setup("kubectl delete --dry-run=server").await else {
        return;
    };
    server.create_object(configmap("cfg")).unwrap();
    let out = k
        .run(&["delete", "cm", "cfg", "-n", "ns", "--dry-run=server"])
        .await;
    assert!(
        out.contains("configmap \"cfg\" deleted (server dry run)"),
        "{out}"
    );
    assert_eq!(
        get_json(&k, &["cm", "cfg"]).await["metadata"]["name"],
        "cfg"
    );
}

/// `kubectl delete --cascade=orphan` deletes the owner and leaves its ReplicaSet, without
/// the owner reference.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_orphan_cascade_keeps_dependents() {
    let Some((server, k)) = setup("kubectl delete --cascade=orphan").await else {
        return;
    };
    owner_chain(&server, "orph");
    k.run(&[
        "delete",
        "deployment",
        "orph",
        "-n",
        "ns",
        "--cascade=orphan",
    ])
    .await;
    assert!(eventually_absent(&k, &["deployment", "orph"]).await);
    tokio::time::sleep(Duration::from_millis(500)).await;
    let rs = get_json(&k, &["rs", "orph-rs"]).await;
    assert!(
        rs["metadata"]["ownerReferences"]
            .as_array()
            .is_none_or(Vec::is_empty),
        "{rs}"
    );
    assert_eq!(
        get_json(&k, &["pod", "orph-pod"]).await["metadata"]["name"],
        "orph-pod"
    );
}

/// `kubectl diff -f` compares the live object with the server's dry run of the change, and
/// exits 1 with a unified diff when they differ, 0 when not. Client-side, kubectl sends the
/// three-way strategic merge patch of `kubectl apply` with `dryRun=All`; its modified
/// configuration has the last-applied annotation taken out by setting an empty map, so the
/// patch of an unchanged object created without that annotation is
/// `{"metadata":{"annotations":{}}}`. A real server decodes it into the typed `ObjectMeta`,
/// whose `omitempty` drops the empty map: the dry-run answer equals the live object (exit 0).
/// A changed manifest shows just its change, with the live resourceVersion (a dry-run update
/// keeps it); a missing object is a dry-run create (uid and creationTimestamp, no
/// resourceVersion); `--server-side` diffs a dry-run apply; an object created by
/// `kubectl apply` (with the annotation) diffs as empty too. Nothing is written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn diff_shows_the_change_a_manifest_would_make() {
    let Some((server, k)) = setup("kubectl diff").await else {
        return;
    };
    server.create_object(configmap("cfg")).unwrap();
    let diff = |args: &'static [&'static str], manifest: Value| {
        let k = &k;
        async move {
            let mut all = vec!["diff"];
            all.extend(args);
            all.extend(["-f", "-"]);
            kubectl(k, &all, Some(&manifest.to_string())).await
        }
    };
    let (same, out, err) = diff(&[], configmap("cfg")).await;
    assert!(same && out.is_empty(), "{out}{err}");

    let mut changed = configmap("cfg");
    changed["data"]["a"] = json!("2");
    for args in [&[][..], &["--server-side"][..]] {
        let (same, out, err) = diff(args, changed.clone()).await;
        assert!(!same, "{args:?}: {out}{err}");
        let lines: Vec<&str> = out
            .lines()
            .filter(|l| l.starts_with(['-', '+']) && !l.starts_with("---") && !l.starts_with("+++"))
            .collect();
        assert_eq!(lines, ["-  a: \"1\"", "+  a: \"2\""], "{args:?}: {out}");
    }
    assert_eq!(get_json(&k, &["cm", "cfg"]).await["data"]["a"], "1");

    let (same, out, _) = diff(&[], configmap("new")).await;
    assert!(!same, "{out}");
    assert!(
        out.contains("+  uid: ") && out.contains("+  creationTimestamp: "),
        "{out}"
    );
    assert!(!out.contains("resourceVersion"), "{out}");
    assert!(absent(&k, &["cm", "new"]).await);

    let applied = configmap("applied");
    let (ok, out, err) = kubectl(&k, &["apply", "-f", "-"], Some(&applied.to_string())).await;
    assert!(ok, "{out}{err}");
    let (same, out, err) = diff(&[], applied).await;
    assert!(same && out.is_empty(), "{out}{err}");
}

/// `kubectl patch` (strategic merge by default) merges a Deployment's containers by name.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn patch_strategic_merges_containers_by_name() {
    let Some((server, k)) = setup("kubectl patch strategic").await else {
        return;
    };
    server.create_object(deployment("web", 1)).unwrap();
    k.run(&[
        "patch",
        "deploy",
        "web",
        "-n",
        "ns",
        "-p",
        r#"{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"nginx:1.28"}]}}}}"#,
    ])
    .await;
    let d = get_json(&k, &["deploy", "web"]).await;
    let images: Vec<_> = d["spec"]["template"]["spec"]["containers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["name"].as_str().unwrap(), c["image"].as_str().unwrap()))
        .collect();
    assert_eq!(images, [("app", "nginx:1.28"), ("sidecar", "envoy:1")]);
}

/// `kubectl patch` with the default strategic type on a custom resource is refused: 415
/// (custom resources have no patch strategies), and kubectl says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn patch_strategic_on_a_custom_resource_is_refused() {
    let Some((_server, k)) = setup("kubectl patch strategic on a CRD").await else {
        return;
    };
    corpus_crd_object(&k).await;
    let err = fails(
        &k,
        &[
            "patch",
            "scaledobject",
            "web",
            "-n",
            "ns",
            "-p",
            r#"{"spec":{"minReplicaCount":2}}"#,
        ],
    )
    .await;
    assert!(
        err.contains("UnsupportedMediaType") || err.contains("not supported"),
        "{err}"
    );
}

/// kubectl shows kube-apiserver's registry rules as a cluster does: NamespaceLifecycle's
/// immortal namespaces, a Secret's `stringData` merged into `data`, the Job restart policy
/// rule and an immutable ConfigMap.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn registry_rules_surface_through_kubectl() {
    let Some((_server, k)) = setup("kubectl registry rules").await else {
        return;
    };
    let err = fails(&k, &["delete", "namespace", "kube-system"]).await;
    assert!(
        err.contains(
            "Error from server (Forbidden): namespaces \"kube-system\" is forbidden: this namespace may not be deleted"
        ),
        "{err}"
    );
    let secret = json!({"apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "s", "namespace": "ns"}, "stringData": {"user": "admin"}});
    let (ok, out, err) = kubectl(&k, &["create", "-f", "-"], Some(&secret.to_string())).await;
    assert!(ok, "{out}{err}");
    let s = get_json(&k, &["secret", "s"]).await;
    assert_eq!(s["data"]["user"], "YWRtaW4=");
    assert!(s.get("stringData").is_none());
    let job = json!({"apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": "j", "namespace": "ns"},
        "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "busybox:1"}]}}}});
    let (ok, _, err) = kubectl(&k, &["create", "-f", "-"], Some(&job.to_string())).await;
    assert!(!ok);
    assert!(
        err.contains("spec.template.spec.restartPolicy: Required value: valid values: \"OnFailure\", \"Never\""),
        "{err}"
    );
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "immutable": true,
        "metadata": {"name": "frozen", "namespace": "ns"}, "data": {"a": "1"}});
    let (ok, out, err) = kubectl(&k, &["create", "-f", "-"], Some(&cm.to_string())).await;
    assert!(ok, "{out}{err}");
    let err = fails(
        &k,
        &[
            "patch",
            "configmap",
            "frozen",
            "-n",
            "ns",
            "-p",
            r#"{"data":{"a":"2"}}"#,
        ],
    )
    .await;
    assert!(
        err.contains("data: Forbidden: field is immutable when `immutable` is set"),
        "{err}"
    );
}

/// `kubectl apply` (client-side) of a ConfigMap whose data exceeds 256 KiB: the
/// last-applied-configuration annotation it adds holds the whole object, and kube-apiserver's
/// `ValidateAnnotationsSize` (`TotalAnnotationSizeLimitB`, keys and values of all
/// annotations together) refuses it with 422 `metadata.annotations: Too long: may not be more
/// than 262144 bytes`, as on a cluster; `kubectl apply --server-side` (no annotation) and
/// `kubectl create` store it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn apply_of_a_large_object_exceeds_the_annotation_limit() {
    let Some((_server, k)) = setup("kubectl apply annotation size").await else {
        return;
    };
    let big = "x".repeat(300 * 1024);
    let manifest = configmap_with("big", json!({ "blob": big }));
    let (ok, _, err) = kubectl(&k, &["apply", "-f", "-"], Some(&manifest)).await;
    assert!(!ok, "the client-side apply succeeded");
    assert!(
        err.contains(
            r#"ConfigMap "big" is invalid: metadata.annotations: Too long: may not be more than 262144 bytes"#
        ),
        "{err}"
    );
    assert!(absent(&k, &["cm", "big"]).await);
    let (ok, out, err) = kubectl(&k, &["apply", "--server-side", "-f", "-"], Some(&manifest)).await;
    assert!(ok, "{out}{err}");
    // An update that adds annotations past the limit fails the same way.
    // (Each argument below the kernel's 128 KiB limit of one argument.)
    let value = "y".repeat(100 * 1024);
    let err = fails(
        &k,
        &[
            "annotate",
            "cm",
            "big",
            "-n",
            "ns",
            &format!("a={value}"),
            &format!("b={value}"),
            &format!("c={value}"),
        ],
    )
    .await;
    assert!(err.contains("metadata.annotations: Too long"), "{err}");
}

/// A CRD that lists `v1alpha1` before `v1`: kube-apiserver's discovery orders the group's
/// versions by `version.CompareKubeAwareVersionStrings` (GA before beta before alpha), so
/// `preferredVersion` and the first version of aggregated discovery are `v1`, and `kubectl
/// get` and `kubectl explain` use it, not the first-listed version.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crd_versions_are_preferred_by_kube_aware_priority() {
    let Some((_server, k)) = setup("kubectl CRD version priority").await else {
        return;
    };
    let schema = |field: &str| {
        json!({"openAPIV3Schema": {"type": "object", "properties": {
            "spec": {"type": "object", "description": "the spec",
                     "properties": {field: {"type": "string", "description": format!("the {field}")}}}}}})
    };
    let crd = json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
                 "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
                 "versions": [
                     {"name": "v1alpha1", "served": true, "storage": false, "schema": schema("alphaField")},
                     {"name": "v1beta1", "served": true, "storage": false, "schema": schema("betaField")},
                     {"name": "v1", "served": true, "storage": true, "schema": schema("gaField")},
                 ]}
    });
    let (ok, out, err) = kubectl(&k, &["apply", "-f", "-"], Some(&crd.to_string())).await;
    assert!(ok, "{out}{err}");
    let widget = json!({"apiVersion": "example.com/v1", "kind": "Widget",
                        "metadata": {"name": "w", "namespace": "ns"}, "spec": {"gaField": "x"}});
    let (ok, out, err) = kubectl(&k, &["apply", "-f", "-"], Some(&widget.to_string())).await;
    assert!(ok, "{out}{err}");
    let got = get_json(&k, &["widgets", "w"]).await;
    assert_eq!(got["apiVersion"], "example.com/v1", "{got}");
    let out = k.run(&["explain", "widgets.spec"]).await;
    assert!(
        out.contains("VERSION:    v1\n") && out.contains("gaField"),
        "{out}"
    );
    let out = k.run(&["api-versions"]).await;
    let ours: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("example.com/"))
        .collect();
    assert_eq!(ours.len(), 3, "{out}");
    let group = k.run(&["get", "--raw", "/apis/example.com"]).await;
    let group: Value = serde_json::from_str(&group).unwrap();
    assert_eq!(group["preferredVersion"]["version"], "v1", "{group}");
    let order: Vec<&str> = group["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["version"].as_str().unwrap())
        .collect();
    assert_eq!(order, ["v1", "v1beta1", "v1alpha1"]);
}

/// kube-apiserver serves core `v1` Events and `events.k8s.io/v1` Events from one store (two
/// versions of one resource, converted by `pkg/apis/events/v1/conversion.go`): an Event a
/// recorder writes through `events.k8s.io/v1` is listed by `kubectl get events` and `kubectl
/// events` with its `note` as the message and `regarding` as the object, and a core Event is
/// read through `events.k8s.io/v1` with `note`, `regarding` and `deprecatedCount`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_written_through_either_api_are_seen_through_both() {
    let Some((server, k)) = setup("kubectl events across APIs").await else {
        return;
    };
    let pod = server
        .create_object(json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "web", "namespace": "ns"},
            "spec": {"containers": [{"name": "app", "image": "nginx"}]}}))
        .unwrap();
    let uid = pod["metadata"]["uid"].as_str().unwrap().to_owned();
    let recorded = json!({
        "apiVersion": "events.k8s.io/v1", "kind": "Event",
        "metadata": {"name": "web.1", "namespace": "ns"},
        "eventTime": "2026-01-01T00:00:00.000000Z",
        "reportingController": "kinform.dev/widget-controller", "reportingInstance": "ctl-0",
        "action": "Reconcile", "reason": "Synced", "type": "Normal",
        "regarding": {"kind": "Pod", "name": "web", "namespace": "ns", "apiVersion": "v1", "uid": uid},
        "note": "synced web from the recorder",
    });
    let (ok, out, err) = kubectl(&k, &["create", "-f", "-"], Some(&recorded.to_string())).await;
    assert!(ok, "{out}{err}");
    let out = k.run(&["get", "events", "-n", "ns"]).await;
    assert!(
        out.contains("Synced")
            && out.contains("pod/web")
            && out.contains("synced web from the recorder"),
        "{out}"
    );
    let core = get_json(&k, &["events.v1.", "web.1"]).await;
    assert_eq!(core["apiVersion"], "v1", "{core}");
    assert_eq!(core["message"], "synced web from the recorder");
    assert_eq!(core["involvedObject"]["name"], "web");
    assert_eq!(core["reportingComponent"], "kinform.dev/widget-controller");
    let out = k.run(&["events", "-n", "ns", "--for", "pod/web"]).await;
    assert!(out.contains("synced web from the recorder"), "{out}");
    // `kubectl describe` lists the object's core Events by `involvedObject` fields.
    let out = k.run(&["describe", "pod", "web", "-n", "ns"]).await;
    let events = out.split("Events:").nth(1).unwrap_or_default();
    assert!(
        events.contains("Synced") && events.contains("synced web from the recorder"),
        "{out}"
    );
    let out = k
        .run(&[
            "get",
            "events",
            "-n",
            "ns",
            "--field-selector",
            "involvedObject.name=web",
            "-o",
            "name",
        ])
        .await;
    assert_eq!(out.trim(), "event/web.1", "{out}");

    server
        .create_object(json!({
            "apiVersion": "v1", "kind": "Event",
            "metadata": {"name": "db.1", "namespace": "ns"},
            "involvedObject": {"kind": "Pod", "name": "db", "namespace": "ns"},
            "reason": "Pulled", "message": "pulled db", "type": "Normal", "count": 4,
            "firstTimestamp": "2026-01-01T00:00:00Z", "lastTimestamp": "2026-01-01T00:00:00Z",
            "source": {"component": "kubelet", "host": "node-1"},
        }))
        .unwrap();
    let new = get_json(&k, &["events.v1.events.k8s.io", "db.1"]).await;
    assert_eq!(new["apiVersion"], "events.k8s.io/v1", "{new}");
    assert_eq!(new["note"], "pulled db");
    assert_eq!(new["regarding"]["name"], "db");
    assert_eq!(new["deprecatedCount"], 4);
    assert_eq!(new["deprecatedSource"]["host"], "node-1");
    assert!(new.get("message").is_none(), "{new}");
    let list = get_json(&k, &["events.v1.events.k8s.io"]).await;
    assert_eq!(list["items"].as_array().map(Vec::len), Some(2), "{list}");
}

/// Every cluster has the `default/kubernetes` Service from the start (kube-apiserver's
/// bootstrap controller): `kubectl get svc -n default` lists it as a ClusterIP Service at the
/// first address of the service range, port 443, and its Endpoints point at the server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_kubernetes_service_exists_at_start() {
    let Some((server, k)) = setup("kubectl get svc kubernetes").await else {
        return;
    };
    let out = k.run(&["get", "svc", "-n", "default"]).await;
    let row: Vec<&str> = out
        .lines()
        .nth(1)
        .unwrap_or_default()
        .split_whitespace()
        .take(5)
        .collect();
    assert_eq!(
        row,
        ["kubernetes", "ClusterIP", "10.96.0.1", "<none>", "443/TCP"],
        "{out}"
    );
    let ep = k
        .run(&[
            "get",
            "endpoints",
            "kubernetes",
            "-n",
            "default",
            "-o",
            "json",
        ])
        .await;
    let ep: Value = serde_json::from_str(&ep).unwrap();
    let port = server
        .url()
        .rsplit(':')
        .next()
        .unwrap()
        .parse::<u64>()
        .unwrap();
    assert_eq!(ep["subsets"][0]["ports"][0]["port"], port, "{ep}");
    // A new Service takes the next address.
    k.run(&[
        "create",
        "service",
        "clusterip",
        "web",
        "-n",
        "ns",
        "--tcp=80:8080",
    ])
    .await;
    let web = get_json(&k, &["svc", "web"]).await;
    assert_eq!(web["spec"]["clusterIP"], "10.96.0.2", "{web}");
}

/// kube-apiserver answers every request for a deprecated built-in resource with its
/// deprecation warning (`Warning: 299 - "v1 ComponentStatus is deprecated in v1.19+"`, the
/// text of k8s.io/apiserver's `deprecation.WarningMessage` from the type's lifecycle tags;
/// Endpoints since v1.33 with its replacement; a CRD version marked `deprecated`, the
/// apiextensions-apiserver's text), and kubectl prints it on stderr as `Warning: ...`. A
/// resource that is not deprecated answers without one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deprecated_resources_answer_with_a_deprecation_warning() {
    let Some((server, k)) = setup("kubectl deprecation warnings").await else {
        return;
    };
    let (ok, _, err) = kubectl(&k, &["get", "componentstatuses"], None).await;
    assert!(ok, "{err}");
    assert!(
        err.lines()
            .any(|l| l == "Warning: v1 ComponentStatus is deprecated in v1.19+"),
        "{err}"
    );
    // By the short name too, and on every verb's answer, a 404 included.
    let (_, _, err) = kubectl(&k, &["get", "cs", "etcd-0"], None).await;
    assert!(
        err.contains("Warning: v1 ComponentStatus is deprecated in v1.19+"),
        "{err}"
    );
    server
        .create_object(json!({
            "apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "svc", "namespace": "ns"},
        }))
        .unwrap();
    let (ok, out, err) = kubectl(&k, &["get", "endpoints", "-n", "ns"], None).await;
    assert!(ok && out.contains("svc"), "{out}{err}");
    assert!(
        err.lines().any(|l| l
            == "Warning: v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice"),
        "{err}"
    );
    let (ok, _, err) = kubectl(&k, &["get", "configmaps", "-n", "ns"], None).await;
    assert!(ok && !err.contains("Warning"), "{err}");

    // A deprecated CRD version without a `deprecationWarning`: the apiextensions-apiserver's
    // default text, naming the served version to use instead.
    server
        .create_object(json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "gadgets.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced",
                     "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
                     "versions": [
                        {"name": "v1beta1", "served": true, "storage": false, "deprecated": true,
                         "schema": {"openAPIV3Schema": {"type": "object"}}},
                        {"name": "v1", "served": true, "storage": true,
                         "schema": {"openAPIV3Schema": {"type": "object"}}}]},
        }))
        .unwrap();
    let (ok, _, err) = kubectl(
        &k,
        &["get", "gadgets.v1beta1.example.com", "-n", "ns"],
        None,
    )
    .await;
    assert!(ok, "{err}");
    assert!(
        err.lines()
            .any(|l| l
                == "Warning: example.com/v1beta1 Gadget is deprecated; use example.com/v1 Gadget"),
        "{err}"
    );
    let (ok, _, err) = kubectl(&k, &["get", "gadgets", "-n", "ns"], None).await;
    assert!(ok && !err.contains("Warning"), "{err}");
}

/// `kubectl get events` prints kube-apiserver's Event printer (pkg/printers/internalversion
/// `printEvent`): `LAST SEEN TYPE REASON OBJECT MESSAGE` with no NAME column, the object as
/// `kind/name` in lower case; `-o wide` adds `SUBOBJECT SOURCE FIRST SEEN COUNT NAME`.
/// `events.k8s.io` Events print the same (the server converts them to the internal Event),
/// and `--subresource=scale` prints the Scale printer's `NAME DESIRED AVAILABLE AGE`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_events_and_scale_print_the_server_printers() {
    let Some((server, k)) = setup("kubectl get events").await else {
        return;
    };
    let event = json!({
        "apiVersion": "v1", "kind": "Event",
        "metadata": {"name": "web.1", "namespace": "ns"},
        "involvedObject": {"kind": "Pod", "name": "web", "namespace": "ns", "apiVersion": "v1",
                           "fieldPath": "spec.containers{app}"},
        "reason": "BackOff", "message": "Back-off restarting failed container", "type": "Warning",
        "firstTimestamp": "2026-01-01T00:00:00Z", "lastTimestamp": "2026-01-01T00:00:00Z",
        "count": 3, "source": {"component": "kubelet", "host": "node-1"},
    });
    let (ok, out, err) = kubectl(&k, &["create", "-f", "-"], Some(&event.to_string())).await;
    assert!(ok, "{out}{err}");
    // Columns are separated by at least two spaces; the table's cells, line by line.
    let table = |out: String| -> Vec<Vec<String>> {
        out.lines()
            .map(|l| {
                l.split("  ")
                    .map(str::trim)
                    .filter(|c| !c.is_empty())
                    .map(str::to_owned)
                    .collect()
            })
            .collect()
    };
    let t = table(k.run(&["get", "events", "-n", "ns"]).await);
    assert_eq!(t[0], ["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]);
    assert!(t[1][0].ends_with('d'), "{:?}", t[1]);
    assert_eq!(
        t[1][1..],
        [
            "Warning",
            "BackOff",
            "pod/web",
            "Back-off restarting failed container"
        ]
    );
    let t = table(k.run(&["get", "events", "-n", "ns", "-o", "wide"]).await);
    assert_eq!(
        t[0],
        [
            "LAST SEEN",
            "TYPE",
            "REASON",
            "OBJECT",
            "SUBOBJECT",
            "SOURCE",
            "MESSAGE",
            "FIRST SEEN",
            "COUNT",
            "NAME"
        ]
    );
    assert_eq!(
        t[1][1..7],
        [
            "Warning",
            "BackOff",
            "pod/web",
            "spec.containers{app}",
            "kubelet, node-1",
            "Back-off restarting failed container"
        ]
    );
    assert_eq!(t[1][8..], ["3", "web.1"]);

    let event = json!({
        "apiVersion": "events.k8s.io/v1", "kind": "Event",
        "metadata": {"name": "dep.1", "namespace": "ns"},
        "eventTime": "2026-01-01T00:00:00.000000Z",
        "reportingController": "example.com/ctl", "reportingInstance": "ctl-0",
        "action": "Sync", "reason": "Synced", "type": "Normal", "note": "synced",
        "regarding": {"kind": "Deployment", "name": "web", "namespace": "ns", "apiVersion": "apps/v1"},
    });
    let (ok, out, err) = kubectl(&k, &["create", "-f", "-"], Some(&event.to_string())).await;
    assert!(ok, "{out}{err}");
    let t = table(
        k.run(&["get", "events.events.k8s.io", "-n", "ns", "-o", "wide"])
            .await,
    );
    assert_eq!(t[0][..4], ["LAST SEEN", "TYPE", "REASON", "OBJECT"]);
    assert_eq!(
        t[1][1..7],
        [
            "Normal",
            "Synced",
            "deployment/web",
            "example.com/ctl, ctl-0",
            "synced",
            // FIRST SEEN falls back on eventTime, LAST SEEN on FIRST SEEN: the same age.
            t[1][0].as_str()
        ],
        "{t:?}"
    );
    assert_eq!(t[1][7..], ["1", "dep.1"]);

    server.create_object(deployment("web", 2)).unwrap();
    let t = table(
        k.run(&["get", "deploy", "web", "-n", "ns", "--subresource", "scale"])
            .await,
    );
    assert_eq!(t[0], ["NAME", "DESIRED", "AVAILABLE", "AGE"]);
    assert_eq!(t[1][..3], ["web", "2", "0"]);
}

/// `kubectl get --raw '/api/v1/namespaces/default/configmaps?shardSelector=...'` against a
/// server with the `ShardedListAndWatch` gate on, as kube-apiserver 1.36 serves a sharded
/// LIST (KEP-5866): the ConfigMaps whose FNV-1a 64 of `metadata.uid` falls in the range, and
/// `metadata.shardInfo.selector` echoing the selector; a selector that does not parse is
/// kube-apiserver's 400 BadRequest `invalid shard selector: ...`, which kubectl prints.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_raw_with_a_shard_selector_lists_the_shard() {
    let server = TestApiServer::builder()
        .https()
        .sharded_list_and_watch()
        .start()
        .await
        .unwrap();
    let Some(k) = Kubectl::for_server(&server, "kubectl get --raw ?shardSelector=") else {
        return;
    };
    let mut uids = std::collections::BTreeMap::new();
    for i in 0..12 {
        let cm = server
            .create_object(json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": format!("cm-{i:02}"), "namespace": "default"}}))
            .unwrap();
        uids.insert(
            cm["metadata"]["name"].as_str().unwrap().to_owned(),
            cm["metadata"]["uid"].as_str().unwrap().to_owned(),
        );
    }
    let selector = "shardRange(object.metadata.uid, '0x8000000000000000', '0x10000000000000000')";
    let escaped = "shardRange%28object.metadata.uid%2C%20%270x8000000000000000%27%2C%20%270x10000000000000000%27%29";
    let list: Value = serde_json::from_str(
        &k.run(&[
            "get",
            "--raw",
            &format!("/api/v1/namespaces/default/configmaps?shardSelector={escaped}"),
        ])
        .await,
    )
    .unwrap();
    assert_eq!(list["metadata"]["shardInfo"]["selector"], selector);
    let got: Vec<&str> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["metadata"]["name"].as_str().unwrap())
        .filter(|n| n.starts_with("cm-"))
        .collect();
    let want: Vec<&str> = uids
        .iter()
        .filter(|(_, uid)| kinform_core::shard::fnv1a64(uid.bytes()) >= 1 << 63)
        .map(|(n, _)| n.as_str())
        .collect();
    assert_eq!(got, want);

    let err = fails(
        &k,
        &[
            "get",
            "--raw",
            "/api/v1/namespaces/default/configmaps?shardSelector=shardRange%28object.metadata.name%2C%20%270x0000000000000000%27%2C%20%270x8000000000000000%27%29",
        ],
    )
    .await;
    assert!(
        err.contains("invalid shard selector: field \"object.metadata.name\" cannot be sharded on"),
        "{err}"
    );
}
