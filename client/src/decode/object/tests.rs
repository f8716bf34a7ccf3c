//! The fast decoder decodes what serde_json decodes, with exact vector capacities, serde_json's
//! recursion limit and errors, and `metadata.managedFields` skipped only where asked.

use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use proptest::prelude::*;
use serde_json::{Value, json};

use super::*;

fn decode<T: DeserializeOwned + 'static>(b: &[u8]) -> serde_json::Result<T> {
    Decoder::default().decode(b, false)
}

fn pod_json() -> Value {
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "p", "namespace": "ns", "resourceVersion": "7",
                     "labels": {"app": "web"}, "unknownField": [[1, 2], {"x": [3]}],
                     "managedFields": [{"manager": "kubectl", "operation": "Update", "fieldsType": "FieldsV1",
                                        "fieldsV1": {"f:metadata": {"f:labels": {".": {}, "f:app": {}}}}}],
                     "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "u"}]},
        "spec": {
            "containers": [
                {"name": "a", "image": "i", "env": [{"name": "X", "value": "1"}, {"name": "Y"}, {"name": "Z", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
                 "ports": [{"containerPort": 80}], "command": ["sh", "-c", "true"],
                 "resources": {"limits": {"cpu": "1"}}},
                {"name": "b", "image": "j", "volumeMounts": [{"name": "v1", "mountPath": "/a"}, {"name": "v2", "mountPath": "/b"}]}
            ],
            "volumes": [{"name": "v1", "emptyDir": {}}, {"name": "v2", "configMap": {"name": "c", "items": [{"key": "k", "path": "p"}]}}, {"name": "v3", "projected": {"sources": [{"serviceAccountToken": {"path": "t"}}]}}],
            "tolerations": [{"key": "k", "operator": "Exists", "tolerationSeconds": -5}],
            "activeDeadlineSeconds": 3600
        },
        "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}, {"type": "Initialized", "status": "True"}, {"type": "PodScheduled", "status": "True"}, {"type": "ContainersReady", "status": "True"}, {"type": "X", "status": "False", "message": "caf\u{e9} \"quoted\" \\ \n\t\u{1F600}"}],
                   "containerStatuses": [{"name": "a", "image": "i", "imageID": "", "ready": true, "restartCount": 0, "state": {"running": {"startedAt": "2026-01-01T00:00:00Z"}}}, {"name": "b", "image": "j", "imageID": "", "ready": true, "restartCount": 0}],
                   "podIPs": [{"ip": "10.0.0.1"}]}
    })
}

#[test]
fn pods_decode_equal_with_exact_capacities() {
    for b in [
        serde_json::to_vec(&pod_json()).unwrap(),
        serde_json::to_vec_pretty(&pod_json()).unwrap(),
    ] {
        let pod: Pod = decode(&b).unwrap();
        assert_eq!(pod, serde_json::from_slice::<Pod>(&b).unwrap());
        let by_serde: Pod = Decoder::default().decode_by_serde(&b, false).unwrap();
        assert_eq!(pod, by_serde);
        let spec = pod.spec.as_ref().unwrap();
        let vols = spec.volumes.as_ref().unwrap();
        assert_eq!((vols.len(), vols.capacity()), (3, 3));
        assert_eq!(spec.containers.capacity(), 2);
        let env = spec.containers[0].env.as_ref().unwrap();
        assert_eq!((env.len(), env.capacity()), (3, 3));
        let status = pod.status.as_ref().unwrap();
        assert_eq!(status.conditions.as_ref().unwrap().capacity(), 5);
        // A pod is built by the in-place walk from a default pod, whose required strings
        // (a container's `name`) start empty: they too take exactly their text.
        assert_eq!(spec.containers[1].name.capacity(), 1);
        assert_eq!(env[1].name.capacity(), 1);
        // serde_json alone leaves slack: what exact capacities are for.
        let plain: Pod = serde_json::from_slice(&b).unwrap();
        assert!(plain.spec.unwrap().volumes.unwrap().capacity() > 3);
    }
}

