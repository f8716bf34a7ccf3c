//! Server-side apply without I/O: the field sets of `managedFields` and *extract*, the part of
//! a live object one field manager owns.
//!
//! A live object's `metadata.managedFields` records, per field manager, operation (`Apply` or
//! `Update`) and subresource, the set of fields that manager owns, serialized as
//! structured-merge-diff's `FieldsV1`: a JSON tree whose keys are path elements,
//!
//! | key | path element |
//! |---|---|
//! | `f:<name>` | a field of a struct, or a key of a map |
//! | `k:{"name":"a"}` | the item of an associative list (`x-kubernetes-list-type: map`) with these key values |
//! | `v:<json>` | the item of a set (`x-kubernetes-list-type: set`) equal to this value |
//! | `i:<n>` | the item at index `n` of a list |
//! | `.` | the element itself, next to its children |
//!
//! and whose leaves (`{}`) are owned values. [`FieldSet`] parses that tree; [`extract`] gives
//! the object restricted to what one manager applied, which is what client-go's
//! `applyconfigurations/.../ExtractInto` (and the generated `ExtractDeployment`, ...) do, so a
//! controller can read what it applied, change it, and apply it again without claiming
//! other managers' fields:
//!
//! - only the manager's entry for operation `Apply` and the given subresource (`""` for the
//!   main resource, `"status"`) counts, as in client-go;
//! - the set's leaves select values, which are kept whole (a scalar, or an atomic struct or
//!   list); a `.` next to children selects nothing by itself (client-go extracts the set's
//!   `Leaves()`); children select into maps, structs and lists;
//! - an associative list item carries its keys (the key fields are taken from the `k:`
//!   element when the manager's set omits them), so the result applies to the same item;
//! - list items keep the live object's order; path elements that match nothing are skipped;
//! - `apiVersion`, `kind`, `metadata.name` and `metadata.namespace` are always kept, as the
//!   generated `Extract<Kind>` functions of client-go set them.
//!
//! [`extract_as`] is the typed form: from any serializable object to any deserializable
//! apply configuration (generated ones, or a `serde_json::Value`).
//!
//! Hand-written on `serde_json`: no crate of the field reads structured-merge-diff's
//! serialization (kube-rs leaves `FieldsV1` as an opaque JSON value).

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ManagedFieldsEntry;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

/// The deepest field set [`FieldSet::from_fields_v1`] reads; deeper sets are refused (no
/// Kubernetes object nests that far, and recursion must stay bounded on any input).
pub const MAX_DEPTH: usize = 128;

/// Why a field set or an extract failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ApplyError {
    /// A `FieldsV1` key is none of `f:`, `k:`, `v:`, `i:` or `.`.
    #[error("managedFields of {manager}: path element {element:?}: {reason}")]
    PathElement {
        /// The field manager whose set it is (empty when parsed on its own).
        manager: String,
        /// The offending key.
        element: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A `FieldsV1` value is not a JSON object, or the set nests too deep.
    #[error("managedFields of {manager}: {reason}")]
    Shape {
        /// The field manager whose set it is (empty when parsed on its own).
        manager: String,
        /// What is wrong.
        reason: String,
    },
    /// The object does not serialize to a JSON object, or the extract does not decode as the
    /// requested type.
    #[error("extract for field manager {manager}: {what}: {source}")]
    Json {
        /// The field manager.
        manager: String,
        /// The step that failed.
        what: &'static str,
        /// serde_json's error.
        source: serde_json::Error,
    },
}

/// One path element of a field set.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum PathElement {
    /// `f:<name>`: a struct field or a map key.
    Field(String),
    /// `k:{...}`: the associative list item with these key fields (sorted by name).
    Key(BTreeMap<String, ValueKey>),
    /// `v:<json>`: the set item equal to this value.
    Value(ValueKey),
    /// `i:<n>`: the list item at this index.
    Index(usize),
}

/// A JSON value as a path element holds it: ordered and comparable, compared with what a live
/// object holds through [`ValueKey::matches`].
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct ValueKey(String);

impl ValueKey {
    fn new(v: &Value) -> Self {
        Self(v.to_string())
    }

    /// The value this key holds.
    pub fn value(&self) -> Value {
        serde_json::from_str(&self.0).unwrap_or(Value::Null)
    }

    /// Whether `v` is the value this key holds (numbers compare by value: `1` and `1.0` are
    /// the same item, as structured-merge-diff compares them).
    pub fn matches(&self, v: &Value) -> bool {
        json_eq(&self.value(), v)
    }
}

fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(x), Some(y)) => x == y,
            _ => x.as_f64() == y.as_f64(),
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| json_eq(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, a)| y.get(k).is_some_and(|b| json_eq(a, b)))
        }
        _ => a == b,
    }
}

/// A parsed `FieldsV1` set: which children each path element has, and whether the element
/// itself is a member.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FieldSet {
    /// `.`: the element itself is owned, next to its children.
    pub itself: bool,
    /// The children, each with its own set (a leaf: empty set).
    pub children: BTreeMap<PathElement, FieldSet>,
}

impl FieldSet {
    /// Parses a `FieldsV1` JSON tree; `manager` names the field manager in errors.
    pub fn from_fields_v1(fields: &Value, manager: &str) -> Result<Self, ApplyError> {
        Self::parse(fields, manager, 0)
    }

    fn parse(fields: &Value, manager: &str, depth: usize) -> Result<Self, ApplyError> {
        let shape = |reason: String| ApplyError::Shape {
            manager: manager.to_owned(),
            reason,
        };
        if depth > MAX_DEPTH {
            return Err(shape(format!(
                "the field set nests deeper than {MAX_DEPTH}"
            )));
        }
        let Value::Object(map) = fields else {
            return Err(shape(format!("a field set is a JSON object, not {fields}")));
        };
        let mut set = FieldSet::default();
        for (key, child) in map {
            if key == "." {
                set.itself = true;
                continue;
            }
            let pe = parse_element(key).map_err(|reason| ApplyError::PathElement {
                manager: manager.to_owned(),
                element: key.clone(),
                reason,
            })?;
            set.children
                .insert(pe, Self::parse(child, manager, depth + 1)?);
        }
        Ok(set)
    }

    /// Whether this set is a leaf: the value at its path is owned whole.
    pub fn is_leaf(&self) -> bool {
        self.children.is_empty()
    }

    /// The paths of the leaves, each as its path elements (structured-merge-diff's
    /// `Set.Leaves`), in order.
    pub fn leaves(&self) -> Vec<Vec<PathElement>> {
        let mut out = Vec::new();
        let mut path = Vec::new();
        self.collect_leaves(&mut path, &mut out);
        out
    }

    fn collect_leaves(&self, path: &mut Vec<PathElement>, out: &mut Vec<Vec<PathElement>>) {
        for (pe, child) in &self.children {
            path.push(pe.clone());
            if child.is_leaf() {
                out.push(path.clone());
            } else {
                child.collect_leaves(path, out);
            }
            path.pop();
        }
    }

    /// The part of `value` this set selects (see the module docs); `None` when it selects
    /// nothing of it.
    pub fn select(&self, value: &Value) -> Option<Value> {
        if self.is_leaf() {
            return Some(value.clone());
        }
        match value {
            Value::Object(obj) => {
                let mut out = Map::new();
                for (pe, child) in &self.children {
                    if let PathElement::Field(name) = pe
                        && let Some(v) = obj.get(name)
                        && let Some(picked) = child.select(v)
                    {
                        out.insert(name.clone(), picked);
                    }
                }
                Some(Value::Object(out))
            }
            Value::Array(items) => {
                let mut out = Vec::new();
                for (i, item) in items.iter().enumerate() {
                    let Some((pe, child)) = self
                        .children
                        .iter()
                        .find(|(pe, _)| element_matches(pe, i, item))
                    else {
                        continue;
                    };
                    let Some(mut picked) = child.select(item) else {
                        continue;
                    };
                    if let (PathElement::Key(keys), Value::Object(obj)) = (pe, &mut picked) {
                        for (k, v) in keys {
                            obj.entry(k.clone()).or_insert_with(|| v.value());
                        }
                    }
                    out.push(picked);
                }
                Some(Value::Array(out))
            }
            // Children under a scalar select nothing of it.
            _ => None,
        }
    }
}

fn element_matches(pe: &PathElement, index: usize, item: &Value) -> bool {
    match pe {
        PathElement::Field(_) => false,
        PathElement::Index(i) => *i == index,
        PathElement::Value(v) => v.matches(item),
        PathElement::Key(keys) => {
            let Value::Object(obj) = item else {
                return false;
            };
            keys.iter()
                .all(|(k, v)| obj.get(k).is_some_and(|have| v.matches(have)))
        }
    }
}

