//! The configuration objects of a [`Webhooks`] description: the
//! `ValidatingWebhookConfiguration`, the `MutatingWebhookConfiguration` and each CRD's
//! `spec.conversion`, as k8s-openapi types, made from the same routes the server answers on
//! (paths, kinds, versions, operations and settings), so the two cannot drift apart.
//!
//! Where kube-apiserver reaches the server is a [`ClientConfig`]: a Service in the cluster
//! (`service: {namespace, name, port, path}`) or a base URL, and the CA that signed the
//! server's certificate (`caBundle`) given as PEM or read from a file, or left for
//! cert-manager's CA injector to fill (the `cert-manager.io/inject-ca-from` annotation, set by
//! [`ClientConfig::inject_ca_from`]).
//!
//! What controller-gen derives from `+kubebuilder:webhook` markers is derived here from the
//! handler's type `K` (group, version, plural, scope) and its
//! [`AdmissionSettings`](crate::AdmissionSettings).

use std::collections::BTreeMap;
use std::path::Path;

use k8s_openapi::ByteString;
use k8s_openapi::api::admissionregistration::v1 as admission;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1 as apiextensions;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kinform_core::Scope;

use crate::error::ConfigError;
use crate::webhooks::{AdmissionRoute, AdmissionType, Webhooks};

/// The annotation cert-manager's CA injector reads (`<namespace>/<certificate>`).
pub const INJECT_CA_FROM: &str = "cert-manager.io/inject-ca-from";

/// Where kube-apiserver reaches the webhook server.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Endpoint {
    /// A Service in the cluster.
    Service {
        /// Its namespace.
        namespace: String,
        /// Its name.
        name: String,
        /// Its port (kube-apiserver's default 443 when `None`).
        port: Option<i32>,
    },
    /// A base URL, `https://host:port` (each webhook's path is appended).
    Url(String),
}

/// How kube-apiserver reaches the server and trusts its certificate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientConfig {
    endpoint: Endpoint,
    ca_bundle: Option<Vec<u8>>,
    inject_ca_from: Option<String>,
}

impl ClientConfig {
    /// The Service `namespace/name`, port 443.
    pub fn service(namespace: impl Into<String>, name: impl Into<String>) -> Self {
        Self::new(Endpoint::Service {
            namespace: namespace.into(),
            name: name.into(),
            port: None,
        })
    }

    /// A base URL such as `https://127.0.0.1:8443` (no trailing path).
    pub fn url(base: impl Into<String>) -> Self {
        let mut base = base.into();
        while base.ends_with('/') {
            base.pop();
        }
        Self::new(Endpoint::Url(base))
    }

    fn new(endpoint: Endpoint) -> Self {
        Self {
            endpoint,
            ca_bundle: None,
            inject_ca_from: None,
        }
    }

    /// The Service's port (for [`ClientConfig::service`]).
    pub fn port(mut self, port: i32) -> Self {
        if let Endpoint::Service { port: p, .. } = &mut self.endpoint {
            *p = Some(port);
        }
        self
    }

    /// The PEM of the CA that signed the server's certificate (`caBundle`).
    pub fn ca_bundle(mut self, pem: impl Into<Vec<u8>>) -> Self {
        self.ca_bundle = Some(pem.into());
        self
    }

    /// The `caBundle` read from a PEM file (cert-manager's `ca.crt`), which must hold at least
    /// one certificate.
    pub fn ca_bundle_from_file(self, path: impl AsRef<Path>) -> Result<Self, ConfigError> {
        let path = path.as_ref();
        let pem = std::fs::read(path).map_err(|e| ConfigError::CaBundle {
            path: path.to_owned(),
            message: e.to_string(),
        })?;
        use rustls::pki_types::{CertificateDer, pem::PemObject};
        let count = CertificateDer::pem_slice_iter(&pem)
            .filter(Result::is_ok)
            .count();
        if count == 0 {
            return Err(ConfigError::CaBundle {
                path: path.to_owned(),
                message: "no PEM certificate in it".into(),
            });
        }
        Ok(self.ca_bundle(pem))
    }

