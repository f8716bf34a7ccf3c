//! Typed clients: one `FooClient` per resource with exactly the verbs and subresources the
//! model lists, and one clientset struct plus `Client` extension trait per group version
//! (client-go's `kubernetes/typed/<group>/<version>` packages, reached as
//! `client.apps_v1().deployments("ns")` the way client-go's `clientset.AppsV1().Deployments(ns)`).
//!
//! Decisions:
//! - Every method is a thin `#[inline]` wrapper over the runtime's generic `Api<K>`: inline
//!   items are compiled in the crate that calls them, so a crate of hundreds of clients (the
//!   built-in API) compiles in about the time it takes to type-check, and users pay only for
//!   the clients they call.
//! - A namespaced resource's client takes the namespace; `""` means all namespaces (for list
//!   and watch), as in client-go.
//! - `status` uses the runtime's `get_status` / `replace_status` / `patch_status`; other
//!   subresources use the generic `*_subresource` calls with their body type (`Scale`,
//!   `Eviction`, `TokenRequest`, ...), and method names `get_<sub>`, `replace_<sub>`,
//!   `patch_<sub>`, `create_<sub>`. A `scale` subresource without a body type in the model
//!   (CRD readers) uses `autoscaling/v1` `Scale`, which is what the API server serves for it.
//! - `log` (a byte stream) becomes `log(name, query)` over `get_subresource_stream`.
//! - Connect subresources become calls of the runtime's connect API (`kinform::client::connect`):
//!   `exec(name, command, &AttachParams)` and `attach(name, &AttachParams)` returning an
//!   `AttachedProcess`, `portforward(name, &[ports])` returning a `Portforwarder`, and
//!   `proxy(name, request)` / `proxy_get(name, path)` for the `proxy` subresource (whatever
//!   HTTP method the caller's request carries: the spec's GET, POST, PUT, PATCH, DELETE,
//!   HEAD and OPTIONS on `proxy` and `proxy/{path}`). A connect subresource the runtime does
//!   not know is reported in the client's docs rather than dropped silently.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use crate::model::{Scope, Subresource, Verb};

use super::format::doc_attrs;
use super::modules::ResourceCtx;
use crate::naming::{ident, snake};

/// Connect subresources the runtime serves (see [`connect_methods`]).
const KNOWN_CONNECT: &[&str] = &["exec", "attach", "portforward", "proxy"];

