//! How each property of a struct is declared and (de)serialized, and the parts plain and root
//! structs share: field declarations, the flattened remainder, `Default` (derived, or written
//! out when a field has a schema default).
//!
//! A property is an `Option` skipped when `None` unless it is required or has a default the
//! Rust type can hold; a nullable property is an `Option<Option<T>>` (see [`plan_nullable`]);
//! a property holding list items or map values with schema defaults reads through a generated
//! deserializer (see [`super::elements`]).

use std::collections::BTreeSet;

use proc_macro2::{Ident, Literal, TokenStream};
use quote::quote;

use crate::emit::format::doc_attrs;
use crate::model::types::{Field, Remainder, StructType, TypeRef};
use crate::naming::ident;

use super::defaults::Shared;
use super::{Paths, defaults, elements, rust_type, type_tokens};

/// How a field is declared and (de)serialized.
pub(crate) struct FieldPlan {
    /// The field's Rust type.
    pub ty: TokenStream,
    /// `#[serde(...)]` arguments.
    pub serde: Vec<TokenStream>,
    /// Whether the Rust type is an `Option` skipped when `None`.
    pub optional: bool,
    /// Whether it is an `Option<Option<_>>`: a nullable property that may be missing
    /// (`None`), `null` (`Some(None)`) or set, each written back as read.
    pub double_option: bool,
    /// The expression of the field in a hand-written `Default` impl, when not
    /// `Default::default()`.
    pub default_expr: Option<TokenStream>,
    /// The schema default's function (`default_expr` calls it), if any.
    pub default_fn: Option<String>,
}

impl FieldPlan {
    fn new(ty: TokenStream, serde: Vec<TokenStream>, optional: bool) -> Self {
        Self {
            ty,
            serde,
            optional,
            double_option: false,
            default_expr: None,
            default_fn: None,
        }
    }
}

