//! Decoding, pruning, defaulting and validation of writes over real HTTP, built-in kinds and
//! real CRDs from the corpus, and with the real kubectl. Each test names the kube-apiserver
//! behaviour it checks.

use kinform_tests::http::{Raw, Resp};
use kinform_tests::kubectl::Kubectl;
use kinform_testserver::TestApiServer;
use serde_json::{Value, json};

const DEPLOYMENTS: &str = "/apis/apps/v1/namespaces/default/deployments";
const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/corpus/crds");

fn deployment(name: &str, spec_extra: Value) -> Value {
    let mut d = json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": name}},
                 "template": {"metadata": {"labels": {"app": name}},
                              "spec": {"containers": [{"name": "web", "image": "nginx"}]}}},
    });
    if let (Some(spec), Value::Object(extra)) = (d["spec"].as_object_mut(), spec_extra) {
        spec.extend(extra);
    }
    d
}

fn warnings(r: &Resp) -> Vec<String> {
    r.headers
        .get_all("warning")
        .iter()
        .map(|v| v.to_str().unwrap().to_owned())
        .collect()
}

fn causes(r: &Resp) -> Vec<(String, String, String)> {
    r.body["details"]["causes"]
        .as_array()
        .unwrap_or_else(|| panic!("no causes in {}", r.body))
        .iter()
        .map(|c| {
            let s = |k: &str| c[k].as_str().unwrap_or_default().to_owned();
            (s("reason"), s("field"), s("message"))
        })
        .collect()
}

async fn register_corpus_crd(server: &TestApiServer, file: &str) {
    let text = std::fs::read_to_string(format!("{CORPUS}/{file}")).unwrap();
    server.register_crd_yaml(&text).unwrap();
}

/// kube-apiserver decodes built-ins into their Go struct: a string where an int32 is expected
/// fails the request with 400 BadRequest and the decoder's message (`transformDecodeError`),
/// before any validation; nothing is stored.
#[tokio::test]
async fn builtin_type_mismatch_is_a_decode_error() {
    let server = TestApiServer::start().await.unwrap();
    let raw = Raw::new(&server.url());
    let r = raw
        .post(
            DEPLOYMENTS,
            &deployment("web", json!({"replicas": "three"})),
        )
        .await;
    assert_eq!(
        (r.status, r.body["reason"].as_str()),
        (400, Some("BadRequest"))
    );
    assert_eq!(
        r.body["message"],
        "Deployment in version \"v1\" cannot be handled as a Deployment: json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32"
    );
    assert_eq!(raw.get(&format!("{DEPLOYMENTS}/web")).await.status, 404);
    // The same through a merge patch of a stored object.
    assert_eq!(
        raw.post(DEPLOYMENTS, &deployment("web", json!({})))
            .await
            .status,
        201
    );
    let p = raw
        .patch(
            &format!("{DEPLOYMENTS}/web"),
            "application/merge-patch+json",
            &json!({"spec": {"replicas": "three"}}),
        )
        .await;
    assert_eq!(p.status, 400, "{}", p.body);
    let stored = raw.get(&format!("{DEPLOYMENTS}/web")).await.body;
    assert_eq!(stored["spec"]["replicas"], 2);
    server.shutdown().await;
}

/// kube-apiserver answers 422 Invalid with one `details.causes` entry per failure: here the
/// OpenAPI `required` of DeploymentSpec (`spec.selector`, as Go validation also requires) and
/// the `enum` of `DeploymentStrategy.type`.
#[tokio::test]
async fn builtin_required_and_enum_are_invalid() {
    let server = TestApiServer::start().await.unwrap();
    let raw = Raw::new(&server.url());
    let mut d = deployment("web", json!({"strategy": {"type": "Sideways"}}));
    d["spec"].as_object_mut().unwrap().remove("selector");
    let r = raw.post(DEPLOYMENTS, &d).await;
    assert_eq!(
        (r.status, r.body["reason"].as_str()),
        (422, Some("Invalid"))
    );
    assert_eq!(r.body["details"]["kind"], "Deployment");
    assert_eq!(r.body["details"]["group"], "apps");
    assert_eq!(
        causes(&r),
        [
            (
                "FieldValueNotSupported".to_owned(),
                "spec.strategy.type".to_owned(),
                "Unsupported value: \"Sideways\": supported values: \"Recreate\", \"RollingUpdate\"".to_owned()
            ),
            (
                "FieldValueRequired".to_owned(),
                "spec.selector".to_owned(),
                "Required value".to_owned()
            ),
        ]
    );
    assert_eq!(
        r.body["message"],
        "Deployment.apps \"web\" is invalid: [spec.strategy.type: Unsupported value: \"Sideways\": supported values: \"Recreate\", \"RollingUpdate\", spec.selector: Required value]"
    );
    // A pod without containers, as `ValidatePodSpec` refuses it.
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {}});
    let r = raw.post("/api/v1/namespaces/default/pods", &pod).await;
    assert_eq!(r.status, 422);
    assert_eq!(
        r.body["message"],
        "Pod \"p\" is invalid: spec.containers: Required value"
    );
    server.shutdown().await;
}

