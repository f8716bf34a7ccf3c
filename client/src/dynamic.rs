//! Untyped objects: [`DynamicObject`] (client-go's `unstructured.Unstructured`) and
//! [`PartialObjectMetadata`] (client-go's metadata client), both usable with `Api<K>`, the
//! store and informers through [`HasMetadata`].

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::{Deserialize, Serialize};

use super::Client;
use super::api::Api;
use kinform_core::resource::{ApiResource, HasMetadata};

/// `apiVersion` and `kind`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TypeMeta {
    /// `apiVersion`.
    #[serde(rename = "apiVersion")]
    pub api_version: String,
    /// `kind`.
    pub kind: String,
}

/// Any Kubernetes object: type, metadata, and every other field as JSON.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DynamicObject {
    /// `apiVersion` and `kind`, when the object carries them (list items may not).
    #[serde(flatten, default)]
    pub types: Option<TypeMeta>,
    /// `metadata`.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Every other top-level field (`spec`, `status`, `data`, ...).
    #[serde(flatten)]
    pub data: serde_json::Value,
}

impl DynamicObject {
    /// An empty object of `resource` named `name`.
    pub fn new(name: &str, resource: &ApiResource) -> Self {
        Self {
            types: Some(TypeMeta {
                api_version: resource.api_version(),
                kind: resource.kind.to_string(),
            }),
            metadata: ObjectMeta {
                name: Some(name.to_owned()),
                ..ObjectMeta::default()
            },
            data: serde_json::Value::Object(serde_json::Map::new()),
        }
    }

    /// Sets the namespace.
    #[must_use]
    pub fn within(mut self, ns: &str) -> Self {
        self.metadata.namespace = Some(ns.to_owned());
        self
    }

    /// Sets the other fields (an object such as `{"spec": ...}`).
    #[must_use]
    pub fn data(mut self, data: serde_json::Value) -> Self {
        self.data = data;
        self
    }
}

impl HasMetadata for DynamicObject {
    fn metadata(&self) -> &ObjectMeta {
        &self.metadata
    }
    fn metadata_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

/// Only the type and metadata of an object (`meta.k8s.io/v1` PartialObjectMetadata), as the
/// server answers a request whose `Accept` asks `as=PartialObjectMetadata`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PartialObjectMetadata {
    /// `apiVersion` and `kind` (`meta.k8s.io/v1`, `PartialObjectMetadata`).
    #[serde(flatten, default)]
    pub types: Option<TypeMeta>,
    /// `metadata`.
    #[serde(default)]
    pub metadata: ObjectMeta,
}

impl HasMetadata for PartialObjectMetadata {
    fn metadata(&self) -> &ObjectMeta {
        &self.metadata
    }
    fn metadata_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

impl Api<PartialObjectMetadata> {
    /// Metadata-only access to `resource` in namespace `ns`.
    pub fn metadata_namespaced(client: Client, ns: &str, resource: &ApiResource) -> Self {
        Api::namespaced_with(client, ns, resource).with_metadata_only()
    }

    /// Metadata-only access to `resource` in all namespaces or cluster-wide.
    pub fn metadata_all(client: Client, resource: &ApiResource) -> Self {
        Api::all_with(client, resource).with_metadata_only()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dynamic_round_trip() {
        let json = serde_json::json!({
            "apiVersion": "example.com/v1", "kind": "Foo",
            "metadata": {"name": "a", "namespace": "ns"},
            "spec": {"x": 1}, "status": {"ok": true}
        });
        let obj: DynamicObject = serde_json::from_value(json.clone()).unwrap();
        assert_eq!(obj.key(), "ns/a");
        assert_eq!(obj.types.as_ref().unwrap().kind, "Foo");
        assert_eq!(obj.data["spec"]["x"], 1);
        assert_eq!(serde_json::to_value(&obj).unwrap(), json);
        let bare: DynamicObject =
            serde_json::from_value(serde_json::json!({"metadata": {"name": "b"}})).unwrap();
        assert!(bare.types.is_none());
    }
}
