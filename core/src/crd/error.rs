//! Why a CustomResourceDefinition could not be built: its schema is not an
//! apiextensions.k8s.io/v1 `JSONSchemaProps`.
//!
//! A derived type's schema comes from `schemars` at run time: a hand-written `JsonSchema`
//! implementation (`schema = "manual"`, or a field type's own impl) can write keywords with
//! values the API server's schema type cannot hold (`"maximum": "ten"`, `"type": ["string",
//! "integer"]`, `"required": true`). Nothing is dropped silently: the builder fails with
//! [`CrdError`], which names the kind, the version and the place in the schema
//! (`openAPIV3Schema.properties.spec.properties.size.maximum`) with serde's message, as the API
//! server's own validation of a CRD names the field path.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSONSchemaProps;
use serde_json::{Map, Value};

/// A CustomResourceDefinition could not be built.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CrdError {
    /// The object schema does not deserialize as a `JSONSchemaProps`.
    #[error(
        "the schema of {kind} {version} is not a CRD schema (JSONSchemaProps) at `{path}`: {message}"
    )]
    InvalidSchema {
        /// Kind of the resource.
        kind: String,
        /// Version whose schema it is.
        version: String,
        /// Where in the schema, from `openAPIV3Schema` (dotted; array indexes in brackets).
        path: String,
        /// serde's message.
        message: String,
    },
}

/// Reads `schema` as a `JSONSchemaProps`, or names where and why it is not one.
pub(super) fn schema_props(
    kind: &str,
    version: &str,
    schema: Value,
) -> Result<JSONSchemaProps, CrdError> {
    match serde_json::from_value::<JSONSchemaProps>(schema.clone()) {
        Ok(props) => Ok(props),
        Err(e) => {
            let (path, message) = locate(&schema, "openAPIV3Schema".to_owned())
                .unwrap_or_else(|| ("openAPIV3Schema".to_owned(), e.to_string()));
            Err(CrdError::InvalidSchema {
                kind: kind.to_owned(),
                version: version.to_owned(),
                path,
                message,
            })
        }
    }
}

fn fails(v: &Value) -> Option<String> {
    serde_json::from_value::<JSONSchemaProps>(v.clone())
        .err()
        .map(|e| e.to_string())
}

/// The deepest place under `path` where `schema` stops being a `JSONSchemaProps`: a failing
/// subschema is searched first, then the node's own keyword that fails alone.
fn locate(schema: &Value, path: String) -> Option<(String, String)> {
    let Value::Object(node) = schema else {
        return fails(schema).map(|m| (path, m));
    };
    for (key, child) in node {
        let here = format!("{path}.{key}");
        let found = match (key.as_str(), child) {
            ("properties" | "patternProperties" | "definitions", Value::Object(m)) => {
                named(m, &here)
            }
            ("items" | "additionalProperties" | "additionalItems" | "not", Value::Object(_)) => {
                fails(child).and_then(|_| locate(child, here.clone()))
            }
            ("items" | "allOf" | "anyOf" | "oneOf", Value::Array(list)) => list
                .iter()
                .enumerate()
                .find_map(|(i, s)| fails(s).and_then(|_| locate(s, format!("{here}[{i}]")))),
            _ => None,
        };
        if found.is_some() {
            return found;
        }
    }
    // No subschema fails: one of this node's own keywords does.
    node.iter().find_map(|(key, child)| {
        let alone = Value::Object(Map::from_iter([(key.clone(), child.clone())]));
        fails(&alone).map(|m| (format!("{path}.{key}"), m))
    })
}

fn named(m: &Map<String, Value>, path: &str) -> Option<(String, String)> {
    m.iter()
        .find_map(|(name, s)| fails(s).and_then(|_| locate(s, format!("{path}.{name}"))))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn names_the_deepest_failing_keyword() {
        let schema = json!({
            "type": "object",
            "properties": {
                "spec": {"type": "object", "properties": {
                    "size": {"type": "integer", "maximum": "ten"},
                    "ok": {"type": "string"}
                }}
            }
        });
        let err = schema_props("Foo", "v1", schema).unwrap_err();
        let CrdError::InvalidSchema {
            kind,
            version,
            path,
            message,
        } = &err;
        assert_eq!((kind.as_str(), version.as_str()), ("Foo", "v1"));
        assert_eq!(
            path,
            "openAPIV3Schema.properties.spec.properties.size.maximum"
        );
        assert!(message.contains("invalid type"), "{message}");
        let text = err.to_string();
        assert!(text.contains("Foo v1"), "{text}");
        assert!(text.contains("properties.size.maximum"), "{text}");
    }

    #[test]
    fn names_list_branches_and_root_keywords() {
        let schema = json!({"anyOf": [{"type": "string"}, {"type": ["string", "null"]}]});
        let err = schema_props("Foo", "v2", schema).unwrap_err();
        let CrdError::InvalidSchema { path, .. } = &err;
        assert_eq!(path, "openAPIV3Schema.anyOf[1].type");
        let err = schema_props("Foo", "v2", json!({"required": true})).unwrap_err();
        let CrdError::InvalidSchema { path, .. } = &err;
        assert_eq!(path, "openAPIV3Schema.required");
        let err = schema_props("Foo", "v2", json!("object")).unwrap_err();
        let CrdError::InvalidSchema { path, .. } = &err;
        assert_eq!(path, "openAPIV3Schema");
    }

    #[test]
    fn a_valid_schema_reads() {
        let props = schema_props("Foo", "v1", json!({"type": "object"})).unwrap();
        assert_eq!(props.type_.as_deref(), Some("object"));
    }
}
