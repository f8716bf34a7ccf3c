//! Hand-written resource types (the derive macro lives behind the facade) and review builders.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kinform_core::{HasMetadata, Resource, Scope};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

macro_rules! resource {
    ($ty:ident, $group:literal, $version:literal, $kind:literal, $plural:literal, $spec:ty) => {
        #[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
        pub struct $ty {
            #[serde(default)]
            pub metadata: ObjectMeta,
            pub spec: $spec,
        }
        impl HasMetadata for $ty {
            fn metadata(&self) -> &ObjectMeta {
                &self.metadata
            }
            fn metadata_mut(&mut self) -> &mut ObjectMeta {
                &mut self.metadata
            }
        }
        impl Resource for $ty {
            const GROUP: &'static str = $group;
            const VERSION: &'static str = $version;
            const API_VERSION: &'static str = concat!($group, "/", $version);
            const KIND: &'static str = $kind;
            const PLURAL: &'static str = $plural;
            const SCOPE: Scope = Scope::Namespaced;
        }
    };
}

/// A widget's desired state.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WidgetSpec {
    pub size: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub color: Option<String>,
}

resource!(Widget, "example.com", "v1", "Widget", "widgets", WidgetSpec);

pub mod v1 {
    use super::*;
    /// v1: one name.
    #[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
    pub struct GadgetSpec {
        pub name: String,
    }
    resource!(Gadget, "example.com", "v1", "Gadget", "gadgets", GadgetSpec);
}

pub mod v2 {
    use super::*;
    /// v2: several names.
    #[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
    pub struct GadgetSpec {
        pub names: Vec<String>,
    }
    resource!(Gadget, "example.com", "v2", "Gadget", "gadgets", GadgetSpec);
}

impl From<v1::Gadget> for v2::Gadget {
    fn from(g: v1::Gadget) -> Self {
        v2::Gadget {
            metadata: g.metadata,
            spec: v2::GadgetSpec {
                names: vec![g.spec.name],
            },
        }
    }
}

impl From<v2::Gadget> for v1::Gadget {
    fn from(g: v2::Gadget) -> Self {
        v1::Gadget {
            metadata: g.metadata,
            spec: v1::GadgetSpec {
                name: g.spec.names.into_iter().next().unwrap_or_default(),
            },
        }
    }
}

/// An `AdmissionReview` request for a widget.
pub fn admission_review(operation: &str, object: Option<Value>, old: Option<Value>) -> Value {
    let mut request = json!({
        "uid": "11111111-2222-3333-4444-555555555555",
        "kind": {"group": "example.com", "version": "v1", "kind": "Widget"},
        "resource": {"group": "example.com", "version": "v1", "resource": "widgets"},
        "name": "w",
        "namespace": "default",
        "operation": operation,
        "userInfo": {"username": "alice", "groups": ["system:authenticated"]},
    });
    if let Some(object) = object {
        request["object"] = object;
    }
    if let Some(old) = old {
        request["oldObject"] = old;
    }
    json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request})
}

/// A widget as the API server sends it.
pub fn widget(size: i64) -> Value {
    json!({
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w", "namespace": "default", "uid": "u-1"},
        "spec": {"size": size}
    })
}

/// A `ConversionReview` request.
pub fn conversion_review(desired: &str, objects: Vec<Value>) -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "ConversionReview",
        "request": {"uid": "c-1", "desiredAPIVersion": desired, "objects": objects}
    })
}

/// A gadget at v1.
pub fn gadget_v1(name: &str, spec_name: &str) -> Value {
    json!({
        "apiVersion": "example.com/v1",
        "kind": "Gadget",
        "metadata": {
            "name": name, "namespace": "default", "uid": format!("uid-{name}"),
            "resourceVersion": "7", "generation": 2,
            "creationTimestamp": "2024-05-01T10:00:00Z",
            "labels": {"app": "g"}
        },
        "spec": {"name": spec_name}
    })
}
