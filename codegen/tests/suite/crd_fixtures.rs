//! The CRD reader and type emitter on small fixtures: every schema construct's mapping,
//! the model's names/subresources/columns/versions, error reporting, and insta snapshots of
//! the emitted code.

use std::path::{Path, PathBuf};

use kinform_codegen::model::types::{Field, StructType, TypeDef, TypeModule, TypeRef};
use kinform_codegen::model::{RootType, Scope, Verb};
use kinform_codegen::read::crd::{CrdSet, read_crd_str, read_crds};
use kinform_codegen::read::crd_error::CrdError;
use kinform_codegen::{TypesConfig, emit_crd_types, emit_type_module};
use serde_json::json;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn read(name: &str) -> CrdSet {
    read_crds([fixture(name)]).unwrap()
}

fn module<'a>(set: &'a CrdSet, version: &str, kind: &str) -> &'a TypeModule {
    set.types
        .iter()
        .find(|t| t.version == version && t.kind == kind)
        .unwrap()
}

fn strukt<'a>(m: &'a TypeModule, name: &str) -> &'a StructType {
    match m.get(name) {
        Some(TypeDef::Struct(s)) => s,
        other => panic!("{name}: {other:?}"),
    }
}

fn field<'a>(s: &'a StructType, json: &str) -> &'a Field {
    s.fields
        .iter()
        .find(|f| f.json_name == json)
        .unwrap_or_else(|| panic!("{json}"))
}

#[test]
fn widget_model() {
    let set = read("widgets.yaml");
    let v1 = &set.model.groups["example.com"].versions["v1"].resources["widgets"];
    assert_eq!(v1.kind, "Widget");
    assert_eq!(v1.singular.as_deref(), Some("widget"));
    assert_eq!(v1.list_kind.as_deref(), Some("WidgetList"));
    assert_eq!(v1.short_names, ["wd"]);
    assert_eq!(v1.categories, ["all"]);
    assert_eq!(v1.scope, Scope::Namespaced);
    assert!(v1.storage && v1.served && v1.deprecated.is_none());
    assert!(v1.verbs.contains(&Verb::DeleteCollection));
    assert_eq!(
        v1.root,
        RootType::Generated("example_com::v1::Widget".into())
    );
    assert_eq!(v1.docs.as_deref(), Some("A Widget."));
    assert_eq!(v1.printer_columns.len(), 2);
    assert_eq!(v1.printer_columns[1].priority, 1);
    let scale = &v1.subresources["scale"];
    assert_eq!(
        scale
            .scale_paths
            .as_ref()
            .unwrap()
            .label_selector_path
            .as_deref(),
        Some(".status.selector")
    );
    assert_eq!(
        scale.body_type,
        Some(RootType::External(
            "k8s_openapi::api::autoscaling::v1::Scale".into()
        ))
    );
    assert!(v1.subresources.contains_key("status"));

    let beta = &set.model.groups["example.com"].versions["v1beta1"].resources["widgets"];
    assert_eq!(
        beta.deprecated,
        Some(Some(
            "example.com/v1beta1 Widget is deprecated; use v1".into()
        ))
    );
    assert!(!beta.storage);
    assert!(beta.subresources.is_empty());
    assert!(
        !set.model.groups["example.com"]
            .versions
            .contains_key("v1alpha1")
    );
    assert_eq!(set.unserved.len(), 1);
    assert_eq!(set.unserved[0].version, "v1alpha1");
}

