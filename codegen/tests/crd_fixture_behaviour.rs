//! The emitted code of the fixtures, compiled (with `-D warnings`, `missing_docs`, and the
//! runtime under a custom path) and exercised: enum catch-all, defaults, flattened
//! remainders, unions, embedded resources, apiVersion/kind on serialize, the Resource impl.
//!
//! Shares the target dir of `crd_roundtrip`, so dependencies are built once.

use std::path::{Path, PathBuf};
use std::process::Command;

use kinform_codegen::emit::types::{TypesConfig, emit_crd_types};
use kinform_codegen::read::crd::read_crds;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_owned()
}

fn write_if_changed(path: &Path, content: &str) {
    if std::fs::read_to_string(path).ok().as_deref() != Some(content) {
        std::fs::write(path, content).unwrap();
    }
}

const BEHAVIOUR: &str = r#"
#[cfg(test)]
mod behaviour {
    use kinform::k8s_openapi::serde_json::{self, json};
    use kinform::{HasMetadata, Resource, Scope};
    use crate::widgets::example_com::v1::{Widget, widget};

    #[test]
    fn catch_all_defaults_remainders_unions() {
        let input = json!({
            "apiVersion": "example.com/v1",
            "kind": "Widget",
            "metadata": {"name": "w", "namespace": "ns"},
            "spec": {
                "size": "Huge",
                "options": {"known": "k", "unknown": {"deep": [1, 2]}},
                "value": ["a", "b"],
                "template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"x": 1}},
                "port": "http",
                "memory": 1,
                "initContainers": ["a"],
                "init_containers": ["b"],
                "type": "t",
                "hugepages-2Mi": "2Mi"
            }
        });
        let w: Widget = serde_json::from_value(input).unwrap();
        assert_eq!(w.key(), "ns/w");
        let spec = w.spec.as_ref().unwrap();
        assert_eq!(spec.size, widget::WidgetSpecSize::Other("Huge".into()));
        assert_eq!(spec.size.as_str(), "Huge");
        assert_eq!(spec.mode, widget::WidgetSpecMode::Fast);
        assert_eq!(spec.replicas, 1);
        assert!(spec.enabled);
        assert_eq!(spec.settings.level, 3);
        assert_eq!(spec.tags, Some(vec!["a".to_string(), "b".to_string()]));
        assert_eq!(spec.options.as_ref().unwrap().extra_fields["unknown"], json!({"deep": [1, 2]}));
        assert!(matches!(spec.value, Some(widget::WidgetSpecValue::Array(_))));
        assert_eq!(spec.template.as_ref().unwrap().metadata.as_ref().unwrap().name.as_deref(), Some("p"));
        assert_eq!(spec.init_containers_2, Some(Some(vec!["a".to_string()])));
        assert_eq!(spec.init_containers, Some(vec!["b".to_string()]));
        let out = serde_json::to_value(&w).unwrap();
        assert_eq!(out["apiVersion"], "example.com/v1");
        assert_eq!(out["kind"], "Widget");
        assert_eq!(out["spec"]["size"], "Huge");
        assert_eq!(out["spec"]["mode"], "Fast");
        assert_eq!(out["spec"]["options"]["unknown"], json!({"deep": [1, 2]}));
        assert_eq!(out["spec"]["template"]["spec"], json!({"x": 1}));
        assert_eq!(out["spec"]["port"], "http");
        assert_eq!(out["spec"]["memory"], "1");
        assert_eq!(out["spec"]["initContainers"], json!(["a"]));
        assert_eq!(out["spec"]["hugepages-2Mi"], "2Mi");
        assert_eq!(out["spec"]["type"], "t");
        assert!(out["spec"].get("bytesTotal").is_none());
        let again: Widget = serde_json::from_value(out).unwrap();
        assert_eq!(again, w);

        assert_eq!(Widget::API_VERSION, "example.com/v1");
        assert_eq!(Widget::PLURAL, "widgets");
        assert_eq!(Widget::SCOPE, Scope::Namespaced);
        assert_eq!(widget::WidgetSpec::default().replicas, 1);
        assert_eq!(widget::WidgetSpecMode::from("Slow"), widget::WidgetSpecMode::Slow);
    }

