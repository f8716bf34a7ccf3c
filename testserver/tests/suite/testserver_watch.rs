//! WATCH semantics of TestApiServer over raw HTTP: initial state, resume from a
//! resourceVersion, 410 after the window, bookmarks, sendInitialEvents, selectors,
//! timeoutSeconds.

use std::time::Duration;

use kinform_tests::http::{Raw, configmap, rv};
use kinform_testserver::TestApiServer;
use serde_json::json;

const CMS: &str = "/api/v1/namespaces/default/configmaps";

#[tokio::test]
async fn watch_without_rv_starts_with_the_current_state() {
    let server = TestApiServer::start().await.unwrap();
    let raw = Raw::new(&server.url());
    raw.post(CMS, &configmap("default", "a", json!({}))).await;
    let mut w = raw.watch(&format!("{CMS}?watch=true")).await;
    let e = w.next().await.unwrap();
    assert_eq!(e["type"], "ADDED");
    assert_eq!(e["object"]["metadata"]["name"], "a");
    raw.post(CMS, &configmap("default", "b", json!({}))).await;
    let e = w.next().await.unwrap();
    assert_eq!(
        (e["type"].as_str(), e["object"]["metadata"]["name"].as_str()),
        (Some("ADDED"), Some("b"))
    );
    raw.delete(&format!("{CMS}/a")).await;
    let e = w.next().await.unwrap();
    assert_eq!(e["type"], "DELETED");
    assert_eq!(e["object"]["metadata"]["name"], "a");
    server.shutdown().await;
}

#[tokio::test]
async fn watch_resumes_from_a_resource_version() {
    let server = TestApiServer::start().await.unwrap();
    let raw = Raw::new(&server.url());
    let a = raw
        .post(CMS, &configmap("default", "a", json!({})))
        .await
        .body;
    let from = rv(&a);
    raw.post(CMS, &configmap("default", "b", json!({}))).await;
    raw.patch(
        &format!("{CMS}/a"),
        "application/merge-patch+json",
        &json!({"data": {"k": "2"}}),
    )
    .await;
    let mut w = raw
        .watch(&format!("{CMS}?watch=1&resourceVersion={from}"))
        .await;
    let e1 = w.next().await.unwrap();
    let e2 = w.next().await.unwrap();
    assert_eq!(
        (
            e1["type"].as_str(),
            e1["object"]["metadata"]["name"].as_str()
        ),
        (Some("ADDED"), Some("b"))
    );
    assert_eq!(
        (e2["type"].as_str(), e2["object"]["data"]["k"].as_str()),
        (Some("MODIFIED"), Some("2"))
    );
    assert!(rv(&e2["object"]) > rv(&e1["object"]));
    server.shutdown().await;
}

#[tokio::test]
async fn too_old_resource_version_gives_an_error_event_410() {
    let server = TestApiServer::builder()
        .history_window(2)
        .start()
        .await
        .unwrap();
    let raw = Raw::new(&server.url());
    let a = raw
        .post(CMS, &configmap("default", "a", json!({})))
        .await
        .body;
    for n in ["b", "c", "d"] {
        raw.post(CMS, &configmap("default", n, json!({}))).await;
    }
    let mut w = raw
        .watch(&format!("{CMS}?watch=true&resourceVersion={}", rv(&a)))
        .await;
    let e = w.next().await.unwrap();
    assert_eq!(e["type"], "ERROR");
    assert_eq!(e["object"]["kind"], "Status");
    assert_eq!(e["object"]["code"], 410);
    assert_eq!(e["object"]["reason"], "Expired");
    assert!(
        e["object"]["message"]
            .as_str()
            .unwrap()
            .starts_with("too old resource version")
    );
    assert!(w.next().await.is_none(), "the stream ends after the error");
    server.shutdown().await;
}

