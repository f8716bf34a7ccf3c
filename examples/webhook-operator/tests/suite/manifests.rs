//! `deploy/` is what the code produces, and what it registers is what the server serves.

use std::path::Path;

use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use webhook_operator::manifests::{self, files};
use webhook_operator::webhooks::webhooks;

fn deploy() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy")
}

/// Every file of `deploy/` is the code's output. To update them after a change:
/// `cargo run -p webhook-operator -- manifests --out examples/webhook-operator/deploy`.
#[test]
fn deploy_is_current() {
    let made = files().unwrap();
    let mut names: Vec<String> = std::fs::read_dir(deploy())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let mut expected: Vec<String> = made.iter().map(|(n, _)| (*n).to_owned()).collect();
    expected.sort();
    assert_eq!(
        names, expected,
        "deploy/ holds exactly the files the code makes"
    );
    for (name, text) in made {
        let on_disk = std::fs::read_to_string(deploy().join(name)).unwrap();
        assert!(
            on_disk == text,
            "deploy/{name} differs from what the code makes; run \
             `cargo run -p webhook-operator -- manifests --out examples/webhook-operator/deploy`"
        );
    }
}

/// The files read back into the objects the code makes, and every webhook and the
/// conversion point at a path the server serves.
#[test]
fn deploy_registers_what_is_served() {
    let read = |name: &str| std::fs::read_to_string(deploy().join(name)).unwrap();
    let crd: CustomResourceDefinition = serde_saphyr::from_str(&read("crd.yaml")).unwrap();
    assert_eq!(crd, manifests::crd().unwrap());
    let validating: ValidatingWebhookConfiguration =
        serde_saphyr::from_str(&read("validating-webhook-configuration.yaml")).unwrap();
    let mutating: MutatingWebhookConfiguration =
        serde_saphyr::from_str(&read("mutating-webhook-configuration.yaml")).unwrap();

    let served = webhooks();
    let mut registered: Vec<String> = Vec::new();
    for client in validating
        .webhooks
        .unwrap()
        .into_iter()
        .map(|w| w.client_config)
        .chain(
            mutating
                .webhooks
                .unwrap()
                .into_iter()
                .map(|w| w.client_config),
        )
    {
        let service = client.service.unwrap();
        assert_eq!(
            (
                service.namespace.as_str(),
                service.name.as_str(),
                service.port
            ),
            (manifests::NAMESPACE, manifests::SERVICE, Some(443))
        );
        registered.push(service.path.unwrap());
    }
    let conversion = crd.spec.conversion.unwrap();
    assert_eq!(conversion.strategy, "Webhook");
    let webhook = conversion.webhook.unwrap();
    assert_eq!(webhook.conversion_review_versions, ["v1"]);
    registered.push(
        webhook
            .client_config
            .unwrap()
            .service
            .unwrap()
            .path
            .unwrap(),
    );
    assert_eq!(registered, served.paths());

    let versions: Vec<(String, bool)> = crd
        .spec
        .versions
        .iter()
        .map(|v| (v.name.clone(), v.storage))
        .collect();
    assert_eq!(
        versions,
        [("v1".to_owned(), false), ("v2".to_owned(), true)]
    );
    assert!(
        read("certificate.yaml").contains(&format!("secretName: {}", manifests::SECRET)),
        "the Certificate writes the Secret the Deployment mounts"
    );
    assert!(read("deployment.yaml").contains(&format!("secretName: {}", manifests::SECRET)));
}
