//! The webhooks of the stored `admissionregistration.k8s.io/v1` configurations, with
//! kube-apiserver's defaults, and the validation of a configuration when it is written.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use base64::Engine as _;
use parking_lot::Mutex;
use serde_json::{Value, json};

use crate::registry::ResourceInfo;
use crate::status::ApiError;
use crate::storage::{Inner, Obj};

/// The storage of the mutating configurations.
pub(super) const MUTATING: &str = "admissionregistration.k8s.io/mutatingwebhookconfigurations";
/// The storage of the validating configurations.
pub(super) const VALIDATING: &str = "admissionregistration.k8s.io/validatingwebhookconfigurations";

/// One `rules` entry (`RuleWithOperations`).
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct Rule {
    pub operations: Vec<String>,
    pub api_groups: Vec<String>,
    pub api_versions: Vec<String>,
    pub resources: Vec<String>,
    /// `*` (the default), `Cluster` or `Namespaced`.
    pub scope: String,
}

/// A `service` reference.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct ServiceRef {
    pub namespace: String,
    pub name: String,
    pub path: String,
    pub port: u16,
}

/// One webhook of a configuration, defaults filled in.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Webhook {
    /// The configuration's name.
    pub configuration: String,
    /// The webhook's name (`admission webhook "name" denied the request`).
    pub name: String,
    /// Its place in its configuration.
    pub index: usize,
    /// A mutating webhook (else validating).
    pub mutating: bool,
    pub url: Option<String>,
    pub service: Option<ServiceRef>,
    /// The PEM bundle `caBundle` carries (decoded from base64).
    pub ca_bundle: Option<Vec<u8>>,
    pub rules: Vec<Rule>,
    /// `failurePolicy: Ignore` (the default is `Fail`).
    pub ignore_failures: bool,
    /// `matchPolicy: Exact` (the default is `Equivalent`).
    pub exact: bool,
    pub namespace_selector: Value,
    pub object_selector: Value,
    pub side_effects: String,
    pub timeout: Duration,
    pub review_versions: Vec<String>,
    /// `reinvocationPolicy: IfNeeded` (mutating webhooks only).
    pub reinvoke_if_needed: bool,
    /// `matchConditions`: name and CEL expression.
    pub match_conditions: Vec<(String, String)>,
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect()
}

/// A list of `RuleWithOperations` (webhooks' `rules`, policies' `resourceRules`).
pub(super) fn rules_of(rules: &Value) -> Vec<Rule> {
    rules
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| Rule {
            operations: strings(&r["operations"]),
            api_groups: strings(&r["apiGroups"]),
            api_versions: strings(&r["apiVersions"]),
            resources: strings(&r["resources"]),
            scope: r["scope"].as_str().unwrap_or("*").to_owned(),
        })
        .collect()
}

