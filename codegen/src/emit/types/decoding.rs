//! The in-place decoders of generated structs: one `custom_in_place!` invocation (a macro of
//! kinform-client, see its docs) per struct, listing each field with how the struct's derived
//! `Deserialize` reads it and its JSON key, so an informer's watch decodes a custom resource
//! into the object it replaces, as it does a built-in kind.
//!
//! A struct with a flattened remainder (preserve-unknown-fields, `additionalProperties`
//! beside properties) gets none: its objects take the serde path, as do values of types
//! without one (enums, unions, `IntOrString`, numbers, quantities, timestamps, conditions,
//! nested `Option`s), which are decoded afresh by their `Deserialize` from their part of the
//! tape, and fields read through a generated `deserialize_with`, decoded afresh through it.

use std::collections::BTreeSet;

use proc_macro2::TokenStream;
use quote::quote;

use crate::model::types::{StructType, TypeDef, TypeModule, TypeRef};
use crate::naming::ident;

use super::Paths;
use super::fields::{PlannedField, is_root_metadata};

/// The structs of `module` that get an in-place decoder: those without a remainder.
pub(crate) fn decoded_structs(module: &TypeModule) -> BTreeSet<String> {
    module
        .types
        .iter()
        .filter_map(|t| match t {
            TypeDef::Struct(s) if s.remainder.is_none() => Some(s.name.clone()),
            _ => None,
        })
        .collect()
}

/// Whether a value of type `ty` is decoded in place (else afresh by its `Deserialize`).
fn in_place(ty: &TypeRef, decoded: &BTreeSet<String>) -> bool {
    match ty {
        TypeRef::String
        | TypeRef::Bool
        | TypeRef::I32
        | TypeRef::I64
        | TypeRef::Json
        | TypeRef::Bytes => true,
        TypeRef::List(inner) | TypeRef::Map(inner) => in_place(inner, decoded),
        TypeRef::Named(name) => decoded.contains(name),
        _ => false,
    }
}

/// The `custom_in_place!` invocation of `s`, whose fields are planned as `fields`; `None`
/// for a struct that gets no in-place decoder (see [`decoded_structs`]).
pub(crate) fn in_place_decl(
    s: &StructType,
    fields: &[PlannedField<'_>],
    has_default: &BTreeSet<String>,
    decoded: &BTreeSet<String>,
    p: &Paths,
) -> Option<TokenStream> {
    if !decoded.contains(&s.name) {
        return None;
    }
    let rt = &p.rt;
    let name = ident(&s.name);
    let target = if has_default.contains(&s.name) {
        quote!(#name)
    } else {
        quote!(no_default(#name))
    };
    let members = fields.iter().map(|f| {
        let (json, fname, plan) = (&f.field.json_name, &f.ident, &f.plan);
        if is_root_metadata(f.field) {
            return quote!(metadata(#json, #fname));
        }
        if let Some(read) = &plan.read_with {
            let read = ident(read);
            return if plan.serde_default {
                quote!(with_default(#json, #fname, #read))
            } else {
                quote!(with(#json, #fname, #read))
            };
        }
        match (plan.is_option, in_place(&f.field.ty, decoded)) {
            (true, true) => quote!(optional(#json, #fname)),
            (true, false) => quote!(fresh_optional(#json, #fname)),
            (false, true) => quote!(value(#json, #fname)),
            (false, false) => quote!(fresh(#json, #fname)),
        }
    });
    Some(quote! {
        #rt::client::custom_in_place!(#target, #(#members),*);
    })
}
