//! `#[derive(CustomResource)]`, `#[derive(InPlace)]` and `#[api_group]` for kinform. The
//! first and last expand through `kinform-codegen`'s emitters, so derived and generated
//! code are the same code; `in_place` writes kinform-client's `custom_in_place!`
//! invocations for the derived structs.
//!
//! Use them through `kinform` with the `derive` feature (`kinform::CustomResource`,
//! `kinform::api_group`), as serde users use `serde::Deserialize`. The derive follows
//! serde_derive's shape: `attrs` parses `#[kinform(...)]` into the macro's own AST with
//! spans, `validate` checks it as a whole and turns it into kinform-codegen's derive model,
//! and `expand` prints the root type and calls the codegen resource emitters for the client,
//! lister, informer and factory accessor. `group` reads the derives of a module and calls the
//! codegen group emitters (see [`macro@api_group`]).
//!
//! # kube-derive's `#[kube(...)]` and kinform's `#[kinform(...)]`
//!
//! Every attribute of kube-derive's `CustomResource` (kube 4) and its counterpart. "Same"
//! means the same key, value forms and meaning.
//!
//! | kube-derive | kinform | notes |
//! |---|---|---|
//! | `group`, `version`, `kind` | same | `group` may be left out inside [`macro@api_group`], which gives it |
//! | `namespaced` | same | |
//! | `root = ".."` (formerly `struct`) | same; `struct` accepted too | |
//! | `plural`, `singular` | same | checked to be lower-case DNS labels; same default plural rules |
//! | `shortname`, `category` (repeatable) | same | |
//! | `doc = ".."` | same | also the schema's root description |
//! | `status = "Type"` | same | enables the status subresource |
//! | `scale(spec_replicas_path, status_replicas_path, label_selector_path)` and `scale = r#"json"#` | same, both forms | |
//! | `printcolumn(name, type_, json_path, description, format, priority)` and `printcolumn = r#"json"#` | same, both forms; `type` accepted for `type_` | type checked against the five CRD column types |
//! | `selectable = ".spec.x"` (repeatable) | same | |
//! | `validation = "CEL"` / `validation = Rule::new("..").message(..).reason(..).field_path(..)` | same (the builder is read at compile time, `Message::Expression` included); plus `validation(rule, message, message_expression, reason, field_path, optional_old_self)` | object-level `x-kubernetes-validations` |
//! | `storage` / `storage = bool` (default true), `served = bool` (default true) | same | an unserved version defaults to `storage = false`; `served = false` with `storage` is an error |
//! | `deprecated` / `deprecated = "warning"` | same | |
//! | `derive = "Trait"` (repeatable; `Default` special-cased) | same; `Default` derives normally (metadata and spec default, no status) | `derive = "JsonSchema"` is an error in derived mode (the root derives it already) |
//! | `attr = ".."` (rejects `derive`, `serde`, `schemars`) | same, same rejections | |
//! | `annotation("k", "v")`, `label("k", "v")` | same; also `label(key = "k", value = "v")` | on the CRD object |
//! | `schema = "derived"` | same (default) | spec and status schemas from their `JsonSchema`, made structural; the root derives `JsonSchema` (metadata skipped), as kube-derive's |
//! | `schema = "manual"` | same | the root does not derive `JsonSchema`; the user's `impl JsonSchema for Root` is the CRD's whole object schema (made structural); `doc` and `validation` still apply to its root |
//! | `schema = "disabled"` | same key; **differs** | kube-derive leaves `openAPIV3Schema` empty for the user to fill; kinform writes a valid schema whose spec and status preserve unknown fields, so the CRD is accepted as it is and nothing needs `JsonSchema` |
//! | `crates(k8s_openapi, serde, schemars, std)` | same | `std` rewrites every `::std` path of the expansion |
//! | `crates(kube, kube_core)` | **differs**: `crates(kinform = "..")` | an error names the kinform key |
//! | `crates(serde_json)` | **differs**: an error | the expansion names serde_json only through k8s-openapi's re-export (the runtime builds the CRD) |
//! | `cel` (client-side CEL methods) | **none**: an error explains | kinform has no CEL evaluator; the API server evaluates the rules |
//! | `group_resolver = path` | **none**: an error explains | kinform's `Resource::GROUP` is a constant, which listers, informers and the group accessors rely on |
//! | `apiextensions = "v1beta1"` (removed from kube-derive) | **none**: an error explains | only apiextensions.k8s.io/v1 |
//!
//! Beyond kube-derive, kinform's derive also emits the typed client (`FooClient`), lister
//! (`FooLister`), informer handle (`FooInformer`) and `factory.foos()` (`FooInformerExt`);
//! [`macro@api_group`] adds the generated-code accessors `client.example_com_v1().foos("ns")`
//! and `factory.example_com().v1().foos()`. Where kube-derive's root derives `Deserialize`,
//! kinform's root has hand-written `Serialize`/`Deserialize` that write and skip
//! `apiVersion`/`kind`.
//!
//! Decoding a derived type writes back what it read, as for generated types: the root invents
//! no `metadata` (empty metadata is not written) and no `status` (`None` is not written), and
//! no schema default is filled in. `Foo::apply_schema_defaults()` is the explicit defaulting
//! the API server does before it stores the object, over the schema of `Foo::crd()` with
//! `kinform::defaulting` (the rules `TestApiServer` applies too).

