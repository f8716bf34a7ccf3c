//! Defaulting of custom resources from their structural schema, as apiextensions-apiserver's
//! `pkg/apiserver/schema/defaulting` does it.
//!
//! First [`prune_nulls`] (`PruneNonNullableNullsWithoutDefaults`): a `null` where the schema
//! is not `nullable` and has no `default` is removed. Then [`apply`] (`Default`): in every
//! object that is present, each declared property that is missing, or `null` where not
//! `nullable`, gets a copy of its `default`; the same for `additionalProperties` values and
//! list items that are `null`. Defaults are not applied inside an absent parent: a default on
//! `spec.size` fills nothing until `spec` exists (give `spec` a default `{}` for that).

use serde_json::Value;

use crate::spec::Schema;

fn nullable(s: Schema<'_>) -> bool {
    s.get("nullable") == Some(&Value::Bool(true))
}

fn default_of(s: Schema<'_>) -> Option<&Value> {
    s.get("default")
}

/// The schema of one field of an object: its property, else `additionalProperties`.
fn field_schema<'a>(s: Option<Schema<'a>>, key: &str) -> Option<Schema<'a>> {
    let s = s?;
    s.property(key).or_else(|| s.additional_properties())
}

/// Removes `null`s of non-nullable fields that have no default.
pub(super) fn prune_nulls(x: &mut Value, s: Schema<'_>) {
    prune_nulls_in(x, Some(s));
}

fn prune_nulls_in(x: &mut Value, s: Option<Schema<'_>>) {
    match x {
        Value::Object(map) => {
            map.retain(|k, v| {
                let fs = field_schema(s, k);
                !(v.is_null() && fs.is_some_and(|fs| !nullable(fs) && default_of(fs).is_none()))
            });
            for (k, v) in map.iter_mut() {
                prune_nulls_in(v, field_schema(s, k));
            }
        }
        Value::Array(items) => {
            let it = s.and_then(Schema::items);
            for v in items {
                prune_nulls_in(v, it);
            }
        }
        _ => {}
    }
}

/// Fills the defaults of `s` into `x`.
pub(super) fn apply(x: &mut Value, s: Schema<'_>) {
    match x {
        Value::Object(map) => {
            for (k, prop) in s.properties() {
                let Some(d) = default_of(prop) else { continue };
                let missing = match map.get(k) {
                    None => true,
                    Some(v) => v.is_null() && !nullable(prop),
                };
                if missing {
                    map.insert(k.to_owned(), d.clone());
                }
            }
            let extra = s.additional_properties();
            for (k, v) in map.iter_mut() {
                if let Some(prop) = s.property(k) {
                    apply(v, prop);
                } else if let Some(extra) = extra {
                    if v.is_null()
                        && !nullable(extra)
                        && let Some(d) = default_of(extra)
                    {
                        *v = d.clone();
                    }
                    apply(v, extra);
                }
            }
        }
        Value::Array(items) => {
            let Some(it) = s.items() else { return };
            for v in items {
                if v.is_null()
                    && !nullable(it)
                    && let Some(d) = default_of(it)
                {
                    *v = d.clone();
                }
                apply(v, it);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({"type": "object", "properties": {
            "spec": {"type": "object", "properties": {
                "size": {"type": "integer", "default": 3},
                "mode": {"type": "string", "default": "auto"},
                "note": {"type": "string", "nullable": true, "default": "n"},
                "gone": {"type": "string"},
                "kept": {"type": "string", "nullable": true},
                "opts": {"type": "object", "default": {}, "properties": {"level": {"type": "integer", "default": 1}}},
                "ports": {"type": "array", "items": {"type": "object", "properties": {
                    "protocol": {"type": "string", "default": "TCP"}}}},
                "labels": {"type": "object", "additionalProperties": {"type": "string", "default": "x"}}
            }},
            "status": {"type": "object", "properties": {"phase": {"type": "string", "default": "New"}}}
        }})
    }

    #[test]
    fn defaults_fill_present_objects_only() {
        let node = schema();
        let s = Schema::standalone(&node);
        let mut v = json!({"spec": {"mode": null, "note": null, "gone": null, "kept": null,
            "ports": [{"protocol": "UDP"}, {}], "labels": {"a": null, "b": "y"}}});
        prune_nulls(&mut v, s);
        apply(&mut v, s);
        assert_eq!(
            v,
            json!({"spec": {"size": 3, "mode": "auto", "note": null, "kept": null,
                "opts": {"level": 1},
                "ports": [{"protocol": "UDP"}, {"protocol": "TCP"}],
                "labels": {"a": "x", "b": "y"}}})
        );
        // No status: its defaults do not apply.
        assert!(v.get("status").is_none());
    }
}