fn parse_element(key: &str) -> Result<PathElement, String> {
    let (prefix, rest) = key
        .split_once(':')
        .ok_or_else(|| "no `f:`, `k:`, `v:` or `i:` prefix".to_owned())?;
    match prefix {
        "f" => Ok(PathElement::Field(rest.to_owned())),
        "i" => rest
            .parse()
            .map(PathElement::Index)
            .map_err(|e| format!("index: {e}")),
        "v" => serde_json::from_str::<Value>(rest)
            .map(|v| PathElement::Value(ValueKey::new(&v)))
            .map_err(|e| format!("value: {e}")),
        "k" => match serde_json::from_str::<Value>(rest) {
            Ok(Value::Object(map)) => Ok(PathElement::Key(
                map.iter()
                    .map(|(k, v)| (k.clone(), ValueKey::new(v)))
                    .collect(),
            )),
            Ok(other) => Err(format!("a key is a JSON object, not {other}")),
            Err(e) => Err(format!("key: {e}")),
        },
        other => Err(format!("unknown prefix `{other}:`")),
    }
}

/// The field set of `manager`'s `Apply` entry for `subresource` (`""` or `"status"`) in
/// `managed_fields`; `None` when it has none.
pub fn applied_set(
    managed_fields: &[ManagedFieldsEntry],
    manager: &str,
    subresource: &str,
) -> Result<Option<FieldSet>, ApplyError> {
    let entry = managed_fields.iter().find(|e| {
        e.manager.as_deref() == Some(manager)
            && e.operation.as_deref() == Some("Apply")
            && e.subresource.as_deref().unwrap_or("") == subresource
    });
    let Some(entry) = entry else {
        return Ok(None);
    };
    match &entry.fields_v1 {
        Some(fields) => FieldSet::from_fields_v1(&fields.0, manager).map(Some),
        None => Ok(Some(FieldSet::default())),
    }
}

/// The part of `object` (a JSON object with `metadata.managedFields`) that `manager` applied
/// for `subresource` (`""` or `"status"`), with `apiVersion`, `kind`, `metadata.name` and
/// `metadata.namespace` always kept. A manager that never applied gets just those.
pub fn extract(object: &Value, manager: &str, subresource: &str) -> Result<Value, ApplyError> {
    let entries: Vec<ManagedFieldsEntry> = match object.pointer("/metadata/managedFields") {
        Some(v) => serde_json::from_value(v.clone()).map_err(|source| ApplyError::Json {
            manager: manager.to_owned(),
            what: "reading metadata.managedFields",
            source,
        })?,
        None => Vec::new(),
    };
    let set = applied_set(&entries, manager, subresource)?;
    let mut out = match set {
        Some(set) if !set.is_leaf() => set.select(object).unwrap_or(Value::Null),
        _ => Value::Object(Map::new()),
    };
    let Value::Object(out_map) = &mut out else {
        return Err(ApplyError::Shape {
            manager: manager.to_owned(),
            reason: "the object is not a JSON object".to_owned(),
        });
    };
    for member in ["apiVersion", "kind"] {
        if let Some(v) = object.get(member) {
            out_map.insert(member.to_owned(), v.clone());
        }
    }
    for member in ["name", "namespace"] {
        if let Some(v) = object.pointer(&format!("/metadata/{member}")) {
            let meta = out_map
                .entry("metadata")
                .or_insert_with(|| Value::Object(Map::new()));
            if let Value::Object(meta) = meta {
                meta.insert(member.to_owned(), v.clone());
            }
        }
    }
    Ok(out)
}

