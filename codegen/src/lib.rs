//! kinform-codegen: schema readers -> one model -> Rust emitters.
//!
//! Readers ([`read`]: CRD YAML, OpenAPI v2/v3, derive input) produce one [`model::ApiModel`]
//! plus a type graph; the emitters (private) only print the model, formatted with
//! prettyplease and marked `@generated`. Every Rust name is chosen by [`naming`]. The model
//! and the readers never import the emitters.
//!
//! Front ends, each with its own narrow entry point:
//!
//! - [`Generator`]: the builder for `build.rs` and the `kinform-gen` binary (CRD files or an
//!   OpenAPI spec in, a module tree or one `include!`able file out).
//! - [`derive`]: the surface kinform-macros expands through (`#[derive(CustomResource)]`,
//!   `#[kinform::api_group]`).
//! - [`emit_crd_types`] / [`emit_type_module`]: the CRD type emitter alone, for tools that want
//!   the Rust types of CRDs without clients.

pub mod derive;
mod emit;
pub mod generator;
pub mod model;
pub mod naming;
pub mod read;

pub use emit::format::FormatError;
pub use emit::modules::{GeneratedFile, Layout};
pub use emit::runtime::PathError;
pub use emit::types::{TypesConfig, emit_crd_types, emit_type_module};
pub use generator::{GenerateError, Generator};
