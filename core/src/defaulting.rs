//! Structural defaulting of custom resources: what apiextensions-apiserver does to a custom
//! resource before it validates and stores it (`pkg/apiserver/schema/defaulting`), over a
//! `serde_json::Value` and the CRD version's `openAPIV3Schema`.
//!
//! Decoding never defaults (a client that fills defaults on decode writes values the user never
//! chose: a server-side apply then claims fields it does not own, a GitOps tool shows diffs
//! nobody made, a controller cannot tell "unset" from "set to the default"; client-go's typed
//! clients do not default either). Defaulting is this explicit operation, shared by the test
//! server (which applies it to every custom resource it stores) and by generated and derived
//! types (`apply_schema_defaults`), so both follow one implementation of the rules:
//!
//! 1. [`prune_nulls`] (`PruneNonNullableNullsWithoutDefaults`): an object's property, or
//!    `additionalProperties` value, that is `null` where its schema is neither `nullable` nor
//!    has a `default` is removed. List items are never removed (a `null` item without a
//!    default is left for validation to reject).
//! 2. [`apply_defaults`] (`Default`): in every object that is present, each declared property
//!    that is missing, or `null` where not `nullable`, gets a copy of its `default`; a `null`
//!    `additionalProperties` value or list item whose schema is not `nullable` gets its
//!    schema's `default`. Defaults are applied inside the values they fill in too, but never
//!    inside an absent parent: a default on `spec.size` fills nothing until `spec` exists.
//!
//! A `default: null` counts as no default, as in the API server (its `Default.Object` is
//! `nil`). The schema is read structurally (`properties`, `items`, `additionalProperties`
//! when it is a schema, `nullable`, `default`); a single-element `allOf` is followed, as
//! nowhere else in a structural schema can these keywords sit.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

fn resolved(s: &Value) -> &Value {
    match s.get("allOf").and_then(Value::as_array).map(Vec::as_slice) {
        Some([only]) if s.get("properties").is_none() => only,
        _ => s,
    }
}

fn nullable(s: &Value) -> bool {
    s.get("nullable") == Some(&Value::Bool(true))
}

fn default_of(s: &Value) -> Option<&Value> {
    s.get("default").filter(|d| !d.is_null())
}

fn property<'a>(s: &'a Value, key: &str) -> Option<&'a Value> {
    s.get("properties").and_then(|p| p.get(key)).map(resolved)
}

fn additional_properties(s: &Value) -> Option<&Value> {
    s.get("additionalProperties")
        .filter(|a| a.is_object())
        .map(resolved)
}

fn items(s: &Value) -> Option<&Value> {
    s.get("items").filter(|i| i.is_object()).map(resolved)
}

/// The schema of one property of an object: its declared schema, else `additionalProperties`.
fn field_schema<'a>(s: Option<&'a Value>, key: &str) -> Option<&'a Value> {
    let s = s?;
    property(s, key).or_else(|| additional_properties(s))
}

/// Removes the `null`s of properties and map values whose schema is neither `nullable` nor
/// defaulted (apiextensions-apiserver `PruneNonNullableNullsWithoutDefaults`).
pub fn prune_nulls(value: &mut Value, schema: &Value) {
    prune_nulls_in(value, Some(resolved(schema)));
}

fn prune_nulls_in(x: &mut Value, s: Option<&Value>) {
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
        Value::Array(list) => {
            let it = s.and_then(items);
            for v in list {
                prune_nulls_in(v, it);
            }
        }
        _ => {}
    }
}

/// Fills in the schema's defaults (apiextensions-apiserver `Default`); see the module docs.
pub fn apply_defaults(value: &mut Value, schema: &Value) {
    apply_in(value, resolved(schema));
}

