//! The configuration objects come from the routes: paths, rules, versions and settings.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinition, CustomResourceDefinitionVersion,
};
use kinform_webhook::admission::{mutator_fn, validator_fn};
use kinform_webhook::conversion::hub;
use kinform_webhook::{
    AdmissionSettings, ClientConfig, ConfigError, FailurePolicy, Operation, Request, SideEffects,
    Verdict, Webhooks,
};
use serde_json::json;

use crate::support::{Widget, v1, v2};

fn webhooks() -> Webhooks {
    Webhooks::new()
        .validate_with(
            validator_fn(|_: &Request<Widget>| Verdict::allow()),
            AdmissionSettings::default()
                .operations([Operation::Create, Operation::Update, Operation::Delete])
                .failure_policy(FailurePolicy::Ignore)
                .side_effects(SideEffects::NoneOnDryRun)
                .sub_resource("status")
                .timeout_seconds(5)
                .match_condition(
                    "not-system",
                    "!request.userInfo.username.startsWith('system:')",
                ),
        )
        .mutate(mutator_fn(|_: &Request<Widget>, _: &mut Widget| {
            Verdict::allow()
        }))
        .convert(hub::<v2::Gadget>().spoke::<v1::Gadget>())
}

#[test]
fn webhook_configurations_follow_the_routes() {
    let w = webhooks();
    assert_eq!(
        w.paths(),
        [
            "/validate-example-com-v1-widget",
            "/mutate-example-com-v1-widget",
            "/convert/gadgets.example.com"
        ]
    );
    let client = ClientConfig::service("system", "webhook-service")
        .port(9443)
        .ca_bundle("PEM");
    let validating = w
        .validating_webhook_configuration("widgets", &client)
        .unwrap();
    assert_eq!(
        serde_json::to_value(&validating).unwrap(),
        json!({
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingWebhookConfiguration",
            "metadata": {"name": "widgets"},
            "webhooks": [{
                "name": "vwidget.example.com",
                "admissionReviewVersions": ["v1"],
                "clientConfig": {
                    "caBundle": "UEVN",
                    "service": {"namespace": "system", "name": "webhook-service", "port": 9443, "path": "/validate-example-com-v1-widget"}
                },
                "failurePolicy": "Ignore",
                "matchPolicy": "Equivalent",
                "matchConditions": [{"name": "not-system", "expression": "!request.userInfo.username.startsWith('system:')"}],
                "rules": [{
                    "apiGroups": ["example.com"],
                    "apiVersions": ["v1"],
                    "operations": ["CREATE", "UPDATE", "DELETE"],
                    "resources": ["widgets", "widgets/status"],
                    "scope": "Namespaced"
                }],
                "sideEffects": "NoneOnDryRun",
                "timeoutSeconds": 5
            }]
        })
    );
    let mutating = w
        .mutating_webhook_configuration(
            "widgets",
            &ClientConfig::url("https://127.0.0.1:8443/").inject_ca_from("system", "serving-cert"),
        )
        .unwrap();
    let mutating = serde_json::to_value(&mutating).unwrap();
    assert_eq!(
        mutating["metadata"]["annotations"],
        json!({"cert-manager.io/inject-ca-from": "system/serving-cert"})
    );
    let hook = &mutating["webhooks"][0];
    assert_eq!(hook["name"], "mwidget.example.com");
    assert_eq!(
        hook["clientConfig"],
        json!({"url": "https://127.0.0.1:8443/mutate-example-com-v1-widget"})
    );
    assert_eq!(hook["reinvocationPolicy"], "Never");
    assert_eq!(hook["failurePolicy"], "Fail");
    assert_eq!(hook["rules"][0]["operations"], json!(["CREATE", "UPDATE"]));
}

fn gadget_crd(versions: &[&str]) -> CustomResourceDefinition {
    let mut crd = CustomResourceDefinition::default();
    crd.metadata.name = Some("gadgets.example.com".into());
    crd.spec.group = "example.com".into();
    crd.spec.versions = versions
        .iter()
        .map(|v| CustomResourceDefinitionVersion {
            name: (*v).into(),
            served: true,
            storage: *v == "v2",
            ..Default::default()
        })
        .collect();
    crd
}

