//! The OpenAPI readers on the real Kubernetes v1.35 spec: v2 and v3 give the same model, and
//! known resources have the verbs, scopes, subresources and body types the API server serves.

use std::path::PathBuf;
use std::sync::OnceLock;

use kinform_codegen::model::{ApiModel, ResourceDef, RootType, Scope, Verb};
use kinform_codegen::read::openapi::read_openapi;

fn corpus() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../shared/corpus/openapi"
    ))
}

fn v2() -> &'static ApiModel {
    static M: OnceLock<ApiModel> = OnceLock::new();
    M.get_or_init(|| read_openapi(&corpus().join("swagger.json")).expect("v2 reads"))
}

fn v3() -> &'static ApiModel {
    static M: OnceLock<ApiModel> = OnceLock::new();
    M.get_or_init(|| read_openapi(&corpus().join("v3")).expect("v3 reads"))
}

fn res<'a>(m: &'a ApiModel, group: &str, version: &str, plural: &str) -> &'a ResourceDef {
    m.groups
        .get(group)
        .and_then(|g| g.versions.get(version))
        .and_then(|v| v.resources.get(plural))
        .unwrap_or_else(|| panic!("{group}/{version}/{plural} missing"))
}

fn verbs(list: &[Verb]) -> std::collections::BTreeSet<Verb> {
    list.iter().copied().collect()
}

fn ext(path: &str) -> Option<RootType> {
    Some(RootType::External(path.to_owned()))
}

const ALL: [Verb; 8] = [
    Verb::Get,
    Verb::List,
    Verb::Watch,
    Verb::Create,
    Verb::Update,
    Verb::Patch,
    Verb::Delete,
    Verb::DeleteCollection,
];

