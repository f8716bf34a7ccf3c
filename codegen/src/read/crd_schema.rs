//! One CRD version's `openAPIV3Schema` -> a [`TypeModule`] (the type graph of that version).
//!
//! The walk is structural: it only reads keywords where the schema grammar puts them, so a
//! property literally named `properties`, `items`, `enum`, `default`, `$ref` or
//! `x-kubernetes-*` (clusterclass variables, tekton params) is just a property. Mapping follows
//! the API server's own interpretation of structural schemas (apiextensions-apiserver
//! `pkg/apiserver/schema`): `x-kubernetes-int-or-string` (quantity when it carries the
//! resource.Quantity pattern), `x-kubernetes-preserve-unknown-fields` (opaque JSON, or a
//! flattened remainder beside declared properties), `x-kubernetes-embedded-resource`
//! (`apiVersion`/`kind`/`metadata` always present), `nullable`, `default`. Validation-only
//! keywords (`pattern`, `minimum`, CEL rules, `not`) do not change the type, nor does `enum`
//! on integers, numbers or booleans: such a field keeps its scalar type, which holds every
//! listed value and any value a newer server adds (only string enums become Rust enums, with
//! an `Other(String)` catch-all). `oneOf`/`anyOf` branches of the same JSON type merge
//! (objects into one struct of optional fields), see `Converter::typeless`.

use serde_json::{Map, Value};

use crate::model::Scope;
use crate::model::types::{
    EnumType, EnumVariant, Field, Remainder, StructType, TypeDef, TypeModule, TypeRef, UnionType,
    UnionVariant,
};
use crate::naming::{NameAllocator, assign_field_names, camel};

use super::crd_error::SchemaIssue;

/// The pattern controller-gen writes for `resource.Quantity` fields.
pub const QUANTITY_PATTERN: &str = r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$";

/// Nesting deeper than this is reported instead of recursing: a schema read from a document
/// nests no deeper than the document ([`MAX_NESTING`](super::yaml::MAX_NESTING), as deep as
/// kube-apiserver reads; real CRDs nest up to about 25 schema levels), so this only guards a
/// schema handed over otherwise. The recursion runs on [`super::stack`]'s deep stack.
const MAX_DEPTH: usize = super::yaml::MAX_NESTING;

/// What identifies the resource whose schema is converted.
#[derive(Clone, Debug)]
pub struct ResourceIdent<'a> {
    /// API group.
    pub group: &'a str,
    /// Version.
    pub version: &'a str,
    /// Kind, as in the CRD.
    pub kind: &'a str,
    /// Plural.
    pub plural: &'a str,
    /// Scope.
    pub scope: Scope,
}

/// Converts a root `openAPIV3Schema` into the types of one module.
pub fn convert_schema(schema: &Value, id: &ResourceIdent<'_>) -> Result<TypeModule, SchemaIssue> {
    super::stack::deep(|| convert_here(schema, id))
}

fn convert_here(schema: &Value, id: &ResourceIdent<'_>) -> Result<TypeModule, SchemaIssue> {
    let mut conv = Converter {
        types: Vec::new(),
        names: NameAllocator::camel(),
    };
    let root = conv.names.alloc(&camel(id.kind));
    conv.root(schema, &root)?;
    Ok(TypeModule {
        module: crate::naming::snake(&camel(id.kind)),
        group: id.group.to_owned(),
        version: id.version.to_owned(),
        kind: id.kind.to_owned(),
        plural: id.plural.to_owned(),
        scope: id.scope,
        root,
        types: conv.types,
        defaults: defaults_schema(schema, 0).unwrap_or(Value::Null),
    })
}

