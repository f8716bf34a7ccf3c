//! Readers: schema sources (CRD YAML, OpenAPI, k8s-openapi's sources) -> the [`crate::model`].

pub mod crd;
pub mod crd_error;
pub mod crd_schema;
pub mod derive;
pub mod k8s_sources;
pub mod names;
pub mod openapi;
pub(crate) mod stack;
pub mod yaml;
