//! Acceptance: the types generated for every CRD of ../shared/corpus/crds compile with
//! `-D warnings` (and `missing_docs`) in a separate crate that depends only on the kinform
//! runtime, and every example manifest of ../shared/corpus/examples survives
//! deserialize -> serialize through its generated type: the output is the input, except for
//! properties the schema defaults (and `metadata: {}` on objects written without metadata).
//!
//! The test crate lives under the workspace `target/` with its own target dir, so repeated
//! runs only recompile the generated code.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use kinform_codegen::emit::types::{TypesConfig, emit_crd_types};
use kinform_codegen::read::crd::read_crds;
use kinform_codegen::read::yaml::parse_stream;
use serde_json::{Value, json};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_owned()
}

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus")
}

fn write_if_changed(path: &Path, content: &str) {
    if std::fs::read_to_string(path).ok().as_deref() != Some(content) {
        std::fs::write(path, content).unwrap();
    }
}

/// Schemas by (apiVersion, kind), read from the raw CRDs (independently of the reader).
fn schemas() -> BTreeMap<(String, String), Value> {
    let mut out = BTreeMap::new();
    let mut files: Vec<PathBuf> = Vec::new();
    for dir in std::fs::read_dir(corpus().join("crds")).unwrap() {
        for f in std::fs::read_dir(dir.unwrap().path()).unwrap() {
            files.push(f.unwrap().path());
        }
    }
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        for doc in parse_stream(&f, &text).unwrap() {
            let Some(crd) = doc.value else { continue };
            let group = crd["spec"]["group"].as_str().unwrap();
            let kind = crd["spec"]["names"]["kind"].as_str().unwrap();
            for v in crd["spec"]["versions"].as_array().unwrap() {
                let av = format!("{group}/{}", v["name"].as_str().unwrap());
                out.insert(
                    (av, kind.to_owned()),
                    v["schema"]["openAPIV3Schema"].clone(),
                );
            }
        }
    }
    out
}

/// The driver crate: generated types + a dispatch from (apiVersion, kind) to the type.
fn write_test_crate(dir: &Path) {
    let set = read_crds([corpus().join("crds")]).expect("corpus reads");
    let code = emit_crd_types(&set.types, &TypesConfig::default()).expect("emits");
    std::fs::create_dir_all(dir.join("src")).unwrap();
    let runtime = workspace().join("runtime");
    write_if_changed(
        &dir.join("Cargo.toml"),
        &format!(
            "[package]\nname = \"kinform-crd-roundtrip\"\nversion = \"0.0.0\"\nedition = \"2024\"\n\
             publish = false\n\n[workspace]\n\n[dependencies]\nkinform = {{ path = {:?} }}\n\n\
             [profile.dev]\ndebug = false\nincremental = false\n",
            runtime.display().to_string()
        ),
    );
    if !dir.join("Cargo.lock").exists()
        && let Ok(lock) = std::fs::read_to_string(workspace().join("Cargo.lock"))
    {
        write_if_changed(&dir.join("Cargo.lock"), &lock);
    }
    write_if_changed(&dir.join("src/crds.rs"), &code);
    let arms: String = set
        .types
        .iter()
        .map(|t| {
            format!(
                "        ({:?}, {:?}) => Some(rt::<crds::{}>(value)),\n",
                format!("{}/{}", t.group, t.version),
                t.kind,
                t.rust_path()
            )
        })
        .collect();
    let lib = format!(
        "#![deny(warnings, missing_docs)]\n//! Generated CRD types under test.\n\n\
         /// The generated types.\n\
         pub mod crds;\n\n\
         use kinform::k8s_openapi::serde_json::{{self, Value}};\n\n\
         /// Round-trips `value` through the generated type of (apiVersion, kind).\n\
         pub fn roundtrip(api_version: &str, kind: &str, value: Value) -> Option<Result<Value, String>> {{\n\
         \x20   match (api_version, kind) {{\n{arms}        _ => None,\n    }}\n}}\n\n\
         fn rt<K: kinform::Resource>(value: Value) -> Result<Value, String> {{\n\
         \x20   let typed: K = serde_json::from_value(value).map_err(|e| e.to_string())?;\n\
         \x20   serde_json::to_value(&typed).map_err(|e| e.to_string())\n}}\n"
    );
    write_if_changed(&dir.join("src/lib.rs"), &lib);
    let main = "//! Reads {apiVersion, kind, object} lines, writes {ok}|{err}|{skip} lines.\n\
        use std::io::BufRead;\n\
        use kinform::k8s_openapi::serde_json::{self, Value, json};\n\n\
        fn main() {\n\
        \x20   for line in std::io::stdin().lock().lines() {\n\
        \x20       let line = line.expect(\"stdin\");\n\
        \x20       let req: Value = serde_json::from_str(&line).expect(\"request\");\n\
        \x20       let av = req[\"apiVersion\"].as_str().unwrap_or_default();\n\
        \x20       let kind = req[\"kind\"].as_str().unwrap_or_default();\n\
        \x20       let out = match kinform_crd_roundtrip::roundtrip(av, kind, req[\"object\"].clone()) {\n\
        \x20           None => json!({\"skip\": true}),\n\
        \x20           Some(Ok(v)) => json!({\"ok\": v}),\n\
        \x20           Some(Err(e)) => json!({\"err\": e}),\n\
        \x20       };\n\
        \x20       println!(\"{out}\");\n\
        \x20   }\n\
        }\n";
    write_if_changed(&dir.join("src/main.rs"), main);
}

