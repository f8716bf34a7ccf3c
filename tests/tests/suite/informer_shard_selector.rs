//! Informers of one shard (`shardSelector`, KEP-5866) against TestApiServer with the
//! `ShardedListAndWatch` gate on (the server sends only the shard, and says so with
//! `metadata.shardInfo`) and off (kube-apiserver before 1.36, or with the alpha gate off:
//! the parameter is ignored and every object arrives, so the reflector filters). Either
//! way the cache holds exactly the shard's objects, through the initial list (streaming
//! and paged) and the watch that follows.

use std::collections::BTreeSet;
use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use kinform::client::{DeleteParams, ListParams};
use kinform::reflector::ListMode;
use kinform::shard::{ShardField, ShardRange, ShardSelector, fnv1a64};
use kinform::testing::TestApiServer;
use kinform::{Api, HasMetadata};

use kinform_tests::controller::configmap;
use kinform_tests::eventually;
use kinform_tests::informer::factory_builder;

/// The names of the ConfigMaps of `default` whose UID hashes into `range`, computed from the
/// hash and the bounds (not with the selector's own `matches`).
async fn expected(api: &Api<ConfigMap>, range: &ShardRange) -> BTreeSet<String> {
    api.list(&ListParams::default())
        .await
        .unwrap()
        .items
        .iter()
        .filter(|c| range.contains(fnv1a64(c.metadata().uid.as_deref().unwrap().bytes())))
        .map(|c| c.name().to_owned())
        .collect()
}

async fn one_shard_is_cached(gate: bool, mode: ListMode) {
    let builder = TestApiServer::builder();
    let builder = if gate {
        builder.sharded_list_and_watch()
    } else {
        builder
    };
    let server = builder.start().await.unwrap();
    for i in 0..60 {
        configmap(&server, &format!("cm-{i}"));
    }
    let api: Api<ConfigMap> = Api::namespaced(server.client().unwrap(), "default");
    // The second of three shards.
    let range = ShardRange::nth(ShardField::Uid, 1, 3).unwrap();
    let selector = ShardSelector::from(range);

    let factory = factory_builder(server.client().unwrap())
        .namespace("default")
        .list_mode(mode)
        .shard_selector(selector.clone())
        .build();
    let informer = factory.informer::<ConfigMap>();
    factory.start();
    factory
        .wait_for_cache_sync(Duration::from_secs(10))
        .await
        .unwrap();
    let cached = |i: &kinform::informer::SharedIndexInformer<ConfigMap>| -> BTreeSet<String> {
        i.store()
            .list()
            .iter()
            .map(|c| c.name().to_owned())
            .collect()
    };
    let want = expected(&api, &range).await;
    assert!(
        !want.is_empty() && want.len() < 60,
        "a third of 60: {}",
        want.len()
    );
    assert_eq!(cached(&informer), want, "gate {gate}, {mode:?}: the list");
    let sent = server.requests();
    assert!(
        sent.iter()
            .any(|r| r.contains("configmaps?") && r.contains("shardSelector=")),
        "the selector is sent: {sent:?}"
    );

    // The watch: new objects in and out of the shard, and deletions.
    for i in 60..90 {
        configmap(&server, &format!("cm-{i}"));
    }
    for name in want.iter().take(3) {
        api.delete(name, &DeleteParams::default()).await.unwrap();
    }
    let want = expected(&api, &range).await;
    let followed = eventually(Duration::from_secs(10), async || cached(&informer) == want).await;
    assert!(
        followed,
        "gate {gate}, {mode:?}: the watch; cached {:?}, want {want:?}",
        cached(&informer)
    );
    factory.shutdown().await;
    server.shutdown().await;
}

#[tokio::test]
async fn a_sharded_informer_caches_its_shard_when_the_server_shards() {
    one_shard_is_cached(true, ListMode::Auto).await;
    one_shard_is_cached(true, ListMode::Paged).await;
}

#[tokio::test]
async fn a_sharded_informer_filters_its_shard_when_the_server_ignores_the_selector() {
    one_shard_is_cached(false, ListMode::Auto).await;
    one_shard_is_cached(false, ListMode::Paged).await;
}
