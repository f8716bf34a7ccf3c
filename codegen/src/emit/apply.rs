//! The apply configuration emitter: [`TypeModule`]s -> `FooApply` types for typed
//! server-side apply, client-go's `applyconfigurations` packages for generated types.
//!
//! Each struct `Foo` of a module gets `FooApply` in the kind's `apply` module:
//!
//! - every property is an `Option` skipped when `None`, including those `Foo` requires, and
//!   maps and lists are the apply configurations of their values and items, so serializing
//!   emits exactly what was set: a field manager claims nothing it did not set
//!   ([`super::types`]' full types write every required property, and would own it);
//! - a nested struct's property holds its `...Apply`, a condition (`metav1.Condition`'s
//!   schema) `kinform::value::ConditionApply`, `metadata` k8s-openapi's `ObjectMeta` (all of
//!   whose members are already optional); enums, unions and scalars are the full types' own;
//! - builders read like client-go's `With...` in a reconcile: `with_x(value)` sets `x`,
//!   a list's `with_x(items)` appends (as client-go's variadic `WithX`), a map's merges; the
//!   root has `new(name)` (`apiVersion`, `kind` and `metadata.name` set), the common
//!   metadata setters, and `extract`/`extract_status` (client-go's `ExtractFoo` and
//!   `ExtractFooStatus`, over `kinform::apply::extract_as`), reading back what one field
//!   manager applied;
//! - `From<&Foo>` sets every property `Foo` holds: the whole object as an intent.
//!
//! A `null` the full type keeps (a nullable property) is not an intent an apply
//! configuration expresses (client-go's cannot either): converting gives `None` there.
//! The item type of an associative list (`x-kubernetes-list-map-keys`) has `new(keys...)`,
//! so an item starts from the identity apply merges it by; extract keeps those keys
//! (`kinform_core::apply`).

use std::collections::BTreeMap;

use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};

use crate::model::types::{Field, StructType, TypeDef, TypeModule, TypeRef};
use crate::naming::ident;

use super::types::{Paths, TypesConfig, type_tokens};

/// The name of the module holding a kind's apply configurations, inside its types module.
pub const APPLY_MODULE: &str = "apply";

/// The Rust name of the apply configuration of the type named `name`.
pub fn apply_name(name: &str) -> String {
    format!("{name}Apply")
}

/// Emits the items of one CRD version's `apply` module (no `mod` wrapper): it sits inside the
/// module of the version's types and names them through `super::`.
pub fn emit_apply_module(module: &TypeModule, cfg: &TypesConfig) -> TokenStream {
    let p = Paths::new(cfg);
    let ctx = Ctx {
        module,
        p: &p,
        keyed: keyed_items(module),
    };
    let mut out = TokenStream::new();
    for ty in &module.types {
        if let TypeDef::Struct(s) = ty {
            out.extend(ctx.emit_struct(s));
        }
    }
    out
}

struct Ctx<'a> {
    module: &'a TypeModule,
    p: &'a Paths,
    /// The item types of associative lists, with their lists' keys.
    keyed: BTreeMap<String, Vec<String>>,
}

/// The struct types that are items of associative lists, with the list's
/// `x-kubernetes-list-map-keys` (a type two lists key differently has none).
fn keyed_items(module: &TypeModule) -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Option<Vec<String>>> = BTreeMap::new();
    for ty in &module.types {
        let TypeDef::Struct(s) = ty else { continue };
        for f in s.fields.iter().filter(|f| !f.list_map_keys.is_empty()) {
            if let TypeRef::List(item) = &f.ty
                && let TypeRef::Named(n) = item.as_ref()
            {
                out.entry(n.clone())
                    .and_modify(|keys| {
                        if keys.as_ref() != Some(&f.list_map_keys) {
                            *keys = None;
                        }
                    })
                    .or_insert_with(|| Some(f.list_map_keys.clone()));
            }
        }
    }
    out.into_iter()
        .filter_map(|(n, keys)| keys.map(|k| (n, k)))
        .collect()
}

/// How the full type holds a property.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Held {
    /// `T`.
    Plain,
    /// `Option<T>`.
    Option,
    /// `Option<Option<T>>` (nullable and may be missing).
    DoubleOption,
}

fn held(f: &Field) -> Held {
    if f.ty == TypeRef::ObjectMeta && f.required {
        Held::Plain
    } else if f.nullable && (!f.required || f.default.is_some()) {
        Held::DoubleOption
    } else if f.nullable || f.is_optional() {
        Held::Option
    } else {
        Held::Plain
    }
}

