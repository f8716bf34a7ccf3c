//! [`Webhooks`]: the one description of what is served, which both the server routes and the
//! configuration objects are made from ([`registration`](crate::registration)).
//!
//! Each admission route is a handler of one kind `K` with its [`AdmissionSettings`]; each
//! conversion route a [`Converter`]. [`Webhooks::respond`] answers one request body on one
//! path, without any I/O: the server calls it, and tests may call it directly.
//!
//! Paths default to controller-runtime's (`/validate-<group>-<version>-<kind>` with the
//! group's dots as dashes, `/mutate-...`) and `/convert/<plural>.<group>` for conversions.

use std::sync::Arc;

use bytes::Bytes;
use http::StatusCode;
use kinform_core::{Resource, Scope};

use crate::admission::{AdmissionHandler, Mutating, Mutator, Validating, Validator};
use crate::conversion::{Convert, Converter};
use crate::error::ConfigError;
use crate::review::{
    ADMISSION_API_VERSION, AdmissionReview, CONVERSION_API_VERSION, ConversionReview,
};
use crate::settings::AdmissionSettings;

/// Validating or mutating.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum AdmissionType {
    /// A `ValidatingWebhookConfiguration` entry.
    Validating,
    /// A `MutatingWebhookConfiguration` entry.
    Mutating,
}

/// What kind an admission route is for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    /// API group, `""` for the core group.
    pub group: &'static str,
    /// Version.
    pub version: &'static str,
    /// Kind.
    pub kind: &'static str,
    /// Plural resource name.
    pub plural: &'static str,
    /// Namespaced or cluster-scoped.
    pub scope: Scope,
}

/// One admission route.
pub(crate) struct AdmissionRoute {
    pub(crate) path: String,
    pub(crate) name: String,
    pub(crate) kind: AdmissionType,
    pub(crate) target: Target,
    pub(crate) settings: AdmissionSettings,
    pub(crate) handler: Arc<dyn AdmissionHandler>,
}

/// One conversion route.
pub(crate) struct ConversionRoute {
    pub(crate) path: String,
    pub(crate) converter: Arc<dyn Convert>,
    pub(crate) mismatches: Vec<String>,
}

/// The webhooks one server serves.
///
/// ```
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use kinform_webhook::{Request, Verdict, Webhooks, admission::validator_fn};
///
/// let webhooks = Webhooks::new().validate(validator_fn(|request: &Request<ConfigMap>| {
///     match &request.object {
///         Some(cm) if cm.data.is_none() => Verdict::deny("data must not be empty"),
///         _ => Verdict::allow(),
///     }
/// }));
/// assert_eq!(webhooks.paths(), ["/validate--v1-configmap"]);
/// webhooks.check().unwrap();
/// ```
#[derive(Default)]
pub struct Webhooks {
    pub(crate) admission: Vec<AdmissionRoute>,
    pub(crate) conversion: Vec<ConversionRoute>,
}

impl std::fmt::Debug for Webhooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Webhooks")
            .field("paths", &self.paths())
            .finish()
    }
}

/// The answer to one request: an HTTP status and a JSON (or plain text) body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reply {
    /// The HTTP status.
    pub status: StatusCode,
    /// The body: a review, or a plain text error for a request that is not one.
    pub body: Bytes,
    /// Whether `body` is JSON (else plain text).
    pub json: bool,
}

impl Reply {
    pub(crate) fn text(status: StatusCode, message: impl Into<String>) -> Self {
        let mut text = message.into();
        text.push('\n');
        Self {
            status,
            body: Bytes::from(text),
            json: false,
        }
    }

    fn json<T: serde::Serialize>(value: &T) -> Self {
        match serde_json::to_vec(value) {
            Ok(body) => Self {
                status: StatusCode::OK,
                body: Bytes::from(body),
                json: true,
            },
            Err(e) => Self::text(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("encoding the review: {e}"),
            ),
        }
    }
}

impl Webhooks {
    /// No webhooks yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Validate objects of `K` with `validator`, with the default [`AdmissionSettings`].
    pub fn validate<K: Resource, V: Validator<K>>(self, validator: V) -> Self {
        self.validate_with(validator, AdmissionSettings::default())
    }

