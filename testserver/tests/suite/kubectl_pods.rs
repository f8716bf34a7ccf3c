//! Acceptance: the pod subresources that stand in for the kubelet and the scheduler, driven
//! by kubectl where it has a command for them (`logs`, `drain`, `debug`) and by raw HTTP
//! for the exact `Status` answers: `pods/log`, `pods/eviction`, `pods/binding` (and the
//! `bindings` collection), `pods/ephemeralcontainers`. The kubectl parts run only when
//! `kubectl` is on the PATH (otherwise they pass after saying they were skipped).

use kinform_tests::http::Raw;
use kinform_tests::kubectl::Kubectl;
use kinform_testserver::TestApiServer;
use serde_json::{Value, json};

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn pod(name: &str, containers: &[&str], extra: Value) -> Value {
    let containers: Vec<Value> = containers
        .iter()
        .map(|c| json!({"name": c, "image": "busybox"}))
        .collect();
    let mut p = json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": "web"}},
        "spec": {"containers": containers},
    });
    if let (Some(spec), Some(extra)) = (p["spec"].as_object_mut(), extra.as_object()) {
        spec.extend(extra.clone());
    }
    p
}

/// kube-apiserver's LogREST and the kubelet's log endpoint: an unscheduled pod has no
/// kubelet to ask (204, an empty log), a bound pod whose container has not started is the
/// kubelet's 400 `container "app" in pod "bound" is waiting to start: ContainerCreating`, a
/// missing pod is 404, a pod with several containers needs `container`, and logs a test
/// registers are served with `--tail`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_logs_follows_kube_apiserver_and_the_kubelet() {
    let server = TestApiServer::start().await.unwrap();
    server
        .create_object(pod("pending", &["app"], json!({})))
        .unwrap();
    server
        .create_object(pod("bound", &["app"], json!({"nodeName": "n1"})))
        .unwrap();
    server
        .create_object(pod("two", &["a", "b"], json!({"nodeName": "n1"})))
        .unwrap();
    server.set_pod_log("default", "two", "b", "one\ntwo\nthree\n");

    let raw = Raw::new(&server.url());
    let r = raw.get("/api/v1/namespaces/default/pods/pending/log").await;
    assert_eq!(r.status, 204);
    let r = raw.get("/api/v1/namespaces/default/pods/bound/log").await;
    assert_eq!(
        (r.status, r.body["reason"].as_str()),
        (400, Some("BadRequest"))
    );
    assert_eq!(
        r.body["message"],
        "container \"app\" in pod \"bound\" is waiting to start: ContainerCreating"
    );
    let r = raw.get("/api/v1/namespaces/default/pods/absent/log").await;
    assert_eq!(
        (r.status, r.body["message"].as_str()),
        (404, Some("pods \"absent\" not found"))
    );
    let r = raw.get("/api/v1/namespaces/default/pods/two/log").await;
    assert_eq!(
        r.body["message"],
        "a container name must be specified for pod two, choose one of: [a b]"
    );
    let r = raw
        .get("/api/v1/namespaces/default/pods/two/log?container=zz")
        .await;
    assert_eq!(r.body["message"], "container zz is not valid for pod two");
    let r = raw
        .get("/api/v1/namespaces/default/pods/two/log?container=b&tailLines=-2")
        .await;
    assert_eq!(
        (r.status, r.body["details"]["kind"].as_str()),
        (422, Some("PodLogOptions"))
    );
    let r = raw
        .request("POST", "/api/v1/namespaces/default/pods/two/log", None)
        .await;
    assert_eq!(r.status, 405);

    let Some(k) = Kubectl::for_server(&server, "the kubectl logs acceptance test") else {
        return;
    };
    let out = k.output(&["logs", "pending"], None).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "");
    let out = k.output(&["logs", "bound"], None).await;
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains(
            "Error from server (BadRequest): container \"app\" in pod \"bound\" is waiting to start: ContainerCreating"
        ),
        "{}",
        text(&out.stderr)
    );
    // kubectl reads the pod first: the 404 it reports is the pod's GET.
    let out = k.output(&["logs", "absent"], None).await;
    assert!(
        text(&out.stderr).contains("(NotFound): pods \"absent\" not found"),
        "{}",
        text(&out.stderr)
    );
    let out = k
        .output(&["logs", "two", "-c", "b", "--tail=2"], None)
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "two\nthree\n");
}

/// Whether the pod `default/name` exists.
async fn exists(raw: &Raw, name: &str) -> bool {
    raw.get(&format!("/api/v1/namespaces/default/pods/{name}"))
        .await
        .status
        == 200
}

