//! Acceptance of issue 22 (clean generated docs): the generator's output for the whole
//! corpus (every CRD of ../shared/corpus/crds and the Kubernetes v1.35 OpenAPI spec, in one
//! temporary crate) passes `cargo clippy -- -D warnings` with every lint of `clippy::all` (as
//! hand-written code of this workspace does) and `cargo doc` with `RUSTDOCFLAGS=-D warnings`:
//! descriptions keep their lists and code without `doc_lazy_continuation`, never become doc
//! tests, never invent intra-doc links or HTML tags.
//!
//! Cost: one temporary crate in the target dir shared with the other slow tests
//! (tests/support/temp_crate.rs), checked (clippy) and documented (`--no-deps`), never built.

#[path = "support/temp_crate.rs"]
mod temp_crate;

use std::path::{Path, PathBuf};

use kinform_codegen::{Generator, Layout};
use temp_crate::TempCrate;

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus")
}

#[test]
fn corpus_output_is_clippy_and_rustdoc_clean() {
    let krate = TempCrate::new("kinform-gen-docs");
    let generator = Generator::new()
        .crd_dir(corpus().join("crds"))
        .openapi(corpus().join("openapi/swagger.json"))
        .layout(Layout::Tree {
            root_file: "mod.rs".to_owned(),
        })
        .out_dir(krate.dir().join("src/generated"));
    generator.generate().expect("the corpus generates");
    krate.write(
        "src/lib.rs",
        "//! kinform-gen's output for the whole corpus.\n\n\
         #![warn(missing_docs, rust_2018_idioms)]\n\npub mod generated;\n",
    );
    krate.cargo_with(&["clippy", "--lib", "--", "-D", "warnings"], &[]);
    krate.cargo_with(&["doc", "--no-deps"], &[("RUSTDOCFLAGS", "-D warnings")]);
}
