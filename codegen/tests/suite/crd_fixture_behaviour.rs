//! The emitted code of the fixtures, compiled (with `-D warnings`, `missing_docs`, and the
//! runtime under a custom path) and exercised: enum catch-all, decoding that keeps what the
//! document says (no default filled in, nullable `null`s kept, quantities, timestamps and
//! numbers as sent), the explicit `apply_schema_defaults` against apiextensions' rules (of
//! properties, nested objects, list items and map values; `null`s defaulted, pruned or kept
//! as the API server does), flattened remainders, unions, embedded resources,
//! apiVersion/kind on serialize, the Resource impl.
//!
//! A temporary crate (tests/support/temp_crate.rs): its target dir is shared with the other
//! slow tests, so dependencies are built once.

use std::path::Path;

use kinform_codegen::read::crd::read_crds;
use kinform_codegen::{TypesConfig, emit_crd_types};

use crate::temp_crate::TempCrate;

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
        // Decoding fills in no default.
        assert_eq!(spec.mode, None);
        assert_eq!(spec.replicas, None);
        assert_eq!(spec.enabled, None);
        assert_eq!(spec.settings, None);
        assert_eq!(spec.tags, None);
        assert_eq!(spec.options.as_ref().unwrap().extra_fields["unknown"], json!({"deep": [1, 2]}));
        assert!(matches!(spec.value, Some(widget::WidgetSpecValue::Array(_))));
        assert_eq!(spec.template.as_ref().unwrap().metadata.as_ref().unwrap().name.as_deref(), Some("p"));
        assert_eq!(spec.init_containers_2, Some(Some(vec!["a".to_string()])));
        assert_eq!(spec.init_containers, Some(vec!["b".to_string()]));
        let out = serde_json::to_value(&w).unwrap();
        assert_eq!(out["apiVersion"], "example.com/v1");
        assert_eq!(out["kind"], "Widget");
        assert_eq!(out["spec"]["size"], "Huge");
        assert!(out["spec"].get("mode").is_none());
        assert_eq!(out["spec"]["options"]["unknown"], json!({"deep": [1, 2]}));
        assert_eq!(out["spec"]["template"]["spec"], json!({"x": 1}));
        assert_eq!(out["spec"]["port"], "http");
        // A quantity written as a number stays a number.
        assert_eq!(out["spec"]["memory"], json!(1));
        assert_eq!(out["spec"]["initContainers"], json!(["a"]));
        assert_eq!(out["spec"]["hugepages-2Mi"], "2Mi");
        assert_eq!(out["spec"]["type"], "t");
        assert!(out["spec"].get("bytesTotal").is_none());
        let again: Widget = serde_json::from_value(out).unwrap();
        assert_eq!(again, w);

        assert_eq!(Widget::API_VERSION, "example.com/v1");
        assert_eq!(Widget::PLURAL, "widgets");
        assert_eq!(Widget::SCOPE, Scope::Namespaced);
        assert_eq!(widget::WidgetSpec::default().replicas, None);

        // The explicit defaulting gives the server's view.
        let mut d = w.clone();
        d.apply_schema_defaults().unwrap();
        let spec = d.spec.as_ref().unwrap();
        assert_eq!(spec.mode, Some(widget::WidgetSpecMode::Fast));
        assert_eq!(spec.replicas, Some(1));
        assert_eq!(spec.enabled, Some(true));
        assert_eq!(spec.settings.as_ref().unwrap().level, Some(3));
        assert_eq!(spec.tags, Some(vec!["a".to_string(), "b".to_string()]));
        assert_eq!(spec.size, widget::WidgetSpecSize::Other("Huge".into()));
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
        let mut w = Widget::new("w1", widget::WidgetSpec::default());
        assert_eq!(w.name(), "w1");
        assert_eq!(w.spec.as_ref().unwrap().replicas, None);
        w.apply_schema_defaults().unwrap();
        assert_eq!(w.spec.as_ref().unwrap().replicas, Some(1));
        assert_eq!(w.status, None);
        let out = serde_json::to_value(&w).unwrap();
        assert_eq!(out["metadata"]["name"], "w1");
        assert_eq!(out["kind"], "Widget");
    }

    #[test]
    fn values_keep_their_exact_form_and_metadata_is_not_invented() {
        let input = json!({
            "apiVersion": "example.com/v1", "kind": "Widget",
            "spec": {"size": "Small", "memory": 2, "ratio": 3, "expires": "2024-01-01T02:00:00.123456+02:00",
                     "count": 7}
        });
        let w: Widget = serde_json::from_value(input.clone()).unwrap();
        let spec = w.spec.as_ref().unwrap();
        assert_eq!(spec.memory.as_ref().unwrap().to_f64(), Some(2.0));
        let expires = spec.expires.as_ref().unwrap().parse().unwrap();
        assert_eq!(expires.to_string(), "2024-01-01T00:00:00.123456Z");
        assert_eq!(serde_json::to_value(&w).unwrap(), input);
        let fraction = json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"},
            "spec": {"size": "Small", "ratio": 3.5, "memory": "1500m", "expires": "2024-01-01T00:00:00.5Z"}});
        let w: Widget = serde_json::from_value(fraction.clone()).unwrap();
        assert_eq!(serde_json::to_value(&w).unwrap(), fraction);
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

