//! Fault injection of TestApiServer, switched at run time: throttling, internal errors,
//! watch event limits, dropped watches, compaction, latency, late watch events.

use std::time::Duration;

use kinform_tests::http::{Raw, configmap, rv};
use kinform_testserver::TestApiServer;
use serde_json::json;

const CMS: &str = "/api/v1/namespaces/default/configmaps";

#[tokio::test]
async fn a_share_of_requests_get_429_with_retry_after() {
    let server = TestApiServer::start().await.unwrap();
    let raw = Raw::new(&server.url());
    server.faults().set_too_many_requests(0.5, 7);
    let mut codes = Vec::new();
    for _ in 0..4 {
        let r = raw.get(CMS).await;
        if r.status == 429 {
            assert_eq!(r.headers["retry-after"], "7");
            assert_eq!(r.body["reason"], "TooManyRequests");
            assert_eq!(r.body["details"]["retryAfterSeconds"], 7);
        }
        codes.push(r.status);
    }
    assert_eq!(codes, [200, 429, 200, 429]);
    // Discovery is never failed.
    server.faults().set_too_many_requests(1.0, 1);
    assert_eq!(raw.get("/api/v1").await.status, 200);
    assert_eq!(raw.get(CMS).await.status, 429);
    server.faults().clear();
    assert_eq!(raw.get(CMS).await.status, 200);
    server.shutdown().await;
}

