//! The committed sources are exactly kinform-gen's output for its inputs: the corpus's 1.35
//! spec, the 1.36 spec (its resources 1.35 lacks) and k8s-openapi's sources of 1.37 (its
//! resources neither spec has): regenerating changes nothing (`kinform-gen openapi --check`),
//! so the crate never drifts from the generator. After a generator change, regenerate with
//! the command in README.md.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use kinform_codegen::{Generator, Layout};

const SPEC: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../shared/corpus/openapi/swagger.json"
);
const SPEC_1_36: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../shared/corpus/openapi/v1.36/swagger.json"
);
const SRC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/src");
const REGENERATE: &str = "the command of generated/README.md (`kinform-gen openapi \
    ../shared/corpus/openapi/swagger.json --later-spec ../shared/corpus/openapi/v1.36/swagger.json \
    --later-k8s-openapi-sources <k8s-openapi>/src/v1_37 --out generated/src --root-file lib.rs \
    --feature-per-group --root-doc-include ../README.md`)";

/// k8s-openapi's sources of Kubernetes 1.37 (`src/v1_37`) of the k8s-openapi the workspace
/// locks, found with `cargo metadata`.
fn k8s_openapi_1_37() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let out = std::process::Command::new(env!("CARGO"))
            .args([
                "metadata",
                "--format-version",
                "1",
                "--offline",
                "--manifest-path",
            ])
            .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/../Cargo.toml"))
            .output()
            .expect("cargo metadata runs");
        assert!(
            out.status.success(),
            "cargo metadata: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let metadata: serde_json::Value =
            serde_json::from_slice(&out.stdout).expect("cargo metadata's JSON");
        let manifest = metadata["packages"]
            .as_array()
            .expect("packages")
            .iter()
            .find(|p| p["name"] == "k8s-openapi")
            .and_then(|p| p["manifest_path"].as_str())
            .expect("the workspace depends on k8s-openapi");
        Path::new(manifest)
            .parent()
            .expect("its directory")
            .join("src/v1_37")
    })
}

/// The options this crate is generated with (the README's command line).
fn generator(out: &Path) -> Generator {
    Generator::new()
        .openapi(SPEC)
        .later_openapi(SPEC_1_36)
        .later_k8s_openapi_sources(k8s_openapi_1_37())
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
