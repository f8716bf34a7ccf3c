//! The type graph of schemas that get generated Rust types (CRDs).
//!
//! Readers turn an OpenAPI v3 schema (a CRD version's `openAPIV3Schema`) into a [`TypeModule`]:
//! a flat, ordered list of named types ([`TypeDef`]) whose fields refer to each other through
//! [`TypeRef`]. Rust names are chosen by the reader (valid, deterministic, collision-free) and
//! every field keeps its exact JSON name, so emitters only print.
//!
//! Kubernetes' structural-schema rules (apiextensions `ValidateStructural`) mean every CRD
//! property declares its type outside `anyOf`/`oneOf`/`allOf`; those branches only validate.
//! The few typeless shapes the API server accepts are mapped losslessly: int-or-string,
//! `x-kubernetes-preserve-unknown-fields` (opaque JSON, or a struct plus a flattened remainder
//! when properties are also given) and branch unions (an untagged enum when the branches have
//! different JSON types, opaque JSON otherwise).

use std::collections::BTreeMap;

use serde_json::Value;

/// The generated types of one CRD version: emitted as one Rust module.
#[derive(Clone, Debug, PartialEq)]
pub struct TypeModule {
    /// Rust module name: the snake case of the type name the kind gives (`HTTPRoute` ->
    /// `http_route`, `Self` -> `self_value`), as the kind's client module
    /// (`self_value_client`) is named.
    pub module: String,
    /// API group, e.g. `gateway.networking.k8s.io`.
    pub group: String,
    /// Version, e.g. `v1`.
    pub version: String,
    /// Kind exactly as in the CRD (may be lower-case, e.g. `postgresql`).
    pub kind: String,
    /// Plural resource name.
    pub plural: String,
    /// Namespaced or cluster-scoped.
    pub scope: crate::model::Scope,
    /// Rust name of the root type (also the first entry of [`TypeModule::types`]).
    pub root: String,
    /// All types of the module, root first, then in schema order (deterministic).
    pub types: Vec<TypeDef>,
    /// What structural defaulting reads of the schema (`properties`, `items`,
    /// `additionalProperties`, `nullable`, `default`, along the paths that lead to a
    /// `default`), embedded in the root type for its explicit `apply_schema_defaults`;
    /// `Value::Null` when the schema has no default.
    pub defaults: Value,
}

impl TypeModule {
    /// Rust module name of the group (`gateway.networking.k8s.io` ->
    /// `gateway_networking_k8s_io`).
    pub fn group_module(&self) -> String {
        crate::naming::snake(&self.group)
    }

    /// Rust module name of the version (`v1beta1`).
    pub fn version_module(&self) -> String {
        crate::naming::snake(&self.version)
    }

    /// Path of the root type relative to the module holding the emitted types file:
    /// `{group_module}::{version_module}::{root}` (the version module re-exports each root).
    pub fn rust_path(&self) -> String {
        format!(
            "{}::{}::{}",
            self.group_module(),
            self.version_module(),
            self.root
        )
    }

    /// How many types deep the root's fields nest (the root alone: 1), counting every
    /// generic wrapper (`Option`, `Vec`, `BTreeMap`) as a level: what rustc walks when it
    /// checks an auto trait (`Send`, `Sync`) of the root, against its `recursion_limit`.
    pub fn nesting(&self) -> usize {
        fn of_ref(m: &TypeModule, t: &TypeRef, memo: &mut BTreeMap<String, usize>) -> usize {
            match t {
                TypeRef::List(t) | TypeRef::Map(t) | TypeRef::Nullable(t) | TypeRef::Pruned(t) => {
                    1 + of_ref(m, t, memo)
                }
                TypeRef::Defaulted { ty, .. } => 1 + of_ref(m, ty, memo),
                TypeRef::Named(n) => of_named(m, n, memo),
                _ => 1,
            }
        }
        fn of_named(m: &TypeModule, name: &str, memo: &mut BTreeMap<String, usize>) -> usize {
            if let Some(d) = memo.get(name) {
                return *d;
            }
            memo.insert(name.to_owned(), 1); // a cycle (none in CRDs) ends here
            let inner = match m.get(name) {
                Some(TypeDef::Struct(s)) => {
                    let mut deepest = 0;
                    for f in &s.fields {
                        deepest =
                            deepest.max(of_ref(m, &f.ty, memo) + usize::from(f.is_optional()));
                    }
                    if let Some(r) = &s.remainder {
                        deepest = deepest.max(1 + of_ref(m, &r.value, memo));
                    }
                    deepest
                }
                Some(TypeDef::Union(u)) => u
                    .variants
                    .iter()
                    .map(|v| of_ref(m, &v.ty, memo))
                    .max()
                    .unwrap_or(0),
                _ => 0,
            };
            memo.insert(name.to_owned(), inner + 1);
            inner + 1
        }
        of_named(self, &self.root, &mut BTreeMap::new())
    }