#[test]
fn v2_and_v3_give_the_same_resources() {
    let (a, b) = (v2(), v3());
    let names = |m: &ApiModel| {
        m.groups
            .values()
            .flat_map(|g| g.versions.values())
            .flat_map(|v| {
                v.resources
                    .keys()
                    .map(move |r| format!("{}/{}/{r}", v.group, v.version))
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(names(a), names(b));
    for (g, group) in &a.groups {
        for (v, gv) in &group.versions {
            for (plural, r) in &gv.resources {
                let other = res(b, g, v, plural);
                // Descriptions may be worded differently between the formats; nothing else.
                let mut r = r.clone();
                r.docs.clone_from(&other.docs);
                assert_eq!(&r, other, "{g}/{v}/{plural}");
            }
        }
    }
}

#[test]
fn counts() {
    let m = v2();
    let gvrs: usize = m
        .groups
        .values()
        .flat_map(|g| g.versions.values())
        .map(|v| v.resources.len())
        .sum();
    let gvs: usize = m.groups.values().map(|g| g.versions.len()).sum();
    assert_eq!(m.groups.len(), 23, "groups (core included)");
    assert_eq!(gvs, 36, "group versions");
    assert_eq!(gvrs, 90, "GVRs");
    let subs: usize = m
        .groups
        .values()
        .flat_map(|g| g.versions.values())
        .flat_map(|v| v.resources.values())
        .map(|r| r.subresources.len())
        .sum();
    assert_eq!(subs, 52, "subresources");
    let watchable = m
        .groups
        .values()
        .flat_map(|g| g.versions.values())
        .flat_map(|v| v.resources.values())
        .filter(|r| r.verbs.contains(&Verb::List) && r.verbs.contains(&Verb::Watch))
        .count();
    assert_eq!(watchable, 82, "list+watch resources");
}

#[test]
fn pods() {
    let pods = res(v2(), "", "v1", "pods");
    assert_eq!(pods.kind, "Pod");
    assert_eq!(pods.scope, Scope::Namespaced);
    assert_eq!(pods.verbs, verbs(&ALL));
    assert_eq!(
        pods.root,
        RootType::External("k8s_openapi::api::core::v1::Pod".into())
    );
    let subs: Vec<_> = pods.subresources.keys().map(String::as_str).collect();
    assert_eq!(
        subs,
        [
            "attach",
            "binding",
            "ephemeralcontainers",
            "eviction",
            "exec",
            "log",
            "portforward",
            "proxy",
            "resize",
            "status"
        ]
    );
    let s = &pods.subresources;
    assert_eq!(
        s["status"].verbs,
        verbs(&[Verb::Get, Verb::Update, Verb::Patch])
    );
    assert_eq!(s["status"].body_type, None);
    assert_eq!(s["eviction"].verbs, verbs(&[Verb::Create]));
    assert_eq!(
        s["eviction"].body_type,
        ext("k8s_openapi::api::policy::v1::Eviction")
    );
    assert_eq!(
        s["binding"].body_type,
        ext("k8s_openapi::api::core::v1::Binding")
    );
    assert!(s["log"].streams);
    assert_eq!(s["log"].verbs, verbs(&[Verb::Get]));
    assert_eq!(s["log"].body_type, None);
    assert_eq!(s["exec"].verbs, verbs(&[Verb::Connect]));
    // The options kinds (PodExecOptions) are query parameters with no schema in the spec.
    assert_eq!(s["exec"].body_type, None);
    assert_eq!(s["proxy"].verbs, verbs(&[Verb::Connect]));
    assert_eq!(s["ephemeralcontainers"].body_type, None);
    assert_eq!(
        s["resize"].verbs,
        verbs(&[Verb::Get, Verb::Update, Verb::Patch])
    );
}

#[test]
fn deployments_scale() {
    let d = res(v3(), "apps", "v1", "deployments");
    assert_eq!(d.kind, "Deployment");
    assert_eq!(d.verbs, verbs(&ALL));
    let scale = &d.subresources["scale"];
    assert_eq!(scale.verbs, verbs(&[Verb::Get, Verb::Update, Verb::Patch]));
    assert_eq!(
        scale.body_type,
        ext("k8s_openapi::api::autoscaling::v1::Scale")
    );
    assert!(!scale.streams);
}

#[test]
fn csr_approval_and_token() {
    let csr = res(
        v2(),
        "certificates.k8s.io",
        "v1",
        "certificatesigningrequests",
    );
    assert_eq!(csr.scope, Scope::Cluster);
    let approval = &csr.subresources["approval"];
    assert_eq!(
        approval.verbs,
        verbs(&[Verb::Get, Verb::Update, Verb::Patch])
    );
    assert_eq!(approval.body_type, None);
    let sa = res(v2(), "", "v1", "serviceaccounts");
    let token = &sa.subresources["token"];
    assert_eq!(token.verbs, verbs(&[Verb::Create]));
    assert_eq!(
        token.body_type,
        ext("k8s_openapi::api::authentication::v1::TokenRequest")
    );
}

#[test]
fn create_only_and_list_only_resources() {
    let tr = res(v2(), "authentication.k8s.io", "v1", "tokenreviews");
    assert_eq!(tr.verbs, verbs(&[Verb::Create]));
    assert_eq!(tr.scope, Scope::Cluster);
    let lsar = res(
        v2(),
        "authorization.k8s.io",
        "v1",
        "localsubjectaccessreviews",
    );
    assert_eq!(lsar.scope, Scope::Namespaced);
    let cs = res(v2(), "", "v1", "componentstatuses");
    assert_eq!(cs.verbs, verbs(&[Verb::Get, Verb::List]));
    let ns = res(v2(), "", "v1", "namespaces");
    assert_eq!(ns.scope, Scope::Cluster);
    assert_eq!(ns.subresources["finalize"].verbs, verbs(&[Verb::Update]));
    let crd = res(
        v2(),
        "apiextensions.k8s.io",
        "v1",
        "customresourcedefinitions",
    );
    assert_eq!(
        crd.root,
        RootType::External(
            "k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition"
                .into()
        )
    );
    assert!(crd.docs.as_deref().is_some_and(|d| !d.is_empty()));
}
