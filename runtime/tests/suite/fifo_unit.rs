//! Example-based tests of the DeltaFIFO, one per sentence of issue 2's `fifo` section.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::ConfigMap;
use kinform_runtime::fifo::{
    Deleted, Delta, DeltaFifo, DeltaType, Deltas, FifoClosed, KnownObjects,
};
use kinform_runtime::reflector::{ReflectorSink, SinkClosed};
use kinform_runtime::store::Store;

fn cm(name: &str, rv: &str) -> Arc<ConfigMap> {
    let mut obj = ConfigMap::default();
    obj.metadata.namespace = Some("ns".to_owned());
    obj.metadata.name = Some(name.to_owned());
    obj.metadata.resource_version = Some(rv.to_owned());
    obj.metadata.labels = Some(BTreeMap::from([("rv".to_string(), rv.to_string())]));
    Arc::new(obj)
}

/// A compact rendering of one delta: type, then the carried object's resource version, with
/// `?` marking a tombstone.
fn show(d: &Delta<ConfigMap>) -> String {
    let rv = d
        .object()
        .and_then(|o| o.metadata.resource_version.clone())
        .unwrap_or_else(|| "-".into());
    let tomb = match d {
        Delta::Deleted(del) if del.is_final_state_unknown() => "?",
        _ => "",
    };
    format!("{}:{rv}{tomb}", d.delta_type())
}

fn show_all(deltas: &Deltas<ConfigMap>) -> Vec<String> {
    deltas.iter().map(show).collect()
}

/// Pops one key and applies it to `store` as an informer does.
async fn pop_into(
    fifo: &DeltaFifo<ConfigMap>,
    store: &Store<ConfigMap>,
) -> (String, Vec<String>, bool) {
    fifo.pop(|deltas| {
        match deltas.newest() {
            Delta::Deleted(d) => {
                store.delete_key(d.key());
            }
            other => store.update(Arc::clone(other.object().unwrap())),
        }
        Ok::<_, ()>((
            deltas.key().to_string(),
            show_all(deltas),
            deltas.is_in_initial_list(),
        ))
    })
    .await
    .unwrap()
    .unwrap()
}

async fn pop_show(fifo: &DeltaFifo<ConfigMap>) -> (String, Vec<String>) {
    fifo.pop(|d| Ok::<_, ()>((d.key().to_string(), show_all(d))))
        .await
        .unwrap()
        .unwrap()
}

fn with_known(objs: &[Arc<ConfigMap>]) -> (DeltaFifo<ConfigMap>, Store<ConfigMap>) {
    let store = Store::new();
    for o in objs {
        store.add(Arc::clone(o));
    }
    let known: Arc<dyn KnownObjects<ConfigMap>> = Arc::new(store.clone());
    (DeltaFifo::new(Some(known)), store)
}

#[tokio::test]
async fn queue_order_is_first_arrival_and_pop_hands_over_all_deltas() {
    let fifo = DeltaFifo::new(None);
    fifo.add(cm("a", "1")).unwrap();
    fifo.add(cm("b", "2")).unwrap();
    fifo.update(cm("a", "3")).unwrap();
    fifo.add(cm("c", "4")).unwrap();
    fifo.update(cm("b", "5")).unwrap();
    assert_eq!(fifo.len(), 3);
    assert_eq!(fifo.list_keys(), ["ns/a", "ns/b", "ns/c"]);
    assert_eq!(
        show_all(&fifo.get("ns/a").unwrap()),
        ["Added:1", "Updated:3"]
    );
    assert_eq!(
        pop_show(&fifo).await,
        ("ns/a".into(), vec!["Added:1".into(), "Updated:3".into()])
    );
    assert_eq!(
        pop_show(&fifo).await,
        ("ns/b".into(), vec!["Added:2".into(), "Updated:5".into()])
    );
    // A key popped and re-added goes to the back.
    fifo.update(cm("a", "6")).unwrap();
    assert_eq!(fifo.list_keys(), ["ns/c", "ns/a"]);
    assert_eq!(pop_show(&fifo).await.0, "ns/c");
    let (key, deltas) = pop_show(&fifo).await;
    assert_eq!(
        (key.as_str(), deltas),
        ("ns/a", vec!["Updated:6".to_string()])
    );
    assert!(fifo.is_empty());
}

