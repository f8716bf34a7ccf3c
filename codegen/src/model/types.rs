//! The type graph of schemas that get generated Rust types (CRDs).
