//! Schema readers: each turns one input format into the shared [`crate::model`].

pub mod openapi;
