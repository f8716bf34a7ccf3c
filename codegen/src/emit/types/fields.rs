//! How each property of a struct is declared and (de)serialized, and the parts plain and root
//! structs share: field declarations, the flattened remainder, `Default` (derived when every
//! field's type has one).
//!
//! A property is an `Option` skipped when `None` unless it is required without a default (a
//! schema default is documented, never filled in on decode); a nullable property that may be
//! missing is an `Option<Option<T>>` (see [`plan_nullable`]); a property holding map values
//! whose `null` the schema does not allow reads through a generated deserializer (see
//! [`super::elements`]).

use std::collections::{BTreeMap, BTreeSet};

use proc_macro2::{Ident, TokenStream};
use quote::quote;

use crate::emit::format::doc_attrs;
use crate::model::types::{Field, Remainder, StructType, TypeRef};
use crate::naming::{field_name, ident, snake_name};

use super::defaults::{DefaultFns, Shared};
use super::{Paths, elements, type_tokens};

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
    /// The `deserialize_with` function it is read through, if any.
    pub read_with: Option<String>,
    /// Whether it has `#[serde(default)]` (absent is its type's default).
    pub serde_default: bool,
    /// Whether the Rust type is an `Option` (of the property's type).
    pub is_option: bool,
}

impl FieldPlan {
    fn new(ty: TokenStream, serde: Vec<TokenStream>, optional: bool) -> Self {
        Self {
            ty,
            serde,
            optional,
            double_option: false,
            read_with: None,
            serde_default: false,
            is_option: false,
        }
    }
}

/// Whether `f` is the root's `metadata` (always there in Rust, for `HasMetadata`).
pub(crate) fn is_root_metadata(f: &Field) -> bool {
    f.ty == TypeRef::ObjectMeta && f.required
}

