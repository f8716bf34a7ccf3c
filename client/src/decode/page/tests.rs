//! List decoding against serde_json: same objects, cached objects reused only at the same
//! resourceVersion, managedFields skipped on request, typed errors for malformed bodies.

use std::sync::Arc;

use k8s_openapi::api::core::v1::ConfigMap;
use serde_json::{Value, json};

use super::super::test_cache::Cache;
use super::*;
use crate::decode::ListHints;
use kinform_core::resource::HasMetadata;

fn cm(ns: &str, name: &str, rv: &str, data: &str) -> Value {
    json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"namespace": ns, "name": name, "resourceVersion": rv,
                     "managedFields": [{"manager": "m", "operation": "Update", "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {".": {}}}}]},
        "data": {"k": data}
    })
}

fn body(items: &[Value]) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "kind": "ConfigMapList", "apiVersion": "v1",
        "metadata": {"resourceVersion": "42", "continue": "tok"},
        "items": items,
    }))
    .unwrap()
}

fn origin() -> ListOrigin {
    ListOrigin {
        request: "GET /api/v1/configmaps?limit=500".into(),
        resource: "v1/configmaps".into(),
    }
}

/// `bytes` scanned and decoded as a page, nobody told of its metadata.
async fn decode(
    bytes: Vec<u8>,
    hints: &ListHints<ConfigMap>,
) -> Result<ObjectList<Arc<ConfigMap>>> {
    decode_list(ScannedList::new(bytes), hints, &origin(), |_| {}).await
}

#[tokio::test]
async fn unchanged_resource_versions_reuse_the_cached_arc() {
    let store = Cache::default();
    let a: Arc<ConfigMap> = Arc::new(serde_json::from_value(cm("ns", "a", "5", "old-a")).unwrap());
    let b: Arc<ConfigMap> = Arc::new(serde_json::from_value(cm("ns", "b", "6", "old-b")).unwrap());
    store.add(Arc::clone(&a));
    store.add(Arc::clone(&b));
    let hints = ListHints {
        cached: Some(store.lookup()),
        ..ListHints::default()
    };
    let list = body(&[
        cm("ns", "a", "5", "old-a"),
        cm("ns", "b", "7", "new-b"),
        cm("ns", "c", "8", "c"),
    ]);
    let page = decode(list, &hints).await.unwrap();
    assert_eq!(page.metadata.resource_version.as_deref(), Some("42"));
    assert_eq!(page.metadata.continue_.as_deref(), Some("tok"));
    assert_eq!(page.items.len(), 3);
    assert!(Arc::ptr_eq(&page.items[0], &a), "same RV: the cached Arc");
    assert!(!Arc::ptr_eq(&page.items[1], &b), "changed RV: decoded");
    assert_eq!(page.items[1].resource_version(), "7");
    assert_eq!(page.items[1].data.as_ref().unwrap()["k"], "new-b");
    assert_eq!(page.items[2].name(), "c");
}

#[tokio::test]
async fn managed_fields_are_skipped_only_on_request() {
    let list = body(&[cm("ns", "a", "5", "x")]);
    let keep = decode(list.clone(), &ListHints::default()).await.unwrap();
    assert_eq!(
        keep.items[0].metadata.managed_fields.as_ref().map(Vec::len),
        Some(1)
    );
    let hints = ListHints {
        skip_managed_fields: true,
        ..ListHints::default()
    };
    let skip = decode(list, &hints).await.unwrap();
    assert_eq!(skip.items[0].metadata.managed_fields, None);
    assert_eq!(skip.items[0].data, keep.items[0].data);
}

