//! The client under the server's injected faults: 429 with Retry-After (retried, or a typed
//! error carrying the wait when retries are off), a share of 500s, latency against the
//! client's read timeout, watches ended after K events, all watches dropped at once,
//! requests held until released while changes are made in process.

use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use kinform::client::PostParams;
use kinform::testing::TestApiServer;
use kinform::{Api, ListParams, WatchParams};
use kinform_tests::env::{cm, drain, env, env_with, next_event, summary};

#[tokio::test]
async fn too_many_requests_is_retried_after_retry_after() {
    let e = env().await;
    let api: Api<ConfigMap> = Api::namespaced(e.client.clone(), "default");
    api.create(&PostParams::default(), &cm("a", &[]))
        .await
        .unwrap();
    // Every second resource request is throttled with Retry-After: 1.
    e.server.faults().set_too_many_requests(0.5, 1);
    for _ in 0..3 {
        assert_eq!(
            api.list(&ListParams::default()).await.unwrap().items.len(),
            1
        );
    }
    // A POST is retried too: the server did not run a throttled request.
    api.create(&PostParams::default(), &cm("b", &[]))
        .await
        .unwrap();
    api.create(&PostParams::default(), &cm("c", &[]))
        .await
        .unwrap();
    e.server.faults().clear();
    assert_eq!(
        api.list(&ListParams::default()).await.unwrap().items.len(),
        3
    );
}

#[tokio::test]
async fn too_many_requests_without_retries_is_typed() {
    let e = env_with(TestApiServer::builder(), |c| c.max_retries = 0).await;
    let api: Api<ConfigMap> = Api::namespaced(e.client.clone(), "default");
    e.server.faults().set_too_many_requests(1.0, 7);
    let err = api.get("any").await.unwrap_err();
    assert!(err.is_too_many_requests(), "{err}");
    assert_eq!(err.code(), Some(429));
    assert_eq!(err.retry_after(), Some(Duration::from_secs(7)));
    assert!(!err.is_not_found());
    // A watch request is throttled the same way.
    let Err(err) = api.watch(&WatchParams::default()).await else {
        panic!("a throttled watch must fail");
    };
    assert!(err.is_too_many_requests(), "{err}");
    assert_eq!(err.retry_after(), Some(Duration::from_secs(7)));
    e.server.faults().clear();
    assert!(api.get("any").await.unwrap_err().is_not_found());
}

#[tokio::test]
async fn a_share_of_internal_errors() {
    let e = env().await;
    let api: Api<ConfigMap> = Api::namespaced(e.client.clone(), "default");
    api.create(&PostParams::default(), &cm("a", &[]))
        .await
        .unwrap();
    e.server.faults().set_internal_errors(0.5);
    let mut failures = 0;
    for _ in 0..6 {
        match api.get("a").await {
            Ok(o) => assert_eq!(o.metadata.name.as_deref(), Some("a")),
            Err(err) => {
                assert_eq!(err.code(), Some(500), "{err}");
                assert_eq!(
                    err.status().unwrap().reason.as_deref(),
                    Some("InternalError")
                );
                failures += 1;
            }
        }
    }
    // 500 is not retried (only 429, and 503/504 for idempotent verbs).
    assert_eq!(failures, 3);
}

#[tokio::test]
async fn latency_against_the_read_timeout() {
    let e = env_with(TestApiServer::builder(), |c| {
        c.read_timeout = Some(Duration::from_secs(1));
        c.max_retries = 0;
    })
    .await;
    let api: Api<ConfigMap> = Api::namespaced(e.client.clone(), "default");
    api.create(&PostParams::default(), &cm("a", &[]))
        .await
        .unwrap();
    e.server.faults().set_latency(Duration::from_millis(10));
    assert!(api.get("a").await.is_ok(), "latency under the read timeout");
    e.server.faults().set_latency(Duration::from_secs(5));
    let err = api.get("a").await.unwrap_err();
    assert!(err.is_transport(), "{err}");
    e.server.faults().set_latency(Duration::ZERO);
    assert!(api.get("a").await.is_ok());
}

#[tokio::test]
async fn watches_end_after_k_events() {
    let e = env().await;
    let api: Api<ConfigMap> = Api::namespaced(e.client.clone(), "default");
    for i in 0..5 {
        api.create(&PostParams::default(), &cm(&format!("c{i}"), &[]))
            .await
            .unwrap();
    }
    e.server.faults().set_watch_event_limit(Some(3));
    let mut w = api.watch(&WatchParams::default()).await.unwrap();
    let items = drain(&mut w).await;
    assert_eq!(items.len(), 3, "{items:?}");
    assert!(
        items
            .iter()
            .all(|i| matches!(i, Ok(kinform::WatchEvent::Added(_))))
    );
    e.server.faults().set_watch_event_limit(None);
    let mut w = api.watch(&WatchParams::default()).await.unwrap();
    for _ in 0..5 {
        assert!(summary(&next_event(&mut w).await).starts_with("ADDED"));
    }
}

#[tokio::test]
async fn drop_watches_ends_every_open_watch() {
    let e = env().await;
    let api: Api<ConfigMap> = Api::namespaced(e.client.clone(), "default");
    let all: Api<ConfigMap> = Api::all(e.client.clone());
    let start = e.server.resource_version().to_string();
    let wp = WatchParams {
        resource_version: Some(start),
        ..WatchParams::default()
    };
    let mut w1 = api.watch(&wp).await.unwrap();
    let mut w2 = all.watch(&wp).await.unwrap();
    api.create(&PostParams::default(), &cm("a", &[]))
        .await
        .unwrap();
    assert_eq!(summary(&next_event(&mut w1).await), "ADDED a");
    assert_eq!(summary(&next_event(&mut w2).await), "ADDED a");
    e.server.faults().drop_watches();
    for w in [&mut w1, &mut w2] {
        let rest = drain(w).await;
        assert!(
            rest.iter()
                .all(|i| !matches!(i, Ok(kinform::WatchEvent::Added(_)))),
            "{rest:?}"
        );
    }
    // New watches work after the "restart".
    let mut w3 = api.watch(&WatchParams::default()).await.unwrap();
    assert_eq!(summary(&next_event(&mut w3).await), "ADDED a");
}

#[tokio::test]
async fn held_requests_wait_for_the_release_and_see_changes_made_meanwhile() {
    let e = env().await;
    let api: Api<ConfigMap> = Api::namespaced(e.client.clone(), "default");
    e.server.faults().hold_requests();
    let list = tokio::spawn({
        let api = api.clone();
        async move { api.list(&ListParams::default()).await }
    });
    // Changes made in process are not held.
    e.server
        .create_object(serde_json::json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "a", "namespace": "default"}
        }))
        .unwrap();
    e.server
        .merge_patch_object(
            "v1",
            "ConfigMap",
            Some("default"),
            "a",
            &serde_json::json!({"data": {"k": "v"}}),
        )
        .unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!list.is_finished(), "the LIST is held");
    e.server.faults().release_requests();
    let items = list.await.unwrap().unwrap().items;
    assert_eq!(items.len(), 1);
    let data = items[0].data.as_ref().expect("patched data");
    assert_eq!(data["k"], "v");
}