fn apply_in(x: &mut Value, s: &Value) {
    match x {
        Value::Object(map) => {
            if let Some(Value::Object(props)) = s.get("properties") {
                for (k, prop) in props {
                    let prop = resolved(prop);
                    let Some(d) = default_of(prop) else { continue };
                    let missing = match map.get(k) {
                        None => true,
                        Some(v) => v.is_null() && !nullable(prop),
                    };
                    if missing {
                        map.insert(k.clone(), d.clone());
                    }
                }
            }
            let extra = additional_properties(s);
            for (k, v) in map.iter_mut() {
                if let Some(prop) = property(s, k) {
                    apply_in(v, prop);
                } else if let Some(extra) = extra {
                    fill_null(v, extra);
                    apply_in(v, extra);
                }
            }
        }
        Value::Array(list) => {
            let Some(it) = items(s) else { return };
            for v in list {
                fill_null(v, it);
                apply_in(v, it);
            }
        }
        _ => {}
    }
}

/// A `null` list item or map value whose schema is not nullable takes the schema's default.
fn fill_null(v: &mut Value, s: &Value) {
    if v.is_null()
        && !nullable(s)
        && let Some(d) = default_of(s)
    {
        *v = d.clone();
    }
}

/// [`prune_nulls`] then [`apply_defaults`]: what the API server does to a custom resource
/// before validating and storing it.
pub fn default_value(value: &mut Value, schema: &Value) {
    prune_nulls(value, schema);
    apply_defaults(value, schema);
}

/// A typed object defaulted through its JSON: serialized, [`default_value`] with `schema`,
/// and deserialized back. Generated and derived types call it from their
/// `apply_schema_defaults`.
///
/// # Errors
///
/// When the object does not serialize, or when a schema default does not fit the Rust type
/// (the error names the place as serde_json does).
pub fn default_typed<T>(object: &T, schema: &Value) -> Result<T, serde_json::Error>
where
    T: Serialize + DeserializeOwned,
{
    let mut value = serde_json::to_value(object)?;
    default_value(&mut value, schema);
    serde_json::from_value(value)
}

/// The part of a schema that defaulting reads: `properties`, `items`, `additionalProperties`,
/// `nullable` and `default`, kept only along the paths that lead to a `default` (elsewhere
/// there is nothing to fill in; a typed value already holds no `null` that its schema
/// forbids). Generated code embeds this, not the whole schema with its descriptions.
/// `Value::Null` when the schema has no default at all.
pub fn defaulting_schema(schema: &Value) -> Value {
    trim(resolved(schema), 0).unwrap_or(Value::Null)
}

/// Deeper than any real CRD; a schema is user input and must not exhaust the stack.
const MAX_DEPTH: usize = 128;

