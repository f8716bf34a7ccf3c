//! Pruning of custom resources against their structural schema, as apiextensions-apiserver's
//! `pkg/apiserver/schema/pruning` does it.
//!
//! - A field that its object's schema does not declare (in `properties`, or through an
//!   `additionalProperties` schema) is removed, and its path reported for `fieldValidation`
//!   (`spec.foo`, `spec.items[0].foo`).
//! - Under `x-kubernetes-preserve-unknown-fields: true` undeclared fields stay; declared ones
//!   are still pruned inside.
//! - `apiVersion`, `kind` and `metadata` are kept at the root and in
//!   `x-kubernetes-embedded-resource` objects; their `metadata` is coerced to `ObjectMeta`
//!   (`objectmeta.Coerce`): fields `ObjectMeta` does not have are removed and reported. At the
//!   root a malformed metadata field fails the request (400); in an embedded resource it is
//!   dropped, as the real server drops malformed embedded metadata.

use serde_json::Value;

use crate::handlers::validate::child;
use crate::registry::spec::{Schema, builtin_schema};

/// Prunes `value`, the whole object; returns the removed paths, or the error of a malformed
/// root `metadata`.
pub(super) fn prune(value: &mut Value, schema: Schema<'_>) -> Result<Vec<String>, String> {
    let mut removed = Vec::new();
    if let Some(meta) = value.get_mut("metadata")
        && !meta.is_null()
        && let Some(pod) = builtin_schema("", "v1", "Pod")
    {
        // ObjectMeta is decoded as the built-in struct it is.
        let mut wrapped = serde_json::json!({ "metadata": meta.take() });
        let result = crate::handlers::validate::decode::decode(pod, &mut wrapped);
        *meta = wrapped["metadata"].take();
        removed.extend(result?);
    }
    walk(value, Some(schema), true, "", &mut removed);
    Ok(removed)
}

fn walk(
    x: &mut Value,
    s: Option<Schema<'_>>,
    embedded: bool,
    path: &str,
    removed: &mut Vec<String>,
) {
    let Some(s) = s else {
        // No schema: everything below is unknown.
        if let Value::Object(map) = x {
            for k in map.keys() {
                removed.push(child(path, k));
            }
            map.clear();
        }
        return;
    };
    let preserve = s.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true));
    match x {
        Value::Object(map) => {
            let keys: Vec<String> = map.keys().cloned().collect();
            for k in keys {
                let field = child(path, &k);
                if embedded && matches!(k.as_str(), "apiVersion" | "kind" | "metadata") {
                    continue;
                }
                let sub = s.property(&k).or_else(|| s.additional_properties());
                let allowed_any = s.get("additionalProperties") == Some(&Value::Bool(true));
                match (sub, map.get_mut(&k)) {
                    (Some(sub), Some(v)) => walk_child(v, sub, &field, removed),
                    (None, Some(v)) if preserve || allowed_any => {
                        // Kept as it is: nothing below is declared.
                        let _ = v;
                    }
                    _ => {
                        map.remove(&k);
                        removed.push(field);
                    }
                }
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter_mut().enumerate() {
                let p = format!("{path}[{i}]");
                match s.items() {
                    Some(it) => walk_child(v, it, &p, removed),
                    None if preserve => {}
                    None => walk(v, None, false, &p, removed),
                }
            }
        }
        _ => {}
    }
}

fn walk_child(v: &mut Value, s: Schema<'_>, path: &str, removed: &mut Vec<String>) {
    let embedded = s.get("x-kubernetes-embedded-resource") == Some(&Value::Bool(true));
    if embedded && let Some(meta) = v.get_mut("metadata") {
        coerce_embedded_metadata(meta, &child(path, "metadata"), removed);
    }
    walk(v, Some(s), embedded, path, removed);
}

/// `ObjectMeta` of an embedded resource: unknown fields removed (and reported), malformed
/// ones dropped.
fn coerce_embedded_metadata(meta: &mut Value, path: &str, removed: &mut Vec<String>) {
    let Some(pod) = builtin_schema("", "v1", "Pod") else {
        return;
    };
    let Value::Object(map) = meta else {
        return;
    };
    let keys: Vec<String> = map.keys().cloned().collect();
    for k in keys {
        let Some(v) = map.remove(&k) else { continue };
        let mut probe = serde_json::json!({"metadata": {k.clone(): v}});
        // A malformed field is dropped; an unknown one is reported too.
        if let Ok(unknown) = crate::handlers::validate::decode::decode(pod, &mut probe) {
            removed.extend(
                unknown
                    .iter()
                    .map(|u| format!("{path}{}", u.trim_start_matches("metadata"))),
            );
            if let Some(v) = probe["metadata"].get_mut(&k) {
                map.insert(k, v.take());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn prunes_undeclared_fields_and_keeps_preserved_subtrees() {
        let schema = json!({"type": "object", "properties": {
        "spec": {"type": "object", "properties": {
            "size": {"type": "integer"},
            "items": {"type": "array", "items": {"type": "object", "properties": {"n": {"type": "string"}}}},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
            "raw": {"type": "object", "x-kubernetes-preserve-unknown-fields": true,
                    "properties": {"inner": {"type": "object", "properties": {"a": {"type": "string"}}}}},
            "template": {"type": "object", "x-kubernetes-embedded-resource": true,
                         "properties": {"spec": {"type": "object"}}}
        }}}});
        let mut v = json!({"apiVersion": "x/v1", "kind": "X", "metadata": {"name": "a", "bogus": 1},
            "spec": {"size": 1, "extra": 2, "items": [{"n": "a", "m": 1}], "labels": {"k": "v"},
                     "raw": {"anything": {"deep": 1}, "inner": {"a": "x", "b": 2}},
                     "template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "junk": 1}, "status": {}}},
            "status": {}});
        let removed = prune(&mut v, Schema::standalone(&schema)).unwrap();
        assert_eq!(
            removed,
            [
                "metadata.bogus",
                "spec.extra",
                "spec.items[0].m",
                "spec.raw.inner.b",
                "spec.template.metadata.junk",
                "spec.template.status",
                "status"
            ]
        );
        assert_eq!(
            v,
            json!({"apiVersion": "x/v1", "kind": "X", "metadata": {"name": "a"},
                "spec": {"size": 1, "items": [{"n": "a"}], "labels": {"k": "v"},
                         "raw": {"anything": {"deep": 1}, "inner": {"a": "x"}},
                         "template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}}})
        );
    }

    #[test]
    fn malformed_root_metadata_fails() {
        let schema = json!({"type": "object"});
        let mut v = json!({"metadata": {"labels": {"a": 1}}});
        assert!(prune(&mut v, Schema::standalone(&schema)).is_err());
    }
}