/// What structural defaulting reads of `schema` (`properties`, `items`,
/// `additionalProperties`, `nullable`, `default`), along the paths that lead to a `default`:
/// the same selection as `kinform_core::defaulting::defaulting_schema` (which this crate cannot
/// import: as a build dependency it would pull k8s-openapi without a version), so the
/// embedded schema defaults exactly as the whole one. `None` when nothing below has a default.
fn defaults_schema(s: &Value, depth: usize) -> Option<Value> {
    if depth > MAX_DEPTH {
        return None;
    }
    let s = match s.get("allOf").and_then(Value::as_array).map(Vec::as_slice) {
        Some([only]) if s.get("properties").is_none() => only,
        _ => s,
    };
    let mut out = Map::new();
    if let Some(Value::Object(props)) = s.get("properties") {
        let kept: Map<String, Value> = props
            .iter()
            .filter_map(|(k, p)| Some((k.clone(), defaults_schema(p, depth + 1)?)))
            .collect();
        if !kept.is_empty() {
            out.insert("properties".to_owned(), Value::Object(kept));
        }
    }
    for key in ["items", "additionalProperties"] {
        if let Some(sub) = s.get(key).filter(|v| v.is_object())
            && let Some(sub) = defaults_schema(sub, depth + 1)
        {
            out.insert(key.to_owned(), sub);
        }
    }
    if let Some(d) = s.get("default").filter(|d| !d.is_null()) {
        out.insert("default".to_owned(), d.clone());
    }
    if out.is_empty() {
        return None;
    }
    if s.get("nullable") == Some(&Value::Bool(true)) {
        out.insert("nullable".to_owned(), Value::Bool(true));
    }
    Some(Value::Object(out))
}

struct Converter {
    types: Vec<TypeDef>,
    names: NameAllocator,
}

fn issue(path: &str, message: impl Into<String>) -> SchemaIssue {
    SchemaIssue {
        path: if path.is_empty() {
            ".".to_owned()
        } else {
            path.to_owned()
        },
        message: message.into(),
    }
}

/// Typed access to the keywords of one schema node.
struct Node<'a> {
    map: &'a Map<String, Value>,
    path: String,
}

impl<'a> Node<'a> {
    fn new(v: &'a Value, path: &str) -> Result<Self, SchemaIssue> {
        match v {
            Value::Object(map) => {
                if map.contains_key("$ref") {
                    return Err(issue(path, "`$ref` is not allowed in CRD schemas"));
                }
                Ok(Node {
                    map,
                    path: path.to_owned(),
                })
            }
            other => Err(issue(
                path,
                format!("a schema must be an object, found {}", json_kind(other)),
            )),
        }
    }

    fn str(&self, key: &str) -> Result<Option<&'a str>, SchemaIssue> {
        match self.map.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(other) => Err(issue(
                &self.path,
                format!("`{key}` must be a string, found {}", json_kind(other)),
            )),
        }
    }

    fn flag(&self, key: &str) -> Result<bool, SchemaIssue> {
        match self.map.get(key) {
            None | Some(Value::Null) => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(other) => Err(issue(
                &self.path,
                format!("`{key}` must be a boolean, found {}", json_kind(other)),
            )),
        }
    }

    /// The key fields of an associative list (`x-kubernetes-list-type: map` with
    /// `x-kubernetes-list-map-keys`); empty for any other schema.
    fn list_map_keys(&self) -> Result<Vec<String>, SchemaIssue> {
        if self.str("x-kubernetes-list-type")? != Some("map") {
            return Ok(Vec::new());
        }
        match self.map.get("x-kubernetes-list-map-keys") {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Array(keys)) => keys
                .iter()
                .map(|k| match k {
                    Value::String(k) => Ok(k.clone()),
                    other => Err(issue(
                        &self.path,
                        format!(
                            "`x-kubernetes-list-map-keys` must hold strings, found {}",
                            json_kind(other)
                        ),
                    )),
                })
                .collect(),
            Some(other) => Err(issue(
                &self.path,
                format!(
                    "`x-kubernetes-list-map-keys` must be an array, found {}",
                    json_kind(other)
                ),
            )),
        }
    }

    fn docs(&self) -> Result<Option<String>, SchemaIssue> {
        Ok(self.str("description")?.map(str::to_owned))
    }

    fn properties(&self) -> Result<Option<&'a Map<String, Value>>, SchemaIssue> {
        match self.map.get("properties") {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Object(m)) => Ok(Some(m)),
            Some(other) => Err(issue(
                &self.path,
                format!("`properties` must be an object, found {}", json_kind(other)),
            )),
        }
    }

    fn required(&self) -> Result<Vec<&'a str>, SchemaIssue> {
        match self.map.get("required") {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| {
                    v.as_str()
                        .ok_or_else(|| issue(&self.path, "`required` must list strings"))
                })
                .collect(),
            Some(other) => Err(issue(
                &self.path,
                format!("`required` must be an array, found {}", json_kind(other)),
            )),
        }
    }

    fn branches(&self, key: &str) -> Result<&'a [Value], SchemaIssue> {
        match self.map.get(key) {
            None | Some(Value::Null) => Ok(&[]),
            Some(Value::Array(items)) => Ok(items),
            Some(other) => Err(issue(
                &self.path,
                format!("`{key}` must be an array, found {}", json_kind(other)),
            )),
        }
    }
}

