//! The lean cache (issue #20) against TestApiServer: an informer of `Lean<Pod>` holds, for
//! every object, exactly the `Pod` the default cache holds (paged and streaming lists,
//! `managedFields` dropped or kept); index functions, label selectors, listers and handlers
//! work on lean objects from their metadata, with views of the body; the typed API's verbs
//! take and give lean objects; the factory's dynamic lean informer (`Lean<DynamicObject>`)
//! decodes to what its dynamic informer holds. The informer contract's own tests run with
//! the lean cache too (`informer_api`, `informer_faults`, `informer_relist_reuse`:
//! `lean_cache::*`).

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use kinform::client::{PatchParams, PostParams};
use kinform::informer::EventHandlerFns;
use kinform::reflector::ListMode;
use kinform::store::IndexFn;
use kinform::testing::TestApiServer;
use kinform::{Api, HasMetadata, LabelSelector, Lean, ListParams, Resource};
use parking_lot::Mutex;
use serde::Deserialize;

use kinform_tests::eventually;
use kinform_tests::informer::{client, factory_builder};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_lean_cache_decodes_to_what_the_default_cache_holds() {
    // Realistic pods: owners, managedFields, statuses, timestamps.
    let server = TestApiServer::builder().pods(120).start().await.unwrap();
    for (mode, keep_managed_fields) in [
        (ListMode::Paged, false),
        (ListMode::Auto, false),
        (ListMode::Auto, true),
    ] {
        let mut builder = factory_builder(client(&server, 3))
            .list_mode(mode)
            .tweak_reflector(|c| c.page_size = 50);
        if keep_managed_fields {
            builder = builder.keep_managed_fields();
        }
        let factory = builder.build();
        let pods = factory.lister::<Pod>();
        let lean = factory.lister::<Lean<Pod>>();
        factory.start();
        factory
            .wait_for_cache_sync(Duration::from_secs(30))
            .await
            .unwrap();
        assert_eq!(lean.list_all().len(), 120);
        for pod in pods.list_all() {
            let cached = lean.get_by_key(&pod.key()).unwrap();
            assert_eq!(cached.decode().unwrap(), *pod, "{mode:?}");
            assert_eq!(
                cached.metadata().managed_fields.is_some(),
                keep_managed_fields
            );
        }
        factory.shutdown().await;
    }
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dynamic_lean_informers_decode_to_the_dynamic_objects() {
    let server = TestApiServer::builder().pods(30).start().await.unwrap();
    let factory = factory_builder(client(&server, 3)).build();
    let ar = Pod::api_resource();
    let dynamic = factory.dynamic_informer(&ar);
    let lean = factory.dynamic_lean_informer(&ar);
    factory.start();
    factory
        .wait_for_cache_sync(Duration::from_secs(30))
        .await
        .unwrap();
    assert_eq!(lean.store().len(), 30);
    for obj in dynamic.store().list() {
        let cached = lean.store().get(&obj.key()).unwrap();
        assert!(
            cached.metadata().managed_fields.is_none(),
            "dropped by default"
        );
        assert_eq!(cached.decode().unwrap(), *obj);
    }
    factory.shutdown().await;
    server.shutdown().await;
}

#[derive(Deserialize)]
struct NodeOf<'a> {
    #[serde(borrow)]
    spec: NodeSpec<'a>,
}

#[derive(Deserialize)]
struct NodeSpec<'a> {
    #[serde(rename = "nodeName", borrow)]
    node_name: Option<&'a str>,
}