#[test]
fn delta_accessors() {
    let mut deltas = Deltas::new(Delta::Added(cm("a", "1")));
    deltas.push(Delta::Sync(cm("a", "2")));
    assert_eq!(deltas.oldest().delta_type(), DeltaType::Added);
    assert_eq!(deltas.newest().delta_type(), DeltaType::Sync);
    assert_eq!(deltas.key(), "ns/a");
    assert_eq!(deltas.as_slice().len(), 2);
    assert_eq!(DeltaType::Replaced.to_string(), "Replaced");
    let tomb: Deleted<ConfigMap> = Deleted::FinalStateUnknown {
        key: "ns/x".into(),
        last_known: None,
    };
    assert_eq!(tomb.key(), "ns/x");
    assert!(tomb.object().is_none());
}

#[test]
fn only_deleted_after_deleted_collapses_keeping_the_more_informative() {
    let tomb = |rv: Option<&str>| {
        Delta::Deleted(Deleted::FinalStateUnknown {
            key: "ns/a".into(),
            last_known: rv.map(|rv| cm("a", rv)),
        })
    };
    let real = |rv: &str| Delta::Deleted(Deleted::Object(cm("a", rv)));

    // Non-deletions never collapse.
    let mut d = Deltas::new(Delta::Updated(cm("a", "1")));
    d.push(Delta::Updated(cm("a", "2")));
    d.push(real("3"));
    assert_eq!(show_all(&d), ["Updated:1", "Updated:2", "Deleted:3"]);
    // A tombstone after a real deletion is dropped: the real one is more informative.
    d.push(tomb(Some("2")));
    assert_eq!(show_all(&d), ["Updated:1", "Updated:2", "Deleted:3"]);
    // A newer real deletion replaces an older one.
    d.push(real("4"));
    assert_eq!(show_all(&d), ["Updated:1", "Updated:2", "Deleted:4"]);

    // A real deletion replaces a tombstone.
    let mut d = Deltas::new(tomb(Some("1")));
    d.push(real("5"));
    assert_eq!(show_all(&d), ["Deleted:5"]);
    // Two tombstones keep the first.
    let mut d = Deltas::new(tomb(Some("1")));
    d.push(tomb(None));
    assert_eq!(show_all(&d), ["Deleted:1?"]);
}

#[tokio::test]
async fn dedup_applies_inside_the_fifo() {
    let (fifo, _store) = with_known(&[cm("a", "1")]);
    // Replace without `a` queues a tombstone; the watch's late DELETED replaces it.
    fifo.replace(Vec::new(), "10".into()).unwrap();
    assert_eq!(show_all(&fifo.get("ns/a").unwrap()), ["Deleted:1?"]);
    fifo.delete(cm("a", "2")).unwrap();
    assert_eq!(show_all(&fifo.get("ns/a").unwrap()), ["Deleted:2"]);
    fifo.delete(cm("a", "3")).unwrap();
    assert_eq!(show_all(&fifo.get("ns/a").unwrap()), ["Deleted:3"]);
    assert_eq!(fifo.len(), 1);
}

#[tokio::test]
async fn delete_of_an_unknown_key_is_ignored() {
    // Without known objects: only queued keys can be deleted.
    let fifo = DeltaFifo::new(None);
    fifo.delete(cm("ghost", "1")).unwrap();
    assert!(fifo.is_empty());
    fifo.add(cm("a", "1")).unwrap();
    fifo.delete(cm("a", "2")).unwrap();
    assert_eq!(
        show_all(&fifo.get("ns/a").unwrap()),
        ["Added:1", "Deleted:2"]
    );

    // With known objects: known keys can be deleted, unknown ones are ignored.
    let (fifo, _store) = with_known(&[cm("k", "1")]);
    fifo.delete(cm("ghost", "1")).unwrap();
    assert!(fifo.is_empty());
    fifo.delete(cm("k", "2")).unwrap();
    assert_eq!(show_all(&fifo.get("ns/k").unwrap()), ["Deleted:2"]);
}