#[test]
fn widget_schema_constructs() {
    let set = read("widgets.yaml");
    let m = module(&set, "v1", "Widget");
    assert_eq!(m.root, "Widget");
    let root = strukt(m, "Widget");
    assert!(root.is_root);
    let names: Vec<_> = root.fields.iter().map(|f| f.json_name.as_str()).collect();
    assert_eq!(
        names,
        ["metadata", "spec", "status"],
        "apiVersion/kind are constants"
    );
    assert_eq!(field(root, "metadata").ty, TypeRef::ObjectMeta);

    let spec = strukt(m, "WidgetSpec");
    let ty = |j: &str| field(spec, j).ty.clone();
    assert_eq!(ty("replicas"), TypeRef::I32);
    assert_eq!(ty("bytesTotal"), TypeRef::I64);
    assert_eq!(ty("count"), TypeRef::I64);
    assert_eq!(ty("ratio"), TypeRef::Number);
    assert_eq!(ty("enabled"), TypeRef::Bool);
    assert_eq!(ty("port"), TypeRef::IntOrString);
    assert_eq!(ty("memory"), TypeRef::Quantity);
    assert_eq!(ty("expires"), TypeRef::DateTime);
    assert_eq!(ty("caBundle"), TypeRef::Bytes);
    // A `null` value without a default is dropped, as the server prunes it.
    assert_eq!(
        ty("labels"),
        TypeRef::Map(Box::new(TypeRef::Pruned(Box::new(TypeRef::String))))
    );
    assert_eq!(ty("values"), TypeRef::Json);
    assert_eq!(
        ty("parts"),
        TypeRef::List(Box::new(TypeRef::Named("WidgetSpecParts".into())))
    );
    assert!(field(spec, "size").required && !field(spec, "size").is_optional());
    assert!(field(spec, "initContainers").nullable);
    assert_eq!(field(spec, "replicas").default, Some(json!(1)));
    assert_eq!(field(spec, "settings").default, Some(json!({})));

    // Names: keywords, dashes, snake_case collisions.
    let rust = |j: &str| field(spec, j).rust_name.clone();
    assert_eq!(rust("type"), "r#type");
    assert_eq!(rust("ref"), "r#ref");
    assert_eq!(rust("hugepages-2Mi"), "hugepages_2mi");
    assert_eq!(rust("init_containers"), "init_containers");
    assert_eq!(rust("initContainers"), "init_containers_2");

    // Enums with a catch-all.
    let Some(TypeDef::Enum(size)) = m.get("WidgetSpecSize") else {
        panic!()
    };
    let values: Vec<_> = size
        .variants
        .iter()
        .map(|v| (v.value.as_str(), v.rust_name.as_str()))
        .collect();
    assert_eq!(
        values,
        [
            ("Small", "Small"),
            ("Large", "Large"),
            ("x-large", "XLarge")
        ]
    );
    assert_eq!(size.other_variant, "Other");

    // Preserve-unknown with properties: typed fields plus a flattened remainder.
    let options = strukt(m, "WidgetSpecOptions");
    assert_eq!(options.fields.len(), 1);
    assert_eq!(options.remainder.as_ref().unwrap().value, TypeRef::Json);

    // Embedded resource: apiVersion/kind/metadata always present.
    let template = strukt(m, "WidgetSpecTemplate");
    assert_eq!(field(template, "metadata").ty, TypeRef::ObjectMeta);
    assert_eq!(field(template, "apiVersion").ty, TypeRef::String);
    assert_eq!(field(template, "spec").ty, TypeRef::Json);

    // oneOf with distinguishable branches: an untagged union.
    let Some(TypeDef::Union(u)) = m.get("WidgetSpecValue") else {
        panic!()
    };
    let variants: Vec<_> = u.variants.iter().map(|v| v.rust_name.as_str()).collect();
    assert_eq!(variants, ["String", "Array"]);
}

#[test]
fn gadget_keyword_properties_and_list_wrapper() {
    let set = read("gadgets.yaml");
    assert_eq!(set.skipped.len(), 1);
    assert_eq!(set.skipped[0].kind, "Namespace");
    assert_eq!(set.skipped[0].document, 1);
    let m = module(&set, "v1", "gadget");
    assert_eq!(m.root, "Gadget");
    assert_eq!(m.scope, Scope::Cluster);
    let spec = strukt(m, "GadgetSpec");
    let pairs: Vec<_> = spec
        .fields
        .iter()
        .map(|f| (f.json_name.as_str(), f.rust_name.as_str()))
        .collect();
    assert_eq!(
        pairs,
        [
            ("$ref", "r#ref"),
            ("Option", "option"),
            ("default", "default"),
            ("enum", "r#enum"),
            ("items", "items"),
            ("match", "r#match"),
            ("properties", "properties"),
            ("self", "self_"),
            (
                "x-kubernetes-preserve-unknown-fields",
                "x_kubernetes_preserve_unknown_fields"
            ),
        ]
    );
    assert_eq!(
        field(spec, "items").ty,
        TypeRef::List(Box::new(TypeRef::String))
    );
    assert_eq!(
        field(spec, "x-kubernetes-preserve-unknown-fields").ty,
        TypeRef::Bool
    );
    assert!(spec.remainder.is_none());
}

