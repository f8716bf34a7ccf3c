//! One decoder truth (issue #19): the reflector's decoding (scanner, simd-json, the watch
//! line splitter) and the plain `serde_json` decoding of the user verbs agree on every input:
//! both decode it to the same objects, or both refuse it.
//!
//! Differential property tests over real bodies (every example manifest of
//! `../shared/corpus/examples` as `DynamicObject`s, generated pod lists) and mutated ones
//! (byte flips, cuts, inserted bytes: invalid UTF-8, quotes, brackets, `-0`, huge exponents,
//! control characters), for LIST pages and for watch lines. They run briefly in the test
//! suite; at length with e.g.
//! `PROPTEST_CASES=200000 cargo test --release -p kinform-client --lib differential`.
//!
//! Watch lines are also decoded into objects the cache let go of (`reclaim`): with the
//! enabled Kubernetes version's in-place decoders, and with none, the path every type takes
//! with a version that has no decoders (`in_place`, "Another Kubernetes version"); both
//! must give what `serde_json` gives.
//!
//! Objects reused from the reflector's cache are not compared: they are, by design, not
//! decoded again (see `page`).

use std::path::Path;
use std::sync::{Arc, OnceLock};

use k8s_openapi::api::core::v1::Pod;
use proptest::prelude::*;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::events::decode_line_shared;
use super::hints::ListHints;
use super::object::Decoder;
use super::page::{ListOrigin, ScannedList, decode_list};
use crate::wire::list::RawList;
use crate::wire::watch::decode_watch_line;
use crate::{DynamicObject, WatchEvent};
use kinform_core::resource::HasMetadata;

pub(super) fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a runtime")
    })
}

/// Every document of every example manifest of the corpus, as JSON.
pub(super) fn corpus() -> &'static [Value] {
    static DOCS: OnceLock<Vec<Value>> = OnceLock::new();
    DOCS.get_or_init(|| yaml_documents("examples"))
}

/// Every JSON object in the YAML files under `../shared/corpus/<dir>`, sorted.
pub(super) fn yaml_documents(dir: &str) -> Vec<Value> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/corpus")
        .join(dir);
    let mut docs = Vec::new();
    let mut dirs = vec![root];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "yaml" || e == "yml") {
                let text = std::fs::read_to_string(&path).unwrap_or_default();
                let parsed: Vec<Value> = serde_saphyr::from_multiple(&text).unwrap_or_default();
                docs.extend(parsed.into_iter().filter(Value::is_object));
            }
        }
    }
    docs.sort_by_key(Value::to_string);
    docs
}

pub(super) fn list_body(items: &[Value]) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "kind": "List", "apiVersion": "v1",
        "metadata": {"resourceVersion": "42", "continue": "next"},
        "items": items,
    }))
    .expect("JSON")
}

fn pod(i: usize, labels: &[(String, String)], image: &str) -> Value {
    let labels: serde_json::Map<String, Value> = labels
        .iter()
        .map(|(k, v)| (k.clone(), Value::from(v.clone())))
        .collect();
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {
            "name": format!("pod-{i}"), "namespace": "default", "resourceVersion": format!("{}", 100 + i),
            "uid": format!("0000-{i}"), "labels": labels,
            "managedFields": [{"manager": "kubectl", "operation": "Update", "apiVersion": "v1",
                               "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {}}}],
        },
        "spec": {
            "containers": [{"name": "c", "image": image, "ports": [{"containerPort": 8080 + i}],
                            "resources": {"limits": {"cpu": "500m", "memory": "128Mi"}}}],
            "restartPolicy": "Always", "terminationGracePeriodSeconds": 30,
        },
        "status": {"phase": "Running", "podIP": "10.0.0.1", "conditions": [{"type": "Ready", "status": "True"}]},
    })
}

/// A change to a body.
#[derive(Clone, Debug)]
enum Mutation {
    /// Replaces the byte at (position modulo length).
    Flip(usize, u8),
    /// Keeps the first (position modulo length) bytes.
    Cut(usize),
    /// Inserts bytes at (position modulo length).
    Insert(usize, Vec<u8>),
    /// Inserts bytes just before the closing quote of the n-th object key (modulo their
    /// number): the invalid UTF-8 in keys of issue #19.
    IntoKey(usize, Vec<u8>),
}

