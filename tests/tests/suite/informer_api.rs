//! The informer's API against TestApiServer: listers, registrations, resync, transform,
//! dynamic and metadata-only informers, wait_for_cache_sync, stop and restart. The tests of
//! the contract run with the default cache and with the lean cache (`for_each_cache!`).

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use kinform::client::{DeleteParams, PostParams};
use kinform::informer::{EventHandlerFns, InformerScope};
use kinform::testing::TestApiServer;
use kinform::{Api, LabelSelector, Resource};
use parking_lot::Mutex;

use kinform_tests::eventually;
use kinform_tests::informer::*;

async fn setup(pods: u32) -> (TestApiServer, Api<Pod>) {
    let (server, api) = server_with_pods(pods).await;
    server.create_namespace("other").unwrap();
    (server, api)
}

async fn lister_reads_the_synced_cache<K: PodCache>() {
    let (server, api) = setup(6).await;
    let other: Api<Pod> = Api::namespaced(client(&server, 3), "other");
    let mut p = pod("x", 1);
    p.metadata.namespace = Some("other".into());
    other.create(&PostParams::default(), &p).await.unwrap();

    let factory = fast_factory(client(&server, 3));
    let informer = factory.informer::<K>();
    assert!(
        Arc::ptr_eq(&informer, &factory.informer::<K>()),
        "one per type"
    );
    factory.start();
    factory.start(); // idempotent
    factory
        .wait_for_cache_sync(Duration::from_secs(10))
        .await
        .unwrap();
    let lister = factory.lister::<K>();
    assert_eq!(lister.list_all().len(), 7);
    assert!(lister.get("default", "p3").is_some());
    assert!(lister.get("default", "nope").is_none());
    let gen2 = LabelSelector::parse("app=test,gen=2").unwrap();
    let hits = lister.list(&gen2);
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].name(), "p2");
    let ns = lister.namespaced("other");
    assert_eq!(ns.list_all().len(), 1);
    assert!(ns.get("x").is_some() && ns.get("p3").is_none());
    assert_eq!(ns.list(&LabelSelector::parse("app=test").unwrap()).len(), 1);
    assert_eq!(lister.by_index("namespace", "default").unwrap().len(), 6);
    // The default transform dropped managedFields.
    assert!(
        lister
            .get("default", "p1")
            .unwrap()
            .metadata()
            .managed_fields
            .is_none()
    );

    api.delete("p3", &DeleteParams::default()).await.unwrap();
    assert!(
        eventually(Duration::from_secs(5), async || lister
            .get("default", "p3")
            .is_none())
        .await
    );
    factory.shutdown().await;
    assert!(!informer.is_running());
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scopes_get_their_own_informers() {
    let (server, _api) = setup(3).await;
    let factory = fast_factory(client(&server, 3));
    let all = factory.informer::<Pod>();
    let scoped =
        factory.informer_in::<Pod>(InformerScope::all().namespace("default").labels("gen=1"));
    assert!(!Arc::ptr_eq(&all, &scoped));
    factory.start();
    factory
        .wait_for_cache_sync(Duration::from_secs(10))
        .await
        .unwrap();
    assert_eq!(all.store().len(), 3);
    assert_eq!(scoped.store().len(), 1);
    factory.shutdown().await;
    server.shutdown().await;
}

async fn late_handlers_get_the_cache_and_removed_ones_nothing<K: PodCache>() {
    let (server, api) = setup(4).await;
    let factory = fast_factory(client(&server, 3));
    let informer = factory.informer::<K>();
    let early = Arc::new(Recorder::default());
    let early_reg = informer.add_event_handler(Rec(early.clone()));
    factory.start();
    early_reg.wait_for_sync().await;
    assert!(
        early
            .seen
            .lock()
            .values()
            .all(|v| matches!(v[..], [Seen::Add(_, true)]))
    );
    assert_eq!(early.seen.lock().len(), 4);

    let late = Arc::new(Recorder::default());
    let late_reg = informer.add_event_handler(Rec(late.clone()));
    late_reg.wait_for_sync().await;
    assert_eq!(late.seen.lock().len(), 4);
    assert!(
        late.seen
            .lock()
            .values()
            .all(|v| matches!(v[..], [Seen::Add(_, true)]))
    );

    assert!(early_reg.remove());
    assert!(!early_reg.is_active());
    api.create(&PostParams::default(), &pod("new", 9))
        .await
        .unwrap();
    assert!(
        eventually(Duration::from_secs(5), async || late
            .seen
            .lock()
            .contains_key("default/new"))
        .await
    );
    assert!(matches!(
        late.seen.lock()["default/new"][..],
        [Seen::Add(_, false)]
    ));
    assert!(
        !early.seen.lock().contains_key("default/new"),
        "removed handler was told"
    );
    factory.shutdown().await;
    server.shutdown().await;
}

