//! kinform-codegen: schema readers -> one model -> Rust emitters.
//!
//! Readers (CRD YAML, OpenAPI v2/v3, derive input) produce one [`model::ApiModel`] plus a type
//! graph; emitters only print the model, formatted with prettyplease and marked `@generated`.

pub mod emit;
pub mod generator;
pub mod model;
pub mod naming;
pub mod read;

pub use emit::modules::{GeneratedFile, Layout};
pub use generator::{GenerateError, Generator};
