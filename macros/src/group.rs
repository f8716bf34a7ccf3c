//! `#[kinform::api_group(group = "...")]`: the group-level accessors of derived resources.
//!
//! Generated code reaches a resource through its group and version, as client-go does:
//! `client.example_com_v1().foos("ns")` and `factory.example_com().v1().foos().lister()`.
//! Those accessors live on one struct per group version and one extension trait per group, so
//! no single `#[derive(CustomResource)]` can declare them: two derived kinds of one group
//! would each declare `ExampleComInformersExt`. And a function-like macro that only *lists*
//! the types could not emit them either: a clientset method's name is the resource's plural
//! and its signature depends on the scope (`foos("ns")` vs `bars()`), both of which live in
//! the type's `#[kinform(...)]` attributes, which another macro cannot read.
//!
//! So the group is an attribute on the inline module holding the derived types: it sees every
//! `#[derive(CustomResource)]` inside (at any depth of inline modules), reads their attributes
//! with the derive's own parser, gives each the group (or checks the one it states), and
//! appends the group's items through kinform-codegen's group emitters, the same functions
//! `kinform-gen` calls for a CRD of that group:
//!
//! ```text
//! <module>             <Group>Informers, <Group>InformersExt     (factory.example_com())
//! <module>::<version>  <Group><Version>Client, ...ClientExt        (client.example_com_v1())
//!                      <Group><Version>Informers                  (.v1())
//! <module>::<version>::foo_client   re-exports FooClient, FooLister, FooInformer (.foos())
//! <module>::prelude    every extension trait
//! ```
//!
//! A version or client module the user already wrote (e.g. `mod v1 { ... }` holding the v1
//! types) receives the items instead of a new module. Mistakes are reported at the tokens
//! that caused them: a derive stating another group, two kinds of one version sharing a
//! plural, the attribute on something other than an inline module. Attribute mistakes inside
//! a derive are left to the derive, which reports them once.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};
use syn::spanned::Spanned;

use kinform_codegen::derive::{CratePaths, DeriveResource, GroupError, group_items};

use crate::attrs::{Attrs, Errors};
use crate::validate;

/// The arguments: `group = "..."` and optional `crates(kinform = "...", k8s_openapi = "...")`.
struct Args {
    group: syn::LitStr,
    kinform: Option<syn::Path>,
    k8s_openapi: Option<syn::Path>,
}

fn parse_args(args: TokenStream) -> syn::Result<Args> {
    let mut group = None;
    let mut kinform = None;
    let mut k8s_openapi = None;
    let parser = syn::meta::parser(|meta| {
        if meta.path.is_ident("group") {
            group = Some(meta.value()?.parse::<syn::LitStr>()?);
            Ok(())
        } else if meta.path.is_ident("crates") {
            meta.parse_nested_meta(|m| {
                let lit: syn::LitStr = m.value()?.parse()?;
                let path: syn::Path = lit.parse()?;
                if m.path.is_ident("kinform") {
                    kinform = Some(path);
                } else if m.path.is_ident("k8s_openapi") {
                    k8s_openapi = Some(path);
                } else {
                    return Err(m.error("expected `kinform` or `k8s_openapi`"));
                }
                Ok(())
            })
        } else {
            Err(meta
                .error("unknown api_group argument: expected `group = \"...\"` or `crates(...)`"))
        }
    });
    syn::parse::Parser::parse2(parser, args)?;
    let group = group.ok_or_else(|| {
        syn::Error::new(
            Span::call_site(),
            "missing `group`: `#[kinform::api_group(group = \"example.com\")]`",
        )
    })?;
    if !group.value().contains('.') {
        return Err(syn::Error::new(
            group.span(),
            "a custom resource's group must be a DNS subdomain with a dot, e.g. \"example.com\"",
        ));
    }
    Ok(Args {
        group,
        kinform,
        k8s_openapi,
    })
}

/// One derived type found in the module.
struct Found {
    res: DeriveResource,
    /// Modules from the annotated module down to the type's.
    path: Vec<syn::Ident>,
    span: Span,
}