#[tokio::test]
async fn send_initial_events_ends_with_an_annotated_bookmark() {
    let server = TestApiServer::start().await.unwrap();
    let raw = Raw::new(&server.url());
    for n in ["a", "b"] {
        raw.post(CMS, &configmap("default", n, json!({}))).await;
    }
    let list_rv = server.resource_version();
    let bad = raw
        .get(&format!("{CMS}?watch=true&sendInitialEvents=true"))
        .await;
    assert_eq!(bad.status, 422);
    let mut w = raw
        .watch(&format!(
            "{CMS}?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true"
        ))
        .await;
    let mut added = Vec::new();
    let end = loop {
        let e = w.next().await.unwrap();
        match e["type"].as_str().unwrap() {
            "ADDED" => added.push(e["object"]["metadata"]["name"].as_str().unwrap().to_owned()),
            "BOOKMARK" => {
                if e["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"] == "true" {
                    break e;
                }
            }
            other => panic!("unexpected {other}"),
        }
    };
    assert_eq!(added, ["a", "b"]);
    assert_eq!(end["object"]["kind"], "ConfigMap");
    assert_eq!(rv(&end["object"]), list_rv);
    raw.post(CMS, &configmap("default", "c", json!({}))).await;
    let e = w.next_change().await.unwrap();
    assert_eq!(e["object"]["metadata"]["name"], "c");
    server.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn bookmarks_never_run_ahead_of_events() {
    let server = TestApiServer::builder()
        .bookmark_interval(Duration::from_secs(5))
        .start()
        .await
        .unwrap();
    let raw = Raw::new(&server.url());
    let start = server.resource_version();
    let mut w = raw
        .watch(&format!(
            "{CMS}?watch=true&resourceVersion={start}&allowWatchBookmarks=true"
        ))
        .await;
    // Nothing happens: the paused clock runs to the next bookmark.
    let b = w.next().await.unwrap();
    assert_eq!(b["type"], "BOOKMARK");
    assert_eq!(rv(&b["object"]), start);
    assert_eq!(b["object"]["kind"], "ConfigMap");
    // A change elsewhere moves bookmarks forward without an event for this watch.
    raw.post(
        "/api/v1/namespaces/default/secrets",
        &json!({"metadata": {"name": "s"}}),
    )
    .await;
    raw.post(CMS, &configmap("default", "a", json!({}))).await;
    let mut last_bookmark = start;
    let added = loop {
        let e = w.next().await.unwrap();
        if e["type"] == "BOOKMARK" {
            assert!(rv(&e["object"]) >= last_bookmark);
            last_bookmark = rv(&e["object"]);
        } else {
            break e;
        }
    };
    assert_eq!(added["type"], "ADDED");
    assert!(
        last_bookmark < rv(&added["object"]),
        "a bookmark ran ahead of an event"
    );
    let next = w.next().await.unwrap();
    assert_eq!(next["type"], "BOOKMARK");
    assert_eq!(rv(&next["object"]), rv(&added["object"]));
    server.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn timeout_seconds_ends_the_stream() {
    let server = TestApiServer::start().await.unwrap();
    let raw = Raw::new(&server.url());
    let before = tokio::time::Instant::now();
    let mut w = raw
        .watch(&format!(
            "{CMS}?watch=true&timeoutSeconds=30&resourceVersion=1"
        ))
        .await;
    while w.next().await.is_some() {}
    assert!(before.elapsed() >= Duration::from_secs(30));
    server.shutdown().await;
}

#[tokio::test]
async fn selector_watches_see_objects_enter_and_leave() {
    let server = TestApiServer::start().await.unwrap();
    let raw = Raw::new(&server.url());
    let from = server.resource_version();
    let mut w = raw
        .watch(&format!(
            "{CMS}?watch=true&resourceVersion={from}&labelSelector=app%3Dweb"
        ))
        .await;
    raw.post(CMS, &configmap("default", "a", json!({"app": "db"})))
        .await;
    let label = |v: &str| json!({"metadata": {"labels": {"app": v}}});
    let path = format!("{CMS}/a");
    raw.patch(&path, "application/merge-patch+json", &label("web"))
        .await;
    raw.patch(
        &path,
        "application/merge-patch+json",
        &json!({"data": {"x": "1"}}),
    )
    .await;
    raw.patch(&path, "application/merge-patch+json", &label("db"))
        .await;
    let types: Vec<String> = [w.next().await, w.next().await, w.next().await]
        .into_iter()
        .map(|e| e.unwrap()["type"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(types, ["ADDED", "MODIFIED", "DELETED"]);
    // Field selectors on watches (kubectl delete --wait uses metadata.name).
    let mut w = raw
        .watch(&format!(
            "{CMS}?watch=true&fieldSelector=metadata.name%3Db&resourceVersion={}",
            server.resource_version()
        ))
        .await;
    raw.post(CMS, &configmap("default", "c", json!({}))).await;
    raw.post(CMS, &configmap("default", "b", json!({}))).await;
    assert_eq!(w.next().await.unwrap()["object"]["metadata"]["name"], "b");
    server.shutdown().await;
}

#[tokio::test]
async fn namespaced_watch_and_table_events() {
    let server = TestApiServer::start().await.unwrap();
    server.create_namespace("other").unwrap();
    let raw = Raw::new(&server.url());
    let from = server.resource_version();
    let mut w = raw
        .watch_with(
            &format!("{CMS}?watch=true&resourceVersion={from}"),
            Some("application/json;as=Table;v=v1;g=meta.k8s.io,application/json"),
        )
        .await;
    raw.post(
        "/api/v1/namespaces/other/configmaps",
        &configmap("other", "x", json!({})),
    )
    .await;
    raw.post(CMS, &configmap("default", "y", json!({}))).await;
    let e = w.next().await.unwrap();
    assert_eq!(e["type"], "ADDED");
    assert_eq!(e["object"]["kind"], "Table");
    assert_eq!(e["object"]["rows"][0]["cells"][0], "y");
    server.shutdown().await;
}

/// A watch from a resourceVersion the server has not reached waits for it (kube-apiserver's
/// watch cache waits up to 3 s) and then starts there; one the server does not reach in that
/// time is answered 504 "Too large resource version" (`ResourceVersionTooLarge`), which
/// client-go's reflector answers with a relist.
#[tokio::test]
async fn watch_from_a_future_version_waits_for_it() {
    let server = TestApiServer::start().await.unwrap();
    let raw = Raw::new(&server.url());
    let future = server.resource_version() + 2;
    let writer = {
        let raw = Raw::new(&server.url());
        tokio::spawn(async move {
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            for n in ["a", "b", "c"] {
                raw.post(CMS, &configmap("default", n, json!({}))).await;
            }
        })
    };
    let mut w = raw
        .watch(&format!("{CMS}?watch=true&resourceVersion={future}"))
        .await;
    writer.await.unwrap();
    let e = w.next().await.unwrap();
    assert_eq!(e["object"]["metadata"]["name"], "c");
    assert_eq!(rv(&e["object"]), future + 1);
    server.shutdown().await;

    let server = TestApiServer::builder()
        .future_rv_wait(std::time::Duration::from_millis(100))
        .start()
        .await
        .unwrap();
    let raw = Raw::new(&server.url());
    let r = raw
        .get(&format!("{CMS}?watch=true&resourceVersion=999"))
        .await;
    assert_eq!(r.status, 504);
    assert_eq!(
        r.body["details"]["causes"][0]["reason"],
        "ResourceVersionTooLarge"
    );
    server.shutdown().await;
}

/// kube-apiserver's watch cache terminates a `cacheWatcher` whose buffer is full (the client
/// does not read) instead of holding every change for it, and the other watchers are not
/// held up: a watch whose client never reads ends (its stream closes after what was already
/// queued) while a watch that reads receives every change, promptly.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watcher_that_never_reads_is_closed_and_fast_ones_keep_up() {
    const WRITES: usize = 2500;
    let server = TestApiServer::start().await.unwrap();
    let raw = Raw::new(&server.url());
    let mut slow = raw.watch(&format!("{CMS}?watch=true")).await;
    let mut fast = raw.watch(&format!("{CMS}?watch=true")).await;
    let reader = tokio::spawn(async move {
        let mut seen = 0;
        while seen < WRITES {
            match tokio::time::timeout(Duration::from_secs(30), fast.next()).await {
                Ok(Some(e)) if e["type"] == "ADDED" => seen += 1,
                Ok(Some(_)) => {}
                Ok(None) | Err(_) => break,
            }
        }
        seen
    });
    // Far more than the socket buffers and the watch's queue hold.
    let blob = "x".repeat(16 * 1024);
    let started = tokio::time::Instant::now();
    for i in 0..WRITES {
        server
            .create_object(json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": format!("cm-{i}"), "namespace": "default"},
                "data": {"blob": blob}}))
            .unwrap();
        if i % 100 == 0 {
            tokio::task::yield_now().await;
        }
    }
    let seen = tokio::time::timeout(Duration::from_secs(60), reader)
        .await
        .expect("the fast watcher fell behind")
        .unwrap();
    assert_eq!(seen, WRITES, "the fast watcher missed changes");
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "the fast watcher was held up: {:?}",
        started.elapsed()
    );
    // The slow watcher's stream ends: what was queued, then the end (no ERROR event).
    let mut got = 0;
    let drained = tokio::time::timeout(Duration::from_secs(30), async {
        while let Some(e) = slow.next().await {
            assert_ne!(e["type"], "ERROR", "{e}");
            got += 1;
        }
    })
    .await;
    assert!(drained.is_ok(), "the slow watcher was never closed");
    assert!(got < WRITES, "the slow watcher got every change ({got})");
    // The client re-watches and goes on.
    let mut again = raw
        .watch(&format!("{CMS}?watch=true&resourceVersion=0"))
        .await;
    let first = again.next().await.unwrap();
    assert_eq!(first["type"], "ADDED");
    server.shutdown().await;
}

