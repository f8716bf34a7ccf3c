//! Acceptance: kubectl's `create` commands send built-in kinds as
//! `application/vnd.kubernetes.protobuf`; TestApiServer decodes them as kube-apiserver does and
//! stores the same objects their JSON would have made. Runs the kubectl parts only when
//! `kubectl` is on the PATH (otherwise they pass after saying they were skipped, or fail
//! under `KINFORM_CONFORMANCE=require`, as in CI).

use base64::Engine as _;
use kinform_tests::http::Raw;
use kinform_tests::kubectl::Kubectl;
use kinform_testserver::TestApiServer;
use serde_json::json;

const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";

/// The body kubectl v1.32 sent for `kubectl create deployment d --image=nginx:1.27
/// --replicas=2` (captured from the wire): `k8s\0` + `runtime.Unknown` + `apps/v1.Deployment`.
const KUBECTL_DEPLOYMENT: &str = "6b3873000a150a07617070732f7631120a4465706c6f796d656e7412a8010a1b0a016412001a0022002a003200380042005a080a03617070120164127b0802120a0a080a036170701201641a630a1a0a0012001a0022002a003200380042005a080a03617070120164124512270a056e67696e78120a6e67696e783a312e32372a0042006a007200800100880100900100a201001a00320042004a0052005800600068008201008a01009a0100c2010022020a00280038001a0c0800100018002000280038001a002200";

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// A length-delimited protobuf field (`tag` = field number << 3 | 2), for bodies short
/// enough to write by hand.
fn field(number: u8, bytes: &[u8]) -> Vec<u8> {
    let mut out = vec![(number << 3) | 2, u8::try_from(bytes.len()).unwrap()];
    out.extend(bytes);
    out
}

/// `k8s\0` + `runtime.Unknown{typeMeta{apiVersion, kind}, raw}`.
fn envelope(api_version: &str, kind: &str, raw: &[u8]) -> Vec<u8> {
    let type_meta = [field(1, api_version.as_bytes()), field(2, kind.as_bytes())].concat();
    [b"k8s\0".to_vec(), field(1, &type_meta), field(2, raw)].concat()
}

/// kube-apiserver accepts protobuf bodies of built-in kinds on create, so kubectl's typed
/// `create` commands work; each stored object is the one the JSON body would have made.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_create_commands_send_protobuf_and_are_stored() {
    let server = TestApiServer::start().await.unwrap();
    let Some(k) = Kubectl::for_server(&server, "the kubectl protobuf test") else {
        return;
    };
    let raw = Raw::new(&server.url());

    // kubectl really sends protobuf (and accepts a JSON answer).
    let out = k.output(&["create", "namespace", "x", "-v=9"], None).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!("Content-Type: {PROTOBUF}")),
        "kubectl did not send protobuf:\n{stderr}"
    );
    let ns = raw.get("/api/v1/namespaces/x").await;
    assert_eq!(ns.status, 200);
    assert_eq!(ns.body["metadata"]["name"], "x");
    assert_eq!(ns.body["status"]["phase"], "Active");
    assert!(ns.body["metadata"]["uid"].is_string());

    k.run(&["create", "configmap", "c", "--from-literal=a=b"])
        .await;
    let cm = raw.get("/api/v1/namespaces/default/configmaps/c").await;
    assert_eq!(cm.status, 200);
    assert_eq!(cm.body["data"], json!({"a": "b"}));
    assert!(cm.body.get("binaryData").is_none());

    k.run(&["create", "secret", "generic", "s", "--from-literal=p=q"])
        .await;
    let secret = raw.get("/api/v1/namespaces/default/secrets/s").await;
    assert_eq!(secret.status, 200);
    let p = base64::engine::general_purpose::STANDARD
        .decode(secret.body["data"]["p"].as_str().unwrap())
        .unwrap();
    assert_eq!(p, b"q");
    assert_eq!(secret.body["type"], "Opaque");

    k.run(&[
        "create",
        "deployment",
        "d",
        "--image=nginx:1.27",
        "--replicas=2",
    ])
    .await;
    let d = raw
        .get("/apis/apps/v1/namespaces/default/deployments/d")
        .await;
    assert_eq!(d.status, 200);
    assert_eq!(d.body["spec"]["replicas"], 2);
    assert_eq!(
        d.body["spec"]["selector"]["matchLabels"],
        json!({"app": "d"})
    );
    let template = &d.body["spec"]["template"];
    assert_eq!(template["metadata"]["labels"], json!({"app": "d"}));
    assert_eq!(template["spec"]["containers"][0]["name"], "nginx");
    assert_eq!(template["spec"]["containers"][0]["image"], "nginx:1.27");
    assert_eq!(d.body["spec"]["strategy"]["type"], "RollingUpdate");
    assert_eq!(d.body["metadata"]["generation"], 1);

    k.run(&["create", "service", "clusterip", "svc", "--tcp=80:8080"])
        .await;
    let svc = raw.get("/api/v1/namespaces/default/services/svc").await;
    assert_eq!(svc.status, 200);
    assert_eq!(
        svc.body["spec"]["ports"],
        json!([{"name": "80-8080", "protocol": "TCP", "port": 80, "targetPort": 8080}])
    );
    assert_eq!(svc.body["spec"]["type"], "ClusterIP");
    assert_eq!(svc.body["spec"]["selector"], json!({"app": "svc"}));
    assert!(svc.body["spec"]["clusterIP"].is_string());

    k.run(&["create", "job", "j", "--image=busybox"]).await;
    let job = raw.get("/apis/batch/v1/namespaces/default/jobs/j").await;
    assert_eq!(job.status, 200);
    let pod_spec = &job.body["spec"]["template"]["spec"];
    assert_eq!(pod_spec["containers"][0]["image"], "busybox");
    assert_eq!(pod_spec["containers"][0]["name"], "j");
    assert_eq!(pod_spec["restartPolicy"], "Never");

    // kubectl reads them back as it wrote them.
    let out = k
        .run(&["get", "deployment", "d", "-o", "jsonpath={.spec.replicas}"])
        .await;
    assert_eq!(out, "2");
}