#[tokio::test]
async fn the_transform_runs_on_decoded_objects() {
    let hints: ListHints<ConfigMap> = ListHints {
        transform: Some(Arc::new(|o: &mut ConfigMap| o.data = None)),
        ..ListHints::default()
    };
    let page = decode(body(&[cm("ns", "a", "5", "x")]), &hints)
        .await
        .unwrap();
    assert_eq!(page.items[0].data, None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_pages_decode_in_order_on_two_threads() {
    let items: Vec<Value> = (0..400)
        .map(|i| {
            cm(
                &format!("ns-{}", i % 3),
                &format!("cm-{i}"),
                &i.to_string(),
                &"x".repeat(600),
            )
        })
        .collect();
    let list = body(&items);
    assert!(list.len() > PARALLEL_MIN_BYTES);
    let page = decode(list, &ListHints::default()).await.unwrap();
    let expected: Vec<ConfigMap> = items
        .into_iter()
        .map(|v| serde_json::from_value(v).unwrap())
        .collect();
    let got: Vec<ConfigMap> = page.items.iter().map(|o| (**o).clone()).collect();
    assert_eq!(got, expected);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_bodies_are_typed_errors_naming_the_request() {
    let good = body(
        &(0..300)
            .map(|i| cm("ns", &format!("c{i}"), "1", &"y".repeat(500)))
            .collect::<Vec<_>>(),
    );
    let mut bad_item = String::from_utf8(good.clone()).unwrap();
    let at = bad_item.rfind("\"data\"").unwrap();
    bad_item.insert_str(at, "\"data\":7,");
    let cases: Vec<Vec<u8>> = vec![
        good[..good.len() / 2].to_vec(),
        b"{\"items\":[{\"metadata\":{}} {}]}".to_vec(),
        b"{\"items\":{}}".to_vec(),
        b"{\"metadata\":[],\"items\":[]}".to_vec(),
        b"{\"items\":[1]}".to_vec(),
        b"{\"items\":[],\"x\":tru}".to_vec(),
        bad_item.into_bytes(),
        b"".to_vec(),
    ];
    for bytes in cases {
        let text = String::from_utf8_lossy(&bytes[..bytes.len().min(60)]).into_owned();
        let hints = ListHints {
            skip_managed_fields: true,
            ..ListHints::default()
        };
        match decode(bytes, &hints).await {
            Err(Error::Decode { request, what, .. }) => {
                assert_eq!(request, "GET /api/v1/configmaps?limit=500", "{text}");
                assert!(what.starts_with("v1/configmaps list"), "{what}");
            }
            other => panic!("{text}: {other:?}"),
        }
    }
}

#[tokio::test]
async fn empty_and_null_items() {
    for b in [
        &b"{\"metadata\":{\"resourceVersion\":\"3\"},\"items\":null}"[..],
        b"{\"metadata\":{\"resourceVersion\":\"3\"}}",
        b" { \"items\" : [ ] } ",
    ] {
        let page = decode(b.to_vec(), &ListHints::default()).await.unwrap();
        assert!(page.items.is_empty());
    }
}

/// `metadata.shardInfo` (KEP-5866) reaches the page whether the scanner takes the body or
/// serde_json decodes it whole, at every k8s-openapi version (its `ListMeta` lacks the field
/// before 1.36).
#[tokio::test]
async fn shard_info_is_decoded_on_both_paths() {
    let selector = "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')";
    let sharded = serde_json::to_vec(&json!({
        "kind": "ConfigMapList", "apiVersion": "v1",
        "metadata": {"resourceVersion": "42", "shardInfo": {"selector": selector}},
        "items": [cm("ns", "a", "5", "x")],
    }))
    .unwrap();
    let want = Some(kinform_core::ShardInfo {
        selector: selector.into(),
    });
    let page = decode(sharded.clone(), &ListHints::default())
        .await
        .unwrap();
    assert_eq!(page.shard_info, want);
    assert_eq!(page.metadata.resource_version.as_deref(), Some("42"));
    // A body the scanner refuses (a repeated `kind`) goes to serde_json whole.
    let mut whole = sharded.clone();
    whole.pop();
    whole.extend_from_slice(br#","kind":"ConfigMapList"}"#);
    assert!(crate::decode::scan::list_parts(&whole).is_err());
    let page = decode(whole, &ListHints::default()).await.unwrap();
    assert_eq!(page.shard_info, want);
    let plain = decode(body(&[]), &ListHints::default()).await.unwrap();
    assert_eq!(plain.shard_info, None);
}
