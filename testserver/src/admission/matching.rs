//! Which webhooks a request selects, as `generic.Webhook.ShouldCallHook` decides: the rules
//! (`rules.Matcher`), then `matchPolicy: Equivalent` for the same resource in another
//! version, `namespaceSelector` (`namespace.Matcher`), `objectSelector` (`object.Matcher`)
//! and `matchConditions` (`matchconditions.Matcher`, in CEL).

use std::collections::HashMap;
use std::sync::Arc;

use cel::objects::Key;
use serde_json::{Value, json};

use super::Operation;
use super::config::{Rule, Webhook};
use crate::registry::ResourceInfo;

/// Resources never sent to webhooks (`IsExemptAdmissionConfigurationResource`): the
/// admission configurations themselves, so that a broken webhook can be removed.
pub(super) fn exempt(info: &ResourceInfo) -> bool {
    info.group == "admissionregistration.k8s.io"
        && matches!(
            info.plural.as_str(),
            "mutatingwebhookconfigurations"
                | "validatingwebhookconfigurations"
                | "validatingadmissionpolicies"
                | "validatingadmissionpolicybindings"
                | "mutatingadmissionpolicies"
                | "mutatingadmissionpolicybindings"
        )
}

fn listed(list: &[String], value: &str) -> bool {
    list.iter().any(|v| v == "*" || v == value)
}

/// `rules.Matcher.Matches` for a request on `group/version/resource` (+ `subresource`),
/// in `namespace` (`""`: cluster-scoped).
pub(super) fn rule_matches(
    rule: &Rule,
    op: Operation,
    group: &str,
    version: &str,
    info: &ResourceInfo,
    subresource: &str,
    namespace: &str,
) -> bool {
    let is_namespace = info.is_namespace();
    let scope = match rule.scope.as_str() {
        "Namespaced" => !is_namespace && !namespace.is_empty(),
        "Cluster" => is_namespace || namespace.is_empty(),
        _ => true,
    };
    let resource = rule.resources.iter().any(|r| {
        let (res, sub) = r.split_once('/').unwrap_or((r, ""));
        (res == "*" || res == info.plural) && (sub == "*" || sub == subresource)
    });
    scope
        && listed(&rule.operations, op.as_str())
        && listed(&rule.api_groups, group)
        && listed(&rule.api_versions, version)
        && resource
}

/// Whether any rule of `hook` could select an operation on `info` in some version and
/// scope (the quick test of [`super::may_apply`]).
pub(super) fn rules_may_match(
    hook: &Webhook,
    info: &ResourceInfo,
    subresource: &str,
    op: Operation,
) -> bool {
    hook.rules.iter().any(|r| {
        let version = if hook.exact { &info.version } else { "*" };
        let any_version = Rule {
            api_versions: if hook.exact {
                r.api_versions.clone()
            } else {
                vec!["*".to_owned()]
            },
            scope: "*".to_owned(),
            ..r.clone()
        };
        rule_matches(
            &any_version,
            op,
            &info.group,
            version,
            info,
            subresource,
            "",
        )
    })
}

/// A `metav1.LabelSelector` (JSON) against labels: an empty selector selects everything;
/// an operator this server does not know is an error, as the selector would not parse.
pub(super) fn selects(selector: &Value, labels: &Value) -> Result<bool, String> {
    let label = |k: &str| labels.get(k).and_then(Value::as_str);
    for (k, v) in selector["matchLabels"].as_object().into_iter().flatten() {
        if label(k) != v.as_str() {
            return Ok(false);
        }
    }
    for e in selector["matchExpressions"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let key = e["key"].as_str().unwrap_or_default();
        let values: Vec<&str> = e["values"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let have = label(key);
        let ok = match e["operator"].as_str().unwrap_or_default() {
            "In" => have.is_some_and(|v| values.contains(&v)),
            "NotIn" => have.is_none_or(|v| !values.contains(&v)),
            "Exists" => have.is_some(),
            "DoesNotExist" => have.is_none(),
            other => return Err(format!("{other:?} is not a valid label selector operator")),
        };
        if !ok {
            return Ok(false);
        }
    }
    Ok(true)
}

/// JSON as a CEL value (integers as `int`, objects as maps with string keys).
fn to_cel(v: &Value) -> cel::Value {
    match v {
        Value::Null => cel::Value::Null,
        Value::Bool(b) => cel::Value::Bool(*b),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => cel::Value::Int(i),
            (None, Some(u)) => cel::Value::UInt(u),
            _ => cel::Value::Float(n.as_f64().unwrap_or_default()),
        },
        Value::String(s) => cel::Value::String(Arc::new(s.clone())),
        Value::Array(items) => cel::Value::List(Arc::new(items.iter().map(to_cel).collect())),
        Value::Object(map) => {
            let m: HashMap<Key, cel::Value> = map
                .iter()
                .map(|(k, v)| (Key::String(Arc::new(k.clone())), to_cel(v)))
                .collect();
            cel::Value::from(m)
        }
    }
}

