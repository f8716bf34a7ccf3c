//! Shared watch decoding against serde_json: same events, order kept across two threads,
//! typed errors in place, managedFields skipped on request, cached objects reused only for
//! ADDED events at the same resourceVersion and only before the initial-events-end bookmark.

use std::sync::Arc;
use std::sync::atomic::AtomicUsize;

use futures_util::stream;
use k8s_openapi::api::core::v1::ConfigMap;
use serde_json::{Value, json};

use super::super::test_cache::Cache;
use super::*;
use crate::config::DEFAULT_READ_AHEAD_BYTES;
use crate::decode::{CachedLookup, ListHints, Reclaim};
use kinform_core::resource::HasMetadata;

fn cm(name: &str, rv: &str, data: &str) -> Value {
    json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"namespace": "ns", "name": name, "resourceVersion": rv,
                     "managedFields": [{"manager": "m", "operation": "Update", "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {".": {}}}}]},
        "data": {"k": data, "pad": "x".repeat(400)},
        "binaryData": {},
    })
}

/// A line in the API server's layout (`type` first).
fn line(kind: &str, obj: Value) -> Vec<u8> {
    format!("{{\"type\":\"{kind}\",\"object\":{obj}}}\n").into_bytes()
}

fn end_bookmark(rv: &str) -> Vec<u8> {
    line(
        "BOOKMARK",
        json!({"kind": "ConfigMap", "metadata": {"resourceVersion": rv,
               "annotations": {"k8s.io/initial-events-end": "true"}}}),
    )
}

fn origin() -> Origin {
    Origin {
        request: "GET /api/v1/configmaps?watch=true&sendInitialEvents=true".into(),
        resource: "v1/configmaps".into(),
        max_line: crate::config::DEFAULT_MAX_WATCH_EVENT_BYTES,
    }
}

fn body(chunks: Vec<Vec<u8>>) -> BoxStream<'static, Result<Bytes, Error>> {
    stream::iter(chunks.into_iter().map(|c| Ok(Bytes::from(c)))).boxed()
}

async fn events(chunks: Vec<Vec<u8>>, hints: ListHints<ConfigMap>) -> WatchBatch<Arc<ConfigMap>> {
    decode_shared_batches(
        body(chunks),
        origin(),
        hints,
        true,
        DEFAULT_READ_AHEAD_BYTES,
    )
    .collect::<Vec<_>>()
    .await
    .into_iter()
    .flatten()
    .collect()
}

