//! kube-derive parity: the `#[kube(...)]` forms kinform also accepts, and the schema modes.

use std::borrow::Cow;

use kinform::{CustomResource, Resource};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

/// The standard library under another path, for `crates(std = ...)`.
mod my_std {
    pub use ::std::*;
}

/// kube-derive's spellings: `struct`, JSON `scale`, positional `label` / `annotation`,
/// `storage = false`, the `Rule::new(..)` builder, `derive = "Default"`, `crates(schemars, std)`.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kinform(
    group = "example.com",
    version = "v2",
    kind = "Pump",
    struct = "PumpV2",
    namespaced,
    status = "PumpStatus",
    scale = r#"{"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas", "labelSelectorPath": ".status.selector"}"#,
    label("app.kubernetes.io/part-of", "pumps"),
    annotation("note", "kube style"),
    storage = false,
    validation = Rule::new("self.spec.replicas <= 10")
        .message(Message::Expression("'too many: ' + string(self.spec.replicas)"))
        .reason(Reason::FieldValueForbidden)
        .field_path(".spec.replicas"),
    validation = "self.metadata.name != 'x'",
    derive = "Default",
    derive = "PartialEq",
    crates(schemars = "::schemars", std = "crate::derive_parity::my_std", serde = "::serde")
)]
pub struct PumpSpec {
    /// Replicas.
    pub replicas: i32,
}

/// Observed state.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PumpStatus {
    /// Replicas.
    pub replicas: i32,
}

#[test]
fn kube_spellings() {
    assert_eq!(PumpV2::KIND, "Pump");
    let crd = serde_json::to_value(PumpV2::crd()).unwrap();
    assert_eq!(
        crd["metadata"]["labels"],
        json!({ "app.kubernetes.io/part-of": "pumps" })
    );
    assert_eq!(
        crd["metadata"]["annotations"],
        json!({ "note": "kube style" })
    );
    let v = &crd["spec"]["versions"][0];
    assert_eq!(v["storage"], false);
    assert_eq!(v["served"], true);
    assert_eq!(
        v["subresources"]["scale"],
        json!({
            "specReplicasPath": ".spec.replicas",
            "statusReplicasPath": ".status.replicas",
            "labelSelectorPath": ".status.selector"
        })
    );
    assert_eq!(
        v["schema"]["openAPIV3Schema"]["x-kubernetes-validations"],
        json!([
            {
                "rule": "self.spec.replicas <= 10",
                "messageExpression": "'too many: ' + string(self.spec.replicas)",
                "reason": "FieldValueForbidden",
                "fieldPath": ".spec.replicas"
            },
            { "rule": "self.metadata.name != 'x'" }
        ])
    );
    // derive = "Default": an empty object.
    let d = PumpV2::default();
    assert_eq!(d.spec, PumpSpec::default());
    assert_eq!(d.status, None);
}

#[test]
fn derived_root_implements_json_schema() {
    // As kube-derive: the root derives JsonSchema (metadata skipped), with the schemars
    // crate path from `crates(schemars = ...)`.
    let schema = schemars::schema_for!(PumpV2).to_value();
    let props = schema["properties"].as_object().unwrap();
    assert!(props.contains_key("spec") && props.contains_key("status"));
    assert!(!props.contains_key("metadata"));
}

/// A single-version kind: storage by default, as kube-derive.
#[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kinform(group = "example.com", version = "v1", kind = "Valve")]
pub struct ValveSpec {
    /// Open.
    pub open: bool,
}

#[test]
fn storage_defaults_to_true() {
    let crd = Valve::crd();
    assert!(crd.spec.versions[0].storage);
    assert!(crd.spec.versions[0].served);
}

/// `schema = "manual"`: the root's own JsonSchema is the CRD's schema.
#[derive(CustomResource, Clone, Debug, Serialize, Deserialize)]
#[kinform(
    group = "example.com",
    version = "v1",
    kind = "Dial",
    schema = "manual",
    status = "DialStatus",
    validation = "self.spec.level >= 0",
    doc = "A dial."
)]
pub struct DialSpec {
    /// Level.
    pub level: i64,
}

