//! The CRD reader over the real corpus (../shared/corpus/crds): every file reads, the model
//! carries the names, scopes, versions, subresources and printer columns of the CRDs, and the
//! emitted code is deterministic.

use std::path::PathBuf;

use kinform_codegen::model::types::{TypeDef, TypeRef};
use kinform_codegen::model::{RootType, Scope};
use kinform_codegen::read::crd::{CrdSet, read_crds};
use kinform_codegen::{TypesConfig, emit_crd_types};

fn corpus() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../shared/corpus/crds"
    ))
}

fn all() -> CrdSet {
    read_crds([corpus()]).expect("the corpus reads")
}

#[test]
fn every_corpus_crd_reads_and_emits() {
    let set = all();
    assert!(set.skipped.is_empty(), "{:?}", set.skipped);
    let kinds: Vec<_> = set
        .types
        .iter()
        .map(|t| format!("{}/{}/{}", t.group, t.version, t.kind))
        .collect();
    assert!(kinds.len() >= 24, "{kinds:?}");
    let code = emit_crd_types(&set.types, &TypesConfig::default()).expect("formats");
    assert!(code.starts_with("// @generated"));
    let again = emit_crd_types(&all().types, &TypesConfig::default()).unwrap();
    assert_eq!(code, again, "emission is deterministic");
}

#[test]
fn model_carries_crd_metadata() {
    let set = all();
    let gv = &set.model.groups["monitoring.coreos.com"].versions["v1"];
    let prom = &gv.resources["prometheuses"];
    assert_eq!(prom.kind, "Prometheus");
    assert_eq!(prom.scope, Scope::Namespaced);
    assert_eq!(prom.list_kind.as_deref(), Some("PrometheusList"));
    assert_eq!(prom.short_names, ["prom"]);
    assert!(prom.subresources.contains_key("status"));
    let scale = prom.subresources["scale"].scale_paths.as_ref().unwrap();
    assert_eq!(scale.spec_replicas_path, ".spec.shards");
    assert!(!prom.printer_columns.is_empty());
    assert_eq!(
        prom.root,
        RootType::Generated("monitoring_coreos_com::v1::Prometheus".into())
    );

    let issuers = &set.model.groups["cert-manager.io"].versions["v1"].resources["clusterissuers"];
    assert_eq!(issuers.scope, Scope::Cluster);

    let clusters = &set.model.groups["cluster.x-k8s.io"].versions;
    assert!(
        clusters["v1beta1"].resources["clusters"]
            .deprecated
            .is_some()
    );
    assert!(!clusters["v1beta1"].resources["clusters"].storage);
    assert!(clusters["v1beta2"].resources["clusters"].storage);
    assert!(
        clusters["v1beta2"].resources["clusters"]
            .deprecated
            .is_none()
    );

    let apps = &set.model.groups["argoproj.io"].versions["v1alpha1"].resources["applications"];
    assert!(apps.subresources.is_empty());

    let pg = set.types.iter().find(|t| t.kind == "postgresql").unwrap();
    assert_eq!(pg.root, "Postgresql");
}

#[test]
fn zalando_snake_case_collisions_and_dashes() {
    let set = all();
    let pg = set.types.iter().find(|t| t.kind == "postgresql").unwrap();
    let TypeDef::Struct(spec) = pg.get("PostgresqlSpec").unwrap() else {
        panic!()
    };
    let names: Vec<(&str, &str)> = spec
        .fields
        .iter()
        .map(|f| (f.json_name.as_str(), f.rust_name.as_str()))
        .collect();
    assert!(
        names.contains(&("init_containers", "init_containers")),
        "{names:?}"
    );
    assert!(
        names.contains(&("initContainers", "init_containers_2")),
        "{names:?}"
    );
    let all_fields: Vec<_> = pg
        .types
        .iter()
        .filter_map(|t| match t {
            TypeDef::Struct(s) => Some(s.fields.iter()),
            _ => None,
        })
        .flatten()
        .map(|f| (f.json_name.clone(), f.rust_name.clone(), f.ty.clone()))
        .collect();
    assert!(
        all_fields
            .iter()
            .any(|(j, r, _)| j == "hugepages-1Gi" && r == "hugepages_1gi")
    );
    // users: a map of nullable arrays.
    let users = all_fields.iter().find(|(j, _, _)| j == "users").unwrap();
    let TypeRef::Map(value) = &users.2 else {
        panic!("{users:?}")
    };
    let TypeRef::Nullable(list) = &**value else {
        panic!("{users:?}")
    };
    assert!(
        matches!(&**list, TypeRef::List(item) if matches!(&**item, TypeRef::Named(_))),
        "{users:?}"
    );
}
