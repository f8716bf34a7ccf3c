//! kinform-client's in-place decoders (`client/src/decode/in_place/k8s_1_*.rs`, one file per
//! supported Kubernetes version) are exactly `kinform-gen in-place`'s output for their
//! sources, so they never drift from the generator: 1.35 and 1.36 from the corpus's OpenAPI
//! documents, 1.37 from k8s-openapi's own sources of it (no 1.37 document is in the corpus:
//! `shared/corpus/SOURCES.md`). The reader of k8s-openapi's sources gives the same decoders
//! as the specs for 1.35 and 1.36, which is what makes its 1.37 file trustworthy; the field
//! names the spec reader derives are k8s-openapi's.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use kinform_codegen::emit_in_place_decoders;

/// The workspace root.
fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

/// The corpus's OpenAPI document of Kubernetes `minor`, if it has one.
fn spec(minor: u32) -> Option<PathBuf> {
    let openapi = root().join("../shared/corpus/openapi");
    match minor {
        35 => Some(openapi.join("swagger.json")),
        36 => Some(openapi.join("v1.36/swagger.json")),
        _ => None,
    }
}

/// k8s-openapi's sources of Kubernetes `minor` (`src/v1_37`), of the k8s-openapi the
/// workspace locks, found with `cargo metadata`.
fn k8s_openapi_sources(minor: u32) -> PathBuf {
    static CRATE: OnceLock<PathBuf> = OnceLock::new();
    let krate = CRATE.get_or_init(|| {
        let out = std::process::Command::new(env!("CARGO"))
            .args([
                "metadata",
                "--format-version",
                "1",
                "--offline",
                "--manifest-path",
            ])
            .arg(root().join("Cargo.toml"))
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
            .to_owned()
    });
    krate.join(format!("src/v1_{minor}"))
}

/// The committed file of Kubernetes `minor`.
fn committed(minor: u32) -> (PathBuf, String) {
    let file = root().join(format!("client/src/decode/in_place/k8s_1_{minor}.rs"));
    let text = std::fs::read_to_string(&file).expect("the committed file");
    (file, text)
}

/// The file without its docs, which say where its definitions were read from.
fn body(file: &str) -> &str {
    let at = file.find("\nuse ").expect("the file's first `use`");
    &file[at..]
}

#[test]
fn the_committed_in_place_decoders_are_the_generators_output() {
    for minor in [35, 36, 37] {
        let (input, shown) = match spec(minor) {
            Some(spec) => (spec, format!("../shared/corpus/openapi/... (1.{minor})")),
            None => (
                k8s_openapi_sources(minor),
                format!("<k8s-openapi 0.29 (client/src/decode/in_place/SOURCE.md)>/src/v1_{minor}"),
            ),
        };
        let kubernetes = format!("1.{minor}");
        let emitted =
            emit_in_place_decoders(&input, &kubernetes).expect("the definitions are read");
        let (file, text) = committed(minor);
        assert!(
            emitted == text,
            "{} is out of date; regenerate with `cargo run -p kinform-codegen --features cli \
             --bin kinform-gen -- in-place {shown} --kubernetes {kubernetes} --out \
             client/src/decode/in_place/k8s_1_{minor}.rs`",
            file.display()
        );
        // About what the client needs: pods and their parts among them.
        for needed in [
            "\n    k8s_openapi::api::core::v1::Pod,\n",
            "in_place_struct!(resource k8s_openapi::api::core::v1::Pod {",
            "in_place_struct!(k8s_openapi::api::core::v1::Container {",
            "in_place_struct!(resource k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition {",
            "in_place_struct!(no_default k8s_openapi::api::events::v1::EventSeries {",
            "    \"$ref\" => ref_path,",
            "    \"hostIPC\" => host_ipc,",
            "    \"openAPIV3Schema\" => open_api_v3_schema,",
            "    k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime,",
        ] {
            assert!(emitted.contains(needed), "1.{minor}: missing `{needed}`");
        }
        // The types whose decoders the client writes by hand are not emitted, nor a
        // listable resource that cannot be watched.
        for left_out in [
            "Quantity,",
            "FieldsV1",
            "meta::v1::Time,",
            "ComponentStatus",
        ] {
            assert!(
                !emitted.contains(left_out),
                "1.{minor}: `{left_out}` emitted"
            );
        }
        let header = format!("for Kubernetes v1.{minor}.");
        assert!(emitted.contains(&header), "1.{minor}: its docs name it");
    }
    // Each version's own types: the decoders differ where the versions do.
    let has = |minor, needle: &str| committed(minor).1.contains(needle);
    let workload = "k8s_openapi::api::scheduling::v1alpha1::Workload,";
    assert!(has(35, workload) && !has(36, workload));
    let pod_group = "in_place_struct!(k8s_openapi::api::core::v1::PodSchedulingGroup {";
    assert!(!has(35, pod_group) && has(36, pod_group));
    let eviction = "k8s_openapi::api::lifecycle::v1alpha1::EvictionRequest,";
    assert!(!has(36, eviction) && has(37, eviction));
}

#[test]
fn k8s_openapi_sources_give_the_decoders_the_specs_give() {
    // The committed files of 1.35 and 1.36 are the specs' output (the test above).
    for minor in [35, 36] {
        let kubernetes = format!("1.{minor}");
        let from_spec = committed(minor).1;
        let from_sources =
            emit_in_place_decoders(&k8s_openapi_sources(minor), &kubernetes).expect("read");
        assert!(
            body(&from_spec) == body(&from_sources),
            "1.{minor}: the sources and the spec disagree"
        );
        assert!(from_sources.contains(&format!("sources (`src/v1_{minor}`)")));
    }
}

#[test]
fn inputs_that_are_not_there_or_not_of_the_version_are_errors_naming_them() {
    let err = emit_in_place_decoders("/nonexistent/swagger.json".as_ref(), "1.35").unwrap_err();
    assert!(
        err.to_string().contains("/nonexistent/swagger.json"),
        "{err}"
    );
    let v1_37 = k8s_openapi_sources(37);
    let err = emit_in_place_decoders(&v1_37, "1.36").unwrap_err();
    assert!(err.to_string().contains("src/v1_36"), "{err}");
    let err = emit_in_place_decoders(&v1_37, "v1.37").unwrap_err();
    assert!(err.to_string().contains("`v1.37`"), "{err}");
    // A directory of Rust that is not k8s-openapi's types is refused, naming the file.
    let dir = tempfile::tempdir().expect("a temp dir");
    let src = dir.path().join("v1_37");
    std::fs::create_dir(&src).expect("mkdir");
    std::fs::write(src.join("pod.rs"), "pub struct Pod;\n").expect("write");
    let err = emit_in_place_decoders(&src, "1.37").unwrap_err();
    assert!(err.to_string().contains("pod.rs"), "{err}");
}
