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
