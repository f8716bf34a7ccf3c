//! The model and the readers never import the emitters (ARCHITECTURE.md, `codegen/`): a
//! reader produces the model, an emitter prints it, and names come from `crate::naming`,
//! which both use. This test reads the sources, so a new `use crate::emit::...` in `model/`
//! or `read/` fails here before review.

use std::fs;
use std::path::Path;

use super::module_circles::rust_files;

#[test]
fn model_and_readers_do_not_import_emitters() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src.join("model"), &mut files);
    rust_files(&src.join("read"), &mut files);
    assert!(files.len() > 5, "found the sources: {files:?}");
    let mut offenders = Vec::new();
    for file in &files {
        let text = fs::read_to_string(file).expect("readable source");
        for (n, line) in text.lines().enumerate() {
            if line.contains("emit::") && !line.trim_start().starts_with("//") {
                offenders.push(format!("{}:{}: {}", file.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "imports of the emitters:\n{}",
        offenders.join("\n")
    );
}
