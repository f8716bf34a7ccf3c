//! Owned objects back to their owner's key, through the `ownerReferences` entry marked
//! `controller: true` (apimachinery's `metav1.GetControllerOf`, which sample-controller's
//! `handleObject` and every built-in controller use).
//!
//! An owner reference names the owner by apiVersion, kind, name and uid; the namespace is the
//! dependent's own (cross-namespace ownership is not allowed), or none for a cluster-scoped
//! owner. The group is compared, not the version: an owner written as `v1beta1` and read as
//! `v1` is the same object.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;

use kinform_core::resource::{HasMetadata, Resource, Scope, object_key};

/// The `ownerReferences` entry of `obj` with `controller: true`, if any (`GetControllerOf`).
pub fn controller_of<C: HasMetadata>(obj: &C) -> Option<&OwnerReference> {
    obj.metadata()
        .owner_references
        .as_deref()?
        .iter()
        .find(|r| r.controller == Some(true))
}

/// The group of an `apiVersion` (`""` for the core group's `v1`).
fn group_of(api_version: &str) -> &str {
    api_version.rsplit_once('/').map_or("", |(g, _)| g)
}

/// The key of the `K` that controls `obj`, if its controller reference names a `K`.
pub fn owner_key<K: Resource, C: HasMetadata>(obj: &C) -> Option<String> {
    let owner = controller_of(obj)?;
    if owner.kind != K::KIND || group_of(&owner.api_version) != K::GROUP {
        return None;
    }
    let namespace = match K::SCOPE {
        Scope::Namespaced => obj.namespace(),
        Scope::Cluster => None,
    };
    Some(object_key(namespace, &owner.name))
}

/// An owner reference to `owner` marking it as the controller, with `blockOwnerDeletion`
/// (apimachinery's `metav1.NewControllerRef`). Set it on the objects a controller creates so
/// [`owns`](super::ControllerBuilder::owns) maps them back and garbage collection deletes
/// them with their owner.
pub fn controller_reference<K: Resource>(owner: &K) -> OwnerReference {
    OwnerReference {
        api_version: K::API_VERSION.to_owned(),
        kind: K::KIND.to_owned(),
        name: owner.name().to_owned(),
        uid: owner.uid().to_owned(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}

/// Whether `obj` is controlled by `owner` (same uid; apimachinery's `metav1.IsControlledBy`).
pub fn is_controlled_by<C: HasMetadata, K: HasMetadata>(obj: &C, owner: &K) -> bool {
    controller_of(obj).is_some_and(|r| r.uid == owner.uid())
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
    use k8s_openapi::api::core::v1::Namespace;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    use super::*;

    fn deployment(ns: &str, name: &str, uid: &str) -> Deployment {
        Deployment {
            metadata: ObjectMeta {
                namespace: Some(ns.into()),
                name: Some(name.into()),
                uid: Some(uid.into()),
                ..ObjectMeta::default()
            },
            ..Deployment::default()
        }
    }

    fn replica_set(refs: Vec<OwnerReference>) -> ReplicaSet {
        ReplicaSet {
            metadata: ObjectMeta {
                namespace: Some("ns".into()),
                name: Some("web-1".into()),
                owner_references: Some(refs),
                ..ObjectMeta::default()
            },
            ..ReplicaSet::default()
        }
    }

    #[test]
    fn maps_the_controller_reference_of_the_right_kind() {
        let owner = deployment("ns", "web", "u1");
        let rs = replica_set(vec![controller_reference(&owner)]);
        assert_eq!(owner_key::<Deployment, _>(&rs).as_deref(), Some("ns/web"));
        assert!(is_controlled_by(&rs, &owner));
        assert!(!is_controlled_by(&rs, &deployment("ns", "web", "u2")));
        // Another kind is not mapped.
        assert_eq!(owner_key::<ReplicaSet, _>(&rs), None);
    }

    #[test]
    fn ignores_non_controller_references_and_other_groups() {
        let owner = deployment("ns", "web", "u1");
        let mut plain = controller_reference(&owner);
        plain.controller = None;
        assert_eq!(owner_key::<Deployment, _>(&replica_set(vec![plain])), None);
        let mut other_group = controller_reference(&owner);
        other_group.api_version = "example.com/v1".into();
        assert_eq!(
            owner_key::<Deployment, _>(&replica_set(vec![other_group])),
            None
        );
        let mut other_version = controller_reference(&owner);
        other_version.api_version = "apps/v1beta2".into();
        assert_eq!(
            owner_key::<Deployment, _>(&replica_set(vec![other_version])).as_deref(),
            Some("ns/web")
        );
    }

    #[test]
    fn cluster_scoped_owners_have_no_namespace() {
        let ns = Namespace {
            metadata: ObjectMeta {
                name: Some("team".into()),
                uid: Some("u9".into()),
                ..ObjectMeta::default()
            },
            ..Namespace::default()
        };
        let rs = replica_set(vec![controller_reference(&ns)]);
        assert_eq!(owner_key::<Namespace, _>(&rs).as_deref(), Some("team"));
    }
}
