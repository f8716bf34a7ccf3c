//! The helper functions of one module's deserializers: a few shared ones (emitted at most once
//! per module) and the per-field readers of values whose `null` map values are dropped (see
//! [`super::elements`]).
//!
//! Nothing here fills in a schema default: decoding keeps what the document says, and the
//! defaults are applied only by the root type's explicit `apply_schema_defaults` (the rules
//! of `kinform_core::defaulting`, shared with the test server).

use std::collections::BTreeSet;

use proc_macro2::TokenStream;
use quote::quote;

use crate::naming::ident;

use super::{FnNames, Paths, fn_base};

/// A deserialize function emitted at most once per module and shared by its fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Shared {
    /// A nullable property that is present: `null` is `Some(None)`.
    Nullable,
    /// The root's `metadata`: `null` reads as empty metadata (the API server's `ObjectMeta`).
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
                " Deserializes `metadata`: `null` is empty metadata.",
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

/// The helper functions of one module.
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

    /// Adds `fn {name}<'de, D>(deserializer: D) -> Result<{ty}, D::Error> { {body} }` (the
    /// reader of a value holding pruned map values) documented by `doc`, and returns its name.
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
        // The return type is the field's own type in a `Result`; nested maps of maps make it
        // long, and naming it would only add an alias no reader looks for.
        self.items.extend(quote! {
            #[doc = #doc]
            #[allow(clippy::type_complexity)]
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
