//! Issue 22 (and 18): the generator says what it leaves out. A CRD directory holding a file
//! that is not YAML, an empty file, a document that is not a CRD and a CRD with an unserved
//! and a deprecated version comes back with one [`Warning`] each, which `kinform-gen` prints;
//! filters that match nothing are warnings, and a run that leaves nothing to generate is an
//! error that says why.

use std::path::{Path, PathBuf};
use std::process::Command;

use kinform_codegen::{GenerateError, Generator, Warning};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// A CRD directory: widgets (v1alpha1 unserved, v1beta1 deprecated), gadgets (with a
/// Namespace document), a README and an empty YAML file.
fn crd_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for f in ["widgets.yaml", "gadgets.yaml"] {
        std::fs::copy(fixtures().join(f), dir.path().join(f)).unwrap();
    }
    std::fs::write(dir.path().join("README.md"), "# CRDs\n").unwrap();
    std::fs::write(dir.path().join("empty.yaml"), "# nothing\n---\n").unwrap();
    dir
}

#[test]
fn everything_left_out_is_a_warning() {
    let dir = crd_dir();
    let out = tempfile::tempdir().unwrap();
    let report = Generator::new()
        .crd_dir(dir.path())
        .out_dir(out.path())
        .generate_report()
        .unwrap();
    assert!(!report.files.is_empty());
    let w = &report.warnings;
    assert!(
        w.contains(&Warning::IgnoredFile {
            file: dir.path().join("README.md"),
            reason: "not a .yaml, .yml or .json file".to_owned(),
        }),
        "{w:#?}"
    );
    assert!(
        w.contains(&Warning::IgnoredFile {
            file: dir.path().join("empty.yaml"),
            reason: "no YAML document".to_owned(),
        }),
        "{w:#?}"
    );
    assert!(
        w.iter().any(
            |x| matches!(x, Warning::NotACrd { kind, document: 1, .. } if kind == "Namespace")
        ),
        "{w:#?}"
    );
    assert!(
        w.contains(&Warning::UnservedVersion {
            crd: "widgets.example.com".to_owned(),
            version: "v1alpha1".to_owned(),
        }),
        "{w:#?}"
    );
    assert!(
        w.iter().any(
            |x| matches!(x, Warning::DeprecatedVersion { version, plural, message: Some(m), .. }
            if version == "v1beta1" && plural == "widgets" && m.contains("deprecated"))
        ),
        "{w:#?}"
    );
    assert_eq!(w.len(), 5, "{w:#?}");
    // The library's plain entry points still work and drop nothing else.
    assert_eq!(
        Generator::new()
            .crd_dir(dir.path())
            .out_dir(out.path())
            .check_report()
            .unwrap()
            .warnings,
        *w
    );
}

#[test]
fn filters_that_match_nothing_are_warnings_and_an_empty_result_is_an_error() {
    let dir = crd_dir();
    let report = Generator::new()
        .crd_dir(dir.path())
        .group("example.com")
        .group("nope.example.com")
        .version("v9")
        .version("example.com/v1")
        .render_report()
        .unwrap();
    let w = report.1;
    assert!(w.contains(&Warning::FilterMatchesNothing {
        option: "group",
        value: "nope.example.com".to_owned(),
    }));
    assert!(w.contains(&Warning::FilterMatchesNothing {
        option: "version",
        value: "v9".to_owned(),
    }));

    let err = Generator::new()
        .crd_dir(dir.path())
        .group("nope.example.com")
        .render()
        .unwrap_err();
    assert!(
        matches!(err, GenerateError::Empty { filtered: true, .. }),
        "{err}"
    );
    let msg = err.to_string();
    assert!(
        msg.contains("nothing to generate")
            && msg.contains("--group nope.example.com matches nothing"),
        "{msg}"
    );

    let only_docs = tempfile::tempdir().unwrap();
    std::fs::write(only_docs.path().join("notes.txt"), "x").unwrap();
    std::fs::write(
        only_docs.path().join("ns.yaml"),
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n",
    )
    .unwrap();
    let err = Generator::new()
        .crd_dir(only_docs.path())
        .render()
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("define no served resource")
            && err.contains("notes.txt: not a .yaml")
            && err.contains("is a Namespace (apiVersion v1), not a CustomResourceDefinition"),
        "{err}"
    );
}

#[test]
fn kinform_gen_prints_warnings_and_fails_on_an_empty_result() {
    let dir = crd_dir();
    let out = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_kinform-gen"))
            .arg("crd")
            .arg(dir.path())
            .arg("--out")
            .arg(out.path())
            .args(args)
            .output()
            .unwrap()
    };
    let ok = run(&[]);
    let stderr = String::from_utf8_lossy(&ok.stderr);
    assert!(ok.status.success(), "{stderr}");
    assert!(
        stderr.contains(
            "kinform-gen: warning: CRD widgets.example.com: version v1alpha1 is not served: skipped"
        ),
        "{stderr}"
    );
    assert!(stderr.contains("README.md: not a .yaml"), "{stderr}");
    assert_eq!(
        stderr.matches("kinform-gen: warning:").count(),
        5,
        "{stderr}"
    );

    let empty = run(&["--group", "nope.example.com"]);
    let stderr = String::from_utf8_lossy(&empty.stderr);
    assert_eq!(empty.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("error: nothing to generate"), "{stderr}");
}

/// Issue 47: a directory of 300 manifests that are not CRDs is summed up in lines a terminal
/// shows whole, counted by kind, with the right article; an OpenAPI document without
/// Kubernetes operations names the file and what was expected.
#[test]
fn messages_say_what_was_expected_and_fit_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..300 {
        let kind = [
            "Deployment",
            "Service",
            "Application",
            "ConfigMap",
            "Ingress",
        ][i % 5];
        std::fs::write(
            dir.path().join(format!("m{i:03}.yaml")),
            format!("apiVersion: v1\nkind: {kind}\nmetadata: {{name: m{i}}}\n"),
        )
        .unwrap();
    }
    let err = Generator::new()
        .crd_dir(dir.path())
        .render()
        .unwrap_err()
        .to_string();
    assert!(
        err.lines()
            .all(|l| l.len() < 200 + dir.path().as_os_str().len()),
        "{err}"
    );
    assert!(err.len() < 1_000, "{err}");
    assert!(
        err.contains("expected CustomResourceDefinitions of apiextensions.k8s.io/v1"),
        "{err}"
    );
    assert!(
        err.contains("300 documents are not CustomResourceDefinitions: 60 Application, 60 ConfigMap, 60 Deployment, 120 of 2 other kinds; the first: "),
        "{err}"
    );
    std::fs::write(
        dir.path().join("one.yaml"),
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\n",
    )
    .unwrap();
    let one = Generator::new()
        .crd(dir.path().join("one.yaml"))
        .render()
        .unwrap_err()
        .to_string();
    assert!(
        one.contains("document 0 is an Application (apiVersion argoproj.io/v1alpha1), not a CustomResourceDefinition"),
        "{one}"
    );

    let spec = dir.path().join("petstore.json");
    std::fs::write(
        &spec,
        r#"{"openapi": "3.0.0", "paths": {"/pets": {"get": {"responses": {}}}}}"#,
    )
    .unwrap();
    let err = Generator::new()
        .openapi(&spec)
        .render()
        .unwrap_err()
        .to_string();
    assert!(
        err.contains(&format!(
            "{}: no operation carries x-kubernetes-action and x-kubernetes-group-version-kind (expected the OpenAPI document of a Kubernetes API server",
            spec.display()
        )),
        "{err}"
    );
}
