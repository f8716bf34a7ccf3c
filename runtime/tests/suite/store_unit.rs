//! Example-based tests of the indexed store, one per behaviour of issue 2's `store` section.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::ConfigMap;
use kinform_core::selector::LabelSelector;
use kinform_runtime::reflector::ReflectorSink;
use kinform_runtime::store::{IndexFn, LABEL_INDEX, NAMESPACE_INDEX, ObjectKey, Store, StoreError};

fn cm(ns: Option<&str>, name: &str, labels: &[(&str, &str)], rv: &str) -> Arc<ConfigMap> {
    let mut obj = ConfigMap::default();
    obj.metadata.namespace = ns.map(str::to_owned);
    obj.metadata.name = Some(name.to_owned());
    obj.metadata.resource_version = Some(rv.to_owned());
    if !labels.is_empty() {
        obj.metadata.labels = Some(
            labels
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect::<BTreeMap<_, _>>(),
        );
    }
    Arc::new(obj)
}

fn names(mut objs: Vec<Arc<ConfigMap>>) -> Vec<String> {
    objs.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    objs.iter()
        .map(|o| o.metadata.name.clone().unwrap())
        .collect()
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

#[test]
fn keys_get_update_delete() {
    let store = Store::new();
    store.add(cm(Some("ns"), "a", &[], "1"));
    store.add(cm(None, "cluster", &[], "1"));
    assert_eq!(store.len(), 2);
    assert_eq!(sorted(store.list_keys()), ["cluster", "ns/a"]);
    assert_eq!(
        store
            .get("ns/a")
            .unwrap()
            .metadata
            .resource_version
            .as_deref(),
        Some("1")
    );
    assert!(store.get("a").is_none());
    assert!(store.get_by_name(Some("ns"), "a").is_some());
    assert!(store.get_by_name(None, "cluster").is_some());
    assert!(store.get_key(ObjectKey::parse("cluster")).is_some());

    store.update(cm(Some("ns"), "a", &[], "2"));
    assert_eq!(store.len(), 2);
    assert_eq!(
        store
            .get("ns/a")
            .unwrap()
            .metadata
            .resource_version
            .as_deref(),
        Some("2")
    );

    // add of an existing key replaces it, like client-go.
    store.add(cm(Some("ns"), "a", &[], "3"));
    assert_eq!(store.len(), 2);
    let old = store.upsert(cm(Some("ns"), "a", &[], "3")).unwrap();
    assert_eq!(old.metadata.resource_version.as_deref(), Some("3"));
    assert!(store.upsert(cm(Some("ns"), "fresh", &[], "1")).is_none());
    store.delete("ns/fresh");

    let gone = store.delete("ns/a").unwrap();
    assert_eq!(gone.metadata.resource_version.as_deref(), Some("3"));
    assert!(store.delete("ns/a").is_none());
    assert_eq!(store.len(), 1);
    assert!(store.contains_key("cluster"));
}

#[test]
fn values_are_shared_not_copied() {
    let store = Store::new();
    let obj = cm(Some("ns"), "a", &[], "1");
    store.add(Arc::clone(&obj));
    assert!(Arc::ptr_eq(&store.get("ns/a").unwrap(), &obj));
    let clone = store.clone();
    assert!(Arc::ptr_eq(&clone.list()[0], &obj));
}

#[test]
fn namespace_index_is_built_in_and_exact() {
    let store = Store::new();
    store.add(cm(Some("a"), "1", &[], "1"));
    store.add(cm(Some("a"), "2", &[], "1"));
    store.add(cm(Some("b"), "3", &[], "1"));
    store.add(cm(None, "4", &[], "1"));
    assert_eq!(
        names(store.by_index(NAMESPACE_INDEX, "a").unwrap()),
        ["1", "2"]
    );
    assert_eq!(
        sorted(store.index_keys(NAMESPACE_INDEX, "b").unwrap()),
        ["b/3"]
    );
    // Cluster-scoped objects sit under "" as with MetaNamespaceIndexFunc.
    assert_eq!(names(store.by_index(NAMESPACE_INDEX, "").unwrap()), ["4"]);
    assert_eq!(
        sorted(store.index_values(NAMESPACE_INDEX).unwrap()),
        ["", "a", "b"]
    );

    store.delete("b/3");
    store.delete("4");
    // Empty buckets are removed.
    assert_eq!(sorted(store.index_values(NAMESPACE_INDEX).unwrap()), ["a"]);
    assert!(store.by_index(NAMESPACE_INDEX, "b").unwrap().is_empty());
}

#[test]
fn label_index_follows_updates() {
    let store = Store::new();
    store.add(cm(
        Some("n"),
        "x",
        &[("app", "web"), ("tier", "front")],
        "1",
    ));
    store.add(cm(Some("n"), "y", &[("app", "web")], "1"));
    assert_eq!(
        names(store.by_index(LABEL_INDEX, "app=web").unwrap()),
        ["x", "y"]
    );
    assert_eq!(
        sorted(store.index_values(LABEL_INDEX).unwrap()),
        ["app=web", "tier=front"]
    );

    // Change one label value, drop another, add a third.
    store.update(cm(Some("n"), "x", &[("app", "db"), ("zone", "z1")], "2"));
    assert_eq!(
        names(store.by_index(LABEL_INDEX, "app=web").unwrap()),
        ["y"]
    );
    assert_eq!(names(store.by_index(LABEL_INDEX, "app=db").unwrap()), ["x"]);
    assert_eq!(
        sorted(store.index_values(LABEL_INDEX).unwrap()),
        ["app=db", "app=web", "zone=z1"]
    );
    store.delete("n/x");
    assert_eq!(
        sorted(store.index_values(LABEL_INDEX).unwrap()),
        ["app=web"]
    );

    assert!(matches!(
        store.by_index(LABEL_INDEX, "no-equals"),
        Err(StoreError::InvalidIndexValue { .. })
    ));
}

#[test]
fn unknown_index_is_an_error() {
    let store: Store<ConfigMap> = Store::new();
    let err = store.by_index("nope", "x").unwrap_err();
    assert_eq!(
        err,
        StoreError::IndexNotFound {
            index: "nope".into()
        }
    );
    assert!(store.index_keys("nope", "x").is_err());
    assert!(store.index_values("nope").is_err());
}

fn by_data_keys() -> IndexFn<ConfigMap> {
    Arc::new(|cm: &ConfigMap| cm.data.iter().flatten().map(|(k, _)| k.clone()).collect())
}

#[test]
fn add_indexers_indexes_existing_objects_and_rejects_conflicts() {
    let store = Store::new();
    let mut obj = ConfigMap::default();
    obj.metadata.namespace = Some("n".into());
    obj.metadata.name = Some("multi".into());
    obj.data = Some(BTreeMap::from([
        ("k1".to_string(), String::new()),
        ("k2".to_string(), String::new()),
    ]));
    store.add(Arc::new(obj.clone()));
    store.add(cm(Some("n"), "empty", &[], "1"));

    store
        .add_indexers([("data".to_string(), by_data_keys())])
        .unwrap();
    assert_eq!(names(store.by_index("data", "k1").unwrap()), ["multi"]);
    assert_eq!(names(store.by_index("data", "k2").unwrap()), ["multi"]);
    assert_eq!(sorted(store.index_values("data").unwrap()), ["k1", "k2"]);

    // Later writes keep it exact.
    obj.data = Some(BTreeMap::from([("k2".to_string(), String::new())]));
    store.update(Arc::new(obj));
    assert_eq!(sorted(store.index_values("data").unwrap()), ["k2"]);
    store.delete("n/multi");
    assert!(store.index_values("data").unwrap().is_empty());

    for taken in ["data", NAMESPACE_INDEX, LABEL_INDEX] {
        assert_eq!(
            store.add_indexers([(taken.to_string(), by_data_keys())]),
            Err(StoreError::IndexConflict {
                index: taken.into()
            })
        );
    }
    // A repeated name fails the whole call: nothing is added.
    assert!(
        store
            .add_indexers([
                ("one".to_string(), by_data_keys()),
                ("one".to_string(), by_data_keys())
            ])
            .is_err()
    );
    assert!(store.index_values("one").is_err());
    assert_eq!(store.index_names(), ["namespace", "labels", "data"]);
}

#[test]
fn list_by_labels_matches_selector_semantics() {
    let store = Store::new();
    store.add(cm(
        Some("a"),
        "web1",
        &[("app", "web"), ("tier", "front")],
        "1",
    ));
    store.add(cm(Some("a"), "web2", &[("app", "web")], "1"));
    store.add(cm(
        Some("b"),
        "web3",
        &[("app", "web"), ("tier", "back")],
        "1",
    ));
    store.add(cm(Some("b"), "db", &[("app", "db")], "1"));
    store.add(cm(Some("b"), "bare", &[], "1"));
    store.add(cm(None, "node", &[("app", "web")], "1"));
    let q = |ns: Option<&str>, sel: &str| {
        names(store.list_by_labels(ns, &LabelSelector::parse(sel).unwrap()))
    };
    assert_eq!(q(None, "app=web"), ["node", "web1", "web2", "web3"]);
    assert_eq!(q(Some("a"), "app=web"), ["web1", "web2"]);
    assert_eq!(q(Some(""), "app=db"), ["db"]);
    assert_eq!(q(None, "app in (db,web),tier"), ["web1", "web3"]);
    assert_eq!(q(None, "tier"), ["web1", "web3"]);
    assert_eq!(q(Some("b"), "!tier"), ["bare", "db"]);
    assert_eq!(q(Some("b"), "app!=web"), ["bare", "db"]);
    assert_eq!(
        q(None, "app=web,tier notin (front)"),
        ["node", "web2", "web3"]
    );
    assert_eq!(q(Some("b"), ""), ["bare", "db", "web3"]);
    assert_eq!(q(None, "app=missing"), Vec::<String>::new());
    assert_eq!(q(Some("nope"), ""), Vec::<String>::new());
    assert_eq!(q(None, "nolabel"), Vec::<String>::new());
}

#[test]
fn replace_swaps_content_and_records_the_version() {
    let store = Store::new();
    assert_eq!(store.last_sync_resource_version(), "");
    store.add(cm(Some("n"), "stay", &[("v", "1")], "1"));
    store.add(cm(Some("n"), "go", &[("gone", "yes")], "1"));
    store.add(cm(Some("old"), "go2", &[], "1"));
    store.replace(
        vec![
            cm(Some("n"), "stay", &[("v", "2")], "2"),
            cm(Some("n"), "new", &[], "2"),
        ],
        "42".into(),
    );
    assert_eq!(store.last_sync_resource_version(), "42");
    assert_eq!(sorted(store.list_keys()), ["n/new", "n/stay"]);
    assert_eq!(sorted(store.index_values(NAMESPACE_INDEX).unwrap()), ["n"]);
    assert_eq!(sorted(store.index_values(LABEL_INDEX).unwrap()), ["v=2"]);
    store.replace(Vec::new(), "43".into());
    assert!(store.is_empty());
    assert!(store.index_values(LABEL_INDEX).unwrap().is_empty());
}

#[test]
fn replace_is_atomic_for_readers() {
    // Two generations of 2,000 objects; a reader must always see exactly one generation.
    let generation = |g: &str| {
        (0..2000)
            .map(|i| cm(Some("n"), &format!("o{i}"), &[("gen", g)], g))
            .collect::<Vec<_>>()
    };
    let store = Store::new();
    store.replace(generation("a"), "a".into());
    std::thread::scope(|s| {
        let reader = store.clone();
        let handle = s.spawn(move || {
            for _ in 0..200 {
                let list = reader.list();
                assert_eq!(list.len(), 2000);
                let first = list[0].metadata.resource_version.clone();
                assert!(list.iter().all(|o| o.metadata.resource_version == first));
            }
        });
        for g in ["b", "a", "b", "a", "b"] {
            store.replace(generation(g), g.into());
        }
        handle.join().unwrap();
    });
}

#[test]
fn a_reflector_can_feed_a_plain_store() {
    let store = Store::new();
    let sink: &dyn ReflectorSink<ConfigMap> = &store;
    sink.replace(vec![cm(Some("n"), "a", &[], "1")], "5".into())
        .unwrap();
    sink.add(cm(Some("n"), "b", &[], "6")).unwrap();
    sink.update(cm(Some("n"), "a", &[], "7")).unwrap();
    sink.delete(cm(Some("n"), "b", &[], "8")).unwrap();
    sink.resync().unwrap();
    assert_eq!(store.list_keys(), ["n/a"]);
    assert_eq!(
        store
            .get("n/a")
            .unwrap()
            .metadata
            .resource_version
            .as_deref(),
        Some("7")
    );
    assert_eq!(store.last_sync_resource_version(), "5");
}