    /// The type named `name`, if any.
    pub fn get(&self, name: &str) -> Option<&TypeDef> {
        self.types.iter().find(|t| t.name() == name)
    }
}

/// One named type.
#[derive(Clone, Debug, PartialEq)]
pub enum TypeDef {
    /// A JSON object with known properties.
    Struct(StructType),
    /// A string with a known set of values (plus a catch-all for values from newer servers).
    Enum(EnumType),
    /// An untagged union of branches with different JSON types.
    Union(UnionType),
}

impl TypeDef {
    /// The Rust name of the type.
    pub fn name(&self) -> &str {
        match self {
            TypeDef::Struct(s) => &s.name,
            TypeDef::Enum(e) => &e.name,
            TypeDef::Union(u) => &u.name,
        }
    }
}

/// A struct: JSON object with declared properties.
#[derive(Clone, Debug, PartialEq)]
pub struct StructType {
    /// Rust name.
    pub name: String,
    /// Documentation (schema `description`).
    pub docs: Option<String>,
    /// Schema path, e.g. `.spec.listeners[]` (for diagnostics and docs).
    pub schema_path: String,
    /// Fields in JSON-name order.
    pub fields: Vec<Field>,
    /// Unknown properties kept in a flattened map
    /// (`x-kubernetes-preserve-unknown-fields` or `additionalProperties` beside `properties`).
    pub remainder: Option<Remainder>,
    /// Whether this is the resource's root type (serializes `apiVersion`/`kind`, has
    /// `metadata: ObjectMeta`, implements `Resource`).
    pub is_root: bool,
}

/// The flattened map of properties a struct does not declare.
#[derive(Clone, Debug, PartialEq)]
pub struct Remainder {
    /// Rust field name (collision-free with the declared fields).
    pub rust_name: String,
    /// Type of the values.
    pub value: TypeRef,
}

/// One property of a struct.
#[derive(Clone, Debug, PartialEq)]
pub struct Field {
    /// JSON name, exactly as in the schema.
    pub json_name: String,
    /// Rust field name (snake case, may be a raw identifier such as `r#type`).
    pub rust_name: String,
    /// Value type (without the `Option` that [`Field::is_optional`] adds).
    pub ty: TypeRef,
    /// Listed in the parent's `required`.
    pub required: bool,
    /// `nullable: true`.
    pub nullable: bool,
    /// Schema `default`: documented on the field and filled in only by the explicit
    /// defaulting (`apply_schema_defaults`, as the API server does), never on deserialize.
    pub default: Option<Value>,
    /// Documentation.
    pub docs: Option<String>,
    /// For an associative list (`x-kubernetes-list-type: map`), its
    /// `x-kubernetes-list-map-keys`: the item fields that identify an item, which server-side
    /// apply merges by. Empty otherwise.
    pub list_map_keys: Vec<String>,
}

impl Field {
    /// Whether the Rust field is an `Option`: not required, nullable, or with a default (a
    /// document may leave a defaulted property out; the API server fills it in).
    pub fn is_optional(&self) -> bool {
        !self.required || self.nullable || self.default.is_some()
    }
}