#[tokio::test]
async fn internal_errors() {
    let server = TestApiServer::start().await.unwrap();
    let raw = Raw::new(&server.url());
    server.faults().set_internal_errors(1.0);
    let r = raw.post(CMS, &configmap("default", "a", json!({}))).await;
    assert_eq!(
        (r.status, r.body["reason"].as_str()),
        (500, Some("InternalError"))
    );
    server.faults().set_internal_errors(0.0);
    assert_eq!(
        raw.get(&format!("{CMS}/a")).await.status,
        404,
        "the failed write did nothing"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn watches_end_after_k_events() {
    let server = TestApiServer::start().await.unwrap();
    let raw = Raw::new(&server.url());
    for n in ["a", "b", "c"] {
        raw.post(CMS, &configmap("default", n, json!({}))).await;
    }
    server.faults().set_watch_event_limit(Some(2));
    let mut w = raw.watch(&format!("{CMS}?watch=true")).await;
    assert!(w.next().await.is_some());
    assert!(w.next().await.is_some());
    assert!(w.next().await.is_none(), "the watch ends after 2 events");
    server.faults().set_watch_event_limit(None);
    let mut w = raw.watch(&format!("{CMS}?watch=true")).await;
    for _ in 0..3 {
        assert!(w.next().await.is_some());
    }
    server.shutdown().await;
}

#[tokio::test]
async fn drop_watches_ends_every_open_watch() {
    let server = TestApiServer::start().await.unwrap();
    let raw = Raw::new(&server.url());
    raw.post(CMS, &configmap("default", "a", json!({}))).await;
    let mut w1 = raw.watch(&format!("{CMS}?watch=true")).await;
    let mut w2 = raw.watch("/api/v1/pods?watch=true&resourceVersion=1").await;
    assert_eq!(w1.next().await.unwrap()["type"], "ADDED");
    server.faults().drop_watches();
    assert!(w1.next().await.is_none());
    // w2 replays namespace-less pod history (none) and then ends.
    assert!(w2.next().await.is_none());
    // New watches work again.
    let mut w3 = raw.watch(&format!("{CMS}?watch=true")).await;
    assert!(w3.next().await.is_some());
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_watch_sends_no_change_made_after_the_drop() {
    let server = TestApiServer::start().await.unwrap();
    let raw = Raw::new(&server.url());
    // Each round: a watch in its event loop, then a drop and a change at once, so that
    // both are ready when the watch runs next: a watch that does not check for the drop
    // first sends the change in some of the rounds.
    for round in 0..100 {
        // From the current version: no initial events for the earlier rounds' objects.
        let now = rv(&raw.get(CMS).await.body);
        let mut w = raw
            .watch(&format!("{CMS}?watch=true&resourceVersion={now}"))
            .await;
        raw.post(
            CMS,
            &configmap("default", &format!("seen-{round}"), json!({})),
        )
        .await;
        assert_eq!(w.next().await.unwrap()["type"], "ADDED");
        server.faults().drop_watches();
        server
            .create_object(configmap("default", &format!("after-{round}"), json!({})))
            .unwrap();
        let next = w.next().await;
        assert!(
            next.is_none(),
            "round {round}: a change after the drop: {next:?}"
        );
    }
    server.shutdown().await;
}

#[tokio::test]
async fn compaction_makes_resumes_410() {
    let server = TestApiServer::start().await.unwrap();
    let raw = Raw::new(&server.url());
    let a = raw
        .post(CMS, &configmap("default", "a", json!({})))
        .await
        .body;
    raw.post(CMS, &configmap("default", "b", json!({}))).await;
    server.faults().compact();
    let mut w = raw
        .watch(&format!("{CMS}?watch=true&resourceVersion={}", rv(&a)))
        .await;
    let e = w.next().await.unwrap();
    assert_eq!(
        (e["type"].as_str(), e["object"]["code"].as_i64()),
        (Some("ERROR"), Some(410))
    );
    // Resuming from the current version still works.
    let now = server.resource_version();
    let mut w = raw
        .watch(&format!("{CMS}?watch=true&resourceVersion={now}"))
        .await;
    raw.post(CMS, &configmap("default", "c", json!({}))).await;
    assert_eq!(w.next().await.unwrap()["object"]["metadata"]["name"], "c");
    server.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn latency_delays_resource_requests() {
    let server = TestApiServer::start().await.unwrap();
    let raw = Raw::new(&server.url());
    server.faults().set_latency(Duration::from_secs(3));
    assert_eq!(server.faults().latency(), Duration::from_secs(3));
    let start = tokio::time::Instant::now();
    assert_eq!(raw.get(CMS).await.status, 200);
    assert!(start.elapsed() >= Duration::from_secs(3));
    server.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn a_watch_delay_holds_each_event_and_keeps_the_order() {
    let server = TestApiServer::start().await.unwrap();
    let raw = Raw::new(&server.url());
    let (min, max) = (Duration::from_millis(200), Duration::from_secs(2));
    server.faults().set_watch_delay(min, max);
    assert_eq!(server.faults().watch_delay(), Some((min, max)));
    let now = rv(&raw.get(CMS).await.body);
    let mut w = raw
        .watch(&format!("{CMS}?watch=true&resourceVersion={now}"))
        .await;
    let written = tokio::time::Instant::now();
    for i in 0..20 {
        server
            .create_object(configmap("default", &format!("late-{i}"), json!({})))
            .unwrap();
    }
    let mut names = Vec::new();
    let mut arrivals = Vec::new();
    for _ in 0..20 {
        let e = w.next().await.unwrap();
        arrivals.push(written.elapsed());
        names.push(e["object"]["metadata"]["name"].as_str().unwrap().to_owned());
    }
    let expected: Vec<String> = (0..20).map(|i| format!("late-{i}")).collect();
    assert_eq!(names, expected, "the watch keeps its order");
    assert!(
        arrivals[0] >= min,
        "held at least the minimum: {arrivals:?}"
    );
    // Each event waits its own delay from when it reached the watch, not after the one
    // ahead of it: the last is not later than the maximum (plus the test's own latency).
    assert!(
        arrivals[19] <= max + Duration::from_millis(100),
        "{arrivals:?}"
    );
    // Off again: a new change comes at once.
    server.faults().clear();
    server
        .create_object(configmap("default", "prompt", json!({})))
        .unwrap();
    let started = tokio::time::Instant::now();
    assert_eq!(
        w.next().await.unwrap()["object"]["metadata"]["name"],
        "prompt"
    );
    assert!(started.elapsed() < min);
    server.shutdown().await;
}
