//! ValidatingAdmissionPolicy: the stored `admissionregistration.k8s.io/v1` policies and their
//! bindings, evaluated in CEL at the validating point before the validating webhooks, as
//! kube-apiserver's `plugin/policy/validating` does.
//!
//! A binding (`policyName`) applies its policy to a request that the policy's
//! `matchConstraints` select (`resourceRules`, `excludeResourceRules`, `namespaceSelector`,
//! `objectSelector`) and, when it has `matchResources`, that these select too; then the
//! policy's `matchConditions` must hold, its `variables` are computed in order
//! (`variables.<name>`), and each of its `validations` must be true with `object`,
//! `oldObject`, `request` and `namespaceObject` bound. A false validation gives its
//! `message` (else `failed expression: <expression>`; a `messageExpression` that evaluates
//! to a string wins) and `reason` (default `Invalid`); an expression that fails is a
//! refusal under `failurePolicy: Fail` (the default) and nothing under `Ignore`. The
//! binding's `validationActions` decide what a refusal does: `Deny` answers the first one
//! (`<resource> "<name>" is forbidden: ValidatingAdmissionPolicy '<policy>' with binding
//! '<binding>' denied request: <message>`, 422 for `Invalid`, 403 `Forbidden`, 401
//! `Unauthorized`, 413 `RequestEntityTooLarge`), `Warn` adds a `Warning` header
//! (`Validation failed for ValidatingAdmissionPolicy '<policy>' with binding '<binding>':
//! <message>`), `Audit` does nothing here (there is no audit log).
//!
//! Not reproduced, each refused clearly when a policy that selects the request needs it:
//! `paramKind` and `paramRef` (parameter objects), the `authorizer` variable, and
//! expressions of Kubernetes' own CEL libraries the `cel` crate lacks; not reproduced
//! silently: `matchPolicy: Equivalent` for other versions (only the request's version is
//! matched), `resourceNames`, `auditAnnotations`, the type checking of expressions when a
//! policy is written, cost limits, and the policy's `status`.

use serde_json::{Value, json};

use super::config::rules_of;
use super::matching::{self, ConditionError};
use super::{Context, Gate, Operation, Request};
use crate::status::ApiError;

/// The storage of the policies.
const POLICIES: &str = "admissionregistration.k8s.io/validatingadmissionpolicies";
/// The storage of the bindings.
const BINDINGS: &str = "admissionregistration.k8s.io/validatingadmissionpolicybindings";

/// Every (policy, binding) pair stored, by policy name then binding name.
fn pairs(cx: &Context) -> Vec<(Value, Value)> {
    let inner = cx.storage.lock();
    let policies = inner.objects(POLICIES, None);
    let bindings = inner.objects(BINDINGS, None);
    let mut out = Vec::new();
    for p in &policies {
        let policy = p.value();
        for b in &bindings {
            let binding = b.value();
            if binding["spec"]["policyName"].as_str() == Some(p.name.as_str()) {
                out.push((policy.clone(), binding));
            }
        }
    }
    out
}

/// Whether a policy could select requests on `info` with `op` (the quick test of
/// [`super::may_apply`]).
pub(super) fn may_apply(
    inner: &crate::storage::Inner,
    info: &crate::registry::ResourceInfo,
    subresource: &str,
    op: Operation,
) -> bool {
    if inner.objects(BINDINGS, None).is_empty() {
        return false;
    }
    inner.objects(POLICIES, None).iter().any(|p| {
        rules_of(&p.value()["spec"]["matchConstraints"]["resourceRules"])
            .iter()
            .any(|r| {
                let mut any = r.clone();
                any.api_versions = vec!["*".into()];
                any.scope = "*".into();
                matching::rule_matches(&any, op, &info.group, "*", info, subresource, "")
            })
    })
}

