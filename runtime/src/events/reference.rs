//! [`ObjectReference`]s to the objects events are about (client-go's `reference.GetReference`).

use k8s_openapi::api::core::v1::ObjectReference;

use kinform_core::resource::{ApiResource, HasMetadata, Resource};

fn non_empty(s: &str) -> Option<String> {
    (!s.is_empty()).then(|| s.to_owned())
}

/// A reference to `obj`: apiVersion, kind, namespace, name, uid and resourceVersion.
pub fn object_reference<K: Resource>(obj: &K) -> ObjectReference {
    object_reference_with(obj, &K::api_resource())
}

/// A reference to an object whose type is known at run time (dynamic objects).
pub fn object_reference_with(obj: &impl HasMetadata, resource: &ApiResource) -> ObjectReference {
    ObjectReference {
        api_version: Some(resource.api_version()),
        kind: Some(resource.kind.to_string()),
        namespace: obj.namespace().and_then(non_empty),
        name: non_empty(obj.name()),
        uid: non_empty(obj.uid()),
        resource_version: non_empty(obj.resource_version()),
        field_path: None,
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::ConfigMap;
    use k8s_openapi::api::rbac::v1::ClusterRole;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    use super::*;

    #[test]
    fn references_carry_type_and_identity() {
        let cm = ConfigMap {
            metadata: ObjectMeta {
                name: Some("cfg".into()),
                namespace: Some("ns".into()),
                uid: Some("u-1".into()),
                resource_version: Some("42".into()),
                ..ObjectMeta::default()
            },
            ..ConfigMap::default()
        };
        let r = object_reference(&cm);
        assert_eq!(r.api_version.as_deref(), Some("v1"));
        assert_eq!(r.kind.as_deref(), Some("ConfigMap"));
        assert_eq!(r.namespace.as_deref(), Some("ns"));
        assert_eq!(r.name.as_deref(), Some("cfg"));
        assert_eq!(r.uid.as_deref(), Some("u-1"));
        assert_eq!(r.resource_version.as_deref(), Some("42"));

        let role = ClusterRole {
            metadata: ObjectMeta {
                name: Some("admin".into()),
                ..ObjectMeta::default()
            },
            ..ClusterRole::default()
        };
        let r = object_reference(&role);
        assert_eq!(
            r.api_version.as_deref(),
            Some("rbac.authorization.k8s.io/v1")
        );
        assert_eq!(r.namespace, None);
        assert_eq!(r.uid, None);
    }
}