/// `fieldValidation` (kube-apiserver 1.27+, `handlers/rest.go`): Strict fails with 400
/// `strict decoding error`, Warn (the default when absent) answers a `Warning: 299` header and
/// drops the field, Ignore drops it silently; any other value is 422 on `CreateOptions`.
/// Built-ins never store an unknown field.
#[tokio::test]
async fn field_validation_directives_on_builtins() {
    let server = TestApiServer::start().await.unwrap();
    let raw = Raw::new(&server.url());
    let with_foo = |name: &str| deployment(name, json!({"foo": 1}));
    let strict = raw
        .post(
            &format!("{DEPLOYMENTS}?fieldValidation=Strict"),
            &with_foo("a"),
        )
        .await;
    assert_eq!(strict.status, 400);
    assert_eq!(
        strict.body["message"],
        "Deployment in version \"v1\" cannot be handled as a Deployment: strict decoding error: unknown field \"spec.foo\""
    );
    assert_eq!(raw.get(&format!("{DEPLOYMENTS}/a")).await.status, 404);

    for (query, expect_warning) in [
        ("?fieldValidation=Warn", true),
        ("", true),
        ("?fieldValidation=Ignore", false),
    ] {
        let name = format!("d{}", query.len());
        let r = raw
            .post(&format!("{DEPLOYMENTS}{query}"), &with_foo(&name))
            .await;
        assert_eq!(r.status, 201, "{query}: {}", r.body);
        let expected: Vec<String> = if expect_warning {
            vec!["299 - \"unknown field \\\"spec.foo\\\"\"".to_owned()]
        } else {
            vec![]
        };
        assert_eq!(warnings(&r), expected, "{query}");
        assert!(r.body["spec"].get("foo").is_none());
        let stored = raw.get(&format!("{DEPLOYMENTS}/{name}")).await.body;
        assert!(stored["spec"].get("foo").is_none(), "{query}: {stored}");
    }

    let bad = raw
        .post(
            &format!("{DEPLOYMENTS}?fieldValidation=Loud"),
            &with_foo("b"),
        )
        .await;
    assert_eq!(bad.status, 422);
    assert_eq!(
        bad.body["message"],
        "CreateOptions.meta.k8s.io \"\" is invalid: fieldValidation: Unsupported value: \"Loud\": supported values: \"\", \"Ignore\", \"Strict\", \"Warn\""
    );

    // Duplicate fields are strict errors too (the JSON decoder sees them).
    let body = br#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"dup"},"data":{"a":"1","a":"2"}}"#;
    let dup = raw_bytes(
        &server,
        "POST",
        "/api/v1/namespaces/default/configmaps?fieldValidation=Strict",
        body,
    )
    .await;
    assert_eq!(dup.0, 400);
    assert!(
        dup.1
            .contains("strict decoding error: duplicate field \\\"data.a\\\""),
        "{}",
        dup.1
    );

    // Patches: strict errors of the patched object, without the kind prefix.
    let p = raw
        .patch(
            &format!("{DEPLOYMENTS}/d0?fieldValidation=Strict"),
            "application/merge-patch+json",
            &json!({"spec": {"template": {"spec": {"containers": [{"name": "web", "image": "nginx", "colour": "red"}]}}}}),
        )
        .await;
    assert_eq!(p.status, 400);
    assert_eq!(
        p.body["message"],
        "strict decoding error: unknown field \"spec.template.spec.containers[0].colour\""
    );
    let p = raw
        .patch(
            &format!("{DEPLOYMENTS}/d0"),
            "application/merge-patch+json",
            &json!({"metadata": {"bogus": true}}),
        )
        .await;
    assert_eq!(p.status, 200);
    assert_eq!(
        warnings(&p),
        ["299 - \"unknown field \\\"metadata.bogus\\\"\""]
    );
    server.shutdown().await;
}

