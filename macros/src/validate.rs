//! Checks on the parsed attributes that need the whole picture: required keys, conflicts,
//! and the shape of names the API server would reject (apiextensions validation: a group
//! with a dot, a DNS-label version, lower-case plural and singular names).

use syn::spanned::Spanned;

use kinform_codegen::derive::DeriveResource;

use crate::attrs::{Attrs, Errors, SchemaMode};

fn is_dns_label(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 63
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && s.starts_with(|c: char| c.is_ascii_lowercase())
        && !s.ends_with('-')
}

fn is_rust_ident(s: &str) -> bool {
    syn::parse_str::<syn::Ident>(s).is_ok()
}

/// Validates `attrs` for the spec type `input`; `None` when errors were pushed.
pub fn validate(
    input: &syn::DeriveInput,
    attrs: &Attrs,
    errors: &mut Errors,
) -> Option<DeriveResource> {
    let name_span = input.ident.span();
    match &input.data {
        syn::Data::Struct(s) if !matches!(s.fields, syn::Fields::Unit) => {}
        _ => errors.push(syn::Error::new(
            name_span,
            "#[derive(CustomResource)] goes on the spec struct (a struct with fields)",
        )),
    }
    if !input.generics.params.is_empty() {
        errors.push(syn::Error::new(
            input.generics.span(),
            "#[derive(CustomResource)] does not support generic spec types",
        ));
    }
    let missing = |what: &str, example: &str| {
        syn::Error::new(
            name_span,
            format!("missing `#[kinform({what} = \"{example}\")]`"),
        )
    };
    if attrs.group.is_none() {
        errors.push(missing("group", "example.com"));
    }
    if attrs.version.is_none() {
        errors.push(missing("version", "v1"));
    }
    if attrs.kind.is_none() {
        errors.push(missing("kind", "Foo"));
    }
    if let Some(g) = &attrs.group
        && (!g.value().contains('.') || !g.value().split('.').all(is_dns_label))
    {
        errors.push(syn::Error::new(
            g.span(),
            "a custom resource's group must be a DNS subdomain with a dot, e.g. \"example.com\"",
        ));
    }
    if let Some(v) = &attrs.version
        && !is_dns_label(&v.value())
    {
        errors.push(syn::Error::new(
            v.span(),
            "a version must be a DNS label such as \"v1\" or \"v1beta1\"",
        ));
    }
    if let Some(k) = &attrs.kind {
        let kind = k.value();
        if attrs.root.is_none() && !is_rust_ident(&kind) {
            errors.push(syn::Error::new(
                k.span(),
                "the kind names the root type: give a Rust identifier or set `root = \"...\"`",
            ));
        }
        if input.ident == kind && attrs.root.is_none() {
            errors.push(syn::Error::new(
                k.span(),
                "the root type would have the spec type's name: rename the spec (e.g. `FooSpec`) or set `root = \"...\"`",
            ));
        }
    }
    if let Some(r) = &attrs.root
        && !is_rust_ident(&r.value())
    {
        errors.push(syn::Error::new(
            r.span(),
            "`root` must be a Rust identifier",
        ));
    }
    for (lit, what) in [(&attrs.plural, "plural"), (&attrs.singular, "singular")] {
        if let Some(l) = lit
            && !is_dns_label(&l.value())
        {
            errors.push(syn::Error::new(
                l.span(),
                format!("`{what}` must be a lower-case DNS label"),
            ));
        }
    }
    if let (Some((false, served)), Some((true, _))) = (attrs.served, attrs.storage) {
        errors.push(syn::Error::new(
            served,
            "conflicting attributes: a version with `served = false` cannot be the `storage` version",
        ));
    }
    let mode = attrs.schema.map(|(m, _)| m).unwrap_or_default();
    for d in &attrs.derives {
        if mode == SchemaMode::Derived && d.segments.last().is_some_and(|s| s.ident == "JsonSchema")
        {
            errors.push(syn::Error::new(
                d.span(),
                "the root type derives `JsonSchema` already (schema = \"derived\"); with `schema = \"manual\"` implement it yourself",
            ));
        }
    }
    let (group, version, kind) = (
        attrs.group.as_ref()?,
        attrs.version.as_ref()?,
        attrs.kind.as_ref()?,
    );
    let kind = kind.value();
    Some(DeriveResource {
        group: group.value(),
        version: version.value(),
        root: attrs
            .root
            .as_ref()
            .map_or_else(|| kind.clone(), |r| r.value()),
        kind,
        plural: attrs.plural.as_ref().map(|l| l.value()),
        singular: attrs.singular.as_ref().map(|l| l.value()),
        namespaced: attrs.namespaced.is_some(),
        short_names: attrs.short_names.clone(),
        categories: attrs.categories.clone(),
        has_status: attrs.status.is_some(),
        scale: attrs.scale.clone(),
        printer_columns: attrs.printer_columns.clone(),
        served: attrs.served.is_none_or(|(s, _)| s),
        // kube-derive's default: every version is the storage version unless it says
        // `storage = false` (merge_crds then picks one); an unserved version is not.
        storage: attrs
            .storage
            .map_or_else(|| attrs.served.is_none_or(|(s, _)| s), |(s, _)| s),
        deprecated: attrs.deprecated.as_ref().map(|(w, _)| w.clone()),
        docs: attrs.doc.clone(),
    })
}
