//! `custom_in_place!` against serde's derive on a hand-written custom resource: the rules a
//! generated type's decoders follow (a duplicate or missing required member gives up, `null`
//! is `None` only for an `Option`, `deserialize_with` fields read through their function,
//! renamed keys, unknown members ignored), for new objects and decoded into old ones, at
//! every Kubernetes version (the pieces are not version-gated).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kinform_core::{HasMetadata, Lean};
use serde::{Deserialize, Deserializer};

use super::super::object::Decoder;

/// `metadata` as kinform-gen reads it: `null` is empty.
fn or_default<'de, D: Deserializer<'de>, T: Deserialize<'de> + Default>(
    d: D,
) -> Result<T, D::Error> {
    Option::<T>::deserialize(d).map(Option::unwrap_or_default)
}

/// A trimmed string (a `deserialize_with` whose result differs from the plain decode).
fn trimmed<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Option::<String>::deserialize(d).map(|s| s.map(|s| s.trim().to_owned()))
}

#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
struct Thing {
    #[serde(default, deserialize_with = "or_default")]
    metadata: ObjectMeta,
    #[serde(default)]
    spec: Option<ThingSpec>,
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
struct ThingSpec {
    name: String,
    #[serde(rename = "replicaCount", default)]
    replica_count: Option<i32>,
    #[serde(default)]
    parts: Option<Vec<Part>>,
    #[serde(default)]
    labels: Option<BTreeMap<String, String>>,
    #[serde(default)]
    extra: Option<serde_json::Value>,
    #[serde(default)]
    port: Option<k8s_openapi::apimachinery::pkg::util::intstr::IntOrString>,
    #[serde(default, deserialize_with = "trimmed")]
    note: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
struct Part {
    #[serde(default, deserialize_with = "or_default")]
    id: i64,
    #[serde(default)]
    on: Option<bool>,
}

/// `HasMetadata` over the field `metadata`, with the in-place hook, as generated code has it.
macro_rules! resource_with_hook {
    ($ty:ty) => {
        impl HasMetadata for $ty {
            fn metadata(&self) -> &ObjectMeta {
                &self.metadata
            }
            fn metadata_mut(&mut self) -> &mut ObjectMeta {
                &mut self.metadata
            }
            fn __in_place() -> Option<&'static (dyn std::any::Any + Send + Sync)> {
                crate::decode::custom::hook::<Self>()
            }
        }
    };
}

resource_with_hook!(Thing);

crate::custom_in_place!(
    Thing,
    metadata("metadata", metadata),
    optional("spec", spec)
);
crate::custom_in_place!(
    no_default(ThingSpec),
    value("name", name),
    optional("replicaCount", replica_count),
    optional("parts", parts),
    optional("labels", labels),
    optional("extra", extra),
    fresh_optional("port", port),
    with_default("note", note, trimmed),
);
crate::custom_in_place!(Part, with_default("id", id, or_default), optional("on", on));

const FULL: &str = r#"{"apiVersion":"example.com/v1","kind":"Thing",
    "metadata":{"name":"a","namespace":"ns","labels":{"x":"y"},"resourceVersion":"7"},
    "spec":{"name":"one","replicaCount":3,"parts":[{"id":1,"on":true},{"id":null}],
    "labels":{"b":"2","a":"1"},"extra":{"k":[1,"two",null,2.5]},"port":"http",
    "note":"  hi  ","unknown":{"deep":[1]}}}"#;

/// Documents serde takes, each decoded new and into the object of every other.
const TAKEN: [&str; 6] = [
    FULL,
    r#"{"metadata":null,"spec":null}"#,
    r#"{"spec":{"name":"two","parts":[],"labels":null,"extra":null,"port":8080}}"#,
    r#"{"metadata":{"name":"b"},"spec":{"name":"","parts":[{},{"id":5},{"on":null}]}}"#,
    r#"{}"#,
    r#"{"spec":{"name":"three","replicaCount":null,"note":null,"labels":{"a":"9"}}}"#,
];

/// Documents serde refuses.
const REFUSED: [&str; 8] = [
    // A duplicate member of a derived struct.
    r#"{"spec":{"name":"a","name":"b"}}"#,
    // A required member missing.
    r#"{"spec":{"replicaCount":1}}"#,
    // `null` for a required string.
    r#"{"spec":{"name":null}}"#,
    // Values of another shape.
    r#"{"spec":{"name":"a","replicaCount":1.5}}"#,
    r#"{"spec":{"name":"a","parts":{}}}"#,
    r#"{"spec":{"name":"a","parts":[{"id":"x"}]}}"#,
    r#"{"spec":{"name":"a","labels":{"a":1}}}"#,
    r#"{"metadata":[],"spec":{"name":"a"}}"#,
];

#[test]
fn a_custom_resource_is_decoded_in_place_as_serde_derive_decodes_it() {
    let mut decoder = Decoder::default();
    for doc in TAKEN {
        let want: Thing = serde_json::from_str(doc).unwrap();
        let new = decoder.walk_new_resource::<Thing>(doc.as_bytes());
        assert_eq!(new.as_ref(), Some(&want), "{doc}");
        for other in TAKEN {
            let mut target: Thing = serde_json::from_str(other).unwrap();
            assert!(
                decoder.decode_resource_into(&mut target, doc.as_bytes(), false, None),
                "{doc} into {other}"
            );
            assert_eq!(target, want, "{doc} into {other}");
        }
    }
    // The trimmed note shows the `deserialize_with` function ran.
    let full = decoder.walk_new_resource::<Thing>(FULL.as_bytes()).unwrap();
    assert_eq!(full.spec.unwrap().note.as_deref(), Some("hi"));
}

