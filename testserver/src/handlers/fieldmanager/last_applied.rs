//! Server-side apply meets client-side apply: the `kubectl.kubernetes.io/last-applied-configuration`
//! annotation, as kube-apiserver's `lastAppliedManager` and `lastAppliedUpdater`
//! (k8s.io/apimachinery `managedfields/internal`) handle it for the manager `kubectl`, so an
//! object managed by `kubectl apply` can move to `kubectl apply --server-side` and back:
//!
//! - **Upgrade without conflicts** ([`apply`]): when a server-side apply by `kubectl`
//!   conflicts, the fields of the live object's last-applied annotation that still hold the
//!   value it recorded count as the applier's own (client-side apply wrote them for the same
//!   user); if every conflict is such a field the apply is forced, otherwise the 409 lists the
//!   other conflicts only. Without the annotation, or when it was written through another
//!   apiVersion, the conflicts stand.
//! - **The annotation kept in step** ([`sync`]): after a server-side apply by `kubectl`, an
//!   object that carries a non-empty annotation gets it rewritten to the applied
//!   configuration (without the annotation itself), so a later client-side `kubectl apply`
//!   computes its three-way patch from what was last applied, server-side or not.
//!
//! Other managers are left alone, as on the real server (choosing another `--field-manager`
//! is the documented opt-out). The annotation is encoded as Go's `encoding/json` writes an
//! unstructured object: keys sorted, `<`, `>`, `&`, U+2028 and U+2029 escaped, a final
//! newline.

use serde_json::Value;

use crate::handlers::fieldmanager::managed::{self, Entry, Scope, conflict_error};
use crate::handlers::fieldmanager::types::Ty;
use crate::status::ApiError;

/// The annotation `kubectl apply` (client-side) records the applied configuration in.
pub(crate) const ANNOTATION: &str = "kubectl.kubernetes.io/last-applied-configuration";
/// The only manager whose applies read and write the annotation.
const KUBECTL: &str = "kubectl";

/// The object's non-empty last-applied annotation.
fn annotation(obj: &Value) -> Option<&str> {
    obj["metadata"]["annotations"][ANNOTATION]
        .as_str()
        .filter(|s| !s.is_empty())
}

/// [`managed::apply`], with the conflicts the last-applied annotation of `live` allows
/// forced when the manager is `kubectl`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn apply(
    entries: &mut Vec<Entry>,
    me: Entry,
    live: &Value,
    config: &Value,
    typing: (Ty<'_>, &Value),
    scope: Scope,
    force: bool,
    api_version: &str,
) -> Result<Value, ApiError> {
    let before = entries.clone();
    let conflicts =
        match managed::try_apply(entries, me.clone(), live, config, typing, scope, force) {
            Ok(merged) => return Ok(merged),
            Err(conflicts) => conflicts,
        };
    let allowed = (me.manager == KUBECTL)
        .then(|| annotation(live))
        .flatten()
        .and_then(|text| serde_json::from_str::<Value>(text).ok())
        .and_then(|last| managed::allowed_by_last_applied(&last, live, api_version, typing));
    let Some(allowed) = allowed else {
        return Err(conflict_error(&conflicts));
    };
    let rest = managed::not_allowed(conflicts, &allowed);
    if !rest.is_empty() {
        return Err(conflict_error(&rest));
    }
    *entries = before;
    managed::try_apply(entries, me, live, config, typing, scope, true)
        .map_err(|c| conflict_error(&c))
}

/// Rewrites `merged`'s last-applied annotation to `config` after an apply by `manager`, when
/// the manager is `kubectl` and the object carries the annotation.
pub(crate) fn sync(merged: &mut Value, config: &Value, manager: &str) {
    if manager != KUBECTL || annotation(merged).is_none() {
        return;
    }
    let mut recorded = config.clone();
    if let Some(annotations) = recorded
        .get_mut("metadata")
        .and_then(|m| m.get_mut("annotations"))
        .and_then(Value::as_object_mut)
    {
        annotations.remove(ANNOTATION);
    }
    let mut text = String::new();
    go_json(&recorded, &mut text);
    text.push('\n');
    merged["metadata"]["annotations"][ANNOTATION] = Value::String(text);
}

/// `v` as Go's `json.Encoder` writes a `map[string]interface{}`.
fn go_json(v: &Value, out: &mut String) {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                go_string(k, out);
                out.push(':');
                go_json(&m[k], out);
            }
            out.push('}');
        }
        Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                go_json(x, out);
            }
            out.push(']');
        }
        Value::String(s) => go_string(s, out),
        other => out.push_str(&other.to_string()),
    }
}

fn go_string(s: &str, out: &mut String) {
    let quoted = Value::String(s.to_owned()).to_string();
    for c in quoted.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_annotation_is_go_json_of_the_config() {
        let config = json!({"kind": "ConfigMap", "apiVersion": "v1",
            "metadata": {"name": "c", "annotations": {ANNOTATION: "old", "x": "<&>"}},
            "data": {"b": "2", "a": "1"}});
        let mut merged = config.clone();
        sync(&mut merged, &config, "kubectl");
        assert_eq!(
            merged["metadata"]["annotations"][ANNOTATION],
            "{\"apiVersion\":\"v1\",\"data\":{\"a\":\"1\",\"b\":\"2\"},\"kind\":\"ConfigMap\",\"metadata\":{\"annotations\":{\"x\":\"\\u003c\\u0026\\u003e\"},\"name\":\"c\"}}\n"
        );
        let mut other = config.clone();
        sync(&mut other, &config, "helm");
        assert_eq!(other["metadata"]["annotations"][ANNOTATION], "old");
        let mut without = json!({"metadata": {}});
        sync(&mut without, &config, "kubectl");
        assert!(without["metadata"]["annotations"].is_null());
    }
}