/// The typed client of one resource.
pub fn resource_client(ctx: &ResourceCtx<'_>) -> TokenStream {
    let p = ctx.paths;
    let k = &ctx.object;
    let name = ctx.client_ident();
    let api_ty = p.api(k);
    let client_ty = p.client();
    let r = ctx.res;
    let gvr = ctx.gvr();
    let mut doc = format!(
        "Typed client of `{gvr}` (kind `{}`): the verbs and subresources the API server serves for it.",
        r.kind
    );
    let unknown: Vec<&str> = r
        .subresources
        .values()
        .filter(|s| s.verbs.contains(&Verb::Connect) && !KNOWN_CONNECT.contains(&s.name.as_str()))
        .map(|s| s.name.as_str())
        .collect();
    if !unknown.is_empty() {
        doc.push_str(&format!(
            "\n\nConnect subresources the runtime has no client for are not generated: {}.",
            unknown
                .iter()
                .map(|c| format!("`{c}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let docs = doc_attrs(&doc);
    let (ctor_doc, ctor_args, ctor_body) = match r.scope {
        Scope::Namespaced => {
            let ns_api = p.api_namespaced(quote!(client), quote!(namespace));
            let all_api = p.api_all(quote!(client));
            (
                format!(
                    "A client of `{gvr}` in `namespace`; `\"\"` means all namespaces (for list and watch), as in client-go."
                ),
                quote!(client: #client_ty, namespace: &str),
                quote! {
                    let api = if namespace.is_empty() { #all_api } else { #ns_api };
                    Self { api }
                },
            )
        }
        Scope::Cluster => {
            let all_api = p.api_all(quote!(client));
            (
                format!("A client of the cluster-scoped `{gvr}`."),
                quote!(client: #client_ty),
                quote!(Self { api: #all_api }),
            )
        }
    };
    let ctor_doc_t = doc_attrs(&ctor_doc);
    let verbs: Vec<TokenStream> = r
        .verbs
        .iter()
        .filter_map(|v| verb_method(ctx, *v))
        .collect();
    let subs: Vec<TokenStream> = r
        .subresources
        .values()
        .flat_map(|s| subresource_methods(ctx, s))
        .collect();
    quote! {
        #docs
        #[derive(Clone)]
        pub struct #name {
            api: #api_ty,
        }

        impl #name {
            #ctor_doc_t
            #[inline]
            pub fn new(#ctor_args) -> Self {
                #ctor_body
            }

            #(#verbs)*
            #(#subs)*
        }
    }
}

fn verb_method(ctx: &ResourceCtx<'_>, verb: Verb) -> Option<TokenStream> {
    let p = ctx.paths;
    let k = &ctx.object;
    let gvr = ctx.gvr();
    let kind = &ctx.res.kind;
    let res_k = p.result(k.clone());
    let lp = p.params("ListParams");
    let wp = p.params("WatchParams");
    let pp = p.params("PostParams");
    let patch_p = p.params("PatchParams");
    let dp = p.params("DeleteParams");
    let patch_ty = p.patch(quote!(P));
    let bound = p.patch_bound();
    Some(match verb {
        Verb::Get => {
            let doc = format!("GET the `{kind}` named `name`.");
            let doc = doc_attrs(&doc);
            quote! {
                #doc
                #[inline]
                pub async fn get(&self, name: &str) -> #res_k {
                    self.api.get(name).await
                }
            }
        }
        Verb::List => {
            let doc = format!("LIST `{gvr}`.");
            let doc = doc_attrs(&doc);
            let out = p.result(p.object_list(k));
            quote! {
                #doc
                #[inline]
                pub async fn list(&self, params: &#lp) -> #out {
                    self.api.list(params).await
                }
            }
        }
        Verb::Watch => {
            let doc = format!("WATCH `{gvr}`.");
            let doc = doc_attrs(&doc);
            let out = p.result(p.watch_stream(k));
            quote! {
                #doc
                #[inline]
                pub async fn watch(&self, params: &#wp) -> #out {
                    self.api.watch(params).await
                }
            }
        }
        Verb::Create => {
            let doc = format!("POST (create) a `{kind}`.");
            let doc = doc_attrs(&doc);
            quote! {
                #doc
                #[inline]
                pub async fn create(&self, params: &#pp, object: &#k) -> #res_k {
                    self.api.create(params, object).await
                }
            }
        }
        Verb::Update => {
            let doc = format!("PUT (replace) the `{kind}` named `name`.");
            let doc = doc_attrs(&doc);
            quote! {
                #doc
                #[inline]
                pub async fn replace(&self, name: &str, params: &#pp, object: &#k) -> #res_k {
                    self.api.replace(name, params, object).await
                }
            }
        }
        Verb::Patch => {
            let doc = format!("PATCH the `{kind}` named `name`.");
            let doc = doc_attrs(&doc);
            let apply_doc = doc_attrs(&format!(
                "Server-side apply of `config` (an apply configuration, or JSON with \
                 `apiVersion` and `kind`) to the `{kind}` named `name`, as `field_manager` of \
                 `params`."
            ));
            let apply_p = p.params("ApplyParams");
            let apply_bound = p.apply_bound();
            quote! {
                #doc
                #[inline]
                pub async fn patch<P: #bound>(&self, name: &str, params: &#patch_p, patch: &#patch_ty) -> #res_k {
                    self.api.patch(name, params, patch).await
                }

                #apply_doc
                #[inline]
                pub async fn apply<A: #apply_bound>(&self, name: &str, params: &#apply_p, config: &A) -> #res_k {
                    self.api.apply(name, params, config).await
                }
            }
        }
        Verb::Delete => {
            let doc = format!("DELETE the `{kind}` named `name`.");
            let doc = doc_attrs(&doc);
            let out = p.result(p.delete_output(k));
            quote! {
                #doc
                #[inline]
                pub async fn delete(&self, name: &str, params: &#dp) -> #out {
                    self.api.delete(name, params).await
                }
            }
        }
        Verb::DeleteCollection => {
            let doc = format!("DELETE the `{gvr}` matching `list`.");
            let doc = doc_attrs(&doc);
            let out = p.result(p.delete_collection_output(k));
            quote! {
                #doc
                #[inline]
                pub async fn delete_collection(&self, params: &#dp, list: &#lp) -> #out {
                    self.api.delete_collection(params, list).await
                }
            }
        }
        Verb::Connect => return None,
    })
}

fn subresource_methods(ctx: &ResourceCtx<'_>, sub: &Subresource) -> Vec<TokenStream> {
    let p = ctx.paths;
    let name = sub.name.as_str();
    let s = snake(name);
    if sub.verbs.contains(&Verb::Connect) {
        return connect_methods(ctx, name);
    }
    if sub.streams {
        let doc = format!(
            "GET the `{name}` subresource as a byte stream; `query` is passed as URL query parameters (e.g. `container`, `follow`, `tailLines`)."
        );
        let doc = doc_attrs(&doc);
        let method = ident(&s);
        let out = p.result(p.byte_stream());
        let query = p.stream_query();
        return vec![quote! {
            #doc
            #[inline]
            pub async fn #method(&self, name: &str, query: #query) -> #out {
                self.api.get_subresource_stream(#name, name, query).await
            }
        }];
    }
    let body = match (&sub.body_type, name) {
        (Some(t), _) => ctx.type_tokens(t),
        (None, "scale") => {
            let k8s = p.k8s_openapi();
            quote!(#k8s::api::autoscaling::v1::Scale)
        }
        (None, _) => ctx.object.clone(),
    };
    let is_status = name == "status" && sub.body_type.is_none();
    let res_body = p.result(body.clone());
    let pp = p.params("PostParams");
    let patch_p = p.params("PatchParams");
    let patch_ty = p.patch(quote!(P));
    let bound = p.patch_bound();
    let mut out = Vec::new();
    for verb in &sub.verbs {
        out.push(match verb {
            Verb::Get => {
                let m = format_ident!("get_{}", s);
                let doc = format!("GET the `{name}` subresource of the object named `name`.");
                let doc = doc_attrs(&doc);
                let call = if is_status {
                    quote!(self.api.get_status(name).await)
                } else {
                    quote!(self.api.get_subresource(#name, name).await)
                };
                quote! {
                    #doc
                    #[inline]
                    pub async fn #m(&self, name: &str) -> #res_body { #call }
                }
            }
            Verb::Update => {
                let m = format_ident!("replace_{}", s);
                let doc = format!("PUT (replace) the `{name}` subresource of the object named `name`.");
                let doc = doc_attrs(&doc);
                let call = if is_status {
                    quote!(self.api.replace_status(name, params, object).await)
                } else {
                    quote!(self.api.replace_subresource(#name, name, params, object).await)
                };
                quote! {
                    #doc
                    #[inline]
                    pub async fn #m(&self, name: &str, params: &#pp, object: &#body) -> #res_body { #call }
                }
            }
            Verb::Patch if is_status => {
                let m = format_ident!("patch_{}", s);
                let doc = doc_attrs(&format!("PATCH the `{name}` subresource of the object named `name`."));
                let apply_doc = doc_attrs(
                    "Server-side apply of `config` to the `status` subresource of the object \
                     named `name`: only the configuration's `status` is taken, owned by \
                     `field_manager` of `params` for subresource `status`.",
                );
                let apply_p = p.params("ApplyParams");
                let apply_bound = p.apply_bound();
                quote! {
                    #doc
                    #[inline]
                    pub async fn #m<P: #bound>(&self, name: &str, params: &#patch_p, patch: &#patch_ty) -> #res_body {
                        self.api.patch_status(name, params, patch).await
                    }

                    #apply_doc
                    #[inline]
                    pub async fn apply_status<A: #apply_bound>(&self, name: &str, params: &#apply_p, config: &A) -> #res_body {
                        self.api.apply_status(name, params, config).await
                    }
                }
            }
            Verb::Patch => {
                let m = format_ident!("patch_{}", s);
                let doc = format!("PATCH the `{name}` subresource of the object named `name`.");
                let doc = doc_attrs(&doc);
                let call = if is_status {
                    quote!(self.api.patch_status(name, params, patch).await)
                } else {
                    quote!(self.api.patch_subresource(#name, name, params, patch).await)
                };
                quote! {
                    #doc
                    #[inline]
                    pub async fn #m<P: #bound>(&self, name: &str, params: &#patch_p, patch: &#patch_ty) -> #res_body { #call }
                }
            }
            Verb::Create => {
                let m = format_ident!("create_{}", s);
                let doc = format!("POST to the `{name}` subresource of the object named `name`.");
                let doc = doc_attrs(&doc);
                quote! {
                    #doc
                    #[inline]
                    pub async fn #m(&self, name: &str, params: &#pp, object: &#body) -> #res_body {
                        self.api.create_subresource(#name, name, params, object).await
                    }
                }
            }
            // List, watch, delete and connect are not subresource verbs the API server
            // serves; connect subresources returned above.
            _ => continue,
        });
    }
    out
}

/// The methods of a connect subresource, over the runtime's connect API.
fn connect_methods(ctx: &ResourceCtx<'_>, name: &str) -> Vec<TokenStream> {
    let p = ctx.paths;
    let kind = &ctx.res.kind;
    let ap = p.params("AttachParams");
    match name {
        "exec" => {
            let doc = doc_attrs(&format!(
                "Runs `command` in the `{kind}` named `name` (`{name}` over a WebSocket), as `kubectl exec`."
            ));
            let out = p.result(p.params("AttachedProcess"));
            vec![quote! {
                #doc
                #[inline]
                pub async fn exec<I, S>(&self, name: &str, command: I, params: &#ap) -> #out
                where
                    I: IntoIterator<Item = S>,
                    S: AsRef<str>,
                {
                    self.api.exec(name, command, params).await
                }
            }]
        }
        "attach" => {
            let doc = doc_attrs(&format!(
                "Attaches to the main process of a container of the `{kind}` named `name`, as `kubectl attach`."
            ));
            let out = p.result(p.params("AttachedProcess"));
            vec![quote! {
                #doc
                #[inline]
                pub async fn attach(&self, name: &str, params: &#ap) -> #out {
                    self.api.attach(name, params).await
                }
            }]
        }
        "portforward" => {
            let doc = doc_attrs(&format!(
                "Forwards `ports` of the `{kind}` named `name` over one WebSocket, as `kubectl port-forward`."
            ));
            let out = p.result(p.params("Portforwarder"));
            vec![quote! {
                #doc
                #[inline]
                pub async fn portforward(&self, name: &str, ports: &[u16]) -> #out {
                    self.api.portforward(name, ports).await
                }
            }]
        }
        "proxy" => {
            let doc = doc_attrs(&format!(
                "Sends `request` (its path and query are those under `proxy/`) to the `{kind}` named `name` (`name` or `name:port`) through the API server's proxy."
            ));
            let get_doc = doc_attrs(&format!(
                "`GET` through the proxy of the `{kind}` named `name`: the body of a 2xx answer, an API error otherwise."
            ));
            let req = p.params("ProxyRequest");
            let out = p.result(p.params("ProxyResponse"));
            let get_out = p.result(quote!(::std::vec::Vec<u8>));
            vec![quote! {
                #doc
                #[inline]
                pub async fn proxy(&self, name: &str, request: #req) -> #out {
                    self.api.proxy(name, request).await
                }

                #get_doc
                #[inline]
                pub async fn proxy_get(&self, name: &str, path_and_query: &str) -> #get_out {
                    self.api.proxy_get(name, path_and_query).await
                }
            }]
        }
        _ => Vec::new(),
    }
}

/// The clientset struct of one group version and its `Client` extension trait.
pub fn group_version_clientset(gv: &super::modules::GroupVersionCtx<'_>) -> TokenStream {
    let p = gv.paths;
    let client_ty = p.client();
    let set = gv.clientset_ident();
    let ext = gv.client_ext_ident();
    let accessor = gv.client_accessor_ident();
    let label = gv.label();
    let set_doc = format!(
        "Typed clients of `{label}`: `client.{accessor}().<plural>(..)`, as client-go's `{}`.",
        gv.go_name()
    );
    let set_doc = doc_attrs(&set_doc);
    let ext_doc = format!("Adds `{accessor}()` to the runtime's `Client`.");
    let ext_doc = doc_attrs(&ext_doc);
    let acc_doc = format!("The typed clients of `{label}`.");
    let acc_doc = doc_attrs(&acc_doc);
    let mut methods = Vec::new();
    for r in &gv.resources {
        let m = r.accessor_ident();
        let c = r.client_ident();
        let gvr = r.gvr();
        let module = r.module_ident();
        methods.push(r.gated(match r.res.scope {
            Scope::Namespaced => {
                let doc = format!("`{gvr}` in `namespace` (`\"\"`: all namespaces).");
                let doc = doc_attrs(&doc);
                quote! {
                    #doc
                    #[inline]
                    pub fn #m(&self, namespace: &str) -> #module::#c {
                        #module::#c::new(self.client.clone(), namespace)
                    }
                }
            }
            Scope::Cluster => {
                let doc = format!("The cluster-scoped `{gvr}`.");
                let doc = doc_attrs(&doc);
                quote! {
                    #doc
                    #[inline]
                    pub fn #m(&self) -> #module::#c {
                        #module::#c::new(self.client.clone())
                    }
                }
            }
        }));
    }
    quote! {
        #set_doc
        #[derive(Clone)]
        pub struct #set {
            client: #client_ty,
        }

        impl #set {
            /// Wraps a runtime client.
            #[inline]
            pub fn new(client: #client_ty) -> Self {
                Self { client }
            }
            #(#methods)*
        }

        #ext_doc
        pub trait #ext {
            #acc_doc
            fn #accessor(&self) -> #set;
        }

        impl #ext for #client_ty {
            #[inline]
            fn #accessor(&self) -> #set {
                #set::new(self.clone())
            }
        }
    }
}
