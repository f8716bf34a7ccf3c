//! The code generator's suite: readers, emitters, the corpus, the generated code compiled and run, the command line.
//!
//! One test binary per crate: every file here was its own integration test target, each
//! linking the whole dependency graph again (some 80 MB apiece in a debug build). As modules
//! of one target they link once, which keeps CI's disk use and link time small. Run one
//! file's tests by its module path: `cargo test -p <crate> --test suite <module>::`.

#[cfg(feature = "cli")]
mod cli_check;
mod crd_corpus;
mod crd_fixture_behaviour;
mod crd_fixtures;
mod crd_proptest;
mod crd_roundtrip;
mod generated_docs;
mod generated_unused;
mod generator_warnings;
mod hostile_inputs;
mod in_place_drift;
mod layering;
mod openapi_corpus;
mod openapi_emit;

// The support the slow tests share (kinform-macros' suite includes `temp_crate` too).
#[path = "../support/schema_docs.rs"]
mod schema_docs;
#[path = "../support/temp_crate.rs"]
mod temp_crate;
