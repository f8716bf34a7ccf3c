//! The code generator's suite: readers, emitters, the corpus, the generated code compiled
//! and run, the command line.
//!
//! The crate's one integration test target; why one, and how to run a module's tests:
//! ARCHITECTURE.md, "Integration tests".

mod architecture;
#[cfg(feature = "cli")]
mod cli_check;
mod crd_corpus;
mod crd_edges;
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
mod module_circles;
mod openapi_corpus;
mod openapi_emit;

// The support the slow tests share (kinform-macros' suite includes `temp_crate` too).
#[path = "../support/schema_docs.rs"]
mod schema_docs;
#[path = "../support/temp_crate.rs"]
mod temp_crate;
