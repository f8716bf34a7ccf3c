//! The three webhooks over HTTPS (HTTP/2, as kube-apiserver calls them).

use std::time::Duration;

use base64::Engine as _;
use kinform::webhook::WebhookServer;
use kinform_webhook::testing::{HttpVersion, TestCa, TestClient, TestConnection};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use webhook_operator::webhooks::webhooks;

const VALIDATE: &str = "/validate-messaging-example-com-v2-queue";
const MUTATE: &str = "/mutate-messaging-example-com-v2-queue";
const CONVERT: &str = "/convert/queues.messaging.example.com";

struct Served {
    _dir: tempfile::TempDir,
    conn: TestConnection,
    stop: CancellationToken,
}

impl Drop for Served {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

async fn serve() -> Served {
    let dir = tempfile::tempdir().unwrap();
    let ca = TestCa::new().unwrap();
    let (cert, key) = (dir.path().join("tls.crt"), dir.path().join("tls.key"));
    ca.issue(&["webhook-operator.webhook-operator-system.svc"])
        .unwrap()
        .write(&cert, &key)
        .unwrap();
    let server = WebhookServer::builder(webhooks())
        .tls_files(&cert, &key)
        .request_timeout(Duration::from_secs(5))
        .bind(([127, 0, 0, 1], 0).into())
        .await
        .unwrap();
    let client = TestClient::new(
        server.local_addr(),
        "webhook-operator.webhook-operator-system.svc",
        ca.ca_pem(),
        HttpVersion::Http2,
    )
    .unwrap();
    let stop = CancellationToken::new();
    tokio::spawn(server.serve_until(stop.clone()));
    Served {
        _dir: dir,
        conn: client.connect().await.unwrap(),
        stop,
    }
}

fn queue(capacity: i64, extra: Value) -> Value {
    let mut q = json!({
        "apiVersion": "messaging.example.com/v2",
        "kind": "Queue",
        "metadata": {"name": "orders", "namespace": "shop", "uid": "q-uid"},
        "spec": {"capacity": capacity}
    });
    if let Value::Object(extra) = extra {
        for (k, v) in extra {
            q["spec"][k] = v;
        }
    }
    q
}

fn admission(operation: &str, object: Option<Value>, old: Option<Value>) -> Value {
    json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "req-1",
            "kind": {"group": "messaging.example.com", "version": "v2", "kind": "Queue"},
            "resource": {"group": "messaging.example.com", "version": "v2", "resource": "queues"},
            "requestKind": {"group": "messaging.example.com", "version": "v1", "kind": "Queue"},
            "namespace": "shop",
            "name": "orders",
            "operation": operation,
            "userInfo": {"username": "kubernetes-admin"},
            "object": object,
            "oldObject": old,
        }
    })
}

async fn post(served: &mut Served, path: &str, review: &Value) -> Value {
    let answer = served
        .conn
        .post(path, serde_json::to_vec(review).unwrap())
        .await
        .unwrap();
    assert_eq!(answer.status, 200, "{:?}", answer.body);
    let body = answer.json();
    assert_eq!(body["response"]["uid"], review["request"]["uid"]);
    body["response"].clone()
}

#[tokio::test]
async fn the_validator_refuses_what_the_schema_cannot() {
    let mut s = serve().await;
    let ok = post(
        &mut s,
        VALIDATE,
        &admission("CREATE", Some(queue(10, json!({}))), None),
    )
    .await;
    assert_eq!(ok["allowed"], true);

    let zero = post(
        &mut s,
        VALIDATE,
        &admission("CREATE", Some(queue(0, json!({}))), None),
    )
    .await;
    assert_eq!(zero["allowed"], false);
    assert_eq!(zero["status"]["code"], 422);
    assert_eq!(
        zero["status"]["message"],
        "spec.capacity must be between 1 and 10000, not 0"
    );

    let shrink = admission(
        "UPDATE",
        Some(queue(5, json!({}))),
        Some(queue(10, json!({}))),
    );
    let shrink = post(&mut s, VALIDATE, &shrink).await;
    assert_eq!(shrink["allowed"], false);
    assert!(
        shrink["status"]["message"]
            .as_str()
            .unwrap()
            .contains("cannot shrink (from 10 to 5)")
    );

    let long = queue(10, json!({"retentionSeconds": 90 * 86_400}));
    let long = post(&mut s, VALIDATE, &admission("CREATE", Some(long), None)).await;
    assert_eq!(long["allowed"], true);
    assert_eq!(
        long["warnings"],
        json!(["spec.retentionSeconds over 30 days keeps every message that long"])
    );

    let mut protected = queue(10, json!({}));
    protected["metadata"]["labels"] = json!({"messaging.example.com/protected": "true"});
    let delete = post(
        &mut s,
        VALIDATE,
        &admission("DELETE", None, Some(protected)),
    )
    .await;
    assert_eq!(delete["allowed"], false);
    assert_eq!(delete["status"]["code"], 403);
    assert_eq!(
        delete["status"]["message"],
        "queue orders is protected: remove the label messaging.example.com/protected first"
    );
    let delete = post(
        &mut s,
        VALIDATE,
        &admission("DELETE", None, Some(queue(10, json!({})))),
    )
    .await;
    assert_eq!(delete["allowed"], true);
}