fn child<'a>(schema: Option<&'a Value>, key: &str) -> Option<&'a Value> {
    let s = schema?;
    s.get("properties")
        .and_then(|p| p.get(key))
        .or_else(|| s.get("additionalProperties").filter(|a| a.is_object()))
}

/// Compares the input with the round-tripped output; returns the differences.
fn compare(
    path: &str,
    input: &Value,
    output: &Value,
    schema: Option<&Value>,
    diffs: &mut Vec<String>,
) {
    match (input, output) {
        (Value::Object(i), Value::Object(o)) => {
            for (k, vi) in i {
                let p = format!("{path}.{k}");
                match o.get(k) {
                    Some(vo) => compare(&p, vi, vo, child(schema, k), diffs),
                    None => diffs.push(format!("{p}: dropped")),
                }
            }
            for (k, vo) in o {
                if i.contains_key(k) {
                    continue;
                }
                let defaulted = child(schema, k).is_some_and(|c| c.get("default").is_some());
                let empty_meta = path.is_empty() && k == "metadata" && *vo == json!({});
                if !defaulted && !empty_meta {
                    diffs.push(format!("{path}.{k}: added {vo}"));
                }
            }
        }
        (Value::Array(i), Value::Array(o)) if i.len() == o.len() => {
            let items = schema.and_then(|s| s.get("items"));
            for (n, (vi, vo)) in i.iter().zip(o).enumerate() {
                compare(&format!("{path}[{n}]"), vi, vo, items, diffs);
            }
        }
        (Value::Number(i), Value::Number(o)) if i.as_f64() == o.as_f64() => {}
        // A quantity written as a YAML number is a string on the wire after a round trip
        // (resource.Quantity always marshals to a string).
        (Value::Number(i), Value::String(o))
            if schema.is_some_and(|s| s.get("x-kubernetes-int-or-string").is_some())
                && i.to_string() == *o => {}
        (i, o) if i == o => {}
        (i, o) => diffs.push(format!("{path}: {i} became {o}")),
    }
}

fn examples() -> Vec<(String, Value)> {
    let mut files: Vec<PathBuf> = Vec::new();
    for dir in std::fs::read_dir(corpus().join("examples")).unwrap() {
        for f in std::fs::read_dir(dir.unwrap().path()).unwrap() {
            files.push(f.unwrap().path());
        }
    }
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        for doc in parse_stream(&f, &text).unwrap() {
            if let Some(v) = doc.value {
                let name = format!(
                    "{}#{}",
                    f.strip_prefix(corpus()).unwrap().display(),
                    doc.index
                );
                out.push((name, v));
            }
        }
    }
    out
}