fn name(e: &Result<WatchEvent<Arc<ConfigMap>>, Error>) -> String {
    match e {
        Ok(WatchEvent::Added(o) | WatchEvent::Modified(o) | WatchEvent::Deleted(o)) => {
            o.name().to_owned()
        }
        Ok(WatchEvent::Bookmark(b)) => format!("bookmark {}", b.resource_version),
        Ok(WatchEvent::Error(s)) => format!("error {:?}", s.code),
        Err(e) => format!("err: {e}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_batch_decoded_on_two_threads_keeps_order_and_types_bad_lines() {
    // 400 events of about 0.7 KB: well above the two-thread threshold, all ready at once.
    let mut all = Vec::new();
    for i in 0..400 {
        match i {
            17 => all.extend_from_slice(b"{\"type\":\"ADDED\",\"object\":{\"metadata\":5}}\n"),
            350 => all.extend_from_slice(b"not json at all\n"),
            _ => all.extend(line("ADDED", cm(&format!("c{i}"), &i.to_string(), "v"))),
        }
    }
    assert!(all.len() > 2 * PARALLEL_MIN_BYTES);
    // Two chunks, cut inside a line.
    let cut = all.len() / 3;
    let chunks = vec![all[..cut].to_vec(), all[cut..].to_vec()];
    let evs = events(chunks, ListHints::default()).await;
    assert_eq!(evs.len(), 400);
    for (i, e) in evs.iter().enumerate() {
        match i {
            17 | 350 => match e {
                Err(Error::Decode { request, what, .. }) => {
                    assert!(request.contains("watch=true"), "{request}");
                    assert!(what.contains("v1/configmaps watch event"), "{what}");
                }
                other => panic!("line {i}: {other:?}"),
            },
            _ => assert_eq!(name(e), format!("c{i}")),
        }
    }
}

#[tokio::test]
async fn the_same_events_as_serde_json_with_exact_capacities() {
    let lines = vec![
        line("ADDED", cm("a", "1", "x")),
        line("MODIFIED", cm("a", "2", "y")),
        line("DELETED", cm("a", "3", "y")),
        line(
            "ERROR",
            json!({"kind": "Status", "apiVersion": "v1", "code": 410, "reason": "Expired"}),
        ),
        // Object first, an unknown member, whitespace: the scanner or the fallback.
        br#" {"object":{"metadata":{"name":"b","resourceVersion":"4"}},"extra":[1],"type":"ADDED"} "#
            .to_vec(),
        // The server's layout at first sight, but more members: the careful path.
        br#"{"type":"ADDED","object":{"metadata":{"name":"c","resourceVersion":"5"}},"x":{"y":"}"}}"#
            .to_vec(),
        // Serialized with sorted keys (object first).
        serde_json::to_vec(&json!({"type": "MODIFIED", "object": cm("d", "6", "z")})).unwrap(),
        end_bookmark("9"),
    ];
    let mut joined = Vec::new();
    for l in &lines {
        joined.extend_from_slice(l);
        if !l.ends_with(b"\n") {
            joined.push(b'\n');
        }
    }
    let evs = events(vec![joined], ListHints::default()).await;
    assert_eq!(evs.len(), lines.len());
    for (l, got) in lines.iter().zip(&evs) {
        let want: WatchEvent<ConfigMap> = decode_watch_line(l.trim_ascii()).unwrap();
        assert_eq!(got.as_ref().unwrap(), &want.map(Arc::new));
    }
    let Ok(WatchEvent::Added(a)) = &evs[0] else {
        panic!()
    };
    let mf = a.metadata.managed_fields.as_ref().unwrap();
    assert_eq!(mf.capacity(), mf.len(), "exact capacity");
}

#[tokio::test]
async fn managed_fields_are_skipped_only_on_request() {
    let l = line("ADDED", cm("a", "1", "x"));
    let keep = events(vec![l.clone()], ListHints::default()).await;
    let Ok(WatchEvent::Added(a)) = &keep[0] else {
        panic!("{keep:?}")
    };
    assert_eq!(a.metadata.managed_fields.as_ref().map(Vec::len), Some(1));
    let skip = ListHints {
        skip_managed_fields: true,
        ..ListHints::default()
    };
    let dropped = events(vec![l], skip).await;
    let Ok(WatchEvent::Added(a)) = &dropped[0] else {
        panic!("{dropped:?}")
    };
    assert!(a.metadata.managed_fields.is_none());
    assert_eq!(a.data.as_ref().unwrap()["k"], "x", "the rest is decoded");
}

#[tokio::test]
async fn the_transform_is_applied_while_decoding() {
    let hints = ListHints {
        transform: Some(Arc::new(|o: &mut ConfigMap| o.data = None)),
        ..ListHints::default()
    };
    let evs = events(vec![line("MODIFIED", cm("a", "1", "x"))], hints).await;
    assert!(matches!(&evs[0], Ok(WatchEvent::Modified(o)) if o.data.is_none()));
}

fn counting_lookup(store: &Cache, calls: &Arc<AtomicUsize>) -> CachedLookup<ConfigMap> {
    let (store, calls) = (store.clone(), Arc::clone(calls));
    Arc::new(move |key, rv: &str| {
        calls.fetch_add(1, Ordering::SeqCst);
        store.cached(key, rv)
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn added_objects_at_the_cached_resource_version_are_reused_until_the_end_bookmark() {
    let store = Cache::default();
    let a: Arc<ConfigMap> = Arc::new(serde_json::from_value(cm("a", "5", "old")).unwrap());
    let b: Arc<ConfigMap> = Arc::new(serde_json::from_value(cm("b", "6", "old")).unwrap());
    store.add(Arc::clone(&a));
    store.add(Arc::clone(&b));
    let calls = Arc::new(AtomicUsize::new(0));
    let hints = ListHints {
        cached: Some(counting_lookup(&store, &calls)),
        skip_managed_fields: true,
        ..ListHints::default()
    };
    // The initial events and the bookmark arrive first, the watch's events later (separate
    // batches).
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<Result<Bytes, Error>>();
    let rx = stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|c| (c, rx)) });
    let mut batches =
        decode_shared_batches(rx.boxed(), origin(), hints, true, DEFAULT_READ_AHEAD_BYTES);
    let first = [
        line("ADDED", cm("a", "5", "old")),
        line("ADDED", cm("b", "7", "new")),
        end_bookmark("8"),
    ]
    .concat();
    tx.send(Ok(Bytes::from(first))).unwrap();
    let mut evs = batches.next().await.unwrap();
    // After the bookmark: an ordinary watch, no lookups.
    let later = [
        line("ADDED", cm("a", "5", "old")),
        line("MODIFIED", cm("b", "6", "old")),
    ]
    .concat();
    tx.send(Ok(Bytes::from(later))).unwrap();
    evs.extend(batches.next().await.unwrap());
    drop(tx);
    assert!(batches.next().await.is_none());
    assert_eq!(evs.len(), 5);
    let obj = |i: usize| match &evs[i] {
        Ok(WatchEvent::Added(o) | WatchEvent::Modified(o)) => Arc::clone(o),
        other => panic!("{other:?}"),
    };
    assert!(Arc::ptr_eq(&obj(0), &a), "same RV: the cached Arc");
    assert!(!Arc::ptr_eq(&obj(1), &b), "changed RV: decoded");
    assert_eq!(obj(1).data.as_ref().unwrap()["k"], "new");
    assert!(!Arc::ptr_eq(&obj(3), &a), "after the end bookmark: decoded");
    assert!(!Arc::ptr_eq(&obj(4), &b), "MODIFIED: decoded");
    assert_eq!(
        calls.load(Ordering::SeqCst),
        2,
        "lookups for the initial ADDED only"
    );
}

/// A streaming list's watch whose hints carry `reclaim`, past its initial events (one
/// ADDED event, then the end bookmark): the sender of its body's chunks and its batches.
async fn past_initial_events(
    reclaim: &Arc<Reclaim<ConfigMap>>,
) -> (
    tokio::sync::mpsc::UnboundedSender<Result<Bytes, Error>>,
    WatchBatchStream<Arc<ConfigMap>>,
) {
    let hints = ListHints {
        reclaim: Some(Arc::clone(reclaim)),
        ..ListHints::default()
    };
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<Result<Bytes, Error>>();
    let rx = stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|c| (c, rx)) });
    let mut batches =
        decode_shared_batches(rx.boxed(), origin(), hints, true, DEFAULT_READ_AHEAD_BYTES);
    let first = [line("ADDED", cm("a", "5", "x")), end_bookmark("6")].concat();
    tx.send(Ok(Bytes::from(first))).unwrap();
    assert_eq!(batches.next().await.unwrap().len(), 2);
    (tx, batches)
}

