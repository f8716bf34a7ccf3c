//! [`Definitions`] -> the file of the client's decoders: a list of invocations of the
//! client's macros (`root_types!`, `fresh_in_place!`, `required_field!`,
//! `in_place_struct!`), one line per member, written as text.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use super::model::{Definitions, Shape};
use crate::emit::format::GENERATED_HEADER;

/// Definitions whose impl the client writes by hand: a `Quantity` is a string decoded into
/// its own buffer (or a number k8s-openapi writes as text), a `FieldsV1` a JSON value
/// decoded into the one it holds, a `Time` read directly in the form Kubernetes writes.
const HAND_WRITTEN: &[&str] = &[
    "io.k8s.apimachinery.pkg.api.resource.Quantity",
    "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1",
    "io.k8s.apimachinery.pkg.apis.meta.v1.Time",
];

/// The decoders of every type reachable from `defs`' roots, and the list of the roots, as
/// one file for Kubernetes `kubernetes` (`1.36`); `source`, the lines of the file's docs
/// that say where the definitions were read from.
pub fn print(defs: &Definitions, kubernetes: &str, source: &[String]) -> String {
    // Every definition reachable from a root.
    let mut reachable = BTreeSet::new();
    let mut todo: Vec<&str> = defs.roots.iter().map(String::as_str).collect();
    while let Some(name) = todo.pop() {
        if !reachable.insert(name) {
            continue;
        }
        if let Some(def) = defs.by_name.get(name) {
            todo.extend(def.refs.iter().map(String::as_str));
        }
    }
    let mut out = String::from(GENERATED_HEADER);
    let _ = writeln!(
        out,
        "//! In-place decoding (`super`) of the k8s-openapi types reachable from every built-in\n\
         //! resource that can be listed and watched, for Kubernetes v{kubernetes}.\n\
         //!"
    );
    for line in source {
        let _ = writeln!(out, "//! {line}");
    }
    out.push_str(
        "\n\
         use super::fields::{in_place_struct, required_field, root_types};\n\
         use super::fresh_in_place;\n\n\
         root_types!(\n",
    );
    for name in &defs.roots {
        if let Some(def) = defs.by_name.get(name) {
            let _ = writeln!(out, "    {},", def.path);
        }
    }
    out.push_str(");\n");
    // The definitions some reachable struct has required fields of.
    let required: BTreeSet<&str> = reachable
        .iter()
        .filter_map(|name| defs.by_name.get(*name))
        .flat_map(|def| def.required.iter().map(String::as_str))
        .collect();
    out.push_str("\nfresh_in_place!(\n");
    let mut structs = String::new();
    let (mut fresh_default, mut fresh_no_default) = (String::new(), String::new());
    for name in &reachable {
        if HAND_WRITTEN.contains(name) {
            continue;
        }
        let Some(def) = defs.by_name.get(*name) else {
            continue;
        };
        let path = &def.path;
        match &def.shape {
            Shape::Struct { resource, fields } => {
                let marker = match (resource, def.default) {
                    (true, _) => "resource ",
                    (false, false) => "no_default ",
                    (false, true) => "",
                };
                let _ = writeln!(structs, "\nin_place_struct!({marker}{path} {{");
                for (json, ident) in fields {
                    let _ = writeln!(structs, "    {json:?} => {ident},");
                }
                structs.push_str("});\n");
            }
            Shape::Opaque => {
                let _ = writeln!(out, "    {path},");
                if required.contains(name) {
                    let list = if def.default {
                        &mut fresh_default
                    } else {
                        &mut fresh_no_default
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
    out
}