#[test]
fn crd_conversion_points_at_the_converter() {
    let w = webhooks();
    let client =
        ClientConfig::service("system", "webhook-service").inject_ca_from("system", "cert");
    let mut crd = gadget_crd(&["v1", "v2"]);
    w.set_crd_conversion(&mut crd, &client).unwrap();
    assert_eq!(
        serde_json::to_value(&crd.spec.conversion).unwrap(),
        json!({
            "strategy": "Webhook",
            "webhook": {
                "conversionReviewVersions": ["v1"],
                "clientConfig": {"service": {"namespace": "system", "name": "webhook-service", "path": "/convert/gadgets.example.com"}}
            }
        })
    );
    assert_eq!(
        crd.metadata.annotations.unwrap()["cert-manager.io/inject-ca-from"],
        "system/cert"
    );
    // A CRD with a version the converter does not know (or without one it knows) is refused.
    for versions in [&["v1", "v2", "v3"][..], &["v2"][..]] {
        let err = w
            .set_crd_conversion(&mut gadget_crd(versions), &client)
            .unwrap_err();
        assert!(matches!(err, ConfigError::Crd { .. }), "{err}");
    }
    let mut other = gadget_crd(&["v1"]);
    other.metadata.name = Some("others.example.com".into());
    assert!(w.set_crd_conversion(&mut other, &client).is_err());
}

#[test]
fn ca_bundle_from_file() {
    let dir = tempfile::tempdir().unwrap();
    let ca = kinform_webhook::testing::TestCa::new().unwrap();
    let path = dir.path().join("ca.crt");
    std::fs::write(&path, ca.ca_pem()).unwrap();
    let client = ClientConfig::service("ns", "svc")
        .ca_bundle_from_file(&path)
        .unwrap();
    let config = Webhooks::new()
        .validate(validator_fn(|_: &Request<Widget>| Verdict::allow()))
        .validating_webhook_configuration("x", &client)
        .unwrap();
    assert_eq!(
        config.webhooks.unwrap()[0]
            .client_config
            .ca_bundle
            .as_ref()
            .unwrap()
            .0,
        ca.ca_pem().as_bytes()
    );
    std::fs::write(&path, "not a certificate").unwrap();
    assert!(matches!(
        ClientConfig::service("ns", "svc").ca_bundle_from_file(&path),
        Err(ConfigError::CaBundle { .. })
    ));
    assert!(
        ClientConfig::service("ns", "svc")
            .ca_bundle_from_file(dir.path().join("missing"))
            .is_err()
    );
}

#[test]
fn unusable_descriptions_are_refused() {
    let allow = || validator_fn(|_: &Request<Widget>| Verdict::allow());
    let cases: Vec<(Webhooks, &str)> = vec![
        (
            Webhooks::new()
                .validate(allow())
                .validate_with(allow(), AdmissionSettings::default().path("/other")),
            "is used twice",
        ),
        (
            Webhooks::new().validate(allow()).validate_with(
                allow(),
                AdmissionSettings::default().name("other.example.com"),
            ),
            "is served twice",
        ),
        (
            Webhooks::new().validate_with(allow(), AdmissionSettings::default().name("Bad_Name")),
            "is not a DNS name",
        ),
        (
            Webhooks::new().validate_with(allow(), AdmissionSettings::default().path("/healthz")),
            "health path",
        ),
        (
            Webhooks::new().validate_with(allow(), AdmissionSettings::default().path("relative")),
            "does not start with '/'",
        ),
        (
            Webhooks::new().validate_with(allow(), AdmissionSettings::default().operations([])),
            "has no operations",
        ),
        (
            Webhooks::new()
                .validate_with(allow(), AdmissionSettings::default().timeout_seconds(31)),
            "timeout outside 1 to 30",
        ),
        (
            Webhooks::new().convert(
                hub::<v2::Gadget>()
                    .spoke::<v1::Gadget>()
                    .spoke::<v1::Gadget>(),
            ),
            "version v1 is given twice",
        ),
        (
            Webhooks::new()
                .convert(hub::<v2::Gadget>())
                .convert(hub::<v1::Gadget>().path("/other")),
            "has two converters",
        ),
    ];
    for (w, expect) in cases {
        let err = w.check().unwrap_err().to_string();
        assert!(err.contains(expect), "{err} (expected {expect:?})");
    }
    // The default name of a core-group kind has three labels.
    let w = Webhooks::new().validate(validator_fn(
        |_: &Request<k8s_openapi::api::core::v1::ConfigMap>| Verdict::allow(),
    ));
    w.check().unwrap();
    let (path, _, _, name) = w.admission_routes().next().unwrap();
    assert_eq!(
        (path, name),
        ("/validate--v1-configmap", "vconfigmap.core.kinform.io")
    );
}
