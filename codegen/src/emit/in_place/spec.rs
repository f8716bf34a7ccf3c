//! [`Definitions`] from a Kubernetes OpenAPI document (`swagger.json`, or a v3 document's
//! `components.schemas`): what k8s-openapi's generator read from it.
//!
//! For each definition with properties, each property's JSON name and the Rust field
//! k8s-openapi gives it ([`field_ident`]); whether the definition is a resource (it has an
//! `x-kubernetes-group-version-kind` and `apiVersion` and `kind` properties); whether its
//! type has a `Default` ([`NO_DEFAULT`], and a struct whose required property's type has
//! none has none either). The roots are the resources of the spec's paths that can be
//! listed and watched.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::model::{Definition, Definitions, InPlaceError, Shape};
use crate::model::{ApiModel, RootType, Verb};
use crate::read::openapi::type_path::k8s_openapi_path;

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
    // Since 1.36 (`PodCertificateRequestSpec`): k8s-openapi's rule splits after the `S`.
    ("stubPKCS10Request", "stub_pkc_s10_request"),
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
fn refs(schema: &Value, out: &mut BTreeSet<String>) {
    match schema {
        Value::Object(map) => {
            for (key, value) in map {
                match (key.as_str(), value) {
                    ("$ref", Value::String(r)) => {
                        out.insert(ref_name(r).to_owned());
                    }
                    _ => refs(value, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|item| refs(item, out)),
        _ => {}
    }
}

/// The definitions of the required properties of `def` that are a `$ref` themselves.
fn required_refs(def: &Value) -> BTreeSet<String> {
    let props = def.get("properties").and_then(Value::as_object);
    let required = def.get("required").and_then(Value::as_array);
    required
        .into_iter()
        .flatten()
        .filter_map(|field| props?.get(field.as_str()?)?.get("$ref")?.as_str())
        .map(|r| ref_name(r).to_owned())
        .collect()
}

/// The definitions of `spec`, with `model`'s resources of k8s-openapi types that can be
/// listed and watched as the roots.
pub fn read(model: &ApiModel, spec: &Value) -> Result<Definitions, InPlaceError> {
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
    // Which types have no `Default`: the listed ones, and the structs with a required
    // property of such a type, to the fixed point.
    let mut no_default: BTreeSet<String> = NO_DEFAULT.iter().map(|&n| n.to_owned()).collect();
    loop {
        let before = no_default.len();
        for (name, def) in defs {
            if required_refs(def).iter().any(|r| no_default.contains(r)) {
                no_default.insert(name.clone());
            }
        }
        if no_default.len() == before {
            break;
        }
    }
    let mut by_name = BTreeMap::new();
    for (name, def) in defs {
        let Some(path) = k8s_openapi_path(name) else {
            continue;
        };
        let shape = match def.get("properties").and_then(Value::as_object) {
            Some(props) if !props.is_empty() => {
                let resource = def.get("x-kubernetes-group-version-kind").is_some()
                    && props.contains_key("apiVersion")
                    && props.contains_key("kind");
                let fields = props
                    .keys()
                    .filter(|p| !(resource && matches!(p.as_str(), "apiVersion" | "kind")))
                    .map(|p| (p.clone(), field_ident(p)))
                    .collect();
                Shape::Struct { resource, fields }
            }
            _ => Shape::Opaque,
        };
        let mut all_refs = BTreeSet::new();
        refs(def, &mut all_refs);
        by_name.insert(
            name.clone(),
            Definition {
                path,
                shape,
                default: !no_default.contains(name),
                refs: all_refs,
                required: required_refs(def),
            },
        );
    }
    Ok(Definitions { by_name, roots })
}
