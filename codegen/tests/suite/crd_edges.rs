//! Issue 47, kinform-gen at the edges, proven by compiling and running the generated code
//! in one temporary crate (tests/support/temp_crate.rs) that depends on the runtime and on
//! `kinform-api` with every group:
//!
//! - a CRD in a group named after every group `kinform-api` has (`policy.networking.k8s.io`,
//!   AdminNetworkPolicy's, and `<group>.edges.k8s.io` for each), generated beside
//!   `kinform-api`: both preludes glob-imported, every accessor of both called;
//! - a schema nested 94 levels deep (190 levels of YAML), generated, built and a document of
//!   that depth round-tripped;
//! - a `null` on a declared non-nullable property of an object that keeps unknown fields
//!   survives decode and encode, and is written only while the field is `None`;
//! - names: kind `CephNVMeOFGateway` (Rook's) gets module `ceph_nvmeof_gateway`, kind `Self`
//!   `self_value` beside `self_value_client`.

use std::fmt::Write as _;

use kinform_codegen::naming::{BUILT_IN_GROUPS, group_name};
use kinform_codegen::{Generator, Layout};

use crate::temp_crate::{TempCrate, workspace};

/// A minimal CRD: `kind` in `group`, version v1alpha1, with `schema` as `spec`.
fn crd(group: &str, kind: &str, plural: &str, spec: &str) -> String {
    format!(
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n\
         metadata: {{name: {plural}.{group}}}\nspec:\n  group: {group}\n  scope: Namespaced\n  \
         names: {{kind: {kind}, plural: {plural}}}\n  versions:\n  - name: v1alpha1\n    \
         served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n        \
         type: object\n        properties:\n          spec: {spec}\n---\n"
    )
}

/// The groups of `kinform-api`, the core group as `core`.
fn api_groups() -> Vec<String> {
    BUILT_IN_GROUPS
        .iter()
        .filter(|g| **g != "lifecycle.k8s.io") // 1.37 only: not in kinform-api's 1.35 spec
        .map(|g| group_name(g))
        .collect()
}

/// A schema `levels` objects deep, in flow style: `{type: object, properties: {a: ...}}`.
fn deep_schema(levels: usize) -> String {
    let mut s = "{type: string}".to_owned();
    for _ in 0..levels {
        s = format!("{{type: object, properties: {{a: {s}}}}}");
    }
    s
}

