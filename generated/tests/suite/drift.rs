//! The committed sources are exactly kinform-gen's output for the corpus spec: regenerating
//! changes nothing (`kinform-gen openapi --check`), so the crate never drifts from the
//! generator. After a generator change, regenerate with the command in README.md.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use kinform_codegen::{Generator, Layout};

const SPEC: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../shared/corpus/openapi/swagger.json"
);
const SRC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/src");
const REGENERATE: &str = "cargo run -p kinform-codegen --features cli --bin kinform-gen -- openapi \
    ../shared/corpus/openapi/swagger.json --out generated/src --root-file lib.rs \
    --feature-per-group --root-doc-include ../README.md";

/// The options this crate is generated with (the README's command line).
fn generator(out: &Path) -> Generator {
    Generator::new()
        .openapi(SPEC)
        .out_dir(out)
        .layout(Layout::Tree {
            root_file: "lib.rs".to_owned(),
        })
        .feature_per_group(true)
        .root_doc_include("../README.md")
}

fn tree(dir: &Path) -> BTreeMap<PathBuf, String> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, String>) {
        for entry in fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let path = entry.expect("dir entry").path();
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                let text =
                    fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                out.insert(
                    path.strip_prefix(root).expect("under root").to_owned(),
                    text,
                );
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

fn copy_tree(from: &Path, to: &Path) {
    for (rel, text) in tree(from) {
        let path = to.join(rel);
        fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        fs::write(path, text).expect("write");
    }
}

#[test]
fn check_finds_the_committed_sources_up_to_date() {
    let stale = generator(Path::new(SRC)).check().expect("generator runs");
    assert!(
        stale.is_empty(),
        "generated/src is out of date ({} file(s): {stale:?}); regenerate with:\n{REGENERATE}",
        stale.len()
    );
}

#[test]
fn regenerating_into_a_temp_dir_gives_the_committed_tree() {
    let tmp = tempfile::tempdir().expect("tempdir");
    generator(tmp.path()).generate().expect("generator runs");
    let fresh = tree(tmp.path());
    let committed = tree(Path::new(SRC));
    assert!(fresh.len() > 100, "only {} files generated", fresh.len());
    let only_fresh: Vec<_> = fresh
        .keys()
        .filter(|p| !committed.contains_key(*p))
        .collect();
    let only_committed: Vec<_> = committed
        .keys()
        .filter(|p| !fresh.contains_key(*p))
        .collect();
    let differ: Vec<_> = fresh
        .iter()
        .filter(|(p, text)| committed.get(*p).is_some_and(|c| c != *text))
        .map(|(p, _)| p)
        .collect();
    assert!(
        only_fresh.is_empty() && only_committed.is_empty() && differ.is_empty(),
        "missing from generated/src: {only_fresh:?}\nnot generated: {only_committed:?}\n\
         differ: {differ:?}\nregenerate with:\n{REGENERATE}"
    );
}

/// The check can fail: an edited, a deleted and a stale extra generated file are reported.
#[test]
fn check_reports_edited_missing_and_stale_files() {
    let tmp = tempfile::tempdir().expect("tempdir");
    copy_tree(Path::new(SRC), tmp.path());
    let edited = tmp.path().join("apps/v1/deployment_client.rs");
    let mut text = fs::read_to_string(&edited).expect("read");
    text.push_str("// a hand edit\n");
    fs::write(&edited, text).expect("write");
    let deleted = tmp.path().join("core/v1/pod_client.rs");
    fs::remove_file(&deleted).expect("remove");
    let stale_file = tmp.path().join("core/v1/gone.rs");
    let header = fs::read_to_string(Path::new(SRC).join("lib.rs")).expect("lib.rs");
    let header = header.lines().next().expect("header line");
    fs::write(&stale_file, format!("{header}\n")).expect("write");

    let mut stale = generator(tmp.path()).check().expect("generator runs");
    stale.sort();
    let mut want = vec![edited, deleted, stale_file];
    want.sort();
    assert_eq!(stale, want);
}
