//! Round trip: derived types -> `crd()` -> YAML -> kinform-codegen's CRD reader and type
//! emitter -> generated types compiled in a separate crate; example objects serialize to
//! the same JSON through the derived and the generated types, and the generated output
//! deserializes back into the derived type unchanged.
//!
//! The generated crate is a temporary crate of codegen's tests/support/temp_crate.rs (one
//! target dir shared with codegen's slow tests), so repeated runs only recompile the
//! generated code.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use kinform::CustomResource;
use kinform_codegen::read::crd::read_crd_str;
use kinform_codegen::{TypesConfig, emit_crd_types};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// Desired state of a Widget.
#[derive(CustomResource, Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kinform(
    group = "roundtrip.example.com",
    version = "v1",
    kind = "Widget",
    namespaced,
    status = "WidgetStatus",
    derive = "PartialEq"
)]
#[serde(rename_all = "camelCase")]
pub struct WidgetSpec {
    /// Size.
    pub size: i64,
    /// Ratio.
    pub ratio: f64,
    /// Enabled.
    pub enabled: bool,
    /// Colour.
    pub color: Color,
    /// Parts.
    pub parts: Vec<Part>,
    /// Labels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra_labels: Option<BTreeMap<String, String>>,
    /// Nested.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<Owner>,
    /// Anything.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw: Option<Value>,
}

/// Colours.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub enum Color {
    /// Red.
    Red,
    /// Green.
    Green,
}

/// A part.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Part {
    /// Part name.
    pub part_name: String,
    /// Count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<i32>,
}

/// An owner.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Owner {
    /// Name.
    pub name: String,
    /// Emails.
    pub emails: Vec<String>,
}

/// Observed state of a Widget.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WidgetStatus {
    /// Ready.
    pub ready: bool,
    /// Message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// A cluster-scoped resource.
#[derive(CustomResource, Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kinform(
    group = "roundtrip.example.com",
    version = "v1",
    kind = "Zone",
    derive = "PartialEq"
)]
pub struct ZoneSpec {
    /// Region.
    pub region: String,
    /// Weights.
    pub weights: BTreeMap<String, i32>,
}

#[path = "../../../codegen/tests/support/temp_crate.rs"]
mod temp_crate;

/// The generated crate: types from the derived CRDs' YAML + a driver binary.
fn write_crate(krate: &temp_crate::TempCrate) {
    let yaml = [
        serde_saphyr::to_string(&Widget::crd()).unwrap(),
        serde_saphyr::to_string(&Zone::crd()).unwrap(),
    ]
    .join("---\n");
    let set = read_crd_str(Path::new("derived.yaml"), &yaml).expect("derived CRDs read");
    assert_eq!(set.types.len(), 2);
    let code = emit_crd_types(&set.types, &TypesConfig::default()).expect("emits");
    krate.write("src/crds.rs", &code);
    let arms: String = set
        .types
        .iter()
        .map(|t| {
            format!(
                "        {:?} => match value[\"new\"].as_str() {{\n\
                 \x20           Some(name) => new(crds::{path}::new(name, from(value[\"spec\"].clone()))),\n\
                 \x20           None => rt::<crds::{path}>(value),\n\
                 \x20       }},\n",
                t.kind,
                path = t.rust_path()
            )
        })
        .collect();
    let main = format!(
        "//! Reads objects (one JSON per line), writes them back through the generated types.\n\
         #![deny(warnings)]\n\
         // The driver does not call `apply_schema_defaults`.\n\
         #[allow(missing_docs, dead_code, unused_imports)]\nmod crds;\n\
         use std::io::BufRead;\n\
         use kinform::k8s_openapi::serde_json::{{self, Value}};\n\n\
         fn rt<K: kinform::Resource>(value: Value) -> Value {{\n\
         \x20   let typed: K = serde_json::from_value(value).expect(\"generated type reads the object\");\n\
         \x20   serde_json::to_value(&typed).expect(\"serializes\")\n}}\n\n\
         fn from<T: kinform::k8s_openapi::serde::de::DeserializeOwned>(value: Value) -> T {{\n\
         \x20   serde_json::from_value(value).expect(\"generated spec type reads the spec\")\n}}\n\n\
         fn new<K: kinform::Resource>(object: K) -> Value {{\n\
         \x20   serde_json::to_value(&object).expect(\"serializes\")\n}}\n\n\
         fn main() {{\n\
         \x20   for line in std::io::stdin().lock().lines() {{\n\
         \x20       let value: Value = serde_json::from_str(&line.expect(\"stdin\")).expect(\"json\");\n\
         \x20       let out = match value[\"kind\"].as_str().unwrap_or_default() {{\n{arms}\
         \x20           other => panic!(\"no generated type for {{other}}\"),\n\
         \x20       }};\n\
         \x20       println!(\"{{out}}\");\n\
         \x20   }}\n}}\n"
    );
    krate.write("src/main.rs", &main);
}