#[test]
fn generated_crates_compile_beside_kinform_api_and_keep_what_they_read() {
    let krate = TempCrate::with_dependencies(
        "kinform-gen-edges",
        &format!(
            "kinform-api = {{ path = {:?}, features = [\"all\"] }}",
            workspace().join("generated").display().to_string()
        ),
    );
    let mut crds = crd(
        "policy.networking.k8s.io",
        "AdminNetworkPolicy",
        "adminnetworkpolicies",
        "{type: object, properties: {priority: {type: integer, format: int32}}}",
    );
    for g in api_groups() {
        crds.push_str(&crd(
            &format!("{g}.edges.k8s.io"),
            "Widget",
            "widgets",
            "{type: object}",
        ));
    }
    crds.push_str(&crd("deep.example.com", "Deep", "deeps", &deep_schema(94)));
    crds.push_str(&crd(
        "keep.example.com",
        "Keeper",
        "keepers",
        "{type: object, x-kubernetes-preserve-unknown-fields: true, properties: \
         {size: {type: integer}, name: {type: string}, tags: {type: object, \
         additionalProperties: {type: string}}}}",
    ));
    crds.push_str(&crd(
        "ceph.rook.io",
        "CephNVMeOFGateway",
        "cephnvmeofgateways",
        "{type: object}",
    ));
    crds.push_str(&crd(
        "names.example.com",
        "Self",
        "selves",
        "{type: object}",
    ));
    krate.write("crds/all.yaml", &crds);
    let report = Generator::new()
        .crd_dir(krate.dir().join("crds"))
        .layout(Layout::Tree {
            root_file: "mod.rs".to_owned(),
        })
        .out_dir(krate.dir().join("src/generated"))
        .generate_report()
        .expect("generates");
    // The deep types need a higher recursion limit than rustc's default, and say so.
    let deep: Vec<String> = report.warnings.iter().map(ToString::to_string).collect();
    assert!(
        deep.iter().any(
            |w| w.starts_with("deep.example.com/v1alpha1 Deep: its types nest ")
                && w.contains("#![recursion_limit = \"256\"]")
        ),
        "{deep:#?}"
    );
    let gen_dir = krate.dir().join("src/generated");
    for module in [
        "ceph_rook_io/v1alpha1/ceph_nvmeof_gateway/mod.rs",
        "ceph_rook_io/v1alpha1/ceph_nvmeof_gateway/apply.rs",
        "ceph_rook_io/v1alpha1/ceph_nvmeof_gateway_client.rs",
        "names_example_com/v1alpha1/self_value/mod.rs",
        "names_example_com/v1alpha1/self_value_client.rs",
        "policy_networking_k8s_io/v1alpha1/admin_network_policy/mod.rs",
    ] {
        assert!(gen_dir.join(module).is_file(), "{module}");
    }

    // Every accessor of both crates, named in one scope under both preludes.
    let mut uses = String::from(
        "use crate::generated::prelude::*;\nuse kinform_api::prelude::*;\n\n\
         /// Every group accessor of both crates, in one scope.\n\
         pub fn accessors(client: &kinform::Client, factory: &kinform::informer::InformerFactory) {\n\
         let _ = client.policy_networking_k8s_io_v1alpha1().adminnetworkpolicies(\"ns\");\n\
         let _ = factory.policy_networking_k8s_io().v1alpha1().adminnetworkpolicies();\n\
         let _ = factory.policy().v1().poddisruptionbudgets();\n\
         let _ = client.policy_v1().poddisruptionbudgets(\"ns\");\n",
    );
    for g in api_groups() {
        let ours = format!("{g}_edges_k8s_io");
        writeln!(uses, "let _ = client.{ours}_v1alpha1().widgets(\"ns\");").unwrap();
        writeln!(uses, "let _ = factory.{ours}().v1alpha1().widgets();").unwrap();
    }
    uses.push_str(
        "let _ = factory.core().v1().pods();\nlet _ = factory.apps().v1().deployments();\n}\n",
    );
    let lib = format!(
        "//! Generated code beside kinform-api.\n\
         #![allow(missing_docs)]\n\
         #![recursion_limit = \"256\"]\n\
         pub mod generated;\n\
         {uses}\n\
         #[cfg(test)]\n\
         mod tests {{\n\
         use kinform::k8s_openapi::serde_json::{{self, json, Value}};\n\
         use crate::generated::keep_example_com::v1alpha1::Keeper;\n\
         use crate::generated::deep_example_com::v1alpha1::Deep;\n\
         \n\
         fn keeper(spec: Value) -> Value {{\n\
             json!({{\"apiVersion\": \"keep.example.com/v1alpha1\", \"kind\": \"Keeper\",\n\
                    \"metadata\": {{\"name\": \"k\"}}, \"spec\": spec}})\n\
         }}\n\
         \n\
         #[test]\n\
         fn a_null_on_a_declared_property_of_a_preserved_object_is_kept() {{\n\
             let doc = keeper(json!({{\"size\": null, \"name\": \"a\", \"other\": null, \"tags\": {{\"t\": \"v\"}}}}));\n\
             let mut k: Keeper = serde_json::from_value(doc.clone()).unwrap();\n\
             assert_eq!(k.spec.as_ref().unwrap().size, None);\n\
             assert_eq!(serde_json::to_value(&k).unwrap(), doc, \"written as read\");\n\
             // Set, the field is written and the kept null is not.\n\
             k.spec.as_mut().unwrap().size = Some(3);\n\
             let out = serde_json::to_value(&k).unwrap();\n\
             assert_eq!(out[\"spec\"][\"size\"], json!(3), \"{{out}}\");\n\
             let text = serde_json::to_string(&k).unwrap();\n\
             assert_eq!(text.matches(\"\\\"size\\\"\").count(), 1, \"{{text}}\");\n\
             // Without nulls nothing changes.\n\
             let plain = keeper(json!({{\"size\": 1, \"x\": [1]}}));\n\
             let k: Keeper = serde_json::from_value(plain.clone()).unwrap();\n\
             assert_eq!(serde_json::to_value(&k).unwrap(), plain);\n\
         }}\n\
         \n\
         #[test]\n\
         fn a_document_94_levels_deep_round_trips() {{\n\
             let mut spec = json!(\"x\");\n\
             for _ in 0..94 {{ spec = json!({{\"a\": spec}}); }}\n\
             let doc = json!({{\"apiVersion\": \"deep.example.com/v1alpha1\", \"kind\": \"Deep\", \"spec\": spec}});\n\
             let d: Deep = serde_json::from_value(doc.clone()).unwrap();\n\
             assert_eq!(serde_json::to_value(&d).unwrap(), doc);\n\
         }}\n\
         }}\n"
    );
    krate.write("src/lib.rs", &lib);
    krate.cargo("test");
}