/// Marks a pod Running and Ready, as a kubelet would (no kubelet runs here).
async fn run_pod(raw: &Raw, name: &str) {
    let r = raw
        .patch(
            &format!("/api/v1/namespaces/default/pods/{name}/status"),
            "application/merge-patch+json",
            &json!({"status": {"phase": "Running",
                               "conditions": [{"type": "Ready", "status": "True"}]}}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
}

fn eviction(name: &str) -> Value {
    json!({"apiVersion": "policy/v1", "kind": "Eviction",
           "metadata": {"name": name, "namespace": "default"}})
}

fn pdb(name: &str, spec: Value) -> Value {
    let mut spec = spec;
    spec["selector"] = json!({"matchLabels": {"app": "web"}});
    json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
           "metadata": {"name": name, "namespace": "default"}, "spec": spec})
}

/// kube-apiserver's EvictionREST: a Running pod a PodDisruptionBudget protects is not
/// deleted while the budget allows no disruption (429 TooManyRequests with a
/// DisruptionBudget cause); `kubectl drain` keeps retrying until its timeout, and drains the
/// node once the budget is gone. The budget's status is computed as the disruption
/// controller would (no status was written).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eviction_honours_disruption_budgets_and_kubectl_drain_waits_for_them() {
    let server = TestApiServer::start().await.unwrap();
    let raw = Raw::new(&server.url());
    server
        .create_object(json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}))
        .unwrap();
    for name in ["web-1", "web-2"] {
        server
            .create_object(pod(name, &["app"], json!({"nodeName": "n1"})))
            .unwrap();
        run_pod(&raw, name).await;
    }
    server
        .create_object(pdb("web-pdb", json!({"minAvailable": 2})))
        .unwrap();

    let evict = |name: &str| format!("/api/v1/namespaces/default/pods/{name}/eviction");
    let r = raw.post(&evict("web-1"), &eviction("web-1")).await;
    assert_eq!(
        (r.status, r.body["reason"].as_str()),
        (429, Some("TooManyRequests"))
    );
    assert_eq!(
        r.body["message"],
        "Cannot evict pod as it would violate the pod's disruption budget."
    );
    assert_eq!(
        r.body["details"]["causes"],
        json!([{"reason": "DisruptionBudget",
                "message": "The disruption budget web-pdb needs 2 healthy pods and has 2 currently"}])
    );
    assert!(exists(&raw, "web-1").await);

    // A pod no budget selects, on another node.
    let mut lone = pod("lone", &["app"], json!({"nodeName": "n2"}));
    lone["metadata"]["labels"] = json!({"app": "other"});
    server.create_object(lone).unwrap();
    run_pod(&raw, "lone").await;
    let r = raw.post(&evict("absent"), &eviction("absent")).await;
    assert_eq!(
        (r.status, r.body["message"].as_str()),
        (404, Some("pods \"absent\" not found"))
    );

    let Some(k) = Kubectl::for_server(&server, "the kubectl drain acceptance test") else {
        return;
    };
    let args = [
        "drain",
        "n1",
        "--ignore-daemonsets",
        "--delete-emptydir-data",
        "--force",
    ];
    let blocked: Vec<&str> = args.iter().copied().chain(["--timeout=3s"]).collect();
    let out = k.output(&blocked, None).await;
    assert!(!out.status.success(), "drain must not pass the budget");
    assert!(
        text(&out.stderr)
            .contains("Cannot evict pod as it would violate the pod's disruption budget."),
        "{}",
        text(&out.stderr)
    );
    assert!(
        exists(&raw, "web-1").await && exists(&raw, "web-2").await,
        "{}\n{}\n{:#?}",
        text(&out.stdout),
        text(&out.stderr),
        server.requests()
    );

    k.run(&["delete", "pdb", "web-pdb"]).await;
    let free: Vec<&str> = args.iter().copied().chain(["--timeout=30s"]).collect();
    let out = k.output(&free, None).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("node/n1 drained"),
        "{}",
        text(&out.stdout)
    );
    assert!(!exists(&raw, "web-1").await);
    assert!(!exists(&raw, "web-2").await);
    assert!(exists(&raw, "lone").await);
}

