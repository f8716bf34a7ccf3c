//! How server-side apply sees a schema: which lists merge by key, which are sets, which maps
//! and lists are atomic, and which fields a struct declares.
//!
//! The rules are kube-openapi's `schemaconv`, which turns the OpenAPI schemas into
//! structured-merge-diff types: `x-kubernetes-list-type` (`atomic`, `set`, `map` with
//! `x-kubernetes-list-map-keys`) decides a list, and where a built-in list has no list type
//! its strategic-merge-patch markers do (`x-kubernetes-patch-strategy: merge` with a merge
//! key is a map keyed by it, without one a set; anything else is atomic);
//! `x-kubernetes-map-type: atomic` makes a map or struct one value. A node with no schema
//! (fields a schema does not declare, `x-kubernetes-preserve-unknown-fields`) is typed from
//! its value as apiextensions-apiserver's "deduced" type is: objects are granular maps, lists
//! are atomic.

use serde_json::Value;

use crate::registry::spec::{Schema, builtin_schema};

/// How a list merges.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ListKind {
    /// Replaced as a whole.
    Atomic,
    /// Items are scalars, merged by value.
    Set,
    /// Items are objects, merged by these key fields.
    Map(Vec<String>),
}

/// A position in a schema (or no schema).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Ty<'a> {
    schema: Option<Schema<'a>>,
    /// The object root of a custom resource, whose `metadata` is typed as `ObjectMeta`.
    custom_root: bool,
}

impl<'a> Ty<'a> {
    /// No schema: everything is deduced from values.
    pub fn none() -> Self {
        Self {
            schema: None,
            custom_root: false,
        }
    }

    /// The root of a built-in kind.
    pub fn builtin(group: &str, version: &str, kind: &str) -> Ty<'static> {
        Ty {
            schema: builtin_schema(group, version, kind),
            custom_root: false,
        }
    }

    /// The root of a custom resource with this `openAPIV3Schema` (or none).
    pub fn custom(schema: Option<&'a Value>) -> Self {
        Self {
            schema: schema.map(Schema::standalone),
            custom_root: true,
        }
    }

    /// The type of field `name` and whether the struct declares it (a map entry or an unknown
    /// field is not declared).
    pub fn field(self, name: &str) -> (Ty<'a>, bool) {
        if self.custom_root && name == "metadata" {
            let meta = builtin_schema("", "v1", "ConfigMap").and_then(|s| s.property("metadata"));
            return (
                Ty {
                    schema: meta,
                    custom_root: false,
                },
                true,
            );
        }
        let Some(s) = self.schema else {
            return (Ty::none(), false);
        };
        if let Some(p) = s.property(name) {
            return (
                Ty {
                    schema: Some(p),
                    custom_root: false,
                },
                true,
            );
        }
        let elem = s.additional_properties();
        (
            Ty {
                schema: elem,
                custom_root: false,
            },
            false,
        )
    }

    /// The type of a list's items.
    pub fn items(self) -> Ty<'a> {
        Ty {
            schema: self.schema.and_then(Schema::items),
            custom_root: false,
        }
    }

    /// How this list merges.
    pub fn list_kind(self) -> ListKind {
        let Some(s) = self.schema else {
            return ListKind::Atomic;
        };
        match s.str("x-kubernetes-list-type") {
            Some("set") => return ListKind::Set,
            Some("map") => {
                let keys: Vec<String> = s.list_map_keys().into_iter().map(str::to_owned).collect();
                return if keys.is_empty() {
                    ListKind::Set
                } else {
                    ListKind::Map(keys)
                };
            }
            Some(_) => return ListKind::Atomic,
            None => {}
        }
        match s.str("x-kubernetes-patch-strategy") {
            Some("merge" | "merge,retainKeys") => match s.str("x-kubernetes-patch-merge-key") {
                Some(k) => ListKind::Map(vec![k.to_owned()]),
                None => ListKind::Set,
            },
            _ => ListKind::Atomic,
        }
    }

    /// Whether this map or struct is one value (`x-kubernetes-map-type: atomic`).
    pub fn map_atomic(self) -> bool {
        self.schema
            .is_some_and(|s| s.str("x-kubernetes-map-type") == Some("atomic"))
    }

    /// Whether the schema declares properties here (a struct).
    pub fn is_struct(self) -> bool {
        self.schema
            .is_some_and(|s| s.get("properties").is_some_and(Value::is_object))
    }

    /// The struct's required properties.
    pub fn required(self) -> Vec<String> {
        self.schema
            .and_then(|s| s.get("required"))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|r| r.as_str().map(str::to_owned))
            .collect()
    }

    /// The schema default of a property, used for a missing list-map key field (such as a
    /// port's `protocol`), as structured-merge-diff does.
    pub fn default_of(self, name: &str) -> Option<Value> {
        self.schema?.property(name)?.get("default").cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn builtin_lists_follow_schemaconv() {
        let d = Ty::builtin("apps", "v1", "Deployment");
        let pod_spec = d.field("spec").0.field("template").0.field("spec").0;
        let containers = pod_spec.field("containers").0;
        assert_eq!(containers.list_kind(), ListKind::Map(vec!["name".into()]));
        let args = containers.items().field("args").0;
        assert_eq!(args.list_kind(), ListKind::Atomic);
        let meta = d.field("metadata").0;
        assert_eq!(meta.field("finalizers").0.list_kind(), ListKind::Set);
        assert!(d.field("spec").0.field("selector").0.map_atomic());
        let (labels, declared) = meta.field("labels");
        assert!(declared);
        assert!(!labels.field("app").1);
        let ports = containers.items().field("ports").0;
        assert_eq!(
            ports.list_kind(),
            ListKind::Map(vec!["containerPort".into(), "protocol".into()])
        );
    }

    #[test]
    fn custom_resources_use_their_schema_and_object_meta() {
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
            "properties": {"items": {"type": "array", "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["id"], "items": {"type": "object"}}}}}});
        let t = Ty::custom(Some(&schema));
        let items = t.field("spec").0.field("items").0;
        assert_eq!(items.list_kind(), ListKind::Map(vec!["id".into()]));
        let meta = t.field("metadata").0;
        assert_eq!(meta.field("finalizers").0.list_kind(), ListKind::Set);
        assert!(!t.field("status").1);
        assert_eq!(Ty::none().list_kind(), ListKind::Atomic);
    }
}
