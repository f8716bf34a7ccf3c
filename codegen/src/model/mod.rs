//! The one intermediate model every reader produces and every emitter prints.
//!
//! API groups -> versions -> resources (this file), and a type graph for schemas that have no
//! Rust type yet (`types`). Readers: CRD YAML, OpenAPI v2, OpenAPI v3, derive input.

mod resource;
pub mod types;

pub use resource::{
    ApiGroup, ApiModel, GroupVersion, PrinterColumn, ResourceDef, RootType, ScalePaths, Scope,
    Subresource, Verb,
};
