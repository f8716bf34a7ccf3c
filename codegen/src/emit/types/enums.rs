//! String enums and untagged unions.
//!
//! A string enum keeps a catch-all variant: a value added by a newer server (or a newer CRD)
//! deserializes into `Other(String)` and serializes back unchanged, so an informer never
//! fails on it (client-go's typed string constants have the same property). Unions are
//! untagged: their branches have distinct JSON types, so exactly one matches.

use std::collections::BTreeSet;

use proc_macro2::TokenStream;
use quote::quote;

use crate::model::types::{EnumType, UnionType};
use crate::naming::ident;

use super::defaults::DefaultFns;
use super::{Paths, elements, ref_has_default, type_docs, type_tokens};

pub(crate) fn emit_enum(e: &EnumType, p: &Paths) -> TokenStream {
    let name = ident(&e.name);
    let serde = &p.serde;
    let other = ident(&e.other_variant);
    let docs = type_docs(e.docs.as_deref(), "A string enum.");
    // Variants named exactly as their value have no doc line (it would only repeat it).
    let allow = e
        .variants
        .iter()
        .any(|v| v.rust_name == v.value)
        .then(|| quote!(#[allow(missing_docs)]));
    // The first listed value is the default (derived, as clippy prefers); an enum without
    // listed values defaults to the empty string.
    let variants = e.variants.iter().enumerate().map(|(i, v)| {
        let id = ident(&v.rust_name);
        // The wire value is worth a line only where the Rust name spells it otherwise.
        let doc = (v.rust_name != v.value).then(|| {
            let doc = format!(" Serialized as `{}`.", v.value.replace('`', "'"));
            quote!(#[doc = #doc])
        });
        let default = (i == 0).then(|| quote!(#[default]));
        quote!(#doc #default #id,)
    });
    let as_str = e.variants.iter().map(|v| {
        let id = ident(&v.rust_name);
        let value = &v.value;
        quote!(Self::#id => #value,)
    });
    let from = e.variants.iter().map(|v| {
        let id = ident(&v.rust_name);
        let value = &v.value;
        quote!(#value => Self::#id,)
    });
    let from2 = from.clone();
    let (derive_default, default_impl) = if e.variants.is_empty() {
        let default_impl = quote! {
            impl Default for #name {
                fn default() -> Self {
                    Self::#other(String::new())
                }
            }
        };
        (quote!(), default_impl)
    } else {
        (quote!(Default,), quote!())
    };
    quote! {
        #docs
        #allow
        #[derive(Clone, Debug, #derive_default PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum #name {
            #(#variants)*
            /// A value this version of the schema does not list (e.g. from a newer server).
            #other(String),
        }

        impl #name {
            /// The JSON string of the value.
            pub fn as_str(&self) -> &str {
                match self {
                    #(#as_str)*
                    Self::#other(value) => value,
                }
            }
        }

        impl ::std::fmt::Display for #name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl From<&str> for #name {
            fn from(value: &str) -> Self {
                match value {
                    #(#from)*
                    other => Self::#other(other.to_owned()),
                }
            }
        }

        impl From<String> for #name {
            fn from(value: String) -> Self {
                match value.as_str() {
                    #(#from2)*
                    _ => Self::#other(value),
                }
            }
        }

        #default_impl

        impl #serde::Serialize for #name {
            fn serialize<S>(&self, serializer: S) -> Result<S::Ok, S::Error>
            where
                S: #serde::Serializer,
            {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> #serde::Deserialize<'de> for #name {
            fn deserialize<D>(deserializer: D) -> Result<Self, D::Error>
            where
                D: #serde::Deserializer<'de>,
            {
                <String as #serde::Deserialize<'de>>::deserialize(deserializer).map(Self::from)
            }
        }
    }
}

pub(crate) fn emit_union(
    u: &UnionType,
    p: &Paths,
    has_default: &BTreeSet<String>,
    fns: &mut DefaultFns,
) -> TokenStream {
    let name = ident(&u.name);
    let serde = &p.serde;
    let serde_crate = &p.serde_crate;
    let docs = type_docs(u.docs.as_deref(), "One of several JSON types.");
    let mut variants = TokenStream::new();
    for v in &u.variants {
        let id = ident(&v.rust_name);
        let ty = type_tokens(&v.ty, p);
        let doc = format!(" The value is a JSON {}.", v.rust_name.to_lowercase());
        // A branch holding pruned map values reads through its own deserializer.
        let with = elements::reader(&u.name, &v.rust_name, &v.ty, false, &ty, p, fns)
            .map(|f| quote!(#[serde(deserialize_with = #f)]));
        variants.extend(quote!(#[doc = #doc] #with #id(#ty),));
    }
    let default_impl = u
        .variants
        .iter()
        .find(|v| ref_has_default(&v.ty, has_default))
        .map(|v| {
            let id = ident(&v.rust_name);
            quote! {
                impl Default for #name {
                    fn default() -> Self {
                        Self::#id(Default::default())
                    }
                }
            }
        });
    quote! {
        #docs
        #[derive(Clone, Debug, PartialEq, #serde::Serialize, #serde::Deserialize)]
        #[serde(crate = #serde_crate, untagged)]
        pub enum #name {
            #variants
        }
        #default_impl
    }
}
