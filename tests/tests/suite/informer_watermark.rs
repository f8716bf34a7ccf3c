//! An informer's watermark against TestApiServer with late watch events: it passes a write's
//! resourceVersion only once the lister returns the write, waits for a write end when the
//! cache has it (or time out with a typed error), and bookmarks carry it past changes of
//! other collections.

use std::time::Duration;

use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kinform::client::PostParams;
use kinform::consistency::{Seen, WaitError};
use kinform::testing::TestApiServer;
use kinform::{Api, HasMetadata};
use kinform_tests::informer::factory_builder;

fn named<K: Default + HasMetadata>(name: &str) -> K {
    let mut obj = K::default();
    obj.metadata_mut().name = Some(name.into());
    obj
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_watermark_passes_a_write_only_once_the_lister_returns_it() {
    let server = TestApiServer::start().await.unwrap();
    let factory = factory_builder(server.client().unwrap()).build();
    let informer = factory.informer::<ConfigMap>();
    let lister = informer.lister();
    factory.start();
    factory
        .wait_for_cache_sync(Duration::from_secs(10))
        .await
        .unwrap();
    server
        .faults()
        .set_watch_delay(Duration::from_millis(50), Duration::from_millis(400));
    let api = Api::<ConfigMap>::namespaced(server.client().unwrap(), "default");
    let mut written = Vec::new();
    for i in 0..30 {
        let cm = api
            .create(&PostParams::default(), &named(&format!("cm-{i}")))
            .await
            .unwrap();
        written.push((cm.name().to_owned(), cm.resource_version().to_owned()));
    }
    // Until the last write is seen, every write the watermark has passed is in the lister.
    let mut checks = 0;
    loop {
        let mut all = true;
        for (name, rv) in &written {
            match informer.watermark().has_seen(rv) {
                Seen::Yes => {
                    assert!(lister.get("default", name).is_some(), "{name} at {rv}");
                    checks += 1;
                }
                _ => all = false,
            }
        }
        if all {
            break;
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    assert!(checks >= written.len());
    // A wait for a write ends once the lister returns it; one past the timeout fails typed.
    server
        .faults()
        .set_watch_delay(Duration::from_secs(3), Duration::from_secs(3));
    let late = api
        .create(&PostParams::default(), &named("late"))
        .await
        .unwrap();
    let e = lister
        .wait_for_resource_version(late.resource_version(), Duration::from_millis(200))
        .await
        .unwrap_err();
    let WaitError::Timeout { seen, .. } = e else {
        panic!("{e:?}")
    };
    assert!(seen < late.resource_version().parse().ok());
    assert!(lister.get("default", "late").is_none());
    lister
        .wait_for_resource_version(late.resource_version(), Duration::from_secs(10))
        .await
        .unwrap();
    assert!(lister.get("default", "late").is_some());
    assert_eq!(informer.watermark().incomparable(), 0);
    factory.shutdown().await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bookmarks_carry_the_watermark_past_other_collections_changes() {
    let server = TestApiServer::builder()
        .bookmark_interval(Duration::from_millis(100))
        .start()
        .await
        .unwrap();
    let factory = factory_builder(server.client().unwrap()).build();
    let informer = factory.informer::<ConfigMap>();
    factory.start();
    factory
        .wait_for_cache_sync(Duration::from_secs(10))
        .await
        .unwrap();
    // A change the ConfigMap watch never carries: only a bookmark tells its informer that
    // nothing of its own collection is left up to that version.
    let secret = Api::<Secret>::namespaced(server.client().unwrap(), "default")
        .create(&PostParams::default(), &named("elsewhere"))
        .await
        .unwrap();
    informer
        .wait_for_resource_version(secret.resource_version(), Duration::from_secs(10))
        .await
        .unwrap();
    factory.shutdown().await;
    server.shutdown().await;
}