/// Sends two MODIFIED events of `a` on a watch [`past_initial_events`]: their lines, and the
/// batch they decode to.
async fn two_changes(
    tx: &tokio::sync::mpsc::UnboundedSender<Result<Bytes, Error>>,
    batches: &mut WatchBatchStream<Arc<ConfigMap>>,
) -> (Vec<u8>, WatchBatch<Arc<ConfigMap>>) {
    let later = [
        line("MODIFIED", cm("a", "7", "y")),
        line("MODIFIED", cm("a", "8", "z")),
    ]
    .concat();
    tx.send(Ok(Bytes::from(later.clone()))).unwrap();
    (later, batches.next().await.unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replaced_objects_handed_back_are_dropped_while_decoding_after_the_initial_events() {
    let reclaim = Arc::new(Reclaim::new(16));
    let old: Vec<Arc<ConfigMap>> = (0..3)
        .map(|i| Arc::new(serde_json::from_value(cm(&format!("o{i}"), "1", "old")).unwrap()))
        .collect();
    let watched: Vec<_> = old.iter().map(Arc::downgrade).collect();
    reclaim.put_many(old);
    assert_eq!(reclaim.len(), 3);
    let (tx, mut batches) = past_initial_events(&reclaim).await;
    assert_eq!(reclaim.len(), 3, "nothing taken during the initial events");
    // Ordinary events: one replaced object dropped before each decoded one (the weak
    // references keep them from being decoded into, see the next test), same events.
    let (later, evs) = two_changes(&tx, &mut batches).await;
    assert_eq!(reclaim.len(), 1, "two taken for two events");
    assert_eq!(watched.iter().filter(|w| w.strong_count() == 0).count(), 2);
    for (got, l) in evs.iter().zip(later.split(|&b| b == b'\n')) {
        let want: WatchEvent<ConfigMap> = decode_watch_line(l).unwrap();
        assert_eq!(got.as_ref().unwrap(), &want.map(Arc::new));
    }
    drop(tx);
    assert!(batches.next().await.is_none());
}

// In-place decoding exists for the Kubernetes versions kinform supports, 1.35 on (see
// `in_place`).
k8s_openapi::k8s_if_ge_1_35! {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn replaced_objects_handed_back_are_decoded_into_after_the_initial_events() {
        let reclaim = Arc::new(Reclaim::new(16));
        // Replaced objects whose data strings have room no fresh decode would give them.
        let old: Vec<Arc<ConfigMap>> = (0..2)
            .map(|i| {
                let mut c: ConfigMap =
                    serde_json::from_value(cm(&format!("o{i}"), "1", "old")).unwrap();
                let value = c.data.as_mut().unwrap().values_mut().next().unwrap();
                value.reserve(4096);
                Arc::new(c)
            })
            .collect();
        let (tx, mut batches) = past_initial_events(&reclaim).await;
        reclaim.put_many(old);
        let (later, evs) = two_changes(&tx, &mut batches).await;
        assert!(reclaim.is_empty(), "both taken");
        for (got, l) in evs.iter().zip(later.split(|&b| b == b'\n')) {
            let want: WatchEvent<ConfigMap> = decode_watch_line(l).unwrap();
            let got = got.as_ref().unwrap();
            assert_eq!(got, &want.map(Arc::new), "the same object as a fresh decode");
            let WatchEvent::Modified(obj) = got else {
                panic!("a MODIFIED event")
            };
            let value = obj.data.as_ref().unwrap().values().next().unwrap();
            assert!(
                value.capacity() >= 4096,
                "decoded into a handed-back object's own string"
            );
        }
        drop(tx);
        assert!(batches.next().await.is_none());
    }
}