fn node_of(pod: &Lean<Pod>) -> Option<String> {
    pod.view::<NodeOf<'_>>()
        .ok()?
        .spec
        .node_name
        .map(str::to_owned)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn indexes_selectors_and_handlers_read_lean_objects() {
    let server = TestApiServer::builder().pods(60).start().await.unwrap();
    let factory = factory_builder(client(&server, 3)).build();
    let informer = factory.informer::<Lean<Pod>>();
    // An index on metadata (no body read) and one on a view of the body.
    let by_owner: IndexFn<Lean<Pod>> = Arc::new(|p: &Lean<Pod>| {
        p.owner_references()
            .iter()
            .map(|o| o.name.clone())
            .collect()
    });
    let by_node: IndexFn<Lean<Pod>> = Arc::new(|p: &Lean<Pod>| node_of(p).into_iter().collect());
    informer
        .add_indexers([("owner".to_owned(), by_owner), ("node".to_owned(), by_node)])
        .unwrap();
    let nodes_seen = Arc::new(Mutex::new(BTreeSet::new()));
    let seen = nodes_seen.clone();
    informer.add_event_handler(EventHandlerFns::new().on_add(
        move |p: &Arc<Lean<Pod>>, _initial| {
            seen.lock().extend(node_of(p));
        },
    ));
    factory.start();
    factory
        .wait_for_cache_sync(Duration::from_secs(30))
        .await
        .unwrap();

    // The same answers as the decoded pods give.
    let all: Vec<Pod> = informer
        .store()
        .list()
        .iter()
        .map(|l| l.decode().unwrap())
        .collect();
    let node = all[0].spec.as_ref().unwrap().node_name.clone().unwrap();
    let on_node = all
        .iter()
        .filter(|p| p.spec.as_ref().unwrap().node_name.as_deref() == Some(&node))
        .count();
    assert_eq!(
        informer.store().by_index("node", &node).unwrap().len(),
        on_node
    );
    let owner = all[0].metadata.owner_references.as_ref().unwrap()[0]
        .name
        .clone();
    let owned = all
        .iter()
        .filter(|p| p.metadata.owner_references.as_ref().unwrap()[0].name == owner)
        .count();
    assert_eq!(
        informer.store().by_index("owner", &owner).unwrap().len(),
        owned
    );
    let app = all[0].metadata.labels.as_ref().unwrap()["app"].clone();
    let selector = LabelSelector::parse(&format!("app={app},tier in (frontend,backend)")).unwrap();
    let selected = all
        .iter()
        .filter(|p| selector.matches(p.metadata.labels.as_ref()))
        .count();
    assert!(selected > 0);
    assert_eq!(informer.lister().list(&selector).len(), selected);
    let nodes: BTreeSet<String> = all
        .iter()
        .filter_map(|p| p.spec.as_ref()?.node_name.clone())
        .collect();
    assert!(
        eventually(Duration::from_secs(10), async || *nodes_seen.lock()
            == nodes)
        .await,
        "the handler read every node name from its lean objects"
    );
    factory.shutdown().await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typed_verbs_take_and_give_lean_objects() {
    let server = TestApiServer::start().await.unwrap();
    let api: Api<Lean<ConfigMap>> = Api::namespaced(client(&server, 3), "default");
    let cm: ConfigMap = serde_json::from_value(serde_json::json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "settings", "labels": {"app": "web"}},
        "data": {"mode": "fast", "quote": "say \"hi\" ☺"}
    }))
    .unwrap();
    let created = api
        .create(&PostParams::default(), &Lean::from_object(&cm).unwrap())
        .await
        .unwrap();
    assert_eq!(created.decode().unwrap().data, cm.data);
    assert!(!created.uid().is_empty());
    let got = api.get("settings").await.unwrap();
    assert_eq!(got.decode().unwrap(), created.decode().unwrap());
    let list = api.list(&ListParams::default()).await.unwrap();
    assert_eq!(list.items.len(), 1);
    let patched = api
        .patch(
            "settings",
            &PatchParams::default(),
            &kinform::client::Patch::Merge(serde_json::json!({"data": {"mode": "slow"}})),
        )
        .await
        .unwrap();
    assert_eq!(
        patched.decode().unwrap().data.unwrap()["mode"],
        "slow".to_owned()
    );
    server.shutdown().await;
}
