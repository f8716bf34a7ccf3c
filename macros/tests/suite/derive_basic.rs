//! Expansion of `#[derive(CustomResource)]`: root type, serde, Resource, CRD, merge.

use std::collections::BTreeMap;

use kinform::crd::{MergeError, merge_crds};
use kinform::{CustomResource, HasMetadata, Resource, Scope};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

/// A widget's desired state.
#[derive(CustomResource, Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kinform(
    group = "example.com",
    version = "v1",
    kind = "Widget",
    namespaced,
    status = "WidgetStatus",
    shortname = "wd",
    shortname = "wdg",
    category = "all",
    category = "toys",
    printcolumn(
        name = "Size",
        type = "integer",
        json_path = ".spec.size",
        priority = 1
    ),
    printcolumn(
        name = "Phase",
        type = "string",
        json_path = ".status.phase",
        description = "lifecycle"
    ),
    selectable = ".spec.color",
    scale(
        spec_replicas_path = ".spec.size",
        status_replicas_path = ".status.replicas",
        label_selector_path = ".status.selector"
    ),
    validation = "self.spec.size >= 0",
    validation(
        rule = "self.spec.color != 'black'",
        message = "no black widgets",
        reason = "FieldValueForbidden",
        field_path = ".spec.color"
    ),
    storage,
    derive = "PartialEq",
    label(key = "app", value = "widgets"),
    annotation(key = "note", value = "derived")
)]
pub struct WidgetSpec {
    /// How big.
    pub size: i32,
    /// Its colour.
    pub color: Color,
    /// Free-form labels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<BTreeMap<String, String>>,
    /// Anything at all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra: Option<serde_json::Value>,
}

/// Colours.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub enum Color {
    /// Red.
    Red,
    /// Blue.
    Blue,
}

/// A widget's observed state.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WidgetStatus {
    /// Phase.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    /// Replicas.
    #[serde(default)]
    pub replicas: i32,
}

mod v1 {
    use super::*;
    /// v1.
    #[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
    #[kinform(
        group = "example.com",
        version = "v1",
        kind = "Gadget",
        root = "Gadget"
    )]
    pub struct GadgetSpec {
        /// Name.
        pub name: String,
    }
}

mod v2 {
    use super::*;
    /// v2.
    #[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
    #[kinform(
        group = "example.com",
        version = "v2",
        kind = "Gadget",
        deprecated = "use v3"
    )]
    pub struct GadgetSpec {
        /// Names.
        pub names: Vec<String>,
    }
}

mod other_scope {
    use super::*;
    /// Namespaced Gadget.
    #[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
    #[kinform(group = "example.com", version = "v3", kind = "Gadget", namespaced)]
    pub struct GadgetSpec {
        /// Name.
        pub name: String,
    }
}

#[test]
fn resource_impl() {
    assert_eq!(Widget::GROUP, "example.com");
    assert_eq!(Widget::API_VERSION, "example.com/v1");
    assert_eq!(Widget::PLURAL, "widgets");
    assert_eq!(Widget::SCOPE, Scope::Namespaced);
    assert_eq!(v1::Gadget::SCOPE, Scope::Cluster);
    let w = Widget::new(
        "w1",
        WidgetSpec {
            size: 3,
            color: Color::Red,
            tags: None,
            extra: None,
        },
    );
    assert_eq!(w.name(), "w1");
    assert!(w.status.is_none());
}

#[test]
fn serde_writes_api_version_and_kind() {
    let mut w = Widget::new(
        "w1",
        WidgetSpec {
            size: 3,
            color: Color::Blue,
            tags: None,
            extra: Some(json!({"a": [1, 2]})),
        },
    );
    w.status = Some(WidgetStatus {
        phase: Some("Ready".into()),
        replicas: 2,
    });
    let v = serde_json::to_value(&w).unwrap();
    assert_eq!(
        v,
        json!({
            "apiVersion": "example.com/v1", "kind": "Widget",
            "metadata": { "name": "w1" },
            "spec": { "size": 3, "color": "Blue", "extra": { "a": [1, 2] } },
            "status": { "phase": "Ready", "replicas": 2 }
        })
    );
    let back: Widget = serde_json::from_value(v).unwrap();
    assert_eq!(back, w);
    // No status: the key is absent.
    let v = serde_json::to_value(Widget::new("x", w.spec.clone())).unwrap();
    assert!(v.get("status").is_none());
}