/// Whether an object schema is exactly `metav1.Condition`'s, as controller-gen writes it for
/// `[]metav1.Condition`: the six properties with their types (validation keywords such as
/// `enum`, `pattern` and `maxLength` only narrow what is valid), the five required ones, and
/// nothing that changes what a value decodes to (no default, no nullable, no unknown fields,
/// no `allOf`/`anyOf`/`oneOf`). Such an object is `kinform::value::Condition`; any other
/// shape keeps its own generated struct, so nothing is lost.
fn is_meta_condition(node: &Node<'_>, props: &[Prop<'_>]) -> Result<bool, SchemaIssue> {
    /// Name, JSON type, format (`None`: no format allowed, except int64 for the integer),
    /// required.
    const SHAPE: [(&str, &str, Option<&str>, bool); 6] = [
        ("lastTransitionTime", "string", Some("date-time"), true),
        ("message", "string", None, true),
        ("observedGeneration", "integer", None, false),
        ("reason", "string", None, true),
        ("status", "string", None, true),
        ("type", "string", None, true),
    ];
    let plain = |n: &Node<'_>| -> Result<bool, SchemaIssue> {
        Ok(!n.map.contains_key("default")
            && !n.flag("nullable")?
            && !n.flag("x-kubernetes-preserve-unknown-fields")?
            && !n.flag("x-kubernetes-int-or-string")?
            && ["allOf", "anyOf", "oneOf", "additionalProperties"]
                .iter()
                .all(|k| n.map.get(*k).is_none_or(Value::is_null)))
    };
    if props.len() != SHAPE.len() || !plain(node)? {
        return Ok(false);
    }
    for (prop, (name, ty, format, required)) in props.iter().zip(SHAPE) {
        if prop.json_name != name || prop.required != required {
            return Ok(false);
        }
        let n = Node::new(prop.schema, &format!("{}.{name}", node.path))?;
        let format_ok = match (n.str("format")?, format) {
            (None, None) => true,
            (Some("int64"), None) => ty == "integer",
            (found, expected) => found == expected,
        };
        if n.str("type")? != Some(ty) || !format_ok || !plain(&n)? {
            return Ok(false);
        }
    }
    Ok(true)
}

fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A property gathered for a struct: its schema and whether the schema lists it as required.
struct Prop<'a> {
    json_name: &'a str,
    schema: &'a Value,
    required: bool,
}

impl Converter {
    fn root(&mut self, schema: &Value, root: &str) -> Result<(), SchemaIssue> {
        let node = Node::new(schema, "")?;
        match node.str("type")? {
            None | Some("object") => {}
            Some(other) => {
                return Err(issue(
                    "",
                    format!("the root schema must be an object, not {other}"),
                ));
            }
        }
        let props = self.gather_properties(&node)?;
        let slot = self.reserve_slot();
        let mut fields_in: Vec<Prop<'_>> = props
            .into_iter()
            .filter(|p| p.json_name != "apiVersion" && p.json_name != "kind")
            .collect();
        if !fields_in.iter().any(|p| p.json_name == "metadata") {
            fields_in.push(Prop {
                json_name: "metadata",
                schema: &NULL_SCHEMA,
                required: true,
            });
        }
        fields_in.sort_by(|a, b| a.json_name.cmp(b.json_name));
        let mut s = self.build_struct(root, &node, fields_in, StructKind::Root, 0)?;
        s.is_root = true;
        self.types[slot] = TypeDef::Struct(s);
        Ok(())
    }

