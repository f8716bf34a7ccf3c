//! [`Definitions`] from k8s-openapi's own sources of one Kubernetes version (the crate's
//! `src/v1_37`): the Rust types its generator wrote from that version's OpenAPI spec, read
//! where the spec itself is not at hand. Each file holds one type and says which definition
//! it was generated from on its first line (`// Generated from definition io.k8s...`); its
//! module path is the file's directory (the parent `mod.rs` re-exports it).
//!
//! Read from each file with syn: the type's fields and their types, the JSON name of each
//! field (the match of its `Deserialize`'s field visitor, `"apiVersion" =>
//! Field::Key_api_version`), whether it has a `Default` (derived or implemented), whether it
//! is a resource (`impl crate::Resource`, whose `apiVersion` and `kind` it checks and has
//! no fields for) and whether it can be listed (`impl crate::ListableResource`). A type with
//! no named fields (a newtype, an enum) is opaque, as a definition without properties is.
//! Anything not shaped so is an error naming the file, never a type left out.
//!
//! The roots are the listable resources that can be watched: k8s-openapi 0.29 keeps no
//! operations, so [`NOT_WATCHABLE`] lists the ones kube-apiserver serves without `watch`.
//! The drift test checks that this reader and the spec's ([`super::spec`]) give the same
//! decoders for the versions whose spec is in the corpus.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::model::{Definition, Definitions, InPlaceError, Shape};
use crate::read::openapi::type_path::K8S_OPENAPI;

/// The listable resources without a `watch` verb: `componentstatuses` (get and list only,
/// as in every Kubernetes version's spec).
const NOT_WATCHABLE: &[&str] = &["io.k8s.api.core.v1.ComponentStatus"];

/// The first line of a file of k8s-openapi's types, before the definition's name.
const HEADER: &str = "// Generated from definition ";

/// The top-level modules of k8s-openapi's types: a `crate::` path under one of them is a
/// type of some file.
const TYPE_MODULES: &[&str] = &[
    "api",
    "apiextensions_apiserver",
    "apimachinery",
    "kube_aggregator",
];

/// One file of types, read.
struct File {
    path: PathBuf,
    /// The definition it was generated from.
    name: String,
    /// The type's path inside the crate (`api::core::v1::Pod`).
    rust: String,
    /// The struct or enum.
    item: syn::Item,
    /// The trait impls, their headers only (`impl crate::Resource for Pod {}`).
    impls: Vec<syn::ItemImpl>,
    /// The arms of the field visitor's match: `(JSON name, field)`.
    keys: Vec<(String, String)>,
}

/// The definitions of k8s-openapi's sources of one version, `dir` (`src/v1_37`).
pub fn read(dir: &Path) -> Result<Definitions, InPlaceError> {
    let mut files = Vec::new();
    collect(dir, &mut Vec::new(), &mut files)?;
    let names: BTreeMap<&str, &str> = files
        .iter()
        .map(|f| (f.rust.as_str(), f.name.as_str()))
        .collect();
    let mut defs = Definitions::default();
    for file in &files {
        let (def, listable) = definition(file, &names)?;
        if listable && !NOT_WATCHABLE.contains(&file.name.as_str()) {
            defs.roots.insert(file.name.clone());
        }
        defs.by_name.insert(file.name.clone(), def);
    }
    Ok(defs)
}

/// The crate version of the sources `dir` (`src/v1_37`): its `Cargo.toml`'s, two levels up.
pub fn crate_version(dir: &Path) -> Option<String> {
    let manifest = std::fs::read_to_string(dir.parent()?.parent()?.join("Cargo.toml")).ok()?;
    let package = manifest.split("[package]").nth(1)?;
    let line = package
        .lines()
        .take_while(|l| !l.starts_with('['))
        .find_map(|l| l.trim().strip_prefix("version = "))?;
    Some(line.trim_matches('"').to_owned())
}

/// Adds the files of types under `dir` (module path `modules`) to `out`, in name order.
fn collect(dir: &Path, modules: &mut Vec<String>, out: &mut Vec<File>) -> Result<(), InPlaceError> {
    let io = |source| InPlaceError::Io {
        path: dir.to_owned(),
        source,
    };
    let mut entries = std::fs::read_dir(dir)
        .map_err(io)?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(io)?;
    entries.sort();
    for path in entries {
        let Some(stem) = path.file_stem().and_then(|s| s.to_str()).map(str::to_owned) else {
            continue;
        };
        if path.is_dir() {
            modules.push(stem);
            collect(&path, modules, out)?;
            modules.pop();
        } else if path.extension().is_some_and(|e| e == "rs") && stem != "mod" {
            out.push(parse(&path, modules)?);
        }
    }
    Ok(())
}