fn inserted() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        prop::sample::select(vec![
            vec![0xff],
            vec![0xc3],
            vec![0xed, 0xa0, 0x80],
            vec![0xf4, 0x90, 0x80, 0x80],
            vec![0x01],
            vec![0x00],
            b"\\u".to_vec(),
            b"\\ud800".to_vec(),
            b"\"".to_vec(),
            b",".to_vec(),
            b"}".to_vec(),
            b"]".to_vec(),
            b"[".to_vec(),
            b"-0".to_vec(),
            b"1e400".to_vec(),
            b"\"x\":1,".to_vec(),
            b" ".to_vec(),
            b"\\".to_vec(),
        ]),
        proptest::collection::vec(any::<u8>(), 1..4),
    ]
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(p, b)| Mutation::Flip(p, b)),
        any::<usize>().prop_map(Mutation::Cut),
        (any::<usize>(), inserted()).prop_map(|(p, b)| Mutation::Insert(p, b)),
        (any::<usize>(), inserted()).prop_map(|(p, b)| Mutation::IntoKey(p, b)),
    ]
}

fn mutate(mut body: Vec<u8>, mutations: &[Mutation]) -> Vec<u8> {
    for m in mutations {
        if body.is_empty() {
            break;
        }
        let len = body.len();
        match m {
            Mutation::Flip(p, b) => body[p % len] = *b,
            Mutation::Cut(p) => body.truncate(p % len),
            Mutation::Insert(p, bytes) => {
                let at = p % len;
                body.splice(at..at, bytes.iter().copied());
            }
            Mutation::IntoKey(n, bytes) => {
                let keys: Vec<usize> = body
                    .windows(2)
                    .enumerate()
                    .filter(|(_, w)| w == b"\":")
                    .map(|(i, _)| i)
                    .collect();
                if let Some(&at) = keys.get(n % keys.len().max(1)) {
                    body.splice(at..at, bytes.iter().copied());
                }
            }
        }
    }
    body
}

/// The page decoded by the reflector's path and by `Api::list`'s: they must agree.
/// With `strip`, the fast path is told to skip `managedFields` and given `strip` as its
/// transform (the promise `skip_managed_fields` relies on: the transform drops them anyway),
/// and `strip` takes them off the plain path's objects before the comparison.
fn check_list<K>(body: &[u8], strip: Option<fn(&mut K)>) -> Result<(), TestCaseError>
where
    K: HasMetadata + Clone + DeserializeOwned + PartialEq + std::fmt::Debug + Send + Sync + 'static,
{
    let plain = serde_json::from_slice::<RawList<K>>(body).map(RawList::into_list);
    let origin = ListOrigin {
        request: "GET /apis/example/v1/things?limit=500".into(),
        resource: "example/v1/things".into(),
    };
    let hints = ListHints::<K> {
        skip_managed_fields: strip.is_some(),
        transform: strip.map(|f| Arc::new(f) as kinform_core::Transform<K>),
        ..ListHints::default()
    };
    let fast = runtime().block_on(decode_list(
        ScannedList::new(body.to_vec()),
        &hints,
        &origin,
        |_| {},
    ));
    let text = String::from_utf8_lossy(body);
    match (plain, fast) {
        (Ok(mut plain), Ok(fast)) => {
            prop_assert_eq!(&plain.metadata, &fast.metadata, "body {}", text);
            let fast: Vec<K> = fast.items.iter().map(|o| (**o).clone()).collect();
            if let Some(strip) = strip {
                plain.items.iter_mut().for_each(strip);
            }
            prop_assert_eq!(plain.items, fast, "body {}", text);
        }
        (Err(_), Err(_)) => {}
        (plain, fast) => prop_assert!(
            false,
            "plain {:?} but fast {:?} for body {}",
            plain.map(|l| l.items.len()),
            fast.map(|l| l.items.len()),
            text
        ),
    }
    Ok(())
}

/// One watch line decoded by the reflector's path and by `Api::watch`'s: they must agree.
fn check_line<K>(line: &[u8]) -> Result<(), TestCaseError>
where
    K: HasMetadata + Clone + DeserializeOwned + PartialEq + std::fmt::Debug + 'static,
{
    check_line_into::<K>(line, &mut Decoder::default(), None)
}

/// [`check_line`] with `decoder`, the line's object decoded into `reuse` when it can be (an
/// object the cache let go of).
fn check_line_into<K>(
    line: &[u8],
    decoder: &mut Decoder,
    reuse: Option<Arc<K>>,
) -> Result<(), TestCaseError>
where
    K: HasMetadata + Clone + DeserializeOwned + PartialEq + std::fmt::Debug + 'static,
{
    let plain = decode_watch_line::<K>(line);
    let hints = ListHints::<K>::default();
    let fast = decode_line_shared(line, &hints, &hints, decoder, reuse)
        .map(|ev| ev.map(|o| Arc::unwrap_or_clone(o)));
    let text = String::from_utf8_lossy(line);
    match (plain, fast) {
        (Ok(plain), Ok(fast)) => prop_assert_eq!(plain, fast, "line {}", text),
        (Err(_), Err(_)) => {}
        (plain, fast) => prop_assert!(
            false,
            "plain {:?} but fast {:?} for line {}",
            plain.map(|e| event_kind(&e)),
            fast.map(|e| event_kind(&e)),
            text
        ),
    }
    Ok(())
}