    fn reserve_slot(&mut self) -> usize {
        self.types.push(TypeDef::Enum(EnumType {
            name: String::new(),
            docs: None,
            variants: Vec::new(),
            other_variant: String::new(),
        }));
        self.types.len() - 1
    }

    /// Properties of a node plus those only declared in `allOf`/`anyOf`/`oneOf` branches
    /// (non-structural, hand-written CRDs): the latter become optional fields, so no data is
    /// lost whichever branch an object matches.
    fn gather_properties<'a>(&self, node: &Node<'a>) -> Result<Vec<Prop<'a>>, SchemaIssue> {
        let required = node.required()?;
        let mut out: Vec<Prop<'a>> = Vec::new();
        if let Some(props) = node.properties()? {
            for (name, schema) in props {
                out.push(Prop {
                    json_name: name,
                    schema,
                    required: required.contains(&name.as_str()),
                });
            }
        }
        for key in ["allOf", "anyOf", "oneOf"] {
            for (i, branch) in node.branches(key)?.iter().enumerate() {
                let path = format!("{}.{key}[{i}]", node.path);
                let b = Node::new(branch, &path)?;
                let b_required = b.required()?;
                let all_of = key == "allOf";
                if let Some(props) = b.properties()? {
                    for (name, schema) in props {
                        if !out.iter().any(|p| p.json_name == name) {
                            out.push(Prop {
                                json_name: name,
                                schema,
                                required: all_of && b_required.contains(&name.as_str()),
                            });
                        }
                    }
                }
            }
        }
        out.sort_by(|a, b| a.json_name.cmp(b.json_name));
        Ok(out)
    }

    fn build_struct(
        &mut self,
        name: &str,
        node: &Node<'_>,
        props: Vec<Prop<'_>>,
        kind: StructKind,
        depth: usize,
    ) -> Result<StructType, SchemaIssue> {
        let root = kind == StructKind::Root;
        let mut field_names = NameAllocator::snake();
        let rust_names = assign_field_names(props.iter().map(|p| p.json_name), &mut field_names);
        let mut fields = Vec::with_capacity(props.len());
        for (prop, rust_name) in props.iter().zip(rust_names) {
            let path = format!("{}.{}", node.path, prop.json_name);
            if kind != StructKind::Plain && prop.json_name == "metadata" {
                let docs = match prop.schema {
                    Value::Null => None,
                    s => Node::new(s, &path)?.docs()?,
                };
                fields.push(Field {
                    json_name: "metadata".to_owned(),
                    rust_name,
                    ty: TypeRef::ObjectMeta,
                    required: root,
                    nullable: false,
                    default: None,
                    docs,
                    list_map_keys: Vec::new(),
                });
                continue;
            }
            let pnode = Node::new(prop.schema, &path)?;
            let hint = format!("{name}{}", camel(prop.json_name));
            let ty = self.convert(prop.schema, &path, &hint, depth + 1)?;
            fields.push(Field {
                json_name: prop.json_name.to_owned(),
                rust_name,
                ty,
                required: prop.required,
                nullable: pnode.flag("nullable")?,
                default: pnode.map.get("default").cloned(),
                docs: pnode.docs()?,
                list_map_keys: pnode.list_map_keys()?,
            });
        }
        let remainder = self.remainder(node, name, depth, &mut field_names)?;
        Ok(StructType {
            name: name.to_owned(),
            docs: node.docs()?,
            schema_path: if node.path.is_empty() {
                ".".to_owned()
            } else {
                node.path.clone()
            },
            fields,
            remainder,
            is_root: false,
        })
    }

    /// The flattened remainder of a struct: unknown fields kept as JSON
    /// (`x-kubernetes-preserve-unknown-fields`) or typed by `additionalProperties`.
    fn remainder(
        &mut self,
        node: &Node<'_>,
        name: &str,
        depth: usize,
        field_names: &mut NameAllocator,
    ) -> Result<Option<Remainder>, SchemaIssue> {
        let value = match node.map.get("additionalProperties") {
            Some(Value::Object(_)) => {
                let path = format!("{}.*", node.path);
                let ap = &node.map["additionalProperties"];
                let hint = format!("{name}Value");
                Some(self.map_value(ap, &path, &hint, depth, true)?)
            }
            Some(Value::Bool(true)) => Some(TypeRef::Json),
            _ if node.flag("x-kubernetes-preserve-unknown-fields")? => Some(TypeRef::Json),
            _ => None,
        };
        Ok(value.map(|value| Remainder {
            rust_name: field_names.alloc("extra_fields"),
            value,
        }))
    }

    /// The type of a list item or map value (`items`, `additionalProperties`: `map`).
    fn map_value(
        &mut self,
        schema: &Value,
        path: &str,
        hint: &str,
        depth: usize,
        map: bool,
    ) -> Result<TypeRef, SchemaIssue> {
        let ty = self.convert(schema, path, hint, depth + 1)?;
        let node = Node::new(schema, path)?;
        // A `null` item or value takes the schema default unless the schema allows `null`
        // (apiextensions-apiserver `structuraldefaulting.Default`, `isNonNullableNull`).
        Ok(if node.flag("nullable")? {
            TypeRef::Nullable(Box::new(ty))
        } else if let Some(default) = node.map.get("default").filter(|d| !d.is_null()) {
            TypeRef::Defaulted {
                ty: Box::new(ty),
                default: default.to_string(),
            }
        } else if map {
            // A `null` map value without a default is removed before defaulting
            // (`PruneNonNullableNullsWithoutDefaults`); a `null` list item is kept, and
            // rejected by validation.
            TypeRef::Pruned(Box::new(ty))
        } else {
            ty
        })
    }

    fn convert(
        &mut self,
        schema: &Value,
        path: &str,
        hint: &str,
        depth: usize,
    ) -> Result<TypeRef, SchemaIssue> {
        if depth > MAX_DEPTH {
            return Err(issue(
                path,
                format!("schema nests deeper than {MAX_DEPTH} levels"),
            ));
        }
        let node = Node::new(schema, path)?;
        if node.flag("x-kubernetes-int-or-string")? {
            return Ok(if node.str("pattern")? == Some(QUANTITY_PATTERN) {
                TypeRef::Quantity
            } else {
                TypeRef::IntOrString
            });
        }
        let preserve = node.flag("x-kubernetes-preserve-unknown-fields")?;
        let embedded = node.flag("x-kubernetes-embedded-resource")?;
        match node.str("type")? {
            Some("string") => self.string(&node, hint),
            Some("integer") => Ok(match node.str("format")? {
                Some("int32") => TypeRef::I32,
                _ => TypeRef::I64,
            }),
            Some("number") => Ok(TypeRef::Number),
            Some("boolean") => Ok(TypeRef::Bool),
            Some("array") => match node.map.get("items") {
                None | Some(Value::Null) => Ok(TypeRef::List(Box::new(TypeRef::Json))),
                Some(items @ Value::Object(_)) => {
                    let ipath = format!("{path}[]");
                    Ok(TypeRef::List(Box::new(
                        self.map_value(items, &ipath, hint, depth, false)?,
                    )))
                }
                Some(other) => Err(issue(
                    path,
                    format!(
                        "`items` must be a single schema, found {} (tuple schemas are not \
                         allowed in CRDs)",
                        json_kind(other)
                    ),
                )),
            },
            Some("object") => self.object(&node, hint, depth, preserve, embedded),
            None => {
                let has_props = node.properties()?.is_some_and(|p| !p.is_empty());
                if has_props {
                    return self.object(&node, hint, depth, preserve, embedded);
                }
                if preserve || embedded {
                    return Ok(TypeRef::Json);
                }
                self.typeless(&node, hint, depth)
            }
            Some(other) => Err(issue(path, format!("unknown schema type `{other}`"))),
        }
    }

    fn string(&mut self, node: &Node<'_>, hint: &str) -> Result<TypeRef, SchemaIssue> {
        match node.str("format")? {
            Some("date-time") => return Ok(TypeRef::DateTime),
            Some("byte") => return Ok(TypeRef::Bytes),
            Some("int-or-string") => return Ok(TypeRef::IntOrString),
            _ => {}
        }
        let values = match node.map.get("enum") {
            Some(Value::Array(values)) if !values.is_empty() => values,
            _ => return Ok(TypeRef::String),
        };
        let mut strings: Vec<&str> = Vec::new();
        for v in values {
            match v {
                Value::String(s) if !strings.contains(&s.as_str()) => strings.push(s),
                Value::String(_) | Value::Null => {}
                _ => return Ok(TypeRef::String),
            }
        }
        if strings.is_empty() {
            return Ok(TypeRef::String);
        }
        let mut variant_names = NameAllocator::default();
        let other_variant = variant_names.alloc("Other");
        let variants = strings
            .into_iter()
            .map(|value| EnumVariant {
                value: value.to_owned(),
                rust_name: variant_names.alloc(&camel(value)),
            })
            .collect();
        let name = self.names.alloc(hint);
        self.types.push(TypeDef::Enum(EnumType {
            name: name.clone(),
            docs: node.docs()?,
            variants,
            other_variant,
        }));
        Ok(TypeRef::Named(name))
    }

    fn object(
        &mut self,
        node: &Node<'_>,
        hint: &str,
        depth: usize,
        preserve: bool,
        embedded: bool,
    ) -> Result<TypeRef, SchemaIssue> {
        let mut props = self.gather_properties(node)?;
        if props.is_empty() {
            return match node.map.get("additionalProperties") {
                Some(ap @ Value::Object(_)) => {
                    let path = format!("{}.*", node.path);
                    Ok(TypeRef::Map(Box::new(
                        self.map_value(ap, &path, hint, depth, true)?,
                    )))
                }
                // `additionalProperties: false` with no properties: only `{}` is valid.
                Some(Value::Bool(false)) if !preserve && !embedded => {
                    self.named_struct(hint, node, Vec::new(), StructKind::Plain, depth)
                }
                // Preserved, embedded, `additionalProperties: true` or a bare `type: object`:
                // keep every member (a bare object would otherwise lose its content).
                _ if preserve || embedded => Ok(TypeRef::Json),
                _ => Ok(TypeRef::Map(Box::new(TypeRef::Json))),
            };
        }
        if embedded {
            for key in ["apiVersion", "kind", "metadata"] {
                if !props.iter().any(|p| p.json_name == key) {
                    props.push(Prop {
                        json_name: key,
                        schema: &EMBEDDED_STRING,
                        required: false,
                    });
                }
            }
            props.sort_by(|a, b| a.json_name.cmp(b.json_name));
        }
        if !embedded && !preserve && is_meta_condition(node, &props)? {
            return Ok(TypeRef::Condition);
        }
        let kind = if embedded {
            StructKind::Embedded
        } else {
            StructKind::Plain
        };
        self.named_struct(hint, node, props, kind, depth)
    }

    /// A new struct type named after `hint`, placed before the types its fields create.
    fn named_struct(
        &mut self,
        hint: &str,
        node: &Node<'_>,
        props: Vec<Prop<'_>>,
        kind: StructKind,
        depth: usize,
    ) -> Result<TypeRef, SchemaIssue> {
        let name = self.names.alloc(hint);
        let slot = self.reserve_slot();
        let s = self.build_struct(&name, node, props, kind, depth)?;
        self.types[slot] = TypeDef::Struct(s);
        Ok(TypeRef::Named(name))
    }

    /// A node without `type` and without properties, whose `oneOf`/`anyOf` branches say what
    /// it may be: an untagged union with one variant per JSON type the branches declare, or
    /// the one type itself when they all declare the same. Branches of the same JSON type are
    /// merged first: objects into one struct whose properties are the union of theirs, all
    /// optional (whichever branch a value matches, every member is kept); strings, numbers,
    /// booleans and arrays into the plain type (formats and enums only narrowed what is
    /// valid). Opaque JSON when a branch declares no type or objects allow unknown members.
    fn typeless(
        &mut self,
        node: &Node<'_>,
        hint: &str,
        depth: usize,
    ) -> Result<TypeRef, SchemaIssue> {
        let mut branches: Vec<(&'static str, Vec<&Value>, String)> = Vec::new();
        for key in ["oneOf", "anyOf"] {
            for (i, branch) in node.branches(key)?.iter().enumerate() {
                let path = format!("{}.{key}[{i}]", node.path);
                let b = Node::new(branch, &path)?;
                let Some(ty) = b.str("type")? else {
                    return Ok(TypeRef::Json);
                };
                let variant = match ty {
                    "boolean" => "Boolean",
                    "integer" => "Integer",
                    "number" => "Number",
                    "string" => "String",
                    "array" => "Array",
                    "object" => "Object",
                    other => return Err(issue(&path, format!("unknown schema type `{other}`"))),
                };
                match branches.iter_mut().find(|(v, _, _)| *v == variant) {
                    Some((_, same, _)) => same.push(branch),
                    None => branches.push((variant, vec![branch], path)),
                }
            }
        }
        if branches.is_empty() {
            return Ok(TypeRef::Json);
        }
        let rank = |v: &str| {
            ["Boolean", "Integer", "Number", "String", "Array", "Object"]
                .iter()
                .position(|x| *x == v)
        };
        branches.sort_by_key(|(v, _, _)| rank(v));
        let mut merged: Vec<(&'static str, Value, String)> = Vec::with_capacity(branches.len());
        for (variant, same, path) in branches {
            let schema = match same.as_slice() {
                [one] => (*one).clone(),
                _ => match merge_same_type(variant, &same, &path)? {
                    Some(schema) => schema,
                    None => return Ok(TypeRef::Json),
                },
            };
            merged.push((variant, schema, path));
        }
        if let [(_, schema, path)] = merged.as_slice() {
            return self.convert(schema, path, hint, depth + 1);
        }
        let name = self.names.alloc(hint);
        let slot = self.reserve_slot();
        let mut variants = Vec::with_capacity(merged.len());
        for (variant, branch, path) in merged {
            let ty = self.convert(&branch, &path, &format!("{name}{variant}"), depth + 1)?;
            variants.push(UnionVariant {
                rust_name: variant.to_owned(),
                ty,
            });
        }
        self.types[slot] = TypeDef::Union(UnionType {
            name: name.clone(),
            docs: node.docs()?,
            variants,
        });
        Ok(TypeRef::Named(name))
    }
}

/// One schema for several branches of the same JSON type (see [`Converter::typeless`]);
/// `None` when no lossless merge exists (objects that keep unknown members).
fn merge_same_type(
    variant: &str,
    same: &[&Value],
    path: &str,
) -> Result<Option<Value>, SchemaIssue> {
    let ty = match variant {
        "Boolean" => "boolean",
        "Integer" => "integer",
        "Number" => "number",
        "String" => "string",
        "Array" => "array",
        _ => {
            let mut props = Map::new();
            for branch in same {
                let b = Node::new(branch, path)?;
                if b.flag("x-kubernetes-preserve-unknown-fields")?
                    || b.map
                        .get("additionalProperties")
                        .is_some_and(|a| a != &Value::Bool(false))
                    || b.map.contains_key("allOf")
                    || b.map.contains_key("anyOf")
                    || b.map.contains_key("oneOf")
                {
                    return Ok(None);
                }
                for (name, schema) in b.properties()?.into_iter().flatten() {
                    props.entry(name.clone()).or_insert_with(|| schema.clone());
                }
            }
            return Ok(Some(
                serde_json::json!({"type": "object", "properties": props}),
            ));
        }
    };
    Ok(Some(serde_json::json!({ "type": ty })))
}

/// What a struct stands for: its `metadata` property is an `ObjectMeta` in roots and embedded
/// resources (the API server validates it as one there).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum StructKind {
    Plain,
    Root,
    Embedded,
}

