//! `kinform-gen` command line.
fn main() {}