/// Why `matchConditions` could not decide.
#[derive(Debug, PartialEq)]
pub(super) enum ConditionError {
    /// An expression this server cannot compile (most often one using Kubernetes' own CEL
    /// libraries or `authorizer`): the request is refused whatever the failure policy.
    Unsupported(String),
    /// An expression failed at run time (`no such key`): the failure policy decides.
    Evaluation(String),
}

/// Evaluates one CEL `expression` with `bindings` (name and JSON value; `variables` may
/// be bound to an object of computed values): CEL's standard library with the `strings`
/// and `lists` extensions, as far as the `cel` crate goes.
pub(super) fn evaluate(
    expression: &str,
    bindings: &[(&str, &Value)],
) -> Result<Value, ConditionError> {
    let mut env = cel::Env::stdlib();
    let _ = env.add_extension(cel::extensions::strings);
    let _ = env.add_extension(cel::extensions::lists);
    let env = Arc::new(env);
    let compiled =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| env.compile(expression)));
    let program = match compiled {
        Ok(Ok(p)) => p,
        Ok(Err(e)) => {
            return Err(ConditionError::Unsupported(format!(
                "expression {expression:?} cannot be evaluated by TestApiServer: {e}"
            )));
        }
        Err(_) => {
            return Err(ConditionError::Unsupported(format!(
                "expression {expression:?} cannot be evaluated by TestApiServer"
            )));
        }
    };
    if program.references().has_variable("authorizer") {
        return Err(ConditionError::Unsupported(format!(
            "expression {expression:?}: the authorizer variable is not supported by TestApiServer"
        )));
    }
    let run = std::panic::AssertUnwindSafe(|| {
        let mut ctx = cel::Context::with_env(env.clone());
        for (name, value) in bindings {
            ctx.add_variable_from_value(*name, to_cel(value));
        }
        program.execute(&ctx).map_err(|e| e.to_string())
    });
    match std::panic::catch_unwind(run) {
        Ok(Ok(v)) => Ok(from_cel(&v)),
        Ok(Err(e)) => Err(ConditionError::Evaluation(format!(
            "expression {expression:?} resulted in error: {e}"
        ))),
        Err(_) => Err(ConditionError::Evaluation(format!(
            "expression {expression:?} could not be evaluated"
        ))),
    }
}

/// A CEL value as JSON (what `variables` and messages need).
fn from_cel(v: &cel::Value) -> Value {
    match v {
        cel::Value::Null => Value::Null,
        cel::Value::Bool(b) => json!(b),
        cel::Value::Int(i) => json!(i),
        cel::Value::UInt(u) => json!(u),
        cel::Value::Float(f) => json!(f),
        cel::Value::String(s) => json!(s.as_str()),
        cel::Value::List(items) => Value::Array(items.iter().map(from_cel).collect()),
        cel::Value::Map(m) => Value::Object(
            m.map
                .iter()
                .map(|(k, v)| {
                    let key = match k {
                        Key::String(s) => s.to_string(),
                        Key::Int(i) => i.to_string(),
                        Key::Uint(u) => u.to_string(),
                        Key::Bool(b) => b.to_string(),
                    };
                    (key, from_cel(v))
                })
                .collect(),
        ),
        other => json!(format!("{other:?}")),
    }
}

/// `matchConditions` (name, expression) with `bindings`: `Ok(false)` as soon as one is
/// false, as `matchconditions.matcher` does; the errors of the others are returned for
/// the caller's failure policy to decide.
pub(super) fn conditions_hold(
    conditions: &[(String, String)],
    bindings: &[(&str, &Value)],
) -> Result<bool, ConditionError> {
    let mut errors = Vec::new();
    for (name, expression) in conditions {
        match evaluate(expression, bindings) {
            Ok(Value::Bool(false)) => return Ok(false),
            Ok(Value::Bool(true)) => {}
            Ok(other) => errors.push(format!(
                "expression {expression:?} resulted in a non-boolean value: {other}"
            )),
            Err(ConditionError::Unsupported(why)) => {
                return Err(ConditionError::Unsupported(format!(
                    "matchConditions[{name:?}]: {why}"
                )));
            }
            Err(ConditionError::Evaluation(why)) => errors.push(why),
        }
    }
    if errors.is_empty() {
        Ok(true)
    } else {
        Err(ConditionError::Evaluation(errors.join(", ")))
    }
}

/// `matchConditions` of `hook` with `object`, `oldObject` and `request` bound.
pub(super) fn conditions_match(
    hook: &Webhook,
    object: Option<&Value>,
    old: Option<&Value>,
    request: &Value,
) -> Result<bool, ConditionError> {
    if hook.match_conditions.is_empty() {
        return Ok(true);
    }
    let null = Value::Null;
    conditions_hold(
        &hook.match_conditions,
        &[
            ("object", object.unwrap_or(&null)),
            ("oldObject", old.unwrap_or(&null)),
            ("request", request),
        ],
    )
}

