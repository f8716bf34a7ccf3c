//! Short names in generated code: the emitters write every outside item by its full path
//! (`::kinform::client::ListParams`, `::kinform::k8s_openapi::serde::Serialize`), which is
//! always correct; this pass then rewrites one module's items as a person would write them,
//! with one `use` per outside item and its short name at each use site.
//!
//! Rewriting after emission, rather than emitting short names, keeps every emitter free of
//! bookkeeping and makes the choice per module, where collisions are known:
//!
//! - A path is shortened at its first `UpperCamelCase` segment (the type, trait or enum):
//!   `::kinform::Scope::Namespaced` becomes `Scope::Namespaced` with `use ::kinform::Scope;`.
//! - A name the module defines or already imports (a generated `Client` kind, say), a generic
//!   parameter's name, or a name already imported from another path keeps its full path, so a
//!   shortened name never means something else.
//! - Names of the Rust prelude (`Result`, `Option`, `Vec`, ...) are written bare when the path
//!   is the standard library's, and never imported from elsewhere: a module-wide `Result`
//!   other than std's would surprise a reader.
//! - Paths inside `#[derive(...)]` are shortened too; other attributes and macro invocations
//!   are tokens, left as written.
//!
//! Macros do not use this pass: a derive cannot add `use` items to the user's module without
//! risking a clash with the user's own imports, so expanded code keeps full paths.

use std::collections::{BTreeMap, BTreeSet};

use proc_macro2::TokenStream;
use quote::{ToTokens, quote};
use syn::punctuated::Punctuated;
use syn::visit::Visit;
use syn::visit_mut::VisitMut;

use crate::naming::RESERVED_TYPE_NAMES;

/// The std modules whose items the prelude re-exports (`std::option::Option`, ...).
const PRELUDE_MODULES: &[&str] = &[
    "option", "result", "vec", "string", "boxed", "default", "clone", "marker", "iter", "convert",
    "cmp", "ops", "borrow",
];

/// Rewrites the items of one module with short names and the `use` items they need (placed
/// after the module's inner attributes). Tokens that do not parse as items are returned as
/// they are (the formatter reports them).
pub fn shorten(items: TokenStream) -> TokenStream {
    match syn::parse2::<syn::File>(items.clone()) {
        Ok(file) => shorten_file(file).to_token_stream(),
        Err(_) => items,
    }
}

