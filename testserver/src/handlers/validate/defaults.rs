//! Defaulting of custom resources from their structural schema, as apiextensions-apiserver's
//! `pkg/apiserver/schema/defaulting` does it: `PruneNonNullableNullsWithoutDefaults`, then
//! `Default`.
//!
//! The rules live in one place, `kinform_core::defaulting`, which generated and derived types
//! also call (`apply_schema_defaults`), so what a user defaults offline is what this server
//! stores. This module only hands it the CRD version's schema.

use serde_json::Value;

use crate::registry::spec::Schema;

/// Removes `null`s of non-nullable fields that have no default, then fills in the defaults.
pub(super) fn default(x: &mut Value, s: Schema<'_>) {
    kinform_core::defaulting::default_value(x, s.node());
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_server_defaults_with_the_shared_rules() {
        let node = json!({"type": "object", "properties": {
            "spec": {"type": "object", "properties": {
                "size": {"type": "integer", "default": 3},
                "gone": {"type": "string"},
                "labels": {"type": "object", "additionalProperties": {"type": "string", "default": "x"}}
            }},
            "status": {"type": "object", "properties": {"phase": {"type": "string", "default": "New"}}}
        }});
        let mut v = json!({"spec": {"gone": null, "labels": {"a": null}}});
        default(&mut v, Schema::standalone(&node));
        assert_eq!(v, json!({"spec": {"size": 3, "labels": {"a": "x"}}}));
    }
}