    /// Validate objects of `K` with `validator` and `settings`.
    pub fn validate_with<K: Resource, V: Validator<K>>(
        self,
        validator: V,
        settings: AdmissionSettings,
    ) -> Self {
        self.admission::<K>(
            AdmissionType::Validating,
            Arc::new(Validating::<K, V>::new(validator)),
            settings,
        )
    }

    /// Mutate (default) objects of `K` with `mutator`, with the default
    /// [`AdmissionSettings`].
    pub fn mutate<K: Resource, M: Mutator<K>>(self, mutator: M) -> Self {
        self.mutate_with(mutator, AdmissionSettings::default())
    }

    /// Mutate objects of `K` with `mutator` and `settings`.
    pub fn mutate_with<K: Resource, M: Mutator<K>>(
        self,
        mutator: M,
        settings: AdmissionSettings,
    ) -> Self {
        self.admission::<K>(
            AdmissionType::Mutating,
            Arc::new(Mutating::<K, M>::new(mutator)),
            settings,
        )
    }

    fn admission<K: Resource>(
        mut self,
        kind: AdmissionType,
        handler: Arc<dyn AdmissionHandler>,
        settings: AdmissionSettings,
    ) -> Self {
        let (verb, letter) = match kind {
            AdmissionType::Validating => ("validate", 'v'),
            AdmissionType::Mutating => ("mutate", 'm'),
        };
        let kind_lower = K::KIND.to_ascii_lowercase();
        let path = settings.path.clone().unwrap_or_else(|| {
            format!(
                "/{verb}-{}-{}-{kind_lower}",
                K::GROUP.replace('.', "-"),
                K::VERSION
            )
        });
        let name = settings.name.clone().unwrap_or_else(|| {
            let mut name = format!("{letter}{kind_lower}.{}", K::GROUP);
            if K::GROUP.is_empty() {
                name.push_str("core");
            }
            while name.split('.').count() < 3 {
                name.push_str(".kinform.io");
            }
            name
        });
        self.admission.push(AdmissionRoute {
            path,
            name,
            kind,
            target: Target {
                group: K::GROUP,
                version: K::VERSION,
                kind: K::KIND,
                plural: K::PLURAL,
                scope: K::SCOPE,
            },
            settings,
            handler,
        });
        self
    }

    /// Convert a kind's objects between its versions with `converter`.
    pub fn convert<H: Resource>(mut self, converter: Converter<H>) -> Self {
        let path = converter
            .path
            .clone()
            .unwrap_or_else(|| format!("/convert/{}.{}", H::PLURAL, H::GROUP));
        let mismatches = converter.mismatches.clone();
        self.conversion.push(ConversionRoute {
            path,
            converter: Arc::new(converter),
            mismatches,
        });
        self
    }

    /// Every path served, admission routes first, in the order they were added.
    pub fn paths(&self) -> Vec<&str> {
        self.admission
            .iter()
            .map(|r| r.path.as_str())
            .chain(self.conversion.iter().map(|r| r.path.as_str()))
            .collect()
    }

    /// The admission routes: path, validating or mutating, the kind, and the webhook's name.
    pub fn admission_routes(&self) -> impl Iterator<Item = (&str, AdmissionType, &Target, &str)> {
        self.admission
            .iter()
            .map(|r| (r.path.as_str(), r.kind, &r.target, r.name.as_str()))
    }