fn error(path: &Path, message: impl Into<String>) -> InPlaceError {
    InPlaceError::Source {
        path: path.to_owned(),
        message: message.into(),
    }
}

/// Reads one file of types: the items before its first `impl` (the type, with its docs and
/// derives), each `impl` line, at the start of a line, as an impl with an empty body, and
/// each arm of the field visitor's match (`"apiVersion" => Field::Key_api_version,`), each
/// parsed with syn. The rest of the file (the bodies of `Deserialize`, `Serialize`,
/// `JsonSchema`: most of its text) is not parsed.
fn parse(path: &Path, modules: &[String]) -> Result<File, InPlaceError> {
    let text = std::fs::read_to_string(path).map_err(|source| InPlaceError::Io {
        path: path.to_owned(),
        source,
    })?;
    let name = text
        .lines()
        .next()
        .and_then(|l| l.strip_prefix(HEADER))
        .ok_or_else(|| error(path, format!("the first line is not `{HEADER}<name>`")))?
        .trim()
        .to_owned();
    let head = text.find("\nimpl").map_or(text.as_str(), |at| &text[..at]);
    let head = syn::parse_file(head).map_err(|e| error(path, format!("not Rust: {e}")))?;
    let item = head
        .items
        .into_iter()
        .find(|item| matches!(item, syn::Item::Struct(_) | syn::Item::Enum(_)))
        .ok_or_else(|| error(path, "no struct or enum before the first `impl`"))?;
    let mut impls = Vec::new();
    let mut keys = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let at = |e: syn::Error| error(path, format!("line {}: {e}", n + 1));
        if line.starts_with("impl") {
            let header = line.strip_suffix('{').unwrap_or(line);
            impls.push(syn::parse_str::<syn::ItemImpl>(&format!("{header} {{}}")).map_err(at)?);
        } else if let Some(arm) = line.trim().strip_prefix('"')
            && arm.contains("=> Field::Key_")
        {
            let arm = format!("\"{}", arm.trim_end_matches(','));
            let arm = syn::parse_str::<syn::Arm>(&arm).map_err(at)?;
            keys.push(field_key(&arm).ok_or_else(|| {
                error(
                    path,
                    format!("line {}: not `\"name\" => Field::Key_<field>`", n + 1),
                )
            })?);
        }
    }
    let ident = match &item {
        syn::Item::Struct(s) => &s.ident,
        syn::Item::Enum(e) => &e.ident,
        _ => unreachable!("found as a struct or an enum"),
    };
    let mut rust = modules.join("::");
    if !rust.is_empty() {
        rust.push_str("::");
    }
    rust.push_str(&ident.to_string());
    Ok(File {
        path: path.to_owned(),
        name,
        rust,
        item,
        impls,
        keys,
    })
}

/// The JSON name and the field of a field visitor's arm, `"json" => Field::Key_ident`.
fn field_key(arm: &syn::Arm) -> Option<(String, String)> {
    let (syn::Pat::Lit(lit), syn::Expr::Path(body)) = (&arm.pat, &*arm.body) else {
        return None;
    };
    let syn::Lit::Str(json) = &lit.lit else {
        return None;
    };
    let [field, key] = [body.path.segments.first()?, body.path.segments.last()?];
    if body.path.segments.len() != 2 || field.ident != "Field" {
        return None;
    }
    let key = key.ident.to_string().strip_prefix("Key_")?.to_owned();
    Some((json.value(), key))
}

/// The path of a type as a string of its segments (`crate::api::core::v1::Pod`).
fn path_string(path: &syn::Path) -> String {
    let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
    segments.join("::")
}