#[tokio::test]
async fn replace_queues_items_and_tombstones_with_the_last_known_state() {
    let (fifo, store) = with_known(&[cm("known-kept", "1"), cm("known-gone", "2")]);
    // Pending deltas of a key that will be absent from the list.
    fifo.add(cm("queued-gone", "3")).unwrap();
    fifo.update(cm("queued-gone", "4")).unwrap();
    // A pending key that is in the list.
    fifo.add(cm("queued-kept", "5")).unwrap();
    fifo.replace(
        vec![
            cm("known-kept", "6"),
            cm("queued-kept", "7"),
            cm("new", "8"),
        ],
        "100".into(),
    )
    .unwrap();
    assert_eq!(
        fifo.list_keys(),
        [
            "ns/queued-gone",
            "ns/queued-kept",
            "ns/known-kept",
            "ns/new",
            "ns/known-gone"
        ]
    );
    let expect = [
        ("ns/queued-gone", vec!["Added:3", "Updated:4", "Deleted:4?"]),
        ("ns/queued-kept", vec!["Added:5", "Replaced:7"]),
        ("ns/known-kept", vec!["Replaced:6"]),
        ("ns/new", vec!["Replaced:8"]),
        ("ns/known-gone", vec!["Deleted:2?"]),
    ];
    for (key, deltas) in expect {
        let (k, d, _) = pop_into(&fifo, &store).await;
        assert_eq!(
            (k.as_str(), d),
            (key, deltas.iter().map(|s| s.to_string()).collect())
        );
    }
    assert_eq!(
        {
            let mut keys = store.list_keys();
            keys.sort();
            keys
        },
        ["ns/known-kept", "ns/new", "ns/queued-kept"]
    );
    // The tombstone of a queued tombstone keeps the object it carried.
    fifo.add(cm("x", "9")).unwrap();
    fifo.replace(Vec::new(), "101".into()).unwrap();
    fifo.replace(Vec::new(), "102".into()).unwrap();
    assert_eq!(
        show_all(&fifo.get("ns/x").unwrap()),
        ["Added:9", "Deleted:9?"]
    );
}

#[tokio::test]
async fn first_replace_sets_the_initial_population() {
    let (fifo, store) = with_known(&[cm("old1", "1"), cm("old2", "1")]);
    assert!(!fifo.has_synced());
    // Three items with a duplicate key (two distinct) plus two synthesized deletions.
    fifo.replace(vec![cm("a", "2"), cm("b", "2"), cm("a", "3")], "5".into())
        .unwrap();
    assert_eq!(fifo.len(), 4);
    // A second Replace does not reset the count.
    fifo.replace(vec![cm("a", "4"), cm("b", "4")], "6".into())
        .unwrap();
    assert_eq!(fifo.len(), 4);
    for i in 0..4 {
        assert!(!fifo.has_synced(), "synced after {i} pops");
        let (_, _, initial) = pop_into(&fifo, &store).await;
        assert!(initial);
    }
    assert!(fifo.has_synced());
    fifo.add(cm("c", "7")).unwrap();
    let (_, _, initial) = pop_into(&fifo, &store).await;
    assert!(!initial);
    assert!(fifo.has_synced());
}

#[tokio::test]
async fn has_synced_when_an_event_comes_before_any_replace() {
    let fifo = DeltaFifo::new(None);
    assert!(!fifo.has_synced());
    fifo.add(cm("a", "1")).unwrap();
    assert!(fifo.has_synced());
    // Replace after population does not set an initial population.
    fifo.replace(vec![cm("b", "2")], "1".into()).unwrap();
    assert!(fifo.has_synced());

    let fifo: DeltaFifo<ConfigMap> = DeltaFifo::new(None);
    fifo.replace(Vec::new(), "1".into()).unwrap();
    assert!(fifo.has_synced(), "an empty initial list is synced at once");

    let fifo = DeltaFifo::new(None);
    fifo.delete(cm("ghost", "1")).unwrap();
    assert!(
        fifo.has_synced(),
        "even an ignored Delete populates, as in client-go"
    );
}

#[tokio::test]
async fn resync_only_syncs_keys_without_pending_deltas() {
    let (fifo, _store) = with_known(&[cm("a", "1"), cm("b", "1"), cm("c", "1")]);
    fifo.update(cm("a", "2")).unwrap();
    fifo.resync().unwrap();
    assert_eq!(fifo.len(), 3);
    assert_eq!(show_all(&fifo.get("ns/a").unwrap()), ["Updated:2"]);
    assert_eq!(show_all(&fifo.get("ns/b").unwrap()), ["Sync:1"]);
    assert_eq!(show_all(&fifo.get("ns/c").unwrap()), ["Sync:1"]);
    // Resync again: everything is pending, nothing changes.
    fifo.resync().unwrap();
    assert_eq!(show_all(&fifo.get("ns/b").unwrap()), ["Sync:1"]);

    let (fresh, _store) = with_known(&[cm("a", "1")]);
    fresh.resync().unwrap();
    assert_eq!(fresh.len(), 1);
    assert!(!fresh.has_synced(), "resync does not populate");

    let no_known: DeltaFifo<ConfigMap> = DeltaFifo::new(None);
    no_known.resync().unwrap();
    assert!(no_known.is_empty());
}

