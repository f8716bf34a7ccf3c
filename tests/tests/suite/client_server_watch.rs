//! WATCH through the client: resuming from a resourceVersion inside the history window, a
//! compacted resourceVersion as a 410 ERROR, bookmarks with allowWatchBookmarks, streaming
//! lists (sendInitialEvents=true + NotOlderThan), timeoutSeconds, finalizers as watchers see
//! them. Real sockets, so no paused clock: short real timeouts, ordering-only assertions.

use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use kinform::client::{DeleteParams, Either, Patch, PatchParams, PostParams, ResourceVersionMatch};
use kinform::testing::TestApiServer;
use kinform::{Api, HasMetadata, ListParams, WatchEvent, WatchParams};
use kinform_tests::env::{cm, drain, env, env_with, next, next_event, summary};
use serde_json::json;

fn from(rv: &str) -> WatchParams {
    WatchParams {
        resource_version: Some(rv.into()),
        ..WatchParams::default()
    }
}

#[tokio::test]
async fn resumes_from_a_resource_version_in_the_window() {
    let e = env().await;
    let api: Api<ConfigMap> = Api::namespaced(e.client.clone(), "default");
    let a = api
        .create(&PostParams::default(), &cm("a", &[]))
        .await
        .unwrap();
    api.create(&PostParams::default(), &cm("b", &[]))
        .await
        .unwrap();
    api.patch(
        "a",
        &PatchParams::default(),
        &Patch::Merge(json!({"data": {"k": "2"}})),
    )
    .await
    .unwrap();
    api.delete("b", &DeleteParams::default()).await.unwrap();

    let mut w = api.watch(&from(a.resource_version())).await.unwrap();
    let mut got = Vec::new();
    for _ in 0..3 {
        got.push(summary(&next_event(&mut w).await));
    }
    assert_eq!(got, ["ADDED b", "MODIFIED a", "DELETED b"]);

    // Live events follow the replayed ones, with increasing resourceVersions.
    let c = api
        .create(&PostParams::default(), &cm("c", &[]))
        .await
        .unwrap();
    match next_event(&mut w).await {
        WatchEvent::Added(o) => assert_eq!(o.resource_version(), c.resource_version()),
        other => panic!("expected ADDED c, got {}", summary(&other)),
    }
}

#[tokio::test]
async fn label_selected_watch_sees_only_matching_objects() {
    let e = env().await;
    let api: Api<ConfigMap> = Api::namespaced(e.client.clone(), "default");
    let start = e.server.resource_version().to_string();
    let mut w = api
        .watch(&WatchParams {
            label_selector: Some("app=web".into()),
            ..from(&start)
        })
        .await
        .unwrap();
    api.create(&PostParams::default(), &cm("other", &[("app", "db")]))
        .await
        .unwrap();
    api.create(&PostParams::default(), &cm("web", &[("app", "web")]))
        .await
        .unwrap();
    assert_eq!(summary(&next_event(&mut w).await), "ADDED web");
}

#[tokio::test]
async fn compacted_resource_version_is_gone() {
    let e = env().await;
    let api: Api<ConfigMap> = Api::namespaced(e.client.clone(), "default");
    let a = api
        .create(&PostParams::default(), &cm("a", &[]))
        .await
        .unwrap();
    api.create(&PostParams::default(), &cm("b", &[]))
        .await
        .unwrap();
    e.server.faults().compact();
    api.create(&PostParams::default(), &cm("c", &[]))
        .await
        .unwrap();

    // The real server answers 200 and then an ERROR event with a 410 Status; a client may
    // also see it as an error. Either way it is typed and says "gone".
    let gone = match api.watch(&from(a.resource_version())).await {
        Err(err) => err.is_gone(),
        Ok(mut w) => match next(&mut w).await {
            Some(Ok(WatchEvent::Error(status))) => {
                assert_eq!(status.reason.as_deref(), Some("Expired"), "{status:?}");
                status.code == Some(410)
            }
            Some(Err(err)) => err.is_gone(),
            other => panic!("expected a 410, got {other:?}"),
        },
    };
    assert!(gone);

    // From "0" (any state) the watch starts with the current objects instead.
    let mut w = api.watch(&from("0")).await.unwrap();
    let mut names = Vec::new();
    for _ in 0..3 {
        names.push(summary(&next_event(&mut w).await));
    }
    names.sort();
    assert_eq!(names, ["ADDED a", "ADDED b", "ADDED c"]);
}

#[tokio::test]
async fn bookmarks_when_allowed() {
    let builder = TestApiServer::builder().bookmark_interval(Duration::from_millis(50));
    let e = env_with(builder, |_| {}).await;
    let api: Api<ConfigMap> = Api::namespaced(e.client.clone(), "default");
    let start = e.server.resource_version().to_string();
    let mut w = api
        .watch(&WatchParams {
            allow_watch_bookmarks: true,
            ..from(&start)
        })
        .await
        .unwrap();
    let a = api
        .create(&PostParams::default(), &cm("a", &[]))
        .await
        .unwrap();
    let rv_a: u64 = a.resource_version().parse().unwrap();
    // Bookmarks may come before the ADDED; once it has come, a later bookmark is at least
    // at its version and none is an initial-events end.
    let mut added = false;
    loop {
        match next_event(&mut w).await {
            WatchEvent::Added(o) => {
                assert_eq!(o.name(), "a");
                added = true;
            }
            WatchEvent::Bookmark(b) => {
                assert!(!b.is_initial_events_end());
                let rv: u64 = b.resource_version.parse().unwrap();
                if added {
                    assert!(rv >= rv_a, "bookmark {rv} behind event {rv_a}");
                    break;
                }
            }
            other => panic!("unexpected {}", summary(&other)),
        }
    }

    // Without allowWatchBookmarks: no bookmark, only the events.
    let mut plain = api.watch(&from(a.resource_version())).await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await; // several bookmark intervals
    api.create(&PostParams::default(), &cm("b", &[]))
        .await
        .unwrap();
    assert_eq!(summary(&next_event(&mut plain).await), "ADDED b");
}

