//! Expansion: the root type, its serde, `HasMetadata` / `Resource` impls, `new`, `crd` and
//! `crd_yaml`, then the typed client, lister, informer and factory accessor from
//! kinform-codegen's resource emitters (through `resource_items`), the same tokens
//! `kinform-gen` writes into a resource module.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use kinform_codegen::derive::{
    CratePaths, DeriveResource, ResourceIdentity, Scope, resource_impls, resource_items,
};

use crate::attrs::{Attrs, SchemaMode};

fn opt_str(v: Option<&str>) -> TokenStream {
    match v {
        Some(s) => quote!(::core::option::Option::Some(#s)),
        None => quote!(::core::option::Option::None),
    }
}

/// Expands a validated derive.
pub fn expand(
    input: &syn::DeriveInput,
    attrs: &Attrs,
    res: &DeriveResource,
) -> syn::Result<TokenStream> {
    let rt: syn::Path = attrs
        .crates
        .kinform
        .clone()
        .unwrap_or_else(|| syn::parse_quote!(::kinform));
    let k8s: TokenStream = match &attrs.crates.k8s_openapi {
        Some(p) => quote!(#p),
        None => quote!(#rt::k8s_openapi),
    };
    let serde: TokenStream = match &attrs.crates.serde {
        Some(p) => quote!(#p),
        None => quote!(#k8s::serde),
    };
    let serde_crate = serde.to_string().replace(' ', "");
    let schemars: TokenStream = match &attrs.crates.schemars {
        Some(p) => quote!(#p),
        None => quote!(#rt::crd::schemars),
    };
    let schemars_crate = schemars.to_string().replace(' ', "");
    let mode = attrs.schema.map(|(m, _)| m).unwrap_or_default();
    let vis = &input.vis;
    let spec = &input.ident;
    let root = format_ident!("{}", res.root);
    let (group, version, kind) = (&res.group, &res.version, &res.kind);
    let plural = res.plural();
    let singular = res.singular();
    let api_version = format!("{group}/{version}");
    let meta = quote!(#k8s::apimachinery::pkg::apis::meta::v1::ObjectMeta);
    let crd_ty = quote!(#k8s::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition);
    let paths = CratePaths::new(&quote!(#rt).to_string(), Some(&k8s.to_string()))
        .map_err(|e| syn::Error::new(proc_macro2::Span::call_site(), e.to_string()))?;
    let resource_impls = resource_impls(
        &paths,
        &root,
        &format_ident!("metadata"),
        &ResourceIdentity {
            group,
            version,
            api_version: &api_version,
            kind,
            plural: &plural,
            scope: if res.namespaced {
                Scope::Namespaced
            } else {
                Scope::Cluster
            },
        },
    );
    let derives = &attrs.derives;
    let extra_attrs = &attrs.extra_attrs;
    let root_doc = attrs.doc.clone().unwrap_or_else(|| {
        format!("The `{kind}` custom resource of `{api_version}`: metadata, [`{spec}`] and status.")
    });

    let (status_field, status_init, status_ser, status_wire, status_move, status_schema) =
        match &attrs.status {
            Some(st) => (
                quote! {
                    /// The status, written by controllers through the status subresource.
                    pub status: ::core::option::Option<#st>,
                },
                quote!(status: ::core::option::Option::None,),
                quote! {
                    if let ::core::option::Option::Some(status) = &self.status {
                        map.serialize_entry("status", status)?;
                    }
                },
                quote! {
                    #[serde(default)]
                    status: ::core::option::Option<#st>,
                },
                quote!(status: wire.status,),
                if mode == SchemaMode::Disabled {
                    quote!(::core::option::Option::Some(#rt::crd::preserve_unknown_object()))
                } else {
                    quote!(::core::option::Option::Some(#rt::crd::schema_for::<#st>()))
                },
            ),
            None => (
                quote!(),
                quote!(),
                quote!(),
                quote!(),
                quote!(),
                quote!(::core::option::Option::None),
            ),
        };
    let spec_schema = if mode == SchemaMode::Disabled {
        quote!(::core::option::Option::None)
    } else {
        quote!(::core::option::Option::Some(#rt::crd::schema_for::<#spec>()))
    };
    // As kube-derive: in derived mode the root derives `JsonSchema` (metadata skipped: the
    // API server validates it itself); in manual mode the user implements it, and it is the
    // CRD's whole object schema.
    let (schema_derive, schema_attr, metadata_skip) = if mode == SchemaMode::Derived {
        (
            quote!(#schemars::JsonSchema,),
            quote!(#[schemars(crate = #schemars_crate)]),
            quote!(#[schemars(skip)]),
        )
    } else {
        (quote!(), quote!(), quote!())
    };

    let short_names = &res.short_names;
    let categories = &res.categories;
    let selectable = &attrs.selectable;
    let columns = res.printer_columns.iter().map(|c| {
        let (name, ty, path, prio) = (&c.name, &c.type_, &c.json_path, c.priority);
        let desc = opt_str(c.description.as_deref());
        let format = opt_str(c.format.as_deref());
        quote!(#rt::crd::PrinterColumnDef {
            name: #name, type_: #ty, json_path: #path, description: #desc, format: #format, priority: #prio,
        })
    });
    let rules = attrs.rules.iter().map(|r| {
        let rule = &r.rule;
        let message = opt_str(r.message.as_deref());
        let mexpr = opt_str(r.message_expression.as_deref());
        let reason = opt_str(r.reason.as_deref());
        let field_path = opt_str(r.field_path.as_deref());
        let old = match r.optional_old_self {
            Some(b) => quote!(::core::option::Option::Some(#b)),
            None => quote!(::core::option::Option::None),
        };
        quote!(#rt::crd::ValidationRuleDef {
            rule: #rule, message: #message, message_expression: #mexpr, reason: #reason,
            field_path: #field_path, optional_old_self: #old,
        })
    });
    let scale = match &res.scale {
        Some(s) => {
            let (a, b) = (&s.spec_replicas_path, &s.status_replicas_path);
            let c = opt_str(s.label_selector_path.as_deref());
            quote!(::core::option::Option::Some(#rt::crd::ScaleDef {
                spec_replicas_path: #a, status_replicas_path: #b, label_selector_path: #c,
            }))
        }
        None => quote!(::core::option::Option::None),
    };
    let labels = attrs.labels.iter().map(|(k, v)| quote!((#k, #v)));
    let annotations = attrs.annotations.iter().map(|(k, v)| quote!((#k, #v)));
    let (served, storage) = (res.served, res.storage);
    let deprecated = res.deprecated.is_some();
    let warning = opt_str(res.deprecated.as_ref().and_then(|w| w.as_deref()));
    let description = opt_str(attrs.doc.as_deref());
    let namespaced = res.namespaced;
    let has_status = res.has_status;

    let items = resource_items(res, quote!(#root), &paths);
    let rt_tokens = quote!(#rt);
    let root_in_place = crate::in_place::root_decl(&root, attrs.status.is_some(), &rt_tokens);
    let spec_in_place = crate::in_place::spec_decl(input, &rt_tokens);
    let crd_desc = quote! {
        #rt::crd::CrdDescription {
            group: #group,
            version: #version,
            kind: #kind,
            plural: #plural,
            singular: #singular,
            namespaced: #namespaced,
            short_names: &[#(#short_names),*],
            categories: &[#(#categories),*],
            served: #served,
            storage: #storage,
            deprecated: #deprecated,
            deprecation_warning: #warning,
            printer_columns: &[#(#columns),*],
            selectable_fields: &[#(#selectable),*],
            status_subresource: #has_status,
            scale: #scale,
            rules: &[#(#rules),*],
            labels: &[#(#labels),*],
            annotations: &[#(#annotations),*],
            description: #description,
        }
    };
    let crd_body = if mode == SchemaMode::Manual {
        quote! {
            #rt::crd::custom_resource_definition_with_root_schema(
                &#crd_desc,
                #rt::crd::schema_for::<Self>(),
            )
        }
    } else {
        quote! {
            #rt::crd::custom_resource_definition(&#crd_desc, #spec_schema, #status_schema)
        }
    };
    let crd_doc = match mode {
        SchemaMode::Derived => {
            "The CustomResourceDefinition of this version, with a structural schema generated from the spec and status types. Merge several versions with `crd::merge_crds`.\n\nFails only when a field type's hand-written `JsonSchema` impl writes a keyword a CRD schema cannot hold (the error names where)."
        }
        SchemaMode::Manual => {
            "The CustomResourceDefinition of this version, whose schema is this type's own `JsonSchema` implementation made structural. Merge several versions with `crd::merge_crds`.\n\nFails when that schema is not a CRD schema (`JSONSchemaProps`); the error names the kind, the version and where."
        }
        SchemaMode::Disabled => {
            "The CustomResourceDefinition of this version, without a schema: spec and status preserve unknown fields. Merge several versions with `crd::merge_crds`.\n\nNever fails: the schema is made of fixed keywords, the description and the CEL rules (see `crd::custom_resource_definition`)."
        }
    };
    let crd_panic_doc = match mode {
        SchemaMode::Disabled => {
            "The CustomResourceDefinition of this version (kube-derive's `crd()`): [`Self::try_crd`], which cannot fail for a type without a schema."
        }
        _ => {
            "The CustomResourceDefinition of this version (kube-derive's `crd()`): [`Self::try_crd`], unwrapped.\n\n# Panics\n\nWith the error's message when the schema is not a CRD schema (`JSONSchemaProps`): a `schema = \"manual\"` `JsonSchema` impl, or a field type's hand-written one, that writes a keyword a CRD schema cannot hold. Use [`Self::try_crd`] to handle it."
        }
    };

    let defaults_doc = "Fills in the schema's defaults as the API server does before it stores the object (apiextensions-apiserver's structural defaulting over the schema of [`Self::crd`], with `kinform::defaulting`, the rules the test server applies). Decoding never defaults; this gives the server's view offline. A type without a schema has no defaults.\n\n# Errors\n\nWhen the CRD cannot be built (see [`Self::try_crd`]) or a schema default does not fit its Rust type.";
    let out = quote! {
        #[doc = #root_doc]
        #[derive(Clone, Debug, #schema_derive #(#derives),*)]
        #schema_attr
        #(#[#extra_attrs])*
        #vis struct #root {
            /// Standard object metadata.
            #metadata_skip
            pub metadata: #meta,
            /// The desired state.
            pub spec: #spec,
            #status_field
        }

        impl #root {
            /// A new object named `name` (no namespace, no status).
            pub fn new(name: &str, spec: #spec) -> Self {
                Self {
                    metadata: #meta {
                        name: ::core::option::Option::Some(::std::string::String::from(name)),
                        ..::core::default::Default::default()
                    },
                    spec,
                    #status_init
                }
            }

            #[doc = #crd_doc]
            pub fn try_crd() -> ::core::result::Result<#crd_ty, #rt::crd::CrdError> {
                #crd_body
            }

            #[doc = #crd_panic_doc]
            pub fn crd() -> #crd_ty {
                match Self::try_crd() {
                    ::core::result::Result::Ok(crd) => crd,
                    ::core::result::Result::Err(e) => ::core::panic!("{}", e),
                }
            }

            /// [`Self::crd`] as a YAML document, for `kubectl apply -f -` (kube-rs users print
            /// it with `serde_yaml`; no YAML crate is needed here). Panics where [`Self::crd`]
            /// does; [`Self::try_crd`] with `crd::to_yaml` does not.
            pub fn crd_yaml() -> ::std::string::String {
                #rt::crd::to_yaml(&Self::crd())
            }

            #[doc = #defaults_doc]
            pub fn apply_schema_defaults(&mut self) -> ::core::result::Result<(), #k8s::serde_json::Error> {
                static SCHEMA: ::std::sync::OnceLock<
                    ::core::result::Result<#k8s::serde_json::Value, ::std::string::String>,
                > = ::std::sync::OnceLock::new();
                let schema = SCHEMA.get_or_init(|| {
                    let crd = #root::try_crd().map_err(|e| ::std::string::ToString::to_string(&e))?;
                    let crd = #k8s::serde_json::to_value(&crd).map_err(|e| ::std::string::ToString::to_string(&e))?;
                    ::core::result::Result::Ok(
                        crd.pointer("/spec/versions/0/schema/openAPIV3Schema")
                            .map(#rt::defaulting::defaulting_schema)
                            .unwrap_or_default(),
                    )
                });
                match schema {
                    ::core::result::Result::Ok(schema) => {
                        *self = #rt::defaulting::default_typed(self, schema)?;
                        ::core::result::Result::Ok(())
                    }
                    ::core::result::Result::Err(e) => ::core::result::Result::Err(
                        <#k8s::serde_json::Error as #serde::de::Error>::custom(e),
                    ),
                }
            }
        }

        impl #serde::Serialize for #root {
            fn serialize<S>(&self, serializer: S) -> ::core::result::Result<S::Ok, S::Error>
            where
                S: #serde::Serializer,
            {
                use #serde::ser::SerializeMap as _;
                let mut map = serializer.serialize_map(::core::option::Option::None)?;
                map.serialize_entry("apiVersion", #api_version)?;
                map.serialize_entry("kind", #kind)?;
                // No `metadata: {}` invented for an object read without metadata.
                if self.metadata != ::core::default::Default::default() {
                    map.serialize_entry("metadata", &self.metadata)?;
                }
                map.serialize_entry("spec", &self.spec)?;
                #status_ser
                map.end()
            }
        }

        const _: () = {
            #[derive(#serde::Deserialize)]
            #[serde(crate = #serde_crate)]
            struct Wire {
                #[serde(default)]
                metadata: #meta,
                spec: #spec,
                #status_wire
            }

            impl<'de> #serde::Deserialize<'de> for #root {
                fn deserialize<D>(deserializer: D) -> ::core::result::Result<Self, D::Error>
                where
                    D: #serde::Deserializer<'de>,
                {
                    let wire = <Wire as #serde::Deserialize<'de>>::deserialize(deserializer)?;
                    ::core::result::Result::Ok(#root {
                        metadata: wire.metadata,
                        spec: wire.spec,
                        #status_move
                    })
                }
            }
        };

        #resource_impls

        #root_in_place
        #spec_in_place

        #items
    };
    Ok(match &attrs.crates.std {
        Some(std) => rewrite_std(out, &quote!(#std)),
        None => out,
    })
}

/// Replaces every absolute `::std` path start in `tokens` by `std` (`crates(std = "...")`),
/// inside groups too. `a::std` (not at a path start) is left alone.
fn rewrite_std(tokens: TokenStream, std: &TokenStream) -> TokenStream {
    use proc_macro2::{Group, Spacing, TokenTree};
    let tts: Vec<TokenTree> = tokens.into_iter().collect();
    let mut out = Vec::with_capacity(tts.len());
    let mut i = 0;
    while i < tts.len() {
        if let (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b)), Some(TokenTree::Ident(id))) =
            (tts.get(i), tts.get(i + 1), tts.get(i + 2))
            && a.as_char() == ':'
            && a.spacing() == Spacing::Joint
            && b.as_char() == ':'
            && id == "std"
            && !(i > 0 && is_path_char(&tts[i - 1]))
        {
            out.extend(std.clone());
            i += 3;
            continue;
        }
        match &tts[i] {
            TokenTree::Group(g) => {
                let mut ng = Group::new(g.delimiter(), rewrite_std(g.stream(), std));
                ng.set_span(g.span());
                out.push(TokenTree::Group(ng));
            }
            tt => out.push(tt.clone()),
        }
        i += 1;
    }
    out.into_iter().collect()
}

/// Whether a token before `::` makes it a path continuation (`a::std`); after punctuation
/// (`-> ::std`, `<::std`, `(::std`) or a keyword that precedes a type (`dyn ::std`,
/// `impl ::std`, `as ::std`) `::std` starts a path.
fn is_path_char(tt: &proc_macro2::TokenTree) -> bool {
    matches!(tt, proc_macro2::TokenTree::Ident(id)
        if !["dyn", "impl", "as", "in", "for", "where", "mut"].iter().any(|k| id == k))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn std_paths_are_rewritten_at_path_starts_only() {
        let ts = quote!(::std::string::String::from(x); a::std::b; fn f() -> ::std::sync::Arc<u8> { ::std::sync::Arc::new(0) } &(dyn ::std::any::Any));
        let out = rewrite_std(ts, &quote!(my::std)).to_string();
        assert_eq!(
            out,
            quote!(my::std::string::String::from(x); a::std::b; fn f() -> my::std::sync::Arc<u8> { my::std::sync::Arc::new(0) } &(dyn my::std::any::Any))
                .to_string()
        );
    }

    #[test]
    fn expansion_with_std_override_names_no_std() {
        let input: syn::DeriveInput = syn::parse_quote! {
            #[kinform(group = "example.com", version = "v1", kind = "Foo", namespaced,
                      crates(std = "my_std"))]
            pub struct FooSpec { x: i32 }
        };
        let mut errors = crate::attrs::Errors::default();
        let attrs = Attrs::parse(&input.attrs, &mut errors);
        let res = crate::validate::validate(&input, &attrs, &mut errors).unwrap();
        assert!(errors.finish().is_ok());
        let before = expand(
            &input,
            &Attrs::parse(
                &[syn::parse_quote!(#[kinform(group = "example.com", version = "v1", kind = "Foo")])],
                &mut crate::attrs::Errors::default(),
            ),
            &res,
        )
        .unwrap()
        .to_string();
        assert!(before.contains(":: std ::"), "the emitters name ::std");
        let out = expand(&input, &attrs, &res).unwrap().to_string();
        assert!(!out.contains(":: std ::"), "{out}");
        assert!(out.contains("my_std :: sync :: Arc"));
    }
}
