//! Which types are decoded in place at the enabled Kubernetes version: the built-in
//! resources, their lean forms and the dynamic lean informer's objects at every version
//! kinform supports (a supported version missing from `in_place`'s gates would fall back in
//! silence, and fails here), and nothing at any other version, whose objects all take the
//! ordinary path: decoded by serde, every replaced object freed first. That path gives what
//! `serde_json` gives: `differential_tests` decodes with `Decoder::without_in_place`, the
//! decoder such a version has for every type, and checks it against `serde_json`.

use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use kinform_core::Lean;

use super::super::object::Decoder;
use super::root_of;
use crate::DynamicObject;

/// The Kubernetes minor k8s-openapi is built for, when it is one of 0.29's.
#[allow(clippy::vec_init_then_push)] // One push is compiled, behind its version's macro.
fn enabled_minor() -> Option<u32> {
    let mut minor = Vec::new();
    k8s_openapi::k8s_if_1_33! { minor.push(33); }
    k8s_openapi::k8s_if_1_34! { minor.push(34); }
    k8s_openapi::k8s_if_1_35! { minor.push(35); }
    k8s_openapi::k8s_if_1_36! { minor.push(36); }
    k8s_openapi::k8s_if_1_37! { minor.push(37); }
    minor.first().copied()
}

#[test]
fn the_built_in_resources_are_decoded_in_place_at_every_supported_version() {
    // README.md, "Kubernetes versions"; kinform-codegen's `SUPPORTED_MINORS`.
    let supported = matches!(enabled_minor(), Some(35..=37));
    for (ty, decoded_in_place) in [
        ("Pod", root_of::<Pod>().is_some()),
        ("new Pod", root_of::<Option<Pod>>().is_some()),
        ("Lean<Pod>", root_of::<Lean<Pod>>().is_some()),
        ("ConfigMap", root_of::<ConfigMap>().is_some()),
        (
            "Lean<DynamicObject>",
            root_of::<Lean<DynamicObject>>().is_some(),
        ),
    ] {
        assert_eq!(
            decoded_in_place,
            supported,
            "{ty} at Kubernetes 1.{:?}",
            enabled_minor()
        );
    }
    // Never a type without a k8s-openapi struct of the version.
    assert!(root_of::<DynamicObject>().is_none());
    assert!(root_of::<Option<DynamicObject>>().is_none());

    let pod = br#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a"}}"#;
    let mut target = Pod::default();
    assert_eq!(
        Decoder::default().decode_into(&mut target, pod, false, None),
        supported
    );
    // Without the decoders, the caller is told to decode afresh; the fresh decode is the
    // same either way.
    // The list and watch paths' entry point, for a resource and its lean form.
    let mut target = Pod::default();
    assert_eq!(
        Decoder::default().decode_resource_into(&mut target, pod, false, None),
        supported
    );
    let mut target = Lean::<Pod>::from_object(&Pod::default()).expect("a lean pod");
    assert_eq!(
        Decoder::default().decode_resource_into(&mut target, pod, false, None),
        supported,
        "Lean<Pod> on the list and watch paths"
    );
    let mut target = Pod::default();
    assert!(!Decoder::without_in_place().decode_into(&mut target, pod, false, None));
    let fresh: Pod = Decoder::without_in_place()
        .decode(pod, false)
        .expect("a pod");
    let with: Pod = Decoder::default().decode(pod, false).expect("a pod");
    assert_eq!(fresh, with);
    assert_eq!(fresh.metadata.name.as_deref(), Some("a"));
}