/// [`shorten`] on a parsed module, which the formatter then prints without parsing again.
pub fn shorten_file(mut file: syn::File) -> syn::File {
    let mut taken = Defined::default();
    taken.visit_file(&file);
    let mut short = Shortener {
        taken: taken.names,
        imports: BTreeMap::new(),
    };
    short.visit_file_mut(&mut file);
    if short.imports.is_empty() {
        return file;
    }
    // One `use` per module path, names sorted: `use ::kinform::client::{ListParams, Patch};`.
    let mut by_module: BTreeMap<String, (syn::Path, BTreeSet<String>)> = BTreeMap::new();
    for (name, module) in &short.imports {
        by_module
            .entry(module.to_token_stream().to_string())
            .or_insert_with(|| (module.clone(), BTreeSet::new()))
            .1
            .insert(name.clone());
    }
    let uses = by_module.into_values().map(|(module, names)| {
        let names: Vec<syn::Ident> = names
            .iter()
            .map(|n| syn::parse_str(n))
            .filter_map(Result::ok)
            .collect();
        if names.len() == 1 {
            let name = &names[0];
            quote!(use #module::#name;)
        } else {
            quote!(use #module::{#(#names),*};)
        }
    });
    let uses: Vec<syn::Item> = uses.filter_map(|u| syn::parse2(u).ok()).collect();
    file.items.splice(0..0, uses);
    file
}

/// Every type-namespace name a module defines or imports, and every generic parameter.
#[derive(Default)]
struct Defined {
    names: BTreeSet<String>,
}

impl Defined {
    fn use_tree(&mut self, tree: &syn::UseTree) {
        match tree {
            syn::UseTree::Path(p) => self.use_tree(&p.tree),
            syn::UseTree::Name(n) => {
                self.names.insert(n.ident.to_string());
            }
            syn::UseTree::Rename(r) => {
                self.names.insert(r.rename.to_string());
            }
            syn::UseTree::Group(g) => g.items.iter().for_each(|t| self.use_tree(t)),
            syn::UseTree::Glob(_) => {}
        }
    }
}

impl<'ast> Visit<'ast> for Defined {
    fn visit_file(&mut self, file: &'ast syn::File) {
        for item in &file.items {
            let ident = match item {
                syn::Item::Struct(i) => Some(&i.ident),
                syn::Item::Enum(i) => Some(&i.ident),
                syn::Item::Trait(i) => Some(&i.ident),
                syn::Item::Type(i) => Some(&i.ident),
                syn::Item::Union(i) => Some(&i.ident),
                syn::Item::Mod(i) => Some(&i.ident),
                syn::Item::Use(u) => {
                    self.use_tree(&u.tree);
                    None
                }
                _ => None,
            };
            if let Some(ident) = ident {
                self.names.insert(ident.to_string());
            }
        }
        syn::visit::visit_file(self, file);
    }

    fn visit_generic_param(&mut self, param: &'ast syn::GenericParam) {
        if let syn::GenericParam::Type(t) = param {
            self.names.insert(t.ident.to_string());
        }
        syn::visit::visit_generic_param(self, param);
    }

    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        // `use ... as _;` inside function bodies name nothing.
        self.use_tree(&u.tree);
    }
}

struct Shortener {
    /// Names the module defines or imports itself.
    taken: BTreeSet<String>,
    /// Short name -> the module it is imported from.
    imports: BTreeMap<String, syn::Path>,
}

fn is_upper(ident: &syn::Ident) -> bool {
    ident
        .to_string()
        .starts_with(|c: char| c.is_ascii_uppercase())
}

impl Shortener {
    /// Shortens `path`; returns how many leading segments it dropped. With a qualified self
    /// type (`<T as ::a::Trait>::Item`), only the trait part (the first `limit` segments) may
    /// be shortened.
    fn shorten_path(&mut self, path: &mut syn::Path) -> usize {
        self.shorten_within(path, usize::MAX)
    }

    fn shorten_within(&mut self, path: &mut syn::Path, limit: usize) -> usize {
        if path.leading_colon.is_none() || path.segments.len() < 2 {
            return 0;
        }
        let Some(at) = path.segments.iter().position(|s| is_upper(&s.ident)) else {
            return 0;
        };
        if at == 0
            || at >= limit
            || path
                .segments
                .iter()
                .take(at)
                .any(|s| !s.arguments.is_none())
        {
            return 0;
        }
        let name = path.segments[at].ident.to_string();
        let root = path.segments[0].ident.to_string();
        // `Debug` is reserved for the derive, but its trait is not in the prelude: imported.
        if RESERVED_TYPE_NAMES.contains(&name.as_str()) && name != "Debug" {
            // Written bare only where the path is the prelude item's own (`::std::fmt::Result`
            // is not `Result`); never imported from elsewhere.
            let module = path.segments[1].ident.to_string();
            if at == 2
                && matches!(root.as_str(), "std" | "core" | "alloc")
                && PRELUDE_MODULES.contains(&module.as_str())
            {
                strip(path, at);
                return at;
            }
            return 0;
        }
        if self.taken.contains(&name) {
            return 0;
        }
        let module = syn::Path {
            leading_colon: path.leading_colon,
            segments: path.segments.iter().take(at).cloned().collect(),
        };
        match self.imports.get(&name) {
            Some(existing) if *existing != module => return 0,
            Some(_) => {}
            None => {
                self.imports.insert(name, module);
            }
        }
        strip(path, at);
        at
    }

    /// Visits what a qualified path holds (its self type, its generic arguments) without
    /// shortening the path itself again.
    fn inner(&mut self, qself: &mut Option<syn::QSelf>, path: &mut syn::Path) {
        if let Some(q) = qself {
            self.visit_type_mut(&mut q.ty);
        }
        for seg in &mut path.segments {
            self.visit_path_arguments_mut(&mut seg.arguments);
        }
    }

    fn qualified(&mut self, qself: &mut Option<syn::QSelf>, path: &mut syn::Path) {
        match qself {
            Some(q) => {
                let dropped = self.shorten_within(path, q.position);
                q.position -= dropped;
            }
            None => {
                self.shorten_path(path);
            }
        }
    }
}

/// Drops the first `at` segments and the leading `::`.
fn strip(path: &mut syn::Path, at: usize) {
    path.leading_colon = None;
    path.segments = path.segments.iter().skip(at).cloned().collect();
}

impl VisitMut for Shortener {
    fn visit_path_mut(&mut self, path: &mut syn::Path) {
        self.shorten_path(path);
        syn::visit_mut::visit_path_mut(self, path);
    }

    fn visit_expr_path_mut(&mut self, e: &mut syn::ExprPath) {
        self.qualified(&mut e.qself, &mut e.path);
        self.inner(&mut e.qself, &mut e.path);
    }

    fn visit_type_path_mut(&mut self, t: &mut syn::TypePath) {
        self.qualified(&mut t.qself, &mut t.path);
        self.inner(&mut t.qself, &mut t.path);
    }

    fn visit_item_use_mut(&mut self, _: &mut syn::ItemUse) {
        // Imports stay as written.
    }

    fn visit_item_mod_mut(&mut self, _: &mut syn::ItemMod) {
        // An inline child module is a namespace of its own, shortened on its own.
    }

    fn visit_attribute_mut(&mut self, attr: &mut syn::Attribute) {
        if !attr.path().is_ident("derive") {
            return;
        }
        let Ok(mut paths) =
            attr.parse_args_with(Punctuated::<syn::Path, syn::Token![,]>::parse_terminated)
        else {
            return;
        };
        for p in &mut paths {
            self.shorten_path(p);
        }
        *attr = syn::parse_quote!(#[derive(#paths)]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn short(tokens: TokenStream) -> String {
        let file: syn::File = syn::parse2(shorten(tokens)).expect("parses");
        prettyplease::unparse(&file)
    }

    #[test]
    fn outside_items_are_imported_once() {
        let out = short(quote! {
            #[derive(Clone, ::kinform::k8s_openapi::serde::Serialize)]
            pub struct FooClient {
                api: ::kinform::Api<Foo>,
                list: ::std::vec::Vec<::kinform::client::ListParams>,
                map: ::std::collections::BTreeMap<String, ::kinform::client::ListParams>,
            }
            impl FooClient {
                pub fn scope() -> ::kinform::Scope { ::kinform::Scope::Namespaced }
                pub fn kind() -> &'static str { <Self as ::kinform::Resource>::KIND }
            }
        });
        assert!(
            out.contains("use ::kinform::{Api, Resource, Scope};"),
            "{out}"
        );
        assert!(out.contains("<Self as Resource>::KIND"), "{out}");
        assert!(out.contains("use ::kinform::client::ListParams;"), "{out}");
        assert!(
            out.contains("use ::kinform::k8s_openapi::serde::Serialize;"),
            "{out}"
        );
        assert!(out.contains("use ::std::collections::BTreeMap;"), "{out}");
        assert!(out.contains("#[derive(Clone, Serialize)]"), "{out}");
        assert!(out.contains("list: Vec<ListParams>"), "{out}");
        assert!(out.contains("Scope::Namespaced"), "{out}");
        assert!(!out.contains("::kinform::Api<"), "{out}");
    }

    #[test]
    fn names_the_module_defines_keep_full_paths() {
        let out = short(quote! {
            pub struct Client;
            pub struct Other<P> {
                a: ::kinform::Client,
                b: ::kinform::client::P,
                c: ::other::Patch,
                d: ::kinform::client::Patch,
                e: ::kinform::client::Result<()>,
                f: ::std::fmt::Result,
                g: ::std::option::Option<::std::fmt::Formatter>,
            }
        });
        assert!(out.contains("a: ::kinform::Client"), "{out}");
        assert!(out.contains("b: ::kinform::client::P"), "{out}");
        assert!(out.contains("c: Patch"), "{out}");
        assert!(out.contains("d: ::kinform::client::Patch"), "{out}");
        assert!(out.contains("e: ::kinform::client::Result<()>"), "{out}");
        assert!(out.contains("f: ::std::fmt::Result"), "{out}");
        assert!(out.contains("g: Option<Formatter>"), "{out}");
    }
}