#[test]
fn managed_fields_are_skipped_only_in_the_root_metadata() {
    let b = serde_json::to_vec(&pod_json()).unwrap();
    let pod: Pod = Decoder::default().decode(&b, true).unwrap();
    assert_eq!(pod.metadata.managed_fields, None);
    let mut expected: Pod = serde_json::from_slice(&b).unwrap();
    expected.metadata.managed_fields = None;
    assert_eq!(pod, expected);
    let kept: Pod = Decoder::default().decode(&b, false).unwrap();
    assert_eq!(kept.metadata.managed_fields.map(|m| m.len()), Some(1));

    // Elsewhere `metadata` and `managedFields` are ordinary keys.
    let v = json!({"metadata": {"name": "x"},
                   "data": {"metadata": "{\"managedFields\": 1}", "managedFields": "kept"}});
    let cm: ConfigMap = Decoder::default()
        .decode(&serde_json::to_vec(&v).unwrap(), true)
        .unwrap();
    assert_eq!(cm.data.unwrap()["managedFields"], "kept");
    let nested = json!({"spec": {"metadata": {"managedFields": [1]}}, "metadata": {}});
    let got: Value = Decoder::default()
        .decode(&serde_json::to_vec(&nested).unwrap(), true)
        .unwrap();
    assert_eq!(got, nested);
    // A repeated member is left alone: the type decides, as with serde_json.
    let twice = br#"{"metadata":{"managedFields":[],"name":"t","managedFields":[]}}"#;
    let ours = Decoder::default()
        .decode::<Pod>(twice, true)
        .map_err(|e| e.to_string());
    assert_eq!(
        ours,
        serde_json::from_slice::<Pod>(twice).map_err(|e| e.to_string())
    );
    // Last or first member, or the only one.
    for text in [
        &br#"{"metadata":{"name":"l","managedFields":[{"manager":"m"}]},"spec":{"containers":[]}}"#
            [..],
        br#"{"metadata":{"managedFields":[{"manager":"m"}],"name":"l"}}"#,
        br#"{"metadata":{"managedFields":[]}}"#,
    ] {
        let ours: Pod = Decoder::default().decode(text, true).unwrap();
        let mut theirs: Pod = serde_json::from_slice(text).unwrap();
        theirs.metadata.managed_fields = None;
        assert_eq!(ours, theirs);
    }
    // An escaped key is the same key.
    let escaped = br#"{"metadata":{"name":"e","manag\u0065dFields":[{"manager":"m"}]}}"#;
    let meta: Pod = Decoder::default().decode(escaped, true).unwrap();
    assert_eq!(meta.metadata.managed_fields, None);
    assert_eq!(meta.metadata.name.as_deref(), Some("e"));
}

/// The heap is grown ahead for the objects announced when the first of them is decoded,
/// then in steps once that is used up; a watch batch's decoder grows it for the new objects
/// announced and no further.
#[test]
fn the_heap_is_grown_ahead_as_announced_then_in_steps() {
    let doc = serde_json::to_vec(&pod_json()).unwrap();
    let mut decoder = Decoder::for_objects(3 * doc.len());
    assert_eq!(
        (decoder.announced, decoder.heap_ahead_for),
        (3 * doc.len(), 0)
    );
    for left in [2, 1, 0] {
        let _: Pod = decoder.decode(&doc, true).unwrap();
        assert_eq!(
            (decoder.announced, decoder.heap_ahead_for),
            (0, left * doc.len())
        );
    }
    let _: Pod = decoder.decode(&doc, true).unwrap();
    assert_eq!(decoder.heap_ahead_for, HEAP_AHEAD_STEP - doc.len());

    decoder.prepare_for_new(doc.len());
    assert_eq!((decoder.announced, decoder.heap_ahead_for), (doc.len(), 0));
    for _ in 0..2 {
        let _: Pod = decoder.decode(&doc, false).unwrap();
        assert_eq!((decoder.announced, decoder.heap_ahead_for), (0, 0));
    }
}

