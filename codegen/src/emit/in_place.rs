//! In-place decoders for k8s-openapi's types: the input of kinform-client's in-place
//! decoding (`client/src/decode/in_place/k8s_1_35.rs`), one entry per type reachable from a
//! built-in resource that can be listed and watched.
//!
//! What the client needs from the spec is what k8s-openapi's generator read from it: for
//! each definition with properties, the struct's Rust path (`type_path`), each property's
//! JSON name and the Rust field k8s-openapi gives it ([`field_ident`]), whether the
//! definition is a resource (k8s-openapi leaves `apiVersion` and `kind` out of those and
//! checks them instead) and whether its type has a `Default` ([`NO_DEFAULT`]).
//! Definitions without properties (`Time`, `IntOrString`, `RawExtension`, object types of
//! any shape) have a `Deserialize` of their own in k8s-openapi and are decoded afresh.
//!
//! The file is a list of invocations of the client's macros (`in_place_struct!`,
//! `fresh_in_place!`, `required_field!`, `root_types!`), one line per member, written as
//! text: the macros expand it into the impls. The field types are left to the client's
//! trait impls (`Option`, `Vec`, maps, ...), so the file names no type but the structs.
//! Every struct's fields end up in a pattern without `..`: a field k8s-openapi has and the
//! spec does not (another Kubernetes version) is a compile error, not a field left holding a
//! replaced object's value.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use serde_json::Value;

use super::format::GENERATED_HEADER;
use crate::model::{ApiModel, RootType, Verb};
use crate::read::openapi::type_path::k8s_openapi_path;

/// Definitions whose impl the client writes by hand: a `Quantity` is a string decoded into
/// its own buffer (or a number k8s-openapi writes as text), a `FieldsV1` a JSON value
/// decoded into the one it holds, a `Time` read directly in the form Kubernetes writes.
const HAND_WRITTEN: &[&str] = &[
    "io.k8s.apimachinery.pkg.api.resource.Quantity",
    "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1",
    "io.k8s.apimachinery.pkg.apis.meta.v1.Time",
];

/// Definitions whose k8s-openapi type has no `Default`: the jiff timestamps and the
/// `JSONSchemaPropsOr*` enums. A struct has none either when one of its required fields'
/// types has none (k8s-openapi then reads an absent member as a missing field, an error,
/// where it otherwise takes the default).
const NO_DEFAULT: &[&str] = &[
    "io.k8s.apimachinery.pkg.apis.meta.v1.Time",
    "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime",
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrArray",
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrBool",
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrStringArray",
];

/// Property names k8s-openapi does not derive with its usual rule (see [`field_ident`]).
const IDENT_EXCEPTIONS: &[(&str, &str)] = &[
    ("$ref", "ref_path"),
    ("$schema", "schema"),
    (
        "currentCPUUtilizationPercentage",
        "current_cpu_utilization_percentage",
    ),
    ("insecureSkipTLSVerify", "insecure_skip_tls_verify"),
    ("openAPIV3Schema", "open_api_v3_schema"),
    (
        "targetCPUUtilizationPercentage",
        "target_cpu_utilization_percentage",
    ),
];

