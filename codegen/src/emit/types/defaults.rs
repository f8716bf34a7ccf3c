//! Schema defaults applied on deserialize, as the API server's defaulting does
//! (apiextensions-apiserver `structuraldefaulting`): a missing property takes its `default`.
//!
//! Scalars (strings, integers, numbers, booleans, enum values, int-or-string, quantities)
//! become Rust literals in a `default = "fn"` function, and the field is not an `Option`.
//! `{}` on a struct/map and `[]` on a list use the type's `Default`. Anything else (an object
//! literal, a non-empty list) is parsed from its JSON at run time into an `Option` field, so a
//! default that does not fit the type leaves `None` instead of panicking.

use std::collections::BTreeSet;

use proc_macro2::{Literal, TokenStream};
use quote::quote;
use serde_json::Value;

use crate::model::types::{Field, TypeRef};
use crate::naming::ident;

use super::{FnNames, Paths, fn_base, ref_has_default};

/// How a field's default is applied.
pub(crate) enum DefaultKind {
    /// No default.
    None,
    /// `#[serde(default)]` with the type's `Default` (`{}` or `[]`).
    TypeDefault,
    /// A function returning this Rust expression.
    Literal(TokenStream),
    /// An `Option` defaulting to this JSON parsed at run time.
    Parsed(String),
}

/// Whether the field's default is a Rust literal (its type need not implement `Default`).
pub(crate) fn is_literal(f: &Field) -> bool {
    !f.nullable
        && f.default
            .as_ref()
            .is_some_and(|d| literal(&f.ty, d, &TokenStream::new()).is_some())
}

pub(crate) fn classify(f: &Field, has_default: &BTreeSet<String>, p: &Paths) -> DefaultKind {
    let Some(default) = &f.default else {
        return DefaultKind::None;
    };
    if f.nullable {
        return DefaultKind::Parsed(default.to_string());
    }
    if let Some(expr) = literal(&f.ty, default, &p.k8s) {
        return DefaultKind::Literal(expr);
    }
    let empty_container = match (&f.ty, default) {
        (TypeRef::List(_), Value::Array(a)) => a.is_empty(),
        (TypeRef::Map(_) | TypeRef::ObjectMeta, Value::Object(o)) => o.is_empty(),
        (TypeRef::Named(_), Value::Object(o)) => o.is_empty(),
        _ => false,
    };
    if empty_container && ref_has_default(&f.ty, has_default) {
        DefaultKind::TypeDefault
    } else {
        DefaultKind::Parsed(default.to_string())
    }
}