/// `crd_yaml()` is YAML (not JSON) that a YAML reader turns back into `crd()` exactly, for
/// a CRD with printer columns, CEL rules, short names and categories, one with a one-of
/// schema, and a merged multi-version CRD through `crd::to_yaml`.
#[test]
fn crd_yaml_parses_back_to_the_crd() {
    use kinform::k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
    let parse = |text: &str| -> CustomResourceDefinition {
        serde_saphyr::from_str(text).unwrap_or_else(|e| panic!("{e}\n{text}"))
    };
    for (yaml, crd) in [
        (Widget::crd_yaml(), Widget::crd()),
        (Shape::crd_yaml(), Shape::crd()),
        (v1::Gadget::crd_yaml(), v1::Gadget::crd()),
    ] {
        assert!(
            yaml.starts_with("apiVersion: apiextensions.k8s.io/v1"),
            "{yaml}"
        );
        assert_eq!(parse(&yaml), crd);
    }
    let merged = merge_crds(vec![v1::Gadget::crd(), v2::Gadget::crd()], "v2").unwrap();
    assert_eq!(parse(&kinform::crd::to_yaml(&merged)), merged);
}

#[test]
fn crd_describes_everything() {
    let crd = serde_json::to_value(Widget::crd()).unwrap();
    assert_eq!(crd["metadata"]["name"], "widgets.example.com");
    assert_eq!(crd["metadata"]["labels"]["app"], "widgets");
    assert_eq!(crd["metadata"]["annotations"]["note"], "derived");
    let spec = &crd["spec"];
    assert_eq!(spec["scope"], "Namespaced");
    assert_eq!(spec["names"]["shortNames"], json!(["wd", "wdg"]));
    assert_eq!(spec["names"]["categories"], json!(["all", "toys"]));
    assert_eq!(spec["names"]["singular"], "widget");
    assert_eq!(spec["names"]["listKind"], "WidgetList");
    let v = &spec["versions"][0];
    assert_eq!(v["name"], "v1");
    assert_eq!(v["served"], true);
    assert_eq!(v["storage"], true);
    assert_eq!(v["subresources"]["status"], json!({}));
    assert_eq!(
        v["subresources"]["scale"]["labelSelectorPath"],
        ".status.selector"
    );
    assert_eq!(v["additionalPrinterColumns"][0]["priority"], 1);
    assert_eq!(v["additionalPrinterColumns"][1]["description"], "lifecycle");
    assert_eq!(
        v["selectableFields"],
        json!([{ "jsonPath": ".spec.color" }])
    );
    let schema = &v["schema"]["openAPIV3Schema"];
    assert_eq!(schema["required"], json!(["spec"]));
    assert_eq!(
        schema["x-kubernetes-validations"][0]["rule"],
        "self.spec.size >= 0"
    );
    assert_eq!(
        schema["x-kubernetes-validations"][1]["reason"],
        "FieldValueForbidden"
    );
    let spec_schema = &schema["properties"]["spec"]["properties"];
    assert_eq!(spec_schema["color"]["type"], "string");
    assert_eq!(spec_schema["color"]["enum"], json!(["Red", "Blue"]));
    assert_eq!(
        spec_schema["tags"]["additionalProperties"]["type"],
        "string"
    );
    assert_eq!(
        spec_schema["extra"]["x-kubernetes-preserve-unknown-fields"],
        true
    );
    assert_eq!(spec_schema["size"]["type"], "integer");
    let status = &schema["properties"]["status"];
    assert_eq!(status["nullable"], true);
    assert_eq!(status["properties"]["replicas"]["type"], "integer");
    assert_no_refs(schema);
}

fn assert_no_refs(v: &serde_json::Value) {
    match v {
        serde_json::Value::Object(m) => {
            assert!(!m.contains_key("$ref"), "{m:?}");
            m.values().for_each(assert_no_refs);
        }
        serde_json::Value::Array(a) => a.iter().for_each(assert_no_refs),
        _ => {}
    }
}

