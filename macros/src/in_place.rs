//! The in-place decoders of a derived resource (kinform-client's `custom_in_place!`, one
//! invocation per struct): for the root type `#[derive(CustomResource)]` writes, for the
//! spec struct that derive is on, and for each struct with `#[derive(InPlace)]` (the status
//! and the structs nested in spec or status), so an informer's watch decodes a derived
//! resource into the object it replaces, as it does a generated one.
//!
//! A struct's invocation lists each field with its JSON key and how serde's derive reads it
//! when absent, read from the struct's `#[serde(...)]` attributes. Each field uses an `auto`
//! kind: decoded in place where its type has an in-place decoder, else afresh by its
//! `Deserialize` (the macro sees a type's name only; the choice is the client's
//! `decode::custom::Probe`), so a nested struct is decoded in place exactly when it derives
//! `InPlace`. A spec whose serde attributes this reader does not model (`flatten`, `skip`,
//! `alias`, `deny_unknown_fields`, a container `default`, `transparent`, `from`,
//! `try_from`, `deserialize_with`, generics, ...) gets no invocation: its values are
//! decoded by serde, and the result is the same. `#[derive(InPlace)]` on such a struct is
//! a compile error naming the attribute, since the user asked for what cannot be given.

use proc_macro2::TokenStream;
use quote::quote;

/// How an absent member is read (serde's derive).
enum Absent {
    /// A required field: serde's missing-field error, so the walk gives up.
    Required,
    /// `#[serde(default)]`, or an `Option` (serde reads a missing `Option` as `None`).
    Default,
    /// `#[serde(default = "path")]`.
    DefaultFn(syn::ExprPath),
}

/// The `custom_in_place!` invocation of the spec struct `input`, or `None` when it uses a
/// serde feature the reader does not model (see the module docs).
pub fn spec_decl(input: &syn::DeriveInput, rt: &TokenStream) -> Option<TokenStream> {
    struct_decl(input, rt).ok()
}