/// The Rust expression of a scalar default; `k8s` is the k8s-openapi path.
pub(crate) fn literal(ty: &TypeRef, v: &Value, k8s: &TokenStream) -> Option<TokenStream> {
    match (ty, v) {
        (TypeRef::String, Value::String(s)) => Some(quote!(String::from(#s))),
        (TypeRef::Bool, Value::Bool(b)) => Some(quote!(#b)),
        (TypeRef::I32, Value::Number(n)) => {
            let n = i32::try_from(n.as_i64()?).ok()?;
            let lit = Literal::i32_suffixed(n);
            Some(quote!(#lit))
        }
        (TypeRef::I64, Value::Number(n)) => {
            let lit = Literal::i64_suffixed(n.as_i64()?);
            Some(quote!(#lit))
        }
        (TypeRef::F64, Value::Number(n)) => {
            let f = n.as_f64().filter(|f| f.is_finite())?;
            let lit = Literal::f64_suffixed(f);
            Some(quote!(#lit))
        }
        (TypeRef::IntOrString, Value::Number(n)) => {
            let n = i32::try_from(n.as_i64()?).ok()?;
            Some(quote!(#k8s::apimachinery::pkg::util::intstr::IntOrString::Int(#n)))
        }
        (TypeRef::IntOrString, Value::String(s)) => Some(
            quote!(#k8s::apimachinery::pkg::util::intstr::IntOrString::String(String::from(#s))),
        ),
        (TypeRef::Quantity, Value::String(s)) => {
            Some(quote!(#k8s::apimachinery::pkg::api::resource::Quantity(String::from(#s))))
        }
        (TypeRef::Quantity, Value::Number(n)) => {
            let s = n.to_string();
            Some(quote!(#k8s::apimachinery::pkg::api::resource::Quantity(String::from(#s))))
        }
        (TypeRef::Named(name), Value::String(s)) => {
            let name = ident(name);
            Some(quote!(#name::from(#s)))
        }
        _ => None,
    }
}

/// A deserialize function emitted at most once per module and shared by its fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Shared {
    /// A nullable property that is present: `null` is `Some(None)`.
    Nullable,
    /// A property whose schema default is the type's `Default` (`{}`, `[]`): `null` takes it.
    OrDefault,
    /// A map of plain values: an entry whose value is `null` is dropped.
    Map,
    /// An optional map of plain values: `null` is `None`, `null` values are dropped.
    OptionalMap,
}

impl Shared {
    const ALL: [Shared; 4] = [
        Shared::Nullable,
        Shared::OrDefault,
        Shared::Map,
        Shared::OptionalMap,
    ];

    /// The function's name.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Shared::Nullable => super::NULLABLE_FN,
            Shared::OrDefault => "deserialize_or_default",
            Shared::Map => "deserialize_map",
            Shared::OptionalMap => "deserialize_optional_map",
        }
    }

    fn tokens(self, serde: &TokenStream) -> TokenStream {
        let name = ident(self.name());
        let map = quote!(::std::collections::BTreeMap<String, T>);
        let (doc, ret, body) = match self {
            Shared::Nullable => (
                " Deserializes a nullable property that is present: `null` is `Some(None)`.",
                quote!(Option<Option<T>>),
                quote!(<Option<T> as #serde::Deserialize<'de>>::deserialize(deserializer).map(Some)),
            ),
            Shared::OrDefault => (
                " Deserializes a property whose schema default is empty: `null` takes it.",
                quote!(T),
                quote! {
                    <Option<T> as #serde::Deserialize<'de>>::deserialize(deserializer)
                        .map(Option::unwrap_or_default)
                },
            ),
            Shared::Map => (
                " Deserializes a map, dropping the entries whose value is `null` (as the API \
                 server prunes them).",
                map.clone(),
                quote! {
                    let map = <::std::collections::BTreeMap<String, Option<T>> as #serde::Deserialize<'de>>::deserialize(deserializer)?;
                    Ok(map.into_iter().filter_map(|(key, value)| value.map(|value| (key, value))).collect())
                },
            ),
            Shared::OptionalMap => (
                " Deserializes an optional map, dropping the entries whose value is `null` (as \
                 the API server prunes them).",
                quote!(Option<#map>),
                quote! {
                    let map = <Option<::std::collections::BTreeMap<String, Option<T>>> as #serde::Deserialize<'de>>::deserialize(deserializer)?;
                    Ok(map.map(|map| map.into_iter().filter_map(|(key, value)| value.map(|value| (key, value))).collect()))
                },
            ),
        };
        let bound = match self {
            Shared::OrDefault => quote!(T: #serde::Deserialize<'de> + Default,),
            _ => quote!(T: #serde::Deserialize<'de>,),
        };
        quote! {
            #[doc = #doc]
            fn #name<'de, D, T>(deserializer: D) -> Result<#ret, D::Error>
            where
                D: #serde::Deserializer<'de>,
                #bound
            {
                #body
            }
        }
    }
}

/// The default functions of one module.
pub(crate) struct DefaultFns {
    names: FnNames,
    items: TokenStream,
    shared: BTreeSet<Shared>,
    serde: TokenStream,
}

impl DefaultFns {
    pub(crate) fn new(p: &Paths) -> Self {
        let mut names = FnNames::snake();
        for shared in Shared::ALL {
            names.reserve(shared.name());
        }
        Self {
            names,
            items: TokenStream::new(),
            shared: BTreeSet::new(),
            serde: p.serde.clone(),
        }
    }

    /// The name of a shared function, emitted once at the end of the module.
    pub(crate) fn shared(&mut self, shared: Shared) -> &'static str {
        self.shared.insert(shared);
        shared.name()
    }

    /// Adds `fn {name}() -> {ty} { {expr} }` and returns its name.
    pub(crate) fn add(
        &mut self,
        owner: &str,
        f: &Field,
        ty: TokenStream,
        expr: TokenStream,
    ) -> String {
        let name = self
            .names
            .alloc(&format!("default_{}", fn_base(owner, &f.json_name)));
        let id = ident(&name);
        let doc = format!(
            " Schema default of `{owner}.{}`.",
            f.rust_name.trim_start_matches("r#")
        );
        self.items.extend(quote! {
            #[doc = #doc]
            fn #id() -> #ty {
                #expr
            }
        });
        name
    }

    /// Adds `fn {name}<'de, D>(deserializer: D) -> Result<{ty}, D::Error> { {body} }` (the
    /// reader of a value holding defaulted or pruned items, or of a property whose `null`
    /// takes its default) documented by `doc`, and returns its name.
    pub(crate) fn add_deserializer(
        &mut self,
        owner: &str,
        field: &str,
        ty: &TokenStream,
        doc: &str,
        body: TokenStream,
    ) -> String {
        let base = format!("deserialize_{}", fn_base(owner, field));
        let name = self.names.alloc(&base);
        let id = ident(&name);
        let serde = &self.serde;
        self.items.extend(quote! {
            #[doc = #doc]
            fn #id<'de, D>(deserializer: D) -> Result<#ty, D::Error>
            where
                D: #serde::Deserializer<'de>,
            {
                #body
            }
        });
        name
    }

    pub(crate) fn into_tokens(self) -> TokenStream {
        let mut items = self.items;
        for shared in &self.shared {
            items.extend(shared.tokens(&self.serde));
        }
        items
    }
}
