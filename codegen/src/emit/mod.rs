//! Emitters: the [`crate::model`] -> formatted Rust source.

pub mod apply;
pub mod client;
pub mod derive;
pub mod format;
pub mod imports;
pub mod in_place;
pub mod informer;
pub mod markdown;
pub mod modules;
pub mod runtime;
pub mod types;
pub mod versions;