fn derives_custom_resource(attrs: &[syn::Attribute]) -> bool {
    attrs
        .iter()
        .filter(|a| a.path().is_ident("derive"))
        .any(|a| {
            let mut yes = false;
            let _ = a.parse_nested_meta(|m| {
                if m.path
                    .segments
                    .last()
                    .is_some_and(|s| s.ident == "CustomResource")
                {
                    yes = true;
                }
                Ok(())
            });
            yes
        })
}

/// Gives every derive in `items` (recursively) the group, or checks the one it states, and
/// collects the valid ones.
fn collect(
    items: &mut [syn::Item],
    group: &syn::LitStr,
    path: &mut Vec<syn::Ident>,
    found: &mut Vec<Found>,
    errors: &mut Errors,
) {
    for item in items {
        match item {
            // Only kinform's derive: another crate's `CustomResource` (kube-derive's) has no
            // `#[kinform(...)]` and must not receive one.
            syn::Item::Struct(s)
                if derives_custom_resource(&s.attrs)
                    && s.attrs.iter().any(|a| a.path().is_ident("kinform")) =>
            {
                let mut ignored = Errors::default();
                let attrs = Attrs::parse(&s.attrs, &mut ignored);
                match &attrs.group {
                    Some(g) if g.value() != group.value() => {
                        errors.push(syn::Error::new(
                            g.span(),
                            format!(
                                "`{}` is in the api_group `{}`: its `group` must be that group or left out",
                                s.ident,
                                group.value()
                            ),
                        ));
                        continue;
                    }
                    Some(_) => {}
                    None => s.attrs.push(syn::parse_quote!(#[kinform(group = #group)])),
                }
                let input: syn::DeriveInput = syn::parse_quote!(#s);
                let attrs = Attrs::parse(&input.attrs, &mut ignored);
                if let Some(res) = validate::validate(&input, &attrs, &mut ignored)
                    && ignored.finish().is_ok()
                {
                    found.push(Found {
                        res,
                        path: path.clone(),
                        span: s.ident.span(),
                    });
                }
            }
            syn::Item::Mod(m) => {
                if let Some((_, items)) = &mut m.content {
                    path.push(m.ident.clone());
                    collect(items, group, path, found, errors);
                    path.pop();
                }
            }
            _ => {}
        }
    }
}

fn inline_module<'a>(item: &'a mut syn::Item, name: &str) -> Option<&'a mut Vec<syn::Item>> {
    match item {
        syn::Item::Mod(syn::ItemMod {
            ident,
            content: Some((_, items)),
            ..
        }) if ident == name => Some(items),
        _ => None,
    }
}

/// The inline module `name` among `items`, created (public, with `doc`) if missing.
fn module<'a>(items: &'a mut Vec<syn::Item>, name: &str, doc: &str) -> &'a mut Vec<syn::Item> {
    if !items.iter_mut().any(|i| inline_module(i, name).is_some()) {
        let ident = format_ident!("{}", name);
        items.push(syn::parse_quote! {
            #[doc = #doc]
            pub mod #ident {}
        });
    }
    // Present now: found, or the module just pushed (whose contents are `Some`).
    let mut found = items.iter_mut().filter_map(|i| inline_module(i, name));
    match found.next() {
        Some(m) => m,
        None => unreachable!("the module was just added"),
    }
}

fn push_tokens(items: &mut Vec<syn::Item>, tokens: TokenStream) -> syn::Result<()> {
    let file: syn::File = syn::parse2(tokens)?;
    items.extend(file.items);
    Ok(())
}

