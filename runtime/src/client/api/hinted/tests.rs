//! The hinted deserializer decodes what serde_json decodes, with exact vector capacities.

use k8s_openapi::api::core::v1::Pod;
use proptest::prelude::*;
use serde_json::{Value, json};

use super::*;

fn decode<T: serde::de::DeserializeOwned>(b: &[u8]) -> (T, bool) {
    let mut tape = Tape::default();
    let end = tape.record(b, skip_ws(b, 0)).unwrap();
    assert_eq!(skip_ws(b, end), b.len());
    let mut de = serde_json::Deserializer::from_slice(b);
    let v: T = deserialize(&mut de, &tape).unwrap();
    de.end().unwrap();
    (v, tape.broken.get())
}

fn pod_json() -> Value {
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "p", "namespace": "ns", "resourceVersion": "7",
                     "labels": {"app": "web"}, "unknownField": [[1, 2], {"x": [3]}],
                     "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "u"}]},
        "spec": {
            "containers": [
                {"name": "a", "image": "i", "env": [{"name": "X", "value": "1"}, {"name": "Y"}, {"name": "Z", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
                 "ports": [{"containerPort": 80}], "command": ["sh", "-c", "true"],
                 "resources": {"limits": {"cpu": "1"}}},
                {"name": "b", "image": "j", "volumeMounts": [{"name": "v1", "mountPath": "/a"}, {"name": "v2", "mountPath": "/b"}]}
            ],
            "volumes": [{"name": "v1", "emptyDir": {}}, {"name": "v2", "configMap": {"name": "c", "items": [{"key": "k", "path": "p"}]}}, {"name": "v3", "projected": {"sources": [{"serviceAccountToken": {"path": "t"}}]}}],
            "tolerations": [{"key": "k", "operator": "Exists"}]
        },
        "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}, {"type": "Initialized", "status": "True"}, {"type": "PodScheduled", "status": "True"}, {"type": "ContainersReady", "status": "True"}, {"type": "X", "status": "False"}],
                   "containerStatuses": [{"name": "a", "image": "i", "imageID": "", "ready": true, "restartCount": 0, "state": {"running": {}}}, {"name": "b", "image": "j", "imageID": "", "ready": true, "restartCount": 0}],
                   "podIPs": [{"ip": "10.0.0.1"}]}
    })
}

#[test]
fn pods_decode_equal_with_exact_capacities() {
    let b = serde_json::to_vec_pretty(&pod_json()).unwrap();
    let (pod, broken): (Pod, bool) = decode(&b);
    assert!(!broken);
    assert_eq!(pod, serde_json::from_slice::<Pod>(&b).unwrap());
    let spec = pod.spec.as_ref().unwrap();
    let vols = spec.volumes.as_ref().unwrap();
    assert_eq!((vols.len(), vols.capacity()), (3, 3));
    assert_eq!(spec.containers.capacity(), 2);
    let env = spec.containers[0].env.as_ref().unwrap();
    assert_eq!((env.len(), env.capacity()), (3, 3));
    let mounts = spec.containers[1].volume_mounts.as_ref().unwrap();
    assert_eq!(mounts.capacity(), 2);
    let status = pod.status.as_ref().unwrap();
    assert_eq!(status.conditions.as_ref().unwrap().capacity(), 5);
    assert_eq!(status.container_statuses.as_ref().unwrap().capacity(), 2);
    // serde_json alone leaves slack: what this module is for.
    let plain: Pod = serde_json::from_slice(&b).unwrap();
    assert!(plain.spec.unwrap().volumes.unwrap().capacity() > 3);
}

#[derive(Debug, PartialEq, serde::Deserialize)]
struct Nested {
    #[serde(default)]
    a: Vec<Vec<u32>>,
    #[serde(default)]
    b: Option<Vec<String>>,
    #[serde(default)]
    c: Option<Box<Nested>>,
}

fn nested() -> impl Strategy<Value = Value> {
    let leaf = Just(json!({}));
    leaf.prop_recursive(3, 24, 4, |inner| {
        (
            prop::collection::vec(prop::collection::vec(any::<u32>(), 0..6), 0..5),
            prop::option::of(prop::collection::vec("\\PC{0,4}", 0..5)),
            prop::option::of(inner),
            prop::option::of(prop::collection::vec(any::<i8>(), 0..3)),
        )
            .prop_map(|(a, b, c, ignored)| {
                let mut v = json!({"a": a});
                if let Some(b) = b {
                    v["b"] = json!(b);
                }
                if let Some(c) = c {
                    v["c"] = c;
                }
                if let Some(i) = ignored {
                    v["ignored"] = json!([i, {"deep": [i]}]);
                }
                v
            })
    })
}

fn check_capacities(n: &Nested) {
    assert_eq!(n.a.len(), n.a.capacity());
    for v in &n.a {
        assert_eq!(v.len(), v.capacity());
    }
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
        let (n, broken): (Nested, bool) = decode(&b);
        prop_assert!(!broken);
        prop_assert_eq!(&n, &serde_json::from_slice::<Nested>(&b).unwrap());
        check_capacities(&n);
        let (value, _): (Value, bool) = decode(&b);
        prop_assert_eq!(value, v);
    }
}