#[tokio::test]
async fn send_initial_events_ends_with_an_annotated_bookmark() {
    let e = env().await;
    let api: Api<ConfigMap> = Api::namespaced(e.client.clone(), "default");
    for n in ["a", "b", "c"] {
        api.create(&PostParams::default(), &cm(n, &[]))
            .await
            .unwrap();
    }
    let at = e.server.resource_version().to_string();
    let mut w = api
        .watch(&WatchParams {
            send_initial_events: true,
            resource_version_match: Some(ResourceVersionMatch::NotOlderThan),
            allow_watch_bookmarks: true,
            ..WatchParams::default()
        })
        .await
        .unwrap();
    let mut initial = Vec::new();
    let end = loop {
        match next_event(&mut w).await {
            WatchEvent::Added(o) => initial.push(o.name().to_owned()),
            WatchEvent::Bookmark(b) if b.is_initial_events_end() => break b,
            other => panic!("unexpected {} before the end bookmark", summary(&other)),
        }
    };
    initial.sort();
    assert_eq!(initial, ["a", "b", "c"]);
    assert_eq!(end.resource_version, at);

    api.create(&PostParams::default(), &cm("d", &[]))
        .await
        .unwrap();
    loop {
        match next_event(&mut w).await {
            WatchEvent::Added(o) => {
                assert_eq!(o.name(), "d");
                break;
            }
            WatchEvent::Bookmark(b) => assert!(!b.is_initial_events_end()),
            other => panic!("unexpected {}", summary(&other)),
        }
    }

    // The same from an explicit resourceVersion.
    let mut w = api
        .watch(&WatchParams {
            send_initial_events: true,
            resource_version_match: Some(ResourceVersionMatch::NotOlderThan),
            allow_watch_bookmarks: true,
            ..from(&at)
        })
        .await
        .unwrap();
    let mut n = 0;
    loop {
        match next_event(&mut w).await {
            WatchEvent::Added(_) => n += 1,
            WatchEvent::Bookmark(b) if b.is_initial_events_end() => break,
            other => panic!("unexpected {}", summary(&other)),
        }
    }
    assert_eq!(n, 4);
}

#[tokio::test]
async fn timeout_seconds_ends_the_stream() {
    let e = env().await;
    let api: Api<ConfigMap> = Api::namespaced(e.client.clone(), "default");
    let a = api
        .create(&PostParams::default(), &cm("a", &[]))
        .await
        .unwrap();
    let mut w = api
        .watch(&WatchParams {
            timeout_seconds: Some(1),
            ..WatchParams::default()
        })
        .await
        .unwrap();
    let items = drain(&mut w).await;
    let got: Vec<String> = items
        .into_iter()
        .map(|i| summary(&i.expect("no error before the timeout")))
        .collect();
    assert_eq!(got, ["ADDED a"]);
    // The stream stays ended.
    assert!(next(&mut w).await.is_none());
    drop(a);
}

#[tokio::test]
async fn finalizers_hold_the_object_until_removed() {
    let e = env().await;
    let api: Api<ConfigMap> = Api::namespaced(e.client.clone(), "default");
    let mut obj = cm("held", &[]);
    obj.metadata.finalizers = Some(vec!["example.com/hold".into()]);
    let created = api.create(&PostParams::default(), &obj).await.unwrap();
    let mut w = api.watch(&from(created.resource_version())).await.unwrap();

    // Delete: the object stays, with a deletionTimestamp.
    let pending = match api.delete("held", &DeleteParams::default()).await.unwrap() {
        Either::Left(o) => o,
        Either::Right(s) => panic!("deleted at once despite a finalizer: {s:?}"),
    };
    assert!(pending.metadata.deletion_timestamp.is_some());
    let still = api.get("held").await.unwrap();
    assert!(still.metadata.deletion_timestamp.is_some());
    assert_eq!(
        still.metadata.finalizers.as_deref(),
        Some(&["example.com/hold".to_string()][..])
    );
    // It shows in lists while pending.
    assert_eq!(
        api.list(&ListParams::default()).await.unwrap().items.len(),
        1
    );

    // Removing the finalizer deletes it.
    api.patch(
        "held",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"finalizers": null}})),
    )
    .await
    .unwrap();
    assert!(api.get_opt("held").await.unwrap().is_none());

    // Watchers saw MODIFIED (deletionTimestamp set) and then DELETED.
    let first = next_event(&mut w).await;
    match &first {
        WatchEvent::Modified(o) => assert!(o.metadata.deletion_timestamp.is_some()),
        other => panic!("expected MODIFIED, got {}", summary(other)),
    }
    let mut rest = Vec::new();
    loop {
        let ev = next_event(&mut w).await;
        let done = matches!(ev, WatchEvent::Deleted(_));
        rest.push(summary(&ev));
        if done {
            break;
        }
    }
    assert_eq!(rest.last().map(String::as_str), Some("DELETED held"));
    assert!(
        rest.iter()
            .all(|s| s == "MODIFIED held" || s == "DELETED held"),
        "{rest:?}"
    );
}
