//! `#[derive(CustomResource)]` for kinform. Expands through `kinform-codegen`'s emitters so
//! derived and generated code are the same code.