#[tokio::test]
async fn process_error_requeues_at_the_back() {
    let fifo = DeltaFifo::new(None);
    fifo.add(cm("a", "1")).unwrap();
    fifo.add(cm("b", "2")).unwrap();
    let res = fifo
        .pop(|d| Err::<(), _>(d.key().to_string()))
        .await
        .unwrap();
    assert_eq!(res, Err("ns/a".to_string()));
    assert_eq!(fifo.list_keys(), ["ns/b", "ns/a"]);
    assert_eq!(show_all(&fifo.get("ns/a").unwrap()), ["Added:1"]);
}

#[tokio::test]
async fn pop_batch_takes_distinct_keys_in_order() {
    let fifo = DeltaFifo::new(None);
    for (name, rv) in [("a", "1"), ("b", "2"), ("a", "3"), ("c", "4"), ("d", "5")] {
        fifo.update(cm(name, rv)).unwrap();
    }
    let mut seen = Vec::new();
    let batch = fifo
        .pop_batch(3, |d| {
            seen.push((d.key().to_string(), show_all(d)));
            if d.key() == "ns/b" {
                Err("b failed")
            } else {
                Ok(())
            }
        })
        .await
        .unwrap();
    assert_eq!(batch.popped, 3);
    assert_eq!(batch.errors, ["b failed"]);
    assert_eq!(
        seen,
        [
            (
                "ns/a".to_string(),
                vec!["Updated:1".to_string(), "Updated:3".to_string()]
            ),
            ("ns/b".to_string(), vec!["Updated:2".to_string()]),
            ("ns/c".to_string(), vec!["Updated:4".to_string()]),
        ]
    );
    assert_eq!(fifo.list_keys(), ["ns/d", "ns/b"]);
    // A failed key is not retried within the batch.
    let batch = fifo.pop_batch(10, |_| Err::<(), _>(())).await.unwrap();
    assert_eq!(batch.popped, 2);
    assert_eq!(fifo.list_keys(), ["ns/d", "ns/b"]);
}

#[tokio::test]
async fn pop_waits_for_a_producer() {
    let fifo = DeltaFifo::new(None);
    let consumer = {
        let fifo = fifo.clone();
        tokio::spawn(async move { pop_show(&fifo).await })
    };
    tokio::task::yield_now().await;
    assert!(!consumer.is_finished());
    fifo.add(cm("a", "1")).unwrap();
    assert_eq!(consumer.await.unwrap().0, "ns/a");
}

#[tokio::test]
async fn close_unblocks_waiting_consumers() {
    let fifo: DeltaFifo<ConfigMap> = DeltaFifo::new(None);
    let consumers: Vec<_> = (0..3)
        .map(|_| {
            let fifo = fifo.clone();
            tokio::spawn(async move { fifo.pop(|_| Ok::<_, ()>(())).await })
        })
        .collect();
    tokio::task::yield_now().await;
    assert!(!fifo.is_closed());
    fifo.close();
    assert!(fifo.is_closed());
    for c in consumers {
        assert_eq!(c.await.unwrap(), Err(FifoClosed));
    }
}

#[tokio::test]
async fn close_drains_then_fails_and_rejects_producers() {
    let fifo = DeltaFifo::new(None);
    fifo.add(cm("a", "1")).unwrap();
    fifo.close();
    assert_eq!(fifo.add(cm("b", "1")), Err(SinkClosed));
    assert_eq!(fifo.replace(Vec::new(), "1".into()), Err(SinkClosed));
    assert_eq!(pop_show(&fifo).await.0, "ns/a");
    assert_eq!(fifo.pop(|_| Ok::<_, ()>(())).await.unwrap_err(), FifoClosed);
    assert_eq!(
        fifo.pop_batch(4, |_| Ok::<_, ()>(())).await.unwrap_err(),
        FifoClosed
    );
}

#[test]
fn pop_futures_are_send() {
    fn assert_send<T: Send>(_: &T) {}
    let fifo: DeltaFifo<ConfigMap> = DeltaFifo::new(None);
    let pop = fifo.pop(|_| Ok::<_, ()>(()));
    assert_send(&pop);
    let batch = fifo.pop_batch(2, |_| Ok::<_, ()>(()));
    assert_send(&batch);
}