/// Sends raw bytes (the JSON helpers cannot express a duplicate key).
async fn raw_bytes(server: &TestApiServer, method: &str, path: &str, body: &[u8]) -> (u16, String) {
    use http_body_util::{BodyExt, Full};
    let client = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .build_http::<Full<bytes::Bytes>>();
    let req = http::Request::builder()
        .method(method)
        .uri(format!("{}{path}", server.url()))
        .header("content-type", "application/json")
        .body(Full::new(bytes::Bytes::copy_from_slice(body)))
        .unwrap();
    let r = client.request(req).await.unwrap();
    let status = r.status().as_u16();
    let bytes = r.into_body().collect().await.unwrap().to_bytes();
    (status, String::from_utf8_lossy(&bytes).into_owned())
}

/// apiextensions-apiserver validates custom resources against the structural schema of
/// their CRD version: KEDA's ScaledObject declares `minimum: 0` on `cooldownPeriod`, an
/// `enum` on `fallback.behavior`, `minItems: 1` on `triggers` and `required` fields; each
/// failure is one cause, worded by kube-openapi (`spec.cooldownPeriod in body should be
/// greater than or equal to 0`).
#[tokio::test]
async fn custom_resources_are_validated_against_their_schema() {
    let server = TestApiServer::start().await.unwrap();
    register_corpus_crd(&server, "keda/keda.sh_scaledobjects.yaml").await;
    let raw = Raw::new(&server.url());
    let path = "/apis/keda.sh/v1alpha1/namespaces/default/scaledobjects";
    let bad = json!({"apiVersion": "keda.sh/v1alpha1", "kind": "ScaledObject",
        "metadata": {"name": "so"},
        "spec": {"cooldownPeriod": -5, "triggers": [{"type": "cpu", "metadata": {}}],
                 "fallback": {"failureThreshold": 3, "replicas": 1, "behavior": "panic"}}});
    let r = raw.post(path, &bad).await;
    assert_eq!(r.status, 422, "{}", r.body);
    let mut no_triggers = bad.clone();
    no_triggers["spec"]["triggers"] = json!([]);
    let r2 = raw.post(path, &no_triggers).await;
    assert!(
        causes(&r2).contains(&(
            "FieldValueInvalid".to_owned(),
            "spec.triggers".to_owned(),
            "Invalid value: 0: spec.triggers in body should have at least 1 items".to_owned()
        )),
        "{}",
        r2.body
    );
    let got = causes(&r);
    let fields: Vec<&str> = got.iter().map(|c| c.1.as_str()).collect();
    assert_eq!(
        fields,
        [
            "spec.cooldownPeriod",
            "spec.fallback.behavior",
            "spec.scaleTargetRef"
        ]
    );
    assert_eq!(
        got[0],
        (
            "FieldValueInvalid".to_owned(),
            "spec.cooldownPeriod".to_owned(),
            "Invalid value: -5: spec.cooldownPeriod in body should be greater than or equal to 0"
                .to_owned()
        )
    );
    assert_eq!(got[1].0, "FieldValueNotSupported");
    assert_eq!(got[2].0, "FieldValueRequired");
    assert!(
        r.body["message"].as_str().unwrap().starts_with(
            "ScaledObject.keda.sh \"so\" is invalid: [spec.cooldownPeriod: Invalid value: -5"
        ),
        "{}",
        r.body["message"]
    );
    // A wrong type is a 422 for custom resources (the schema validator reports it).
    let typed = json!({"apiVersion": "keda.sh/v1alpha1", "kind": "ScaledObject",
        "metadata": {"name": "so"},
        "spec": {"scaleTargetRef": {"name": "web"}, "triggers": [{"type": "cpu", "metadata": {}}],
                 "cooldownPeriod": "often"}});
    let r = raw.post(path, &typed).await;
    assert_eq!(r.status, 422);
    assert_eq!(
        causes(&r),
        [(
            "FieldValueTypeInvalid".to_owned(),
            "spec.cooldownPeriod".to_owned(),
            "Invalid value: \"string\": spec.cooldownPeriod in body must be of type integer: \"string\"".to_owned()
        )]
    );
    server.shutdown().await;
}

