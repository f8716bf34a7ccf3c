//! Emitters: the [`crate::model`] -> formatted Rust source.

pub mod format;
pub mod naming;
pub mod types;