fn trim(s: &Value, depth: usize) -> Option<Value> {
    if depth > MAX_DEPTH {
        return None;
    }
    let mut out = Map::new();
    if let Some(Value::Object(props)) = s.get("properties") {
        let kept: Map<String, Value> = props
            .iter()
            .filter_map(|(k, p)| Some((k.clone(), trim(resolved(p), depth + 1)?)))
            .collect();
        if !kept.is_empty() {
            out.insert("properties".to_owned(), Value::Object(kept));
        }
    }
    if let Some(it) = items(s).and_then(|i| trim(i, depth + 1)) {
        out.insert("items".to_owned(), it);
    }
    if let Some(ap) = additional_properties(s).and_then(|a| trim(a, depth + 1)) {
        out.insert("additionalProperties".to_owned(), ap);
    }
    if let Some(d) = default_of(s) {
        out.insert("default".to_owned(), d.clone());
    }
    if out.is_empty() {
        return None;
    }
    if nullable(s) {
        out.insert("nullable".to_owned(), Value::Bool(true));
    }
    Some(Value::Object(out))
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
                "opts": {"type": "object", "default": {}, "properties": {
                    "level": {"type": "integer", "default": 1}}},
                "ports": {"type": "array", "items": {"type": "object", "properties": {
                    "protocol": {"type": "string", "default": "TCP"}}}},
                "labels": {"type": "object", "additionalProperties": {"type": "string", "default": "x"}},
                "plain": {"type": "object", "additionalProperties": {"type": "string"}},
                "maybe": {"type": "object", "additionalProperties": {"type": "string", "nullable": true}},
                "names": {"type": "array", "items": {"type": "string", "default": "d"}},
                "raw": {"type": "array", "items": {"type": "string"}}
            }},
            "status": {"type": "object", "properties": {"phase": {"type": "string", "default": "New"}}}
        }})
    }

    #[test]
    fn defaults_fill_present_objects_only() {
        let s = schema();
        let mut v = json!({"spec": {"mode": null, "note": null, "gone": null, "kept": null,
            "ports": [{"protocol": "UDP"}, {}], "labels": {"a": null, "b": "y"}}});
        default_value(&mut v, &s);
        assert_eq!(
            v,
            json!({"spec": {"size": 3, "mode": "auto", "note": null, "kept": null,
                "opts": {"level": 1},
                "ports": [{"protocol": "UDP"}, {"protocol": "TCP"}],
                "labels": {"a": "x", "b": "y"}}})
        );
        // No status: its defaults do not apply inside an absent parent.
        assert!(v.get("status").is_none());
    }

    #[test]
    fn nulls_are_pruned_only_where_neither_nullable_nor_defaulted() {
        let s = schema();
        let mut v = json!({"spec": {"plain": {"a": null, "b": "1"}, "maybe": {"a": null},
            "names": [null, "x"], "raw": [null, "y"]}});
        default_value(&mut v, &s);
        assert_eq!(
            v["spec"]["plain"],
            json!({"b": "1"}),
            "a null map value is pruned"
        );
        assert_eq!(v["spec"]["maybe"], json!({"a": null}), "nullable: kept");
        assert_eq!(
            v["spec"]["names"],
            json!(["d", "x"]),
            "a null item defaults"
        );
        // A null list item without a default is left for validation to reject.
        assert_eq!(v["spec"]["raw"], json!([null, "y"]));
    }

    #[test]
    fn a_default_is_defaulted_inside_and_null_default_is_none() {
        let s = json!({"type": "object", "properties": {
            "a": {"type": "object", "default": {"x": 1}, "properties": {
                "x": {"type": "integer"}, "y": {"type": "integer", "default": 2}}},
            "b": {"type": "string", "default": null}
        }});
        let mut v = json!({"b": null});
        default_value(&mut v, &s);
        assert_eq!(v, json!({"a": {"x": 1, "y": 2}}));
    }

    #[test]
    fn defaulting_schema_keeps_the_paths_to_defaults() {
        let s = schema();
        let trimmed = defaulting_schema(&s);
        assert!(trimmed["properties"]["spec"]["properties"]["gone"].is_null());
        assert!(trimmed["properties"]["spec"]["properties"]["plain"].is_null());
        assert_eq!(
            trimmed["properties"]["spec"]["properties"]["note"],
            json!({"default": "n", "nullable": true})
        );
        // The same results as with the whole schema.
        let mut a = json!({"spec": {"ports": [{}], "names": [null], "opts": {}}, "status": {}});
        let mut b = a.clone();
        default_value(&mut a, &s);
        default_value(&mut b, &trimmed);
        assert_eq!(a, b);
        assert_eq!(defaulting_schema(&json!({"type": "object"})), Value::Null);
    }

    #[test]
    fn typed_objects_default_through_json() {
        #[derive(serde::Serialize, serde::Deserialize, Debug, PartialEq)]
        struct Spec {
            #[serde(skip_serializing_if = "Option::is_none")]
            size: Option<i64>,
        }
        let s = json!({"properties": {"size": {"type": "integer", "default": 3}}});
        let d = default_typed(&Spec { size: None }, &s).unwrap();
        assert_eq!(d, Spec { size: Some(3) });
        let bad = json!({"properties": {"size": {"type": "integer", "default": "x"}}});
        assert!(default_typed(&Spec { size: None }, &bad).is_err());
    }
}