/// apiextensions-apiserver prunes fields the structural schema does not declare and applies
/// schema defaults inside objects that are present (KEDA's `fallback.behavior: static`);
/// under Strict the unknown fields are a 400 instead.
#[tokio::test]
async fn custom_resources_are_pruned_and_defaulted() {
    let server = TestApiServer::start().await.unwrap();
    register_corpus_crd(&server, "keda/keda.sh_scaledobjects.yaml").await;
    let raw = Raw::new(&server.url());
    let path = "/apis/keda.sh/v1alpha1/namespaces/default/scaledobjects";
    let so = json!({"apiVersion": "keda.sh/v1alpha1", "kind": "ScaledObject",
        "metadata": {"name": "so", "colour": "red"},
        "spec": {"scaleTargetRef": {"name": "web", "extra": 1}, "triggers": [{"type": "cpu", "metadata": {"value": "50"}, "junk": true}],
                 "fallback": {"failureThreshold": 3, "replicas": 1}, "notInSchema": {"a": 1}}});
    let strict = raw
        .post(&format!("{path}?fieldValidation=Strict"), &so)
        .await;
    assert_eq!(strict.status, 400);
    assert_eq!(
        strict.body["message"],
        "ScaledObject in version \"v1alpha1\" cannot be handled as a ScaledObject: strict decoding error: unknown field \"metadata.colour\", unknown field \"spec.notInSchema\", unknown field \"spec.scaleTargetRef.extra\", unknown field \"spec.triggers[0].junk\""
    );
    let r = raw.post(path, &so).await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(warnings(&r).len(), 4);
    let stored = raw.get(&format!("{path}/so")).await.body;
    let spec = &stored["spec"];
    assert!(spec.get("notInSchema").is_none());
    assert!(spec["scaleTargetRef"].get("extra").is_none());
    assert!(spec["triggers"][0].get("junk").is_none());
    assert!(stored["metadata"].get("colour").is_none());
    assert_eq!(spec["triggers"][0]["metadata"]["value"], "50");
    assert_eq!(spec["fallback"]["behavior"], "static", "default applied");
    server.shutdown().await;
}

/// Defaults of flux's Kustomization (`spec.force: false`, and `status.observedGeneration: -1`,
/// which the real server shows on read even though status is dropped on create) and its
/// `pattern` on `spec.interval`.
#[tokio::test]
async fn defaults_and_patterns_of_a_flux_kustomization() {
    let server = TestApiServer::start().await.unwrap();
    register_corpus_crd(
        &server,
        "flux/kustomize.toolkit.fluxcd.io_kustomizations.yaml",
    )
    .await;
    let raw = Raw::new(&server.url());
    let path = "/apis/kustomize.toolkit.fluxcd.io/v1/namespaces/default/kustomizations";
    let mut k = json!({"apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization",
        "metadata": {"name": "apps"},
        "spec": {"interval": "5 minutes", "prune": true,
                 "sourceRef": {"kind": "GitRepository", "name": "repo"}}});
    let r = raw.post(path, &k).await;
    assert_eq!(r.status, 422);
    assert_eq!(
        causes(&r),
        [(
            "FieldValueInvalid".to_owned(),
            "spec.interval".to_owned(),
            "Invalid value: \"5 minutes\": spec.interval in body should match '^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$'".to_owned()
        )]
    );
    k["spec"]["interval"] = json!("5m");
    let r = raw.post(path, &k).await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.body["spec"]["force"], false);
    assert_eq!(r.body["status"]["observedGeneration"], -1);
    server.shutdown().await;
}

/// `x-kubernetes-preserve-unknown-fields: true` keeps a subtree as sent (Tekton's
/// `params[].default`), while undeclared fields elsewhere are pruned.
#[tokio::test]
async fn preserve_unknown_fields_subtrees_are_kept() {
    let server = TestApiServer::start().await.unwrap();
    register_corpus_crd(&server, "tekton/tekton.dev_tasks.yaml").await;
    let raw = Raw::new(&server.url());
    let path = "/apis/tekton.dev/v1/namespaces/default/tasks";
    let t = json!({"apiVersion": "tekton.dev/v1", "kind": "Task", "metadata": {"name": "t"},
        "spec": {"params": [{"name": "p", "default": {"free": ["form", {"x": 1}]}, "surplus": 1}],
                 "steps": [{"name": "s", "image": "busybox"}]}});
    let r = raw.post(path, &t).await;
    assert_eq!(r.status, 201, "{}", r.body);
    let stored = raw.get(&format!("{path}/t")).await.body;
    assert_eq!(
        stored["spec"]["params"][0]["default"],
        json!({"free": ["form", {"x": 1}]})
    );
    assert!(stored["spec"]["params"][0].get("surplus").is_none());
    server.shutdown().await;
}