/// A string enum.
#[derive(Clone, Debug, PartialEq)]
pub struct EnumType {
    /// Rust name.
    pub name: String,
    /// Documentation.
    pub docs: Option<String>,
    /// Known values in schema order.
    pub variants: Vec<EnumVariant>,
    /// Rust name of the catch-all variant holding any other string (`Other`).
    pub other_variant: String,
}

/// One known value of a string enum.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EnumVariant {
    /// The JSON string.
    pub value: String,
    /// Rust variant name.
    pub rust_name: String,
}

/// An untagged union: each branch has a different JSON type, so the first that matches wins
/// and serializes back to the same JSON.
#[derive(Clone, Debug, PartialEq)]
pub struct UnionType {
    /// Rust name.
    pub name: String,
    /// Documentation.
    pub docs: Option<String>,
    /// Branches, tried in order.
    pub variants: Vec<UnionVariant>,
}

/// One branch of a [`UnionType`].
#[derive(Clone, Debug, PartialEq)]
pub struct UnionVariant {
    /// Rust variant name (the JSON type: `String`, `Integer`, `Object`, ...).
    pub rust_name: String,
    /// Type of the branch.
    pub ty: TypeRef,
}

/// A reference to a type: a primitive, a well-known Kubernetes type, a container, or a
/// named type of the same module.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TypeRef {
    /// `string`.
    String,
    /// `boolean`.
    Bool,
    /// `integer` with `format: int32`.
    I32,
    /// `integer` with `format: int64` or no format.
    I64,
    /// `number` (`serde_json::Number`: `3` stays an integer, `3.5` a float).
    Number,
    /// `x-kubernetes-int-or-string` (k8s-openapi `IntOrString`).
    IntOrString,
    /// int-or-string with the Kubernetes quantity pattern (kinform-core `value::Quantity`: a
    /// number stays a number, a string a string).
    Quantity,
    /// `format: date-time` (kinform-core `value::Timestamp`: the text as sent, with its
    /// fraction and offset, parsed on demand).
    DateTime,
    /// `format: byte` (k8s-openapi `ByteString`, base64 on the wire).
    Bytes,
    /// Any JSON value (`x-kubernetes-preserve-unknown-fields`, schemaless).
    Json,
    /// `ObjectMeta` (the `metadata` of roots and embedded resources).
    ObjectMeta,
    /// An object whose schema is exactly `metav1.Condition`'s (kinform-core
    /// `value::Condition`: k8s-openapi's `Condition` with the transition time kept as sent).
    Condition,
    /// `array`.
    List(Box<TypeRef>),
    /// `object` with `additionalProperties` (a `BTreeMap<String, _>`).
    Map(Box<TypeRef>),
    /// A nullable list item or map value (`Option<_>`, serialized as `null`).
    Nullable(Box<TypeRef>),
    /// A list item or map value whose (non-nullable) schema has a `default`: the API server
    /// replaces a `null` there with the default (structural defaulting). Decoding keeps the
    /// `null` (`Option<_>`, `None` written as `null`) for the explicit defaulting to fill.
    Defaulted {
        /// Type of the item or value.
        ty: Box<TypeRef>,
        /// The schema default as JSON text (keeps `TypeRef` `Eq`, `Ord` and `Hash`).
        default: String,
    },
    /// A map value whose schema is neither nullable nor defaulted: the API server removes an
    /// entry whose value is `null` before defaulting (apiextensions-apiserver
    /// `PruneNonNullableNullsWithoutDefaults`); the generated deserializer drops it too (a
    /// `null` there is not valid against the schema, and the Rust value type cannot hold
    /// it). Only ever the value of a [`TypeRef::Map`] or of a [`Remainder`] typed by
    /// `additionalProperties` (a `null` list item is not pruned: the server rejects it, and
    /// decoding fails with an error). The Rust type is the inner type's.
    Pruned(Box<TypeRef>),
    /// A type of the same module, by Rust name.
    Named(String),
}
