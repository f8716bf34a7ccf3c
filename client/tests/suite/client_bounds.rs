//! Memory stays bounded against a hostile server (issue #19): a watch line that never ends,
//! a line longer than the event bound, a LIST page or any body larger than the body bound,
//! and a gzip bomb each fail their request with `Error::TooLarge` naming the request, on
//! the user verbs and on the reflector's decoding seam alike.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt as _;
use k8s_openapi::api::core::v1::Pod;
use kinform_client::decode::{self, ListHints};
use kinform_client::{Api, Client, Config, Error, ListParams, WatchEvent, WatchParams};
use kinform_tests::mock::{Reply, pod_json, serve};

const MIB: usize = 1 << 20;

fn client(url: &str, max_body: usize, max_event: usize) -> Client {
    let mut config = Config::new(url.parse().unwrap());
    config.max_body_bytes = max_body;
    config.max_watch_event_bytes = max_event;
    Client::new(config).unwrap()
}

/// A server whose watches send `first` and then `x` forever, with no newline, until the
/// client goes away.
async fn endless_watch(first: &'static [u8]) -> kinform_tests::mock::Server {
    serve(
        None,
        false,
        Arc::new(move |_| {
            let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<Bytes>();
            tokio::spawn(async move {
                if tx.send(Bytes::from_static(first)).is_err() {
                    return;
                }
                let junk = Bytes::from(vec![b'x'; 64 * 1024]);
                // Stops when the client drops the watch (the receiver goes with it).
                while tx.send(junk.clone()).is_ok() {
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
            });
            Reply::Stream(rx)
        }),
    )
    .await
}

fn assert_too_large(e: &Error, what: &str, setting: &str) {
    match e {
        Error::TooLarge {
            request,
            what: w,
            limit,
            setting: s,
        } => {
            assert!(request.starts_with("GET /api/v1/"), "{e}");
            assert!(w.contains(what), "{e}");
            assert_eq!(*s, setting, "{e}");
            assert!(*limit > 0);
            assert!(e.to_string().contains(setting), "{e}");
        }
        other => panic!("not TooLarge: {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endless_watch_line_fails_the_watch_after_the_events_before_it() {
    let server = endless_watch(
        b"{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"2\"}}}\n",
    )
    .await;
    let pods: Api<Pod> = Api::all(client(&server.url, MIB, MIB));
    let mut events = pods.watch(&WatchParams::default()).await.unwrap();
    let first = tokio::time::timeout(Duration::from_secs(30), events.next())
        .await
        .unwrap();
    assert!(matches!(first, Some(Ok(WatchEvent::Added(_)))), "{first:?}");
    let second = tokio::time::timeout(Duration::from_secs(30), events.next())
        .await
        .expect("the watch failed in time")
        .unwrap();
    assert_too_large(
        &second.unwrap_err(),
        "v1/pods watch event",
        "Config::max_watch_event_bytes",
    );
    assert!(events.next().await.is_none(), "the watch ended");

    // The reflector's seam fails the same way, in its batch.
    let mut batches = decode::watch(&pods, &WatchParams::default(), &ListHints::default())
        .await
        .unwrap();
    let mut seen = Vec::new();
    while let Some(batch) = tokio::time::timeout(Duration::from_secs(30), batches.next())
        .await
        .unwrap()
    {
        seen.extend(batch);
    }
    assert!(matches!(seen.first(), Some(Ok(WatchEvent::Added(_)))));
    assert_too_large(
        seen.last().unwrap().as_ref().unwrap_err(),
        "watch event",
        "Config::max_watch_event_bytes",
    );
}

#[tokio::test]
async fn a_complete_line_over_the_bound_is_refused_too() {
    let long_name = "n".repeat(200_000);
    let line = format!(
        "{}\n",
        serde_json::json!({"type":"ADDED","object":pod_json(&long_name, "3")})
    );
    let ok = format!(
        "{}\n",
        serde_json::json!({"type":"ADDED","object":pod_json("short", "2")})
    );
    let body = Bytes::from(format!("{ok}{line}{ok}"));
    let server = serve(
        None,
        false,
        Arc::new(move |_| {
            let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<Bytes>();
            tx.send(body.clone()).unwrap();
            Reply::Stream(rx)
        }),
    )
    .await;
    let pods: Api<Pod> = Api::all(client(&server.url, MIB, 100_000));
    let events: Vec<_> = pods
        .watch(&WatchParams::default())
        .await
        .unwrap()
        .collect()
        .await;
    assert_eq!(events.len(), 2, "{events:?}");
    assert!(matches!(&events[0], Ok(WatchEvent::Added(_))));
    assert_too_large(
        events[1].as_ref().unwrap_err(),
        "watch event",
        "Config::max_watch_event_bytes",
    );
    // With the default bound the same line is an ordinary event.
    let pods: Api<Pod> = Api::all(Client::new(Config::new(server.url.parse().unwrap())).unwrap());
    let events: Vec<_> = pods
        .watch(&WatchParams::default())
        .await
        .unwrap()
        .collect()
        .await;
    assert_eq!(events.len(), 3, "{events:?}");
    assert!(events.iter().all(Result::is_ok));
}

fn big_list() -> serde_json::Value {
    let items: Vec<_> = (0..2000)
        .map(|i| pod_json(&format!("pod-{i:04}"), "1"))
        .collect();
    serde_json::json!({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"9"},"items":items})
}

#[tokio::test]
async fn list_pages_and_bodies_over_the_bound_fail_plain_or_gzipped() {
    let size = big_list().to_string().len();
    assert!(size > 200_000, "{size}");
    for gzip in [false, true] {
        let server = serve(None, gzip, Arc::new(|_| Reply::json(200, big_list()))).await;
        let pods: Api<Pod> = Api::all(client(&server.url, size / 2, MIB));
        let e = pods.list(&ListParams::default()).await.unwrap_err();
        assert_too_large(&e, "response body", "Config::max_body_bytes");
        let e = decode::list(&pods, &ListParams::default(), &ListHints::default())
            .await
            .unwrap_err();
        assert_too_large(&e, "response body", "Config::max_body_bytes");
        let e = pods.get("any").await.unwrap_err();
        assert_too_large(&e, "response body", "Config::max_body_bytes");
        // Within the bound the same page is read.
        let pods: Api<Pod> = Api::all(client(&server.url, size, MIB));
        assert_eq!(
            pods.list(&ListParams::default()).await.unwrap().items.len(),
            2000
        );
    }
}

#[tokio::test]
async fn a_gzip_bomb_stops_at_the_bound() {
    // 64 MiB of spaces inside a JSON object: about 64 KiB gzipped.
    let bomb = format!(
        "{{\"kind\":\"PodList\",\"items\":[]{}}}",
        " ".repeat(64 * MIB)
    );
    let server = serve(
        None,
        true,
        Arc::new(move |_| Reply::Full {
            status: 200,
            headers: vec![("content-type", "application/json".into())],
            body: bomb.clone().into_bytes(),
        }),
    )
    .await;
    let pods: Api<Pod> = Api::all(client(&server.url, MIB, MIB));
    let e = pods.list(&ListParams::default()).await.unwrap_err();
    assert_too_large(&e, "response body", "Config::max_body_bytes");
    assert!(server.requests()[0].headers["accept-encoding"] == "gzip");
}