/// `x-kubernetes-embedded-resource` objects must carry `apiVersion` and `kind`
/// (`objectmeta.validateEmbeddedResource`); Crossplane's pipeline step `input` is one.
#[tokio::test]
async fn embedded_resources_need_api_version_and_kind() {
    let server = TestApiServer::start().await.unwrap();
    register_corpus_crd(
        &server,
        "crossplane/apiextensions.crossplane.io_compositions.yaml",
    )
    .await;
    let raw = Raw::new(&server.url());
    let path = "/apis/apiextensions.crossplane.io/v1/compositions";
    let mut c = json!({"apiVersion": "apiextensions.crossplane.io/v1", "kind": "Composition",
        "metadata": {"name": "c"},
        "spec": {"compositeTypeRef": {"apiVersion": "example.org/v1", "kind": "XThing"},
                 "pipeline": [{"step": "s", "functionRef": {"name": "f"},
                               "input": {"kind": "Input", "metadata": {"name": "i", "junk": 1}, "x": 1}}]}});
    let r = raw.post(path, &c).await;
    assert_eq!(r.status, 422, "{}", r.body);
    assert_eq!(
        causes(&r),
        [(
            "FieldValueRequired".to_owned(),
            "spec.pipeline[0].input.apiVersion".to_owned(),
            "Required value".to_owned()
        )]
    );
    c["spec"]["pipeline"][0]["input"]["apiVersion"] = json!("example.org/v1");
    let r = raw.post(path, &c).await;
    assert_eq!(r.status, 201, "{}", r.body);
    let input = &r.body["spec"]["pipeline"][0]["input"];
    assert_eq!(input["x"], 1, "preserved");
    assert!(
        input["metadata"].get("junk").is_none(),
        "embedded metadata is ObjectMeta"
    );
    assert_eq!(r.body["spec"]["mode"], "Pipeline", "default applied");
    server.shutdown().await;
}

/// CRD validation ratcheting (`CRDValidationRatcheting`, on by default since 1.30): an update
/// may keep a value that was already invalid, not introduce a new one; and the real server
/// defaults what it reads, so a default added to the CRD later shows on stored objects.
#[tokio::test]
async fn ratcheting_and_defaults_added_later() {
    let server = TestApiServer::start().await.unwrap();
    let crd = |with_default: bool, max: i64| {
        let size = json!({"type": "integer", "maximum": max});
        let mut mode = json!({"type": "string"});
        if with_default {
            mode["default"] = json!("auto");
        }
        json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "gadgets.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced",
                     "names": {"plural": "gadgets", "kind": "Gadget"},
                     "versions": [{"name": "v1", "served": true, "storage": true,
                        "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                            "spec": {"type": "object", "properties": {
                                "size": size, "mode": mode, "note": {"type": "string"}}}}}}}]}})
    };
    let raw = Raw::new(&server.url());
    let crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
    assert_eq!(raw.post(crds, &crd(false, 100)).await.status, 201);
    let path = "/apis/example.com/v1/namespaces/default/gadgets";
    let g = json!({"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": {"name": "g"},
                   "spec": {"size": 50}});
    assert_eq!(raw.post(path, &g).await.status, 201);
    // Tighten the schema: size 50 is now invalid, and add a default.
    let mut current = raw.get(&format!("{crds}/gadgets.example.com")).await.body;
    let tighter = crd(true, 10);
    current["spec"] = tighter["spec"].clone();
    let r = raw
        .put(&format!("{crds}/gadgets.example.com"), &current)
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let stored = raw.get(&format!("{path}/g")).await.body;
    assert_eq!(stored["spec"]["mode"], "auto", "defaulted on read");
    let mut update = stored.clone();
    update["spec"]["note"] = json!("hi");
    let r = raw.put(&format!("{path}/g"), &update).await;
    assert_eq!(r.status, 200, "unchanged invalid size ratchets: {}", r.body);
    update = r.body.clone();
    update["spec"]["size"] = json!(60);
    let r = raw.put(&format!("{path}/g"), &update).await;
    assert_eq!(r.status, 422);
    assert_eq!(causes(&r)[0].1, "spec.size");
    server.shutdown().await;
}

