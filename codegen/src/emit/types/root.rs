//! The root type of a resource: `metadata: ObjectMeta` plus the schema's top-level properties
//! (`spec`, `status`, ...), `apiVersion`/`kind` written on serialize (they are constants of the
//! type, as in k8s-openapi's types), and `impl HasMetadata` + `impl Resource`.

use std::collections::BTreeSet;

use proc_macro2::{Literal, TokenStream};
use quote::quote;

use crate::model::Scope;
use crate::model::types::{Field, StructType, TypeModule};
use crate::naming::ident;

use super::defaults::DefaultFns;
use super::fields::{FieldPlan, PlannedField, serialize_entries, struct_body};
use super::{Paths, ref_has_default, struct_decl, type_docs, type_tokens};

pub(crate) fn emit_root(
    s: &StructType,
    module: &TypeModule,
    p: &Paths,
    has_default: &BTreeSet<String>,
    decoded: &BTreeSet<String>,
    fns: &mut DefaultFns,
) -> TokenStream {
    let name = ident(&s.name);
    let serde = &p.serde;
    let rt = &p.rt;
    let k8s = &p.k8s;
    let docs = type_docs(
        s.docs.as_deref(),
        &format!(
            "`{}` of `{}/{}`.",
            module.kind, module.group, module.version
        ),
    );
    let body = struct_body(
        s,
        " Top-level properties the schema does not declare, kept as they were read.",
        p,
        has_default,
        fns,
    );
    let mut metadata_field = None;
    let mut ctor = Constructor::default();
    for PlannedField {
        field: f,
        ident: fname,
        plan,
    } in &body.fields
    {
        if f.json_name == "metadata" {
            metadata_field = Some(fname.clone());
        }
        ctor.field(f, plan, fname, p, has_default);
    }
    let ser = serialize_entries(s, &body.fields, &["apiVersion", "kind"]);
    let metadata = metadata_field.unwrap_or_else(|| ident("metadata"));
    let constructor = ctor.emit(s, &metadata, k8s);
    let defaulting = apply_schema_defaults(&name, module, p);
    let decl = struct_decl(s, docs, &body, p, false);
    let api_version = if module.group.is_empty() {
        module.version.clone()
    } else {
        format!("{}/{}", module.group, module.version)
    };
    let in_place = super::decoding::in_place_decl(s, &body.fields, has_default, decoded, p);
    // The informers find the decoders through `HasMetadata`.
    let hook = in_place.is_some().then(|| in_place_hook(&quote!(#rt)));
    let resource_impls = resource_impls_with(
        &quote!(#rt),
        &quote!(#k8s),
        &name,
        &metadata,
        &ResourceIdentity {
            group: &module.group,
            version: &module.version,
            api_version: &api_version,
            kind: &module.kind,
            plural: &module.plural,
            scope: module.scope,
        },
        hook,
    );
    quote! {
        #decl
        #in_place
        #constructor
        #defaulting

        impl #serde::Serialize for #name {
            fn serialize<S>(&self, serializer: S) -> Result<S::Ok, S::Error>
            where
                S: #serde::Serializer,
            {
                use #serde::ser::SerializeMap as _;
                let mut map = serializer.serialize_map(None)?;
                map.serialize_entry("apiVersion", <Self as #rt::Resource>::API_VERSION)?;
                map.serialize_entry("kind", <Self as #rt::Resource>::KIND)?;
                #ser
                map.end()
            }
        }

        #resource_impls
    }
}

/// `Foo::apply_schema_defaults`: the explicit defaulting of the API server, over the part of
/// the schema the module embeds (see `TypeModule::defaults`), with the rules of
/// `kinform_core::defaulting` that the test server applies too.
fn apply_schema_defaults(name: &proc_macro2::Ident, module: &TypeModule, p: &Paths) -> TokenStream {
    let (rt, json) = (&p.rt, &p.json);
    let doc = "Fills in the schema's defaults as the API server does before it stores the \
        object (apiextensions-apiserver's structural defaulting: `null`s the schema does not \
        allow are removed, then every missing property of a present object, and every `null` \
        list item or map value, takes its `default`, nested ones included). Decoding never \
        defaults; this gives the server's view offline.\n\n\
        # Errors\n\n\
        When a schema default does not fit its Rust type.";
    let body = if module.defaults.is_null() {
        quote!(Ok(()))
    } else {
        let text = Literal::string(&module.defaults.to_string());
        quote! {
            static SCHEMA: ::std::sync::OnceLock<#json::Value> = ::std::sync::OnceLock::new();
            let schema = SCHEMA.get_or_init(|| #json::from_str(#text).unwrap_or_default());
            *self = #rt::defaulting::default_typed(self, schema)?;
            Ok(())
        }
    };
    let doc = crate::emit::format::own_doc_attrs(doc);
    quote! {
        impl #name {
            #doc
            pub fn apply_schema_defaults(&mut self) -> Result<(), #json::Error> {
                #body
            }
        }
    }
}

/// The identity of a resource's type: what a root type of an API group version (generated
/// or derived) implements for the runtime.
#[derive(Clone, Copy, Debug)]
pub struct ResourceIdentity<'a> {
    /// API group (`""` for the core group).
    pub group: &'a str,
    /// Version.
    pub version: &'a str,
    /// `group/version`, or the version alone for the core group.
    pub api_version: &'a str,
    /// Kind.
    pub kind: &'a str,
    /// Plural resource name.
    pub plural: &'a str,
    /// Scope.
    pub scope: Scope,
}

/// `impl HasMetadata` and `impl Resource` for the root type `name` whose in-place decoders
/// a `custom_in_place!` invocation gives (the derive macro's root type): `__in_place`
/// returns their hook.
pub fn resource_impls_in_place(
    rt: &TokenStream,
    k8s: &TokenStream,
    name: &proc_macro2::Ident,
    metadata: &proc_macro2::Ident,
    id: &ResourceIdentity<'_>,
) -> TokenStream {
    resource_impls_with(rt, k8s, name, metadata, id, Some(in_place_hook(rt)))
}

/// `HasMetadata::__in_place` of a type with in-place decoders: the informers find them
/// through it.
fn in_place_hook(rt: &TokenStream) -> TokenStream {
    quote! {
        fn __in_place() -> Option<&'static (dyn ::std::any::Any + Send + Sync)> {
            #rt::client::decode::custom::hook::<Self>()
        }
    }
}

/// `impl HasMetadata` and `impl Resource` for the root type `name`, with `hook` added to `impl HasMetadata` (its `__in_place`, for a type
/// with in-place decoders).
fn resource_impls_with(
    rt: &TokenStream,
    k8s: &TokenStream,
    name: &proc_macro2::Ident,
    metadata: &proc_macro2::Ident,
    id: &ResourceIdentity<'_>,
    hook: Option<TokenStream>,
) -> TokenStream {
    let ResourceIdentity {
        group,
        version,
        api_version,
        kind,
        plural,
        scope,
    } = *id;
    let scope = match scope {
        Scope::Namespaced => quote!(#rt::Scope::Namespaced),
        Scope::Cluster => quote!(#rt::Scope::Cluster),
    };
    quote! {
        impl #rt::HasMetadata for #name {
            fn metadata(&self) -> &#k8s::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                &self.#metadata
            }
            fn metadata_mut(&mut self) -> &mut #k8s::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                &mut self.#metadata
            }
            #hook
        }

        impl #rt::Resource for #name {
            const GROUP: &'static str = #group;
            const VERSION: &'static str = #version;
            const API_VERSION: &'static str = #api_version;
            const KIND: &'static str = #kind;
            const PLURAL: &'static str = #plural;
            const SCOPE: #rt::Scope = #scope;
        }
    }
}

/// `Foo::new(name, spec, ..)`, as kube-rs' `CustomResource` derive gives: the name, the `spec`
/// (when the schema has one) and every required field without a default are parameters;
/// everything else starts empty (`apply_schema_defaults` fills in the schema defaults).
#[derive(Default)]
struct Constructor {
    params: Vec<TokenStream>,
    inits: TokenStream,
}

impl Constructor {
    fn field(
        &mut self,
        f: &Field,
        plan: &FieldPlan,
        fname: &proc_macro2::Ident,
        p: &Paths,
        has_default: &BTreeSet<String>,
    ) {
        if f.json_name == "metadata" {
            return;
        }
        let param = |this: &mut Self| {
            let ty = type_tokens(&f.ty, p);
            this.params.push(quote!(#fname: #ty));
        };
        if f.json_name == "spec" {
            param(self);
            self.inits.extend(if plan.optional {
                if plan.double_option {
                    quote!(#fname: Some(Some(#fname)),)
                } else {
                    quote!(#fname: Some(#fname),)
                }
            } else {
                quote!(#fname,)
            });
            return;
        }
        if plan.optional || f.nullable || ref_has_default(&f.ty, has_default) {
            self.inits.extend(quote!(#fname: Default::default(),));
        } else {
            param(self);
            self.inits.extend(quote!(#fname,));
        }
    }

    fn emit(self, s: &StructType, metadata: &proc_macro2::Ident, k8s: &TokenStream) -> TokenStream {
        let name = ident(&s.name);
        let Self { params, inits } = self;
        // A top-level property named `name` takes the plain name; the object's name moves.
        let name_param = if s.fields.iter().any(|f| f.rust_name == "name") {
            ident("object_name")
        } else {
            ident("name")
        };
        let remainder = s.remainder.as_ref().map(|r| {
            let f = ident(&r.rust_name);
            quote!(#f: Default::default(),)
        });
        let has_spec = s.fields.iter().any(|f| f.json_name == "spec");
        let doc = if has_spec {
            " An object with this name and `spec` (metadata otherwise empty)."
        } else {
            " An object with this name (metadata otherwise empty)."
        };
        quote! {
            impl #name {
                #[doc = #doc]
                pub fn new(#name_param: &str, #(#params),*) -> Self {
                    Self {
                        #metadata: #k8s::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                            name: Some(#name_param.to_owned()),
                            ..Default::default()
                        },
                        #inits
                        #remainder
                    }
                }
            }
        }
    }
}