#[test]
fn a_custom_resource_s_lean_form_is_decoded_in_place_where_built_ins_are() {
    // The versions with an `ObjectMeta` decoder, which the lean objects' decoder needs.
    let supported = super::root_of::<Lean<Pod>>().is_some();
    let mut decoder = Decoder::default();
    for doc in TAKEN {
        let want: Lean<Thing> = serde_json::from_str(doc).unwrap();
        for other in TAKEN {
            let mut target: Lean<Thing> = serde_json::from_str(other).unwrap();
            let decoded = decoder.decode_resource_into(&mut target, doc.as_bytes(), false, None);
            assert_eq!(decoded, supported, "{doc} into {other}");
            if decoded {
                assert_eq!(target, want, "{doc} into {other}");
            }
        }
        // A new lean object is built by its `Deserialize`, through the same entry point.
        let new: Lean<Thing> = decoder.decode_resource(doc.as_bytes(), false).unwrap();
        assert_eq!(new, want, "{doc}");
    }
}

#[test]
fn what_serde_derive_refuses_the_walk_gives_up_on() {
    let mut decoder = Decoder::default();
    for doc in REFUSED {
        assert!(serde_json::from_str::<Thing>(doc).is_err(), "{doc}");
        assert!(
            decoder.walk_new_resource::<Thing>(doc.as_bytes()).is_none(),
            "{doc}"
        );
        let mut target: Thing = serde_json::from_str(FULL).unwrap();
        assert!(
            !decoder.decode_resource_into(&mut target, doc.as_bytes(), false, None),
            "{doc}"
        );
        // The informer path falls back to serde, whose error stands.
        assert!(
            decoder
                .decode_resource::<Thing>(doc.as_bytes(), false)
                .is_err(),
            "{doc}"
        );
    }
}

/// A resource whose decoders use the `auto` kinds, as the derive macro writes them: each
/// field decoded in place or afresh as its type allows, absent fields as serde's derive
/// treats them (`Option`s `None` without `#[serde(default)]`, `default = "path"`).
#[derive(Clone, Debug, PartialEq, Deserialize)]
struct Auto {
    #[serde(default)]
    metadata: ObjectMeta,
    spec: AutoSpec,
    status: Option<Part>,
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
struct AutoSpec {
    name: String,
    #[serde(rename = "replicaCount")]
    replica_count: Option<i32>,
    #[serde(default = "seven")]
    size: i64,
    parts: Option<Vec<Part>>,
    #[serde(default)]
    labels: BTreeMap<String, String>,
    port: Option<k8s_openapi::apimachinery::pkg::util::intstr::IntOrString>,
}

fn seven() -> i64 {
    7
}

resource_with_hook!(Auto);

crate::custom_in_place!(
    no_default(Auto),
    auto_default("metadata", metadata),
    auto("spec", spec),
    auto_default("status", status)
);
crate::custom_in_place!(
    no_default(AutoSpec),
    auto("name", name),
    auto_default("replicaCount", replica_count),
    auto_default_fn("size", size, seven),
    auto_default("parts", parts),
    auto_default("labels", labels),
    auto_default("port", port),
);

#[test]
fn the_auto_kinds_decode_as_serde_derive_decodes() {
    let taken = [
        r#"{"metadata":{"name":"a","labels":{"x":"y"}},"spec":{"name":"one","replicaCount":3,
            "size":2,"parts":[{"id":1,"on":true}],"labels":{"b":"2"},"port":"http"},
            "status":{"id":4}}"#,
        r#"{"spec":{"name":"two"}}"#,
        r#"{"spec":{"name":"three","replicaCount":null,"parts":null,"port":80},"status":null}"#,
        r#"{"metadata":{},"spec":{"name":"","size":-1,"labels":{}},"unknown":[1]}"#,
    ];
    let refused = [
        r#"{"metadata":null,"spec":{"name":"a"}}"#,
        r#"{"spec":null}"#,
        r#"{}"#,
        r#"{"spec":{"replicaCount":1}}"#,
        r#"{"spec":{"name":"a","labels":null}}"#,
        r#"{"spec":{"name":"a","size":null}}"#,
        r#"{"spec":{"name":"a","port":1.5}}"#,
        r#"{"spec":{"name":"a"},"spec":{"name":"b"}}"#,
    ];
    let mut decoder = Decoder::default();
    for doc in taken {
        let want: Auto = serde_json::from_str(doc).unwrap();
        for other in taken {
            let mut target: Auto = serde_json::from_str(other).unwrap();
            assert!(
                decoder.decode_resource_into(&mut target, doc.as_bytes(), false, None),
                "{doc} into {other}"
            );
            assert_eq!(target, want, "{doc} into {other}");
        }
    }
    let first: Auto = serde_json::from_str(taken[1]).unwrap();
    assert_eq!(first.spec.size, 7, "the default function ran");
    // A field of an in-place type is decoded into its own memory: the probe chose
    // `ByInPlace` (the name's buffer is kept), not `ByDeserialize`.
    let mut target: Auto = serde_json::from_str(taken[0]).unwrap();
    target.spec.name.reserve(64);
    let buffer = target.spec.name.as_ptr();
    assert!(decoder.decode_resource_into(&mut target, taken[1].as_bytes(), false, None));
    assert_eq!(
        (target.spec.name.as_str(), target.spec.name.as_ptr()),
        ("two", buffer)
    );
    for doc in refused {
        assert!(serde_json::from_str::<Auto>(doc).is_err(), "{doc}");
        let mut target: Auto = serde_json::from_str(taken[0]).unwrap();
        assert!(
            !decoder.decode_resource_into(&mut target, doc.as_bytes(), false, None),
            "{doc}"
        );
    }
}
