//! Hostile input never panics: random bodies, random objects inside well-formed reviews,
//! and a burst of random bodies over TLS.

use std::sync::LazyLock;
use std::time::Duration;

use http::StatusCode;
use kinform_webhook::admission::mutator_fn;
use kinform_webhook::conversion::hub;
use kinform_webhook::testing::{HttpVersion, TestCa, TestClient};
use kinform_webhook::{Request, Verdict, WebhookServer, Webhooks};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use serde_json::{Value, json};

use crate::support::{Widget, admission_review, conversion_review, v1, v2};

const PATHS: [&str; 3] = [
    "/mutate-example-com-v1-widget",
    "/convert/gadgets.example.com",
    "/elsewhere",
];

fn webhooks() -> Webhooks {
    Webhooks::new()
        .mutate(mutator_fn(|_: &Request<Widget>, w: &mut Widget| {
            w.spec.size = w.spec.size.saturating_add(1);
            Verdict::allow()
        }))
        .convert(hub::<v2::Gadget>().spoke::<v1::Gadget>())
}

/// One runtime and one description for every case (building them per case would be most
/// of the time the cases take).
static RUNTIME: LazyLock<tokio::runtime::Runtime> = LazyLock::new(|| {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
});
static WEBHOOKS: LazyLock<Webhooks> = LazyLock::new(webhooks);

/// `respond` on the shared runtime.
fn respond(path: &str, body: &[u8]) -> kinform_webhook::Reply {
    RUNTIME.block_on(WEBHOOKS.respond(path, body))
}

/// Any JSON value, a few levels deep.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        ".{0,12}".prop_map(Value::from),
        prop_oneof![
            Just("example.com/v1"),
            Just("example.com/v2"),
            Just("Gadget"),
            Just("Widget"),
            Just("metadata")
        ]
        .prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::from),
            prop::collection::btree_map(
                prop_oneof![
                    Just("apiVersion".to_owned()),
                    Just("kind".to_owned()),
                    Just("metadata".to_owned()),
                    Just("spec".to_owned()),
                    Just("name".to_owned()),
                    Just("size".to_owned()),
                    Just("labels".to_owned()),
                    "[a-z]{1,6}"
                ],
                inner,
                0..6
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    /// Random bytes: 400 (or 404 on an unknown path), never a panic.
    #[test]
    fn random_bodies(body in prop::collection::vec(any::<u8>(), 0..512), path in 0usize..3) {
        let reply = respond(PATHS[path], &body);
        prop_assert!(
            [StatusCode::OK, StatusCode::BAD_REQUEST, StatusCode::NOT_FOUND].contains(&reply.status)
        );
    }

    /// Random objects inside well-formed reviews: always an answer (200) with the uid echoed,
    /// and a mutation's patch that applies to the object sent.
    #[test]
    fn random_objects_in_reviews(object in json_value(), old in json_value(), op in 0usize..4) {
        let operation = ["CREATE", "UPDATE", "DELETE", "CONNECT"][op];
        let review = admission_review(operation, Some(object.clone()), Some(old));
        let reply = respond(PATHS[0], &serde_json::to_vec(&review).unwrap());
        prop_assert_eq!(reply.status, StatusCode::OK);
        let answer: Value = serde_json::from_slice(&reply.body).unwrap();
        prop_assert_eq!(&answer["response"]["uid"], &review["request"]["uid"]);
        if let Some(patch) = answer["response"]["patch"].as_str() {
            use base64::Engine as _;
            let patch = base64::engine::general_purpose::STANDARD.decode(patch).unwrap();
            let patch: json_patch::Patch = serde_json::from_slice(&patch).unwrap();
            let sent: Widget = serde_json::from_value(object.clone()).unwrap();
            let mut patched = object;
            prop_assert!(json_patch::patch(&mut patched, &patch).is_ok());
            let widget: Widget = serde_json::from_value(patched).unwrap();
            prop_assert_eq!(widget.spec.size, sent.spec.size.saturating_add(1));
        }

        let review = conversion_review("example.com/v2", vec![answer, review]);
        let reply = respond(PATHS[1], &serde_json::to_vec(&review).unwrap());
        prop_assert_eq!(reply.status, StatusCode::OK);
    }

    /// Random gadgets: converted (then with the desired version) or the review failed.
    #[test]
    fn random_gadgets(objects in prop::collection::vec(json_value(), 0..4)) {
        let review = conversion_review("example.com/v1", objects.clone());
        let reply = respond(PATHS[1], &serde_json::to_vec(&review).unwrap());
        prop_assert_eq!(reply.status, StatusCode::OK);
        let answer: Value = serde_json::from_slice(&reply.body).unwrap();
        let response = &answer["response"];
        match response["result"]["status"].as_str() {
            Some("Success") => {
                let converted = response["convertedObjects"].as_array().unwrap();
                prop_assert_eq!(converted.len(), objects.len());
                for object in converted {
                    prop_assert_eq!(&object["apiVersion"], &json!("example.com/v1"));
                }
            }
            Some("Failure") => prop_assert!(response["result"]["message"].is_string()),
            other => prop_assert!(false, "result.status {:?}", other),
        }
    }
}

/// Random bodies over one TLS connection: every one answered, the server healthy after.
#[tokio::test]
async fn random_bodies_over_tls() {
    let dir = tempfile::tempdir().unwrap();
    let ca = TestCa::new().unwrap();
    let (cert, key) = (dir.path().join("tls.crt"), dir.path().join("tls.key"));
    ca.issue(&["localhost"])
        .unwrap()
        .write(&cert, &key)
        .unwrap();
    let server = WebhookServer::builder(webhooks())
        .tls_files(&cert, &key)
        .request_timeout(Duration::from_secs(5))
        .bind(([127, 0, 0, 1], 0).into())
        .await
        .unwrap();
    let addr = server.local_addr();
    let stop = tokio_util::sync::CancellationToken::new();
    tokio::spawn(server.serve_until(stop.clone()));
    let client = TestClient::new(addr, "localhost", ca.ca_pem(), HttpVersion::Http2).unwrap();
    let mut conn = client.connect().await.unwrap();
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let bodies = prop::collection::vec(any::<u8>(), 0..2048);
    for i in 0..64 {
        let body = bodies.new_tree(&mut runner).unwrap().current();
        let answer = conn.post(PATHS[i % 2], body).await.unwrap();
        assert!(
            [StatusCode::OK, StatusCode::BAD_REQUEST].contains(&answer.status),
            "{}",
            answer.status
        );
    }
    assert_eq!(client.get("/healthz").await.unwrap().status, StatusCode::OK);
    stop.cancel();
}
