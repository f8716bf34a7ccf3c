//! The JSON Patch (RFC 6902) a mutating webhook answers: from the object kube-apiserver sent
//! to the object the mutator left.
//!
//! The diff is the `json-patch` crate's (`json_patch::diff`: members added, removed or
//! replaced, arrays element by element), the crate kube-rs's admission types use too; writing
//! a diff by hand was considered and gave nothing more. What is diffed is `K`'s encoding
//! before and after the mutator, so that members of the received object `K` does not model
//! are not removed (controller-runtime filters out every `remove` for the same reason, which
//! also drops the removals a defaulter means). That patch is checked by applying it to the
//! received object; should it not apply (the received JSON differs from `K`'s encoding at a
//! path the mutator changed, for example an explicit `null`), the patch is taken from the
//! received object instead, and the caller warns.

use serde_json::Value;

/// A computed patch.
pub(super) struct Computed {
    /// The JSON Patch document, `None` when nothing changed.
    pub(super) patch: Option<Vec<u8>>,
    /// Whether the patch was taken against the received object (see the module doc).
    pub(super) against_received: bool,
}

/// The patch that takes `received` to the mutator's result, given `K`'s encoding of the
/// object `before` and `after` the mutator.
pub(super) fn compute(received: &Value, before: &Value, after: &Value) -> Computed {
    let ops = json_patch::diff(before, after);
    if ops.0.is_empty() {
        return Computed {
            patch: None,
            against_received: false,
        };
    }
    let mut applied = received.clone();
    let (ops, against_received) = match json_patch::patch(&mut applied, &ops) {
        Ok(()) => (ops, false),
        Err(_) => (json_patch::diff(received, after), true),
    };
    Computed {
        // A `Patch` of JSON values always serialises; an empty one would mean "no change".
        patch: serde_json::to_vec(&ops).ok().filter(|_| !ops.0.is_empty()),
        against_received,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn apply(received: &Value, patch: &[u8]) -> Value {
        let ops: json_patch::Patch = serde_json::from_slice(patch).unwrap();
        let mut v = received.clone();
        json_patch::patch(&mut v, &ops).unwrap();
        v
    }

    /// Members the type does not model survive; what the mutator set and removed changes.
    #[test]
    fn unknown_members_survive_and_removals_apply() {
        let received = json!({"spec": {"a": 1, "unknown": true, "b": [1, 2]}, "x": "keep"});
        let before = json!({"spec": {"a": 1, "b": [1, 2]}});
        let after = json!({"spec": {"b": [1, 2, 3], "c": "new"}});
        let computed = compute(&received, &before, &after);
        assert!(!computed.against_received);
        assert_eq!(
            apply(&received, &computed.patch.unwrap()),
            json!({"spec": {"unknown": true, "b": [1, 2, 3], "c": "new"}, "x": "keep"})
        );
    }

    #[test]
    fn no_change_no_patch() {
        let v = json!({"a": 1});
        assert!(compute(&v, &v, &v).patch.is_none());
    }

    /// The received object has an explicit `null` where the type encodes nothing: the
    /// patch is taken against the received object and still applies.
    #[test]
    fn a_patch_that_does_not_apply_is_taken_against_the_received_object() {
        let received = json!({"spec": {"a": null, "b": 1}});
        let before = json!({"spec": {"b": 1}});
        let after = json!({"spec": {"b": 2}});
        // `replace /spec/b` applies, so this one goes through the first way.
        assert!(!compute(&received, &before, &after).against_received);
        // Removing a member the received object does not have cannot apply.
        let received = json!({"spec": {}});
        let before = json!({"spec": {"d": 0}});
        let after = json!({"spec": {"e": 1}});
        let computed = compute(&received, &before, &after);
        assert!(computed.against_received);
        assert_eq!(
            apply(&received, &computed.patch.unwrap()),
            json!({"spec": {"e": 1}})
        );
    }
}
