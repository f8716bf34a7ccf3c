//! Admission webhooks called by TestApiServer as kube-apiserver calls them
//! (`k8s.io/apiserver/pkg/admission/plugin/webhook`), against small real HTTPS webhook
//! servers (`kinform_tests::webhook`) that decide on what they are sent. Each test names
//! the behaviour it checks.

use std::time::{Duration, Instant};

use kinform_tests::http::{Raw, configmap};
use kinform_tests::webhook::{
    self, Route, WebhookServer, admission, admission_async, allow, configuration, core_rule, deny,
    patch,
};
use kinform_testserver::TestApiServer;
use serde_json::{Value, json};

const CMS: &str = "/api/v1/namespaces/default/configmaps";
const VWC: &str = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations";
const MWC: &str = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations";

async fn setup(routes: Vec<(&str, Route)>) -> (TestApiServer, Raw, WebhookServer) {
    let server = TestApiServer::start().await.unwrap();
    let raw = Raw::new(&server.url());
    let hooks = WebhookServer::start(&["hooks.webhooks.svc"], routes).await;
    (server, raw, hooks)
}

async fn register(raw: &Raw, config: Value) {
    let path = if config["kind"] == "MutatingWebhookConfiguration" {
        MWC
    } else {
        VWC
    };
    let r = raw.post(path, &config).await;
    assert_eq!(r.status, 201, "{}", r.body);
}

fn cm(name: &str, labels: Value) -> Value {
    configmap("default", name, labels)
}