mod attrs;
mod expand;
mod group;
mod in_place;
mod rule_expr;
mod validate;

use proc_macro::TokenStream;

/// Derives a custom resource from its spec struct.
///
/// ```
/// use kinform::CustomResource;
/// use schemars::JsonSchema;
/// use serde::{Deserialize, Serialize};
///
/// #[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
/// #[kinform(group = "example.com", version = "v1", kind = "Foo", namespaced,
///           status = "FooStatus", shortname = "fo", printcolumn(name = "Size",
///           type = "integer", json_path = ".spec.size"))]
/// pub struct FooSpec {
///     size: i32,
/// }
///
/// #[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
/// pub struct FooStatus {
///     ready: bool,
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use std::time::Duration;
/// use kinform::client::PostParams;
/// use kinform::informer::InformerFactory;
/// use kinform::testing::TestApiServer;
///
/// let server = TestApiServer::start().await?;
/// server.register_crd_yaml(&Foo::crd_yaml())?; // `kubectl apply -f -` with a cluster
/// let client = server.client()?;
///
/// let foos = FooClient::new(client.clone(), "default");
/// let mut foo = Foo::new("a", FooSpec { size: 3 });
/// foo.metadata.namespace = Some("default".into());
/// foos.create(&PostParams::default(), &foo).await?;
///
/// foo = foos.get("a").await?;
/// foo.status = Some(FooStatus { ready: true });
/// foos.replace_status("a", &PostParams::default(), &foo).await?; // status subresource
///
/// let factory = InformerFactory::new(client);
/// let lister: FooLister = factory.foos().lister(); // FooInformerExt
/// factory.start();
/// factory.wait_for_cache_sync(Duration::from_secs(30)).await?;
/// let cached = lister.get("default", "a").expect("synced");
/// assert_eq!((cached.spec.size, cached.status.as_ref().map(|s| s.ready)), (3, Some(true)));
/// factory.shutdown().await;
/// # Ok(()) }
/// ```
///
/// The derive generates `Foo { metadata, spec, status }` with `Foo::new(name, spec)`, `Foo::crd()` and
/// `Foo::crd_yaml()`, `impl kinform::Resource`, and `FooClient`, `FooLister`, `FooInformer`
/// and `FooInformerExt` (`factory.foos()`).
///
/// Attributes: `#[kinform(...)]`, every one of kube-derive's `#[kube(...)]` with the same
/// key; the table in the crate documentation lists them with the few differences. Required:
/// `group` (unless inside [`macro@api_group`]), `version`, `kind`.
///
/// The spec type should be `pub`: the generated client, lister and informer are `pub` and
/// name the root type, whose visibility is the spec's.
#[proc_macro_derive(CustomResource, attributes(kinform))]
pub fn derive_custom_resource(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    let mut errors = attrs::Errors::default();
    let parsed = attrs::Attrs::parse(&input.attrs, &mut errors);
    let res = validate::validate(&input, &parsed, &mut errors);
    if let Err(e) = errors.finish() {
        return e.to_compile_error().into();
    }
    match res {
        Some(res) => expand::expand(&input, &parsed, &res)
            .unwrap_or_else(|e| e.to_compile_error())
            .into(),
        None => TokenStream::new(),
    }
}

