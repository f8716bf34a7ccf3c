//! The lean cache's objects are lossless (issue #20): what the reflector's decoding makes of
//! a body as `Lean<K>` decodes back to exactly the `K` it makes of the same body, and
//! serializes to the same JSON, on every example of `../shared/corpus/examples` (as
//! `DynamicObject`s, the dynamic type of custom resources) and on generated objects: pods
//! (a built-in type, with and without `managedFields` skipped) and custom resources whose
//! `spec` is any JSON value (any strings, any 64-bit integers, any finite floats). Through
//! both of the pipeline's decoders: simd-json (LIST pages, watch lines) and `serde_json`
//! (`Lean::from_object`, which the user verbs' decoding matches).
//!
//! Briefly in the test suite; at length with
//! `PROPTEST_CASES=20000 cargo test --release -p kinform-client --lib decode::lean_tests`.

use std::sync::Arc;

use k8s_openapi::api::core::v1::Pod;
use proptest::prelude::*;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::differential_tests::{corpus, corpus_items, list_body, pods, runtime};
use super::events::decode_line_shared;
use super::hints::ListHints;
use super::object::Decoder;
use super::object::tests::value;
use super::page::{ListOrigin, ScannedList, decode_list};
use crate::{DynamicObject, WatchEvent};
use kinform_core::resource::HasMetadata;
use kinform_core::{Lean, Transform};

fn strip<K: HasMetadata>(obj: &mut K) {
    obj.metadata_mut().managed_fields = None;
}

fn hints<K: HasMetadata>(skip_managed_fields: bool) -> ListHints<K> {
    ListHints {
        skip_managed_fields,
        transform: skip_managed_fields.then(|| Arc::new(strip::<K>) as Transform<K>),
        ..ListHints::default()
    }
}

fn decode_page<K>(body: &[u8], skip_managed_fields: bool) -> Vec<Arc<K>>
where
    K: HasMetadata + Clone + DeserializeOwned + Send + Sync + 'static,
{
    let origin = ListOrigin {
        request: "GET /apis/example/v1/things?limit=500".into(),
        resource: "example/v1/things".into(),
    };
    runtime()
        .block_on(decode_list(
            ScannedList::new(body.to_vec()),
            &hints::<K>(skip_managed_fields),
            &origin,
            |_| {},
        ))
        .expect("a valid list")
        .items
}

/// `lean` is lossless for `direct`: it decodes to an equal object, serializes to the same
/// JSON, and the lean form of `direct` is `lean` again.
fn check_lossless<K>(lean: &Lean<K>, direct: &K) -> Result<(), TestCaseError>
where
    K: HasMetadata + Serialize + DeserializeOwned + PartialEq + std::fmt::Debug,
{
    let decoded = lean.decode().expect("the lean object decodes");
    prop_assert_eq!(&decoded, direct);
    prop_assert_eq!(
        serde_json::to_vec(lean).expect("serializes"),
        serde_json::to_vec(direct).expect("serializes")
    );
    let again = Lean::from_object(direct).expect("converts");
    prop_assert_eq!(&again.decode().expect("decodes"), direct);
    prop_assert_eq!(again.metadata(), lean.metadata());
    Ok(())
}

/// A LIST page of `items`, decoded by the reflector's pipeline as `K` and as `Lean<K>`.
fn check_page<K>(items: &[Value], skip_managed_fields: bool) -> Result<(), TestCaseError>
where
    K: HasMetadata
        + Clone
        + Serialize
        + DeserializeOwned
        + PartialEq
        + std::fmt::Debug
        + Send
        + Sync
        + 'static,
{
    let body = list_body(items);
    let direct = decode_page::<K>(&body, skip_managed_fields);
    let lean = decode_page::<Lean<K>>(&body, skip_managed_fields);
    prop_assert_eq!(direct.len(), lean.len());
    for (d, l) in direct.iter().zip(&lean) {
        check_lossless(l, d)?;
    }
    Ok(())
}

/// One watch line of `object`, decoded by the reflector's watch path as `K` and `Lean<K>`.
fn check_line<K>(object: &Value) -> Result<(), TestCaseError>
where
    K: HasMetadata + Clone + Serialize + DeserializeOwned + PartialEq + std::fmt::Debug,
{
    let line = serde_json::to_vec(&json!({"type": "ADDED", "object": object})).expect("JSON");
    let h = ListHints::<K>::default();
    let direct = decode_line_shared(&line, &h, &h, &mut Decoder::default(), None);
    let hl = ListHints::<Lean<K>>::default();
    let lean = decode_line_shared(&line, &hl, &hl, &mut Decoder::default(), None);
    match (direct, lean) {
        (Ok(WatchEvent::Added(d)), Ok(WatchEvent::Added(l))) => check_lossless(&l, &d),
        (d, l) => {
            prop_assert!(false, "{:?} / {:?}", d.map(|_| ()), l.map(|_| ()));
            Ok(())
        }
    }
}

#[test]
fn every_corpus_example_is_lossless() {
    let docs = corpus();
    assert!(docs.len() > 10, "the corpus examples are missing");
    check_page::<DynamicObject>(docs, false).unwrap();
    check_page::<DynamicObject>(docs, true).unwrap();
    for doc in docs {
        check_line::<DynamicObject>(doc).unwrap();
    }
}

fn custom_resources() -> impl Strategy<Value = Vec<Value>> {
    proptest::collection::vec(
        (
            value(),
            proptest::collection::btree_map("[a-z]{1,8}", "[a-z0-9.-]{0,8}", 0..4),
        ),
        0..4,
    )
    .prop_map(|objs| {
        objs.into_iter()
            .enumerate()
            .map(|(i, (spec, labels))| {
                json!({
                    "apiVersion": "example.com/v1", "kind": "Thing",
                    "metadata": {"name": format!("t{i}"), "namespace": "ns",
                                 "resourceVersion": format!("{}", 10 + i), "labels": labels},
                    "spec": spec,
                })
            })
            .collect()
    })
}

proptest! {
    #[test]
    fn generated_pods_are_lossless(items in pods(), skip in any::<bool>()) {
        check_page::<Pod>(&items, skip)?;
        for item in &items {
            check_line::<Pod>(item)?;
        }
    }

    #[test]
    fn generated_custom_resources_are_lossless(items in custom_resources()) {
        check_page::<DynamicObject>(&items, false)?;
        for item in &items {
            check_line::<DynamicObject>(item)?;
        }
    }

    #[test]
    fn corpus_pages_are_lossless(items in corpus_items(), skip in any::<bool>()) {
        check_page::<DynamicObject>(&items, skip)?;
    }
}