/// Dial status (no JsonSchema derive: the manual schema covers it).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct DialStatus {
    /// Reading.
    pub reading: i64,
}

impl JsonSchema for Dial {
    fn schema_name() -> Cow<'static, str> {
        "Dial".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "object",
            "properties": {
                "spec": {
                    "type": "object",
                    "properties": { "level": { "type": "integer", "minimum": 0, "maximum": 11 } },
                    "required": ["level"]
                },
                "status": {
                    "type": "object",
                    "properties": { "reading": { "type": "integer" } }
                }
            },
            "required": ["spec"]
        })
    }
}

#[test]
fn manual_schema_is_the_roots_json_schema() {
    let crd = serde_json::to_value(Dial::crd()).unwrap();
    let v = &crd["spec"]["versions"][0];
    assert_eq!(v["subresources"]["status"], json!({}));
    let s = &v["schema"]["openAPIV3Schema"];
    assert_eq!(s["type"], "object");
    assert_eq!(s["description"], "A dial.");
    assert_eq!(
        s["properties"]["spec"]["properties"]["level"],
        json!({ "type": "integer", "minimum": 0.0, "maximum": 11.0 })
    );
    assert_eq!(
        s["properties"]["status"]["properties"]["reading"]["type"],
        "integer"
    );
    assert_eq!(s["required"], json!(["spec"]));
    assert_eq!(
        s["x-kubernetes-validations"],
        json!([{ "rule": "self.spec.level >= 0" }])
    );
}

/// `schema = "disabled"` with a status type that has no JsonSchema.
#[derive(CustomResource, Clone, Debug, Serialize, Deserialize)]
#[kinform(
    group = "example.com",
    version = "v1",
    kind = "Knob",
    schema = "disabled",
    status = "KnobStatus"
)]
pub struct KnobSpec {
    /// Turns.
    pub turns: i64,
}

/// Knob status.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct KnobStatus {
    /// Turned.
    pub turned: bool,
}

#[test]
fn disabled_schema_keeps_spec_and_status() {
    let crd = serde_json::to_value(Knob::crd()).unwrap();
    let p = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"];
    let keep = json!({ "type": "object", "x-kubernetes-preserve-unknown-fields": true });
    assert_eq!(p["spec"], keep);
    let mut status = keep.clone();
    status["nullable"] = json!(true);
    assert_eq!(p["status"], status);
}

/// `schema = "manual"` with a schema the API server's `JSONSchemaProps` cannot hold.
#[derive(CustomResource, Clone, Debug, Serialize, Deserialize)]
#[kinform(
    group = "example.com",
    version = "v3",
    kind = "Lever",
    schema = "manual"
)]
pub struct LeverSpec {
    /// Angle.
    pub angle: i64,
}

impl JsonSchema for Lever {
    fn schema_name() -> Cow<'static, str> {
        "Lever".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "object",
            "properties": {
                "spec": {
                    "type": "object",
                    "properties": { "angle": { "type": "integer", "maximum": "ninety" } }
                }
            }
        })
    }
}

#[test]
fn an_invalid_manual_schema_is_an_error_naming_where() {
    let err = Lever::try_crd().unwrap_err();
    let kinform::crd::CrdError::InvalidSchema {
        kind,
        version,
        path,
        message,
        ..
    } = &err
    else {
        panic!("unexpected error {err:?}");
    };
    assert_eq!((kind.as_str(), version.as_str()), ("Lever", "v3"));
    assert_eq!(
        path,
        "openAPIV3Schema.properties.spec.properties.angle.maximum"
    );
    assert!(message.contains("invalid type"), "{message}");
    let panic = std::panic::catch_unwind(Lever::crd).unwrap_err();
    let text = panic.downcast_ref::<String>().unwrap();
    assert_eq!(text, &err.to_string());
    // Valid schemas are unchanged: `try_crd` is `crd`.
    assert_eq!(Dial::try_crd().unwrap(), Dial::crd());
    assert_eq!(Valve::try_crd().unwrap(), Valve::crd());
}
