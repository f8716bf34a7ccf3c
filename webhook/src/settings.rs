//! How kube-apiserver is to call one admission webhook: the members of a
//! `ValidatingWebhook`/`MutatingWebhook` that are not its address.
//!
//! [`AdmissionSettings`] travels with the handler in [`Webhooks`](crate::Webhooks), so the
//! route the server answers on and the configuration object
//! ([`registration`](crate::registration)) come from one value. Defaults are
//! controller-runtime's and kubebuilder's: `failurePolicy: Fail`, `sideEffects: None`,
//! `matchPolicy: Equivalent`, `timeoutSeconds: 10`, `reinvocationPolicy: Never`, operations
//! CREATE and UPDATE.

use k8s_openapi::api::admissionregistration::v1::MatchCondition;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

use crate::review::Operation;

/// `failurePolicy`: what kube-apiserver does when the webhook cannot be reached or answers
/// with an error.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FailurePolicy {
    /// Refuse the request (the default).
    #[default]
    Fail,
    /// Admit the request as if the webhook had allowed it.
    Ignore,
}

impl FailurePolicy {
    /// The name in a webhook configuration.
    pub fn as_str(self) -> &'static str {
        match self {
            FailurePolicy::Fail => "Fail",
            FailurePolicy::Ignore => "Ignore",
        }
    }
}

/// `sideEffects`: whether calling the webhook changes anything outside the request.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SideEffects {
    /// No side effects (the default): kube-apiserver calls it on dry runs too.
    #[default]
    None,
    /// Side effects, skipped when the request's `dryRun` is set (the handler sees it).
    NoneOnDryRun,
}

impl SideEffects {
    /// The name in a webhook configuration.
    pub fn as_str(self) -> &'static str {
        match self {
            SideEffects::None => "None",
            SideEffects::NoneOnDryRun => "NoneOnDryRun",
        }
    }
}

/// `matchPolicy`: whether requests to other versions of the resource are sent too,
/// converted to the registered version.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum MatchPolicy {
    /// Requests to any version, converted to the registered one (the default).
    #[default]
    Equivalent,
    /// Only requests to the registered version.
    Exact,
}

impl MatchPolicy {
    /// The name in a webhook configuration.
    pub fn as_str(self) -> &'static str {
        match self {
            MatchPolicy::Equivalent => "Equivalent",
            MatchPolicy::Exact => "Exact",
        }
    }
}

/// `reinvocationPolicy` of a mutating webhook.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ReinvocationPolicy {
    /// Called once per request (the default).
    #[default]
    Never,
    /// Called again when a later mutating webhook changed the object.
    IfNeeded,
}

impl ReinvocationPolicy {
    /// The name in a webhook configuration.
    pub fn as_str(self) -> &'static str {
        match self {
            ReinvocationPolicy::Never => "Never",
            ReinvocationPolicy::IfNeeded => "IfNeeded",
        }
    }
}

/// The settings of one admission webhook, with controller-runtime's defaults.
///
/// ```
/// use kinform_webhook::{AdmissionSettings, FailurePolicy, Operation};
/// let settings = AdmissionSettings::default()
///     .operations([Operation::Create, Operation::Update, Operation::Delete])
///     .failure_policy(FailurePolicy::Ignore)
///     .timeout_seconds(5);
/// assert_eq!(settings.get_operations().len(), 3);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct AdmissionSettings {
    pub(crate) name: Option<String>,
    pub(crate) path: Option<String>,
    pub(crate) operations: Vec<Operation>,
    pub(crate) sub_resources: Vec<String>,
    pub(crate) failure_policy: FailurePolicy,
    pub(crate) side_effects: SideEffects,
    pub(crate) match_policy: MatchPolicy,
    pub(crate) reinvocation_policy: ReinvocationPolicy,
    pub(crate) timeout_seconds: i32,
    pub(crate) namespace_selector: Option<LabelSelector>,
    pub(crate) object_selector: Option<LabelSelector>,
    pub(crate) match_conditions: Vec<MatchCondition>,
}

impl Default for AdmissionSettings {
    fn default() -> Self {
        Self {
            name: None,
            path: None,
            operations: vec![Operation::Create, Operation::Update],
            sub_resources: Vec::new(),
            failure_policy: FailurePolicy::default(),
            side_effects: SideEffects::default(),
            match_policy: MatchPolicy::default(),
            reinvocation_policy: ReinvocationPolicy::default(),
            timeout_seconds: 10,
            namespace_selector: None,
            object_selector: None,
            match_conditions: Vec::new(),
        }
    }
}

impl AdmissionSettings {
    /// The webhook's name in its configuration, a DNS name of at least three labels
    /// (default `v<kind>.<group>` or `m<kind>.<group>`, lower case, with `.kinform.io`
    /// appended while it has fewer than three labels).
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// The path the server answers on (default controller-runtime's
    /// `/validate-<group with - for .>-<version>-<kind>`, `/mutate-...`).
    pub fn path(mut self, path: impl Into<String>) -> Self {
        self.path = Some(path.into());
        self
    }

    /// The operations the webhook is called for (default CREATE and UPDATE).
    pub fn operations(mut self, operations: impl IntoIterator<Item = Operation>) -> Self {
        self.operations = operations.into_iter().collect();
        self
    }

    /// Also call the webhook for this sub-resource (`status`, ...; `*` for all), whose
    /// object is of the resource's kind.
    pub fn sub_resource(mut self, sub_resource: impl Into<String>) -> Self {
        self.sub_resources.push(sub_resource.into());
        self
    }

    /// `failurePolicy` (default `Fail`).
    pub fn failure_policy(mut self, policy: FailurePolicy) -> Self {
        self.failure_policy = policy;
        self
    }

    /// `sideEffects` (default `None`).
    pub fn side_effects(mut self, side_effects: SideEffects) -> Self {
        self.side_effects = side_effects;
        self
    }

    /// `matchPolicy` (default `Equivalent`).
    pub fn match_policy(mut self, policy: MatchPolicy) -> Self {
        self.match_policy = policy;
        self
    }

    /// `reinvocationPolicy`, for mutating webhooks (default `Never`).
    pub fn reinvocation_policy(mut self, policy: ReinvocationPolicy) -> Self {
        self.reinvocation_policy = policy;
        self
    }

    /// `timeoutSeconds`, 1 to 30 (default 10).
    pub fn timeout_seconds(mut self, seconds: i32) -> Self {
        self.timeout_seconds = seconds;
        self
    }

    /// `namespaceSelector`.
    pub fn namespace_selector(mut self, selector: LabelSelector) -> Self {
        self.namespace_selector = Some(selector);
        self
    }

    /// `objectSelector`.
    pub fn object_selector(mut self, selector: LabelSelector) -> Self {
        self.object_selector = Some(selector);
        self
    }

    /// A `matchConditions` entry (a CEL expression kube-apiserver evaluates first).
    pub fn match_condition(
        mut self,
        name: impl Into<String>,
        expression: impl Into<String>,
    ) -> Self {
        self.match_conditions.push(MatchCondition {
            name: name.into(),
            expression: expression.into(),
        });
        self
    }

    /// The operations the webhook is called for.
    pub fn get_operations(&self) -> &[Operation] {
        &self.operations
    }

    /// The `failurePolicy`.
    pub fn get_failure_policy(&self) -> FailurePolicy {
        self.failure_policy
    }
}