/// Whether `resources` (a `MatchResources`) selects the request.
fn selects(
    resources: &Value,
    req: &Request,
    op: Operation,
    object: Option<&Value>,
    old: Option<&Value>,
    namespace: Option<&Value>,
) -> Result<bool, ApiError> {
    let info = &req.info;
    let ns = if info.is_namespace() {
        ""
    } else {
        req.namespace.as_str()
    };
    let hit = |rules: &Value| {
        rules_of(rules).iter().any(|r| {
            matching::rule_matches(
                r,
                op,
                &info.group,
                &info.version,
                info,
                &req.subresource,
                ns,
            )
        })
    };
    if !hit(&resources["resourceRules"]) || hit(&resources["excludeResourceRules"]) {
        return Ok(false);
    }
    let selector = |key: &str| {
        resources[key]
            .as_object()
            .map_or(json!({}), |m| Value::Object(m.clone()))
    };
    let ns_labels = if info.is_namespace() {
        object.or(old).map(|o| o["metadata"]["labels"].clone())
    } else if req.namespace.is_empty() {
        None
    } else {
        namespace.map(|n| n["metadata"]["labels"].clone())
    };
    if let Some(labels) = ns_labels
        && !matching::selects(&selector("namespaceSelector"), &labels)
            .map_err(ApiError::internal)?
    {
        return Ok(false);
    }
    let object_selector = selector("objectSelector");
    if object_selector != json!({}) {
        let on = |o: Option<&Value>| {
            o.map(|o| matching::selects(&object_selector, &o["metadata"]["labels"]))
                .transpose()
                .map(|m| m.unwrap_or(false))
        };
        if !on(object).map_err(ApiError::internal)? && !on(old).map_err(ApiError::internal)? {
            return Ok(false);
        }
    }
    Ok(true)
}

/// One refusal of a (policy, binding).
struct Refusal {
    message: String,
    reason: &'static str,
}

/// `reasonToCode`.
fn code_of(reason: &str) -> u16 {
    match reason {
        "Forbidden" => 403,
        "Unauthorized" => 401,
        "RequestEntityTooLarge" => 413,
        _ => 422,
    }
}