/// kubectl shows the server's 422 as it does against a real cluster (`The Deployment "web"
/// is invalid: spec.selector: Required value`), and `kubectl apply --validate=strict` fails
/// on an unknown field with the server's strict decoding error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_shows_the_servers_validation_errors() {
    let server = TestApiServer::start().await.unwrap();
    let Some(k) = Kubectl::for_server(&server, "kubectl_shows_the_servers_validation_errors")
    else {
        return;
    };
    let invalid = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    metadata:\n      labels: {app: web}\n    spec:\n      containers:\n      - name: web\n        image: nginx\n";
    let out = k
        .output(&["create", "-f", "-"], Some(invalid.as_bytes()))
        .await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("The Deployment \"web\" is invalid: spec.selector: Required value"),
        "{stderr}"
    );

    let unknown =
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: b\nbogus: 1\n";
    let out = k
        .output(
            &["apply", "--validate=strict", "-f", "-"],
            Some(unknown.as_bytes()),
        )
        .await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("strict decoding error: unknown field \"bogus\""),
        "{stderr}"
    );
    // kubectl's default (--validate=true, strict when the server validates) and the
    // server-side check agree: nothing was stored.
    let raw = Raw::new(&server.url());
    assert_eq!(
        raw.get("/api/v1/namespaces/default/configmaps/cm")
            .await
            .status,
        404
    );
    // With --validate=false kubectl sends Ignore: created, the field dropped.
    let out = k
        .output(
            &["apply", "--validate=false", "-f", "-"],
            Some(unknown.as_bytes()),
        )
        .await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let cm = raw
        .get("/api/v1/namespaces/default/configmaps/cm")
        .await
        .body;
    assert!(cm.get("bogus").is_none() && cm["data"]["a"] == "b", "{cm}");
    server.shutdown().await;
}

/// `x-kubernetes-validations` CEL rules (apiextensions-apiserver evaluates them with cel-go):
/// KEDA's `spec` rule compares two fields (`minReplicaCount must be less than or equal to
/// maxReplicaCount`, a cause at `spec` valued with the schema type), and Crossplane's
/// transition rule `self == oldSelf` makes `compositeTypeRef` immutable on update while the
/// create is not checked against it.
#[tokio::test]
async fn cel_rules_and_transition_rules() {
    let server = TestApiServer::start().await.unwrap();
    register_corpus_crd(&server, "keda/keda.sh_scaledobjects.yaml").await;
    register_corpus_crd(
        &server,
        "crossplane/apiextensions.crossplane.io_compositions.yaml",
    )
    .await;
    let raw = Raw::new(&server.url());
    let path = "/apis/keda.sh/v1alpha1/namespaces/default/scaledobjects";
    let mut so = json!({"apiVersion": "keda.sh/v1alpha1", "kind": "ScaledObject",
        "metadata": {"name": "so"},
        "spec": {"scaleTargetRef": {"name": "web"}, "triggers": [{"type": "cpu", "metadata": {}}],
                 "minReplicaCount": 5, "maxReplicaCount": 2}});
    let r = raw.post(path, &so).await;
    assert_eq!(r.status, 422, "{}", r.body);
    assert_eq!(
        causes(&r),
        [(
            "FieldValueInvalid".to_owned(),
            "spec".to_owned(),
            "Invalid value: \"object\": minReplicaCount must be less than or equal to maxReplicaCount".to_owned()
        )]
    );
    so["spec"]["maxReplicaCount"] = json!(10);
    assert_eq!(raw.post(path, &so).await.status, 201);

    let path = "/apis/apiextensions.crossplane.io/v1/compositions";
    let c = json!({"apiVersion": "apiextensions.crossplane.io/v1", "kind": "Composition",
        "metadata": {"name": "c"},
        "spec": {"compositeTypeRef": {"apiVersion": "example.org/v1", "kind": "XThing"},
                 "pipeline": [{"step": "s", "functionRef": {"name": "f"}}]}});
    let created = raw.post(path, &c).await;
    assert_eq!(created.status, 201, "{}", created.body);
    let mut changed = created.body.clone();
    changed["spec"]["compositeTypeRef"]["kind"] = json!("XOther");
    let r = raw.put(&format!("{path}/c"), &changed).await;
    assert_eq!(r.status, 422, "{}", r.body);
    assert_eq!(
        causes(&r),
        [(
            "FieldValueInvalid".to_owned(),
            "spec.compositeTypeRef".to_owned(),
            "Invalid value: \"object\": Value is immutable".to_owned()
        )]
    );
    let mut ok = created.body.clone();
    ok["metadata"]["labels"] = json!({"a": "b"});
    assert_eq!(raw.put(&format!("{path}/c"), &ok).await.status, 200);
    server.shutdown().await;
}
