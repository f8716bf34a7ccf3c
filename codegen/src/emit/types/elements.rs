//! `null` list items and map values. The API server's structural defaulting
//! (apiextensions-apiserver `schema/defaulting`) replaces a `null` list item, or a `null`
//! value of an `additionalProperties` map, whose schema has a `default` and is not `nullable`,
//! with that default; decoding does not default, so such an item ([`TypeRef::Defaulted`]) is
//! an `Option` like a nullable one: `null` reads as `None` and is written back as `null`, for
//! the explicit `apply_schema_defaults` to fill. A `null` map value whose schema is neither
//! nullable nor defaulted is removed by the server (`PruneNonNullableNullsWithoutDefaults`,
//! [`TypeRef::Pruned`]); such a `null` is not valid against the schema and the value type
//! cannot hold it, so the generated deserializer drops it too. A `null` list item without a
//! default is a deserialize error (the server rejects it in validation), never a panic.
//!
//! A value holding pruned map values anywhere inside it is read through a generated
//! function: serde first reads a *shadow* of the type, in which each pruned value is an
//! `Option`, then every `None` is dropped. The commonest shapes (a map, or an optional map, of
//! plain values) share one function per module instead (see [`reader`]). Serialization is
//! untouched: the Rust type is the value's own type.

use proc_macro2::TokenStream;
use quote::quote;

use crate::model::types::TypeRef;

use super::defaults::{DefaultFns, Shared};
use super::{Paths, rust_type};

/// Whether `ty` contains a pruned map value (and so needs a [`reader`]).
pub(crate) fn needs_reader(ty: &TypeRef) -> bool {
    match ty {
        TypeRef::Pruned(_) => true,
        TypeRef::List(inner)
        | TypeRef::Map(inner)
        | TypeRef::Nullable(inner)
        | TypeRef::Defaulted { ty: inner, .. } => needs_reader(inner),
        _ => false,
    }
}

/// The function reading a `read` (wrapped in `Some` with `some`) into the Rust type `ty`, if
/// it needs one: a per-module shared function for a map, or an optional map, of plain values
/// (the commonest shape: one function, not one per field), else a function of its own named
/// after `owner` and `name`.
pub(crate) fn reader(
    owner: &str,
    name: &str,
    read: &TypeRef,
    some: bool,
    ty: &TokenStream,
    p: &Paths,
    fns: &mut DefaultFns,
) -> Option<String> {
    if !needs_reader(read) {
        return None;
    }
    if !some {
        let plain_map = |t: &TypeRef| matches!(t, TypeRef::Map(v) if matches!(&**v, TypeRef::Pruned(x) if !needs_reader(x)));
        match read {
            t if plain_map(t) => return Some(fns.shared(Shared::Map).to_owned()),
            TypeRef::Nullable(t) if plain_map(t) => {
                return Some(fns.shared(Shared::OptionalMap).to_owned());
            }
            _ => {}
        }
    }
    let body = deserializer_body(read, some, p);
    let doc = format!(
        " Reads `{owner}.{name}`: `null` map values that the schema does not allow are dropped."
    );
    Some(fns.add_deserializer(owner, name, ty, &doc, body))
}

/// The body of `fn<'de, D: Deserializer<'de>>(deserializer: D) -> Result<T, D::Error>` reading
/// a `ty` (wrapped in `Some` with `some`).
fn deserializer_body(ty: &TypeRef, some: bool, p: &Paths) -> TokenStream {
    let serde = &p.serde;
    let shadow = rust_type(ty, p, true);
    let convert = convert(ty, quote!(value));
    let result = if some {
        quote! {
            let value: Result<_, D::Error> = #convert;
            value.map(Some)
        }
    } else {
        convert
    };
    quote! {
        let value = <#shadow as #serde::Deserialize<'de>>::deserialize(deserializer)?;
        #result
    }
}

/// An expression turning `value` (of the shadow type) into `Result<ty, D::Error>`.
fn convert(ty: &TypeRef, value: TokenStream) -> TokenStream {
    if !needs_reader(ty) {
        return quote!(Ok(#value));
    }
    match ty {
        TypeRef::List(inner) => {
            let item = convert(inner, quote!(item));
            quote! {
                #value
                    .into_iter()
                    .map(|item| #item)
                    .collect::<Result<Vec<_>, D::Error>>()
            }
        }
        TypeRef::Map(inner) => {
            let TypeRef::Pruned(inner) = &**inner else {
                let item = convert(inner, quote!(item));
                return quote! {
                    #value
                        .into_iter()
                        .map(|(key, item)| #item.map(|item| (key, item)))
                        .collect::<Result<::std::collections::BTreeMap<_, _>, D::Error>>()
                };
            };
            // A `null` value (`None` in the shadow) is dropped.
            if !needs_reader(inner) {
                return quote! {
                    Ok(#value
                        .into_iter()
                        .filter_map(|(key, item)| item.map(|item| (key, item)))
                        .collect::<::std::collections::BTreeMap<_, _>>())
                };
            }
            let item = convert(inner, quote!(item));
            quote! {
                #value
                    .into_iter()
                    .filter_map(|(key, item)| item.map(|item| #item.map(|item| (key, item))))
                    .collect::<Result<::std::collections::BTreeMap<_, _>, D::Error>>()
            }
        }
        TypeRef::Nullable(inner) | TypeRef::Defaulted { ty: inner, .. } => {
            let item = convert(inner, quote!(item));
            quote!(#value.map(|item| #item).transpose())
        }
        // Only ever a map value (handled above).
        TypeRef::Pruned(inner) => convert(inner, value),
        // `needs_reader` is false for every other type.
        _ => quote!(Ok(#value)),
    }
}
