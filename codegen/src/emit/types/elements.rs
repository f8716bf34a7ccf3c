//! `null` list items and map values, read as the API server's structural defaulting leaves
//! them (apiextensions-apiserver `schema/defaulting`): a `null` list item, or a `null` value of
//! an `additionalProperties` map, whose schema has a `default` and is not `nullable`, becomes
//! that default (`Default`); a `null` map value whose schema is neither nullable nor defaulted
//! is removed (`PruneNonNullableNullsWithoutDefaults`, [`TypeRef::Pruned`]). A nullable item
//! keeps its `null`; a `null` list item without a default stays an error (the server keeps it
//! and then rejects it in validation); an item that is an object takes its own properties'
//! defaults through its struct as usual.
//!
//! A value holding such items ([`TypeRef::Defaulted`] or [`TypeRef::Pruned`] anywhere inside
//! it) is read through a generated function: serde first reads a *shadow* of the type, in
//! which each defaulted or pruned item is an `Option`, then every `None` is replaced by the
//! default or dropped. A scalar default is a Rust literal; any other default is parsed from its
//! JSON (and, like the server, defaulted in turn by its own type); a default that does not fit
//! the Rust type is a deserialize error naming the schema place, never a panic. The commonest
//! shapes (a map, or an optional map, of plain values) share one function per module instead
//! (see [`reader`]). Serialization is untouched: the Rust type is the item's own type.

use proc_macro2::{Literal, TokenStream};
use quote::quote;
use serde_json::Value;

use crate::model::types::TypeRef;
use crate::naming::ident;

use super::defaults::{DefaultFns, Shared};
use super::{Paths, defaults, rust_type, type_tokens};

/// Whether `ty` contains a defaulted or pruned item or value (and so needs a [`reader`]).
pub(crate) fn needs_reader(ty: &TypeRef) -> bool {
    match ty {
        TypeRef::Defaulted { .. } | TypeRef::Pruned(_) => true,
        TypeRef::List(inner) | TypeRef::Map(inner) | TypeRef::Nullable(inner) => {
            needs_reader(inner)
        }
        _ => false,
    }
}

/// The function reading a `read` (wrapped in `Some` with `some`) into the Rust type `ty`, if
/// it needs one: a per-module shared function for a map, or an optional map, of plain values
/// (the commonest shape: one function, not one per field), else a function of its own named
/// after `owner` and `name`; `place` names the schema place in error messages.
#[allow(clippy::too_many_arguments)]
pub(crate) fn reader(
    owner: &str,
    name: &str,
    read: &TypeRef,
    some: bool,
    ty: &TokenStream,
    place: &str,
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
    let body = deserializer_body(read, some, place, p);
    let doc = format!(
        " Reads `{owner}.{name}`: `null` items take their schema default, `null` map values without one are dropped."
    );
    Some(fns.add_deserializer(owner, name, ty, &doc, body))
}

/// The body of `fn<'de, D: Deserializer<'de>>(deserializer: D) -> Result<T, D::Error>` reading
/// a `ty` (wrapped in `Some` with `some`); `place` names the schema place in error messages.
pub(crate) fn deserializer_body(ty: &TypeRef, some: bool, place: &str, p: &Paths) -> TokenStream {
    let serde = &p.serde;
    let shadow = rust_type(ty, p, true);
    let convert = convert(ty, quote!(value), place, p);
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
pub(crate) fn convert(ty: &TypeRef, value: TokenStream, place: &str, p: &Paths) -> TokenStream {
    if !needs_reader(ty) {
        return quote!(Ok(#value));
    }
    match ty {
        TypeRef::Defaulted { ty, default } => {
            let item = convert(ty, quote!(item), place, p);
            let default = default_expr(ty, default, place, p);
            quote! {
                match #value {
                    Some(item) => #item,
                    None => #default,
                }
            }
        }
        TypeRef::List(inner) => {
            let item = convert(inner, quote!(item), &format!("{place}[]"), p);
            quote! {
                #value
                    .into_iter()
                    .map(|item| #item)
                    .collect::<Result<Vec<_>, D::Error>>()
            }
        }
        TypeRef::Map(inner) => {
            let place = format!("{place}.*");
            let TypeRef::Pruned(inner) = &**inner else {
                let item = convert(inner, quote!(item), &place, p);
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
            let item = convert(inner, quote!(item), &place, p);
            quote! {
                #value
                    .into_iter()
                    .filter_map(|(key, item)| item.map(|item| #item.map(|item| (key, item))))
                    .collect::<Result<::std::collections::BTreeMap<_, _>, D::Error>>()
            }
        }
        TypeRef::Nullable(inner) => {
            let item = convert(inner, quote!(item), place, p);
            quote!(#value.map(|item| #item).transpose())
        }
        // Only ever a map value (handled above).
        TypeRef::Pruned(inner) => convert(inner, value, place, p),
        // `needs_reader` is false for every other type.
        _ => quote!(Ok(#value)),
    }
}

/// `Result<ty, D::Error>` holding the default: a literal for scalars, else parsed from JSON.
fn default_expr(ty: &TypeRef, default: &str, place: &str, p: &Paths) -> TokenStream {
    let scalar = serde_json::from_str::<Value>(default)
        .ok()
        .and_then(|v| defaults::literal(ty, &v, &p.k8s));
    if let Some(expr) = scalar {
        return quote!(Ok(#expr));
    }
    let (serde, json) = (&p.serde, &p.json);
    let rust = type_tokens(ty, p);
    let lit = Literal::string(default);
    let message = format!("the schema default {default} of `{place}`");
    let parse = if needs_reader(ty) {
        // The default's own items take their defaults too, as the server defaults a
        // defaulted value again.
        let inner = deserializer_body(ty, false, place, p);
        let read = ident("read_default");
        quote! {{
            fn #read<'de, D>(deserializer: D) -> Result<#rust, D::Error>
            where
                D: #serde::Deserializer<'de>,
            {
                #inner
            }
            #read(&mut #json::Deserializer::from_str(#lit))
        }}
    } else {
        quote!(#json::from_str::<#rust>(#lit))
    };
    quote! {
        #parse.map_err(|e| <D::Error as #serde::de::Error>::custom(format_args!("{}: {}", #message, e)))
    }
}
