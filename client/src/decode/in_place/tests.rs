//! In-place decoding leaves exactly what a fresh decode builds: every real object (the
//! test server's realistic pods, objects of eighteen more built-in kinds as it stores them,
//! the corpus's example manifests and CustomResourceDefinitions) decoded into up to eight
//! objects of its type (three for the large CRDs) and into the default, as its type and as
//! its lean form, and, in property tests, mutated pods (members dropped, nulled,
//! retyped, added, a wrong `kind`) decoded into objects of other mutated pods. Where in-place
//! decoding gives up, the caller decodes afresh, so giving up is allowed; a different
//! object is not.

use std::any::Any;
use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, StatefulSet};
use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
use k8s_openapi::api::batch::v1::{CronJob, Job};
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{
    ConfigMap, Event, Namespace, Node, PersistentVolumeClaim, Pod, Secret, Service,
};
use k8s_openapi::api::networking::v1::{Ingress, NetworkPolicy};
use k8s_openapi::api::rbac::v1::{ClusterRole, RoleBinding};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use proptest::prelude::*;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::super::differential_tests::{corpus, runtime, yaml_documents};
use super::super::object::Decoder;
use super::super::object::tests::value;
use crate::DynamicObject;
use kinform_core::{Lean, ObjectKey};

/// Objects of built-in kinds to create on the test server, which fills in the defaults
/// kube-apiserver does: `(collection path, object)`.
fn to_create() -> Vec<(&'static str, Value)> {
    let labels = json!({"app": "web", "tier": "front"});
    let template = json!({
        "metadata": {"labels": labels},
        "spec": {"containers": [{"name": "web", "image": "nginx:1.27",
            "ports": [{"containerPort": 80}],
            "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}, "limits": {"cpu": 1}},
            "env": [{"name": "A", "value": "1"},
                    {"name": "B", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
            "livenessProbe": {"httpGet": {"path": "/", "port": "http"}}}]},
    });
    vec![
        (
            "/apis/apps/v1/namespaces/ns-0/deployments",
            json!({"metadata": {"name": "web", "annotations": {"a": "b"}},
            "spec": {"replicas": 3, "selector": {"matchLabels": labels}, "template": template}}),
        ),
        (
            "/apis/apps/v1/namespaces/ns-0/statefulsets",
            json!({"metadata": {"name": "db"},
            "spec": {"serviceName": "db", "selector": {"matchLabels": labels}, "template": template,
                     "volumeClaimTemplates": [{"metadata": {"name": "data"},
                        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}]}}),
        ),
        (
            "/apis/apps/v1/namespaces/ns-0/daemonsets",
            json!({"metadata": {"name": "agent"},
            "spec": {"selector": {"matchLabels": labels}, "template": template}}),
        ),
        (
            "/apis/batch/v1/namespaces/ns-0/jobs",
            json!({"metadata": {"name": "once"},
            "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}}}),
        ),
        (
            "/apis/batch/v1/namespaces/ns-0/cronjobs",
            json!({"metadata": {"name": "nightly"},
            "spec": {"schedule": "0 3 * * *", "jobTemplate": {"spec": {"template": {"spec": {
                "restartPolicy": "OnFailure", "containers": [{"name": "c", "image": "busybox", "args": ["date"]}]}}}}}}),
        ),
        (
            "/api/v1/namespaces/ns-0/services",
            json!({"metadata": {"name": "web"},
            "spec": {"selector": labels, "ports": [{"name": "http", "port": 80, "targetPort": "http"},
                                                   {"name": "metrics", "port": 9090, "targetPort": 9090}]}}),
        ),
        (
            "/api/v1/namespaces/ns-0/configmaps",
            json!({"metadata": {"name": "conf", "labels": labels},
            "data": {"a.yaml": "x: 1\n", "b": ""}, "binaryData": {"c": "AAEC"}}),
        ),
        (
            "/api/v1/namespaces/ns-0/secrets",
            json!({"metadata": {"name": "token"},
            "type": "Opaque", "data": {"password": "aHVudGVyMg=="}, "stringData": {"user": "admin"}}),
        ),
        (
            "/api/v1/namespaces/ns-0/persistentvolumeclaims",
            json!({"metadata": {"name": "data"},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "10Gi"}}}}),
        ),
        (
            "/api/v1/namespaces/ns-0/events",
            json!({"metadata": {"name": "web.1"},
            "involvedObject": {"kind": "Pod", "name": "web", "namespace": "ns-0"},
            "reason": "Started", "message": "Started container", "type": "Normal", "count": 2,
            "firstTimestamp": "2024-01-01T00:00:00Z", "lastTimestamp": "2024-01-01T00:01:00Z"}),
        ),
        (
            "/api/v1/nodes",
            json!({"metadata": {"name": "node-a", "labels": {"kubernetes.io/os": "linux"}},
            "spec": {"podCIDR": "10.0.0.0/24", "taints": [{"key": "k", "value": "v", "effect": "NoSchedule"}]}}),
        ),
        (
            "/api/v1/namespaces",
            json!({"metadata": {"name": "extra", "labels": labels}}),
        ),
        (
            "/apis/networking.k8s.io/v1/namespaces/ns-0/ingresses",
            json!({"metadata": {"name": "web"},
            "spec": {"rules": [{"host": "example.com", "http": {"paths": [{"path": "/", "pathType": "Prefix",
                "backend": {"service": {"name": "web", "port": {"number": 80}}}}]}}]}}),
        ),
        (
            "/apis/networking.k8s.io/v1/namespaces/ns-0/networkpolicies",
            json!({"metadata": {"name": "deny"},
            "spec": {"podSelector": {"matchLabels": labels}, "policyTypes": ["Ingress"],
                     "ingress": [{"from": [{"ipBlock": {"cidr": "10.0.0.0/8", "except": ["10.1.0.0/16"]}}],
                                  "ports": [{"port": 443, "protocol": "TCP"}]}]}}),
        ),
        (
            "/apis/rbac.authorization.k8s.io/v1/clusterroles",
            json!({"metadata": {"name": "reader"},
            "rules": [{"apiGroups": [""], "resources": ["pods", "services"], "verbs": ["get", "list", "watch"]}]}),
        ),
        (
            "/apis/rbac.authorization.k8s.io/v1/namespaces/ns-0/rolebindings",
            json!({"metadata": {"name": "read"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "reader"},
            "subjects": [{"kind": "ServiceAccount", "name": "default", "namespace": "ns-0"}]}),
        ),
        (
            "/apis/coordination.k8s.io/v1/namespaces/ns-0/leases",
            json!({"metadata": {"name": "leader"},
            "spec": {"holderIdentity": "a", "leaseDurationSeconds": 15, "renewTime": "2024-01-01T00:00:00.123456Z"}}),
        ),
        (
            "/apis/autoscaling/v2/namespaces/ns-0/horizontalpodautoscalers",
            json!({"metadata": {"name": "web"},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                     "minReplicas": 1, "maxReplicas": 5,
                     "metrics": [{"type": "Resource", "resource": {"name": "cpu",
                        "target": {"type": "Utilization", "averageUtilization": 80}}}]}}),
        ),
    ]
}

