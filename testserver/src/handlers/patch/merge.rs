//! RFC 7386 JSON merge patch (`application/merge-patch+json`), which kube-apiserver applies
//! with `jsonpatch.MergePatch` for every resource: objects merge recursively, `null` deletes a
//! key, anything else (lists included) replaces the target value.

use serde_json::Value;

/// Merges `patch` into `target`.
pub(crate) fn merge_patch(target: &mut Value, patch: &Value) {
    let Value::Object(p) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = Value::Object(Default::default());
    }
    let Value::Object(t) = target else { return };
    for (k, v) in p {
        if v.is_null() {
            t.remove(k);
        } else {
            merge_patch(t.entry(k.clone()).or_insert(Value::Null), v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    // RFC 7386 section 2: maps merge, null deletes, lists are replaced whole.
    #[test]
    fn merge_patch_follows_rfc_7386() {
        let mut t = json!({"a": {"b": 1, "c": 2}, "l": [1, 2]});
        merge_patch(&mut t, &json!({"a": {"b": null, "d": 3}, "l": [9]}));
        assert_eq!(t, json!({"a": {"c": 2, "d": 3}, "l": [9]}));
        let mut scalar = json!("x");
        merge_patch(&mut scalar, &json!({"a": {"b": null, "c": 1}}));
        assert_eq!(scalar, json!({"a": {"c": 1}}));
    }
}
