//! A derived resource is decoded in place on the informers' watch path, as a generated one:
//! the root type and the spec struct get `custom_in_place!` decoders, which give the object
//! serde's derive gives from the same bytes, and give up where serde refuses.

use std::collections::BTreeMap;

use kinform::CustomResource;
use kinform::client::decode::bench::DocDecoder;
use kinform::k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kinform::k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A gizmo's desired state: renamed keys, optional and defaulted members, an enum, a
/// k8s-openapi type and an `IntOrString` (the last two decoded afresh).
#[derive(CustomResource, Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kinform(
    group = "example.com",
    version = "v1",
    kind = "Gizmo",
    namespaced,
    status = "GizmoStatus",
    derive = "PartialEq"
)]
#[serde(rename_all = "camelCase")]
pub struct GizmoSpec {
    pub display_name: String,
    pub replica_count: Option<i32>,
    #[serde(default = "three")]
    pub size: i64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    #[serde(rename = "labels")]
    pub extra_labels: Option<BTreeMap<String, String>>,
    pub mode: Option<Mode>,
    #[schemars(with = "Option<serde_json::Value>")]
    pub selector: Option<LabelSelector>,
    #[schemars(with = "Option<serde_json::Value>")]
    pub port: Option<IntOrString>,
}

fn three() -> i64 {
    3
}

/// An enum: decoded afresh.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub enum Mode {
    Fast,
    Slow,
}

/// The status (no `custom_in_place!` of its own: decoded afresh).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GizmoStatus {
    pub ready: bool,
}

const TAKEN: [&str; 4] = [
    r#"{"apiVersion":"example.com/v1","kind":"Gizmo","metadata":{"name":"a","namespace":"n",
        "labels":{"x":"y"},"resourceVersion":"4"},"spec":{"displayName":"one","replicaCount":2,
        "size":9,"tags":["a","b"],"labels":{"k":"v"},"mode":"Fast",
        "selector":{"matchLabels":{"app":"g"}},"port":"http"},"status":{"ready":true}}"#,
    r#"{"spec":{"displayName":"two"}}"#,
    r#"{"metadata":{"name":"b"},"spec":{"displayName":"","replicaCount":null,"tags":[],
        "mode":null,"port":8080},"status":null,"unknown":{"a":[1]}}"#,
    r#"{"spec":{"displayName":"three","labels":{},"selector":{}},"status":{"ready":false}}"#,
];

const REFUSED: [&str; 7] = [
    r#"{"metadata":null,"spec":{"displayName":"a"}}"#,
    r#"{"metadata":{}}"#,
    r#"{"spec":{"replicaCount":1}}"#,
    r#"{"spec":{"displayName":"a","tags":null}}"#,
    r#"{"spec":{"displayName":"a","mode":"Medium"}}"#,
    r#"{"spec":{"displayName":"a","displayName":"b"}}"#,
    r#"{"spec":{"displayName":"a"},"status":{}}"#,
];

#[test]
fn a_derived_resource_is_decoded_in_place_as_serde_decodes_it() {
    assert!(DocDecoder::has_in_place::<Gizmo>());
    let mut decoder = DocDecoder::default();
    for doc in TAKEN {
        let want: Gizmo = serde_json::from_str(doc).unwrap();
        for other in TAKEN {
            let mut target: Gizmo = serde_json::from_str(other).unwrap();
            assert!(
                decoder.decode_resource_into(&mut target, doc.as_bytes()),
                "{doc} into {other}"
            );
            assert_eq!(target, want, "{doc} into {other}");
        }
        let new: Gizmo = decoder.decode_resource(doc.as_bytes()).unwrap();
        assert_eq!(new, want, "{doc}");
    }
    let second: Gizmo = serde_json::from_str(TAKEN[1]).unwrap();
    assert_eq!(second.spec.size, 3, "`default = \"three\"` ran");
    // The spec's strings are decoded into their own buffers (the spec's decoder ran, not
    // serde's).
    let mut target: Gizmo = serde_json::from_str(TAKEN[0]).unwrap();
    target.spec.display_name.reserve(64);
    let buffer = target.spec.display_name.as_ptr();
    assert!(decoder.decode_resource_into(&mut target, TAKEN[3].as_bytes()));
    assert_eq!(target.spec.display_name.as_ptr(), buffer);

    for doc in REFUSED {
        assert!(serde_json::from_str::<Gizmo>(doc).is_err(), "{doc}");
        let mut target: Gizmo = serde_json::from_str(TAKEN[0]).unwrap();
        assert!(
            !decoder.decode_resource_into(&mut target, doc.as_bytes()),
            "{doc}"
        );
        assert!(
            decoder.decode_resource::<Gizmo>(doc.as_bytes()).is_err(),
            "{doc}"
        );
    }
}