#[test]
fn item_and_value_defaults_are_kept_in_the_model() {
    let set = read("dials.yaml");
    let m = module(&set, "v1", "Dial");
    let spec = strukt(m, "DialSpec");
    let defaulted = |ty: TypeRef, default: &str| TypeRef::Defaulted {
        ty: Box::new(ty),
        default: default.to_owned(),
    };
    let ty = |j: &str| field(spec, j).ty.clone();
    let list = |t: TypeRef| TypeRef::List(Box::new(t));
    assert_eq!(ty("names"), list(defaulted(TypeRef::String, "\"unnamed\"")));
    assert_eq!(ty("ports"), list(defaulted(TypeRef::I32, "80")));
    assert_eq!(
        ty("limits"),
        TypeRef::Map(Box::new(defaulted(TypeRef::String, "\"10\"")))
    );
    assert_eq!(
        ty("targets"),
        list(defaulted(
            TypeRef::Named("DialSpecTargets".into()),
            r#"{"host":"localhost"}"#
        ))
    );
    // A nullable item keeps `null`: its default never applies.
    assert_eq!(
        ty("notes"),
        list(TypeRef::Nullable(Box::new(TypeRef::String)))
    );
    assert_eq!(
        ty("matrix"),
        list(defaulted(
            list(defaulted(TypeRef::Number, "0.5")),
            "[null,2.0]"
        ))
    );
    let labels = strukt(m, "DialSpecLabels");
    assert_eq!(
        labels.remainder.as_ref().unwrap().value,
        defaulted(TypeRef::String, "\"unset\"")
    );
    // Property defaults stay on the field.
    let targets = strukt(m, "DialSpecTargets");
    assert_eq!(field(targets, "weight").default, Some(json!(1)));
}

#[test]
fn snapshot_widget() {
    let set = read("widgets.yaml");
    let code = emit_crd_types(&set.types, &TypesConfig::default()).unwrap();
    insta::assert_snapshot!("widget_types", code);
}

#[test]
fn snapshot_gadget_with_custom_runtime_path() {
    let set = read("gadgets.yaml");
    let cfg = TypesConfig::with_runtime_crate("crate::rt").unwrap();
    let code = emit_crd_types(&set.types, &cfg).unwrap();
    assert!(code.contains("crate::rt::k8s_openapi"));
    assert!(!code.contains("::kinform"));
    insta::assert_snapshot!("gadget_types", code);
}

#[test]
fn runtime_path_must_be_a_path() {
    assert!(TypesConfig::with_runtime_crate("not a path").is_err());
    let set = read("gadgets.yaml");
    let tokens = emit_type_module(&set.types[0], &TypesConfig::default()).to_string();
    assert!(tokens.contains("impl :: kinform :: Resource for Gadget"));
    assert!(tokens.contains("const KIND : & 'static str = \"gadget\""));
}

fn crd_with_schema(schema: &str) -> String {
    format!(
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: xs.e.io\n\
         spec:\n  group: e.io\n  scope: Namespaced\n  names: {{kind: X, plural: xs}}\n  versions:\n\
         \x20 - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n{schema}"
    )
}

#[test]
fn unmappable_schema_names_file_crd_version_and_path() {
    let text = crd_with_schema(
        "        type: object\n        properties:\n          spec:\n            type: object\n\
         \x20           properties:\n              bad: {type: tuple}\n",
    );
    let err = read_crd_str(Path::new("x.yaml"), &text).unwrap_err();
    match &err {
        CrdError::Schema(e) => {
            assert_eq!(
                (e.crd.as_str(), e.version.as_str(), e.path.as_str()),
                ("xs.e.io", "v1", ".spec.bad")
            );
        }
        other => panic!("{other}"),
    }
    assert_eq!(
        err.to_string(),
        "x.yaml: document 0: CRD xs.e.io, version v1: schema .spec.bad: unknown schema type `tuple`"
    );
    let refs = crd_with_schema(
        "        type: object\n        properties:\n          spec: {$ref: '#/x'}\n",
    );
    let err = read_crd_str(Path::new("x.yaml"), &refs)
        .unwrap_err()
        .to_string();
    assert!(err.contains("schema .spec: `$ref` is not allowed"), "{err}");
    let tuple = crd_with_schema(
        "        type: object\n        properties:\n          l: {type: array, items: [{type: string}]}\n",
    );
    let err = read_crd_str(Path::new("x.yaml"), &tuple)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("schema .l: `items` must be a single schema"),
        "{err}"
    );
}

