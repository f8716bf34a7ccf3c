//! `#[derive(CustomResource)]` for kinform. Expands through `kinform-codegen`'s emitters so
//! derived and generated code are the same code.
//!
//! Use it through `kinform` with the `derive` feature (`kinform::CustomResource`), as serde
//! users use `serde::Deserialize`. The macro follows serde_derive's shape: [`attrs`] parses
//! `#[kinform(...)]` into the macro's own AST with spans, [`validate`] checks it as a whole
//! and turns it into kinform-codegen's derive model, and [`expand`] prints the root type and
//! calls the codegen resource emitters for the client, lister, informer and factory accessor.

mod attrs;
mod expand;
mod group;
mod rule_expr;
mod validate;

use proc_macro::TokenStream;

/// Derives a custom resource from its spec struct.
///
/// ```ignore
/// #[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
/// #[kinform(group = "example.com", version = "v1", kind = "Foo", namespaced,
///           status = "FooStatus", shortname = "fo", printcolumn(name = "Size",
///           type = "integer", json_path = ".spec.size"))]
/// pub struct FooSpec { size: i32 }
/// ```
///
/// generates `Foo { metadata, spec, status }` with `Foo::new(name, spec)` and `Foo::crd()`,
/// `impl kinform::Resource`, and `FooClient`, `FooLister`, `FooInformer` and
/// `FooInformerExt` (`factory.foos()`).
///
/// Attributes (`#[kinform(...)]`, kube-derive's `#[kube(...)]` counterparts):
/// - `group = "..."`, `version = "..."`, `kind = "..."` (required); `root = "..."` (root
///   type name, default the kind); `namespaced` (default cluster-scoped).
/// - `plural = "..."`, `singular = "..."`, `shortname = "..."` (repeatable),
///   `category = "..."` (repeatable).
/// - `status = "Type"` (status field and subresource);
///   `scale(spec_replicas_path = "...", status_replicas_path = "...", label_selector_path = "...")`.
/// - `printcolumn(name, type, json_path, description, format, priority)` or kube-derive's
///   JSON form `printcolumn = r#"{"name": .., "type": .., "jsonPath": ..}"#` (repeatable);
///   `selectable = ".spec.field"` (repeatable).
/// - `validation = "CEL"` or `validation(rule, message, message_expression, reason,
///   field_path, optional_old_self)` (repeatable; `rule` is an alias): object-level
///   `x-kubernetes-validations`.
/// - `served = false`, `storage`, `deprecated` / `deprecated = "warning"`.
/// - `derive = "Trait"` (repeatable, extra derives on the root type), `attr = "..."`
///   (repeatable, an attribute on the root type, e.g. `"allow(deprecated)"`), `doc = "..."`,
///   `schema = "derived" | "disabled"`, `label(key, value)` / `annotation(key, value)`
///   on the CRD, `crates(kinform = "...", k8s_openapi = "...", serde = "...")`.
///
/// The spec type should be `pub`: the generated client, lister and informer are `pub` and
/// name the root type, whose visibility is the spec's. `schema = "manual"` (kube-derive's
/// hand-written root schema) has no counterpart: the schema is always derived from the spec
/// and status types, or disabled.
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

/// The group-level accessors of the derived resources in a module, as generated code has them:
/// `client.example_com_v1().foos("ns")` and `factory.example_com().v1().foos().lister()`.
///
/// ```ignore
/// #[kinform::api_group(group = "example.com")]
/// pub mod api {
///     pub mod v1 {
///         use super::*;
///         #[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
///         #[kinform(version = "v1", kind = "Foo", namespaced)]
///         pub struct FooSpec { size: i32 }
///
///         #[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
///         #[kinform(version = "v1", kind = "Bar")]
///         pub struct BarSpec { city: String }
///     }
/// }
///
/// use api::prelude::*;
/// let foos = client.example_com_v1().foos("ns");     // FooClient
/// let bars = factory.example_com().v1().bars().lister();
/// ```
///
/// Goes on an inline module; every `#[derive(CustomResource)]` inside it (at any depth of
/// inline modules) belongs to the group: its `group` may be left out (the attribute gives
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
    let input = proc_macro2::TokenStream::from(input);
    group::expand(args.into(), input.clone())
        .unwrap_or_else(|e| {
            // The module as written stays, so the error is the only one reported.
            let mut out = e.to_compile_error();
            out.extend(input);
            out
        })
        .into()
}
