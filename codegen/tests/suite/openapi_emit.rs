//! The resource emitters on the v1.35 spec: every file parses as Rust, output is
//! deterministic, layouts agree, and snapshots of two resources.

use std::path::PathBuf;

use kinform_codegen::{GeneratedFile, Generator, Layout};

fn swagger() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../shared/corpus/openapi/swagger.json"
    ))
}

fn tree(generator: Generator) -> Vec<GeneratedFile> {
    generator
        .layout(Layout::Tree {
            root_file: "mod.rs".into(),
        })
        .render()
        .expect("renders")
}

fn file<'a>(files: &'a [GeneratedFile], path: &str) -> &'a str {
    &files
        .iter()
        .find(|f| f.path == std::path::Path::new(path))
        .unwrap_or_else(|| panic!("{path} not generated"))
        .contents
}

#[test]
fn whole_spec_parses_as_rust_and_is_deterministic() {
    let files = tree(Generator::new().openapi(swagger()));
    // 23 group modules, 36 group versions, 90 resources, and the root.
    assert_eq!(files.len(), 23 + 36 + 90 + 1);
    for f in &files {
        assert!(
            f.contents.starts_with("// @generated"),
            "{}",
            f.path.display()
        );
        syn::parse_file(&f.contents)
            .unwrap_or_else(|e| panic!("{} does not parse: {e}", f.path.display()));
    }
    assert_eq!(files, tree(Generator::new().openapi(swagger())));
    let single = Generator::new().openapi(swagger()).render().unwrap();
    assert_eq!(single.len(), 1);
    assert_eq!(single[0].path, PathBuf::from("kinform_generated.rs"));
    syn::parse_file(&single[0].contents).expect("single file parses");
}

#[test]
fn accessors_follow_client_go() {
    let files = tree(Generator::new().openapi(swagger()));
    let root = file(&files, "mod.rs");
    assert!(root.contains("pub use super::core::v1::CoreV1ClientExt;"));
    assert!(root.contains("pub use super::apps::AppsInformersExt;"));
    assert!(root.contains("pub use super::rbac::v1::RbacV1ClientExt;"));
    let core_v1 = file(&files, "core/v1/mod.rs");
    assert!(core_v1.contains("fn core_v1(&self) -> CoreV1Client"));
    assert!(core_v1.contains("pub fn pods(&self, namespace: &str) -> pod_client::PodClient"));
    assert!(core_v1.contains("pub fn namespaces(&self) -> namespace_client::NamespaceClient"));
    // componentstatuses can be listed but not watched: a client, no informer.
    assert!(core_v1.contains(
        "pub fn componentstatuses(&self) -> component_status_client::ComponentStatusClient"
    ));
    assert!(!core_v1.contains("ComponentStatusInformer"));
    let cs = file(&files, "core/v1/component_status_client.rs");
    assert!(!cs.contains("pub async fn create"));
    // Create-only resources: only `create`.
    let tr = file(&files, "authentication/v1/token_review_client.rs");
    assert!(tr.contains("pub async fn create("));
    assert!(!tr.contains("pub async fn get("));
    let sa = file(&files, "core/v1/service_account_client.rs");
    assert!(sa.contains("pub async fn create_token("));
    let csr = file(
        &files,
        "certificates/v1/certificate_signing_request_client.rs",
    );
    assert!(csr.contains("pub async fn replace_approval("));
}

#[test]
fn filters_and_crate_paths() {
    let files = tree(
        Generator::new()
            .openapi(swagger())
            .group("core")
            .group("apps")
            .version("v1")
            .runtime_crate("crate::rt")
            .k8s_openapi_crate("::k8s_openapi")
            .feature_per_group(true),
    );
    let groups: Vec<_> = files
        .iter()
        .filter(|f| f.path.ends_with("mod.rs") && f.path.components().count() == 2)
        .map(|f| f.path.display().to_string())
        .collect();
    assert_eq!(groups, ["apps/mod.rs", "core/mod.rs"]);
    let root = file(&files, "mod.rs");
    assert!(
        root.contains("#[cfg(feature = \"apps\")]\n#[rustfmt::skip]\npub mod apps;"),
        "{root}"
    );
    let pods = file(&files, "core/v1/pod_client.rs");
    assert!(
        pods.contains("use ::k8s_openapi::api::core::v1::{Binding, Pod};"),
        "{pods}"
    );
    assert!(pods.contains("crate::rt::Api<Pod>"));
    assert!(
        Generator::new()
            .openapi(swagger())
            .runtime_crate("not a path")
            .render()
            .is_err()
    );
}

#[test]
fn snapshots() {
    let files = tree(
        Generator::new()
            .openapi(swagger())
            .group("apps")
            .group("coordination.k8s.io")
            .version("v1"),
    );
    insta::assert_snapshot!(
        "apps_v1_deployments",
        file(&files, "apps/v1/deployment_client.rs")
    );
    insta::assert_snapshot!("apps_v1_mod", file(&files, "apps/v1/mod.rs"));
    insta::assert_snapshot!(
        "coordination_v1_leases",
        file(&files, "coordination/v1/lease_client.rs")
    );
    insta::assert_snapshot!("coordination_mod", file(&files, "coordination/mod.rs"));
}
