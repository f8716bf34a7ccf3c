//! Issue 19, the code generator: it never panics and never emits code that does not parse,
//! whatever its CRD or OpenAPI input; names the API server would reject are errors naming
//! the document and the path of the offending value.
//!
//! - Regression tests for each defect found by the attack: a `$ref` to
//!   `io.k8s.api.core.v1.Wid)get` (panicked), a CRD plural `ü` and an OpenAPI path segment
//!   `}` (produced Rust that does not compile).
//! - Property tests over mutated real inputs (a slice of the v1.35 OpenAPI spec, a corpus
//!   CRD): byte splices anywhere, and hostile strings put where names come from (path
//!   segments, `$ref` targets, kinds, CRD names and property names). Every input the readers
//!   accept goes through the whole generator, and every generated file must parse with `syn`.
//!
//! Cases: 32 per property by default (CI); at length with
//! `PROPTEST_CASES=100000 cargo test -p kinform-codegen --release --test suite hostile_inputs::`.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use kinform_codegen::{GenerateError, Generator, Layout};
use proptest::prelude::*;
use serde_json::{Map, Value};

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus")
}

const CRD_SEED: &str = include_str!("../fixtures/widgets.yaml");

/// Cases per property: `PROPTEST_CASES`, else a CI-sized 32.
fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(32)
}

/// A slice of the real spec: the coordination.k8s.io/v1 and core pods paths, the top-level
/// parameters and every definition they reach.
fn openapi_seed() -> &'static Value {
    static SEED: OnceLock<Value> = OnceLock::new();
    SEED.get_or_init(|| {
        let text = std::fs::read_to_string(corpus().join("openapi/swagger.json")).unwrap();
        let spec: Value = serde_json::from_str(&text).unwrap();
        let paths: Map<String, Value> = spec["paths"]
            .as_object()
            .unwrap()
            .iter()
            .filter(|(p, _)| {
                p.starts_with("/apis/coordination.k8s.io/v1/")
                    || p.starts_with("/api/v1/namespaces/{namespace}/pods")
            })
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let defs = spec["definitions"].as_object().unwrap();
        let mut todo: Vec<String> = Vec::new();
        refs(&Value::Object(paths.clone()), &mut todo);
        let mut kept = Map::new();
        while let Some(name) = todo.pop() {
            if kept.contains_key(&name) {
                continue;
            }
            if let Some(d) = defs.get(&name) {
                refs(d, &mut todo);
                kept.insert(name, d.clone());
            }
        }
        serde_json::json!({
            "swagger": spec["swagger"],
            "info": spec["info"],
            "parameters": spec["parameters"],
            "paths": paths,
            "definitions": kept,
        })
    })
}

/// Definition names of every `$ref` under `v`.
fn refs(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                if k == "$ref"
                    && let Some(name) = x.as_str().and_then(|r| r.strip_prefix("#/definitions/"))
                {
                    out.push(name.to_owned());
                }
                refs(x, out);
            }
        }
        Value::Array(a) => a.iter().for_each(|x| refs(x, out)),
        _ => {}
    }
}

/// Runs the whole generator on `text` written as `name`; every file it renders must parse.
fn generate(name: &str, text: &str, openapi: bool) -> Result<(), GenerateError> {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join(name);
    std::fs::write(&file, text).unwrap();
    let generator = if openapi {
        Generator::new().openapi(&file)
    } else {
        Generator::new().crd(&file)
    };
    for layout in [
        Layout::Tree {
            root_file: "mod.rs".to_owned(),
        },
        Layout::SingleFile {
            file_name: "gen.rs".to_owned(),
        },
    ] {
        for f in generator.clone().layout(layout).render()? {
            match syn::parse_file(&f.contents) {
                Ok(file) => unique_items(&f.path, &file.items),
                Err(e) => panic!("{} does not parse: {e}\n{}", f.path.display(), f.contents),
            }
        }
    }
    Ok(())
}

/// No two items of one module share a name in the same namespace (what a name that collides
/// after conversion to Rust would produce: code that parses but does not compile).
fn unique_items(path: &Path, items: &[syn::Item]) {
    let mut seen = std::collections::BTreeSet::new();
    for item in items {
        let key = match item {
            syn::Item::Struct(i) => Some(("type", i.ident.to_string())),
            syn::Item::Enum(i) => Some(("type", i.ident.to_string())),
            syn::Item::Trait(i) => Some(("type", i.ident.to_string())),
            syn::Item::Type(i) => Some(("type", i.ident.to_string())),
            syn::Item::Mod(i) => Some(("type", i.ident.to_string())),
            syn::Item::Fn(i) => Some(("value", i.sig.ident.to_string())),
            syn::Item::Const(i) => Some(("value", i.ident.to_string())),
            syn::Item::Static(i) => Some(("value", i.ident.to_string())),
            _ => None,
        };
        if let Some(key) = key {
            assert!(
                seen.insert(key.clone()),
                "{}: {} `{}` is defined twice",
                path.display(),
                key.0,
                key.1
            );
        }
        if let syn::Item::Mod(m) = item
            && let Some((_, content)) = &m.content
        {
            unique_items(path, content);
        }
    }
}

fn must_fail(name: &str, text: &str, openapi: bool, wanted: &[&str]) {
    let err = generate(name, text, openapi)
        .expect_err("rejected")
        .to_string();
    for w in wanted {
        assert!(err.contains(w), "{err:?} lacks {w:?}");
    }
}

fn with_plural(plural: &str) -> String {
    CRD_SEED.replace("plural: widgets", &format!("plural: {plural:?}"))
}

#[test]
fn seeds_generate() {
    generate("crd.yaml", CRD_SEED, false).unwrap();
    generate("spec.json", &openapi_seed().to_string(), true).unwrap();
}