/// In-place decoding for a struct inside a derived resource: its status, and the structs
/// nested in its spec or status.
///
/// `#[derive(CustomResource)]` writes the in-place decoders of the root type and of the
/// spec struct it is on, so an informer decodes each watch event into the object it
/// replaces (reusing its strings, vectors and maps) instead of building a new one. A field
/// whose type has such a decoder is decoded in place too; others are decoded by their
/// `Deserialize`. This derive gives a struct of your own that decoder:
///
/// ```
/// use kinform::{CustomResource, InPlace};
/// use schemars::JsonSchema;
/// use serde::{Deserialize, Serialize};
///
/// #[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
/// #[kinform(group = "example.com", version = "v1", kind = "Foo", status = "FooStatus")]
/// #[serde(rename_all = "camelCase")]
/// pub struct FooSpec {
///     pub owner: Owner,
///     pub replica_count: Option<i32>,
/// }
///
/// #[derive(InPlace, Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
/// pub struct Owner {
///     pub name: String,
///     #[serde(default)]
///     pub teams: Vec<String>,
/// }
///
/// #[derive(InPlace, Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
/// pub struct FooStatus {
///     pub ready: bool,
/// }
/// # fn main() {}
/// ```
///
/// The decoder gives the value the struct's `Deserialize` (serde's derive) gives for the
/// same bytes, and gives up (so serde decodes the document and its result or error stands)
/// wherever they could differ. It reads the keys and absent-member rules from
/// `#[serde(rename, rename_all, default, default = "path")]`; a struct using a serde
/// feature it does not model (`flatten`, `skip`, `alias`, `deny_unknown_fields`, a
/// container `default`, generics, ...) is a compile error naming the attribute. Only
/// structs with named fields; `#[kinform(crates(kinform = "..."))]` names the kinform
/// crate where it is not `::kinform`. Not for the spec struct itself, whose decoder
/// `CustomResource` writes.
#[proc_macro_derive(InPlace, attributes(kinform))]
pub fn derive_in_place(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    in_place::derive(&input)
        .unwrap_or_else(|e| e.to_compile_error())
        .into()
}

/// The group-level accessors of the derived resources in a module, as generated code has them:
/// `client.example_com_v1().foos("ns")` and `factory.example_com().v1().foos().lister()`.
///
/// ```
/// #[kinform::api_group(group = "example.com")]
/// pub mod api {
///     pub mod v1 {
///         use kinform::CustomResource;
///         use schemars::JsonSchema;
///         use serde::{Deserialize, Serialize};
///
///         #[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
///         #[kinform(version = "v1", kind = "Foo", namespaced)]
///         pub struct FooSpec { pub size: i32 }
///
///         #[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
///         #[kinform(version = "v1", kind = "Bar")]
///         pub struct BarSpec { pub city: String }
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use api::prelude::*;
/// # let server = kinform::testing::TestApiServer::start().await?;
/// # server.register_crd_yaml(&api::v1::Foo::crd_yaml())?;
/// # server.register_crd_yaml(&api::v1::Bar::crd_yaml())?;
/// # let client = server.client()?;
/// # let factory = kinform::informer::InformerFactory::new(client.clone());
/// let foos = client.example_com_v1().foos("ns"); // FooClient
/// assert!(foos.list(&Default::default()).await?.items.is_empty());
/// let bars = factory.example_com().v1().bars().lister(); // BarLister
/// # assert!(bars.list_all().is_empty());
/// # Ok(()) }
/// ```
///
/// Goes on an inline module; every `#[derive(CustomResource)]` with `#[kinform(...)]` inside
/// it (at any depth of inline modules) belongs to the group: its `group` may be left out (the attribute gives
/// it) or must equal the group. The attribute appends, through kinform-codegen's group
/// emitters (the same as `kinform-gen`'s for that group):
/// `<Group>Informers` and `<Group>InformersExt` in the module; per version a module
/// (`v1`, created or extended) with `<Group><Version>Client`, `<Group><Version>ClientExt`
/// and `<Group><Version>Informers`, and per resource a module (`foos`) re-exporting its
/// `FooClient`, `FooLister` and `FooInformer`; and a `prelude` with every extension trait.
/// Arguments: `group = "..."` (required), `crates(kinform = "...", k8s_openapi = "...")`.
///
/// Errors: a derive stating another group, two kinds of one version with the same plural,
/// a module without derives, or the attribute on anything but an inline module.
///
/// Each derive's own `factory.foos()` (`FooInformerExt`) stays: it needs no group
/// declaration and reaches the same shared informer.
#[proc_macro_attribute]
pub fn api_group(args: TokenStream, input: TokenStream) -> TokenStream {
    group::expand(args.into(), input.into()).into()
}
