//! An informer against a hostile API server (issue #19): a loopback server whose first
//! answers are an endless watch line, cut lines, garbage, odd ERROR Statuses, a garbage
//! LIST and resourceVersions out of order. The informer never panics, its memory stays
//! bounded (the endless line stops at `Config::max_watch_event_bytes`), every failure
//! reaches its watch error handler, and once the server behaves the cache is the server's
//! state exactly.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use bytes::Bytes;
use k8s_openapi::api::core::v1::Pod;
use kinform::{Client, Config};
use kinform_tests::eventually;
use kinform_tests::informer::{cache_state, fast_factory};
use kinform_tests::mock::{Reply, pod_json, serve, status_json};
use tokio::sync::mpsc;

fn line(kind: &str, object: serde_json::Value) -> String {
    format!("{}\n", serde_json::json!({"type": kind, "object": object}))
}

fn initial_events_end(rv: &str) -> String {
    line(
        "BOOKMARK",
        serde_json::json!({"kind": "Pod", "apiVersion": "v1", "metadata": {"resourceVersion": rv,
            "annotations": {"k8s.io/initial-events-end": "true"}}}),
    )
}

/// A body sent as `chunks`, then held open (a quiet watch) or ended.
fn stream(chunks: Vec<String>, hold: bool) -> Reply {
    let (tx, rx) = mpsc::unbounded_channel::<Bytes>();
    for c in chunks {
        let _ = tx.send(Bytes::from(c));
    }
    if hold {
        tokio::spawn(async move {
            // Held until the client goes away.
            while !tx.is_closed() {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        });
    }
    Reply::Stream(rx)
}

/// A watch line that never ends: `x` until the client goes away.
fn endless() -> Reply {
    let (tx, rx) = mpsc::unbounded_channel::<Bytes>();
    tokio::spawn(async move {
        let junk = Bytes::from(vec![b'x'; 256 * 1024]);
        let _ = tx.send(Bytes::from_static(
            b"{\"type\":\"ADDED\",\"object\":{\"x\":\"",
        ));
        while tx.send(junk.clone()).is_ok() {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    });
    Reply::Stream(rx)
}

/// The good state the server converges to.
fn good_pods() -> Vec<serde_json::Value> {
    vec![
        pod_json("a", "101"),
        pod_json("b", "102"),
        pod_json("c", "103"),
    ]
}

/// The answer to the `n`-th request while the server is hostile.
fn hostile(n: usize, is_watch: bool) -> Reply {
    if !is_watch {
        return match n % 3 {
            0 => Reply::raw(200, "{\"kind\":\"PodList\",\"items\":[{\"metadata\":"),
            1 => Reply::raw(200, "<html>gateway</html>"),
            _ => Reply::json(
                200,
                serde_json::json!({"kind":"PodList","apiVersion":"v1",
                "metadata":{"resourceVersion":"5"},"items":[pod_json("ghost", "5")]}),
            )
            .with_header("x-note", "a pod that will be gone"),
        };
    }
    match n % 7 {
        0 => endless(),
        1 => stream(
            vec![
                line("ADDED", pod_json("a", "50")),
                "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"na".into(),
            ],
            false,
        ),
        2 => stream(
            vec![
                "garbage\n".into(),
                "\u{0}\u{1}\u{2}\n".into(),
                "[1,2,3]\n".into(),
                "{\"type\":\"RENAMED\",\"object\":{}}\n".into(),
            ],
            true,
        ),
        3 => stream(
            vec![line(
                "ERROR",
                serde_json::json!({"kind":"Status","apiVersion":"v1","code":"NaN","reason":5}),
            )],
            true,
        ),
        4 => stream(
            vec![line(
                "ERROR",
                status_json(410, "Expired", "too old resource version: 1 (100)"),
            )],
            true,
        ),
        5 => stream(
            vec![
                line("ADDED", pod_json("a", "90")),
                line("ADDED", pod_json("ghost", "95")),
                line("MODIFIED", pod_json("a", "80")),
                line("DELETED", pod_json("b", "70")),
                initial_events_end("60"),
                line("MODIFIED", pod_json("c", "20")),
            ],
            false,
        ),
        _ => stream(
            vec![line(
                "ERROR",
                serde_json::json!({"kind":"Status","apiVersion":"v1","status":"Failure","code":500,
                    "message":"etcdserver: request timed out"}),
            )],
            false,
        ),
    }
}

fn good(is_watch: bool, initial: bool) -> Reply {
    match (is_watch, initial) {
        (false, _) => Reply::json(
            200,
            serde_json::json!({"kind":"PodList","apiVersion":"v1",
                "metadata":{"resourceVersion":"103"},"items":good_pods()}),
        ),
        (true, true) => {
            let mut chunks: Vec<String> =
                good_pods().into_iter().map(|p| line("ADDED", p)).collect();
            chunks.push(initial_events_end("103"));
            stream(chunks, true)
        }
        (true, false) => stream(Vec::new(), true),
    }
}

fn rss_kib() -> usize {
    usize::try_from(kinform_tests::rss_bytes() / 1024).unwrap_or(usize::MAX)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_informer_survives_a_hostile_server_and_converges() {
    const HOSTILE_REQUESTS: usize = 21;
    let requests = Arc::new(AtomicUsize::new(0));
    let requests2 = requests.clone();
    let server = serve(
        None,
        false,
        Arc::new(move |req| {
            let n = requests2.fetch_add(1, Ordering::SeqCst);
            let query = req.uri.query().unwrap_or("");
            let is_watch = query.contains("watch=true");
            let initial = query.contains("sendInitialEvents=true");
            if n < HOSTILE_REQUESTS {
                hostile(n, is_watch)
            } else {
                good(is_watch, initial)
            }
        }),
    )
    .await;

    let mut config = Config::new(server.url.parse().unwrap());
    config.max_retries = 0;
    config.max_watch_event_bytes = 1 << 20;
    let factory = fast_factory(Client::new(config).unwrap());
    let informer = factory.informer::<Pod>();
    let errors = Arc::new(AtomicUsize::new(0));
    let errors2 = errors.clone();
    informer
        .set_watch_error_handler(Arc::new(move |_| {
            errors2.fetch_add(1, Ordering::SeqCst);
        }))
        .unwrap();

    let baseline = rss_kib();
    let peak = Arc::new(AtomicUsize::new(baseline));
    let peak2 = peak.clone();
    let sampler = tokio::spawn(async move {
        loop {
            peak2.fetch_max(rss_kib(), Ordering::SeqCst);
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    });
    factory.start();

    let want: std::collections::BTreeMap<String, u64> = [
        ("default/a".to_owned(), 101),
        ("default/b".to_owned(), 102),
        ("default/c".to_owned(), 103),
    ]
    .into_iter()
    .collect();
    let converged = eventually(Duration::from_secs(60), async || {
        requests.load(Ordering::SeqCst) > HOSTILE_REQUESTS && cache_state(&informer) == want
    })
    .await;
    sampler.abort();
    assert!(
        converged,
        "cache {:?} after {} requests",
        cache_state(&informer),
        requests.load(Ordering::SeqCst)
    );
    // It stays converged (no hostile leftovers arrive later).
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(cache_state(&informer), want);
    assert!(
        errors.load(Ordering::SeqCst) >= 5,
        "the failures reached the error handler: {}",
        errors.load(Ordering::SeqCst)
    );
    // The endless line was cut at 1 MiB each time: nothing near the gigabytes it would take
    // unbounded (the sampler sees every 5 ms; the server sends 256 KiB a millisecond).
    let grown_mib = peak.load(Ordering::SeqCst).saturating_sub(baseline) / 1024;
    eprintln!(
        "{} requests, {} errors handled, RSS grew by {grown_mib} MiB at most",
        requests.load(Ordering::SeqCst),
        errors.load(Ordering::SeqCst)
    );
    assert!(grown_mib < 200, "RSS grew by {grown_mib} MiB");
    factory.shutdown().await;
}
