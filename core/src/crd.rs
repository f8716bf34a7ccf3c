//! CustomResourceDefinitions for `#[derive(CustomResource)]` types.
//!
//! A derived type's `Foo::crd()` runs in the user's program (the schema comes from
//! `schemars` at run time, as kube-derive's `CustomResourceExt::crd` does), so the pieces it
//! needs live in this library rather than in the macro:
//!
//! - [`schema_for`] generates a spec/status schema with schemars and rewrites it into a
//!   *structural* schema, the form apiextensions.k8s.io/v1 requires (Kubernetes'
//!   `ValidateStructural`: every node has a type outside `anyOf`/`oneOf`/`allOf`, no `$ref`,
//!   no `additionalProperties` beside `properties`);
//! - [`custom_resource_definition`] assembles one version's CRD from a [`CrdDescription`]
//!   the macro emits, failing with [`CrdError`], never silently dropping, when a hand-written
//!   schema is not a `JSONSchemaProps`;
//! - [`merge_crds`] joins the single-version CRDs of several modules into one CRD with
//!   exactly one storage version, as kube-core's `merge_crds` does;
//! - [`to_yaml`] prints a CRD for `kubectl apply -f -` (derived types' `Foo::crd_yaml()`).
//!
//! Available with the `derive` feature. Spec and status types derive `schemars::JsonSchema`
//! from schemars 1 (the version re-exported here as [`schemars`]).

mod build;
mod error;
mod merge;
mod structural;
mod yaml;

pub use build::{
    CrdDescription, PrinterColumnDef, ScaleDef, ValidationRuleDef, custom_resource_definition,
    custom_resource_definition_with_root_schema, preserve_unknown_object,
};
pub use error::CrdError;
pub use merge::{MergeError, merge_crds};
pub use structural::{schema_for, structural_schema};
pub use yaml::to_yaml;

/// Re-exported so derived code (and users' `#[schemars(crate = ...)]`) can name it through
/// `kinform`.
pub use schemars;
