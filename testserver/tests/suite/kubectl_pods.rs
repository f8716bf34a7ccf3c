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
    server.create_object(pod("pending", &["app"], json!({}))).unwrap();
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
    assert_eq!((r.status, r.body["reason"].as_str()), (400, Some("BadRequest")));
    assert_eq!(
        r.body["message"],
        "container \"app\" in pod \"bound\" is waiting to start: ContainerCreating"
    );
    let r = raw.get("/api/v1/namespaces/default/pods/absent/log").await;
    assert_eq!((r.status, r.body["message"].as_str()), (404, Some("pods \"absent\" not found")));
    let r = raw.get("/api/v1/namespaces/default/pods/two/log").await;
    assert_eq!(
        r.body["message"],
        "a container name must be specified for pod two, choose one of: [a b]"
    );
    let r = raw.get("/api/v1/namespaces/default/pods/two/log?container=zz").await;
    assert_eq!(r.body["message"], "container zz is not valid for pod two");
    let r = raw.get("/api/v1/namespaces/default/pods/two/log?container=b&tailLines=-2").await;
    assert_eq!((r.status, r.body["details"]["kind"].as_str()), (422, Some("PodLogOptions")));
    let r = raw.request("POST", "/api/v1/namespaces/default/pods/two/log", None).await;
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
    let out = k.output(&["logs", "two", "-c", "b", "--tail=2"], None).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "two\nthree\n");
}