/// The file's type, and whether it is a listable resource.
fn definition(
    file: &File,
    names: &BTreeMap<&str, &str>,
) -> Result<(Definition, bool), InPlaceError> {
    let path = &file.path;
    let (ident, fields, generics, attrs) = match &file.item {
        syn::Item::Struct(s) => (&s.ident, Some(&s.fields), &s.generics, &s.attrs),
        syn::Item::Enum(e) => (&e.ident, None, &e.generics, &e.attrs),
        _ => return Err(error(path, "no struct or enum")),
    };
    if !generics.params.is_empty() {
        // `List<T>` and `WatchEvent<T>`: not types any resource's object holds.
        return Ok((opaque(file, false), false));
    }
    let mut resource = false;
    let mut listable = false;
    let mut default = derives_default(attrs);
    for imp in &file.impls {
        let Some((_, trait_path, _)) = &imp.trait_ else {
            continue;
        };
        let syn::Type::Path(self_ty) = &*imp.self_ty else {
            continue;
        };
        if self_ty.path.segments.last().map(|s| &s.ident) != Some(ident) {
            continue;
        }
        match path_string(trait_path).as_str() {
            "crate::Resource" => resource = true,
            "crate::ListableResource" => listable = true,
            "Default" | "std::default::Default" | "core::default::Default" => default = true,
            _ => {}
        }
    }
    let named = match fields {
        Some(syn::Fields::Named(named)) if !named.named.is_empty() => named,
        _ => return Ok((opaque(file, default), listable)),
    };
    // The JSON name of each field, from the field visitor's match.
    let mut by_ident: BTreeMap<&str, &str> = file
        .keys
        .iter()
        .map(|(json, key)| (key.as_str(), json.as_str()))
        .collect();
    let mut out = BTreeMap::new();
    let mut refs = BTreeSet::new();
    let mut required = BTreeSet::new();
    for field in &named.named {
        let Some(field_ident) = &field.ident else {
            continue;
        };
        let field_ident = field_ident.to_string();
        let json = by_ident.remove(field_ident.as_str()).ok_or_else(|| {
            error(
                path,
                format!("field `{field_ident}` has no JSON name in `Deserialize`"),
            )
        })?;
        out.insert(json.to_owned(), field_ident);
        let mut named_types = Vec::new();
        crate_paths(&field.ty, &mut named_types);
        for p in &named_types {
            let inside = p.strip_prefix("crate::").unwrap_or(p);
            match names.get(inside) {
                Some(name) => {
                    refs.insert((*name).to_owned());
                }
                None if TYPE_MODULES.contains(&inside.split("::").next().unwrap_or("")) => {
                    return Err(error(path, format!("`{p}` is the type of no file")));
                }
                None => {}
            }
        }
        // A required member: the field's type is not an `Option`; it counts when it is a
        // type of a file itself.
        if let syn::Type::Path(ty) = &field.ty
            && ty.path.segments.last().is_some_and(|s| s.ident != "Option")
            && let Some(name) = names.get(path_string(&ty.path).trim_start_matches("crate::"))
        {
            required.insert((*name).to_owned());
        }
    }
    for (key, json) in by_ident {
        if !(resource && matches!(json, "apiVersion" | "kind")) {
            return Err(error(
                path,
                format!("JSON name `{json}` is read into `{key}`, which is no field"),
            ));
        }
    }
    let def = Definition {
        path: format!("{K8S_OPENAPI}::{}", file.rust),
        shape: Shape::Struct {
            resource,
            fields: out,
        },
        default,
        refs,
        required,
    };
    Ok((def, listable))
}

/// The definition of a type without named fields.
fn opaque(file: &File, default: bool) -> Definition {
    Definition {
        path: format!("{K8S_OPENAPI}::{}", file.rust),
        shape: Shape::Opaque,
        default,
        refs: BTreeSet::new(),
        required: BTreeSet::new(),
    }
}

/// Whether `#[derive(...)]` among `attrs` derives `Default`.
fn derives_default(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|attr| {
        let mut found = false;
        if attr.path().is_ident("derive") {
            let _ = attr.parse_nested_meta(|meta| {
                found |= meta.path.is_ident("Default");
                Ok(())
            });
        }
        found
    })
}

/// The `crate::` paths of the types `ty` names, itself and its generic arguments.
fn crate_paths(ty: &syn::Type, out: &mut Vec<String>) {
    let syn::Type::Path(ty) = ty else { return };
    let p = path_string(&ty.path);
    if p.starts_with("crate::") {
        out.push(p);
    }
    for segment in &ty.path.segments {
        if let syn::PathArguments::AngleBracketed(args) = &segment.arguments {
            for arg in &args.args {
                if let syn::GenericArgument::Type(t) = arg {
                    crate_paths(t, out);
                }
            }
        }
    }
}