/// Structural defaulting of list items and map values (apiextensions-apiserver
/// `schema/defaulting`) through the explicit `apply_schema_defaults`: a `null` item or value
/// whose schema is not nullable takes the schema default, which is itself defaulted; a
/// nullable one stays `null`. Decoding alone keeps every `null` as sent.
const DIAL_DEFAULTS: &str = r#"
#[cfg(test)]
mod dial_defaults {
    use kinform::k8s_openapi::serde_json::{self, json, Value};
    use crate::dials::example_com::v1::{Dial, dial};

    /// Reads a Dial with this spec (checking that it writes back exactly as read), applies
    /// the schema defaults, returns its spec as serialized (after checking that the
    /// serialized form reads back to the same value).
    fn through(spec: Value) -> Value {
        let input = json!({
            "apiVersion": "example.com/v1", "kind": "Dial", "metadata": {"name": "d"}, "spec": spec
        });
        let mut d: Dial = serde_json::from_value(input.clone()).unwrap();
        assert_eq!(serde_json::to_value(&d).unwrap(), input, "decoding changed the document");
        d.apply_schema_defaults().unwrap();
        let out = serde_json::to_value(&d).unwrap();
        let again: Dial = serde_json::from_value(out.clone()).unwrap();
        assert_eq!(again, d);
        out["spec"].clone()
    }

    #[test]
    fn null_scalar_items_take_the_default() {
        let spec = through(json!({"modes": [], "names": ["a", null], "ports": [null, 443]}));
        assert_eq!(spec["names"], json!(["a", "unnamed"]));
        assert_eq!(spec["ports"], json!([80, 443]));
    }

    #[test]
    fn null_object_items_take_the_default_object_and_its_defaults() {
        let spec = through(json!({"modes": [], "targets": [null, {"host": "h"}, {}]}));
        assert_eq!(
            spec["targets"],
            json!([{"host": "localhost", "weight": 1}, {"host": "h", "weight": 1}, {"weight": 1}])
        );
    }

    #[test]
    fn null_map_values_take_the_default() {
        let spec = through(json!({
            "modes": [],
            "limits": {"cpu": null, "memory": "5"},
            "backends": {"a": null, "b": {"port": 1}}
        }));
        assert_eq!(spec["limits"], json!({"cpu": "10", "memory": "5"}));
        assert_eq!(
            spec["backends"],
            json!({"a": {"port": 8080, "scheme": "http"}, "b": {"port": 1, "scheme": "http"}})
        );
        let spec = through(json!({"modes": [], "labels": {"team": "t", "owner": null, "x": "y"}}));
        assert_eq!(spec["labels"], json!({"team": "t", "owner": "unset", "x": "y"}));
    }

    #[test]
    fn nullable_items_keep_null() {
        let d: dial::DialSpec =
            serde_json::from_value(json!({"modes": [], "notes": ["n", null]})).unwrap();
        assert_eq!(d.notes, Some(vec![Some("n".to_owned()), None]));
        assert_eq!(serde_json::to_value(&d).unwrap()["notes"], json!(["n", null]));
    }

    #[test]
    fn nested_lists_enums_and_nullable_properties() {
        let spec = through(json!({
            "modes": [null, "Slow", "Other"], "matrix": [[null, 1.0], [], null]
        }));
        assert_eq!(spec["modes"], json!(["Fast", "Slow", "Other"]));
        assert_eq!(spec["matrix"], json!([[0.5, 1.0], [], [0.5, 2.0]]));
        // A nullable property: `null` stays `null`, missing stays missing, items default.
        let spec = through(json!({"modes": [], "aliases": null}));
        assert_eq!(spec["aliases"], json!(null));
        let spec = through(json!({"modes": [], "aliases": [null, "b"]}));
        assert_eq!(spec["aliases"], json!(["alias", "b"]));
        let spec = through(json!({"modes": []}));
        assert_eq!(spec, json!({"modes": []}));
        let d: dial::DialSpec = serde_json::from_value(json!({"modes": [null]})).unwrap();
        assert_eq!(d.modes, vec![None], "decoding keeps the null");
        assert_eq!(d.aliases, None);
        let spec = through(json!({"modes": [null]}));
        assert_eq!(spec["modes"], json!(["Fast"]));
    }

