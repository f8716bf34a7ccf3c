//! CRD conversion through a webhook (`spec.conversion.strategy: Webhook`), as
//! apiextensions-apiserver converts: objects are stored in the storage version, writes in
//! another version are converted to it, and every read in another version (get, list,
//! watch) shows the webhook's form. Against the `Widget` conversion webhook of
//! `kinform_tests::webhook`.

use kinform_tests::http::Raw;
use kinform_tests::webhook::{WebhookServer, widget_conversion, widget_crd};
use kinform_testserver::TestApiServer;
use serde_json::{Value, json};

const V1: &str = "/apis/example.com/v1/namespaces/default/widgets";
const V2: &str = "/apis/example.com/v2/namespaces/default/widgets";

async fn setup() -> (TestApiServer, Raw, WebhookServer) {
    let server = TestApiServer::start().await.unwrap();
    let raw = Raw::new(&server.url());
    let hooks = WebhookServer::start(&[], vec![("/convert", widget_conversion())]).await;
    let r = raw
        .post(
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
            &widget_crd(hooks.url_config("/convert")),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    (server, raw, hooks)
}

fn widget(version: &str, name: &str, spec: Value) -> Value {
    json!({"apiVersion": format!("example.com/{version}"), "kind": "Widget",
           "metadata": {"name": name, "labels": {"app": "w"}}, "spec": spec})
}

/// A write in a version other than the storage version is converted to it by the webhook
/// (a `ConversionReview` with `desiredAPIVersion` the storage version), and answered in the
/// version written; get and list in either version show that version's form.
#[tokio::test]
async fn writes_are_stored_in_the_storage_version_and_read_in_any() {
    let (_server, raw, hooks) = setup().await;
    let created = raw
        .post(V2, &widget("v2", "a", json!({"width": 3, "height": 4})))
        .await;
    assert_eq!(created.status, 201, "{}", created.body);
    assert_eq!(created.body["apiVersion"], "example.com/v2");
    assert_eq!(created.body["spec"], json!({"width": 3, "height": 4}));
    let first = &hooks.reviews("/convert")[0];
    assert_eq!(first["kind"], "ConversionReview");
    assert_eq!(first["request"]["desiredAPIVersion"], "example.com/v1");
    assert_eq!(first["request"]["objects"][0]["spec"]["width"], 3);

    let v1 = raw.get(&format!("{V1}/a")).await;
    assert_eq!(v1.status, 200, "{}", v1.body);
    assert_eq!(
        (v1.body["apiVersion"].as_str(), &v1.body["spec"]),
        (Some("example.com/v1"), &json!({"size": "3x4"}))
    );
    let v2 = raw.get(&format!("{V2}/a")).await;
    assert_eq!(v2.body["spec"], json!({"width": 3, "height": 4}));
    // The metadata is the stored object's in every version.
    assert_eq!(
        v1.body["metadata"]["resourceVersion"],
        v2.body["metadata"]["resourceVersion"]
    );
    assert_eq!(v1.body["metadata"]["uid"], v2.body["metadata"]["uid"]);
    assert_eq!(v2.body["metadata"]["labels"]["app"], "w");

    // A read in v2 asked the webhook again for the stored (v1) object.
    let before = hooks.reviews("/convert").len();
    let list = raw.get(V2).await;
    assert_eq!(
        list.body["items"][0]["spec"],
        json!({"width": 3, "height": 4})
    );
    let asked = &hooks.reviews("/convert")[before];
    assert_eq!(asked["request"]["desiredAPIVersion"], "example.com/v2");
    assert_eq!(asked["request"]["objects"][0]["spec"]["size"], "3x4");

    // An update in v1 is seen in v2.
    let mut changed = v1.body.clone();
    changed["spec"]["size"] = json!("5x6");
    assert_eq!(raw.put(&format!("{V1}/a"), &changed).await.status, 200);
    assert_eq!(
        raw.get(&format!("{V2}/a")).await.body["spec"],
        json!({"width": 5, "height": 6})
    );
    // A merge patch in v2 applies to the v2 form.
    let r = raw
        .patch(
            &format!("{V2}/a"),
            "application/merge-patch+json",
            &json!({"spec": {"height": 7}}),
        )
        .await;
    assert_eq!(
        (r.status, &r.body["spec"]),
        (200, &json!({"width": 5, "height": 7})),
        "{}",
        r.body
    );
    assert_eq!(
        raw.get(&format!("{V1}/a")).await.body["spec"]["size"],
        "5x7"
    );
}

/// A watch in a version other than the storage version sends the webhook's form of every
/// change.
#[tokio::test]
async fn a_watch_in_another_version_sees_the_converted_objects() {
    let (_server, raw, _hooks) = setup().await;
    let mut watch = raw.watch(&format!("{V2}?watch=true")).await;
    assert_eq!(
        raw.post(V1, &widget("v1", "w", json!({"size": "8x9"})))
            .await
            .status,
        201
    );
    let event = watch.next_change().await.expect("an event");
    assert_eq!(event["type"], "ADDED");
    assert_eq!(event["object"]["apiVersion"], "example.com/v2");
    assert_eq!(event["object"]["spec"], json!({"width": 8, "height": 9}));
}

/// The webhook's failures are the request's answer (`conversion webhook for
/// example.com/v1, Kind=Widget failed: ...`): a write in the storage version needs no
/// conversion, but a read in the other version of what the webhook cannot convert fails;
/// with the webhook down reads in the other version fail while the storage version is
/// still served.
#[tokio::test]
async fn conversion_failures_answer_as_upstream() {
    let (_server, raw, hooks) = setup().await;
    let r = raw
        .post(V1, &widget("v1", "bad", json!({"size": "big"})))
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    let r = raw.get(&format!("{V2}/bad")).await;
    assert_eq!(
        (r.status, r.body["reason"].as_str()),
        (500, None),
        "{}",
        r.body
    );
    assert_eq!(
        r.body["message"],
        "conversion webhook for example.com/v1, Kind=Widget failed: spec.size \"big\" is not WxH"
    );
    assert_eq!(raw.get(&format!("{V1}/bad")).await.status, 200);
    assert_eq!(raw.delete(&format!("{V1}/bad")).await.status, 200);

    assert_eq!(
        raw.post(V1, &widget("v1", "ok", json!({"size": "1x2"})))
            .await
            .status,
        201
    );
    hooks.stop();
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    let r = raw.get(&format!("{V2}/ok")).await;
    assert_eq!(r.status, 500, "{}", r.body);
    let message = r.body["message"].as_str().unwrap();
    assert!(
        message.starts_with(&format!(
            "conversion webhook for example.com/v1, Kind=Widget failed: Post \"{}\": ",
            hooks.url("/convert?timeout=30s")
        )),
        "{message}"
    );
    assert_eq!(raw.get(&format!("{V1}/ok")).await.status, 200);
}