    /// Leave `caBundle` empty and annotate the objects with
    /// `cert-manager.io/inject-ca-from: <namespace>/<certificate>`, for cert-manager's CA
    /// injector to fill it.
    pub fn inject_ca_from(mut self, namespace: &str, certificate: &str) -> Self {
        self.inject_ca_from = Some(format!("{namespace}/{certificate}"));
        self
    }

    fn metadata(&self, name: &str) -> ObjectMeta {
        ObjectMeta {
            name: Some(name.to_owned()),
            annotations: self
                .inject_ca_from
                .as_ref()
                .map(|from| BTreeMap::from([(INJECT_CA_FROM.to_owned(), from.clone())])),
            ..ObjectMeta::default()
        }
    }

    fn admission_client(&self, path: &str) -> admission::WebhookClientConfig {
        let ca_bundle = self.ca_bundle.clone().map(ByteString);
        match &self.endpoint {
            Endpoint::Service {
                namespace,
                name,
                port,
            } => admission::WebhookClientConfig {
                ca_bundle,
                service: Some(admission::ServiceReference {
                    name: name.clone(),
                    namespace: namespace.clone(),
                    path: Some(path.to_owned()),
                    port: *port,
                }),
                ..Default::default()
            },
            Endpoint::Url(base) => admission::WebhookClientConfig {
                ca_bundle,
                url: Some(format!("{base}{path}")),
                ..Default::default()
            },
        }
    }

    fn conversion_client(&self, path: &str) -> apiextensions::WebhookClientConfig {
        let ca_bundle = self.ca_bundle.clone().map(ByteString);
        match &self.endpoint {
            Endpoint::Service {
                namespace,
                name,
                port,
            } => apiextensions::WebhookClientConfig {
                ca_bundle,
                service: Some(apiextensions::ServiceReference {
                    name: name.clone(),
                    namespace: namespace.clone(),
                    path: Some(path.to_owned()),
                    port: *port,
                }),
                ..Default::default()
            },
            Endpoint::Url(base) => apiextensions::WebhookClientConfig {
                ca_bundle,
                url: Some(format!("{base}{path}")),
                ..Default::default()
            },
        }
    }
}

fn rule(route: &AdmissionRoute) -> admission::RuleWithOperations {
    let t = &route.target;
    let mut resources = vec![t.plural.to_owned()];
    resources.extend(
        route
            .settings
            .sub_resources
            .iter()
            .map(|s| format!("{}/{s}", t.plural)),
    );
    admission::RuleWithOperations {
        api_groups: Some(vec![t.group.to_owned()]),
        api_versions: Some(vec![t.version.to_owned()]),
        operations: Some(
            route
                .settings
                .operations
                .iter()
                .map(|o| o.as_str().to_owned())
                .collect(),
        ),
        resources: Some(resources),
        scope: Some(
            match t.scope {
                Scope::Namespaced => "Namespaced",
                Scope::Cluster => "Cluster",
            }
            .to_owned(),
        ),
    }
}

fn option_vec<T>(v: Vec<T>) -> Option<Vec<T>> {
    (!v.is_empty()).then_some(v)
}

impl Webhooks {
    /// The `ValidatingWebhookConfiguration` named `name` of every validating route, in the
    /// order they were added (after [`Webhooks::check`]).
    pub fn validating_webhook_configuration(
        &self,
        name: &str,
        client: &ClientConfig,
    ) -> Result<admission::ValidatingWebhookConfiguration, ConfigError> {
        self.check()?;
        let webhooks = self
            .admission
            .iter()
            .filter(|r| r.kind == AdmissionType::Validating)
            .map(|r| {
                let s = &r.settings;
                admission::ValidatingWebhook {
                    admission_review_versions: vec!["v1".into()],
                    client_config: client.admission_client(&r.path),
                    failure_policy: Some(s.failure_policy.as_str().into()),
                    match_conditions: option_vec(s.match_conditions.clone()),
                    match_policy: Some(s.match_policy.as_str().into()),
                    name: r.name.clone(),
                    namespace_selector: s.namespace_selector.clone(),
                    object_selector: s.object_selector.clone(),
                    rules: Some(vec![rule(r)]),
                    side_effects: s.side_effects.as_str().into(),
                    timeout_seconds: Some(s.timeout_seconds),
                }
            })
            .collect();
        Ok(admission::ValidatingWebhookConfiguration {
            metadata: client.metadata(name),
            webhooks: option_vec(webhooks),
        })
    }