/// A widget's desired state: a nested struct and a vector of them, each deriving `InPlace`.
#[derive(CustomResource, Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kinform(
    group = "example.com",
    version = "v1",
    kind = "Widget",
    status = "WidgetStatus",
    derive = "PartialEq"
)]
pub struct WidgetSpec {
    pub owner: Owner,
    #[serde(default)]
    pub parts: Vec<Owner>,
}

/// A nested struct decoded in place (its derive), with a renamed and a defaulted member.
#[derive(
    kinform::InPlace, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "camelCase")]
pub struct Owner {
    pub display_name: String,
    #[serde(default)]
    pub team_names: Vec<String>,
}

/// The status, decoded in place (its derive), without `Default`.
#[derive(kinform::InPlace, Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WidgetStatus {
    pub phase: String,
    pub observed: Option<i64>,
}

const WIDGETS: [&str; 3] = [
    r#"{"metadata":{"name":"w"},"spec":{"owner":{"displayName":"ann","teamNames":["a"]},
        "parts":[{"displayName":"p1"},{"displayName":"p2","teamNames":["x","y"]}]},
        "status":{"phase":"Ready","observed":3}}"#,
    r#"{"spec":{"owner":{"displayName":"bob"}},"status":null}"#,
    r#"{"spec":{"owner":{"displayName":"","teamNames":[]},"parts":[]},
        "status":{"phase":"Pending","observed":null}}"#,
];

const WIDGETS_REFUSED: [&str; 4] = [
    r#"{"spec":{"owner":{}}}"#,
    r#"{"spec":{"owner":{"displayName":"a","teamNames":null}}}"#,
    r#"{"spec":{"owner":{"displayName":"a"}},"status":{"observed":1}}"#,
    r#"{"spec":{"owner":{"displayName":"a"},"parts":[{"displayName":1}]}}"#,
];

#[test]
fn structs_deriving_in_place_are_decoded_in_place_inside_a_derived_resource() {
    let mut decoder = DocDecoder::default();
    for doc in WIDGETS {
        let want: Widget = serde_json::from_str(doc).unwrap();
        for other in WIDGETS {
            let mut target: Widget = serde_json::from_str(other).unwrap();
            assert!(
                decoder.decode_resource_into(&mut target, doc.as_bytes()),
                "{doc} into {other}"
            );
            assert_eq!(target, want, "{doc} into {other}");
        }
        let new: Widget = decoder.decode_resource(doc.as_bytes()).unwrap();
        assert_eq!(new, want, "{doc}");
    }
    // The nested structs' and the status's strings keep their buffers: their own decoders
    // ran, not their `Deserialize`.
    let mut target: Widget = serde_json::from_str(WIDGETS[0]).unwrap();
    target.spec.owner.display_name.reserve(64);
    target.spec.parts[0].display_name.reserve(64);
    let status = target.status.as_mut().unwrap();
    status.phase.reserve(64);
    let buffers = (
        target.spec.owner.display_name.as_ptr(),
        target.spec.parts[0].display_name.as_ptr(),
        status.phase.as_ptr(),
    );
    let changed = r#"{"spec":{"owner":{"displayName":"carol"},"parts":[{"displayName":"q"}]},
        "status":{"phase":"Failed"}}"#;
    assert!(decoder.decode_resource_into(&mut target, changed.as_bytes()));
    assert_eq!(target, serde_json::from_str::<Widget>(changed).unwrap());
    assert_eq!(target.spec.owner.display_name.as_ptr(), buffers.0);
    assert_eq!(target.spec.parts[0].display_name.as_ptr(), buffers.1);
    assert_eq!(target.status.as_ref().unwrap().phase.as_ptr(), buffers.2);

    for doc in WIDGETS_REFUSED {
        assert!(serde_json::from_str::<Widget>(doc).is_err(), "{doc}");
        let mut target: Widget = serde_json::from_str(WIDGETS[0]).unwrap();
        assert!(
            !decoder.decode_resource_into(&mut target, doc.as_bytes()),
            "{doc}"
        );
    }
}