fn examples() -> Vec<Value> {
    let mut full = Widget::new(
        "full",
        WidgetSpec {
            size: 1 << 40,
            ratio: 0.25,
            enabled: true,
            color: Color::Green,
            parts: vec![
                Part {
                    part_name: "bolt".into(),
                    count: Some(12),
                },
                Part {
                    part_name: "nut".into(),
                    count: None,
                },
            ],
            extra_labels: Some([("a".to_owned(), "b".to_owned())].into()),
            owner: Some(Owner {
                name: "ann".into(),
                emails: vec!["ann@example.com".into()],
            }),
            raw: Some(json!({ "nested": [1, "two", { "three": null }] })),
        },
    );
    full.metadata.namespace = Some("default".into());
    full.metadata.labels = Some([("app".to_owned(), "w".to_owned())].into());
    full.status = Some(WidgetStatus {
        ready: true,
        message: Some("ok".into()),
    });
    let minimal = Widget::new(
        "minimal",
        WidgetSpec {
            size: 0,
            ratio: 1.5,
            enabled: false,
            color: Color::Red,
            parts: vec![],
            extra_labels: None,
            owner: None,
            raw: None,
        },
    );
    let zone = Zone::new(
        "z",
        ZoneSpec {
            region: "eu".into(),
            weights: [("a".to_owned(), 1), ("b".to_owned(), -2)].into(),
        },
    );
    vec![
        serde_json::to_value(&full).unwrap(),
        serde_json::to_value(&minimal).unwrap(),
        serde_json::to_value(&zone).unwrap(),
    ]
}

#[test]
fn derived_and_generated_types_agree() {
    let krate = temp_crate::TempCrate::new("kinform-derive-roundtrip");
    write_crate(&krate);
    krate.cargo("build");

    let mut examples = examples();
    // `Foo::new(name, spec)` of both types: a request `{kind, new: name, spec}`.
    let news = vec![
        (
            json!({ "kind": "Widget", "new": "n1", "spec": examples[0]["spec"] }),
            serde_json::to_value(Widget::new(
                "n1",
                serde_json::from_value(examples[0]["spec"].clone()).unwrap(),
            ))
            .unwrap(),
        ),
        (
            json!({ "kind": "Zone", "new": "n2", "spec": examples[2]["spec"] }),
            serde_json::to_value(Zone::new(
                "n2",
                serde_json::from_value(examples[2]["spec"].clone()).unwrap(),
            ))
            .unwrap(),
        ),
    ];
    let derived_count = examples.len();
    let mut expected: Vec<Value> = examples.clone();
    for (request, derived) in news {
        examples.push(request);
        expected.push(derived);
    }
    let mut child = Command::new(krate.binary())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("driver runs");
    let mut stdin = child.stdin.take().unwrap();
    let input: String = examples.iter().map(|v| format!("{v}\n")).collect();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(out.status.success(), "driver failed");
    let lines: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), examples.len());
    for (derived, generated) in expected.iter().zip(&lines) {
        assert_eq!(derived, generated, "derived vs generated JSON");
    }
    for (derived, generated) in expected.iter().zip(&lines).take(derived_count) {
        match derived["kind"].as_str() {
            Some("Widget") => {
                let a: Widget = serde_json::from_value(derived.clone()).unwrap();
                let b: Widget = serde_json::from_value(generated.clone()).unwrap();
                assert_eq!(a, b);
            }
            _ => {
                let a: Zone = serde_json::from_value(derived.clone()).unwrap();
                let b: Zone = serde_json::from_value(generated.clone()).unwrap();
                assert_eq!(a, b);
            }
        }
    }
}