/// The bare name a field's builder is made of (`r#type` -> `type`).
fn bare(rust_name: &str) -> &str {
    rust_name.trim_start_matches("r#")
}

impl Ctx<'_> {
    fn is_struct(&self, name: &str) -> bool {
        matches!(self.module.get(name), Some(TypeDef::Struct(_)))
    }

    /// Whether a value of `ty` is the same Rust type in the full type and in the apply
    /// configuration (nothing in it has an apply configuration of its own).
    fn same(&self, ty: &TypeRef) -> bool {
        match ty {
            TypeRef::Condition => false,
            TypeRef::Named(n) => !self.is_struct(n),
            TypeRef::List(t)
            | TypeRef::Map(t)
            | TypeRef::Nullable(t)
            | TypeRef::Pruned(t)
            | TypeRef::Defaulted { ty: t, .. } => self.same(t),
            _ => true,
        }
    }

    /// The Rust type an apply configuration holds for a value of `ty`.
    fn apply_type(&self, ty: &TypeRef) -> TokenStream {
        match ty {
            TypeRef::Condition => {
                let rt = &self.p.rt;
                quote!(#rt::value::ConditionApply)
            }
            TypeRef::Named(n) if self.is_struct(n) => {
                let n = ident(&apply_name(n));
                quote!(#n)
            }
            TypeRef::Named(n) => {
                let n = ident(n);
                quote!(super::#n)
            }
            TypeRef::List(t) => {
                let t = self.apply_type(t);
                quote!(Vec<#t>)
            }
            TypeRef::Map(t) => {
                let t = self.apply_type(t);
                quote!(::std::collections::BTreeMap<String, #t>)
            }
            TypeRef::Nullable(t) | TypeRef::Defaulted { ty: t, .. } => {
                let t = self.apply_type(t);
                quote!(Option<#t>)
            }
            TypeRef::Pruned(t) => self.apply_type(t),
            _ => type_tokens(ty, self.p),
        }
    }

    /// A function (a path or a closure) from `&T` of the full type to the apply value, for
    /// a `ty` that is not [`Self::same`].
    fn convert_fn(&self, ty: &TypeRef, depth: usize) -> TokenStream {
        match ty {
            TypeRef::Named(_) | TypeRef::Condition => {
                let t = self.apply_type(ty);
                quote!(#t::from)
            }
            TypeRef::Pruned(t) => self.convert_fn(t, depth),
            _ => {
                let v = format_ident!("v{depth}");
                let body = self.convert(ty, &quote!(#v), false, depth + 1);
                quote!(|#v| #body)
            }
        }
    }

    /// The apply value of `expr`: a `&T` of the full type, or with `place` a `T` place
    /// (`value.spec`).
    fn convert(&self, ty: &TypeRef, expr: &TokenStream, place: bool, depth: usize) -> TokenStream {
        if self.same(ty) {
            return match (is_copy(ty), place) {
                (true, true) => expr.clone(),
                (true, false) => quote!(*#expr),
                (false, _) => quote!(#expr.clone()),
            };
        }
        match ty {
            TypeRef::List(t) => {
                let f = self.convert_fn(t, depth);
                quote!(#expr.iter().map(#f).collect())
            }
            TypeRef::Map(t) => {
                let (k, v) = (format_ident!("k{depth}"), format_ident!("v{depth}"));
                let value = self.convert(t, &quote!(#v), false, depth + 1);
                quote!(#expr.iter().map(|(#k, #v)| (#k.clone(), #value)).collect())
            }
            TypeRef::Nullable(t) | TypeRef::Defaulted { ty: t, .. } => {
                let f = self.convert_fn(t, depth);
                quote!(#expr.as_ref().map(#f))
            }
            TypeRef::Pruned(t) => self.convert(t, expr, place, depth),
            _ => {
                let f = self.convert_fn(ty, depth);
                if place {
                    quote!(#f(&#expr))
                } else {
                    quote!(#f(#expr))
                }
            }
        }
    }

    /// The apply value of property `f` of `value` (a `&Foo`), as the `Option` it is held in.
    fn convert_field(&self, f: &Field) -> TokenStream {
        let name = ident(&f.rust_name);
        let place = quote!(value.#name);
        let same = self.same(&f.ty);
        match (held(f), same) {
            // The root's metadata, empty when the object has none: none to apply then.
            (Held::Plain, _) if f.ty == TypeRef::ObjectMeta => {
                quote!(Some(#place.clone()).filter(|m| *m != Default::default()))
            }
            (Held::Plain, _) => {
                let v = self.convert(&f.ty, &place, true, 0);
                quote!(Some(#v))
            }
            (Held::Option, true) if is_copy(&f.ty) => place,
            (Held::Option, true) => quote!(#place.clone()),
            (Held::Option, false) => {
                let c = self.convert_fn(&f.ty, 0);
                quote!(#place.as_ref().map(#c))
            }
            (Held::DoubleOption, true) if is_copy(&f.ty) => quote!(#place.flatten()),
            (Held::DoubleOption, true) => quote!(#place.clone().flatten()),
            (Held::DoubleOption, false) => {
                let c = self.convert_fn(&f.ty, 0);
                quote!(#place.as_ref().and_then(Option::as_ref).map(#c))
            }
        }
    }

    /// Whether `f` is one the root's `apiVersion` and `kind` members stand for.
    fn is_type_meta(s: &StructType, f: &Field) -> bool {
        s.is_root && (f.json_name == "apiVersion" || f.json_name == "kind")
    }

    fn emit_struct(&self, s: &StructType) -> TokenStream {
        let full = ident(&s.name);
        let name = ident(&apply_name(&s.name));
        let serde = &self.p.serde;
        let serde_crate = &self.p.serde_crate;
        let fields: Vec<&Field> = s
            .fields
            .iter()
            .filter(|f| !Self::is_type_meta(s, f))
            .collect();
        let mut decls = TokenStream::new();
        let mut builders = TokenStream::new();
        let mut from = TokenStream::new();
        for f in &fields {
            let fname = ident(&f.rust_name);
            let ty = self.apply_type(&f.ty);
            let json = &f.json_name;
            let rename = (bare(&f.rust_name) != json).then(|| quote!(rename = #json,));
            let doc = format!(" `{json}` to apply: see [`{}`](super::{}).", s.name, s.name);
            decls.extend(quote! {
                #[doc = #doc]
                #[serde(#rename default, skip_serializing_if = "Option::is_none")]
                pub #fname: Option<#ty>,
            });
            builders.extend(self.builder(f, &fname, &ty));
            let v = self.convert_field(f);
            from.extend(quote!(#fname: #v,));
        }
        if let Some(rem) = &s.remainder {
            let fname = ident(&rem.rust_name);
            let vty = self.apply_type(&rem.value);
            decls.extend(quote! {
                /// Properties the schema does not declare, to apply as they are.
                #[serde(flatten)]
                pub #fname: ::std::collections::BTreeMap<String, #vty>,
            });
            let map = TypeRef::Map(Box::new(rem.value.clone()));
            let v = self.convert(&map, &quote!(value.#fname), true, 0);
            from.extend(quote!(#fname: #v,));
        }
        let docs = format!(
            " The apply configuration of [`{0}`](super::{0}): every property optional, only \
             what is set is applied.",
            s.name
        );
        let docs = quote!(#[doc = #docs]);
        let RootParts {
            type_meta,
            items: root_items,
            from_type_meta,
            default_impl,
        } = if s.is_root {
            self.root_parts(s, &name, &fields)
        } else {
            RootParts::default()
        };
        let default = (!s.is_root).then(|| quote!(Default,));
        let keyed = self.keyed_constructor(s, &fields);
        quote! {
            #docs
            #[derive(Clone, Debug, #default PartialEq, #serde::Serialize, #serde::Deserialize)]
            #[serde(crate = #serde_crate)]
            pub struct #name {
                #type_meta
                #decls
            }

            impl #name {
                #root_items
                #keyed
                #builders
            }

            #default_impl

            impl From<&super::#full> for #name {
                /// Every property `value` holds, set.
                fn from(value: &super::#full) -> Self {
                    Self {
                        #from_type_meta
                        #from
                    }
                }
            }
        }
    }

    /// `new(keys...)` of an associative list's item: the item with its key fields set, the
    /// identity server-side apply merges it by. `None` when `s` is no such item or a key is
    /// not one of its properties.
    fn keyed_constructor(&self, s: &StructType, fields: &[&Field]) -> Option<TokenStream> {
        let keys = self.keyed.get(&s.name)?;
        let mut params = Vec::new();
        let mut inits = Vec::new();
        for key in keys {
            let f = fields.iter().find(|f| &f.json_name == key)?;
            let (fname, ty) = (ident(&f.rust_name), self.apply_type(&f.ty));
            params.push(quote!(#fname: impl Into<#ty>));
            inits.push(quote!(#fname: Some(#fname.into()),));
        }
        let doc = format!(
            " The item with key{} {} set: the item of its associative list that server-side \
             apply merges this configuration into.",
            if keys.len() == 1 { "" } else { "s" },
            keys.iter()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        let rest =
            (keys.len() < fields.len() || s.remainder.is_some()).then(|| quote!(..Self::default()));
        Some(quote! {
            #[doc = #doc]
            pub fn new(#(#params),*) -> Self {
                Self {
                    #(#inits)*
                    #rest
                }
            }
        })
    }

    /// The setter of `f`: sets a value, appends to a list, merges into a map.
    fn builder(&self, f: &Field, fname: &Ident, ty: &TokenStream) -> TokenStream {
        let json = &f.json_name;
        let setter = format_ident!("with_{}", bare(&f.rust_name));
        match &f.ty {
            TypeRef::List(item) => {
                let item = self.apply_type(item);
                let doc = format!(" Appends `items` to `{json}`.");
                quote! {
                    #[doc = #doc]
                    #[must_use]
                    pub fn #setter(mut self, items: impl IntoIterator<Item = #item>) -> Self {
                        self.#fname.get_or_insert_with(Vec::new).extend(items);
                        self
                    }
                }
            }
            TypeRef::Map(value) => {
                let value = self.apply_type(value);
                let doc =
                    format!(" Adds `entries` to `{json}` (an entry replaces one of its key).");
                quote! {
                    #[doc = #doc]
                    #[must_use]
                    pub fn #setter<K: Into<String>>(
                        mut self,
                        entries: impl IntoIterator<Item = (K, #value)>,
                    ) -> Self {
                        self.#fname
                            .get_or_insert_with(::std::collections::BTreeMap::new)
                            .extend(entries.into_iter().map(|(k, v)| (k.into(), v)));
                        self
                    }
                }
            }
            _ => {
                let doc = format!(" Sets `{json}`.");
                quote! {
                    #[doc = #doc]
                    #[must_use]
                    pub fn #setter(mut self, value: impl Into<#ty>) -> Self {
                        self.#fname = Some(value.into());
                        self
                    }
                }
            }
        }
    }

    /// The root's `apiVersion`/`kind` members, its `Default`, `new`, metadata setters and
    /// extracts, and the `From` members of its type meta.
    fn root_parts(&self, s: &StructType, name: &Ident, fields: &[&Field]) -> RootParts {
        let (rt, k8s) = (&self.p.rt, &self.p.k8s);
        let full = ident(&s.name);
        let meta = quote!(#k8s::apimachinery::pkg::apis::meta::v1::ObjectMeta);
        let type_meta = quote! {
            /// `apiVersion`: the full type's, set by `new` and `Default`.
            #[serde(rename = "apiVersion")]
            pub api_version: String,
            /// `kind`: the full type's, set by `new` and `Default`.
            pub kind: String,
        };
        let from_type_meta = quote! {
            api_version: <super::#full as #rt::Resource>::API_VERSION.to_owned(),
            kind: <super::#full as #rt::Resource>::KIND.to_owned(),
        };
        let metadata = fields
            .iter()
            .find(|f| f.json_name == "metadata")
            .map(|f| ident(&f.rust_name));
        let taken = |setter: &str| {
            fields
                .iter()
                .any(|f| format!("with_{}", bare(&f.rust_name)) == setter)
        };
        let mut items = TokenStream::new();
        let mut init_meta = TokenStream::new();
        if let Some(m) = &metadata {
            init_meta = quote!(#m: None,);
            let name_param = if fields.iter().any(|f| f.rust_name == "name") {
                ident("object_name")
            } else {
                ident("name")
            };
            items.extend(quote! {
                /// The configuration of the object `name`: `apiVersion`, `kind` and
                /// `metadata.name` set, nothing else.
                pub fn new(#name_param: impl Into<String>) -> Self {
                    Self {
                        #m: Some(#meta {
                            name: Some(#name_param.into()),
                            ..Default::default()
                        }),
                        ..Self::default()
                    }
                }
            });
            let meta_setters: [(&str, TokenStream); 4] = [
                (
                    "with_namespace",
                    quote! {
                        /// Sets `metadata.namespace`.
                        #[must_use]
                        pub fn with_namespace(mut self, namespace: impl Into<String>) -> Self {
                            self.metadata_mut().namespace = Some(namespace.into());
                            self
                        }
                    },
                ),
                (
                    "with_label",
                    quote! {
                        /// Adds the label `key` with `value` to `metadata.labels`.
                        #[must_use]
                        pub fn with_label(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
                            self.metadata_mut()
                                .labels
                                .get_or_insert_with(Default::default)
                                .insert(key.into(), value.into());
                            self
                        }
                    },
                ),
                (
                    "with_annotation",
                    quote! {
                        /// Adds the annotation `key` with `value` to `metadata.annotations`.
                        #[must_use]
                        pub fn with_annotation(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
                            self.metadata_mut()
                                .annotations
                                .get_or_insert_with(Default::default)
                                .insert(key.into(), value.into());
                            self
                        }
                    },
                ),
                (
                    "with_owner_reference",
                    quote! {
                        /// Appends `owner` to `metadata.ownerReferences` (a list map keyed by
                        /// `uid`).
                        #[must_use]
                        pub fn with_owner_reference(
                            mut self,
                            owner: #k8s::apimachinery::pkg::apis::meta::v1::OwnerReference,
                        ) -> Self {
                            self.metadata_mut()
                                .owner_references
                                .get_or_insert_with(Vec::new)
                                .push(owner);
                            self
                        }
                    },
                ),
            ];
            let mut setters = TokenStream::new();
            for (setter, tokens) in meta_setters {
                if !taken(setter) {
                    setters.extend(tokens);
                }
            }
            if !setters.is_empty() {
                items.extend(quote! {
                    fn metadata_mut(&mut self) -> &mut #meta {
                        self.#m.get_or_insert_with(Default::default)
                    }
                    #setters
                });
            }
        }
        let extract_doc = format!(
            " What `field_manager` applied to `object`, read from its `managedFields` (client-go's \
             `Extract{0}`): change it and apply it again to keep owning exactly those fields. \
             Fields other managers own are left out; `apiVersion`, `kind`, `metadata.name` and \
             `metadata.namespace` are always there.",
            s.name
        );
        let status_doc = format!(
            " What `field_manager` applied to the `status` subresource of `object` (client-go's \
             `Extract{}Status`), for `apply_status`.",
            s.name
        );
        let fields_init = fields.iter().map(|f| {
            let n = ident(&f.rust_name);
            if Some(&n) == metadata.as_ref() {
                quote!()
            } else {
                quote!(#n: None,)
            }
        });
        let remainder = s.remainder.as_ref().map(|r| {
            let n = ident(&r.rust_name);
            quote!(#n: Default::default(),)
        });
        items.extend(quote! {
            #[doc = #extract_doc]
            ///
            /// # Errors
            ///
            /// The object's `managedFields` do not parse, or the extract does not decode as
            /// this type.
            pub fn extract(
                object: &super::#full,
                field_manager: &str,
            ) -> Result<Self, #rt::apply::ApplyError> {
                #rt::apply::extract_as(object, field_manager, "")
            }

            #[doc = #status_doc]
            ///
            /// # Errors
            ///
            /// As [`Self::extract`].
            pub fn extract_status(
                object: &super::#full,
                field_manager: &str,
            ) -> Result<Self, #rt::apply::ApplyError> {
                #rt::apply::extract_as(object, field_manager, "status")
            }
        });
        let default_impl = quote! {
            impl Default for #name {
                /// `apiVersion` and `kind` of the full type, nothing else set.
                fn default() -> Self {
                    Self {
                        api_version: <super::#full as #rt::Resource>::API_VERSION.to_owned(),
                        kind: <super::#full as #rt::Resource>::KIND.to_owned(),
                        #init_meta
                        #(#fields_init)*
                        #remainder
                    }
                }
            }
        };
        RootParts {
            type_meta,
            items,
            from_type_meta,
            default_impl,
        }
    }
}

/// What a root's apply configuration has beyond a plain struct's.
#[derive(Default)]
struct RootParts {
    /// The `apiVersion` and `kind` members.
    type_meta: TokenStream,
    /// `new`, the metadata setters, the extracts.
    items: TokenStream,
    /// The `From` initializers of `apiVersion` and `kind`.
    from_type_meta: TokenStream,
    /// `impl Default` (a plain struct derives it).
    default_impl: TokenStream,
}

fn is_copy(ty: &TypeRef) -> bool {
    matches!(ty, TypeRef::Bool | TypeRef::I32 | TypeRef::I64)
}
