//! A relist (after a 410) that finds objects at their cached resourceVersion reuses the
//! cached `Arc`s instead of decoding them again, and notifies as client-go does: unchanged
//! objects are resyncs (no update for a handler without resync). That a changed
//! resourceVersion is decoded is tested beside the decoder (`client::api::page`).
//! Both with the default cache and with the lean cache (`for_each_cache!`).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use kinform::client::{Patch, PatchParams};
use kinform::informer::EventHandlerFns;
use kinform::reflector::ListMode;

use kinform_tests::informer::*;

async fn relist_reuses_unchanged_objects<K: PodCache>() {
    relist_reuses::<K>(ListMode::Paged).await;
}

/// The same through a streaming list (the default `Auto` mode): the initial events of the
/// relist reuse the cached objects.
async fn streaming_relist_reuses_unchanged_objects<K: PodCache>() {
    relist_reuses::<K>(ListMode::Streaming).await;
}

kinform_tests::for_each_cache!(
    relist_reuses_unchanged_objects,
    streaming_relist_reuses_unchanged_objects
);

async fn relist_reuses<K: PodCache>(mode: ListMode) {
    let (server, api) = server_with_pods(30).await;
    let factory = factory_builder(client(&server, 3))
        .list_mode(mode)
        .tweak_reflector(|c| {
            c.backoff.initial = Duration::from_millis(20);
            c.backoff.max = Duration::from_millis(100);
            c.page_size = 7;
        })
        .build();
    let informer = factory.informer::<K>();
    let updates = Arc::new(AtomicUsize::new(0));
    let u = Arc::clone(&updates);
    informer.add_event_handler(
        EventHandlerFns::new().on_update(move |_: &Arc<K>, _: &Arc<K>| {
            u.fetch_add(1, Ordering::SeqCst);
        }),
    );
    factory.start();
    informer.wait_for_sync().await;
    // Every initial add delivered, so that the change below is not coalesced into one.
    until(|| informer.pending_notifications() == 0).await;
    let lister = factory.lister::<K>();
    // One change through the watch: an update.
    let patch = Patch::Merge(serde_json::json!({"metadata": {"labels": {"changed": "yes"}}}));
    api.patch("p3", &PatchParams::default(), &patch)
        .await
        .unwrap();
    until(|| {
        lister
            .get("default", "p3")
            .is_some_and(|p| p.labels().contains_key("changed"))
    })
    .await;
    let before: Vec<Arc<K>> = (0..30)
        .map(|i| lister.get("default", &format!("p{i}")).unwrap())
        .collect();
    assert!(
        before.iter().all(|p| p.metadata().managed_fields.is_none()),
        "managedFields dropped by default"
    );

    // A change the pod watch does not see, compaction past it, the watch dropped: the
    // re-watch gets 410 and the informer relists.
    server
        .create_object(serde_json::json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "unrelated", "namespace": "default"}
        }))
        .unwrap();
    server.faults().compact();
    server.faults().drop_watches();
    until(|| informer.metrics().lists >= 2).await;
    until(|| informer.pending_notifications() == 0).await;

    for (i, old) in before.iter().enumerate() {
        let now = lister.get("default", &format!("p{i}")).unwrap();
        assert!(Arc::ptr_eq(old, &now), "p{i}: unchanged objects are reused");
    }
    assert_eq!(
        updates.load(Ordering::SeqCst),
        1,
        "the watched change is an update; the relisted unchanged objects are resyncs nobody asked for"
    );
    factory.shutdown().await;
}