/// The eviction handler's other answers: a status written for the budget's generation is
/// taken as it is and decremented, with the pod recorded in `disruptedPods`; a Pending pod
/// ignores budgets (`canIgnorePDB`); two budgets are a 500; the body must be an Eviction of
/// the URL's pod.
#[tokio::test]
async fn eviction_uses_a_written_budget_status_and_refuses_what_kube_apiserver_refuses() {
    let server = TestApiServer::start().await.unwrap();
    let raw = Raw::new(&server.url());
    for name in ["a", "b"] {
        server
            .create_object(pod(name, &["app"], json!({})))
            .unwrap();
        run_pod(&raw, name).await;
    }
    server
        .create_object(pod("pending", &["app"], json!({})))
        .unwrap();
    let created = raw
        .post(
            "/apis/policy/v1/namespaces/default/poddisruptionbudgets",
            &pdb("budget", json!({"maxUnavailable": 0})),
        )
        .await;
    assert_eq!(created.status, 201);
    let generation = created.body["metadata"]["generation"].as_i64().unwrap_or(0);
    let r = raw
        .patch(
            "/apis/policy/v1/namespaces/default/poddisruptionbudgets/budget/status",
            "application/merge-patch+json",
            &json!({"status": {"observedGeneration": generation, "disruptionsAllowed": 1,
                               "desiredHealthy": 1, "currentHealthy": 2, "expectedPods": 2}}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let evict = |name: &str| format!("/api/v1/namespaces/default/pods/{name}/eviction");

    let r = raw.post(&evict("pending"), &eviction("pending")).await;
    assert_eq!(
        (r.status, r.body["status"].as_str()),
        (201, Some("Success"))
    );
    let r = raw.post(&evict("a"), &eviction("a")).await;
    assert_eq!((r.status, r.body["code"].as_i64()), (201, Some(201)));
    let budget = raw
        .get("/apis/policy/v1/namespaces/default/poddisruptionbudgets/budget")
        .await;
    assert_eq!(budget.body["status"]["disruptionsAllowed"], 0);
    assert!(budget.body["status"]["disruptedPods"]["a"].is_string());
    let r = raw.post(&evict("b"), &eviction("b")).await;
    assert_eq!(r.status, 429);
    assert_eq!(
        r.body["details"]["causes"][0]["message"],
        "The disruption budget budget needs 1 healthy pods and has 2 currently"
    );

    server
        .create_object(pdb("second", json!({"minAvailable": 0})))
        .unwrap();
    let r = raw.post(&evict("b"), &eviction("b")).await;
    assert_eq!(r.status, 500);
    assert_eq!(
        r.body["message"],
        "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."
    );

    let r = raw.post(&evict("b"), &eviction("other")).await;
    assert_eq!(
        (r.status, r.body["message"].as_str()),
        (
            400,
            Some("name in URL does not match name in Eviction object")
        )
    );
    let r = raw.get(&evict("b")).await;
    assert_eq!(r.status, 405);
}

/// kube-apiserver's BindingREST, as a custom scheduler uses it: a Binding sets
/// `spec.nodeName` and the `PodScheduled` condition of an unbound pod (201 Success), through
/// `pods/{name}/binding` or the `bindings` collection; a bound pod is 409 Conflict on
/// `pods/binding`; `kubectl create --raw` posts one as a user would.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bindings_assign_pods_to_nodes_once() {
    let server = TestApiServer::start().await.unwrap();
    let raw = Raw::new(&server.url());
    for name in ["a", "b", "c"] {
        server
            .create_object(pod(name, &["app"], json!({})))
            .unwrap();
    }
    let binding = |pod: &str, node: &str| {
        json!({"apiVersion": "v1", "kind": "Binding",
               "metadata": {"name": pod, "annotations": {"scheduler": "mine"}},
               "target": {"apiVersion": "v1", "kind": "Node", "name": node}})
    };
    let r = raw
        .post(
            "/api/v1/namespaces/default/pods/a/binding",
            &binding("a", "n1"),
        )
        .await;
    assert_eq!(
        (r.status, r.body["status"].as_str()),
        (201, Some("Success")),
        "{}",
        r.body
    );
    let a = raw.get("/api/v1/namespaces/default/pods/a").await.body;
    assert_eq!(a["spec"]["nodeName"], "n1");
    assert_eq!(a["metadata"]["annotations"]["scheduler"], "mine");
    let scheduled = a["status"]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "PodScheduled")
        .cloned()
        .unwrap();
    assert_eq!(scheduled["status"], "True");

    let r = raw
        .post(
            "/api/v1/namespaces/default/pods/a/binding",
            &binding("a", "n2"),
        )
        .await;
    assert_eq!(
        (r.status, r.body["reason"].as_str()),
        (409, Some("Conflict"))
    );
    assert_eq!(
        r.body["message"],
        "Operation cannot be fulfilled on pods/binding \"a\": pod a is already assigned to node \"n1\""
    );
    let r = raw
        .post("/api/v1/namespaces/default/bindings", &binding("b", "n2"))
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    let b = raw.get("/api/v1/namespaces/default/pods/b").await.body;
    assert_eq!(b["spec"]["nodeName"], "n2");
    let r = raw
        .post(
            "/api/v1/namespaces/default/pods/c/binding",
            &binding("b", "n2"),
        )
        .await;
    assert_eq!(
        (r.status, r.body["message"].as_str()),
        (
            400,
            Some("name in URL does not match name in Binding object")
        )
    );
    let r = raw
        .post(
            "/api/v1/namespaces/default/pods/absent/binding",
            &binding("absent", "n2"),
        )
        .await;
    assert_eq!(r.status, 404);
    let r = raw
        .post(
            "/api/v1/namespaces/default/pods/c/binding",
            &json!({"metadata": {"name": "c"}}),
        )
        .await;
    assert_eq!(
        (r.status, r.body["message"].as_str()),
        (500, Some("target.name: Required value"))
    );
    let r = raw
        .post(
            "/api/v1/namespaces/default/pods/c/binding?dryRun=All",
            &binding("c", "n3"),
        )
        .await;
    assert_eq!(r.status, 201);
    let c = raw.get("/api/v1/namespaces/default/pods/c").await.body;
    assert!(c["spec"]["nodeName"].is_null(), "a dry run binds nothing");

    let Some(k) = Kubectl::for_server(&server, "the kubectl binding acceptance test") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("binding.json");
    std::fs::write(&file, binding("c", "n3").to_string()).unwrap();
    let out = k
        .output(
            &[
                "create",
                "--raw",
                "/api/v1/namespaces/default/pods/c/binding",
                "-f",
                file.to_str().unwrap(),
            ],
            None,
        )
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let node = k
        .run(&["get", "pod", "c", "-o", "jsonpath={.spec.nodeName}"])
        .await;
    assert_eq!(node, "n3");
}