    #[test]
    fn values_without_nulls_round_trip_unchanged() {
        let spec = json!({
            "modes": ["Slow"], "names": ["a"], "ports": [1], "targets": [{"host": "h", "weight": 2}],
            "limits": {"cpu": "1"}, "backends": {"a": {"port": 1, "scheme": "https"}},
            "notes": [null], "matrix": [[1.5]], "aliases": ["x"], "labels": {"team": "t", "k": "v"}
        });
        assert_eq!(through(spec.clone()), spec);
        // Numbers keep their integer-ness.
        let spec = through(json!({"modes": [], "matrix": [[1, 2.5]]}));
        assert_eq!(spec["matrix"], json!([[1, 2.5]]));
    }

    #[test]
    fn union_branches_keep_their_items() {
        // A `default` inside `oneOf` is not part of the structural schema (apiextensions
        // rejects it there), so the server's defaulting never reads it: the `null` stays.
        let spec = through(json!({"modes": [], "choice": [null, "c"]}));
        assert_eq!(spec["choice"], json!([null, "c"]));
        let spec = through(json!({"modes": [], "choice": "s"}));
        assert_eq!(spec["choice"], json!("s"));
    }

    #[test]
    fn an_item_of_the_wrong_type_still_fails() {
        let err = serde_json::from_value::<dial::DialSpec>(json!({"modes": [], "ports": ["x"]}))
            .unwrap_err();
        assert!(err.to_string().contains("invalid type"), "{err}");
    }
}
"#;

/// `null` properties and map values (apiextensions-apiserver `PruneNonNullableNullsWithoutDefaults`
/// then `Default`, through `apply_schema_defaults`): a non-nullable `null` with a default
/// takes it, a non-nullable `null` map value without one is removed, a nullable `null` stays.
/// Decoding alone fills in nothing (a `null` the schema does not allow reads as absent).
const KNOB_NULLS: &str = r#"
#[cfg(test)]
mod knob_nulls {
    use kinform::k8s_openapi::serde_json::{self, json, Value};
    use crate::knobs::example_com::v1::{Knob, knob};

    /// Reads a Knob with this spec, applies the schema defaults, returns its spec as
    /// serialized (after checking that the serialized form reads back to the same value).
    fn through(spec: Value) -> Value {
        let mut k = read(spec);
        k.apply_schema_defaults().unwrap();
        let out = serde_json::to_value(&k).unwrap();
        let again: Knob = serde_json::from_value(out.clone()).unwrap();
        assert_eq!(again, k);
        out["spec"].clone()
    }

    fn read(spec: Value) -> Knob {
        serde_json::from_value(json!({
            "apiVersion": "example.com/v1", "kind": "Knob", "metadata": {"name": "k"}, "spec": spec
        }))
        .unwrap()
    }

    #[test]
    fn null_properties_with_a_default_take_it() {
        let nulls = json!({
            "name": null, "level": null, "mode": null, "tags": null, "dial": null, "target": null,
            "limits": null
        });
        let absent = json!({});
        let want = json!({
            "name": "knob", "level": 5, "mode": "Slow", "tags": ["x"], "dial": {"turns": 3},
            "target": {"host": "localhost", "port": 80}, "limits": {},
            // Missing, the nullable `comment` takes its default too.
            "comment": "none"
        });
        assert_eq!(through(nulls), want);
        assert_eq!(through(absent), want);
        let spec: knob::KnobSpec = serde_json::from_value(json!({"level": null})).unwrap();
        assert_eq!(spec.level, None, "decoding fills in nothing");
        let mut k = read(json!({"level": null}));
        k.apply_schema_defaults().unwrap();
        let spec = k.spec.as_ref().unwrap();
        assert_eq!(spec.level, Some(5));
        assert_eq!(spec.mode, Some(knob::KnobSpecMode::Slow));
        assert_eq!(spec.tags, Some(vec!["x".to_owned()]));
        assert_eq!(spec.dial.as_ref().unwrap().turns, Some(3));
        let mut k = read(json!({"dial": {"turns": null}, "target": {"port": null}}));
        k.apply_schema_defaults().unwrap();
        let spec = k.spec.as_ref().unwrap();
        assert_eq!(spec.dial.as_ref().unwrap().turns, Some(3));
        assert_eq!(spec.target.as_ref().unwrap().port, Some(80));
        assert_eq!(spec.target.as_ref().unwrap().host, None);
    }

    #[test]
    fn null_metadata_is_empty_metadata() {
        let k: Knob = serde_json::from_value(json!({
            "apiVersion": "example.com/v1", "kind": "Knob", "metadata": null, "spec": null
        }))
        .unwrap();
        assert_eq!(k.metadata, Default::default());
        assert_eq!(k.spec, None);
    }

