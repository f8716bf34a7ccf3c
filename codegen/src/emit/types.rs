//! The type emitter: [`TypeModule`]s (CRD versions) -> Rust structs and enums with serde.
//!
//! What kopium does, without its losses: exact JSON names through serde renames, `Option` for
//! non-required fields (skipped when `None`), string enums with an `Other(String)` catch-all
//! (an informer must not fail on a value a newer server adds), maps as `BTreeMap`, preserved
//! unknown fields kept in a flattened map, `nullable` properties as `Option<Option<T>>`
//! (missing, `null` and a value each survive a round trip), and a root type that serializes
//! `apiVersion`/`kind`, implements the runtime's `HasMetadata` and `Resource`, and has
//! `Foo::new(name, spec)` as kube-rs' derive gives.
//!
//! **Decoding never defaults and never rewrites a value**: for a document valid against the
//! schema, decode then encode gives the same JSON value. A property with a schema `default`
//! is an `Option` (documented with its default) that stays `None` when the document leaves it
//! out, and no `status` or `metadata` is invented. Defaulting is the API server's job, and
//! client-go's typed clients do not default either (the reasons: `kinform_core::defaulting`'s
//! docs). The root type's `apply_schema_defaults` is the explicit operation: it runs
//! `kinform_core::defaulting` (the same code `TestApiServer` applies to what it stores) over
//! the part of the schema the module embeds (`TypeModule::defaults`).
//!
//! Each format maps to a type that writes back what it read:
//!
//! | schema | Rust type | why |
//! |---|---|---|
//! | `integer` (`int32`/`int64`) | `i32`/`i64` | exact |
//! | `number` | `serde_json::Number` | `f64` writes `3` as `3.0` |
//! | `x-kubernetes-int-or-string` | k8s-openapi `IntOrString` | exact (`Int` or `String`) |
//! | int-or-string with the quantity pattern | `kinform::value::Quantity` | k8s-openapi's `Quantity` writes `2` as `"2"` |
//! | `format: date-time` | `kinform::value::Timestamp` | k8s-openapi's `Time` drops fractions and offsets |
//! | exactly `metav1.Condition`'s object schema | `kinform::value::Condition` | k8s-openapi's `Condition` holds a `Time`; this one converts to it (`to_k8s`, `From`) |
//! | `format: byte` | k8s-openapi `ByteString` | base64 of the bytes |
//! | preserved unknown fields, schemaless | `serde_json::Value` | exact |
//!
//! All paths go through the configurable runtime crate (`::kinform` by default) and its
//! `k8s_openapi` re-export (serde and serde_json through k8s-openapi's re-exports), so generated
//! code needs no other dependency. Output is a pure function of the model: deterministic.

mod decoding;
mod defaults;
mod elements;
mod enums;
mod fields;
mod root;

pub use root::{ResourceIdentity, resource_impls_in_place};

use std::collections::{BTreeMap, BTreeSet};

use proc_macro2::TokenStream;
use quote::quote;

use crate::model::types::{StructType, TypeDef, TypeModule, TypeRef};

use super::format::{FormatError, doc_attrs, format_file};
use super::runtime::PathError;
use crate::naming::{ident, snake_name};

/// Options of the type emitter.
#[derive(Clone, Debug)]
pub struct TypesConfig {
    runtime: syn::Path,
}

impl Default for TypesConfig {
    fn default() -> Self {
        Self {
            runtime: syn::parse_quote!(::kinform),
        }
    }
}

impl TypesConfig {
    /// Options with the runtime crate at `path` (e.g. `::kinform` or `crate::rt`).
    pub fn with_runtime_crate(path: &str) -> Result<Self, PathError> {
        let runtime = syn::parse_str::<syn::Path>(path).map_err(|_| PathError {
            path: path.to_owned(),
            what: "runtime crate",
        })?;
        Ok(Self { runtime })
    }

    /// The runtime crate path.
    pub fn runtime_crate(&self) -> &syn::Path {
        &self.runtime
    }
}

/// Paths used by emitted code.
pub(crate) struct Paths {
    pub rt: TokenStream,
    pub k8s: TokenStream,
    pub serde: TokenStream,
    pub json: TokenStream,
    /// `#[serde(crate = "...")]` value.
    pub serde_crate: String,
}