/// The refusals of `policy` for a request it applies to, with `bindings` bound.
fn evaluate(policy: &Value, bindings: &[(&str, &Value)]) -> Result<Vec<Refusal>, ApiError> {
    let spec = &policy["spec"];
    let ignore = spec["failurePolicy"].as_str() == Some("Ignore");
    let unsupported = |why: String| {
        ApiError::new(
            403,
            "Forbidden",
            format!(
                "ValidatingAdmissionPolicy '{}' cannot be evaluated by TestApiServer: {why}",
                policy["metadata"]["name"].as_str().unwrap_or_default()
            ),
        )
    };
    let failed = |why: String| -> Result<Vec<Refusal>, ApiError> {
        Ok(if ignore {
            Vec::new()
        } else {
            vec![Refusal {
                message: why,
                reason: "Invalid",
            }]
        })
    };
    let conditions: Vec<(String, String)> = spec["matchConditions"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            (
                c["name"].as_str().unwrap_or_default().to_owned(),
                c["expression"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    match matching::conditions_hold(&conditions, bindings) {
        Ok(true) => {}
        Ok(false) => return Ok(Vec::new()),
        Err(ConditionError::Unsupported(why)) => return Err(unsupported(why)),
        Err(ConditionError::Evaluation(why)) => return failed(why),
    }
    let mut variables = serde_json::Map::new();
    for v in spec["variables"].as_array().into_iter().flatten() {
        let name = v["name"].as_str().unwrap_or_default();
        let expression = v["expression"].as_str().unwrap_or_default();
        let vars = Value::Object(variables.clone());
        let mut with_vars = bindings.to_vec();
        with_vars.push(("variables", &vars));
        match matching::evaluate(expression, &with_vars) {
            Ok(value) => {
                variables.insert(name.to_owned(), value);
            }
            Err(ConditionError::Unsupported(why)) => return Err(unsupported(why)),
            Err(ConditionError::Evaluation(why)) => return failed(why),
        }
    }
    let vars = Value::Object(variables);
    let mut with_vars = bindings.to_vec();
    with_vars.push(("variables", &vars));
    let mut refusals = Vec::new();
    for v in spec["validations"].as_array().into_iter().flatten() {
        let expression = v["expression"].as_str().unwrap_or_default();
        match matching::evaluate(expression, &with_vars) {
            Ok(Value::Bool(true)) => continue,
            Ok(Value::Bool(false)) => {}
            Ok(other) => {
                refusals.extend(failed(format!(
                    "expression '{expression}' resulted in a non-boolean value: {other}"
                ))?);
                continue;
            }
            Err(ConditionError::Unsupported(why)) => return Err(unsupported(why)),
            Err(ConditionError::Evaluation(why)) => {
                refusals.extend(failed(why)?);
                continue;
            }
        }
        let from_expression = v["messageExpression"]
            .as_str()
            .and_then(|e| matching::evaluate(e, &with_vars).ok())
            .and_then(|m| m.as_str().map(str::to_owned))
            .filter(|m| !m.trim().is_empty());
        let message = from_expression
            .or_else(|| {
                v["message"]
                    .as_str()
                    .map(str::to_owned)
                    .filter(|m| !m.is_empty())
            })
            .unwrap_or_else(|| format!("failed expression: {expression}"));
        let reason = match v["reason"].as_str() {
            Some("Forbidden") => "Forbidden",
            Some("Unauthorized") => "Unauthorized",
            Some("RequestEntityTooLarge") => "RequestEntityTooLarge",
            _ => "Invalid",
        };
        refusals.push(Refusal { message, reason });
    }
    Ok(refusals)
}

/// Evaluates every binding that selects the request; the first `Deny` refusal is the
/// answer, `Warn` ones become warnings of the gate.
pub(super) fn validate(
    cx: &Context,
    gate: &mut Gate,
    op: Operation,
    object: Option<&Value>,
    old: Option<&Value>,
    review_request: &Value,
) -> Result<(), ApiError> {
    let pairs = pairs(cx);
    if pairs.is_empty() || super::matching::exempt(&gate.request.info) {
        return Ok(());
    }
    let namespace = if gate.request.namespace.is_empty() {
        None
    } else {
        let inner = cx.storage.lock();
        inner
            .get("/namespaces", &gate.request.namespace)
            .map(|n| n.value())
    };
    let null = Value::Null;
    let request = matching::cel_request(review_request);
    let bindings: Vec<(&str, &Value)> = vec![
        ("object", object.unwrap_or(&null)),
        ("oldObject", old.unwrap_or(&null)),
        ("request", &request),
        ("namespaceObject", namespace.as_ref().unwrap_or(&null)),
        ("params", &null),
    ];
    let req = &gate.request;
    let mut denied = None;
    let mut warnings = Vec::new();
    for (policy, binding) in &pairs {
        let constraints = &policy["spec"]["matchConstraints"];
        if !selects(constraints, req, op, object, old, namespace.as_ref())? {
            continue;
        }
        let narrowed = &binding["spec"]["matchResources"];
        if narrowed.is_object() && !selects(narrowed, req, op, object, old, namespace.as_ref())? {
            continue;
        }
        let policy_name = policy["metadata"]["name"].as_str().unwrap_or_default();
        let binding_name = binding["metadata"]["name"].as_str().unwrap_or_default();
        if !policy["spec"]["paramKind"].is_null() {
            return Err(ApiError::new(
                403,
                "Forbidden",
                format!(
                    "ValidatingAdmissionPolicy '{policy_name}' cannot be evaluated by TestApiServer: paramKind and paramRef are not supported"
                ),
            ));
        }
        let actions: Vec<&str> = binding["spec"]["validationActions"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        for refusal in evaluate(policy, &bindings)? {
            if actions.contains(&"Warn") {
                warnings.push(format!(
                    "Validation failed for ValidatingAdmissionPolicy '{policy_name}' with binding '{binding_name}': {}",
                    refusal.message
                ));
            }
            if actions.contains(&"Deny") && denied.is_none() {
                denied = Some((policy_name.to_owned(), binding_name.to_owned(), refusal));
            }
        }
    }
    gate.warnings.extend(warnings);
    let Some((policy, binding, refusal)) = denied else {
        return Ok(());
    };
    let info = &req.info;
    let name = object
        .or(old)
        .and_then(|o| o["metadata"]["name"].as_str())
        .unwrap_or(&req.name);
    let resource = if info.group.is_empty() {
        info.plural.clone()
    } else {
        format!("{}.{}", info.plural, info.group)
    };
    let cause = format!(
        "ValidatingAdmissionPolicy '{policy}' with binding '{binding}' denied request: {}",
        refusal.message
    );
    let mut e = ApiError::new(
        code_of(refusal.reason),
        refusal.reason,
        format!("{resource} {name:?} is forbidden: {cause}"),
    );
    let mut details = json!({"name": name, "kind": info.plural, "causes": [{"message": cause}]});
    if !info.group.is_empty() {
        details["group"] = json!(info.group);
    }
    e.details = Some(details);
    Err(e)
}