/// How `f` is declared: a schema default changes nothing but the docs and makes the field an
/// `Option` (a document may leave it out; decoding never fills it in).
pub(crate) fn plan_field(owner: &str, f: &Field, p: &Paths, fns: &mut DefaultFns) -> FieldPlan {
    let inner = type_tokens(&f.ty, p);
    let mut serde = Vec::new();
    let json_name = &f.json_name;
    if f.rust_name.trim_start_matches("r#") != json_name.as_str() {
        serde.push(quote!(rename = #json_name));
    }
    if is_root_metadata(f) {
        // Empty when missing or `null`; the root's `Serialize` leaves empty metadata out.
        let read = fns.shared(Shared::OrDefault);
        serde.push(quote!(default, deserialize_with = #read));
        let mut plan = FieldPlan::new(inner, serde, false);
        plan.read_with = Some(read.to_owned());
        plan.serde_default = true;
        return plan;
    }
    if f.nullable && (!f.required || f.default.is_some()) {
        return plan_nullable(owner, f, inner, serde, p, fns);
    }
    let (mut plan, read) = if f.nullable {
        // Required and nullable: `null` or a value, always written.
        serde.push(quote!(default));
        let read = TypeRef::Nullable(Box::new(f.ty.clone()));
        (FieldPlan::new(quote!(Option<#inner>), serde, false), read)
    } else if f.is_optional() {
        // `null` is `None` (the server prunes a `null` the schema does not allow).
        serde.push(quote!(default, skip_serializing_if = "Option::is_none"));
        let read = TypeRef::Nullable(Box::new(f.ty.clone()));
        (FieldPlan::new(quote!(Option<#inner>), serde, true), read)
    } else {
        (FieldPlan::new(inner, serde, false), f.ty.clone())
    };
    plan.is_option = f.nullable || f.is_optional();
    plan.serde_default = plan.is_option;
    if let Some(name) = elements::reader(owner, &f.json_name, &read, false, &plan.ty, p, fns) {
        plan.serde.push(quote!(deserialize_with = #name));
        plan.read_with = Some(name.to_string());
    }
    plan
}

/// A nullable property that may be missing: `Option<Option<T>>`, so an explicit `null`
/// survives a round trip (`Some(None)` serializes as `null`; a missing property stays
/// missing). serde's `Option` deserializer maps `null` to `None` before the outer `Option`
/// sees it, so the field deserializes through [`super::NULLABLE_FN`] (or, when it holds pruned
/// map values, its own deserializer), which wraps whatever was there in `Some`.
fn plan_nullable(
    owner: &str,
    f: &Field,
    inner: TokenStream,
    mut serde: Vec<TokenStream>,
    p: &Paths,
    fns: &mut DefaultFns,
) -> FieldPlan {
    let ty = quote!(Option<Option<#inner>>);
    serde.push(quote!(default));
    let read = TypeRef::Nullable(Box::new(f.ty.clone()));
    let deserializer = elements::reader(owner, &f.json_name, &read, true, &ty, p, fns)
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
        read_with: Some(deserializer.to_string()),
        serde_default: true,
        is_option: true,
    }
}

/// For each field of `s`, whether its docs name its JSON key: a field whose Rust name is not
/// the one its key alone gives (another property took that: `jwks_uri_2` for `jwksUri`
/// beside `jwks_uri`), and every field whose key gives the same name as such a field's, so
/// that each of them says which key it holds.
pub(crate) fn keyed_fields(s: &StructType) -> Vec<bool> {
    let bases: Vec<String> = s
        .fields
        .iter()
        .map(|f| field_name(&snake_name(&f.json_name)))
        .collect();
    let mut count: BTreeMap<&str, usize> = BTreeMap::new();
    for b in &bases {
        *count.entry(b).or_default() += 1;
    }
    s.fields
        .iter()
        .zip(&bases)
        .map(|(f, b)| count[b.as_str()] > 1 || f.rust_name != *b)
        .collect()
}

/// Whether a field gets no doc line: the schema neither describes it nor gives a default,
/// and its name says which JSON key it holds (`keyed`: see [`keyed_fields`]).
pub(crate) fn is_undocumented(f: &Field, keyed: bool) -> bool {
    f.docs.as_deref().is_none_or(|d| d.trim().is_empty()) && f.default.is_none() && !keyed
}

fn field_docs(f: &Field, keyed: bool) -> TokenStream {
    let mut docs = f.docs.clone().unwrap_or_default();
    let paragraph = |docs: &mut String, text: String| {
        if !docs.trim().is_empty() {
            docs.push_str("\n\n");
        }
        docs.push_str(&text);
    };
    if let Some(default) = &f.default {
        paragraph(&mut docs, format!("Default: `{default}`."));
    }
    if keyed {
        paragraph(&mut docs, format!("JSON key: `{}`.", f.json_name));
    }
    // Without a description, default or renamed key the field has no doc line (one would
    // only repeat the JSON name); its struct allows that (see `super::struct_decl`).
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
    /// `Default,` when `Default` is derived (every field's type has one; schema defaults play
    /// no part: `Default` is the empty value, `apply_schema_defaults` the server's).
    pub derive_default: TokenStream,
    /// When the struct keeps the `null`s of its declared non-nullable properties in its JSON
    /// remainder (see [`keeps_nulls`]): its `Deserialize` impl, which replaces the derive.
    pub deserialize: Option<TokenStream>,
}

/// Whether a struct keeps a `null` read on a declared, non-nullable optional property in its
/// remainder: when the remainder holds JSON (`x-kubernetes-preserve-unknown-fields`, or
/// `additionalProperties: true`) and such a property exists. Its `Option<T>` field reads
/// `null` as `None`; the `null` goes to the remainder under the property's key, so the
/// document writes back as it was read (the object keeps what it does not type), and it is
/// written only while the field is `None`. (apiextensions-apiserver's
/// `PruneNonNullableNullsWithoutDefaults` drops such a `null` when it stores an object;
/// `apply_schema_defaults` does too.)
pub(crate) fn keeps_nulls(s: &StructType, fields: &[PlannedField<'_>]) -> bool {
    s.remainder
        .as_ref()
        .is_some_and(|r| r.value == TypeRef::Json)
        && fields.iter().any(is_null_keeping)
}

/// A declared non-nullable optional property (not the root's `metadata`).
fn is_null_keeping(f: &PlannedField<'_>) -> bool {
    f.plan.optional && !f.plan.double_option && !is_root_metadata(f.field)
}

/// The `Deserialize` impl of a struct that [`keeps_nulls`]: a private twin whose
/// null-keeping fields read `null` as `Some(None)`, then moved into the struct, each such
/// `null` into the remainder.
fn keeping_deserialize(
    s: &StructType,
    fields: &[PlannedField<'_>],
    p: &Paths,
    fns: &mut DefaultFns,
) -> TokenStream {
    let (serde, json, serde_crate) = (&p.serde, &p.json, &p.serde_crate);
    let name = ident(&s.name);
    let rem = s.remainder.as_ref().expect("keeps_nulls: a remainder");
    let rem_ident = ident(&rem.rust_name);
    let mut decls = TokenStream::new();
    let mut moves = TokenStream::new();
    for f in fields {
        let fname = &f.ident;
        let plan = if is_null_keeping(f) {
            let nullable = Field {
                nullable: true,
                ..f.field.clone()
            };
            let json_name = &f.field.json_name;
            moves.extend(quote! {
                #fname: match read.#fname {
                    Some(None) => {
                        #rem_ident.insert(#json_name.to_owned(), #json::Value::Null);
                        None
                    }
                    value => value.flatten(),
                },
            });
            plan_field(&s.name, &nullable, p, fns)
        } else {
            moves.extend(quote!(#fname: read.#fname,));
            plan_field(&s.name, f.field, p, fns)
        };
        let (ty, attrs) = (&plan.ty, &plan.serde);
        decls.extend(quote! {
            #[serde(#(#attrs),*)]
            #fname: #ty,
        });
    }
    let (_, rem_ty, rem_serde) = remainder_parts(&s.name, rem, p, fns);
    decls.extend(quote! {
        #rem_serde
        #rem_ident: #rem_ty,
    });
    quote! {
        impl<'de> #serde::Deserialize<'de> for #name {
            fn deserialize<D>(deserializer: D) -> Result<Self, D::Error>
            where
                D: #serde::Deserializer<'de>,
            {
                #[derive(#serde::Deserialize)]
                #[serde(crate = #serde_crate)]
                struct Read {
                    #decls
                }
                let read = <Read as #serde::Deserialize>::deserialize(deserializer)?;
                let mut #rem_ident = read.#rem_ident;
                Ok(Self {
                    #moves
                    #rem_ident,
                })
            }
        }
    }
}

/// The lines of a hand-written `Serialize` (into `map`, a `SerializeMap`) that write the
/// declared fields, then the remainder's entries, less those a declared field wrote
/// (`skip`: keys never written from the remainder, such as a root's `apiVersion`).
pub(crate) fn serialize_entries(
    s: &StructType,
    fields: &[PlannedField<'_>],
    skip: &[&str],
) -> TokenStream {
    let mut ser = TokenStream::new();
    let mut written = TokenStream::new();
    for PlannedField {
        field: f,
        ident: fname,
        plan,
    } in fields
    {
        let json = proc_macro2::Literal::string(&f.json_name);
        let (write, is_written) = if is_root_metadata(f) {
            // No `metadata: {}` invented for a document without metadata.
            (
                quote! {
                    if self.#fname != Default::default() {
                        map.serialize_entry(#json, &self.#fname)?;
                    }
                },
                quote!(self.#fname != Default::default()),
            )
        } else if plan.optional {
            (
                quote! {
                    if let Some(value) = &self.#fname {
                        map.serialize_entry(#json, value)?;
                    }
                },
                quote!(self.#fname.is_some()),
            )
        } else {
            (
                quote!(map.serialize_entry(#json, &self.#fname)?;),
                quote!(true),
            )
        };
        ser.extend(write);
        written.extend(quote!(#json => #is_written,));
    }
    if let Some(rem) = &s.remainder {
        let fname = ident(&rem.rust_name);
        let skip = skip.iter().map(|k| quote!(#k => true,));
        ser.extend(quote! {
            for (key, value) in &self.#fname {
                let written = match key.as_str() {
                    #(#skip)*
                    #written
                    _ => false,
                };
                if !written {
                    map.serialize_entry(key, value)?;
                }
            }
        });
    }
    ser
}

/// Plans and declares the fields of `s`; `remainder_doc` documents its flattened remainder.
pub(crate) fn struct_body<'a>(
    s: &'a StructType,
    remainder_doc: &str,
    p: &Paths,
    has_default: &BTreeSet<String>,
    fns: &mut DefaultFns,
) -> StructBody<'a> {
    // A struct that keeps nulls derives no serde trait: no `#[serde]` attribute on it, and
    // the helpers its attributes would name are not emitted (its twin names its own).
    let keeps = s
        .remainder
        .as_ref()
        .is_some_and(|r| r.value == TypeRef::Json)
        && s.fields
            .iter()
            .any(|f| f.is_optional() && !f.nullable && !is_root_metadata(f));
    let mut unused = DefaultFns::new(p);
    let mut fields = Vec::with_capacity(s.fields.len());
    let mut parts = Vec::with_capacity(s.fields.len());
    for (f, keyed) in s.fields.iter().zip(keyed_fields(s)) {
        let plan = plan_field(&s.name, f, p, if keeps { &mut unused } else { &mut *fns });
        let fname = ident(&f.rust_name);
        let attrs = &plan.serde;
        let serde_attr = if attrs.is_empty() {
            quote!()
        } else {
            quote!(#[serde(#(#attrs),*)])
        };
        parts.push((field_docs(f, keyed), serde_attr));
        fields.push(PlannedField {
            field: f,
            ident: fname,
            plan,
        });
    }
    debug_assert_eq!(keeps, keeps_nulls(s, &fields));
    let mut decls = TokenStream::new();
    for (f, (fdocs, serde_attr)) in fields.iter().zip(parts) {
        let (fname, ty) = (&f.ident, &f.plan.ty);
        let serde_attr = if keeps { quote!() } else { serde_attr };
        decls.extend(quote! {
            #fdocs
            #serde_attr
            pub #fname: #ty,
        });
    }
    if let Some(rem) = &s.remainder {
        let (fname, ty, serde) =
            remainder_parts(&s.name, rem, p, if keeps { &mut unused } else { &mut *fns });
        let serde = if keeps { quote!() } else { serde };
        decls.extend(quote! {
            #[doc = #remainder_doc]
            #serde
            pub #fname: #ty,
        });
    }
    let derive_default = if has_default.contains(&s.name) {
        quote!(Default,)
    } else {
        quote!()
    };
    let deserialize = keeps.then(|| keeping_deserialize(s, &fields, p, fns));
    StructBody {
        fields,
        decls,
        derive_default,
        deserialize,
    }
}

/// The flattened map of undeclared properties (typed by `additionalProperties`: its `null`
/// values read as declared maps' values do): its name, type and `#[serde]` attribute.
fn remainder_parts(
    owner: &str,
    rem: &Remainder,
    p: &Paths,
    fns: &mut DefaultFns,
) -> (Ident, TokenStream, TokenStream) {
    let fname = ident(&rem.rust_name);
    let vty = type_tokens(&rem.value, p);
    let ty = quote!(::std::collections::BTreeMap<String, #vty>);
    let map = TypeRef::Map(Box::new(rem.value.clone()));
    let serde = match elements::reader(owner, &rem.rust_name, &map, false, &ty, p, fns) {
        Some(name) => quote!(#[serde(flatten, deserialize_with = #name)]),
        None => quote!(#[serde(flatten)]),
    };
    (fname, ty, serde)
}