/// Create, update and delete accept a protobuf body (kube-apiserver decodes any registered
/// built-in kind, and `DeleteOptions` under every group version); a PATCH cannot be protobuf (415, as kube-apiserver's patch handler), and a body that
/// is not a protobuf envelope is a 400 `Status`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn protobuf_create_update_and_errors_over_http() {
    let server = TestApiServer::start().await.unwrap();
    let raw = Raw::new(&server.url());
    let path = "/apis/apps/v1/namespaces/default/deployments";
    let body = hex(KUBECTL_DEPLOYMENT);

    let r = raw
        .request_bytes("POST", path, body.clone(), PROTOBUF)
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.headers["content-type"], "application/json");
    assert_eq!(r.body["kind"], "Deployment");
    assert_eq!(r.body["spec"]["replicas"], 2);

    // The same name again: the normal create path answers 409.
    let r = raw
        .request_bytes("POST", path, body.clone(), PROTOBUF)
        .await;
    assert_eq!(r.status, 409, "{}", r.body);

    // Update: scale to 5 with JSON, then PUT kubectl's protobuf object (no resourceVersion,
    // an unconditional update as Deployments allow) puts replicas back to 2.
    let r = raw
        .patch(
            &format!("{path}/d"),
            "application/merge-patch+json",
            &json!({"spec": {"replicas": 5}}),
        )
        .await;
    assert_eq!(r.body["spec"]["replicas"], 5);
    let r = raw
        .request_bytes("PUT", &format!("{path}/d"), body.clone(), PROTOBUF)
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["spec"]["replicas"], 2);
    assert_eq!(r.body["metadata"]["generation"], 3);

    // DELETE with protobuf DeleteOptions (client-go typed clients send them under the
    // resource's group version): dryRun=[All] (field 5) deletes nothing, then a real one does.
    let dry_run = envelope("apps/v1", "DeleteOptions", &field(5, b"All"));
    let r = raw
        .request_bytes("DELETE", &format!("{path}/d"), dry_run, PROTOBUF)
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(raw.get(&format!("{path}/d")).await.status, 200);
    let background = envelope("apps/v1", "DeleteOptions", &field(4, b"Background"));
    let r = raw
        .request_bytes("DELETE", &format!("{path}/d"), background, PROTOBUF)
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(raw.get(&format!("{path}/d")).await.status, 404);
    let r = raw
        .request_bytes("POST", path, body.clone(), PROTOBUF)
        .await;
    assert_eq!(r.status, 201, "{}", r.body);

    let r = raw
        .request_bytes("PATCH", &format!("{path}/d"), body.clone(), PROTOBUF)
        .await;
    assert_eq!(r.status, 415, "{}", r.body);
    assert_eq!(r.body["kind"], "Status");

    let r = raw
        .request_bytes("POST", path, &b"{\"kind\":\"Deployment\"}"[..], PROTOBUF)
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(r.body["kind"], "Status");
    assert_eq!(r.body["reason"], "BadRequest");

    let mut truncated = body.clone();
    truncated.truncate(body.len() / 2);
    let r = raw.request_bytes("POST", path, truncated, PROTOBUF).await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(r.body["kind"], "Status");
}