#[test]
fn deep_nesting_fails_as_serde_json_does_without_overflowing() {
    // The deep value alone, and after siblings deep and shallow.
    let places = [("", ""), (r#"{"a":1,"b":[2,{"c":[[3]]}],"d":"#, "}")];
    for depth in (118..=130).chain([100_000]) {
        // The innermost array holds a value, or nothing.
        for ((before, after), inner) in places.into_iter().flat_map(|p| [(p, "1"), (p, "")]) {
            let text = format!(
                r#"{{"metadata":{{"name":"d"}},"spec":{{"group":"g","names":{{"kind":"K","plural":"ks"}},"scope":"Namespaced","versions":[{{"name":"v1","served":true,"storage":true,"schema":{{"openAPIV3Schema":{{"default":{before}{}{inner}{}{after}}}}}}}]}}}}"#,
                "[".repeat(depth),
                "]".repeat(depth)
            );
            let ours = decode::<CustomResourceDefinition>(text.as_bytes());
            let theirs = serde_json::from_slice::<CustomResourceDefinition>(text.as_bytes());
            match (ours, theirs) {
                (Ok(a), Ok(b)) => assert_eq!(a, b, "depth {depth} {before}"),
                (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "depth {depth}"),
                (a, b) => panic!("depth {depth} {before}: ours {a:?}, serde_json {b:?}"),
            }
        }
    }
}

#[test]
fn errors_are_serde_jsons() {
    for text in [
        &br#"{"metadata":{"name":1}}"#[..],
        br#"{"metadata":{"name":"a"}"#,
        br#"{"metadata":{"name":"a"}} x"#,
        br#"{"metadata":{"name":"a","name":"b"}}"#,
        b"{\"metadata\":{\"name\":\"a\x01\"}}",
        b"{\"metadata\":{\"name\":\"\xff\"}}",
        br#"{"metadata":{"name":"\ud800"}}"#,
        br#"{"metadata":{"name":"\ud83d\ude00 \u00e9\u003c"}}"#,
        br#"{"metadata":{"name":"\\ud800"}}"#,
        br#"{"data":{"k":"v"},"binaryData":{"b":"not base64!"}}"#,
        b"",
    ] {
        let ours = decode::<ConfigMap>(text).map_err(|e| e.to_string());
        let theirs = serde_json::from_slice::<ConfigMap>(text).map_err(|e| e.to_string());
        assert_eq!(ours, theirs, "{}", String::from_utf8_lossy(text));
    }
}

/// One known difference: `-0` is the integer 0 (serde_json: the float -0.0); both are zero
/// for every numeric field.
#[test]
fn numbers_decode_as_serde_json_does() {
    let zero: Value = decode(br#"{"n":-0}"#).unwrap();
    assert_eq!(zero["n"].as_f64(), Some(0.0));
    for text in [
        "0",
        "1.0",
        "-1.5e3",
        "1E2",
        "1e400",
        "-1e400",
        "1e-400",
        "18446744073709551615",
        "18446744073709551616",
        "-9223372036854775808",
        "-9223372036854775809",
        "0.1",
        "01",
        "1.",
        "-",
        "1e",
        "123456789012345678901234567890",
    ] {
        let doc = format!(r#"{{"n":{text}}}"#);
        let ours = decode::<Value>(doc.as_bytes()).map_err(|e| e.to_string());
        let theirs = serde_json::from_slice::<Value>(doc.as_bytes()).map_err(|e| e.to_string());
        assert_eq!(ours, theirs, "{text}");
    }
}

#[test]
fn types_simd_json_cannot_drive_still_decode() {
    #[derive(Debug, serde::Deserialize)]
    struct WithRaw {
        metadata: ObjectMeta,
        raw: Box<serde_json::value::RawValue>,
    }
    let b = br#"{"metadata":{"name":"r"},"raw":{"a":[1,2]}}"#;
    let v: WithRaw = decode(b).unwrap();
    assert_eq!(v.raw.get(), r#"{"a":[1,2]}"#);
    assert_eq!(v.metadata.name.as_deref(), Some("r"));
}

#[derive(Debug, PartialEq, serde::Deserialize)]
struct Nested {
    #[serde(default)]
    a: Vec<Vec<u32>>,
    #[serde(default)]
    b: Option<Vec<String>>,
    #[serde(default)]
    c: Option<Box<Nested>>,
    #[serde(default)]
    d: Option<Value>,
    #[serde(default)]
    e: Option<f64>,
    #[serde(default)]
    f: Option<i64>,
}

/// Any JSON value (any strings, any finite floats, any 64-bit integers), also used by the
/// lean cache's tests (`decode::lean_tests`).
pub(in crate::decode) fn value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        ".*".prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 32, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::from),
            prop::collection::btree_map(".{0,6}", inner, 0..5)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// `v` with every float replaced by its integer part (as an integer when it fits).
fn without_floats(v: Value) -> Value {
    match v {
        Value::Number(n) if n.is_f64() => Value::from(n.as_f64().unwrap_or(0.0).trunc() as i64),
        Value::Array(a) => Value::Array(a.into_iter().map(without_floats).collect()),
        Value::Object(m) => {
            Value::Object(m.into_iter().map(|(k, v)| (k, without_floats(v))).collect())
        }
        other => other,
    }
}

fn nested() -> impl Strategy<Value = Value> {
    let leaf = (
        prop::collection::vec(prop::collection::vec(any::<u32>(), 0..6), 0..6),
        prop::option::of(prop::collection::vec(".{0,8}", 0..7)),
        prop::option::of(value().prop_map(without_floats)),
        prop::option::of((-1e6..1e6f64).prop_map(|f| f.trunc())),
        prop::option::of(any::<i64>()),
    )
        .prop_map(|(a, b, d, e, f)| json!({"a": a, "b": b, "d": d, "e": e, "f": f}));
    leaf.prop_recursive(3, 8, 1, |inner| {
        (inner, prop::collection::vec(any::<u32>(), 0..9))
            .prop_map(|(c, x)| json!({"a": [x], "c": c}))
    })
}

fn check_capacities(n: &Nested) {
    for v in &n.a {
        assert_eq!(v.len(), v.capacity());
    }
    assert_eq!(n.a.len(), n.a.capacity());
    if let Some(b) = &n.b {
        assert_eq!(b.len(), b.capacity());
    }
    if let Some(c) = &n.c {
        check_capacities(c);
    }
}

proptest! {
    #[test]
    fn nested_decode_equal_and_exact(v in nested(), pretty in any::<bool>()) {
        let b = if pretty { serde_json::to_vec_pretty(&v) } else { serde_json::to_vec(&v) }.unwrap();
        let ours: Nested = decode(&b).unwrap();
        prop_assert_eq!(&ours, &serde_json::from_slice::<Nested>(&b).unwrap());
        check_capacities(&ours);
    }

    #[test]
    fn values_decode_as_serde_json_does(v in value()) {
        // Floats are compared apart (see below): serde_json's default parse is best-effort.
        let v = without_floats(v);
        let b = serde_json::to_vec(&v).unwrap();
        let ours: Value = decode(&b).unwrap();
        prop_assert_eq!(ours, serde_json::from_slice::<Value>(&b).unwrap());
    }

    /// One decoder for many documents, as a decoding thread has: the tape, the input copy
    /// and the heap accounting carried from one document to the next change no result,
    /// whether a document before decoded, failed or was too deep for simd-json.
    #[test]
    fn one_decoder_decodes_a_sequence_as_serde_json_does(
        docs in proptest::collection::vec((value(), 0u8..4), 1..12)
    ) {
        let mut decoder = Decoder::for_objects(0);
        for (v, kind) in docs {
            let b = match kind {
                0 => b"{\"cut\": [1, 2".to_vec(),
                1 => format!("{}1{}", "[".repeat(200), "]".repeat(200)).into_bytes(),
                _ => serde_json::to_vec(&without_floats(v)).unwrap(),
            };
            let ours = decoder.decode::<Value>(&b, false).map_err(|e| e.to_string());
            let theirs = serde_json::from_slice::<Value>(&b).map_err(|e| e.to_string());
            prop_assert_eq!(ours, theirs);
        }
    }

    #[test]
    fn floats_are_the_nearest_f64(f in any::<f64>().prop_filter("finite", |f| f.is_finite()), exp in -30i32..30) {
        for text in [serde_json::to_string(&f).unwrap(), format!("{f:e}"), format!("{}e{exp}", f / 7.0)] {
            let nearest: f64 = text.parse().unwrap();
            if !nearest.is_finite() {
                continue;
            }
            let doc = format!(r#"{{"e":{text}}}"#);
            let ours: Nested = decode(doc.as_bytes()).unwrap();
            prop_assert_eq!(ours.e.map(f64::to_bits), Some(nearest.to_bits()), "{}", text);
        }
    }
}