/// Real objects to decode: the test server's realistic pods (with `managedFields`), the
/// objects of [`to_create`] as it stored them, the corpus's example manifests (custom
/// resources) and its CustomResourceDefinitions (large nested schemas).
fn objects() -> &'static [Value] {
    static OBJECTS: OnceLock<Vec<Value>> = OnceLock::new();
    OBJECTS.get_or_init(|| {
        let mut out = runtime().block_on(async {
            let server = kinform_testserver::TestApiServer::builder()
                .pods(30)
                .namespaces(2)
                .start()
                .await
                .expect("the test server starts");
            let client = crate::Client::new(crate::Config::new(server.url().parse().expect("url")))
                .expect("a client");
            let mut out = Vec::new();
            for (path, obj) in to_create() {
                let req = http::Request::post(path)
                    .header("content-type", "application/json")
                    .body(serde_json::to_vec(&obj).expect("JSON"))
                    .expect("request");
                let created: Value = client.request(req).await.expect("created");
                out.push(created);
            }
            let req = http::Request::get("/api/v1/pods")
                .body(Vec::new())
                .expect("request");
            let pods: Value = client.request(req).await.expect("pods");
            out.extend(pods["items"].as_array().into_iter().flatten().map(|p| {
                let mut p = p.clone();
                p["apiVersion"] = json!("v1");
                p["kind"] = json!("Pod");
                p
            }));
            out
        });
        out.extend(corpus().iter().cloned());
        out.extend(
            yaml_documents("crds")
                .into_iter()
                .filter(|d| d["kind"] == "CustomResourceDefinition"),
        );
        out.sort_by_key(Value::to_string);
        out
    })
}