/// Expands `#[api_group(args)] mod m { ... }`: the module with the group's items, or, on a
/// mistake, the error beside the module (its derives given the group, so that the mistake is
/// the only error reported).
pub fn expand(args: TokenStream, input: TokenStream) -> TokenStream {
    let args = match parse_args(args) {
        Ok(a) => a,
        Err(e) => return with_error(e, input),
    };
    let mut m: syn::ItemMod = match syn::parse2(input.clone()) {
        Ok(m) => m,
        Err(e) => {
            let e = syn::Error::new(
                e.span(),
                "#[kinform::api_group] goes on an inline module (`mod api { ... }`) holding the group's #[derive(CustomResource)] types",
            );
            return with_error(e, input);
        }
    };
    match expand_module(&args, &mut m) {
        Ok(()) => quote!(#m),
        Err(e) => with_error(e, quote!(#m)),
    }
}

fn with_error(e: syn::Error, item: TokenStream) -> TokenStream {
    let mut out = e.to_compile_error();
    out.extend(item);
    out
}

fn expand_module(args: &Args, m: &mut syn::ItemMod) -> syn::Result<()> {
    let span = m.span();
    let Some((_, items)) = &mut m.content else {
        return Err(syn::Error::new(
            span,
            "#[kinform::api_group] needs the module's contents inline (`mod api { ... }`, not `mod api;`): it reads the derives inside",
        ));
    };
    let mut errors = Errors::default();
    let mut found = Vec::new();
    collect(items, &args.group, &mut Vec::new(), &mut found, &mut errors);
    let group = args.group.value();
    let rt = args
        .kinform
        .as_ref()
        .map_or_else(|| "::kinform".to_owned(), |p| quote!(#p).to_string());
    let k8s = args.k8s_openapi.as_ref().map(|p| quote!(#p).to_string());
    let paths = CratePaths::new(&rt, k8s.as_deref())
        .map_err(|e| syn::Error::new(Span::call_site(), e.to_string()))?;
    let resources: Vec<DeriveResource> = found.iter().map(|f| f.res.clone()).collect();
    let gi = match group_items(&group, &resources, &paths) {
        Ok(gi) => gi,
        Err(e) => {
            let span = match &e {
                GroupError::DuplicateResource {
                    version, second, ..
                } => found
                    .iter()
                    .rev()
                    .find(|f| &f.res.version == version && &f.res.kind == second)
                    .map_or_else(Span::call_site, |f| f.span),
                GroupError::WrongGroup { kind, .. } => found
                    .iter()
                    .find(|f| &f.res.kind == kind)
                    .map_or_else(Span::call_site, |f| f.span),
            };
            let mut err = syn::Error::new(span, e.to_string());
            if let Err(mut all) = errors.finish() {
                all.combine(err);
                err = all;
            }
            return Err(err);
        }
    };
    errors.finish()?;
    if found.is_empty() {
        return Err(syn::Error::new(
            m.ident.span(),
            "this api_group holds no #[derive(CustomResource)] type",
        ));
    }

    push_tokens(items, gi.group)?;
    for v in gi.versions {
        let doc = format!("`{group}/{}`: clientset and shared informers.", v.module);
        let vitems = module(items, &v.module, &doc);
        push_tokens(vitems, v.items)?;
        for (client_module, root) in &v.resources {
            // group_items lists exactly the resources given, so this always finds one.
            let Some(f) = found
                .iter()
                .find(|f| &f.res.root == root && version_mod(&f.res) == v.module)
            else {
                continue;
            };
            let supers = std::iter::repeat_n(quote!(super::), 2);
            let segs = &f.path;
            let (client, lister, informer) = (
                format_ident!("{}Client", root),
                format_ident!("{}Lister", root),
                format_ident!("{}Informer", root),
            );
            let doc = format!(
                "`{group}/{}/{}` (kind `{}`).",
                f.res.version,
                f.res.plural(),
                f.res.kind
            );
            let ritems = module(vitems, client_module, &doc);
            ritems.push(syn::parse_quote! {
                pub use #(#supers)* #(#segs::)* {#client, #lister, #informer};
            });
        }
    }
    let prelude = module(
        items,
        "prelude",
        "Every extension trait of the group: `use <this module>::prelude::*;` adds the clientset accessors to `Client` and the group accessor to `InformerFactory`.",
    );
    for p in gi.prelude {
        prelude.push(syn::parse_quote!(pub use super::#p;));
    }
    Ok(())
}

fn version_mod(res: &DeriveResource) -> syn::Ident {
    format_ident!("{}", kinform_codegen::derive::version_module(&res.version))
}