impl Paths {
    pub(crate) fn new(cfg: &TypesConfig) -> Self {
        let rt_path = &cfg.runtime;
        let rt = quote!(#rt_path);
        let k8s = quote!(#rt::k8s_openapi);
        let serde = quote!(#k8s::serde);
        let json = quote!(#k8s::serde_json);
        let serde_crate = serde.to_string().replace(' ', "");
        Self {
            rt,
            k8s,
            serde,
            json,
            serde_crate,
        }
    }
}

/// The Rust type of a [`TypeRef`].
pub(crate) fn type_tokens(ty: &TypeRef, p: &Paths) -> TokenStream {
    rust_type(ty, p, false)
}

/// The Rust type of a [`TypeRef`]; with `shadow`, each pruned map value is an `Option` (what
/// serde reads before the `null` values go, see [`elements`]).
fn rust_type(ty: &TypeRef, p: &Paths, shadow: bool) -> TokenStream {
    let k8s = &p.k8s;
    match ty {
        TypeRef::String => quote!(String),
        TypeRef::Bool => quote!(bool),
        TypeRef::I32 => quote!(i32),
        TypeRef::I64 => quote!(i64),
        TypeRef::Number => {
            let json = &p.json;
            quote!(#json::Number)
        }
        TypeRef::IntOrString => quote!(#k8s::apimachinery::pkg::util::intstr::IntOrString),
        TypeRef::Quantity => {
            let rt = &p.rt;
            quote!(#rt::value::Quantity)
        }
        TypeRef::DateTime => {
            let rt = &p.rt;
            quote!(#rt::value::Timestamp)
        }
        TypeRef::Bytes => quote!(#k8s::ByteString),
        TypeRef::Json => {
            let json = &p.json;
            quote!(#json::Value)
        }
        TypeRef::ObjectMeta => quote!(#k8s::apimachinery::pkg::apis::meta::v1::ObjectMeta),
        TypeRef::Condition => {
            let rt = &p.rt;
            quote!(#rt::value::Condition)
        }
        TypeRef::List(inner) => {
            let inner = rust_type(inner, p, shadow);
            quote!(Vec<#inner>)
        }
        TypeRef::Map(inner) => {
            let inner = rust_type(inner, p, shadow);
            quote!(::std::collections::BTreeMap<String, #inner>)
        }
        TypeRef::Nullable(inner) | TypeRef::Defaulted { ty: inner, .. } => {
            let inner = rust_type(inner, p, shadow);
            quote!(Option<#inner>)
        }
        TypeRef::Pruned(ty) => {
            let inner = rust_type(ty, p, shadow);
            if shadow {
                quote!(Option<#inner>)
            } else {
                inner
            }
        }
        TypeRef::Named(name) => {
            let name = ident(name);
            quote!(#name)
        }
    }
}

/// Emits the items of one CRD version's module (no `mod` wrapper).
pub fn emit_type_module(module: &TypeModule, cfg: &TypesConfig) -> TokenStream {
    let p = Paths::new(cfg);
    let has_default = types_with_default(module);
    let decoded = decoding::decoded_structs(module);
    let mut fns = defaults::DefaultFns::new(&p);
    let mut out = TokenStream::new();
    for ty in &module.types {
        out.extend(match ty {
            TypeDef::Struct(s) if s.is_root => {
                root::emit_root(s, module, &p, &has_default, &decoded, &mut fns)
            }
            TypeDef::Struct(s) => emit_struct(s, &p, &has_default, &decoded, &mut fns),
            TypeDef::Enum(e) => enums::emit_enum(e, &p),
            TypeDef::Union(u) => enums::emit_union(u, &p, &has_default, &mut fns),
        });
    }
    out.extend(fns.into_tokens());
    out
}

/// Modules of one group by (version module, version).
type VersionTree<'a> = BTreeMap<(String, String), Vec<&'a TypeModule>>;

/// Emits all modules as one tree: `pub mod {group} { pub mod {version} { pub mod {kind} {..}
/// pub use {kind}::{Root}; } }`, matching [`TypeModule::rust_path`].
pub fn emit_crd_types_tokens(modules: &[TypeModule], cfg: &TypesConfig) -> TokenStream {
    let mut tree: BTreeMap<(String, String), VersionTree<'_>> = BTreeMap::new();
    for m in modules {
        tree.entry((m.group_module(), m.group.clone()))
            .or_default()
            .entry((m.version_module(), m.version.clone()))
            .or_default()
            .push(m);
    }
    let mut out = TokenStream::new();
    for ((group_mod, group), versions) in tree {
        let mut group_items = TokenStream::new();
        for ((version_mod, version), mods) in versions {
            let mut version_items = TokenStream::new();
            for m in &mods {
                let kind_mod = ident(&m.module);
                let root = ident(&m.root);
                let items = super::imports::shorten(emit_type_module(m, cfg));
                let applied = super::imports::shorten(super::apply::emit_apply_module(m, cfg));
                let apply_name = super::apply::apply_name(&m.root);
                let apply_root = ident(&apply_name);
                let doc = format!(" Types of `{}` `{}/{}`.", m.kind, m.group, m.version);
                let apply_doc = format!(
                    " Apply configurations of `{}` `{}/{}`, for typed server-side apply.",
                    m.kind, m.group, m.version
                );
                let apply_use = mods
                    .iter()
                    .all(|o| o.root != apply_name)
                    .then(|| quote!(pub use #kind_mod::apply::#apply_root;));
                version_items.extend(quote! {
                    #[doc = #doc]
                    pub mod #kind_mod {
                        #items
                        #[doc = #apply_doc]
                        pub mod apply {
                            #applied
                        }
                    }
                    pub use #kind_mod::#root;
                    #apply_use
                });
            }
            let version_ident = ident(&version_mod);
            let doc = format!(" Types of API version `{group}/{version}`.");
            group_items.extend(quote! {
                #[doc = #doc]
                pub mod #version_ident {
                    #version_items
                }
            });
        }
        let group_ident = ident(&group_mod);
        let doc = format!(" Types of API group `{group}`.");
        out.extend(quote! {
            #[doc = #doc]
            pub mod #group_ident {
                #group_items
            }
        });
    }
    out
}

/// Emits all modules as one formatted file with the `@generated` header.
pub fn emit_crd_types(modules: &[TypeModule], cfg: &TypesConfig) -> Result<String, FormatError> {
    format_file("CRD types", emit_crd_types_tokens(modules, cfg))
}

/// Names of the types that implement `Default` (every required field's type does).
fn types_with_default(module: &TypeModule) -> BTreeSet<String> {
    let mut yes: BTreeSet<String> = BTreeSet::new();
    loop {
        let before = yes.len();
        for ty in &module.types {
            let ok = match ty {
                TypeDef::Enum(_) => true,
                TypeDef::Union(u) => u.variants.iter().any(|v| ref_has_default(&v.ty, &yes)),
                TypeDef::Struct(s) => s
                    .fields
                    .iter()
                    .all(|f| f.is_optional() || ref_has_default(&f.ty, &yes)),
            };
            if ok {
                yes.insert(ty.name().to_owned());
            }
        }
        if yes.len() == before {
            return yes;
        }
    }
}

pub(crate) fn ref_has_default(ty: &TypeRef, named: &BTreeSet<String>) -> bool {
    match ty {
        TypeRef::DateTime | TypeRef::Quantity | TypeRef::Number | TypeRef::Condition => false,
        TypeRef::Named(n) => named.contains(n),
        _ => true,
    }
}

/// The per-module helper that deserializes nullable properties (see [`plan_nullable`]).
pub(crate) const NULLABLE_FN: &str = "deserialize_nullable";

fn type_docs(docs: Option<&str>, fallback: &str) -> TokenStream {
    match docs.filter(|d| !d.trim().is_empty()) {
        Some(d) => doc_attrs(d),
        None => doc_attrs(fallback),
    }
}

/// A plain (non-root) struct.
fn emit_struct(
    s: &StructType,
    p: &Paths,
    has_default: &BTreeSet<String>,
    decoded: &BTreeSet<String>,
    fns: &mut defaults::DefaultFns,
) -> TokenStream {
    let docs = type_docs(
        s.docs.as_deref(),
        &format!("The object at `{}` in the schema.", s.schema_path),
    );
    let body = fields::struct_body(
        s,
        " Properties the schema does not declare, kept as they were read.",
        p,
        has_default,
        fns,
    );
    if body.deserialize.is_none() {
        let decl = struct_decl(s, docs, &body, p, true);
        let in_place = decoding::in_place_decl(s, &body.fields, has_default, decoded, p);
        return quote!(#decl #in_place);
    }
    // It keeps `null`s in its remainder: written as read, each only while its field is `None`.
    let decl = struct_decl(s, docs, &body, p, false);
    let (name, serde) = (ident(&s.name), &p.serde);
    let entries = fields::serialize_entries(s, &body.fields, &[]);
    quote! {
        #decl
        impl #serde::Serialize for #name {
            fn serialize<S>(&self, serializer: S) -> Result<S::Ok, S::Error>
            where
                S: #serde::Serializer,
            {
                use #serde::ser::SerializeMap as _;
                let mut map = serializer.serialize_map(None)?;
                #entries
                map.end()
            }
        }
    }
}

/// A struct's declaration with its derives, as plain and root structs share it; `derive_serialize` is off for a root type, whose `Serialize` is written out.
pub(crate) fn struct_decl(
    s: &StructType,
    docs: TokenStream,
    body: &fields::StructBody<'_>,
    p: &Paths,
    derive_serialize: bool,
) -> TokenStream {
    let name = ident(&s.name);
    let serde = &p.serde;
    let serde_crate = &p.serde_crate;
    let fields::StructBody {
        decls,
        derive_default,
        deserialize,
        ..
    } = body;
    let serialize = derive_serialize.then(|| quote!(#serde::Serialize,));
    let derive_deserialize = deserialize.is_none().then(|| quote!(#serde::Deserialize));
    let serde_crate =
        (derive_serialize || deserialize.is_none()).then(|| quote!(#[serde(crate = #serde_crate)]));
    // Properties the schema does not describe have no doc line rather than one repeating
    // their JSON name.
    let allow = s
        .fields
        .iter()
        .zip(fields::keyed_fields(s))
        .any(|(f, keyed)| fields::is_undocumented(f, keyed))
        .then(|| quote!(#[allow(missing_docs)]));
    quote! {
        #docs
        #allow
        #[derive(Clone, Debug, #derive_default PartialEq, #serialize #derive_deserialize)]
        #serde_crate
        pub struct #name {
            #decls
        }
        #deserialize
    }
}

/// A `snake_case` name for generated helper functions (after their `default_` or
/// `deserialize_` prefix).
pub(crate) fn fn_base(owner: &str, field: &str) -> String {
    format!("{}_{}", snake_name(owner), snake_name(field))
}

pub(crate) use crate::naming::NameAllocator as FnNames;