/// [`extract`] from a typed object into a typed apply configuration `T` (a generated one, or
/// `serde_json::Value`).
pub fn extract_as<K: Serialize, T: DeserializeOwned>(
    object: &K,
    manager: &str,
    subresource: &str,
) -> Result<T, ApplyError> {
    let json = |what, source| ApplyError::Json {
        manager: manager.to_owned(),
        what,
        source,
    };
    let value = serde_json::to_value(object).map_err(|e| json("encoding the object", e))?;
    let picked = extract(&value, manager, subresource)?;
    serde_json::from_value(picked).map_err(|e| json("decoding the extract", e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object(fields: Value) -> Value {
        json!({
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {
                "name": "web",
                "namespace": "ns",
                "labels": {"app": "web", "tier": "front"},
                "managedFields": [
                    {"manager": "mine", "operation": "Apply", "apiVersion": "apps/v1",
                     "fieldsType": "FieldsV1", "fieldsV1": fields},
                    {"manager": "mine", "operation": "Apply", "apiVersion": "apps/v1",
                     "fieldsType": "FieldsV1", "subresource": "status",
                     "fieldsV1": {"f:status": {"f:replicas": {}}}},
                    {"manager": "other", "operation": "Apply", "apiVersion": "apps/v1",
                     "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:paused": {}}}}
                ]
            },
            "spec": {
                "replicas": 3,
                "paused": false,
                "selector": {"matchLabels": {"app": "web"}},
                "template": {"spec": {"containers": [
                    {"name": "a", "image": "a:1", "args": ["x"]},
                    {"name": "b", "image": "b:1"}
                ]}},
                "finalizers": ["x", "y", "z"],
                "ports": [{"port": 80, "protocol": "TCP", "name": "http"},
                          {"port": 80, "protocol": "UDP", "name": "dns"}]
            },
            "status": {"replicas": 3, "ready": 2}
        })
    }

    #[test]
    fn fields_keys_values_and_atomic_leaves() {
        let obj = object(json!({
            "f:metadata": {"f:labels": {"f:app": {}}},
            "f:spec": {
                "f:replicas": {},
                "f:selector": {},
                "f:template": {"f:spec": {"f:containers": {
                    "k:{\"name\":\"b\"}": {".": {}, "f:image": {}}
                }}},
                "f:finalizers": {"v:\"z\"": {}, "v:\"x\"": {}},
                "f:ports": {"k:{\"port\":80,\"protocol\":\"UDP\"}": {".": {}, "f:name": {}}}
            }
        }));
        let got = extract(&obj, "mine", "").unwrap();
        assert_eq!(
            got,
            json!({
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": "web", "namespace": "ns", "labels": {"app": "web"}},
                "spec": {
                    "replicas": 3,
                    "selector": {"matchLabels": {"app": "web"}},
                    "template": {"spec": {"containers": [{"name": "b", "image": "b:1"}]}},
                    "finalizers": ["x", "z"],
                    "ports": [{"port": 80, "protocol": "UDP", "name": "dns"}]
                }
            })
        );
    }

    #[test]
    fn subresource_and_unknown_manager() {
        let obj = object(json!({"f:spec": {"f:replicas": {}}}));
        let status = extract(&obj, "mine", "status").unwrap();
        assert_eq!(status["status"], json!({"replicas": 3}));
        assert!(status.get("spec").is_none());
        let nobody = extract(&obj, "nobody", "").unwrap();
        assert_eq!(
            nobody,
            json!({"apiVersion": "apps/v1", "kind": "Deployment",
                   "metadata": {"name": "web", "namespace": "ns"}})
        );
        let other = extract(&obj, "other", "").unwrap();
        assert_eq!(other["spec"], json!({"paused": false}));
    }

    #[test]
    fn index_elements_and_missing_values() {
        let obj = object(json!({"f:spec": {
            "f:finalizers": {"i:1": {}, "i:9": {}},
            "f:gone": {"f:deeper": {}}
        }}));
        let got = extract(&obj, "mine", "").unwrap();
        assert_eq!(got["spec"], json!({"finalizers": ["y"]}));
    }

    #[test]
    fn bad_sets_are_errors_not_panics() {
        for bad in [
            json!({"x:foo": {}}),
            json!({"nocolon": {}}),
            json!({"k:[1]": {}}),
            json!({"i:-1": {}}),
            json!({"f:a": 3}),
            json!([1]),
        ] {
            assert!(FieldSet::from_fields_v1(&bad, "m").is_err(), "{bad}");
        }
        let mut deep = json!({});
        for _ in 0..(MAX_DEPTH + 2) {
            deep = json!({ "f:a": deep });
        }
        assert!(matches!(
            FieldSet::from_fields_v1(&deep, "m"),
            Err(ApplyError::Shape { .. })
        ));
    }

    #[test]
    fn leaves_are_the_owned_paths() {
        let set = FieldSet::from_fields_v1(
            &json!({"f:a": {".": {}, "f:b": {}}, "f:c": {}, "v:1": {}}),
            "m",
        )
        .unwrap();
        assert_eq!(
            set.leaves(),
            vec![
                vec![
                    PathElement::Field("a".into()),
                    PathElement::Field("b".into())
                ],
                vec![PathElement::Field("c".into())],
                vec![PathElement::Value(ValueKey::new(&json!(1)))],
            ]
        );
    }

    #[test]
    fn numbers_match_by_value() {
        assert!(ValueKey::new(&json!(80)).matches(&json!(80.0)));
        assert!(!ValueKey::new(&json!(80)).matches(&json!("80")));
    }
}