/// A validating webhook's refusal is the request's answer, with `ToStatusErr`'s message and
/// the webhook's code; what it admits is stored; the review carries the request's
/// attributes (`CreateAdmissionObjects`).
#[tokio::test]
async fn a_validating_webhook_refuses_with_its_message_and_code() {
    let (_server, raw, hooks) = setup(vec![("/validate", webhook::require_label("team"))]).await;
    register(
        &raw,
        configuration(
            false,
            "require-team",
            "team.example.com",
            hooks.url_config("/validate"),
            core_rule(&["CREATE", "UPDATE"], &["configmaps"]),
            json!({}),
        ),
    )
    .await;
    let refused = raw.post(CMS, &cm("anonymous", json!({}))).await;
    assert_eq!(refused.status, 403, "{}", refused.body);
    assert_eq!(
        refused.body["message"],
        "admission webhook \"team.example.com\" denied the request: label \"team\" is required"
    );
    assert_eq!(refused.body["status"], "Failure");
    assert_eq!(raw.get(&format!("{CMS}/anonymous")).await.status, 404);

    let admitted = raw.post(CMS, &cm("owned", json!({"team": "a"}))).await;
    assert_eq!(admitted.status, 201, "{}", admitted.body);
    let reviews = hooks.reviews("/validate");
    assert_eq!(reviews.len(), 2);
    let review = &reviews[1];
    assert_eq!(review["apiVersion"], "admission.k8s.io/v1");
    let r = &review["request"];
    assert_eq!(r["uid"].as_str().unwrap().len(), 36);
    assert_eq!(r["operation"], "CREATE");
    assert_eq!(
        r["kind"],
        json!({"group": "", "version": "v1", "kind": "ConfigMap"})
    );
    assert_eq!(
        r["resource"],
        json!({"group": "", "version": "v1", "resource": "configmaps"})
    );
    assert_eq!(
        (r["name"].as_str(), r["namespace"].as_str()),
        (Some("owned"), Some("default"))
    );
    assert_eq!(r["dryRun"], false);
    assert_eq!(r["options"]["kind"], "CreateOptions");
    assert!(r["oldObject"].is_null());
    assert!(
        r["userInfo"]["username"]
            .as_str()
            .is_some_and(|u| !u.is_empty())
    );
    // The validating webhook sees the object as it is stored but for its resourceVersion.
    assert!(r["object"]["metadata"]["uid"].is_string());
    assert!(r["object"]["metadata"]["resourceVersion"].is_null());
    assert_eq!(
        r["object"]["metadata"]["uid"],
        admitted.body["metadata"]["uid"]
    );

    // An update is reviewed with its old object.
    let mut changed = admitted.body.clone();
    changed["metadata"]["labels"] = json!({});
    let r = raw.put(&format!("{CMS}/owned"), &changed).await;
    assert_eq!(r.status, 403);
    let last = hooks.reviews("/validate").pop().unwrap();
    assert_eq!(last["request"]["operation"], "UPDATE");
    assert_eq!(
        last["request"]["oldObject"]["metadata"]["labels"]["team"],
        "a"
    );
    assert_eq!(last["request"]["options"]["kind"], "UpdateOptions");
    // A patch is an UPDATE with UpdateOptions (`patchToUpdateOptions`).
    let r = raw
        .patch(
            &format!("{CMS}/owned?fieldManager=tester"),
            "application/merge-patch+json",
            &json!({"data": {"x": "y"}}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let last = hooks.reviews("/validate").pop().unwrap();
    assert_eq!(last["request"]["operation"], "UPDATE");
    assert_eq!(
        last["request"]["options"],
        json!({"kind": "UpdateOptions", "apiVersion": "meta.k8s.io/v1", "fieldManager": "tester"})
    );
    assert_eq!(last["request"]["object"]["data"]["x"], "y");
}

/// Mutating webhooks run before the registry's validation and before validating webhooks:
/// a defaulted field is what the validating webhook sees and what is stored; a webhook
/// without explanation is worded `denied the request without explanation` with code 400.
#[tokio::test]
async fn a_mutating_webhook_defaults_before_validation() {
    let (_server, raw, hooks) = setup(vec![
        ("/default", webhook::default_label("team", "platform")),
        ("/validate", webhook::require_label("team")),
        ("/silent", admission(|_| json!({"allowed": false}))),
    ])
    .await;
    for (mutating, name, path) in [
        (true, "default-team", "/default"),
        (false, "require-team", "/validate"),
    ] {
        register(
            &raw,
            configuration(
                mutating,
                name,
                &format!("{name}.example.com"),
                hooks.url_config(path),
                core_rule(&["CREATE"], &["configmaps"]),
                json!({}),
            ),
        )
        .await;
    }
    let created = raw.post(CMS, &cm("plain", json!({}))).await;
    assert_eq!(created.status, 201, "{}", created.body);
    assert_eq!(created.body["metadata"]["labels"]["team"], "platform");
    let stored = raw.get(&format!("{CMS}/plain")).await;
    assert_eq!(stored.body["metadata"]["labels"]["team"], "platform");
    // The mutating webhook saw the object before the registry filled it in.
    let seen = &hooks.reviews("/default")[0]["request"]["object"];
    assert!(seen["metadata"]["uid"].is_null());
    assert_eq!(seen["metadata"]["namespace"], "default");
    assert_eq!(
        hooks.reviews("/validate")[0]["request"]["object"]["metadata"]["labels"]["team"],
        "platform"
    );

    register(
        &raw,
        configuration(
            false,
            "silent",
            "silent.example.com",
            hooks.url_config("/silent"),
            core_rule(&["CREATE"], &["secrets"]),
            json!({}),
        ),
    )
    .await;
    let r = raw
        .post(
            "/api/v1/namespaces/default/secrets",
            &json!({"metadata": {"name": "s"}}),
        )
        .await;
    assert_eq!(r.status, 400);
    assert_eq!(
        r.body["message"],
        "admission webhook \"silent.example.com\" denied the request without explanation"
    );
}

/// kube-apiserver calls mutating webhooks sorted by configuration name, each after the
/// previous one's patch, and calls a `reinvocationPolicy: IfNeeded` webhook once more when
/// a later one changed the object.
#[tokio::test]
async fn mutating_webhooks_run_in_order_and_are_reinvoked_if_needed() {
    // Each webhook appends its letter to the `trail` annotation.
    let append = |letter: &'static str| {
        admission(move |request| {
            let trail = request["object"]["metadata"]["annotations"]["trail"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            // The reinvocable webhook changes nothing once it has seen the last letter.
            if letter == "a" && trail.ends_with('b') && trail.contains('a') {
                return allow();
            }
            let op = if trail.is_empty() && request["object"]["metadata"]["annotations"].is_null() {
                json!({"op": "add", "path": "/metadata/annotations", "value": {"trail": letter}})
            } else {
                json!({"op": "add", "path": "/metadata/annotations/trail", "value": format!("{trail}{letter}")})
            };
            patch(json!([op]))
        })
    };
    let (_server, raw, hooks) = setup(vec![("/a", append("a")), ("/b", append("b"))]).await;
    // Registered in the other order: the names decide.
    register(
        &raw,
        configuration(
            true,
            "2-second",
            "b.example.com",
            hooks.url_config("/b"),
            core_rule(&["CREATE"], &["configmaps"]),
            json!({}),
        ),
    )
    .await;
    register(
        &raw,
        configuration(
            true,
            "1-first",
            "a.example.com",
            hooks.url_config("/a"),
            core_rule(&["CREATE"], &["configmaps"]),
            json!({"reinvocationPolicy": "IfNeeded"}),
        ),
    )
    .await;
    let r = raw.post(CMS, &cm("trail", json!({}))).await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.body["metadata"]["annotations"]["trail"], "ab");
    // `a` twice (first, then reinvoked after `b` changed the object), `b` once.
    assert_eq!(hooks.reviews("/a").len(), 2);
    assert_eq!(hooks.reviews("/b").len(), 1);
    assert_eq!(
        hooks.reviews("/a")[1]["request"]["object"]["metadata"]["annotations"]["trail"],
        "ab"
    );
}

/// `failurePolicy: Fail` refuses a request whose webhook cannot be called
/// (`Internal error occurred: failed calling webhook ...`, 500); `Ignore` admits it.
#[tokio::test]
async fn a_webhook_that_is_down_fails_or_is_ignored_by_failure_policy() {
    let (_server, raw, hooks) = setup(vec![("/validate", webhook::require_label("team"))]).await;
    let down = hooks.url_config("/validate");
    hooks.stop();
    register(
        &raw,
        configuration(
            false,
            "strict",
            "strict.example.com",
            down.clone(),
            core_rule(&["CREATE"], &["configmaps"]),
            json!({"failurePolicy": "Fail"}),
        ),
    )
    .await;
    register(
        &raw,
        configuration(
            false,
            "lenient",
            "lenient.example.com",
            down,
            core_rule(&["CREATE"], &["secrets"]),
            json!({"failurePolicy": "Ignore"}),
        ),
    )
    .await;
    let r = raw.post(CMS, &cm("x", json!({"team": "a"}))).await;
    assert_eq!(
        (r.status, r.body["reason"].as_str()),
        (500, Some("InternalError"))
    );
    let message = r.body["message"].as_str().unwrap();
    let url = hooks.url("/validate?timeout=10s");
    assert_eq!(
        message,
        format!(
            "Internal error occurred: failed calling webhook \"strict.example.com\": failed to call webhook: Post \"{url}\": dial tcp {}: connect: connection refused",
            hooks.addr()
        )
    );
    let r = raw
        .post(
            "/api/v1/namespaces/default/secrets",
            &json!({"metadata": {"name": "s"}}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
}

/// `timeoutSeconds` bounds the call (`context deadline exceeded`), and a webhook's
/// certificate is verified against its `caBundle`.
#[tokio::test]
async fn timeouts_and_the_ca_bundle_bound_the_call() {
    let (_server, raw, hooks) = setup(vec![
        (
            "/slow",
            admission_async(|_| async {
                tokio::time::sleep(webhook::SLOW).await;
                allow()
            }),
        ),
        ("/ok", admission(|_| allow())),
    ])
    .await;
    register(
        &raw,
        configuration(
            false,
            "slow",
            "slow.example.com",
            hooks.url_config("/slow"),
            core_rule(&["CREATE"], &["configmaps"]),
            json!({"timeoutSeconds": 1}),
        ),
    )
    .await;
    let started = Instant::now();
    let r = raw.post(CMS, &cm("late", json!({}))).await;
    let took = started.elapsed();
    assert_eq!(r.status, 500, "{}", r.body);
    assert!(
        r.body["message"].as_str().unwrap().ends_with(&format!(
            "Post \"{}\": context deadline exceeded",
            hooks.url("/slow?timeout=1s")
        )),
        "{}",
        r.body
    );
    assert!(
        took >= Duration::from_millis(900) && took < webhook::SLOW,
        "{took:?}"
    );

    // Another CA's bundle: the certificate is not trusted.
    let stranger = WebhookServer::start(&[], vec![]).await;
    let mut config = hooks.url_config("/ok");
    config["caBundle"] = json!(stranger.ca_bundle());
    register(
        &raw,
        configuration(
            false,
            "untrusted",
            "untrusted.example.com",
            config,
            core_rule(&["CREATE"], &["secrets"]),
            json!({}),
        ),
    )
    .await;
    let r = raw
        .post(
            "/api/v1/namespaces/default/secrets",
            &json!({"metadata": {"name": "s"}}),
        )
        .await;
    assert_eq!(r.status, 500, "{}", r.body);
    assert!(
        r.body["message"]
            .as_str()
            .unwrap()
            .contains("tls: failed to verify certificate"),
        "{}",
        r.body
    );
    assert!(hooks.reviews("/ok").is_empty());
}

/// A `service` reference is called as `https://<name>.<namespace>.svc:<port><path>` (the
/// certificate checked for that host name), at the address the test registered.
#[tokio::test]
async fn a_service_reference_reaches_the_registered_port() {
    let (server, raw, hooks) = setup(vec![("/validate", webhook::require_label("team"))]).await;
    let service = json!({"service": {"namespace": "webhooks", "name": "hooks", "path": "/validate", "port": 8443},
                         "caBundle": hooks.ca_bundle()});
    register(
        &raw,
        configuration(
            false,
            "by-service",
            "service.example.com",
            service,
            core_rule(&["CREATE"], &["configmaps"]),
            json!({}),
        ),
    )
    .await;
    // Not registered yet: the call fails (failurePolicy Fail).
    let r = raw.post(CMS, &cm("a", json!({}))).await;
    assert_eq!(r.status, 500, "{}", r.body);
    assert!(
        r.body["message"]
            .as_str()
            .unwrap()
            .contains("Post \"https://hooks.webhooks.svc:8443/validate?timeout=10s\""),
        "{}",
        r.body
    );
    server.register_service_port("webhooks", "hooks", 8443, hooks.addr());
    let r = raw.post(CMS, &cm("b", json!({}))).await;
    assert_eq!(r.status, 403, "{}", r.body);
    let r = raw.post(CMS, &cm("c", json!({"team": "x"}))).await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(hooks.reviews("/validate").len(), 2);
}

/// `namespaceSelector` matches the namespace's labels, `objectSelector` the new or old
/// object's, and `matchConditions` (CEL) skip the webhook when one is false; a condition
/// that fails to evaluate refuses under `failurePolicy: Fail`.
#[tokio::test]
async fn selectors_and_match_conditions_choose_the_requests() {
    let (server, raw, hooks) = setup(vec![("/deny", admission(|_| deny(403, "no")))]).await;
    server.create_namespace("guarded").unwrap();
    let ns = raw.get("/api/v1/namespaces/guarded").await.body;
    let mut labelled = ns.clone();
    labelled["metadata"]["labels"] = json!({"guard": "on"});
    assert_eq!(
        raw.put("/api/v1/namespaces/guarded", &labelled)
            .await
            .status,
        200
    );
    register(
        &raw,
        configuration(
            false,
            "guard",
            "guard.example.com",
            hooks.url_config("/deny"),
            core_rule(&["CREATE"], &["configmaps"]),
            json!({
                "namespaceSelector": {"matchLabels": {"guard": "on"}},
                "objectSelector": {"matchExpressions": [{"key": "exempt", "operator": "DoesNotExist"}]},
                "matchConditions": [{"name": "not-admin-named", "expression": "!object.metadata.name.startsWith('admin-')"}],
            }),
        ),
    )
    .await;
    let guarded = "/api/v1/namespaces/guarded/configmaps";
    assert_eq!(
        raw.post(guarded, &configmap("guarded", "a", json!({})))
            .await
            .status,
        403
    );
    assert_eq!(raw.post(CMS, &cm("a", json!({}))).await.status, 201);
    assert_eq!(
        raw.post(
            guarded,
            &configmap("guarded", "b", json!({"exempt": "yes"}))
        )
        .await
        .status,
        201
    );
    assert_eq!(
        raw.post(guarded, &configmap("guarded", "admin-c", json!({})))
            .await
            .status,
        201
    );
    assert_eq!(hooks.reviews("/deny").len(), 1);

    register(
        &raw,
        configuration(
            false,
            "broken-condition",
            "broken.example.com",
            hooks.url_config("/deny"),
            core_rule(&["CREATE"], &["secrets"]),
            json!({"matchConditions": [{"name": "spec-size", "expression": "object.spec.size > 1"}]}),
        ),
    )
    .await;
    let r = raw
        .post(
            "/api/v1/namespaces/default/secrets",
            &json!({"metadata": {"name": "s"}}),
        )
        .await;
    assert_eq!(
        (r.status, r.body["reason"].as_str()),
        (403, Some("Forbidden")),
        "{}",
        r.body
    );
    assert!(
        r.body["message"]
            .as_str()
            .unwrap()
            .starts_with("secrets \"s\" is forbidden: "),
        "{}",
        r.body
    );
    assert_eq!(hooks.reviews("/deny").len(), 1);
}

/// A dry run reaches the webhooks with `dryRun: true` and stores nothing; a configuration
/// whose `sideEffects` is `Some` is refused when written, as v1 validation refuses it.
#[tokio::test]
async fn dry_runs_reach_webhooks_and_side_effects_are_validated() {
    let (_server, raw, hooks) =
        setup(vec![("/default", webhook::default_label("team", "dry"))]).await;
    register(
        &raw,
        configuration(
            true,
            "defaults",
            "defaults.example.com",
            hooks.url_config("/default"),
            core_rule(&["CREATE"], &["configmaps"]),
            json!({"sideEffects": "NoneOnDryRun"}),
        ),
    )
    .await;
    let r = raw
        .post(&format!("{CMS}?dryRun=All"), &cm("dry", json!({})))
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.body["metadata"]["labels"]["team"], "dry");
    assert_eq!(hooks.reviews("/default")[0]["request"]["dryRun"], true);
    assert_eq!(
        hooks.reviews("/default")[0]["request"]["options"]["dryRun"],
        json!(["All"])
    );
    assert_eq!(raw.get(&format!("{CMS}/dry")).await.status, 404);

    let mut bad = configuration(
        false,
        "effects",
        "effects.example.com",
        hooks.url_config("/default"),
        core_rule(&["CREATE"], &["configmaps"]),
        json!({"sideEffects": "Some"}),
    );
    let r = raw.post(VWC, &bad).await;
    assert_eq!(r.status, 422, "{}", r.body);
    assert_eq!(
        r.body["message"],
        "ValidatingWebhookConfiguration.admissionregistration.k8s.io \"effects\" is invalid: webhooks[0].sideEffects: Unsupported value: \"Some\": supported values: \"None\", \"NoneOnDryRun\""
    );
    bad["webhooks"][0]["sideEffects"] = json!("None");
    assert_eq!(raw.post(VWC, &bad).await.status, 201);
}

/// A DELETE is admitted with the stored object as `oldObject`; a refusal keeps the object.
/// The webhook configurations themselves are never sent to webhooks, so a webhook that
/// refuses everything can still be removed.
#[tokio::test]
async fn deletes_are_admitted_and_configurations_are_exempt() {
    let (_server, raw, hooks) = setup(vec![(
        "/deny",
        admission(|r| {
            if r["operation"] == "DELETE" {
                deny(403, "keep it")
            } else {
                allow()
            }
        }),
    )])
    .await;
    assert_eq!(raw.post(CMS, &cm("keep", json!({}))).await.status, 201);
    let rules = json!([{"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*/*"]}]);
    register(
        &raw,
        configuration(
            false,
            "everything",
            "all.example.com",
            hooks.url_config("/deny"),
            rules,
            json!({}),
        ),
    )
    .await;
    let r = raw.delete(&format!("{CMS}/keep")).await;
    assert_eq!(r.status, 403, "{}", r.body);
    assert_eq!(
        r.body["message"],
        "admission webhook \"all.example.com\" denied the request: keep it"
    );
    let review = hooks.reviews("/deny").pop().unwrap();
    assert_eq!(review["request"]["oldObject"]["metadata"]["name"], "keep");
    assert!(review["request"]["object"].is_null());
    assert_eq!(review["request"]["options"]["kind"], "DeleteOptions");
    assert_eq!(raw.get(&format!("{CMS}/keep")).await.status, 200);
    let seen = hooks.reviews("/deny").len();
    assert_eq!(raw.delete(&format!("{VWC}/everything")).await.status, 200);
    assert_eq!(hooks.reviews("/deny").len(), seen);
    assert_eq!(raw.delete(&format!("{CMS}/keep")).await.status, 200);
}

/// Webhooks are called with the store unlocked: a validating webhook may read the API
/// server back while it decides (a common webhook), without a deadlock.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_webhook_may_call_back_the_server_while_it_decides() {
    let server = TestApiServer::start().await.unwrap();
    let raw = Raw::new(&server.url());
    let base = server.url();
    let hooks = WebhookServer::start(
        &[],
        vec![(
            "/quota",
            admission_async(move |_| {
                let raw = Raw::new(&base);
                async move {
                    // At most two ConfigMaps in the namespace.
                    let list = raw.get(CMS).await;
                    let n = list.body["items"].as_array().map_or(0, Vec::len);
                    if n >= 2 {
                        deny(403, "quota exceeded")
                    } else {
                        allow()
                    }
                }
            }),
        )],
    )
    .await;
    register(
        &raw,
        configuration(
            false,
            "quota",
            "quota.example.com",
            hooks.url_config("/quota"),
            core_rule(&["CREATE"], &["configmaps"]),
            json!({}),
        ),
    )
    .await;
    for name in ["one", "two"] {
        assert_eq!(raw.post(CMS, &cm(name, json!({}))).await.status, 201);
    }
    let r = raw.post(CMS, &cm("three", json!({}))).await;
    assert_eq!(r.status, 403, "{}", r.body);
    assert!(
        r.body["message"]
            .as_str()
            .unwrap()
            .ends_with("quota exceeded")
    );
}
