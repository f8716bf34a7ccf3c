//! Acceptance of issue 22 (clean generated docs): the generator's output for the whole
//! corpus (every CRD of ../shared/corpus/crds and the Kubernetes v1.35 OpenAPI spec, in one
//! temporary crate) passes `cargo clippy -- -D warnings` with every lint of `clippy::all` (as
//! hand-written code of this workspace does) and `cargo doc` with `RUSTDOCFLAGS=-D warnings`:
//! descriptions keep their lists and code without `doc_lazy_continuation`, never become doc
//! tests, never invent intra-doc links or HTML tags.
//!
//! Cost: one temporary crate in the target dir shared with the other slow tests
//! (tests/support/temp_crate.rs), checked (clippy) and documented (`--no-deps`), never built.

use std::path::{Path, PathBuf};

use crate::temp_crate::TempCrate;
use kinform_codegen::{Generator, Layout};

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
    let files = generator.generate().expect("the corpus generates");
    let mut fences = 0;
    for file in &files {
        fences += no_doc_tests(file);
    }
    assert!(fences > 0, "the corpus has code in its descriptions");
    krate.write(
        "src/lib.rs",
        "//! kinform-gen's output for the whole corpus.\n\n\
         #![warn(missing_docs, rust_2018_idioms)]\n\npub mod generated;\n",
    );
    krate.cargo_with(&["clippy", "--lib", "--", "-D", "warnings"], &[]);
    krate.cargo_with(
        &["doc", "--no-deps", "--document-private-items"],
        &[("RUSTDOCFLAGS", "-D warnings")],
    );
}

/// Every code fence opened in the docs of `file` names a language other than Rust, so no
/// description becomes a doc test (the issue found 9 empty ones); returns how many.
fn no_doc_tests(file: &Path) -> usize {
    let text = std::fs::read_to_string(file).unwrap();
    let mut open: Option<String> = None;
    let mut count = 0;
    for (n, line) in text.lines().enumerate() {
        let Some(doc) = line
            .trim_start()
            .strip_prefix("///")
            .or_else(|| line.trim_start().strip_prefix("//!"))
        else {
            continue;
        };
        let doc = doc.trim();
        let fence = doc.len() - doc.trim_start_matches(['`', '~']).len();
        if fence < 3 {
            continue;
        }
        match &open {
            Some(opener)
                if doc.starts_with(opener.as_str()) && doc.trim_matches(['`', '~']).is_empty() =>
            {
                open = None;
            }
            Some(_) => {}
            None => {
                let info = doc[fence..].trim();
                if info.contains('`') {
                    continue; // an inline code span
                }
                assert!(
                    !info.is_empty() && info != "rust",
                    "{}:{}: a doc test: {line}",
                    file.display(),
                    n + 1
                );
                count += 1;
                open = Some(doc[..fence].to_owned());
            }
        }
    }
    count
}
