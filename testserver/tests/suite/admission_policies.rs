//! ValidatingAdmissionPolicy evaluated by TestApiServer as kube-apiserver's
//! `plugin/policy/validating` evaluates it: CEL validations over the object, bindings'
//! `validationActions`, variables, failure policies, and the denial's shape.

use kinform_tests::http::{Raw, configmap};
use kinform_testserver::TestApiServer;
use serde_json::{Value, json};

const CMS: &str = "/api/v1/namespaces/default/configmaps";
const POLICIES: &str = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies";
const BINDINGS: &str = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings";

fn policy(name: &str, spec: Value) -> Value {
    let mut spec = spec;
    spec["matchConstraints"] = json!({"resourceRules": [{"operations": ["CREATE", "UPDATE"],
        "apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"]}]});
    json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
           "metadata": {"name": name}, "spec": spec})
}

fn binding(name: &str, policy: &str, actions: &[&str]) -> Value {
    json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
           "metadata": {"name": name}, "spec": {"policyName": policy, "validationActions": actions}})
}

async fn install(raw: &Raw, p: Value, b: Value) {
    assert_eq!(raw.post(POLICIES, &p).await.status, 201);
    assert_eq!(raw.post(BINDINGS, &b).await.status, 201);
}

fn with_data(name: &str, keys: usize) -> Value {
    let mut cm = configmap("default", name, json!({}));
    cm["data"] = (0..keys)
        .map(|i| (format!("k{i}"), json!("v")))
        .collect::<serde_json::Map<_, _>>()
        .into();
    cm
}

/// A false validation under a `Deny` binding refuses with 422 Invalid, worded
/// `configmaps "x" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'b' denied
/// request: <message>` and the same text as the one cause; true ones admit.
#[tokio::test]
async fn a_deny_binding_refuses_what_a_validation_rejects() {
    let server = TestApiServer::start().await.unwrap();
    let raw = Raw::new(&server.url());
    install(
        &raw,
        policy("max-keys", json!({"validations": [
            {"expression": "!has(object.data) || object.data.size() <= 2", "message": "at most two keys"},
            {"expression": "object.metadata.name.size() < 20"},
        ]})),
        binding("max-keys-binding", "max-keys", &["Deny"]),
    )
    .await;
    assert_eq!(raw.post(CMS, &with_data("small", 2)).await.status, 201);
    let r = raw.post(CMS, &with_data("big", 3)).await;
    assert_eq!(
        (r.status, r.body["reason"].as_str()),
        (422, Some("Invalid")),
        "{}",
        r.body
    );
    let cause = "ValidatingAdmissionPolicy 'max-keys' with binding 'max-keys-binding' denied request: at most two keys";
    assert_eq!(
        r.body["message"],
        format!("configmaps \"big\" is forbidden: {cause}")
    );
    assert_eq!(
        r.body["details"],
        json!({"name": "big", "kind": "configmaps", "causes": [{"message": cause}]})
    );
    assert_eq!(raw.get(&format!("{CMS}/big")).await.status, 404);
    let r = raw
        .post(CMS, &with_data("a-name-much-longer-than-twenty", 0))
        .await;
    assert_eq!(r.status, 422);
    assert!(
        r.body["message"]
            .as_str()
            .unwrap()
            .ends_with("denied request: failed expression: object.metadata.name.size() < 20"),
        "{}",
        r.body
    );
    // An update is checked too.
    let mut small = raw.get(&format!("{CMS}/small")).await.body;
    small["data"]["k9"] = json!("v");
    assert_eq!(raw.put(&format!("{CMS}/small"), &small).await.status, 422);
}

/// `variables` feed the validations, a `messageExpression` words the refusal, `reason`
/// sets the code, and a `Warn` binding admits with a `Warning` header instead.
#[tokio::test]
async fn variables_message_expressions_reasons_and_warnings() {
    let server = TestApiServer::start().await.unwrap();
    let raw = Raw::new(&server.url());
    let spec = json!({
        "variables": [{"name": "team", "expression": "has(object.metadata.labels) && 'team' in object.metadata.labels ? object.metadata.labels['team'] : ''"}],
        "validations": [{"expression": "variables.team != ''", "reason": "Forbidden",
                         "messageExpression": "'no team on ' + object.metadata.name"}],
    });
    install(
        &raw,
        policy("team", spec.clone()),
        binding("team-warn", "team", &["Warn"]),
    )
    .await;
    let r = raw
        .post(CMS, &configmap("default", "loose", json!({})))
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    let warning = r
        .headers
        .get("warning")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    assert_eq!(
        warning,
        "299 - \"Validation failed for ValidatingAdmissionPolicy 'team' with binding 'team-warn': no team on loose\""
    );
    assert_eq!(
        raw.post(BINDINGS, &binding("team-deny", "team", &["Deny"]))
            .await
            .status,
        201
    );
    let r = raw
        .post(CMS, &configmap("default", "looser", json!({})))
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
            .ends_with("denied request: no team on looser")
    );
    assert_eq!(
        raw.post(CMS, &configmap("default", "owned", json!({"team": "a"})))
            .await
            .status,
        201
    );
}

/// An expression that fails refuses under `failurePolicy: Fail` and is skipped under
/// `Ignore`; what the server cannot evaluate (`paramKind`) is refused clearly, never
/// skipped; the policies' own resources are never checked.
#[tokio::test]
async fn failures_follow_the_failure_policy_and_params_are_refused_clearly() {
    let server = TestApiServer::start().await.unwrap();
    let raw = Raw::new(&server.url());
    let failing = json!({"validations": [{"expression": "object.data.missing == 'x'"}]});
    install(
        &raw,
        policy("strict", failing.clone()),
        binding("strict-b", "strict", &["Deny"]),
    )
    .await;
    let r = raw.post(CMS, &with_data("a", 1)).await;
    assert_eq!(r.status, 422, "{}", r.body);
    assert!(
        r.body["message"]
            .as_str()
            .unwrap()
            .contains("resulted in error"),
        "{}",
        r.body
    );
    assert_eq!(
        raw.delete(&format!("{BINDINGS}/strict-b")).await.status,
        200
    );
    let mut lenient = failing;
    lenient["failurePolicy"] = json!("Ignore");
    install(
        &raw,
        policy("lenient", lenient),
        binding("lenient-b", "lenient", &["Deny"]),
    )
    .await;
    assert_eq!(raw.post(CMS, &with_data("b", 1)).await.status, 201);

    let mut params = json!({"validations": [{"expression": "true"}]});
    params["paramKind"] = json!({"apiVersion": "v1", "kind": "ConfigMap"});
    install(
        &raw,
        policy("with-params", params),
        binding("with-params-b", "with-params", &["Deny"]),
    )
    .await;
    let r = raw.post(CMS, &with_data("c", 1)).await;
    assert_eq!(r.status, 403, "{}", r.body);
    assert!(
        r.body["message"]
            .as_str()
            .unwrap()
            .contains("paramKind and paramRef are not supported")
    );
    assert_eq!(
        raw.delete(&format!("{BINDINGS}/with-params-b"))
            .await
            .status,
        200
    );
    assert_eq!(raw.post(CMS, &with_data("d", 1)).await.status, 201);
}