#[test]
fn generated_types_compile_and_round_trip_every_example() {
    let base = workspace().join("target/crd-roundtrip");
    let dir = base.join("crate");
    write_test_crate(&dir);
    let mut build = Command::new(env!("CARGO"));
    build
        .args(["build", "--offline", "--quiet", "--manifest-path"])
        .arg(dir.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", base.join("target"))
        .env("RUSTFLAGS", "-D warnings")
        .env_remove("CARGO_ENCODED_RUSTFLAGS");
    let status = build.status().expect("cargo runs");
    assert!(
        status.success(),
        "the generated crate does not compile: {}",
        dir.display()
    );

    let schemas = schemas();
    let mut requests = Vec::new();
    for (name, v) in examples() {
        let av = v["apiVersion"].as_str().unwrap_or_default().to_owned();
        let kind = v["kind"].as_str().unwrap_or_default().to_owned();
        // cert-manager's Issuer has no CRD in the corpus; it shares ClusterIssuer's schema.
        let kind = if av == "cert-manager.io/v1" && kind == "Issuer" {
            "ClusterIssuer".to_owned()
        } else {
            kind
        };
        requests.push((name, av, kind, v));
    }
    let mut child = Command::new(base.join("target/debug/kinform-crd-roundtrip"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("driver runs");
    let mut stdin = child.stdin.take().unwrap();
    let input: String = requests
        .iter()
        .map(|(_, av, kind, v)| {
            format!("{}\n", json!({"apiVersion": av, "kind": kind, "object": v}))
        })
        .collect();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    let lines: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), requests.len());

    let mut failures = Vec::new();
    let mut checked = 0;
    for ((name, av, kind, input), result) in requests.iter().zip(&lines) {
        if result.get("skip").is_some() {
            assert!(
                !schemas.contains_key(&(av.clone(), kind.clone())),
                "{name}: {av} {kind} has a CRD but no generated type"
            );
            continue;
        }
        if let Some(e) = result.get("err") {
            failures.push(format!("{name}: does not deserialize: {e}"));
            continue;
        }
        checked += 1;
        let mut output = result["ok"].clone();
        if output["kind"] != input["kind"] {
            output["kind"] = input["kind"].clone(); // the Issuer alias above
        }
        let mut diffs = Vec::new();
        compare(
            "",
            input,
            &output,
            schemas.get(&(av.clone(), kind.clone())),
            &mut diffs,
        );
        for d in diffs {
            failures.push(format!("{name}: {d}"));
        }
    }
    assert!(checked >= 30, "only {checked} documents round-tripped");
    assert!(
        failures.is_empty(),
        "{} differences:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn the_comparison_sees_drops_additions_and_changes() {
    let schema = json!({"properties": {"spec": {"properties": {
        "d": {"type": "integer", "default": 1},
        "q": {"x-kubernetes-int-or-string": true}
    }}}});
    let input = json!({"spec": {"a": 1, "b": [1, 2], "q": 2}});
    let mut diffs = Vec::new();
    compare(
        "",
        &input,
        &json!({"spec": {"a": 1.0, "b": [1, 2], "d": 1, "q": "2"}, "metadata": {}}),
        Some(&schema),
        &mut diffs,
    );
    assert!(diffs.is_empty(), "{diffs:?}");
    compare(
        "",
        &input,
        &json!({"spec": {"b": [1, 3], "q": 2, "x": 0}}),
        Some(&schema),
        &mut diffs,
    );
    assert_eq!(
        diffs,
        [
            ".spec.a: dropped",
            ".spec.b[1]: 2 became 3",
            ".spec.x: added 0"
        ]
    );
}