pub(crate) fn plan_field(
    owner: &str,
    f: &Field,
    p: &Paths,
    has_default: &BTreeSet<String>,
    fns: &mut defaults::DefaultFns,
) -> FieldPlan {
    let inner = type_tokens(&f.ty, p);
    let mut serde = Vec::new();
    let json_name = &f.json_name;
    if f.rust_name.trim_start_matches("r#") != json_name.as_str() {
        serde.push(quote!(rename = #json_name));
    }
    if f.nullable && !f.required {
        return plan_nullable(owner, f, inner, serde, p, fns);
    }
    let kind = defaults::classify(f, has_default, p);
    let mut plan = match &kind {
        defaults::DefaultKind::None if f.is_optional() => {
            serde.push(quote!(default, skip_serializing_if = "Option::is_none"));
            FieldPlan::new(quote!(Option<#inner>), serde, true)
        }
        defaults::DefaultKind::None => FieldPlan::new(inner, serde, false),
        defaults::DefaultKind::TypeDefault => {
            serde.push(quote!(default));
            FieldPlan::new(inner, serde, false)
        }
        defaults::DefaultKind::Literal(expr) => {
            let name = fns.add(owner, f, inner.clone(), expr.clone());
            let call = ident(&name);
            serde.push(quote!(default = #name));
            let mut plan = FieldPlan::new(inner, serde, false);
            plan.default_expr = Some(quote!(#call()));
            plan.default_fn = Some(name);
            plan
        }
        defaults::DefaultKind::Parsed(json) => {
            let json_path = &p.json;
            let lit = Literal::string(json);
            let name = fns.add(
                owner,
                f,
                quote!(Option<#inner>),
                quote!(#json_path::from_str(#lit).ok()),
            );
            let call = ident(&name);
            serde.push(quote!(default = #name, skip_serializing_if = "Option::is_none"));
            let mut plan = FieldPlan::new(quote!(Option<#inner>), serde, true);
            plan.default_expr = Some(quote!(#call()));
            plan.default_fn = Some(name);
            plan
        }
    };
    let reader = match &kind {
        defaults::DefaultKind::None => {
            // `null` is `None` (an optional property: pruned, as the server does) or an error
            // (a required one: the server prunes it, then rejects the missing property).
            let read = if plan.optional {
                TypeRef::Nullable(Box::new(f.ty.clone()))
            } else {
                f.ty.clone()
            };
            let place = place(owner, f);
            elements::reader(owner, &f.json_name, &read, false, &plan.ty, &place, p, fns)
        }
        defaults::DefaultKind::TypeDefault if !elements::needs_reader(&f.ty) => {
            Some(fns.shared(Shared::OrDefault).to_owned())
        }
        _ => Some(null_default_reader(owner, f, &plan, p, fns)),
    };
    if let Some(name) = reader {
        plan.serde.push(quote!(deserialize_with = #name));
    }
    plan
}

/// The reader of a (non-nullable) property with a schema default: `null` takes the default,
/// as the API server's structural defaulting does (`isNonNullableNull`); a value is read as
/// usual (with the defaults and pruning of its items).
fn null_default_reader(
    owner: &str,
    f: &Field,
    plan: &FieldPlan,
    p: &Paths,
    fns: &mut defaults::DefaultFns,
) -> String {
    let serde = &p.serde;
    let shadow = rust_type(&f.ty, p, true);
    // The default function (`Some` for an `Option` field: a default parsed at run time).
    let (default, some) = match &plan.default_fn {
        Some(name) => {
            let name = ident(name);
            (quote!(#name), plan.optional)
        }
        None => (quote!(Default::default), false),
    };
    let read = quote!(<Option<#shadow> as #serde::Deserialize<'de>>::deserialize(deserializer)?);
    let body = if !elements::needs_reader(&f.ty) {
        if some {
            quote!(Ok(#read.or_else(#default)))
        } else {
            quote!(Ok(#read.unwrap_or_else(#default)))
        }
    } else {
        let item = elements::convert(&f.ty, quote!(item), &place(owner, f), p);
        let item = if some { quote!(#item.map(Some)) } else { item };
        quote! {
            match #read {
                Some(item) => #item,
                None => Ok(#default()),
            }
        }
    };
    let doc = format!(
        " Reads `{owner}.{}`: `null` takes the schema default.",
        f.json_name
    );
    fns.add_deserializer(owner, &f.json_name, &plan.ty, &doc, body)
}

/// The schema place of a field in messages: `Owner.field`.
fn place(owner: &str, f: &Field) -> String {
    format!("{owner}.{}", f.json_name)
}

/// A nullable, non-required property: `Option<Option<T>>`, so an explicit `null` survives a
/// round trip (`Some(None)` serializes as `null`; a missing property stays missing). serde's
/// `Option` deserializer maps `null` to `None` before the outer `Option` sees it, so the field
/// deserializes through [`super::NULLABLE_FN`] (or, when it holds defaulted items, its own
/// deserializer), which wraps whatever was there in `Some`.
fn plan_nullable(
    owner: &str,
    f: &Field,
    inner: TokenStream,
    mut serde: Vec<TokenStream>,
    p: &Paths,
    fns: &mut defaults::DefaultFns,
) -> FieldPlan {
    let ty = quote!(Option<Option<#inner>>);
    let default_expr = f.default.as_ref().map(|default| {
        // `null` or a value of the type; a default that does not fit leaves the field missing.
        let json_path = &p.json;
        let lit = Literal::string(&default.to_string());
        let name = fns.add(
            owner,
            f,
            ty.clone(),
            quote!(#json_path::from_str::<Option<#inner>>(#lit).ok()),
        );
        let call = ident(&name);
        serde.push(quote!(default = #name));
        quote!(#call())
    });
    if default_expr.is_none() {
        serde.push(quote!(default));
    }
    let read = TypeRef::Nullable(Box::new(f.ty.clone()));
    let place = place(owner, f);
    let deserializer = elements::reader(owner, &f.json_name, &read, true, &ty, &place, p, fns)
        .unwrap_or_else(|| fns.shared(Shared::Nullable).to_owned());
    serde.push(quote!(
        deserialize_with = #deserializer,
        skip_serializing_if = "Option::is_none"
    ));
    FieldPlan {
        ty,
        serde,
        optional: true,
        double_option: true,
        default_expr,
        default_fn: None,
    }
}

/// Whether a field gets no doc line: the schema neither describes it nor gives a default.
pub(crate) fn is_undocumented(f: &Field) -> bool {
    f.docs.as_deref().is_none_or(|d| d.trim().is_empty()) && f.default.is_none()
}

fn field_docs(f: &Field) -> TokenStream {
    let mut docs = f.docs.clone().unwrap_or_default();
    if let Some(default) = &f.default {
        if !docs.is_empty() {
            docs.push_str("\n\n");
        }
        docs.push_str(&format!("Default: `{default}`."));
    }
    // Without a description or default the field has no doc line (one would only repeat the
    // JSON name); its struct allows that (see `super::struct_decl`).
    doc_attrs(&docs)
}

/// One declared field of a struct with its plan.
pub(crate) struct PlannedField<'a> {
    /// The model's field.
    pub field: &'a Field,
    /// Its Rust name.
    pub ident: Ident,
    /// How it is declared and (de)serialized.
    pub plan: FieldPlan,
}

/// The body of a struct: what plain and root structs share.
pub(crate) struct StructBody<'a> {
    /// The declared fields, in order.
    pub fields: Vec<PlannedField<'a>>,
    /// Every field declaration (the remainder last).
    pub decls: TokenStream,
    /// `Default,` when `Default` is derived.
    pub derive_default: TokenStream,
    /// The hand-written `impl Default` (fields with schema defaults), if any.
    pub default_impl: TokenStream,
}

/// Plans and declares the fields of `s`; `remainder_doc` documents its flattened remainder.
pub(crate) fn struct_body<'a>(
    s: &'a StructType,
    remainder_doc: &str,
    p: &Paths,
    has_default: &BTreeSet<String>,
    fns: &mut defaults::DefaultFns,
) -> StructBody<'a> {
    let mut decls = TokenStream::new();
    let mut default_fields = TokenStream::new();
    let mut manual_default = false;
    let mut fields = Vec::with_capacity(s.fields.len());
    for f in &s.fields {
        let plan = plan_field(&s.name, f, p, has_default, fns);
        let fname = ident(&f.rust_name);
        let fdocs = field_docs(f);
        let ty = &plan.ty;
        let attrs = &plan.serde;
        let serde_attr = if attrs.is_empty() {
            quote!()
        } else {
            quote!(#[serde(#(#attrs),*)])
        };
        decls.extend(quote! {
            #fdocs
            #serde_attr
            pub #fname: #ty,
        });
        match &plan.default_expr {
            Some(expr) => {
                manual_default = true;
                default_fields.extend(quote!(#fname: #expr,));
            }
            None => default_fields.extend(quote!(#fname: Default::default(),)),
        }
        fields.push(PlannedField {
            field: f,
            ident: fname,
            plan,
        });
    }
    if let Some(rem) = &s.remainder {
        let fname = ident(&rem.rust_name);
        decls.extend(remainder_decl(&s.name, rem, remainder_doc, p, fns));
        default_fields.extend(quote!(#fname: Default::default(),));
    }
    let name = ident(&s.name);
    let can_default = has_default.contains(&s.name);
    let derive_default = if can_default && !manual_default {
        quote!(Default,)
    } else {
        quote!()
    };
    let default_impl = if can_default && manual_default {
        quote! {
            impl Default for #name {
                fn default() -> Self {
                    Self { #default_fields }
                }
            }
        }
    } else {
        quote!()
    };
    StructBody {
        fields,
        decls,
        derive_default,
        default_impl,
    }
}

/// The flattened map of undeclared properties (values with a schema default take it when
/// `null`, as declared maps' values do).
fn remainder_decl(
    owner: &str,
    rem: &Remainder,
    doc: &str,
    p: &Paths,
    fns: &mut defaults::DefaultFns,
) -> TokenStream {
    let fname = ident(&rem.rust_name);
    let vty = type_tokens(&rem.value, p);
    let ty = quote!(::std::collections::BTreeMap<String, #vty>);
    let map = TypeRef::Map(Box::new(rem.value.clone()));
    let serde = match elements::reader(owner, &rem.rust_name, &map, false, &ty, owner, p, fns) {
        Some(name) => quote!(#[serde(flatten, deserialize_with = #name)]),
        None => quote!(#[serde(flatten)]),
    };
    quote! {
        #[doc = #doc]
        #serde
        pub #fname: #ty,
    }
}