    #[test]
    fn nullable_null_survives_and_missing_stays_missing() {
        let input = json!({
            "apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"},
            "spec": {"size": "Small", "comment": null, "initContainers": null}
        });
        let w: Widget = serde_json::from_value(input).unwrap();
        let spec = w.spec.as_ref().unwrap();
        assert_eq!(spec.comment, Some(None));
        assert_eq!(spec.init_containers_2, Some(None));
        let out = serde_json::to_value(&w).unwrap();
        assert_eq!(out["spec"]["comment"], json!(null));
        assert!(out["spec"].as_object().unwrap().contains_key("comment"));
        assert!(out["spec"].as_object().unwrap().contains_key("initContainers"));
        let set: Widget = serde_json::from_value(json!({
            "apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"},
            "spec": {"size": "Small", "comment": "c"}
        })).unwrap();
        let spec = set.spec.as_ref().unwrap();
        assert_eq!(spec.comment, Some(Some("c".to_string())));
        assert_eq!(spec.init_containers_2, None);
        let out = serde_json::to_value(&set).unwrap();
        assert!(!out["spec"].as_object().unwrap().contains_key("initContainers"));
    }

    #[test]
    fn new_sets_name_and_spec_and_defaults() {
        let w = Widget::new("w1", widget::WidgetSpec::default());
        assert_eq!(w.name(), "w1");
        assert_eq!(w.spec.as_ref().unwrap().replicas, 1);
        assert_eq!(w.status, None);
        let out = serde_json::to_value(&w).unwrap();
        assert_eq!(out["metadata"]["name"], "w1");
        assert_eq!(out["kind"], "Widget");
    }

    #[test]
    fn same_type_branches_merge() {
        let input = json!({
            "apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"},
            "spec": {"size": "Small", "source": {"url": "u", "revision": "r"}, "when": "never", "priority": 2}
        });
        let w: Widget = serde_json::from_value(input.clone()).unwrap();
        let spec = w.spec.as_ref().unwrap();
        let source = spec.source.as_ref().unwrap();
        assert_eq!(source.url.as_deref(), Some("u"));
        assert_eq!(source.image, None);
        assert_eq!(spec.when.as_deref(), Some("never"));
        assert_eq!(spec.priority, Some(2));
        let image: widget::WidgetSpecSource =
            serde_json::from_value(json!({"image": "i"})).unwrap();
        assert_eq!(image.image.as_deref(), Some("i"));
        let out = serde_json::to_value(&w).unwrap();
        assert_eq!(out["spec"]["source"], input["spec"]["source"]);
    }

    #[test]
    fn lower_case_cluster_kind_under_custom_runtime_path() {
        use crate::gadgets::example_com::v1::Gadget;
        assert_eq!(Gadget::KIND, "gadget");
        assert_eq!(Gadget::SCOPE, Scope::Cluster);
        let g: Gadget = serde_json::from_value(json!({
            "apiVersion": "example.com/v1", "kind": "gadget", "metadata": {"name": "g"},
            "spec": {"$ref": "r", "enum": "e", "self": "s", "properties": "p", "items": ["i"]}
        })).unwrap();
        assert_eq!(g.key(), "g");
        let spec = g.spec.as_ref().unwrap();
        assert_eq!(spec.r#ref.as_deref(), Some("r"));
        assert_eq!(spec.self_.as_deref(), Some("s"));
        let out = serde_json::to_value(&g).unwrap();
        assert_eq!(out["spec"]["$ref"], "r");
        assert_eq!(out["spec"]["self"], "s");
        assert_eq!(out["kind"], "gadget");
    }
}
"#;

#[test]
fn fixture_types_compile_and_behave() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let widgets = read_crds([fixtures.join("widgets.yaml")]).unwrap();
    let gadgets = read_crds([fixtures.join("gadgets.yaml")]).unwrap();
    let widgets = emit_crd_types(&widgets.types, &TypesConfig::default()).unwrap();
    let custom = TypesConfig::with_runtime_crate("crate::rt").unwrap();
    let gadgets = emit_crd_types(&gadgets.types, &custom).unwrap();

    let base = workspace().join("target/crd-roundtrip");
    let dir = base.join("fixtures-crate");
    std::fs::create_dir_all(dir.join("src")).unwrap();
    write_if_changed(
        &dir.join("Cargo.toml"),
        &format!(
            "[package]\nname = \"kinform-crd-fixtures\"\nversion = \"0.0.0\"\nedition = \"2024\"\n\
             publish = false\n\n[workspace]\n\n[dependencies]\nkinform = {{ path = {:?} }}\n\n\
             [profile.dev]\ndebug = false\nincremental = false\n",
            workspace().join("runtime").display().to_string()
        ),
    );
    if !dir.join("Cargo.lock").exists()
        && let Ok(lock) = std::fs::read_to_string(workspace().join("Cargo.lock"))
    {
        write_if_changed(&dir.join("Cargo.lock"), &lock);
    }
    write_if_changed(&dir.join("src/widgets.rs"), &widgets);
    write_if_changed(&dir.join("src/gadgets.rs"), &gadgets);
    write_if_changed(
        &dir.join("src/lib.rs"),
        &format!(
            "#![deny(warnings, missing_docs)]\n//! Generated fixture types under test.\n\n\
             /// The runtime under a custom path.\npub use kinform as rt;\n\
             /// Widgets, default runtime path.\npub mod widgets;\n\
             /// Gadgets, runtime at `crate::rt`.\npub mod gadgets;\n{BEHAVIOUR}"
        ),
    );
    let status = Command::new(env!("CARGO"))
        .args(["test", "--offline", "--quiet", "--manifest-path"])
        .arg(dir.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", base.join("target"))
        .env("RUSTFLAGS", "-D warnings")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .status()
        .expect("cargo runs");
    assert!(status.success(), "fixture crate failed: {}", dir.display());
}