    /// Whether the description is one kube-apiserver and the server can use: paths start with
    /// `/`, are unique and are not the server's own (`/healthz`, `/readyz`); webhook names
    /// are DNS names of at least three labels, unique per configuration type; every
    /// admission route has operations and a timeout of 1 to 30 seconds; converters' spokes
    /// share the hub's group and kind, each version once, one converter per kind.
    pub fn check(&self) -> Result<(), ConfigError> {
        let mut paths = std::collections::BTreeSet::new();
        for path in self.paths() {
            if !path.starts_with('/') {
                return Err(ConfigError::Path {
                    path: path.to_owned(),
                    problem: "does not start with '/'",
                });
            }
            if matches!(path, "/healthz" | "/readyz") {
                return Err(ConfigError::Path {
                    path: path.to_owned(),
                    problem: "is the server's health path",
                });
            }
            if !paths.insert(path) {
                return Err(ConfigError::Path {
                    path: path.to_owned(),
                    problem: "is served twice",
                });
            }
        }
        let mut names = std::collections::BTreeSet::new();
        for route in &self.admission {
            let problem = if !is_qualified_name(&route.name) {
                Some("is not a DNS name of at least three labels (lower case letters, digits, '-')")
            } else if !names.insert((route.kind, route.name.as_str())) {
                Some("is used twice in one configuration")
            } else if route.settings.operations.is_empty() {
                Some("has no operations")
            } else if !(1..=30).contains(&route.settings.timeout_seconds) {
                Some("has a timeout outside 1 to 30 seconds")
            } else {
                None
            };
            if let Some(problem) = problem {
                return Err(ConfigError::Webhook {
                    name: route.name.clone(),
                    problem,
                });
            }
        }
        let mut kinds = std::collections::BTreeSet::new();
        for route in &self.conversion {
            let c = &route.converter;
            if let Some(problem) = route.mismatches.first() {
                return Err(ConfigError::Converter {
                    kind: c.kind().to_owned(),
                    problem: problem.clone(),
                });
            }
            if !kinds.insert((c.group(), c.kind())) {
                return Err(ConfigError::Converter {
                    kind: c.kind().to_owned(),
                    problem: "has two converters".into(),
                });
            }
        }
        Ok(())
    }

    /// Answers one POST of `body` to `path`: a review as kube-apiserver expects, or 404 for an
    /// unknown path and 400 with a plain text message for a body that is not a review of the
    /// served version (`admission.k8s.io/v1`, `apiextensions.k8s.io/v1`).
    pub async fn respond(&self, path: &str, body: &[u8]) -> Reply {
        if let Some(route) = self.admission.iter().find(|r| r.path == path) {
            let review: AdmissionReview = match serde_json::from_slice(body) {
                Ok(review) => review,
                Err(e) => {
                    return Reply::text(
                        StatusCode::BAD_REQUEST,
                        format!("the body is not an AdmissionReview: {e}"),
                    );
                }
            };
            if let Some(problem) = wrong_type(
                &review.api_version,
                &review.kind,
                ADMISSION_API_VERSION,
                "AdmissionReview",
            ) {
                return Reply::text(StatusCode::BAD_REQUEST, problem);
            }
            let Some(request) = review.request else {
                return Reply::text(
                    StatusCode::BAD_REQUEST,
                    "the AdmissionReview has no request",
                );
            };
            let response = route.handler.admit(request).await;
            return Reply::json(&AdmissionReview::answer(response));
        }
        if let Some(route) = self.conversion.iter().find(|r| r.path == path) {
            let review: ConversionReview = match serde_json::from_slice(body) {
                Ok(review) => review,
                Err(e) => {
                    return Reply::text(
                        StatusCode::BAD_REQUEST,
                        format!("the body is not a ConversionReview: {e}"),
                    );
                }
            };
            if let Some(problem) = wrong_type(
                &review.api_version,
                &review.kind,
                CONVERSION_API_VERSION,
                "ConversionReview",
            ) {
                return Reply::text(StatusCode::BAD_REQUEST, problem);
            }
            let Some(request) = review.request else {
                return Reply::text(
                    StatusCode::BAD_REQUEST,
                    "the ConversionReview has no request",
                );
            };
            let response = route.converter.convert(request);
            return Reply::json(&ConversionReview::answer(response));
        }
        Reply::text(StatusCode::NOT_FOUND, format!("no webhook at {path}"))
    }

    /// Whether `path` is one of the webhooks' paths.
    pub fn serves(&self, path: &str) -> bool {
        self.admission.iter().any(|r| r.path == path)
            || self.conversion.iter().any(|r| r.path == path)
    }
}

fn wrong_type(
    api_version: &str,
    kind: &str,
    want_version: &str,
    want_kind: &str,
) -> Option<String> {
    (api_version != want_version || kind != want_kind).then(|| {
        format!(
            "expected a {want_version} {want_kind}, got apiVersion {api_version:?} kind {kind:?}"
        )
    })
}

/// A DNS subdomain of at least three labels, as kube-apiserver requires of webhook names.
fn is_qualified_name(name: &str) -> bool {
    let labels: Vec<&str> = name.split('.').collect();
    name.len() <= 253
        && labels.len() >= 3
        && labels.iter().all(|l| {
            !l.is_empty()
                && l.len() <= 63
                && l.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
                && !l.starts_with('-')
                && !l.ends_with('-')
        })
}