/// The schema of a `metadata` the root schema does not declare.
static NULL_SCHEMA: Value = Value::Null;

/// The implicit schema of `apiVersion`/`kind` in embedded resources.
static EMBEDDED_STRING: std::sync::LazyLock<Value> =
    std::sync::LazyLock::new(|| serde_json::json!({"type": "string"}));

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// `metav1.Condition`'s schema as controller-gen writes it (descriptions left out).
    fn condition_schema() -> Value {
        json!({
            "type": "object",
            "required": ["lastTransitionTime", "message", "reason", "status", "type"],
            "properties": {
                "lastTransitionTime": {"type": "string", "format": "date-time"},
                "message": {"type": "string", "maxLength": 32768},
                "observedGeneration": {"type": "integer", "format": "int64", "minimum": 0},
                "reason": {"type": "string", "minLength": 1, "maxLength": 1024},
                "status": {"type": "string", "enum": ["True", "False", "Unknown"]},
                "type": {"type": "string", "maxLength": 316}
            }
        })
    }

    /// The type of `.status.conditions[]` when its item schema is `item`.
    fn conditions_item(item: Value) -> TypeRef {
        let schema = json!({
            "type": "object",
            "properties": {"status": {"type": "object", "properties": {
                "conditions": {"type": "array", "items": item}
            }}}
        });
        let id = ResourceIdent {
            group: "example.com",
            version: "v1",
            kind: "Widget",
            plural: "widgets",
            scope: Scope::Namespaced,
        };
        let module = convert_schema(&schema, &id).unwrap();
        let status = module
            .types
            .iter()
            .find_map(|t| match t {
                TypeDef::Struct(s) if s.name == "WidgetStatus" => Some(s),
                _ => None,
            })
            .unwrap();
        match &status.fields[0].ty {
            TypeRef::List(item) => (**item).clone(),
            other => panic!("conditions is {other:?}"),
        }
    }

    /// A root schema whose `spec` nests `levels` objects: `spec.a.a...`.
    fn nested_schema(levels: usize) -> Value {
        let mut s = json!({"type": "string"});
        for _ in 0..levels {
            s = json!({"type": "object", "properties": {"a": s}});
        }
        json!({"type": "object", "properties": {"spec": s}})
    }

    #[test]
    fn schemas_nest_deeper_than_a_thread_stack_holds() {
        // 300 levels (the document: 600) on a test thread
        let schema = crate::read::stack::deep(|| nested_schema(300));
        let id = ResourceIdent {
            group: "example.com",
            version: "v1",
            kind: "Deep",
            plural: "deeps",
            scope: Scope::Namespaced,
        };
        let module = convert_schema(&schema, &id).unwrap();
        crate::read::stack::deep(|| drop(schema));
        // The root, `spec` and 299 nested objects (the last `a` is a string).
        assert_eq!(module.types.len(), 301);
    }

    #[test]
    fn exactly_metav1_condition_is_the_shared_condition_type() {
        assert_eq!(conditions_item(condition_schema()), TypeRef::Condition);
    }

    #[test]
    fn any_other_shape_keeps_its_own_struct() {
        let variants: [fn(&mut Value); 7] = [
            // An extra property (cluster-api v1beta1's `severity`).
            |s| s["properties"]["severity"] = json!({"type": "string"}),
            // A property fewer.
            |s| drop(s["properties"].as_object_mut().unwrap().remove("message")),
            // Fewer required (cert-manager's conditions).
            |s| s["required"] = json!(["status", "type"]),
            // A default would be lost on the shared type.
            |s| s["properties"]["reason"]["default"] = json!("Unknown"),
            // Nullable, unknown fields kept, another format.
            |s| s["properties"]["message"]["nullable"] = json!(true),
            |s| s["x-kubernetes-preserve-unknown-fields"] = json!(true),
            |s| s["properties"]["observedGeneration"]["format"] = json!("int32"),
        ];
        for change in variants {
            let mut schema = condition_schema();
            change(&mut schema);
            assert!(
                matches!(conditions_item(schema.clone()), TypeRef::Named(_)),
                "{schema}"
            );
        }
    }
}
