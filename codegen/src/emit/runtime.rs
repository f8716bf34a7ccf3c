//! Every name of the runtime crate (and of k8s-openapi) that emitted code uses, in one place.
//!
//! The runtime's client and informer APIs are written concurrently with the generator; a
//! rename there is a one-line change here. The crate paths are configurable (default
//! `::kinform`, and k8s-openapi through the runtime's re-export `::kinform::k8s_openapi`), so
//! generated code compiles in crates that only depend on `kinform`.

use proc_macro2::TokenStream;
use quote::quote;

/// Why a configured crate path is unusable.
#[derive(Debug, thiserror::Error)]
#[error("`{path}` is not a Rust path ({what})")]
pub struct PathError {
    /// The path as given.
    pub path: String,
    /// Which option it was given for.
    pub what: &'static str,
}

/// Crate paths emitted code refers to.
#[derive(Clone, Debug)]
pub struct RuntimePaths {
    rt: TokenStream,
    k8s: TokenStream,
}

fn parse_path(path: &str, what: &'static str) -> Result<TokenStream, PathError> {
    let parsed: syn::Path = syn::parse_str(path).map_err(|_| PathError {
        path: path.to_owned(),
        what,
    })?;
    Ok(quote!(#parsed))
}

impl RuntimePaths {
    /// Paths for runtime crate `runtime` (e.g. `::kinform`) and k8s-openapi crate `k8s` (e.g.
    /// `::k8s_openapi`; `None` means the runtime's re-export `<runtime>::k8s_openapi`).
    pub fn new(runtime: &str, k8s: Option<&str>) -> Result<Self, PathError> {
        let rt = parse_path(runtime, "runtime crate")?;
        let k8s = match k8s {
            Some(k) => parse_path(k, "k8s-openapi crate")?,
            None => quote!(#rt::k8s_openapi),
        };
        Ok(Self { rt, k8s })
    }

    /// The runtime crate path.
    pub fn runtime(&self) -> &TokenStream {
        &self.rt
    }

    /// The k8s-openapi crate path (replaces the leading `k8s_openapi` of model type paths).
    pub fn k8s_openapi(&self) -> &TokenStream {
        &self.k8s
    }

    /// `Client`.
    pub fn client(&self) -> TokenStream {
        let rt = &self.rt;
        quote!(#rt::Client)
    }

    /// `Api<K>`.
    pub fn api(&self, k: &TokenStream) -> TokenStream {
        let rt = &self.rt;
        quote!(#rt::Api<#k>)
    }

    /// `Api::namespaced(client, ns)`, `Api::all(client)`.
    /// (The object type is inferred from where the `Api` goes.)
    pub fn api_namespaced(&self, client: TokenStream, ns: TokenStream) -> TokenStream {
        let rt = &self.rt;
        quote!(#rt::Api::namespaced(#client, #ns))
    }

    /// `Api::all(client)` (the object type is inferred from where the `Api` goes).
    pub fn api_all(&self, client: TokenStream) -> TokenStream {
        let rt = &self.rt;
        quote!(#rt::Api::all(#client))
    }

    /// `Result<T, Error>` with the client's `Error`.
    pub fn result(&self, t: TokenStream) -> TokenStream {
        let rt = &self.rt;
        quote!(::core::result::Result<#t, #rt::client::Error>)
    }

    /// A parameter type of `client`: `ListParams`, `WatchParams`, `PostParams`, `PatchParams`,
    /// `DeleteParams`.
    pub fn params(&self, name: &str) -> TokenStream {
        let rt = &self.rt;
        let name = proc_macro2::Ident::new(name, proc_macro2::Span::call_site());
        quote!(#rt::client::#name)
    }

    /// `Patch<P>`.
    pub fn patch(&self, p: TokenStream) -> TokenStream {
        let rt = &self.rt;
        quote!(#rt::client::Patch<#p>)
    }

    /// The bound on the patch payload type parameter.
    pub fn patch_bound(&self) -> TokenStream {
        let k8s = &self.k8s;
        quote!(#k8s::serde::Serialize + ::std::fmt::Debug + Send + Sync)
    }

    /// The bound on an apply configuration's type parameter.
    pub fn apply_bound(&self) -> TokenStream {
        let k8s = &self.k8s;
        quote!(#k8s::serde::Serialize)
    }

    /// What `Api::list` returns.
    pub fn object_list(&self, k: &TokenStream) -> TokenStream {
        let rt = &self.rt;
        quote!(#rt::client::ObjectList<#k>)
    }

    /// What `Api::watch` returns.
    pub fn watch_stream(&self, k: &TokenStream) -> TokenStream {
        let rt = &self.rt;
        quote!(#rt::client::WatchStream<#k>)
    }

    /// What `Api::delete` returns.
    pub fn delete_output(&self, k: &TokenStream) -> TokenStream {
        let rt = &self.rt;
        quote!(#rt::client::DeleteResponse<#k>)
    }

    /// What `Api::delete_collection` returns.
    pub fn delete_collection_output(&self, k: &TokenStream) -> TokenStream {
        let rt = &self.rt;
        quote!(#rt::client::DeleteResponse<#rt::client::ObjectList<#k>>)
    }

    /// What `Api::get_subresource_stream` returns (the `log` byte stream).
    pub fn byte_stream(&self) -> TokenStream {
        let rt = &self.rt;
        quote!(#rt::client::ByteStream)
    }

    /// The query argument type of `Api::get_subresource_stream`.
    pub fn stream_query(&self) -> TokenStream {
        quote!(&[(&str, &str)])
    }

    /// `informer::InformerFactory`.
    pub fn informer_factory(&self) -> TokenStream {
        let rt = &self.rt;
        quote!(#rt::informer::InformerFactory)
    }

    /// `Arc<informer::SharedIndexInformer<K>>`, what `factory.informer::<K>()` returns.
    pub fn shared_informer(&self, k: &TokenStream) -> TokenStream {
        let rt = &self.rt;
        quote!(::std::sync::Arc<#rt::informer::SharedIndexInformer<#k>>)
    }

    /// `lister::Lister<K>`, what `factory.lister::<K>()` returns.
    pub fn lister(&self, k: &TokenStream) -> TokenStream {
        let rt = &self.rt;
        quote!(#rt::lister::Lister<#k>)
    }
}