/// The objects of type `K`.
fn examples<K: k8s_openapi::Resource>() -> Vec<&'static Value> {
    objects()
        .iter()
        .filter(|d| d["apiVersion"] == K::API_VERSION && d["kind"] == K::KIND)
        .collect()
}

/// Decodes `doc` into `target` in place; `Some(result)` when in-place decoding took it.
fn in_place<K: 'static>(mut target: K, doc: &[u8], skip_managed_fields: bool) -> Option<K> {
    Decoder::default()
        .decode_into(&mut target, doc, skip_managed_fields, None)
        .then_some(target)
}

/// What the ordinary path decodes from `doc` with the types' own `Deserialize` (not the
/// in-place walk, which builds new k8s-openapi objects on that path too).
fn fresh<K: DeserializeOwned + 'static>(doc: &[u8], skip_managed_fields: bool) -> Option<K> {
    Decoder::default()
        .decode_by_serde(doc, skip_managed_fields)
        .ok()
}

/// Every object of type `K` decoded into the first `targets` of them and into the default,
/// with and without `managedFields` cut, as `K` and as `Lean<K>`: always taken, always equal
/// to the fresh decode. Returns the number of objects.
fn round<K>(targets: usize) -> usize
where
    K: k8s_openapi::Resource
        + DeserializeOwned
        + Clone
        + Default
        + PartialEq
        + std::fmt::Debug
        + 'static,
{
    let docs = examples::<K>();
    every_into(&docs, targets, K::default());
    every_into(
        &docs,
        targets,
        fresh::<Lean<K>>(b"{}", false).expect("an empty lean object"),
    );
    docs.len()
}

/// Every document of `docs` decoded into the first `targets` of them and into `blank`, with
/// and without `managedFields` cut: always taken, always equal to the fresh decode.
fn every_into<T>(docs: &[&Value], targets: usize, blank: T)
where
    T: DeserializeOwned + Clone + PartialEq + std::fmt::Debug + 'static,
{
    // The first objects and the default: a pod's neighbours are enough to vary its shape.
    let targets: Vec<T> = docs
        .iter()
        .take(targets)
        .map(|t| fresh::<T>(&serde_json::to_vec(t).expect("JSON"), false).expect("decodes"))
        .chain([blank])
        .collect();
    for doc in docs {
        let bytes = serde_json::to_vec(doc).expect("JSON");
        for skip in [false, true] {
            let want: T = fresh(&bytes, skip).expect("the example decodes");
            for target in &targets {
                let got = in_place(target.clone(), &bytes, skip);
                assert_eq!(
                    got.as_ref(),
                    Some(&want),
                    "{} {} {}",
                    std::any::type_name::<T>(),
                    doc["kind"],
                    doc["metadata"]["name"]
                );
            }
        }
    }
}

#[test]
fn every_real_object_decodes_in_place_to_what_a_fresh_decode_builds() {
    let counts = [
        ("Pod", round::<Pod>(8)),
        ("Deployment", round::<Deployment>(8)),
        ("StatefulSet", round::<StatefulSet>(8)),
        ("DaemonSet", round::<DaemonSet>(8)),
        ("Job", round::<Job>(8)),
        ("CronJob", round::<CronJob>(8)),
        ("Service", round::<Service>(8)),
        ("ConfigMap", round::<ConfigMap>(8)),
        ("Secret", round::<Secret>(8)),
        ("PersistentVolumeClaim", round::<PersistentVolumeClaim>(8)),
        ("Event", round::<Event>(8)),
        ("Node", round::<Node>(8)),
        ("Namespace", round::<Namespace>(8)),
        ("Ingress", round::<Ingress>(8)),
        ("NetworkPolicy", round::<NetworkPolicy>(8)),
        ("ClusterRole", round::<ClusterRole>(8)),
        ("RoleBinding", round::<RoleBinding>(8)),
        ("Lease", round::<Lease>(8)),
        (
            "HorizontalPodAutoscaler",
            round::<HorizontalPodAutoscaler>(8),
        ),
    ];
    for (kind, n) in counts {
        assert!(n > 0, "no {kind} to decode: {counts:?}");
    }
}