    #[test]
    fn null_map_values_without_a_default_are_pruned() {
        let spec = through(json!({
            "labels": {"a": "1", "b": null},
            "limits": {"cpu": null, "mem": 2},
            "opaque": {"x": {"y": null}, "z": null},
            "rows": [{"a": null, "b": "2"}, {}],
            "params": {"known": "k", "other": "o", "gone": null}
        }));
        assert_eq!(spec["labels"], json!({"a": "1"}));
        assert_eq!(spec["limits"], json!({"mem": 2}));
        // Inside an opaque value there is no schema: only the map's own values are pruned.
        assert_eq!(spec["opaque"], json!({"x": {"y": null}}));
        assert_eq!(spec["rows"], json!([{"b": "2"}, {}]));
        assert_eq!(spec["params"], json!({"known": "k", "other": "o"}));
        let spec: knob::KnobSpec = serde_json::from_value(json!({"labels": null})).unwrap();
        assert_eq!(spec.labels, None);
    }

    #[test]
    fn schemaless_and_nullable_values_keep_null() {
        let spec = through(json!({
            "loose": {"a": null}, "comment": null, "notes": {"n": null},
            "raw": {"known": "k", "free": null}
        }));
        assert_eq!(spec["loose"], json!({"a": null}));
        assert_eq!(spec["comment"], json!(null));
        assert_eq!(spec["notes"], json!({"n": null}));
        assert_eq!(spec["raw"], json!({"known": "k", "free": null}));
        let spec = through(json!({"notes": null, "extras": null}));
        assert_eq!(spec["notes"], json!(null));
        assert_eq!(spec["extras"], json!(null));
        let spec = through(json!({"extras": {"a": null, "b": "x"}}));
        assert_eq!(spec["extras"], json!({"b": "x"}));
    }

    #[test]
    fn null_list_items_without_a_default_still_fail() {
        let err = serde_json::from_value::<knob::KnobSpec>(json!({"words": ["a", null]}))
            .unwrap_err();
        assert!(err.to_string().contains("invalid type: null"), "{err}");
        let err = serde_json::from_value::<knob::KnobSpec>(json!({"level": "x"})).unwrap_err();
        assert!(err.to_string().contains("invalid type"), "{err}");
    }

    #[test]
    fn values_without_nulls_round_trip_unchanged() {
        let spec = json!({
            "name": "n", "level": 1, "mode": "Fast", "tags": [], "dial": {"turns": 1},
            "target": {"host": "h", "port": 1}, "labels": {"a": "b"}, "limits": {"c": 1},
            "opaque": {"o": [1]}, "loose": {"l": 1}, "rows": [{"r": "s"}], "words": ["w"],
            "comment": "c", "notes": {"n": "m"}, "extras": {"e": "f"},
            "params": {"known": "k", "p": "q"}, "raw": {"known": "k", "r": {"s": 1}}
        });
        assert_eq!(through(spec.clone()), spec);
        // Decoding alone writes back what it read, defaults left out.
        let sparse = json!({"level": 1, "comment": null});
        assert_eq!(serde_json::to_value(read(sparse.clone())).unwrap()["spec"], sparse);
    }
}
"#;

#[test]
fn fixture_types_compile_and_behave() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let read = |file: &str| read_crds([fixtures.join(file)]).unwrap().types;
    let default = TypesConfig::default();
    let custom = TypesConfig::with_runtime_crate("crate::rt").unwrap();
    let krate = TempCrate::new("kinform-crd-fixtures");
    krate.write(
        "src/widgets.rs",
        &emit_crd_types(&read("widgets.yaml"), &default).unwrap(),
    );
    krate.write(
        "src/gadgets.rs",
        &emit_crd_types(&read("gadgets.yaml"), &custom).unwrap(),
    );
    krate.write(
        "src/dials.rs",
        &emit_crd_types(&read("dials.yaml"), &default).unwrap(),
    );
    krate.write(
        "src/knobs.rs",
        &emit_crd_types(&read("nulls.yaml"), &default).unwrap(),
    );
    krate.write(
        "src/lib.rs",
        &format!(
            "#![deny(warnings, missing_docs)]\n//! Generated fixture types under test.\n\n\
             /// The runtime under a custom path.\npub use kinform as rt;\n\
             /// Widgets, default runtime path.\npub mod widgets;\n\
             /// Gadgets, runtime at `crate::rt`.\npub mod gadgets;\n\
             /// Dials: defaults of list items and map values.\npub mod dials;\n\
             /// Knobs: `null` properties and map values.\npub mod knobs;\n\
             {BEHAVIOUR}{DIAL_DEFAULTS}{KNOB_NULLS}"
        ),
    );
    krate.cargo("test");
}
