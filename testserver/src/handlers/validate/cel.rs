//! `x-kubernetes-validations` rules of CRD schemas, evaluated with the `cel` crate (cel-rust,
//! formerly `cel-interpreter`), as apiextensions-apiserver evaluates them with cel-go
//! (`pkg/apiserver/schema/cel/validation.go`).
//!
//! Each rule of a schema node is evaluated with `self` bound to the node's value and, for a
//! transition rule (one that names `oldSelf`), `oldSelf` bound to the stored value at the same
//! place; a transition rule is skipped on create and where there is no stored value to
//! correlate with (`optionalOldSelf` rules then see no `oldSelf` either and are skipped too).
//! A rule that evaluates to `false` is one cause at the node's path (plus the rule's
//! `fieldPath`), worded as the real server words it: the rule's `message`, else
//! `failed rule: <rule>`; its `reason` picks the cause type (`FieldValueForbidden`,
//! `FieldValueRequired`, `FieldValueDuplicate`, `FieldValueInvalid` by default, whose value
//! is the schema type: `spec: Invalid value: "object": <message>`).
//!
//! The environment is CEL's standard library with the `strings`, `lists` and `math`
//! extensions cel-rust ships. Not reproduced: the Kubernetes-specific libraries (`isSorted`,
//! `quantity()`, `url()`, `ip()`, `cidr()`, `format.*`, `authorizer`), `messageExpression`,
//! cost limits, and the check of rules when the CRD is written. A rule that does not parse
//! or fails to evaluate here (most often one calling such a library) is not enforced, rather
//! than refusing an object the real server would accept.

use std::cell::RefCell;
use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use cel::objects::Key;
use cel::{Context, Env, Program};
use serde_json::Value;

use crate::handlers::validate::{Cause, child};
use crate::registry::spec::Schema;

thread_local! {
    static ENV: Arc<Env> = Arc::new(env());
    static PROGRAMS: RefCell<HashMap<String, Option<Arc<Program>>>> = RefCell::new(HashMap::new());
}

fn env() -> Env {
    let mut env = Env::stdlib();
    let _ = env.add_extension(cel::extensions::strings);
    let _ = env.add_extension(cel::extensions::lists);
    let _ = env.add_extension(cel::extensions::math);
    env
}

/// The compiled rule, cached per thread; `None` when it does not parse here.
fn program(rule: &str) -> Option<Arc<Program>> {
    PROGRAMS.with(|cache| {
        let mut cache = cache.borrow_mut();
        if cache.len() > 4096 {
            cache.clear();
        }
        cache
            .entry(rule.to_owned())
            .or_insert_with(|| {
                // A rule is user input: a panic in the interpreter must not end the request.
                let compiled = std::panic::catch_unwind(|| {
                    ENV.with(|env| env.compile(rule).ok().map(Arc::new))
                });
                compiled.ok().flatten()
            })
            .clone()
    })
}

/// JSON as a CEL value: integers as `int`, other numbers as `double`, objects as maps with
/// string keys.
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

/// Evaluates the rules of `s` on `x` (`old`: the correlated stored value).
pub(super) fn check(s: Schema<'_>, x: &Value, old: Option<&Value>, path: &str) -> Vec<Cause> {
    let Some(rules) = s.get("x-kubernetes-validations").and_then(Value::as_array) else {
        return Vec::new();
    };
    let mut causes = Vec::new();
    for rule in rules {
        let Some(text) = rule["rule"].as_str() else {
            continue;
        };
        let Some(program) = program(text) else {
            continue;
        };
        let transition = program.references().has_variable("oldSelf");
        if transition && old.is_none() {
            continue;
        }
        let evaluate = AssertUnwindSafe(|| {
            ENV.with(|env| {
                let mut ctx = Context::with_env(env.clone());
                ctx.add_variable_from_value("self", to_cel(x));
                if let Some(o) = old {
                    ctx.add_variable_from_value("oldSelf", to_cel(o));
                }
                program.execute(&ctx) == Ok(cel::Value::Bool(false))
            })
        });
        // Only a rule that evaluates to false fails; errors (and interpreter panics) are not
        // enforced (see above).
        if !std::panic::catch_unwind(evaluate).unwrap_or(false) {
            continue;
        }
        let message = match rule["message"].as_str().filter(|m| !m.is_empty()) {
            Some(m) => m.to_owned(),
            None => format!("failed rule: {text}"),
        };
        let field = match rule["fieldPath"].as_str().filter(|f| !f.is_empty()) {
            Some(f) => child(path, f.trim_start_matches('.')),
            None => path.to_owned(),
        };
        let ty = Value::String(s.str("type").unwrap_or_default().to_owned());
        causes.push(match rule["reason"].as_str() {
            Some("FieldValueForbidden") => Cause {
                reason: "FieldValueForbidden",
                field,
                message: format!("Forbidden: {message}"),
            },
            Some("FieldValueRequired") => Cause {
                reason: "FieldValueRequired",
                field,
                message: format!("Required value: {message}"),
            },
            Some("FieldValueDuplicate") => Cause::duplicate(&field, &ty),
            _ => Cause::invalid(&field, &ty, &message),
        });
    }
    causes
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(schema: Value, x: Value, old: Option<Value>) -> Vec<String> {
        check(Schema::standalone(&schema), &x, old.as_ref(), "spec")
            .into_iter()
            .map(|c| format!("{} {}: {}", c.reason, c.field, c.message))
            .collect()
    }

    #[test]
    fn rules_see_self_and_old_self() {
        let s = json!({"type": "object", "x-kubernetes-validations": [
            {"rule": "self.min <= self.max", "message": "min must not exceed max"},
            {"rule": "!has(self.mode) || self.mode.lowerAscii() == self.mode"},
            {"rule": "self.max == oldSelf.max", "message": "max is immutable", "reason": "FieldValueForbidden", "fieldPath": ".max"},
            {"rule": "self.max.isSorted()"}
        ]});
        assert!(run(s.clone(), json!({"min": 1, "max": 2}), None).is_empty());
        assert_eq!(
            run(s.clone(), json!({"min": 3, "max": 2, "mode": "Loud"}), None),
            [
                "FieldValueInvalid spec: Invalid value: \"object\": min must not exceed max",
                "FieldValueInvalid spec: Invalid value: \"object\": failed rule: !has(self.mode) || self.mode.lowerAscii() == self.mode"
            ]
        );
        assert_eq!(
            run(
                s,
                json!({"min": 1, "max": 2}),
                Some(json!({"min": 1, "max": 5}))
            ),
            ["FieldValueForbidden spec.max: Forbidden: max is immutable"]
        );
    }
}