/// The webhooks of one configuration object, in their order.
pub(super) fn parse_configuration(config: &Value, mutating: bool) -> Vec<Webhook> {
    let configuration = config["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    config["webhooks"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
        .map(|(index, w)| {
            let cc = &w["clientConfig"];
            let service = cc["service"].as_object().map(|s| ServiceRef {
                namespace: s
                    .get("namespace")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                name: s
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                path: s
                    .get("path")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                port: s
                    .get("port")
                    .and_then(Value::as_u64)
                    .and_then(|p| u16::try_from(p).ok())
                    .unwrap_or(443),
            });
            let ca_bundle = cc["caBundle"]
                .as_str()
                .filter(|s| !s.is_empty())
                .and_then(|s| base64::engine::general_purpose::STANDARD.decode(s).ok());
            let rules = rules_of(&w["rules"]);
            let selector = |key: &str| match &w[key] {
                Value::Object(_) => w[key].clone(),
                _ => json!({}),
            };
            Webhook {
                configuration: configuration.clone(),
                name: w["name"].as_str().unwrap_or_default().to_owned(),
                index,
                mutating,
                url: cc["url"].as_str().map(str::to_owned),
                service,
                ca_bundle,
                rules,
                ignore_failures: w["failurePolicy"].as_str() == Some("Ignore"),
                exact: w["matchPolicy"].as_str() == Some("Exact"),
                namespace_selector: selector("namespaceSelector"),
                object_selector: selector("objectSelector"),
                side_effects: w["sideEffects"].as_str().unwrap_or_default().to_owned(),
                timeout: Duration::from_secs(w["timeoutSeconds"].as_u64().unwrap_or(10).max(1)),
                review_versions: strings(&w["admissionReviewVersions"]),
                reinvoke_if_needed: mutating
                    && w["reinvocationPolicy"].as_str() == Some("IfNeeded"),
                match_conditions: w["matchConditions"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|c| {
                        (
                            c["name"].as_str().unwrap_or_default().to_owned(),
                            c["expression"].as_str().unwrap_or_default().to_owned(),
                        )
                    })
                    .collect(),
            }
        })
        .collect()
}

/// Every stored webhook of one kind, sorted as kube-apiserver sorts them: by configuration
/// name, then in their order within it. Parsed once per stored state of the configurations.
pub(super) fn webhooks(inner: &Inner, mutating: bool) -> Arc<Vec<Webhook>> {
    type Cache = HashMap<bool, (Vec<Arc<Obj>>, Arc<Vec<Webhook>>)>;
    static CACHE: OnceLock<Mutex<Cache>> = OnceLock::new();
    let storage = if mutating { MUTATING } else { VALIDATING };
    // The table is ordered by key, which is the configuration's name.
    let objects = inner.objects(storage, None);
    let mut cache = CACHE.get_or_init(Default::default).lock();
    if let Some((stored, hooks)) = cache.get(&mutating)
        && stored.len() == objects.len()
        && stored.iter().zip(&objects).all(|(a, b)| Arc::ptr_eq(a, b))
    {
        return hooks.clone();
    }
    let hooks: Arc<Vec<Webhook>> = Arc::new(
        objects
            .iter()
            .flat_map(|o| parse_configuration(&o.value(), mutating))
            .collect(),
    );
    // Keeping the stored objects keeps their addresses from being reused by others.
    cache.insert(mutating, (objects, hooks.clone()));
    hooks
}

/// The checks of `ValidateMutatingWebhookConfiguration` and
/// `ValidateValidatingWebhookConfiguration` that decide what can be called, as 422 Invalid
/// causes; `Ok` for any other resource.
pub(crate) fn validate_configuration(info: &ResourceInfo, value: &Value) -> Result<(), ApiError> {
    if info.group != "admissionregistration.k8s.io" {
        return Ok(());
    }
    let mutating = match info.plural.as_str() {
        "mutatingwebhookconfigurations" => true,
        "validatingwebhookconfigurations" => false,
        _ => return Ok(()),
    };
    let mut causes = Vec::new();
    let mut cause = |field: String, reason: &str, message: String| {
        causes.push(
            json!({"reason": reason, "message": format!("{field}: {message}"), "field": field}),
        );
    };
    let mut names = std::collections::HashSet::new();
    for (i, w) in value["webhooks"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let at = |f: &str| format!("webhooks[{i}].{f}");
        let name = w["name"].as_str().unwrap_or_default();
        if name.is_empty() {
            cause(
                at("name"),
                "FieldValueRequired",
                "Required value".to_owned(),
            );
        } else if !names.insert(name.to_owned()) {
            cause(
                at("name"),
                "FieldValueDuplicate",
                format!("Duplicate value: {name:?}"),
            );
        } else if name.split('.').count() < 3 {
            cause(
                at("name"),
                "FieldValueInvalid",
                format!(
                    "Invalid value: {name:?}: should be a domain with at least three segments separated by dots"
                ),
            );
        }
        match w["sideEffects"].as_str() {
            None => cause(
                at("sideEffects"),
                "FieldValueRequired",
                "Required value: must specify one of None, NoneOnDryRun".to_owned(),
            ),
            Some("None" | "NoneOnDryRun") => {}
            Some(other) => cause(
                at("sideEffects"),
                "FieldValueNotSupported",
                format!(
                    "Unsupported value: {other:?}: supported values: \"None\", \"NoneOnDryRun\""
                ),
            ),
        }
        let versions = strings(&w["admissionReviewVersions"]);
        if versions.is_empty() {
            cause(
                at("admissionReviewVersions"),
                "FieldValueRequired",
                "Required value: must specify one of v1, v1beta1".to_owned(),
            );
        } else if !versions.iter().any(|v| v == "v1" || v == "v1beta1") {
            cause(
                at("admissionReviewVersions"),
                "FieldValueInvalid",
                format!(
                    "Invalid value: {:?}: must include at least one of v1, v1beta1",
                    versions
                ),
            );
        }
        if let Some(t) = w["timeoutSeconds"].as_i64()
            && !(1..=30).contains(&t)
        {
            cause(
                at("timeoutSeconds"),
                "FieldValueInvalid",
                format!("Invalid value: {t}: the timeout value must be between 1 and 30 seconds"),
            );
        }
        if !mutating && !w["reinvocationPolicy"].is_null() {
            // Validating webhooks have no such field; the typed decoding drops it.
        }
        let cc = &w["clientConfig"];
        match (cc["url"].as_str(), cc["service"].is_object()) {
            (Some(_), true) => cause(
                at("clientConfig"),
                "FieldValueRequired",
                "Required value: exactly one of url or service is required".to_owned(),
            ),
            (None, false) => cause(
                at("clientConfig"),
                "FieldValueRequired",
                "Required value: exactly one of url or service is required".to_owned(),
            ),
            (Some(url), false) => {
                if !url.starts_with("https://") {
                    cause(
                        at("clientConfig.url"),
                        "FieldValueInvalid",
                        format!(
                            "Invalid value: {:?}: 'https' is the only allowed URL scheme",
                            url.split("://").next().unwrap_or_default()
                        ),
                    );
                }
            }
            (None, true) => {
                let s = &cc["service"];
                for key in ["namespace", "name"] {
                    if s[key].as_str().is_none_or(str::is_empty) {
                        cause(
                            at(&format!("clientConfig.service.{key}")),
                            "FieldValueRequired",
                            format!("Required value: service {key} is required"),
                        );
                    }
                }
            }
        }
        for (j, c) in w["matchConditions"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
        {
            if c["expression"].as_str().is_none_or(str::is_empty) {
                cause(
                    at(&format!("matchConditions[{j}].expression")),
                    "FieldValueRequired",
                    "Required value".to_owned(),
                );
            }
        }
    }
    if causes.is_empty() {
        return Ok(());
    }
    let name = value["metadata"]["name"].as_str().unwrap_or_default();
    let kind = if mutating {
        "MutatingWebhookConfiguration"
    } else {
        "ValidatingWebhookConfiguration"
    };
    let messages: Vec<String> = causes
        .iter()
        .filter_map(|c| c["message"].as_str().map(str::to_owned))
        .collect();
    let message = if messages.len() == 1 {
        format!(
            "{kind}.admissionregistration.k8s.io {name:?} is invalid: {}",
            messages[0]
        )
    } else {
        format!(
            "{kind}.admissionregistration.k8s.io {name:?} is invalid: [{}]",
            messages.join(", ")
        )
    };
    let mut e = ApiError::new(422, "Invalid", message);
    e.details = Some(json!({
        "name": name,
        "group": "admissionregistration.k8s.io",
        "kind": kind,
        "causes": causes,
    }));
    Err(e)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn configuration() -> Value {
        json!({
            "metadata": {"name": "c"},
            "webhooks": [
                {"name": "a.example.com", "sideEffects": "None", "admissionReviewVersions": ["v1"],
                 "clientConfig": {"url": "https://127.0.0.1:1/a", "caBundle": "LS0tLS0="},
                 "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"]}]},
                {"name": "b.example.com", "sideEffects": "None", "admissionReviewVersions": ["v1"],
                 "failurePolicy": "Ignore", "matchPolicy": "Exact", "timeoutSeconds": 3,
                 "reinvocationPolicy": "IfNeeded", "objectSelector": {"matchLabels": {"a": "b"}},
                 "clientConfig": {"service": {"namespace": "ns", "name": "svc", "path": "/m"}}}
            ]
        })
    }

    #[test]
    fn webhooks_read_with_the_defaults_of_v1() {
        let hooks = parse_configuration(&configuration(), true);
        let a = &hooks[0];
        assert_eq!((a.configuration.as_str(), a.index), ("c", 0));
        assert!(!a.ignore_failures && !a.exact && !a.reinvoke_if_needed);
        assert_eq!(a.timeout, Duration::from_secs(10));
        assert_eq!(a.namespace_selector, json!({}));
        assert_eq!(a.rules[0].scope, "*");
        assert_eq!(a.ca_bundle.as_deref(), Some(&b"-----"[..]));
        let b = &hooks[1];
        assert!(b.ignore_failures && b.exact && b.reinvoke_if_needed);
        assert_eq!(b.timeout, Duration::from_secs(3));
        let s = b.service.as_ref().unwrap();
        assert_eq!(
            (
                s.namespace.as_str(),
                s.name.as_str(),
                s.path.as_str(),
                s.port
            ),
            ("ns", "svc", "/m", 443)
        );
        // Validating webhooks are never reinvoked.
        assert!(!parse_configuration(&configuration(), false)[1].reinvoke_if_needed);
    }

    #[test]
    fn configurations_that_cannot_be_called_are_invalid() {
        let info = crate::registry::Registry::with_builtins()
            .get(
                "admissionregistration.k8s.io",
                "v1",
                "mutatingwebhookconfigurations",
            )
            .expect("served");
        assert!(validate_configuration(&info, &configuration()).is_ok());
        let mut bad = configuration();
        bad["webhooks"][0]["sideEffects"] = json!("Some");
        bad["webhooks"][1]["name"] = json!("a.example.com");
        bad["webhooks"][0]["clientConfig"]["url"] = json!("http://127.0.0.1:1/a");
        let e = validate_configuration(&info, &bad).unwrap_err();
        assert_eq!(e.code, 422);
        assert!(e.message.contains("webhooks[0].sideEffects: Unsupported value: \"Some\": supported values: \"None\", \"NoneOnDryRun\""), "{}", e.message);
        assert!(
            e.message.contains("webhooks[1].name: Duplicate value"),
            "{}",
            e.message
        );
        assert!(
            e.message.contains("'https' is the only allowed URL scheme"),
            "{}",
            e.message
        );
    }
}