fn event_kind<K>(e: &WatchEvent<K>) -> &'static str {
    match e {
        WatchEvent::Added(_) => "ADDED",
        WatchEvent::Modified(_) => "MODIFIED",
        WatchEvent::Deleted(_) => "DELETED",
        WatchEvent::Bookmark(_) => "BOOKMARK",
        WatchEvent::Error(_) => "ERROR",
    }
}

pub(super) fn corpus_items() -> impl Strategy<Value = Vec<Value>> {
    let n = corpus().len();
    assert!(n > 10, "the corpus examples are missing ({n} documents)");
    proptest::collection::vec(0..n, 0..4)
        .prop_map(|ix| ix.into_iter().map(|i| corpus()[i].clone()).collect())
}

pub(super) fn pods() -> impl Strategy<Value = Vec<Value>> {
    proptest::collection::vec(
        (
            proptest::collection::vec(("[a-z]{1,6}", "[a-z0-9]{0,6}"), 0..3),
            "[a-z./:-]{1,20}",
        ),
        0..5,
    )
    .prop_map(|ps| {
        ps.iter()
            .enumerate()
            .map(|(i, (labels, image))| pod(i, labels, image))
            .collect()
    })
}

/// The bug issue #19 reported: invalid UTF-8 in a list's key made the fast path answer an
/// empty list where `serde_json` refuses the body.
#[test]
fn invalid_utf8_in_a_list_key_is_refused_by_both_paths() {
    let mut body = br#"{"kind":"PodList","apiVersion":"v1","metadata":{},"it"#.to_vec();
    body.push(0xff);
    body.extend_from_slice(br#"ms":[{"metadata":{"name":"a"}}],"x"#);
    body.push(0xfe);
    body.extend_from_slice(br#"":1}"#);
    assert!(serde_json::from_slice::<RawList<Pod>>(&body).is_err());
    check_list::<Pod>(&body, None).unwrap();
    let mut line = br#"{"type":"ADDED","object":{"metadata":{"name":"a"}},"x"#.to_vec();
    line.push(0xff);
    line.extend_from_slice(br#"":1}"#);
    assert!(decode_watch_line::<Pod>(&line).is_err());
    check_line::<Pod>(&line).unwrap();
}

proptest! {

    #[test]
    fn differential_corpus_lists(
        items in corpus_items(),
        mutations in proptest::collection::vec(mutation(), 0..3),
    ) {
        let body = mutate(list_body(&items), &mutations);
        check_list::<DynamicObject>(&body, None)?;
    }

    #[test]
    fn differential_pod_lists(
        items in pods(),
        mutations in proptest::collection::vec(mutation(), 0..3),
        skip in any::<bool>(),
    ) {
        let body = mutate(list_body(&items), &mutations);
        let strip: fn(&mut Pod) = |p| p.metadata.managed_fields = None;
        check_list::<Pod>(&body, skip.then_some(strip))?;
    }

    #[test]
    fn differential_watch_lines(
        items in corpus_items(),
        kind in prop::sample::select(vec!["ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"]),
        mutations in proptest::collection::vec(mutation(), 0..3),
    ) {
        let object = items.into_iter().next().unwrap_or_else(|| json!({"metadata": {"resourceVersion": "7"}}));
        let line = serde_json::to_vec(&json!({"type": kind, "object": object})).expect("JSON");
        let line = mutate(line, &mutations);
        check_line::<DynamicObject>(&line)?;
    }

    /// A pod's watch line decoded into another pod the cache let go of, with the enabled
    /// version's in-place decoders and without any.
    #[test]
    fn differential_pod_watch_lines_into_replaced_pods(
        pods in pods(),
        kind in prop::sample::select(vec!["ADDED", "MODIFIED", "DELETED"]),
        mutations in proptest::collection::vec(mutation(), 0..3),
        in_place in any::<bool>(),
    ) {
        let mut pods = pods.into_iter();
        let object = pods.next().unwrap_or_else(|| json!({"metadata": {"name": "p"}}));
        let replaced: Option<Pod> = pods.next().and_then(|p| serde_json::from_value(p).ok());
        let line = serde_json::to_vec(&json!({"type": kind, "object": object})).expect("JSON");
        let line = mutate(line, &mutations);
        let mut decoder = if in_place { Decoder::default() } else { Decoder::without_in_place() };
        check_line_into::<Pod>(&line, &mut decoder, replaced.map(Arc::new))?;
    }
}