/// kube-apiserver's EphemeralContainersREST: `kubectl debug` adds an ephemeral container by
/// a strategic merge patch on `pods/ephemeralcontainers`; only `spec.ephemeralContainers`
/// changes there, and an existing ephemeral container may not be removed or changed (422
/// Invalid, Forbidden).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_debug_adds_an_ephemeral_container() {
    let server = TestApiServer::start().await.unwrap();
    let raw = Raw::new(&server.url());
    server
        .create_object(pod("web", &["app"], json!({"nodeName": "n1"})))
        .unwrap();
    let sub = "/api/v1/namespaces/default/pods/web/ephemeralcontainers";

    // Other changes written through the subresource are dropped.
    let r = raw
        .patch(
            sub,
            "application/strategic-merge-patch+json",
            &json!({"metadata": {"labels": {"changed": "yes"}},
                    "spec": {"ephemeralContainers": [{"name": "dbg", "image": "busybox"}]}}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["spec"]["ephemeralContainers"][0]["name"], "dbg");
    assert!(r.body["metadata"]["labels"]["changed"].is_null());

    let mut pod_now = raw.get(sub).await.body;
    assert_eq!(pod_now["kind"], "Pod");
    pod_now["spec"]["ephemeralContainers"] = json!([]);
    let r = raw.put(sub, &pod_now).await;
    assert_eq!(
        (r.status, r.body["reason"].as_str()),
        (422, Some("Invalid"))
    );
    assert_eq!(
        r.body["message"],
        "Pod \"web\" is invalid: spec.ephemeralContainers: Forbidden: existing ephemeral containers \"dbg\" may not be removed\n"
    );
    let r = raw
        .patch(
            sub,
            "application/json-patch+json",
            &json!([{"op": "replace", "path": "/spec/ephemeralContainers/0/image", "value": "alpine"}]),
        )
        .await;
    assert_eq!(r.status, 422);
    assert_eq!(
        r.body["details"]["causes"][0]["field"],
        "spec.ephemeralContainers[dbg]"
    );

    let Some(k) = Kubectl::for_server(&server, "the kubectl debug acceptance test") else {
        return;
    };
    let out = k
        .output(
            // `-it=false` would be `-i -t=false` to pflag, and `-i` attaches, waiting for a
            // container no kubelet starts here: no attach, stdin or TTY.
            &[
                "debug",
                "--attach=false",
                "--stdin=false",
                "--tty=false",
                "--image=busybox",
                "--container=debugger",
                "pod/web",
            ],
            None,
        )
        .await;
    assert!(
        out.status.success(),
        "{}\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    let names = k
        .run(&[
            "get",
            "pod",
            "web",
            "-o",
            "jsonpath={.spec.ephemeralContainers[*].name}",
        ])
        .await;
    assert_eq!(names, "dbg debugger");
    let image = k
        .run(&[
            "get",
            "pod",
            "web",
            "-o",
            "jsonpath={.spec.ephemeralContainers[1].image}",
        ])
        .await;
    assert_eq!(image, "busybox");
}

/// Hostile bodies and queries on every pod subresource served here get a `Status`
/// failure (never a panic, a hang or a success), and the server keeps answering. (Each body
/// is broken for every path: the ones an eviction would read carry a malformed
/// `deleteOptions`.)
#[tokio::test]
async fn garbage_on_the_pod_subresources_is_a_clear_status() {
    let server = TestApiServer::start().await.unwrap();
    let raw = Raw::new(&server.url());
    server
        .create_object(pod("web", &["app"], json!({"nodeName": "n1"})))
        .unwrap();
    let base = "/api/v1/namespaces/default/pods/web";
    let deep = format!("{}{}", "[".repeat(5000), "]".repeat(5000));
    let bodies: Vec<Vec<u8>> = vec![
        b"".to_vec(),
        b"not json".to_vec(),
        b"\xff\xfe\x00garbage".to_vec(),
        b"[1,2,3]".to_vec(),
        b"\"a string\"".to_vec(),
        b"null".to_vec(),
        deep.into_bytes(),
        br#"{"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "web"}}"#.to_vec(),
        br#"{"kind": 7, "metadata": "web"}"#.to_vec(),
        br#"{"metadata": {"name": "web"}, "deleteOptions": "now", "target": 5, "spec": 5}"#.to_vec(),
        br#"{"metadata": {"name": "web"}, "deleteOptions": 1, "target": {"name": ["n1"], "kind": {}}, "spec": []}"#.to_vec(),
        br#"{"metadata": {"name": "web"}, "deleteOptions": [], "spec": {"ephemeralContainers": "x"}}"#.to_vec(),
        br#"{"metadata": {"name": "web"}, "deleteOptions": "x", "spec": {"ephemeralContainers": [1, null, "y"]}}"#.to_vec(),
        br#"{"metadata": {"name": "web", "resourceVersion": "not-a-number"}, "deleteOptions": true, "spec": {"containers": 3}}"#.to_vec(),
    ];
    let targets = [
        ("POST", format!("{base}/eviction"), "application/json"),
        ("POST", format!("{base}/binding"), "application/json"),
        (
            "POST",
            "/api/v1/namespaces/default/bindings".to_owned(),
            "application/json",
        ),
        (
            "PUT",
            format!("{base}/ephemeralcontainers"),
            "application/json",
        ),
        (
            "PATCH",
            format!("{base}/ephemeralcontainers"),
            "application/strategic-merge-patch+json",
        ),
        (
            "PATCH",
            format!("{base}/ephemeralcontainers"),
            "application/json-patch+json",
        ),
        (
            "PATCH",
            format!("{base}/ephemeralcontainers"),
            "application/merge-patch+json",
        ),
        (
            "PATCH",
            format!("{base}/ephemeralcontainers"),
            "application/apply-patch+yaml",
        ),
    ];
    for (method, path, ct) in &targets {
        for body in &bodies {
            let r = raw.request_bytes(method, path, body.clone(), ct).await;
            let shown = String::from_utf8_lossy(&body[..body.len().min(80)]).into_owned();
            // A patch that decodes to nothing (`null` as a strategic merge patch, as Go
            // reads it into a nil map) is a no-op, answered with the unchanged Pod.
            let no_op = *method == "PATCH"
                && r.status == 200
                && r.body["kind"] == "Pod"
                && r.body["spec"]["ephemeralContainers"].is_null();
            assert!(
                no_op || ((400..=500).contains(&r.status) && r.body["kind"] == "Status"),
                "{method} {path} ({ct}) with {shown:?}: {} {}",
                r.status,
                r.body
            );
        }
    }
    for query in [
        "tailLines=abc",
        "limitBytes=-5",
        "sinceSeconds=99999999999999999999",
        "sinceTime=%00",
        "container=%ff%fe",
        "previous=maybe&container=app&tailLines=1",
    ] {
        let r = raw.get(&format!("{base}/log?{query}")).await;
        assert!(
            (r.status >= 400 || r.status == 200) && r.status != 500,
            "log?{query}: {} {}",
            r.status,
            r.body
        );
        if r.status >= 400 {
            assert_eq!(r.body["kind"], "Status", "log?{query}");
        }
    }
    let pod_now = raw.get(base).await;
    assert_eq!(pod_now.status, 200);
    assert!(pod_now.body["spec"]["ephemeralContainers"].is_null());
}
