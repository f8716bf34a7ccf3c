//! The deployment manifests of `deploy/`, made from the code: the CRD with its conversion
//! stanza, the two webhook configurations (from [`webhooks`], so
//! their paths and rules are the server's), the Service and Deployment, and a cert-manager
//! self-signed Issuer and Certificate whose Secret the pod mounts and whose CA
//! cert-manager's CA injector writes into every `caBundle`
//! (`cert-manager.io/inject-ca-from`).
//!
//! `cargo run -p webhook-operator -- manifests --out examples/webhook-operator/deploy`
//! writes them; the test `manifests::deploy_is_current` fails when `deploy/` differs.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kinform::crd::merge_crds;
use kinform::webhook::{ClientConfig, ConfigError};
use serde_json::{Value, json};

use crate::api::{v1, v2};
use crate::webhooks::webhooks;

/// The namespace everything runs in.
pub const NAMESPACE: &str = "webhook-operator-system";
/// The Service (and Deployment) name.
pub const SERVICE: &str = "webhook-operator";
/// The cert-manager Certificate.
pub const CERTIFICATE: &str = "webhook-operator-serving-cert";
/// The Secret cert-manager writes the certificate into.
pub const SECRET: &str = "webhook-operator-tls";
/// The port the server listens on in the pod.
pub const PORT: u16 = 9443;
/// The name of both webhook configurations.
pub const CONFIGURATION: &str = "webhook-operator";
/// Where the Secret is mounted in the pod.
pub const CERT_DIR: &str = "/tls";

/// Why the manifests cannot be made.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ManifestError {
    /// The two versions' CRDs do not merge.
    #[error("merging the Queue CRDs: {0}")]
    Merge(#[from] kinform::crd::MergeError),
    /// The webhook description is unusable.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// An object does not print as YAML.
    #[error("printing {file} as YAML: {message}")]
    Yaml {
        /// The file.
        file: &'static str,
        /// The serializer's error.
        message: String,
    },
}

/// How kube-apiserver reaches the server: the Service on 443, the CA injected by
/// cert-manager.
pub fn client_config() -> ClientConfig {
    ClientConfig::service(NAMESPACE, SERVICE)
        .port(443)
        .inject_ca_from(NAMESPACE, CERTIFICATE)
}

/// The Queue CRD: both versions, v2 stored, converted by the webhook as
/// [`client_config`] reaches it.
pub fn crd() -> Result<CustomResourceDefinition, ManifestError> {
    crd_for(&client_config())
}

/// The Queue CRD converted by the webhook reached through `client` (a test gives the
/// `caBundle` cert-manager would inject).
pub fn crd_for(client: &ClientConfig) -> Result<CustomResourceDefinition, ManifestError> {
    let mut crd = merge_crds(vec![v1::Queue::crd(), v2::Queue::crd()], "v2")?;
    webhooks().set_crd_conversion(&mut crd, client)?;
    Ok(crd)
}

fn yaml(file: &'static str, documents: &[Value]) -> Result<String, ManifestError> {
    let mut out = String::new();
    for (i, document) in documents.iter().enumerate() {
        if i > 0 {
            out.push_str("---\n");
        }
        out.push_str(
            &serde_saphyr::to_string(document).map_err(|e| ManifestError::Yaml {
                file,
                message: e.to_string(),
            })?,
        );
    }
    Ok(out)
}

fn value(object: &impl serde::Serialize) -> Value {
    serde_json::to_value(object).unwrap_or(Value::Null)
}

/// The files of `deploy/`, by name, in the order to apply them.
pub fn files() -> Result<Vec<(&'static str, String)>, ManifestError> {
    let hooks = webhooks();
    let client = client_config();
    let dns = [
        format!("{SERVICE}.{NAMESPACE}.svc"),
        format!("{SERVICE}.{NAMESPACE}.svc.cluster.local"),
    ];
    let labels = json!({"app.kubernetes.io/name": SERVICE});
    let namespace =
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}});
    let issuer = json!({
        "apiVersion": "cert-manager.io/v1",
        "kind": "Issuer",
        "metadata": {"name": "webhook-operator-selfsigned", "namespace": NAMESPACE},
        "spec": {"selfSigned": {}}
    });
    let certificate = json!({
        "apiVersion": "cert-manager.io/v1",
        "kind": "Certificate",
        "metadata": {"name": CERTIFICATE, "namespace": NAMESPACE},
        "spec": {
            "secretName": SECRET,
            "dnsNames": dns,
            "issuerRef": {"kind": "Issuer", "name": "webhook-operator-selfsigned"}
        }
    });
    let service = json!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": SERVICE, "namespace": NAMESPACE, "labels": labels},
        "spec": {
            "selector": labels,
            "ports": [{"name": "webhook", "port": 443, "targetPort": PORT, "protocol": "TCP"}]
        }
    });
    let deployment = json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": SERVICE, "namespace": NAMESPACE, "labels": labels},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "containers": [{
                        "name": "webhook",
                        "image": "webhook-operator:latest",
                        "args": [
                            "serve",
                            "--addr", format!("0.0.0.0:{PORT}"),
                            "--cert", format!("{CERT_DIR}/tls.crt"),
                            "--key", format!("{CERT_DIR}/tls.key")
                        ],
                        "ports": [{"name": "webhook", "containerPort": PORT}],
                        "readinessProbe": {"httpGet": {"path": "/readyz", "port": PORT, "scheme": "HTTPS"}},
                        "livenessProbe": {"httpGet": {"path": "/healthz", "port": PORT, "scheme": "HTTPS"}},
                        "volumeMounts": [{"name": "tls", "mountPath": CERT_DIR, "readOnly": true}],
                        "securityContext": {"allowPrivilegeEscalation": false, "readOnlyRootFilesystem": true, "runAsNonRoot": true}
                    }],
                    "volumes": [{"name": "tls", "secret": {"secretName": SECRET}}]
                }
            }
        }
    });
    Ok(vec![
        ("namespace.yaml", yaml("namespace.yaml", &[namespace])?),
        ("crd.yaml", kinform::crd::to_yaml(&crd()?)),
        (
            "certificate.yaml",
            yaml("certificate.yaml", &[issuer, certificate])?,
        ),
        (
            "deployment.yaml",
            yaml("deployment.yaml", &[service, deployment])?,
        ),
        (
            "validating-webhook-configuration.yaml",
            yaml(
                "validating-webhook-configuration.yaml",
                &[value(&hooks.validating_webhook_configuration(
                    CONFIGURATION,
                    &client,
                )?)],
            )?,
        ),
        (
            "mutating-webhook-configuration.yaml",
            yaml(
                "mutating-webhook-configuration.yaml",
                &[value(
                    &hooks.mutating_webhook_configuration(CONFIGURATION, &client)?,
                )],
            )?,
        ),
    ])
}