async fn unchanged_relists_reach_only_handlers_due_for_resync<K: PodCache>() {
    let (server, _api) = setup(3).await;
    let factory = fast_factory(client(&server, 3));
    let informer = factory.informer::<K>();
    let syncs = Arc::new(Mutex::new(0usize));
    let s2 = syncs.clone();
    let resyncing = informer.add_event_handler_with_resync(
        EventHandlerFns::new().on_update(move |old: &Arc<K>, new: &Arc<K>| {
            if old.resource_version() == new.resource_version() {
                *s2.lock() += 1;
            }
        }),
        Duration::from_secs(1),
    );
    let quiet = Arc::new(Recorder::default());
    informer.add_event_handler(Rec(quiet.clone()));
    assert_eq!(resyncing.resync_period(), Some(Duration::from_secs(1)));
    factory.start();
    factory
        .wait_for_cache_sync(Duration::from_secs(10))
        .await
        .unwrap();
    // Periodic resync every second re-delivers the 3 pods to the resyncing handler only.
    assert!(eventually(Duration::from_secs(10), async || *syncs.lock() >= 3).await);
    // An unchanged relist (a failed re-watch relists) does not reach the handler without
    // resync.
    server.faults().set_internal_errors(1.0);
    server.faults().drop_watches();
    assert!(
        eventually(Duration::from_secs(5), async || informer
            .metrics()
            .watch_errors
            >= 1)
        .await
    );
    server.faults().clear();
    assert!(
        eventually(Duration::from_secs(5), async || informer.metrics().lists
            >= 2)
        .await
    );
    assert!(
        quiet.seen.lock().values().all(|v| v.len() == 1),
        "{:?}",
        quiet.seen.lock()
    );
    factory.shutdown().await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dynamic_and_metadata_informers() {
    // Preloaded realistic pods carry managedFields.
    let server = TestApiServer::builder().pods(5).start().await.unwrap();
    let factory = factory_builder(client(&server, 3))
        .keep_managed_fields()
        .build();
    let ar = Pod::api_resource();
    let dynamic = factory.dynamic_informer(&ar);
    let metadata = factory.metadata_informer(&ar);
    let typed = factory.informer::<Pod>();
    let default_factory = fast_factory(client(&server, 3));
    let dropped = default_factory.informer::<Pod>();
    factory.start();
    default_factory.start();
    factory
        .wait_for_cache_sync(Duration::from_secs(10))
        .await
        .unwrap();
    default_factory
        .wait_for_cache_sync(Duration::from_secs(10))
        .await
        .unwrap();
    assert_eq!(dynamic.store().len(), 5);
    assert_eq!(metadata.store().len(), 5);
    let some = typed.store().list()[0].clone();
    let (ns, name) = (
        some.metadata.namespace.clone().unwrap(),
        some.metadata.name.clone().unwrap(),
    );
    let d = factory.dynamic_lister(&ar).get(&ns, &name).unwrap();
    assert!(d.data["spec"]["containers"].is_array());
    let m = factory.metadata_lister(&ar).get(&ns, &name).unwrap();
    assert_eq!(m.metadata.labels, some.metadata.labels);
    // managedFields: kept on request, dropped by default.
    assert!(some.metadata.managed_fields.is_some());
    assert!(
        dropped
            .lister()
            .get(&ns, &name)
            .unwrap()
            .metadata
            .managed_fields
            .is_none()
    );
    factory.shutdown().await;
    default_factory.shutdown().await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wait_for_cache_sync_names_the_unsynced_types() {
    let (server, _api) = setup(1).await;
    let factory = fast_factory(client(&server, 0));
    factory.informer::<Pod>();
    // Every request fails: nothing can sync.
    server.faults().set_internal_errors(1.0);
    factory.informer::<ConfigMap>();
    factory.start();
    let err = factory
        .wait_for_cache_sync(Duration::from_millis(300))
        .await
        .unwrap_err();
    assert_eq!(err.unsynced, ["v1/configmaps", "v1/pods"]);
    server.faults().clear();
    factory
        .wait_for_cache_sync(Duration::from_secs(10))
        .await
        .unwrap();
    factory.shutdown().await;
    server.shutdown().await;
}

async fn informers_stop_and_start_again<K: PodCache>() {
    let (server, api) = setup(3).await;
    let factory = fast_factory(client(&server, 3));
    let informer = factory.informer::<K>();
    let rec = Arc::new(Recorder::default());
    let reg = informer.add_event_handler(Rec(rec.clone()));
    factory.start();
    informer.wait_for_sync().await;
    // Every initial add delivered: one still waiting in the buffer when p0 is deleted would
    // never be mentioned (contract sentence 3), and the tombstone below would not come.
    reg.wait_for_sync().await;
    informer.shutdown().await;
    assert!(!informer.is_running());
    assert!(
        informer.set_transform(None).is_err(),
        "transform only before start"
    );
    // Changes while stopped are caught up by the relist after restart, deletion included.
    api.delete("p0", &DeleteParams::default()).await.unwrap();
    api.create(&PostParams::default(), &pod("p9", 9))
        .await
        .unwrap();
    informer.start();
    informer.wait_for_sync().await;
    let reference: Api<Pod> = Api::namespaced(client(&server, 3), "default");
    let want = server_state(&reference).await;
    assert!(
        eventually(Duration::from_secs(5), async || cache_state(&informer)
            == want)
        .await
    );
    assert!(
        eventually(Duration::from_secs(5), async || check_history(
            "h",
            &rec.seen.lock(),
            &want
        )
        .is_ok())
        .await,
        "{:?}",
        check_history("h", &rec.seen.lock(), &want)
    );
    assert!(
        matches!(
            rec.seen.lock()["default/p0"].last(),
            Some(Seen::Delete(_, true))
        ),
        "a tombstone"
    );
    factory.shutdown().await;
    server.shutdown().await;
}

kinform_tests::for_each_cache!(
    lister_reads_the_synced_cache,
    late_handlers_get_the_cache_and_removed_ones_nothing,
    unchanged_relists_reach_only_handlers_due_for_resync,
    informers_stop_and_start_again,
);
