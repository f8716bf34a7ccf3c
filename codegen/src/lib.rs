//! kinform-codegen: schema readers -> one model -> Rust emitters.