/// The `custom_in_place!` invocation of the struct `input`, or an error naming what the
/// reader does not model (`#[derive(InPlace)]` reports it).
pub fn struct_decl(input: &syn::DeriveInput, rt: &TokenStream) -> syn::Result<TokenStream> {
    let shape = |what: &str| {
        syn::Error::new(
            input.ident.span(),
            format!("InPlace derives for {what}; this type is decoded by its `Deserialize`"),
        )
    };
    // The readers' errors name the attribute: `#[serde(flatten)]` is not modelled.
    let attribute = |e: syn::Error| {
        syn::Error::new(
            e.span(),
            format!(
                "InPlace: {e}; remove it, or the derive to leave the type to its `Deserialize`"
            ),
        )
    };
    if !input.generics.params.is_empty() {
        return Err(shape("structs without generic parameters"));
    }
    let syn::Data::Struct(syn::DataStruct {
        fields: syn::Fields::Named(fields),
        ..
    }) = &input.data
    else {
        return Err(shape("structs with named fields"));
    };
    let rename_all = container_rename_all(&input.attrs).map_err(attribute)?;
    let mut members = Vec::new();
    for field in &fields.named {
        let Some(ident) = field.ident.as_ref() else {
            continue;
        };
        let (rename, absent) = field_attrs(&field.attrs).map_err(attribute)?;
        let key = rename.unwrap_or_else(|| {
            let name = ident.to_string();
            let name = name.strip_prefix("r#").unwrap_or(&name);
            rename_all.apply(name)
        });
        let absent = match absent {
            Absent::Required if is_option(&field.ty) => Absent::Default,
            a => a,
        };
        members.push(match absent {
            Absent::Required => quote!(auto(#key, #ident)),
            Absent::Default => quote!(auto_default(#key, #ident)),
            Absent::DefaultFn(path) => quote!(auto_default_fn(#key, #ident, #path)),
        });
    }
    let name = &input.ident;
    let target = if derives_default(&input.attrs) {
        quote!(#name)
    } else {
        quote!(no_default(#name))
    };
    Ok(quote!(#rt::client::custom_in_place!(#target, #(#members),*);))
}

/// `#[derive(InPlace)]`: the struct's invocation, at the kinform path its
/// `#[kinform(crates(kinform = "..."))]` names (default `::kinform`), the only attribute
/// of this derive.
pub fn derive(input: &syn::DeriveInput) -> syn::Result<TokenStream> {
    let mut rt: Option<syn::Path> = None;
    for attr in input.attrs.iter().filter(|a| a.path().is_ident("kinform")) {
        attr.parse_nested_meta(|m| {
            if !m.path.is_ident("crates") {
                return Err(m.error("InPlace takes only `#[kinform(crates(kinform = \"...\"))]`"));
            }
            m.parse_nested_meta(|c| {
                if !c.path.is_ident("kinform") {
                    return Err(c.error("InPlace takes only `crates(kinform = \"...\")`"));
                }
                let lit: syn::LitStr = c.value()?.parse()?;
                rt = Some(lit.parse()?);
                Ok(())
            })
        })?;
    }
    let rt = rt.unwrap_or_else(|| syn::parse_quote!(::kinform));
    struct_decl(input, &quote!(#rt))
}

/// The invocation of the root type `root` the derive writes (its `Deserialize` reads
/// `metadata` with `#[serde(default)]`, a required `spec` and an optional `status`).
pub fn root_decl(root: &syn::Ident, has_status: bool, rt: &TokenStream) -> TokenStream {
    let status = has_status.then(|| quote!(, auto_default("status", status)));
    quote! {
        #rt::client::custom_in_place!(
            no_default(#root),
            auto_default("metadata", metadata),
            auto("spec", spec)
            #status
        );
    }
}

/// Whether the type's last path segment is `Option`.
fn is_option(ty: &syn::Type) -> bool {
    matches!(ty, syn::Type::Path(p) if p.qself.is_none()
        && p.path.segments.last().is_some_and(|s| s.ident == "Option"))
}

/// Whether `#[derive(..)]` lists `Default`.
fn derives_default(attrs: &[syn::Attribute]) -> bool {
    attrs
        .iter()
        .filter(|a| a.path().is_ident("derive"))
        .any(|a| {
            let mut found = false;
            let _ = a.parse_nested_meta(|m| {
                found |= m.path.segments.last().is_some_and(|s| s.ident == "Default");
                Ok(())
            });
            found
        })
}

/// serde's `rename_all` rules, applied to a field name (serde's `RenameRule`).
#[derive(Clone, Copy)]
enum RenameAll {
    None,
    Lower,
    Upper,
    Pascal,
    Camel,
    Snake,
    ScreamingSnake,
    Kebab,
    ScreamingKebab,
}

impl RenameAll {
    fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "lowercase" => Self::Lower,
            "UPPERCASE" => Self::Upper,
            "PascalCase" => Self::Pascal,
            "camelCase" => Self::Camel,
            "snake_case" => Self::Snake,
            "SCREAMING_SNAKE_CASE" => Self::ScreamingSnake,
            "kebab-case" => Self::Kebab,
            "SCREAMING-KEBAB-CASE" => Self::ScreamingKebab,
            _ => return None,
        })
    }

    fn apply(self, field: &str) -> String {
        match self {
            Self::None | Self::Lower | Self::Snake => field.to_owned(),
            Self::Upper | Self::ScreamingSnake => field.to_ascii_uppercase(),
            Self::Pascal | Self::Camel => {
                let mut out = String::new();
                let mut upper = matches!(self, Self::Pascal);
                for ch in field.chars() {
                    if ch == '_' {
                        upper = true;
                    } else if upper {
                        out.extend(ch.to_uppercase());
                        upper = false;
                    } else {
                        out.push(ch);
                    }
                }
                out
            }
            Self::Kebab => field.replace('_', "-"),
            Self::ScreamingKebab => field.to_ascii_uppercase().replace('_', "-"),
        }
    }
}

/// The container's `rename_all` (for deserializing); an error at an attribute the reader
/// does not model.
fn container_rename_all(attrs: &[syn::Attribute]) -> syn::Result<RenameAll> {
    let mut rule = RenameAll::None;
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        attr.parse_nested_meta(|m| {
            if m.path.is_ident("rename_all") {
                if let Some(r) = renamed(&m)? {
                    rule = RenameAll::parse(&r)
                        .ok_or_else(|| m.error("an unknown `rename_all` rule"))?;
                }
                Ok(())
            } else if m.path.is_ident("crate") || m.path.is_ident("rename") {
                // The crate path, and the container's own name, change no member's key.
                m.value()?.parse::<syn::LitStr>().map(drop)
            } else if m.path.is_ident("bound") {
                skip_value(&m)
            } else {
                Err(not_modelled(&m))
            }
        })?;
    }
    Ok(rule)
}

/// A field's deserialized key (`rename`) and absent reading; an error at an attribute the
/// reader does not model.
fn field_attrs(attrs: &[syn::Attribute]) -> syn::Result<(Option<String>, Absent)> {
    let mut rename = None;
    let mut absent = Absent::Required;
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        attr.parse_nested_meta(|m| {
            if m.path.is_ident("rename") {
                if let Some(r) = renamed(&m)? {
                    rename = Some(r);
                }
                Ok(())
            } else if m.path.is_ident("default") {
                absent = if m.input.peek(syn::Token![=]) {
                    let lit: syn::LitStr = m.value()?.parse()?;
                    Absent::DefaultFn(lit.parse()?)
                } else {
                    Absent::Default
                };
                Ok(())
            } else if m.path.is_ident("skip_serializing_if") || m.path.is_ident("serialize_with") {
                skip_value(&m)
            } else if m.path.is_ident("skip_serializing") {
                Ok(())
            } else {
                Err(not_modelled(&m))
            }
        })?;
    }
    Ok((rename, absent))
}

/// The deserialized name of `rename = "x"` / `rename(deserialize = "x", ..)`, `None` when
/// only the serialized one is given.
fn renamed(m: &syn::meta::ParseNestedMeta<'_>) -> syn::Result<Option<String>> {
    if m.input.peek(syn::Token![=]) {
        return Ok(Some(m.value()?.parse::<syn::LitStr>()?.value()));
    }
    let mut de = None;
    m.parse_nested_meta(|inner| {
        let value = inner.value()?.parse::<syn::LitStr>()?.value();
        if inner.path.is_ident("deserialize") {
            de = Some(value);
        }
        Ok(())
    })?;
    Ok(de)
}

/// The error at a serde attribute the reader does not model, naming it.
fn not_modelled(m: &syn::meta::ParseNestedMeta<'_>) -> syn::Error {
    let name = m
        .path
        .get_ident()
        .map_or_else(|| "?".to_owned(), ToString::to_string);
    m.error(format!("`#[serde({name})]` is not modelled"))
}

/// Reads and ignores `= "..."`.
fn skip_value(m: &syn::meta::ParseNestedMeta<'_>) -> syn::Result<()> {
    m.value()?.parse::<syn::LitStr>().map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decl(src: &str) -> Option<String> {
        let input: syn::DeriveInput = syn::parse_str(src).unwrap();
        spec_decl(&input, &quote!(::kinform)).map(|t| t.to_string().replace(' ', ""))
    }

    #[test]
    fn keys_follow_serde_s_rename_rules() {
        let out = decl(
            r#"#[derive(Default)] #[serde(rename_all = "camelCase")]
            struct S { replica_count: i32, #[serde(rename = "x-y")] other: String,
              r#type: Option<String>, #[serde(default = "seven")] size: i64,
              #[serde(default, skip_serializing_if = "Vec::is_empty")] list: Vec<u8> }"#,
        )
        .unwrap();
        assert!(out.contains("custom_in_place!(S,"), "{out}");
        for part in [
            r#"auto("replicaCount",replica_count)"#,
            r#"auto("x-y",other)"#,
            r#"auto_default("type",r#type)"#,
            r#"auto_default_fn("size",size,seven)"#,
            r#"auto_default("list",list)"#,
        ] {
            assert!(out.contains(part), "{part} in {out}");
        }
        assert_eq!(RenameAll::Pascal.apply("a_bc_d"), "ABcD");
        assert_eq!(RenameAll::ScreamingKebab.apply("a_b"), "A-B");
    }

    #[test]
    fn serde_features_not_modelled_give_no_decoder() {
        for src in [
            "struct S { #[serde(flatten)] rest: Map }",
            "struct S { #[serde(alias = \"b\")] a: i32 }",
            "#[serde(deny_unknown_fields)] struct S { a: i32 }",
            "#[serde(default)] struct S { a: i32 }",
            "struct S<T> { a: T }",
            "struct S(i32);",
            "enum E { A }",
        ] {
            assert_eq!(decl(src), None, "{src}");
        }
        assert!(
            decl("struct S { a: i32 }")
                .unwrap()
                .contains("no_default(S)")
        );
    }
}