/// The corpus's CRDs, each a large nested schema (of a few hundred kilobytes): decoded into
/// three others, which vary the schemas' shapes enough, and into the default.
#[test]
fn every_corpus_crd_decodes_in_place_to_what_a_fresh_decode_builds() {
    assert!(
        round::<CustomResourceDefinition>(3) > 10,
        "the corpus's CRDs"
    );
}

#[test]
fn every_real_object_decodes_in_place_as_a_lean_dynamic_object() {
    // The dynamic lean informer's objects: every object of every kind, the corpus's custom
    // resources among them; the CRDs' lean form is the previous test's `Lean<K>` (a lean
    // body does not depend on its type).
    let all: Vec<&Value> = objects()
        .iter()
        .filter(|d| d["kind"] != "CustomResourceDefinition")
        .collect();
    assert!(
        all.iter().any(|d| d["kind"] == "HelmRelease"),
        "the corpus's examples"
    );
    every_into(
        &all,
        8,
        fresh::<Lean<DynamicObject>>(b"{}", false).expect("an empty lean object"),
    );
}

#[test]
fn lean_objects_follow_their_deserialize_and_keep_an_unchanged_body() {
    let doc = |metadata: &str, rest: &str| {
        format!(r#"{{"apiVersion":"v1","kind":"Pod"{metadata}{rest}}}"#)
    };
    let target: Lean<Pod> = fresh(
        doc(
            r#","metadata":{"name":"a","labels":{"x":"1"}}"#,
            r#","spec":{"nodeName":"n"}"#,
        )
        .as_bytes(),
        false,
    )
    .expect("decodes");
    let cases = [
        doc(
            r#","metadata":{"name":"a","labels":{"x":"2"}}"#,
            r#","spec":{"nodeName":"n"}"#,
        ),
        doc(r#","metadata":null"#, r#","spec":{"nodeName":"m"}"#),
        doc("", r#","spec":{"nodeName":"n"},"status":{}"#),
        doc(r#","metadata":{}"#, ""),
        doc(
            r#","spec":{"nodeName":"\"q\" \u00e9"}"#,
            r#","metadata":{"name":"b"}"#,
        ),
    ];
    for case in &cases {
        let want: Lean<Pod> = fresh(case.as_bytes(), false).expect("decodes");
        assert_eq!(
            in_place(target.clone(), case.as_bytes(), false),
            Some(want),
            "{case}"
        );
    }
    // A change of labels leaves the body's text, and its buffer, as they were.
    let body = target.body_json().as_ptr();
    let relabelled = in_place(target.clone(), cases[0].as_bytes(), false).expect("decodes");
    let mut same = target;
    assert!(Decoder::default().decode_into(&mut same, cases[0].as_bytes(), false, None));
    assert_eq!(same, relabelled);
    assert_eq!(same.body_json().as_ptr(), body, "the body's buffer is kept");
    // A second `metadata`, or one that is not an object, is refused by `Deserialize`:
    // in-place decoding gives up.
    for refused in [
        doc(r#","metadata":{}"#, r#","metadata":{}"#),
        doc(r#","metadata":null"#, r#","metadata":null"#),
        doc(r#","metadata":[]"#, ""),
    ] {
        assert!(
            fresh::<Lean<Pod>>(refused.as_bytes(), false).is_none(),
            "{refused}"
        );
        assert!(
            in_place(same.clone(), refused.as_bytes(), false).is_none(),
            "{refused}"
        );
    }
}

#[test]
fn a_lean_object_shares_an_unchanged_body_with_the_cached_object_of_its_key() {
    let pod = |name: &str, label: &str, node: &str| {
        format!(
            r#"{{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"{name}","namespace":"ns","labels":{{"x":"{label}"}}}},"spec":{{"nodeName":"{node}"}}}}"#
        )
    };
    let cached: Arc<Lean<Pod>> = Arc::new(fresh(pod("a", "1", "n").as_bytes(), false).unwrap());
    let lookup = |key: ObjectKey<'_>| {
        (key == ObjectKey::new(Some("ns"), "a")).then(|| Arc::clone(&cached) as Arc<dyn Any>)
    };
    // The object decoded into is another pod the cache let go of.
    let other: Lean<Pod> = fresh(pod("b", "1", "m").as_bytes(), false).unwrap();
    let decode = |doc: &str| {
        let mut target = other.clone();
        let taken =
            Decoder::default().decode_into(&mut target, doc.as_bytes(), false, Some(&lookup));
        let want: Lean<Pod> = fresh(doc.as_bytes(), false).unwrap();
        assert!(taken, "{doc}");
        assert_eq!(target, want, "{doc}");
        std::ptr::eq(target.body_json(), cached.body_json())
    };
    assert!(
        decode(&pod("a", "2", "n")),
        "a change of labels shares the body"
    );
    assert!(!decode(&pod("a", "2", "m")), "a changed body is not shared");
    assert!(!decode(&pod("c", "2", "n")), "nor is another key's");
    // A body as the object decoded into has it is kept, when the cache has nothing equal.
    let mut target = other.clone();
    let body = target.body_json().as_ptr();
    assert!(Decoder::default().decode_into(
        &mut target,
        pod("b", "2", "m").as_bytes(),
        false,
        Some(&lookup)
    ));
    assert_eq!(target.body_json().as_ptr(), body);
}

#[test]
fn a_type_without_in_place_decoding_and_a_wrong_kind_give_up() {
    let pod = br#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a"}}"#;
    assert!(in_place(DynamicObject::default(), pod, false).is_none());
    let service = br#"{"apiVersion":"v1","kind":"Service","metadata":{"name":"a"}}"#;
    assert!(in_place(Pod::default(), service, false).is_none());
    assert!(in_place(Pod::default(), b"[]", false).is_none());
    assert!(in_place(Pod::default(), b"{\"metadata\":", false).is_none());
    let got = in_place(Pod::default(), pod, false).expect("a pod decodes in place");
    assert_eq!(got.metadata.name.as_deref(), Some("a"));
}

#[test]
fn absent_null_duplicate_and_unknown_members_follow_k8s_openapi() {
    let full = json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "a", "labels": {"x": "1", "y": "2"}, "annotations": {"k": "v"}},
        "spec": {"containers": [
            {"name": "c", "image": "i", "args": ["a", "b"], "ports": [{"containerPort": 80}],
             "resources": {"limits": {"cpu": 1, "memory": "1Gi"}}},
            {"name": "d", "image": "j"}
        ]},
        "status": {"phase": "Running", "startTime": "2024-01-01T00:00:00Z"},
    });
    let target: Pod = serde_json::from_value(full).expect("pod");
    let cases = [
        // Members gone: `None`, and a required `name` its default.
        r#"{"apiVersion":"v1","kind":"Pod","metadata":{},"spec":{"containers":[{"image":"k"}]}}"#,
        // `null` is absent.
        r#"{"metadata":{"name":null,"labels":null},"spec":{"containers":[{"name":null,"args":null}]},"status":null}"#,
        // A later duplicate wins; unknown members are ignored.
        r#"{"metadata":{"name":"a","name":"b","future":{"x":[1,2]}},"spec":{"containers":[]}}"#,
        // Map keys changed, reordered, fewer and more.
        r#"{"metadata":{"labels":{"y":"3","x":"4"},"annotations":{"k":"v","l":"w"}}}"#,
        // A map refilled from its own entries with a duplicate key among new ones.
        r#"{"metadata":{"labels":{"z":"1","x":"2","z":"3","w":"4"}}}"#,
        // A quantity written as a number; a time.
        r#"{"spec":{"containers":[{"name":"c","resources":{"limits":{"cpu":2.5}}}]},"status":{"startTime":"2025-02-03T04:05:06Z"}}"#,
        // Integers at their types' ends, booleans.
        r#"{"spec":{"activeDeadlineSeconds":-9223372036854775808,"terminationGracePeriodSeconds":9223372036854775807,"hostNetwork":true,"containers":[{"name":"c","ports":[{"containerPort":2147483647},{"containerPort":-2147483648}]}]}}"#,
    ];
    for case in cases {
        let want: Pod = fresh(case.as_bytes(), false).expect("decodes");
        let got = in_place(target.clone(), case.as_bytes(), false);
        assert_eq!(got.as_ref(), Some(&want), "{case}");
    }
    // What k8s-openapi refuses, in-place decoding gives up on.
    for refused in [
        r#"{"apiVersion":"v2","metadata":{}}"#,
        r#"{"kind":null}"#,
        r#"{"metadata":{"name":1}}"#,
        r#"{"spec":{"containers":{}}}"#,
        r#"{"status":{"startTime":"yesterday"}}"#,
        // Numbers the field's type cannot hold, or not numbers.
        r#"{"spec":{"containers":[{"ports":[{"containerPort":2147483648}]}]}}"#,
        r#"{"spec":{"containers":[{"ports":[{"containerPort":80.0}]}]}}"#,
        r#"{"spec":{"activeDeadlineSeconds":9223372036854775808}}"#,
        r#"{"spec":{"activeDeadlineSeconds":"5"}}"#,
        r#"{"spec":{"hostNetwork":1}}"#,
    ] {
        assert!(
            fresh::<Pod>(refused.as_bytes(), false).is_none(),
            "{refused}"
        );
        assert!(
            in_place(target.clone(), refused.as_bytes(), false).is_none(),
            "{refused}"
        );
    }
}

#[test]
fn a_map_refilled_past_the_lookahead_is_what_a_fresh_decode_builds() {
    // 40 labels into 40 others, shifted by more keys than a member looks ahead for its own,
    // with some keys dropped and some added: the refill takes old entries of the same key,
    // spare ones and fresh ones.
    let labels = |keys: std::ops::Range<usize>, skip: usize| -> Value {
        keys.filter(|k| k % skip != 0)
            .map(|k| (format!("k{k:03}"), json!(format!("v{k}"))))
            .collect::<serde_json::Map<_, _>>()
            .into()
    };
    let pod = |labels: Value| {
        serde_json::to_vec(&json!({"metadata": {"name": "a", "labels": labels}})).expect("JSON")
    };
    let target: Pod = fresh(&pod(labels(0..40, 7)), false).expect("decodes");
    for doc in [
        pod(labels(20..60, 5)),
        pod(labels(0..40, 3)),
        pod(labels(39..41, 100)),
    ] {
        let want: Pod = fresh(&doc, false).expect("decodes");
        assert_eq!(in_place(target.clone(), &doc, false), Some(want));
    }
}

/// A refill decodes into the map's own entries: a member whose key's entry is within the
/// lookahead into that entry, another one into a spare entry, so no label is made afresh
/// while old entries are left (their buffers are the same ones: every key and every value
/// has the same length, so none grows).
#[test]
fn a_refilled_map_decodes_into_its_own_entries() {
    let pod = |keys: &mut dyn Iterator<Item = usize>| {
        let labels: serde_json::Map<_, _> = keys
            .map(|k| (format!("k{k:03}"), json!(format!("v{k:03}"))))
            .collect();
        serde_json::to_vec(&json!({"metadata": {"name": "a", "labels": labels}})).expect("JSON")
    };
    let buffers = |pod: &Pod| -> BTreeMap<String, (*const u8, *const u8)> {
        let labels = pod.metadata.labels.as_ref().expect("labels");
        labels
            .iter()
            .map(|(k, v)| (k.clone(), (k.as_ptr(), v.as_ptr())))
            .collect()
    };
    // One key of ten dropped: every other key is within the lookahead of its entry (an old
    // entry not taken holds the window where it is).
    let target: Pod = fresh(&pod(&mut (0..10)), false).expect("decodes");
    let before = buffers(&target);
    let doc = pod(&mut (0..10).filter(|&k| k != 3));
    let after = buffers(&in_place(target, &doc, false).expect("decodes in place"));
    assert_eq!(after.len(), 9);
    for (key, buffers) in &after {
        assert_eq!(
            *buffers, before[key],
            "{key} was decoded into its own entry"
        );
    }

    // Five keys dropped at the front and five added at the back: members take their own
    // entries or spare ones, and none is made afresh.
    let target: Pod = fresh(&pod(&mut (0..40)), false).expect("decodes");
    let doc = pod(&mut (5..45));
    let before = buffers(&target);
    let after = buffers(&in_place(target, &doc, false).expect("decodes in place"));
    let sorted = |m: &BTreeMap<String, (*const u8, *const u8)>| {
        let mut all: Vec<_> = m.values().copied().collect();
        all.sort();
        all
    };
    assert_eq!(after.len(), 40);
    assert_eq!(
        sorted(&after),
        sorted(&before),
        "every old entry was decoded into"
    );
}

#[test]
fn json_values_decode_in_place_whatever_their_shape_was() {
    let pod = |fields: Value| {
        serde_json::to_vec(&json!({"metadata": {"managedFields": [
            {"manager": "m", "fieldsType": "FieldsV1", "fieldsV1": fields}]}}))
        .expect("JSON")
    };
    let shapes = [
        json!({"f:a": {}, "f:b": {"f:c": {}}}),
        json!({"f:b": {"f:c": {}}, "f:a": {}}),
        json!({"f:a": {"x": [1, "s", null, true, 2.5, -3, 18446744073709551615u64]}}),
        json!("text"),
        json!([{"a": 1}, [2], "3"]),
        json!(7),
        json!(null),
        json!({}),
    ];
    for target in &shapes {
        let target: Pod = fresh(&pod(target.clone()), false).expect("decodes");
        for doc in &shapes {
            let doc = pod(doc.clone());
            let want: Pod = fresh(&doc, false).expect("decodes");
            assert_eq!(in_place(target.clone(), &doc, false), Some(want));
        }
        // A duplicate key where the map is refilled: the later value wins.
        let doc = br#"{"metadata":{"managedFields":[{"manager":"m","fieldsV1":{"f:b":{"f:c":{}},"f:z":[1],"f:b":{"f:d":{}},"f:a":{}}}]}}"#;
        let want: Pod = fresh(doc, false).expect("decodes");
        assert_eq!(in_place(target.clone(), doc, false), Some(want));
        // serde_json reads this key as a raw value, not as a member: decoded afresh.
        let magic = pod(json!({"$serde_json::private::RawValue": "1"}));
        assert!(in_place(target.clone(), &magic, false).is_none());
    }
}

/// One change to a JSON document, applied at the n-th value (modulo their number).
#[derive(Clone, Debug)]
enum Change {
    Remove(usize),
    Null(usize),
    Text(usize, String),
    Number(usize, i64),
    EmptyObject(usize),
    EmptyArray(usize),
    AddMember(usize, String),
}

fn change() -> impl Strategy<Value = Change> {
    let at = any::<usize>();
    let text = prop::sample::select(vec![
        "".to_owned(),
        "x".to_owned(),
        "Pod".to_owned(),
        "v1".to_owned(),
        "100m".to_owned(),
        "2024-01-01T00:00:00Z".to_owned(),
        "a much longer string than the one it replaces, to grow a buffer".to_owned(),
    ]);
    prop_oneof![
        at.prop_map(Change::Remove),
        at.prop_map(Change::Null),
        (at, text.clone()).prop_map(|(i, t)| Change::Text(i, t)),
        (at, -3i64..100_000).prop_map(|(i, n)| Change::Number(i, n)),
        at.prop_map(Change::EmptyObject),
        at.prop_map(Change::EmptyArray),
        (at, text).prop_map(|(i, t)| Change::AddMember(i, t)),
    ]
}

/// The number of values in `doc`, itself included.
fn count(doc: &Value) -> usize {
    1 + match doc {
        Value::Object(m) => m.values().map(count).sum(),
        Value::Array(a) => a.iter().map(count).sum(),
        _ => 0,
    }
}

/// Applies `f` to the `n`-th value of `doc`, in document order.
fn at_nth(doc: &mut Value, n: &mut usize, f: &mut dyn FnMut(&mut Value)) -> bool {
    if *n == 0 {
        f(doc);
        return true;
    }
    *n -= 1;
    match doc {
        Value::Object(m) => m.values_mut().any(|v| at_nth(v, n, f)),
        Value::Array(a) => a.iter_mut().any(|v| at_nth(v, n, f)),
        _ => false,
    }
}

fn apply(doc: &mut Value, change: &Change) {
    use Change::*;
    let (Remove(at)
    | Null(at)
    | Text(at, _)
    | Number(at, _)
    | EmptyObject(at)
    | EmptyArray(at)
    | AddMember(at, _)) = change;
    let mut n = at % count(doc);
    at_nth(doc, &mut n, &mut |v| match change {
        // The first member of an object, the last element of an array, a scalar itself.
        Remove(_) => match v {
            Value::Object(m) => {
                if let Some(k) = m.keys().next().cloned() {
                    m.remove(&k);
                }
            }
            Value::Array(a) => {
                a.pop();
            }
            _ => *v = Value::Null,
        },
        Null(_) => *v = Value::Null,
        Text(_, t) => *v = Value::from(t.clone()),
        Number(_, n) => *v = Value::from(*n),
        EmptyObject(_) => *v = json!({}),
        EmptyArray(_) => *v = json!([]),
        AddMember(_, t) => {
            if let Value::Object(m) = v {
                m.insert(t.clone(), json!({"unknown": [1, "two"]}));
            }
        }
    });
}

fn mutated(changes: &[Change], base: usize) -> Value {
    let pods = examples::<Pod>();
    let mut doc = pods[base % pods.len()].clone();
    for c in changes {
        apply(&mut doc, c);
    }
    doc
}

proptest! {
    #[test]
    fn mutated_pods_decode_in_place_to_what_a_fresh_decode_builds(
        doc_changes in prop::collection::vec(change(), 0..6),
        target_changes in prop::collection::vec(change(), 0..6),
        doc_base in any::<usize>(),
        target_base in any::<usize>(),
        skip in any::<bool>(),
    ) {
        let doc = serde_json::to_vec(&mutated(&doc_changes, doc_base)).expect("JSON");
        let target_doc = serde_json::to_vec(&mutated(&target_changes, target_base)).expect("JSON");
        let target: Pod = fresh(&target_doc, false).unwrap_or_default();
        let want: Option<Pod> = fresh(&doc, skip);
        match in_place(target, &doc, skip) {
            Some(got) => prop_assert_eq!(Some(got), want),
            // Giving up is allowed, but not on an example as it is.
            None => prop_assert!(!doc_changes.is_empty()),
        }
        // The same as lean objects.
        if let Some(target) = fresh::<Lean<Pod>>(&target_doc, false) {
            let want: Option<Lean<Pod>> = fresh(&doc, skip);
            match in_place(target, &doc, skip) {
                Some(got) => prop_assert_eq!(Some(got), want),
                None => prop_assert!(!doc_changes.is_empty()),
            }
        }
    }
}

/// A custom resource whose `spec` and `status` are any JSON values.
fn thing(spec: &Value, status: &Value) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "apiVersion": "example.com/v1", "kind": "Thing",
        "metadata": {"name": "t", "namespace": "ns"},
        "spec": spec, "status": status,
    }))
    .expect("JSON")
}

proptest! {
    /// A lean object's body is written from the tape's nodes when decoded in place: the
    /// same text as its `Deserialize` writes through simd-json's serde driver, for any
    /// strings (escapes, control characters, long ones), integers and floats.
    #[test]
    fn lean_bodies_of_any_json_decode_in_place_to_what_a_fresh_decode_builds(
        before in (value(), value()),
        after in (value(), value()),
    ) {
        let target: Lean<DynamicObject> =
            fresh(&thing(&before.0, &before.1), false).expect("decodes");
        let doc = thing(&after.0, &after.1);
        let want: Lean<DynamicObject> = fresh(&doc, false).expect("decodes");
        prop_assert_eq!(in_place(target, &doc, false), Some(want));
    }
}