    /// The `MutatingWebhookConfiguration` named `name` of every mutating route, in the order
    /// they were added (after [`Webhooks::check`]).
    pub fn mutating_webhook_configuration(
        &self,
        name: &str,
        client: &ClientConfig,
    ) -> Result<admission::MutatingWebhookConfiguration, ConfigError> {
        self.check()?;
        let webhooks = self
            .admission
            .iter()
            .filter(|r| r.kind == AdmissionType::Mutating)
            .map(|r| {
                let s = &r.settings;
                admission::MutatingWebhook {
                    admission_review_versions: vec!["v1".into()],
                    client_config: client.admission_client(&r.path),
                    failure_policy: Some(s.failure_policy.as_str().into()),
                    match_conditions: option_vec(s.match_conditions.clone()),
                    match_policy: Some(s.match_policy.as_str().into()),
                    name: r.name.clone(),
                    namespace_selector: s.namespace_selector.clone(),
                    object_selector: s.object_selector.clone(),
                    reinvocation_policy: Some(s.reinvocation_policy.as_str().into()),
                    rules: Some(vec![rule(r)]),
                    side_effects: s.side_effects.as_str().into(),
                    timeout_seconds: Some(s.timeout_seconds),
                }
            })
            .collect();
        Ok(admission::MutatingWebhookConfiguration {
            metadata: client.metadata(name),
            webhooks: option_vec(webhooks),
        })
    }

    /// The `spec.conversion` of the CRD `<plural>.<group>`: `strategy: Webhook` to the path
    /// of the converter of that kind.
    pub fn crd_conversion(
        &self,
        crd_name: &str,
        client: &ClientConfig,
    ) -> Result<apiextensions::CustomResourceConversion, ConfigError> {
        self.check()?;
        let route = self
            .conversion
            .iter()
            .find(|r| format!("{}.{}", r.converter.plural(), r.converter.group()) == crd_name)
            .ok_or_else(|| ConfigError::Crd {
                crd: crd_name.to_owned(),
                problem: "no converter for it".into(),
            })?;
        Ok(apiextensions::CustomResourceConversion {
            strategy: "Webhook".into(),
            webhook: Some(apiextensions::WebhookConversion {
                client_config: Some(client.conversion_client(&route.path)),
                conversion_review_versions: vec!["v1".into()],
            }),
        })
    }

    /// Sets `crd.spec.conversion` ([`Webhooks::crd_conversion`]) after checking that the
    /// converter knows exactly the CRD's versions, and annotates the CRD for cert-manager
    /// when `client` asks for it.
    pub fn set_crd_conversion(
        &self,
        crd: &mut apiextensions::CustomResourceDefinition,
        client: &ClientConfig,
    ) -> Result<(), ConfigError> {
        let crd_name = crd.metadata.name.clone().unwrap_or_default();
        let conversion = self.crd_conversion(&crd_name, client)?;
        let converter = self
            .conversion
            .iter()
            .map(|r| &r.converter)
            .find(|c| format!("{}.{}", c.plural(), c.group()) == crd_name)
            .ok_or_else(|| ConfigError::Crd {
                crd: crd_name.clone(),
                problem: "no converter for it".into(),
            })?;
        let mut known: Vec<&str> = converter.versions();
        let mut declared: Vec<&str> = crd.spec.versions.iter().map(|v| v.name.as_str()).collect();
        known.sort_unstable();
        declared.sort_unstable();
        if known != declared {
            return Err(ConfigError::Crd {
                crd: crd_name,
                problem: format!("its versions {declared:?} are not the converter's {known:?}"),
            });
        }
        crd.spec.conversion = Some(conversion);
        if let Some(from) = &client.inject_ca_from {
            crd.metadata
                .annotations
                .get_or_insert_with(BTreeMap::new)
                .insert(INJECT_CA_FROM.to_owned(), from.clone());
        }
        Ok(())
    }
}