#[test]
fn invalid_crds_name_the_field() {
    let text = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: a.b}\nspec:\n  group: b\n  scope: Galaxy\n  names: {kind: A, plural: as}\n  versions: []\n";
    let err = read_crd_str(Path::new("c.yaml"), text)
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "c.yaml: document 0: CRD a.b: .spec.scope: must be Namespaced or Cluster, found \"Galaxy\""
    );
    let text = "apiVersion: apiextensions.k8s.io/v1beta1\nkind: CustomResourceDefinition\n";
    assert!(
        read_crd_str(Path::new("c.yaml"), text)
            .unwrap_err()
            .to_string()
            .contains("convert them")
    );
    let dup = format!(
        "{}\n---\n{}",
        crd_with_schema("        type: object\n"),
        crd_with_schema("        type: object\n")
    );
    assert!(matches!(
        read_crd_str(Path::new("d.yaml"), &dup),
        Err(CrdError::Duplicate { document: 1, .. })
    ));
}

#[test]
fn malformed_yaml_names_document_line_and_column() {
    let text = "apiVersion: v1\nkind: Namespace\n---\napiVersion: v1\nkind: [unclosed\n";
    match read_crd_str(Path::new("m.yaml"), text).unwrap_err() {
        CrdError::Yaml {
            file,
            document,
            line,
            column,
            ..
        } => {
            assert_eq!(file, Path::new("m.yaml"));
            assert_eq!(document, 1);
            assert!(line >= 5, "line {line}");
            assert!(column >= 1, "column {column}");
        }
        other => panic!("{other}"),
    }
    let missing = read_crds([fixture("does-not-exist.yaml")]).unwrap_err();
    assert!(matches!(missing, CrdError::Io { .. }));
}

/// A kind's types go in `<kind>`, its client in `<kind>_client`; a kind whose types module
/// would be named like another resource's client module (kind `DataClient` beside kind
/// `Data`'s `data_client`) gets a `_types` suffix; the code still formats.
#[test]
fn kind_module_colliding_with_a_client_module_is_renamed() {
    let dir = tempfile::tempdir().unwrap();
    let crd = dir.path().join("data.yaml");
    let doc = |kind: &str, plural: &str| {
        format!(
            "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n\
         metadata: {{name: {plural}.example.com}}\nspec:\n  group: example.com\n  scope: Namespaced\n\
         \x20 names: {{kind: {kind}, plural: {plural}}}\n  versions:\n\
         \x20 - name: v1\n    served: true\n    storage: true\n    schema:\n\
         \x20     openAPIV3Schema: {{type: object, properties: {{spec: {{type: object, properties: {{x: {{type: string}}}}}}}}}}\n"
        )
    };
    std::fs::write(
        &crd,
        format!(
            "{}---\n{}",
            doc("Data", "data"),
            doc("DataClient", "dataclients")
        ),
    )
    .unwrap();
    let files = kinform_codegen::Generator::new()
        .crd(&crd)
        .layout(kinform_codegen::Layout::Tree {
            root_file: "mod.rs".into(),
        })
        .render()
        .unwrap();
    let paths: Vec<String> = files.iter().map(|f| f.path.display().to_string()).collect();
    for file in [
        "data/mod.rs",
        "data/apply.rs",
        "data_client.rs",
        "data_client_types/mod.rs",
        "data_client_types/apply.rs",
        "data_client_client.rs",
    ] {
        assert!(
            paths.contains(&format!("example_com/v1/{file}")),
            "{file}: {paths:?}"
        );
    }
    let v1 = files
        .iter()
        .find(|f| f.path.ends_with("example_com/v1/mod.rs"))
        .unwrap();
    assert!(
        v1.contents
            .contains("pub use self::data_client_types::DataClient;")
            && v1.contents.contains("pub use self::data::Data;")
            && v1
                .contents
                .contains("pub use self::data::apply::DataApply;")
            && v1
                .contents
                .contains("pub use self::data_client_types::apply::DataClientApply;"),
        "{}",
        v1.contents
    );
}

/// `Generator::apply_configurations(false)` (`kinform-gen --no-apply-configurations`): no
/// `apply` module and no `FooApply` re-export.
#[test]
fn apply_configurations_can_be_left_out() {
    let crd = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/widgets.yaml");
    let render = |on: bool| {
        kinform_codegen::Generator::new()
            .crd(&crd)
            .layout(kinform_codegen::Layout::Tree {
                root_file: "mod.rs".into(),
            })
            .apply_configurations(on)
            .render()
            .unwrap()
    };
    let applies = |files: &[kinform_codegen::GeneratedFile]| {
        files
            .iter()
            .filter(|f| f.path.ends_with("apply.rs") || f.contents.contains("WidgetApply"))
            .count()
    };
    assert!(applies(&render(true)) > 0);
    assert_eq!(applies(&render(false)), 0);
}