/// The Rust field k8s-openapi 0.29 gives property `name`: an underscore before each capital
/// that follows a lowercase letter or a digit, everything lowercased, `-` as `_`, a keyword
/// with a trailing `_`, and a few names of its own ([`IDENT_EXCEPTIONS`]).
pub fn field_ident(name: &str) -> String {
    if let Some((_, ident)) = IDENT_EXCEPTIONS.iter().find(|(n, _)| *n == name) {
        return (*ident).to_owned();
    }
    let mut out = String::with_capacity(name.len() + 4);
    let mut after_lower_or_digit = false;
    for c in name.chars() {
        if c.is_ascii_uppercase() {
            if after_lower_or_digit {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(if c == '-' { '_' } else { c });
        }
        after_lower_or_digit = !c.is_ascii_uppercase();
    }
    if matches!(out.as_str(), "as" | "continue" | "enum" | "ref" | "type") {
        out.push('_');
    }
    out
}

/// Why the in-place decoders could not be emitted.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InPlaceError {
    /// The spec could not be read.
    #[error(transparent)]
    Spec(#[from] crate::read::openapi::OpenApiError),
    /// The spec has no `definitions` (OpenAPI v2) or `components.schemas` (v3) object.
    #[error("the spec has no `definitions` or `components.schemas` object")]
    NoDefinitions,
    /// A resource's type is not one of the spec's definitions.
    #[error("resource type `{0}` is not a definition of the spec")]
    UnknownRoot(String),
}

/// The definitions of a v2 or v3 document, by name.
fn definitions(spec: &Value) -> Option<&serde_json::Map<String, Value>> {
    spec.get("definitions")
        .or_else(|| spec.get("components")?.get("schemas"))?
        .as_object()
}

/// The definition a `$ref` names.
fn ref_name(reference: &str) -> &str {
    reference.rsplit('/').next().unwrap_or(reference)
}

/// Adds the definitions `schema` refers to, anywhere inside it, to `out`.
fn refs(schema: &Value, out: &mut Vec<String>) {
    match schema {
        Value::Object(map) => {
            for (key, value) in map {
                match (key.as_str(), value) {
                    ("$ref", Value::String(r)) => out.push(ref_name(r).to_owned()),
                    _ => refs(value, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|item| refs(item, out)),
        _ => {}
    }
}

/// Reads the Kubernetes OpenAPI spec `path` (a `swagger.json`) and emits kinform-client's
/// in-place decoders for it: one Rust file, the input of `kinform-gen in-place`.
pub fn emit_file(path: &std::path::Path) -> Result<String, InPlaceError> {
    use crate::read::openapi::{OpenApiError, read_openapi};
    let model = read_openapi(path)?;
    let text = std::fs::read_to_string(path).map_err(|source| OpenApiError::Io {
        path: path.to_owned(),
        source,
    })?;
    let spec: Value = serde_json::from_str(&text).map_err(|source| OpenApiError::Json {
        path: path.to_owned(),
        line: source.line(),
        column: source.column(),
        source,
    })?;
    emit(&model, &spec)
}

/// The decoders of every type reachable from `model`'s listable and watchable resources of
/// k8s-openapi types, and the list of those resources, as one file (see the module docs).
pub fn emit(model: &ApiModel, spec: &Value) -> Result<String, InPlaceError> {
    let defs = definitions(spec).ok_or(InPlaceError::NoDefinitions)?;
    let by_path: BTreeMap<String, &str> = defs
        .keys()
        .filter_map(|name| Some((k8s_openapi_path(name)?, name.as_str())))
        .collect();
    let mut roots = BTreeSet::new();
    for group in model.groups.values() {
        for version in group.versions.values() {
            for resource in version.resources.values() {
                let RootType::External(path) = &resource.root else {
                    continue;
                };
                if !(resource.verbs.contains(&Verb::List) && resource.verbs.contains(&Verb::Watch))
                {
                    continue;
                }
                let name = by_path
                    .get(path)
                    .ok_or_else(|| InPlaceError::UnknownRoot(path.clone()))?;
                roots.insert((*name).to_owned());
            }
        }
    }
    // Every definition reachable from a root.
    let mut reachable = BTreeSet::new();
    let mut todo: Vec<String> = roots.iter().cloned().collect();
    while let Some(name) = todo.pop() {
        if !reachable.insert(name.clone()) {
            continue;
        }
        if let Some(def) = defs.get(&name) {
            refs(def, &mut todo);
        }
    }
    let mut out = String::from(GENERATED_HEADER);
    out.push_str(
        "//! In-place decoding (`super`) of the k8s-openapi types reachable from every built-in\n\
         //! resource that can be listed and watched, emitted by `kinform-gen in-place` from the\n\
         //! Kubernetes v1.35 OpenAPI spec.\n\n\
         use super::fields::{in_place_struct, required_field, root_types};\n\
         use super::fresh_in_place;\n\n\
         root_types!(\n",
    );
    for name in &roots {
        if let Some(path) = k8s_openapi_path(name) {
            let _ = writeln!(out, "    {path},");
        }
    }
    out.push_str(");\n");
    // The definition each struct's required fields are of.
    let required_of = |def: &Value| -> Vec<String> {
        let props = def.get("properties").and_then(Value::as_object);
        let required = def.get("required").and_then(Value::as_array);
        required
            .into_iter()
            .flatten()
            .filter_map(|field| props?.get(field.as_str()?)?.get("$ref")?.as_str())
            .map(|r| ref_name(r).to_owned())
            .collect()
    };
    let mut required = BTreeSet::new();
    let mut no_default: BTreeSet<String> = NO_DEFAULT.iter().map(|&n| n.to_owned()).collect();
    loop {
        let before = no_default.len();
        for name in &reachable {
            let Some(def) = defs.get(name) else { continue };
            for field in required_of(def) {
                if no_default.contains(&field) {
                    no_default.insert(name.clone());
                }
                required.insert(field);
            }
        }
        if no_default.len() == before {
            break;
        }
    }
    out.push_str("\nfresh_in_place!(\n");
    let mut structs = String::new();
    let (mut fresh_default, mut fresh_no_default) = (String::new(), String::new());
    for name in &reachable {
        if HAND_WRITTEN.contains(&name.as_str()) {
            continue;
        }
        let (Some(def), Some(path)) = (defs.get(name), k8s_openapi_path(name)) else {
            continue;
        };
        match def.get("properties").and_then(Value::as_object) {
            Some(props) if !props.is_empty() => {
                let resource = def.get("x-kubernetes-group-version-kind").is_some()
                    && props.contains_key("apiVersion")
                    && props.contains_key("kind");
                let marker = match (resource, no_default.contains(name)) {
                    (true, _) => "resource ",
                    (false, true) => "no_default ",
                    (false, false) => "",
                };
                let _ = writeln!(structs, "\nin_place_struct!({marker}{path} {{");
                for prop in props.keys() {
                    if resource && matches!(prop.as_str(), "apiVersion" | "kind") {
                        continue;
                    }
                    let _ = writeln!(structs, "    {prop:?} => {},", field_ident(prop));
                }
                structs.push_str("});\n");
            }
            _ => {
                let _ = writeln!(out, "    {path},");
                if required.contains(name) {
                    let list = if no_default.contains(name) {
                        &mut fresh_no_default
                    } else {
                        &mut fresh_default
                    };
                    let _ = writeln!(list, "    {path},");
                }
            }
        }
    }
    out.push_str(");\n");
    for (list, marker) in [(fresh_default, ""), (fresh_no_default, "no_default ")] {
        if !list.is_empty() {
            let _ = write!(out, "\nrequired_field!({marker}\n{list});\n");
        }
    }
    out.push_str(&structs);
    Ok(out)
}