#[test]
fn a_ref_that_is_not_a_rust_path_is_an_error_naming_the_operation() {
    let text = openapi_seed()
        .to_string()
        .replace("io.k8s.api.core.v1.Pod\"", "io.k8s.api.core.v1.Wid)get\"");
    must_fail(
        "spec.json",
        &text,
        true,
        &[
            "spec.json",
            "/paths/~1api~1v1~1namespaces~1{namespace}~1pods",
            "Wid)get",
        ],
    );
}

#[test]
fn a_path_segment_that_is_not_a_name_is_an_error_naming_the_path() {
    let text = openapi_seed()
        .to_string()
        .replace("/leases/{name}\"", "/}/{name}\"");
    must_fail(
        "spec.json",
        &text,
        true,
        &[
            "spec.json",
            "/paths/~1apis~1coordination.k8s.io~1v1~1namespaces~1{namespace}~1}~1{name}",
            "\"}\"",
        ],
    );
    let text = openapi_seed()
        .to_string()
        .replace("/apis/coordination.k8s.io/", "/apis/coördination/");
    must_fail("spec.json", &text, true, &["group \"coördination\""]);
}

#[test]
fn a_crd_name_the_api_server_rejects_is_an_error_naming_the_document_and_path() {
    must_fail(
        "crd.yaml",
        &with_plural("ü"),
        false,
        &["crd.yaml", "document 0", ".spec.names.plural", "\"ü\""],
    );
    must_fail(
        "crd.yaml",
        &with_plural("}"),
        false,
        &[".spec.names.plural"],
    );
    must_fail(
        "crd.yaml",
        &CRD_SEED.replace("kind: Widget\n", "kind: \"Wid)get\"\n"),
        false,
        &[".spec.names.kind"],
    );
    must_fail(
        "crd.yaml",
        &CRD_SEED.replace("  - name: v1\n", "  - name: \"v1}\"\n"),
        false,
        &[".spec.versions[0].name"],
    );
    must_fail(
        "crd.yaml",
        &CRD_SEED.replace("group: example.com", "group: \"exämple.com\""),
        false,
        &[".spec.group"],
    );
}

/// Strings where the attack put its names: punctuation, non-ASCII letters, keywords,
/// digits first, Rust delimiters.
fn hostile_name() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-zA-Z0-9ü}{)(\\[\\]<>#:.,;'\"`$ _/~-]{0,12}",
        Just("type".to_owned()),
        Just("self".to_owned()),
        Just("Self".to_owned()),
        Just("crate".to_owned()),
        Just("_".to_owned()),
        Just("r#type".to_owned()),
        Just("1a".to_owned()),
        Just("}".to_owned()),
        Just("ü".to_owned()),
    ]
}

/// Replaces the `n`-th occurrence (mod the count) of `what` in `text` with `with`.
fn replace_nth(text: &str, what: &str, n: usize, with: &str) -> String {
    let hits: Vec<usize> = text.match_indices(what).map(|(i, _)| i).collect();
    if hits.is_empty() {
        return text.to_owned();
    }
    let at = hits[n % hits.len()];
    format!("{}{with}{}", &text[..at], &text[at + what.len()..])
}

fn splice(seed: &str, cut: usize, len: usize, insert: &str) -> String {
    let mut bytes = seed.as_bytes().to_vec();
    let cut = cut % (bytes.len() + 1);
    let end = (cut + len).min(bytes.len());
    bytes.splice(cut..end, insert.bytes());
    String::from_utf8_lossy(&bytes).into_owned()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn mutated_openapi_never_panics_and_parses(
        cut in any::<usize>(),
        len in 0usize..40,
        insert in "[ -~]{0,12}",
    ) {
        let text = splice(&openapi_seed().to_string(), cut, len, &insert);
        let _ = generate("spec.json", &text, true);
    }

    #[test]
    fn hostile_openapi_names_never_panic_and_parse(
        target in 0usize..4,
        n in any::<usize>(),
        name in hostile_name(),
    ) {
        let text = openapi_seed().to_string();
        let (what, with) = match target {
            0 => ("io.k8s.api.coordination.v1.Lease\"", format!("io.k8s.api.coordination.v1.{name}\"")),
            1 => ("/leases", format!("/{name}")),
            2 => ("\"kind\":\"Lease\"", format!("\"kind\":{}", Value::String(name.clone()))),
            _ => ("coordination.k8s.io", name.clone()),
        };
        let _ = generate("spec.json", &replace_nth(&text, what, n, &with), true);
    }

    #[test]
    fn mutated_crds_never_panic_and_parse(
        cut in any::<usize>(),
        len in 0usize..40,
        insert in "[ -~\n]{0,12}",
    ) {
        let _ = generate("crd.yaml", &splice(CRD_SEED, cut, len, &insert), false);
    }

    #[test]
    fn hostile_crd_names_never_panic_and_parse(
        target in 0usize..6,
        n in any::<usize>(),
        name in hostile_name(),
    ) {
        let quoted = Value::String(name.clone()).to_string();
        let (what, with) = match target {
            0 => ("plural: widgets", format!("plural: {quoted}")),
            1 => ("kind: Widget\n", format!("kind: {quoted}\n")),
            2 => ("name: v1\n", format!("name: {quoted}\n")),
            3 => ("group: example.com", format!("group: {quoted}")),
            // A property name.
            4 => ("size:", format!("{quoted}:")),
            _ => ("type: string", format!("type: string\n                enum: [{quoted}]")),
        };
        let _ = generate("crd.yaml", &replace_nth(CRD_SEED, what, n, &with), false);
    }
}