#[test]
fn versions_merge_with_one_storage_version() {
    let merged = merge_crds(vec![v1::Gadget::crd(), v2::Gadget::crd()], "v2").unwrap();
    let versions: Vec<(&str, bool)> = merged
        .spec
        .versions
        .iter()
        .map(|v| (v.name.as_str(), v.storage))
        .collect();
    assert_eq!(versions, vec![("v1", false), ("v2", true)]);
    assert_eq!(merged.spec.versions[1].deprecated, Some(true));
    assert_eq!(
        merged.spec.versions[1].deprecation_warning.as_deref(),
        Some("use v3")
    );
    assert!(matches!(
        merge_crds(vec![v1::Gadget::crd(), v2::Gadget::crd()], "v9"),
        Err(MergeError::UnknownStorageVersion { .. })
    ));
    assert!(matches!(
        merge_crds(vec![v1::Gadget::crd(), v1::Gadget::crd()], "v1"),
        Err(MergeError::DuplicateVersion(_))
    ));
    assert!(matches!(
        merge_crds(vec![v1::Gadget::crd(), other_scope::Gadget::crd()], "v1"),
        Err(MergeError::Mismatch {
            property: "scope",
            ..
        })
    ));
    assert!(matches!(
        merge_crds(vec![v1::Gadget::crd(), Widget::crd()], "v1"),
        Err(MergeError::Mismatch { .. })
    ));
    assert_eq!(merge_crds(vec![], "v1"), Err(MergeError::Empty));
}

/// Shapes schemars cannot write structurally on its own.
#[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kinform(group = "example.com", version = "v1", kind = "Shape", namespaced)]
pub struct ShapeSpec {
    /// Externally tagged enum with data.
    pub action: Action,
    /// Internally tagged enum.
    pub source: Source,
    /// Unit and data variants mixed.
    pub mixed: Mixed,
    /// Integer or string.
    pub port: IntOrName,
    /// A recursive type.
    pub tree: Tree,
    /// Flattened remainder.
    #[serde(flatten)]
    pub rest: BTreeMap<String, serde_json::Value>,
    /// A tuple.
    pub pair: (String, i32),
}

/// Actions.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum Action {
    /// Run.
    Run {
        /// Command.
        command: String,
    },
    /// Sleep.
    Sleep {
        /// Seconds.
        seconds: u32,
    },
}

/// Sources.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type")]
pub enum Source {
    /// Git.
    Git {
        /// URL.
        url: String,
    },
    /// S3.
    S3 {
        /// Bucket.
        bucket: String,
    },
}

/// Mixed.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub enum Mixed {
    /// Nothing.
    Empty,
    /// Something.
    Value(String),
}

/// Integer or string.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum IntOrName {
    /// Number.
    Int(i32),
    /// Name.
    Name(String),
}

/// A tree.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct Tree {
    /// Children.
    pub children: Vec<Tree>,
}

/// Apiextensions' structural rules (`ValidateStructural`), checked on a schema node.
fn assert_structural(path: &str, v: &serde_json::Value, in_junctor: bool) {
    let m = v
        .as_object()
        .unwrap_or_else(|| panic!("{path}: not an object"));
    assert!(!m.contains_key("$ref"), "{path}: $ref");
    let typed = m.contains_key("type")
        || m.get("x-kubernetes-int-or-string") == Some(&json!(true))
        || m.get("x-kubernetes-preserve-unknown-fields") == Some(&json!(true));
    if in_junctor {
        for k in [
            "type",
            "properties",
            "items",
            "additionalProperties",
            "x-kubernetes-preserve-unknown-fields",
        ] {
            assert!(
                !m.contains_key(k),
                "{path}: `{k}` inside anyOf/oneOf/allOf/not"
            );
        }
    } else {
        assert!(typed, "{path}: no type");
    }
    assert!(
        !(m.contains_key("properties") && m.contains_key("additionalProperties")),
        "{path}: properties beside additionalProperties"
    );
    if let Some(serde_json::Value::Object(props)) = m.get("properties") {
        for (k, p) in props {
            assert_structural(&format!("{path}.{k}"), p, in_junctor);
        }
    }
    for k in ["items", "additionalProperties"] {
        if let Some(s @ serde_json::Value::Object(_)) = m.get(k) {
            assert_structural(&format!("{path}[{k}]"), s, in_junctor);
        }
    }
    for k in ["anyOf", "oneOf", "allOf"] {
        if let Some(serde_json::Value::Array(branches)) = m.get(k) {
            for (n, b) in branches.iter().enumerate() {
                assert_structural(&format!("{path}.{k}[{n}]"), b, true);
            }
        }
    }
}

