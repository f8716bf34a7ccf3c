//! Listers, informers and factory accessors (client-go's `listers/` and `informers/`
//! packages): for every resource that can be listed and watched, `FooLister` (the runtime's
//! `Lister<Foo>`, which reads the informer's cache) and `FooInformer`, a handle on the shared
//! informer the `InformerFactory` keeps for the type; per group version a struct of those
//! handles, per group a struct of versions, and an `InformerFactory` extension trait per
//! group: `factory.apps().v1().deployments().lister()`, as client-go's
//! `factory.Apps().V1().Deployments().Lister()`.
//!
//! Resources without both `list` and `watch` (`tokenreviews`, `componentstatuses`) get no
//! informer: a reflector needs both.

use proc_macro2::TokenStream;
use quote::quote;

use crate::model::{ResourceDef, Verb};

use super::format::doc_attrs;
use super::modules::{GroupCtx, GroupVersionCtx, ResourceCtx};

/// Whether a resource gets a lister and an informer.
pub fn has_informer(res: &ResourceDef) -> bool {
    res.verbs.contains(&Verb::List) && res.verbs.contains(&Verb::Watch)
}

/// `FooLister` and `FooInformer` of one resource.
pub fn resource_informer(ctx: &ResourceCtx<'_>) -> TokenStream {
    let p = ctx.paths;
    let k = &ctx.object;
    let lister = ctx.lister_ident();
    let informer = ctx.informer_ident();
    let factory = p.informer_factory();
    let lister_ty = p.lister(k);
    let shared = p.shared_informer(k);
    let gvr = ctx.gvr();
    let lister_doc = format!(
        "Reads `{gvr}` from the shared informer's cache (by namespace, name, label selector or index)."
    );
    let lister_doc = doc_attrs(&lister_doc);
    let informer_doc = format!(
        "The shared informer of `{gvr}` and its lister, from an `InformerFactory`: the factory keeps one informer per type, so every handle shares it."
    );
    let informer_doc = doc_attrs(&informer_doc);
    quote! {
        #lister_doc
        pub type #lister = #lister_ty;

        #informer_doc
        #[derive(Clone, Copy)]
        pub struct #informer<'a> {
            factory: &'a #factory,
        }

        impl<'a> #informer<'a> {
            /// A handle on `factory`'s informer for this resource.
            #[inline]
            pub fn new(factory: &'a #factory) -> Self {
                Self { factory }
            }

            /// The shared informer (created on first use, started by the factory).
            #[inline]
            pub fn informer(&self) -> #shared {
                self.factory.informer::<#k>()
            }

            /// A lister reading the shared informer's cache.
            #[inline]
            pub fn lister(&self) -> #lister {
                self.factory.lister::<#k>()
            }
        }
    }
}

/// The informer handles of one group version.
pub fn group_version_informers(gv: &GroupVersionCtx<'_>) -> TokenStream {
    let factory = gv.paths.informer_factory();
    let set = gv.informers_ident();
    let doc = format!("Shared informers of `{}`.", gv.label());
    let doc = doc_attrs(&doc);
    let methods = gv
        .resources
        .iter()
        .filter(|r| has_informer(r.res))
        .map(|r| {
            let m = r.accessor_ident();
            let module = r.module_ident();
            let inf = r.informer_ident();
            let doc = format!("The shared informer and lister of `{}`.", r.gvr());
            let doc = doc_attrs(&doc);
            r.gated(quote! {
                #doc
                #[inline]
                pub fn #m(&self) -> #module::#inf<'a> {
                    #module::#inf::new(self.factory)
                }
            })
        });
    quote! {
        #doc
        #[derive(Clone, Copy)]
        pub struct #set<'a> {
            factory: &'a #factory,
        }

        impl<'a> #set<'a> {
            /// Informer handles over `factory`.
            #[inline]
            pub fn new(factory: &'a #factory) -> Self {
                Self { factory }
            }
            #(#methods)*
        }
    }
}

/// The versions of one group and its `InformerFactory` extension trait.
pub fn group_informers(g: &GroupCtx<'_>) -> TokenStream {
    let factory = g.paths.informer_factory();
    let set = g.informers_ident();
    let ext = g.informers_ext_ident();
    let accessor = g.accessor_ident();
    let label = g.label();
    let doc = format!("Shared informers of the `{label}` group, by version.");
    let doc = doc_attrs(&doc);
    let ext_doc = format!("Adds `{accessor}()` to the runtime's `InformerFactory`.");
    let ext_doc = doc_attrs(&ext_doc);
    let acc_doc = format!("Shared informers of the `{label}` group.");
    let acc_doc = doc_attrs(&acc_doc);
    let versions = g.versions.iter().filter(|v| v.has_informers()).map(|v| {
        let m = v.version_ident();
        let inf = v.informers_ident();
        let doc = format!("Shared informers of `{}`.", v.label());
        let doc = doc_attrs(&doc);
        v.gated(quote! {
            #doc
            #[inline]
            pub fn #m(&self) -> #m::#inf<'a> {
                #m::#inf::new(self.factory)
            }
        })
    });
    quote! {
        #doc
        #[derive(Clone, Copy)]
        pub struct #set<'a> {
            factory: &'a #factory,
        }

        impl<'a> #set<'a> {
            /// Informer handles over `factory`.
            #[inline]
            pub fn new(factory: &'a #factory) -> Self {
                Self { factory }
            }
            #(#versions)*
        }

        #ext_doc
        pub trait #ext {
            #acc_doc
            fn #accessor(&self) -> #set<'_>;
        }

        impl #ext for #factory {
            #[inline]
            fn #accessor(&self) -> #set<'_> {
                #set::new(self)
            }
        }
    }
}