fn apply_patch(object: &Value, response: &Value) -> Value {
    assert_eq!(response["patchType"], "JSONPatch");
    let patch = base64::engine::general_purpose::STANDARD
        .decode(response["patch"].as_str().unwrap())
        .unwrap();
    let patch: json_patch::Patch = serde_json::from_slice(&patch).unwrap();
    let mut patched = object.clone();
    json_patch::patch(&mut patched, &patch).unwrap();
    patched
}

#[tokio::test]
async fn the_defaulter_fills_priority_and_retention() {
    let mut s = serve().await;
    let sent = queue(10, json!({}));
    let response = post(
        &mut s,
        MUTATE,
        &admission("CREATE", Some(sent.clone()), None),
    )
    .await;
    assert_eq!(response["allowed"], true);
    let patched = apply_patch(&sent, &response);
    assert_eq!(
        patched["spec"],
        json!({"capacity": 10, "priority": "normal", "retentionSeconds": 86400})
    );
    assert_eq!(patched["metadata"], sent["metadata"]);

    // What is set stays; nothing to patch.
    let set = queue(10, json!({"priority": "high", "retentionSeconds": 120}));
    let response = post(&mut s, MUTATE, &admission("CREATE", Some(set), None)).await;
    assert!(response.get("patch").is_none(), "{response}");
}

fn conversion(desired: &str, objects: Vec<Value>) -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "ConversionReview",
        "request": {"uid": "conv-1", "desiredAPIVersion": desired, "objects": objects}
    })
}

/// v2 → v1 → v2 gives back the v2 object: what v1 cannot hold rides in annotations.
#[tokio::test]
async fn conversion_round_trips_through_annotations() {
    let mut s = serve().await;
    let mut stored = queue(10, json!({"priority": "high", "retentionSeconds": 5400}));
    stored["metadata"]["resourceVersion"] = json!("42");
    stored["metadata"]["annotations"] = json!({"team": "payments"});

    let response = post(
        &mut s,
        CONVERT,
        &conversion("messaging.example.com/v1", vec![stored.clone()]),
    )
    .await;
    assert_eq!(response["result"]["status"], "Success");
    let as_v1 = response["convertedObjects"][0].clone();
    assert_eq!(as_v1["apiVersion"], "messaging.example.com/v1");
    assert_eq!(as_v1["spec"], json!({"size": 10, "retentionHours": 1}));
    assert_eq!(
        as_v1["metadata"]["annotations"],
        json!({
            "team": "payments",
            "messaging.example.com/priority": "high",
            "messaging.example.com/retention-seconds": "5400"
        })
    );
    assert_eq!(as_v1["metadata"]["resourceVersion"], "42");

    let response = post(
        &mut s,
        CONVERT,
        &conversion("messaging.example.com/v2", vec![as_v1]),
    )
    .await;
    assert_eq!(response["result"]["status"], "Success");
    assert_eq!(response["convertedObjects"][0], stored);

    // A v1 writer changing the hours means the new value.
    let v1_object = json!({
        "apiVersion": "messaging.example.com/v1", "kind": "Queue",
        "metadata": {"name": "a", "namespace": "shop", "annotations": {"messaging.example.com/retention-seconds": "5400"}},
        "spec": {"size": 3, "retentionHours": 3}
    });
    let response = post(
        &mut s,
        CONVERT,
        &conversion("messaging.example.com/v2", vec![v1_object]),
    )
    .await;
    let converted = &response["convertedObjects"][0];
    assert_eq!(
        converted["spec"],
        json!({"capacity": 3, "retentionSeconds": 10800})
    );
    assert!(
        converted["metadata"].get("annotations").is_none(),
        "{converted}"
    );
}

/// A list of both versions converts item by item; one broken item fails the review.
#[tokio::test]
async fn a_list_converts_whole_or_not_at_all() {
    let mut s = serve().await;
    let v1_object = json!({
        "apiVersion": "messaging.example.com/v1", "kind": "Queue",
        "metadata": {"name": "a", "namespace": "shop"}, "spec": {"size": 3}
    });
    let objects = vec![v1_object.clone(), queue(7, json!({}))];
    let response = post(
        &mut s,
        CONVERT,
        &conversion("messaging.example.com/v2", objects),
    )
    .await;
    let converted = response["convertedObjects"].as_array().unwrap();
    assert_eq!(converted.len(), 2);
    assert_eq!(converted[0]["spec"], json!({"capacity": 3}));
    assert_eq!(converted[1], queue(7, json!({})));

    let mut broken = v1_object;
    broken["spec"]["size"] = json!("three");
    let response = post(
        &mut s,
        CONVERT,
        &conversion(
            "messaging.example.com/v2",
            vec![queue(7, json!({})), broken],
        ),
    )
    .await;
    assert_eq!(response["result"]["status"], "Failure");
    assert!(
        response["result"]["message"]
            .as_str()
            .unwrap()
            .contains("shop/a is not a valid messaging.example.com/v1 Queue")
    );
    assert_eq!(response["convertedObjects"], json!([]));
}