#[test]
fn schemas_are_structural() {
    for crd in [Widget::crd(), Shape::crd(), v1::Gadget::crd()] {
        let crd = serde_json::to_value(crd).unwrap();
        let schema = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"];
        assert_structural("", schema, false);
    }
    let crd = serde_json::to_value(Shape::crd()).unwrap();
    let spec = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"];
    let p = &spec["properties"];
    // Flatten: unknown fields are kept.
    assert_eq!(spec["x-kubernetes-preserve-unknown-fields"], true);
    // Externally tagged: one property per variant, exactly one required.
    assert_eq!(p["action"]["type"], "object");
    assert!(p["action"]["properties"]["run"]["properties"]["command"].is_object());
    assert_eq!(
        p["action"]["oneOf"],
        json!([{ "required": ["run"] }, { "required": ["sleep"] }])
    );
    // Internally tagged: the union of the variants' fields.
    assert_eq!(p["source"]["properties"]["type"]["type"], "string");
    assert!(p["source"]["properties"]["url"].is_object());
    assert!(p["source"]["properties"]["bucket"].is_object());
    assert_eq!(
        p["source"]["properties"]["type"]["enum"],
        json!(["Git", "S3"])
    );
    assert_eq!(p["mixed"]["x-kubernetes-preserve-unknown-fields"], true);
    assert_eq!(
        p["port"],
        json!({ "description": "Integer or string.", "x-kubernetes-int-or-string": true })
    );
    assert_eq!(
        // schemars inlines one level, then refers to itself: that reference keeps the data.
        p["tree"]["properties"]["children"]["items"]["properties"]["children"]["items"]["x-kubernetes-preserve-unknown-fields"],
        true
    );
    assert_eq!(
        p["pair"]["items"]["x-kubernetes-preserve-unknown-fields"],
        true
    );
}

mod overrides {
    use super::*;

    /// A spec using crate path overrides, extra attributes and a disabled schema.
    #[derive(CustomResource, Clone, Debug, Serialize, Deserialize)]
    #[kinform(
        group = "example.com",
        version = "v1alpha1",
        kind = "Legacy",
        root = "LegacyThing",
        plural = "legacies",
        singular = "legacy",
        served = false,
        schema = "disabled",
        doc = "An old thing.",
        attr = "allow(clippy::large_enum_variant)",
        printcolumn = r#"{"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}"#,
        crates(
            kinform = "::kinform",
            k8s_openapi = "::k8s_openapi",
            serde = "::serde"
        )
    )]
    pub struct LegacySpec {
        /// Anything.
        pub data: String,
    }

    #[test]
    fn overrides_and_disabled_schema() {
        assert_eq!(LegacyThing::KIND, "Legacy");
        assert_eq!(LegacyThing::PLURAL, "legacies");
        let crd = serde_json::to_value(LegacyThing::crd()).unwrap();
        assert_eq!(crd["metadata"]["name"], "legacies.example.com");
        assert_eq!(crd["spec"]["scope"], "Cluster");
        let v = &crd["spec"]["versions"][0];
        assert_eq!(v["served"], false);
        assert_eq!(v["storage"], false);
        assert_eq!(v["additionalPrinterColumns"][0]["type"], "date");
        let schema = &v["schema"]["openAPIV3Schema"];
        assert_eq!(schema["description"], "An old thing.");
        assert_eq!(
            schema["properties"]["spec"],
            json!({ "type": "object", "x-kubernetes-preserve-unknown-fields": true })
        );
        let obj = LegacyThing::new("l", LegacySpec { data: "d".into() });
        let back: LegacyThing =
            serde_json::from_value(serde_json::to_value(&obj).unwrap()).unwrap();
        assert_eq!(back.spec.data, "d");
        let _client: fn(kinform::Client) -> LegacyThingClient = LegacyThingClient::new;
    }
}

/// A spec whose schema has defaults that decoding leaves alone.
#[derive(CustomResource, Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kinform(group = "example.com", version = "v1", kind = "Knob", namespaced)]
pub struct KnobSpec {
    /// Turns (schema default 3).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = 3))]
    pub turns: Option<i64>,
    /// Mode (no default).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
}

#[test]
fn decoding_invents_nothing_and_defaults_are_explicit() {
    let input = json!({"apiVersion": "example.com/v1", "kind": "Knob", "spec": {}});
    let mut k: Knob = serde_json::from_value(input.clone()).unwrap();
    // No `metadata: {}` and no default on the way back.
    assert_eq!(serde_json::to_value(&k).unwrap(), input);
    assert_eq!(k.spec.turns, None);
    k.apply_schema_defaults().unwrap();
    assert_eq!(k.spec.turns, Some(3));
    assert_eq!(k.spec.mode, None);
    // A type without defaults in its schema is left as it is.
    let mut w: Widget = serde_json::from_value(json!({
        "apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"},
        "spec": {"size": 1, "color": "Blue"}
    }))
    .unwrap();
    let before = w.clone();
    w.apply_schema_defaults().unwrap();
    assert_eq!(w, before);
}
