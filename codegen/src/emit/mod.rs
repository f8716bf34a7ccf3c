//! Emitters: the [`crate::model`] -> formatted Rust source.

pub mod api_names;
pub mod client;
pub mod format;
pub mod informer;
pub mod modules;
pub mod naming;
pub mod output;
pub mod runtime;
pub mod types;