/// The CEL `request` of `matchConditions`: the AdmissionRequest's fields but the objects.
pub(super) fn cel_request(review_request: &Value) -> Value {
    let mut r = review_request.clone();
    if let Some(m) = r.as_object_mut() {
        m.remove("object");
        m.remove("oldObject");
    }
    if r.is_null() { json!({}) } else { r }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::admission::config::parse_configuration;

    fn pods() -> ResourceInfo {
        crate::registry::Registry::with_builtins()
            .get("", "v1", "pods")
            .map(|i| (*i).clone())
            .expect("pods")
    }

    fn rule(resources: &[&str], scope: &str) -> Rule {
        Rule {
            operations: vec!["CREATE".into(), "UPDATE".into()],
            api_groups: vec!["".into()],
            api_versions: vec!["v1".into()],
            resources: resources.iter().map(|r| r.to_string()).collect(),
            scope: scope.into(),
        }
    }

    #[test]
    fn rules_match_resources_subresources_and_scope_as_rules_matcher() {
        let p = pods();
        let m = |r: &Rule, op, sub, ns| rule_matches(r, op, "", "v1", &p, sub, ns);
        use Operation::*;
        assert!(m(&rule(&["pods"], "*"), Create, "", "default"));
        assert!(!m(&rule(&["pods"], "*"), Create, "status", "default"));
        assert!(m(&rule(&["pods/status"], "*"), Update, "status", "default"));
        assert!(m(&rule(&["pods/*"], "*"), Update, "status", "default"));
        // `sub == "*"` matches the main resource too, as in `rules.Matcher`.
        assert!(m(&rule(&["pods/*"], "*"), Update, "", "default"));
        assert!(m(&rule(&["*"], "*"), Update, "", "default"));
        assert!(!m(&rule(&["*"], "*"), Update, "status", "default"));
        assert!(m(&rule(&["*/*"], "*"), Update, "status", "default"));
        assert!(m(&rule(&["*/status"], "*"), Update, "status", "default"));
        assert!(!m(&rule(&["pods"], "*"), Delete, "", "default"));
        assert!(m(&rule(&["pods"], "Namespaced"), Create, "", "default"));
        assert!(!m(&rule(&["pods"], "Cluster"), Create, "", "default"));
        let mut other_version = rule(&["pods"], "*");
        other_version.api_versions = vec!["v2".into()];
        assert!(!m(&other_version, Create, "", "default"));
    }

    #[test]
    fn selectors_select_as_metav1_label_selectors() {
        let labels = json!({"env": "prod", "tier": "web"});
        assert_eq!(selects(&json!({}), &labels), Ok(true));
        assert_eq!(
            selects(&json!({"matchLabels": {"env": "prod"}}), &labels),
            Ok(true)
        );
        assert_eq!(
            selects(&json!({"matchLabels": {"env": "dev"}}), &labels),
            Ok(false)
        );
        let e = |op: &str, v: Value| json!({"matchExpressions": [{"key": "env", "operator": op, "values": v}]});
        assert_eq!(selects(&e("In", json!(["prod", "x"])), &labels), Ok(true));
        assert_eq!(selects(&e("NotIn", json!(["prod"])), &labels), Ok(false));
        assert_eq!(selects(&e("Exists", json!([])), &labels), Ok(true));
        assert_eq!(selects(&e("DoesNotExist", json!([])), &labels), Ok(false));
        assert!(selects(&e("Gt", json!(["1"])), &labels).is_err());
    }

    #[test]
    fn match_conditions_skip_refuse_or_fail_as_upstream() {
        let hook = |exprs: &[&str]| {
            let conditions: Vec<Value> = exprs
                .iter()
                .enumerate()
                .map(|(i, e)| json!({"name": format!("c{i}"), "expression": e}))
                .collect();
            parse_configuration(
                &json!({"metadata": {"name": "c"}, "webhooks": [{"name": "a.b.c", "matchConditions": conditions}]}),
                false,
            )
            .remove(0)
        };
        let obj = json!({"metadata": {"name": "x", "labels": {"skip": "yes"}}});
        let req = json!({"operation": "CREATE", "userInfo": {"username": "alice"}});
        let run = |exprs: &[&str]| conditions_match(&hook(exprs), Some(&obj), None, &req);
        assert_eq!(run(&["request.operation == 'CREATE'"]), Ok(true));
        assert_eq!(
            run(&[
                "!('skip' in object.metadata.labels)",
                "request.userInfo.username == 'alice'"
            ]),
            Ok(false)
        );
        assert!(matches!(
            run(&["object.spec.x == 1"]),
            Err(ConditionError::Evaluation(_))
        ));
        // A false condition wins over another's error.
        assert_eq!(run(&["object.spec.x == 1", "false"]), Ok(false));
        assert!(matches!(
            run(&["authorizer.group('').resource('pods').check('get').allowed()"]),
            Err(ConditionError::Unsupported(_))
        ));
        assert!(matches!(run(&["((("]), Err(ConditionError::Unsupported(_))));
    }
}
