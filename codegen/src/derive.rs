//! The surface kinform-macros expands through: everything `#[derive(CustomResource)]` and
//! `#[kinform::api_group]` need from the generator, and nothing else.
//!
//! Derived and generated code must be the same code (a derived `Foo` gets the `FooClient`,
//! `FooLister` and `FooInformer` `kinform-gen` writes for a CRD of kind `Foo`), so the macros
//! expand through the generator's emitters rather than a copy of them. They reach them only
//! through this module, as serde_derive reaches its internals through one entry point, so the
//! emitters' and the model's internals can change without touching the macro crate:
//!
//! 1. The macro parses and validates its attributes into a [`DeriveResource`] (it alone can
//!    point at the offending tokens); [`DeriveResource::resource_def`] is its model.
//! 2. [`CratePaths`] says where the runtime crate and k8s-openapi are (`::kinform` and
//!    `::kinform::k8s_openapi` by default). Tokens for macros name every item by its full
//!    path, since a macro cannot add `use` items to the user's module without risking a clash.
//! 3. [`resource_impls`] gives `impl HasMetadata` and `impl Resource` for the root type,
//!    [`resource_items`] its client, lister, informer and factory accessor, [`group_items`] the
//!    group's clientset and informer accessors (for `#[kinform::api_group]`), with the module
//!    names generated code uses ([`version_module`], [`resource_module`]).

use proc_macro2::TokenStream;

pub use crate::emit::derive::{GroupError, GroupItems, VersionItems};
pub use crate::emit::runtime::{PathError, RuntimePaths as CratePaths};
pub use crate::emit::types::ResourceIdentity;
pub use crate::model::{PrinterColumn, ScalePaths, Scope};
pub use crate::read::derive::{DeriveResource, default_plural};

/// `impl HasMetadata` (over the field `metadata`) and `impl Resource` for the root type
/// `name`: the same tokens as for a generated root type with in-place decoders, whose
/// `custom_in_place!` invocation the caller writes.
pub fn resource_impls(
    paths: &CratePaths,
    name: &proc_macro2::Ident,
    metadata: &proc_macro2::Ident,
    id: &ResourceIdentity<'_>,
) -> TokenStream {
    crate::emit::types::resource_impls_in_place(
        paths.runtime(),
        paths.k8s_openapi(),
        name,
        metadata,
        id,
    )
}

/// The typed client, lister and informer of a derived resource (`FooClient`, `FooLister`,
/// `FooInformer`) and its `InformerFactory` accessor trait `FooInformerExt`, naming the root
/// type `object` (which must be in scope where the tokens go).
pub fn resource_items(
    res: &DeriveResource,
    object: TokenStream,
    paths: &CratePaths,
) -> TokenStream {
    crate::emit::derive::resource_items(res, object, paths)
}

/// The group-level items of derived resources, all of API group `group`: what
/// `#[kinform::api_group]` adds to the module it annotates (see [`GroupItems`]).
pub fn group_items(
    group: &str,
    resources: &[DeriveResource],
    paths: &CratePaths,
) -> Result<GroupItems, GroupError> {
    crate::emit::derive::group_items(group, resources, paths)
}

/// The module name generated code gives a version (`v1`, `v1beta1`).
pub fn version_module(version: &str) -> String {
    crate::naming::snake(version)
}

/// The module name generated code gives a resource's client, lister and informer (see
/// [`VersionItems::resources`]).
pub fn resource_module(res: &DeriveResource) -> String {
    crate::emit::derive::resource_module(res)
}