/// One store behind both Event APIs, as kube-apiserver's: a watch of core Events sees an
/// Event created through `events.k8s.io/v1` in the core form, and a watch through
/// `events.k8s.io/v1` sees a core Event in its form (`note`, `regarding`).
#[tokio::test]
async fn event_watches_see_writes_through_the_other_api() {
    let server = TestApiServer::start().await.unwrap();
    let raw = Raw::new(&server.url());
    let core_path = "/api/v1/namespaces/default/events";
    let new_path = "/apis/events.k8s.io/v1/namespaces/default/events";
    let mut core_watch = raw.watch(&format!("{core_path}?watch=true")).await;
    let mut new_watch = raw.watch(&format!("{new_path}?watch=true")).await;
    let r = raw
        .post(
            new_path,
            &json!({"apiVersion": "events.k8s.io/v1", "kind": "Event",
                    "metadata": {"name": "a"}, "eventTime": "2026-01-01T00:00:00.000000Z",
                    "reportingController": "ctl", "reportingInstance": "ctl-0",
                    "action": "Sync", "reason": "Synced", "type": "Normal",
                    "regarding": {"kind": "Pod", "name": "web"}, "note": "hello"}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.body["note"], "hello", "{}", r.body);
    let e = core_watch.next().await.unwrap();
    assert_eq!(
        (e["type"].as_str(), e["object"]["apiVersion"].as_str()),
        (Some("ADDED"), Some("v1"))
    );
    assert_eq!(e["object"]["message"], "hello");
    assert_eq!(e["object"]["involvedObject"]["name"], "web");
    let e = new_watch.next().await.unwrap();
    assert_eq!(e["object"]["apiVersion"], "events.k8s.io/v1");
    assert_eq!(e["object"]["note"], "hello");

    let r = raw
        .post(
            core_path,
            &json!({"apiVersion": "v1", "kind": "Event", "metadata": {"name": "b"},
                    "involvedObject": {"kind": "Pod", "name": "db"}, "message": "world",
                    "reason": "Pulled", "type": "Normal", "count": 2}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    let e = new_watch.next().await.unwrap();
    assert_eq!(e["object"]["note"], "world", "{e}");
    assert_eq!(e["object"]["regarding"]["name"], "db");
    assert_eq!(e["object"]["deprecatedCount"], 2);
    assert_eq!(
        core_watch.next().await.unwrap()["object"]["message"],
        "world"
    );
    // A patch through `events.k8s.io` (a recorder's series update) reaches the core watch.
    let r = raw
        .patch(
            &format!("{new_path}/a"),
            "application/merge-patch+json",
            &json!({"series": {"count": 2, "lastObservedTime": "2026-01-01T00:00:05.000000Z"}}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["note"], "hello", "{}", r.body);
    let e = core_watch.next().await.unwrap();
    assert_eq!(
        (e["type"].as_str(), e["object"]["series"]["count"].as_i64()),
        (Some("MODIFIED"), Some(2))
    );
    assert_eq!(e["object"]["message"], "hello");
    // Get and list through both.
    assert_eq!(
        raw.get(&format!("{core_path}/a")).await.body["message"],
        "hello"
    );
    let list = raw.get(new_path).await.body;
    assert_eq!(list["items"].as_array().map(Vec::len), Some(2), "{list}");
    server.shutdown().await;
}
