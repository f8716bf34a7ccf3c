//! The starvation acceptance test, at the controller level against TestApiServer: 2,000
//! keys from the initial list (LOW) and a stream of new objects (watch events, NORMAL)
//! arriving faster than the workers drain. The drain is paced by the test (each round creates
//! 1.5 times as many objects as it lets the workers reconcile), so the stream outruns the
//! workers however fast or slow the machine is. What must hold, read from the queue's
//! per-priority metrics (depth, and the wait of every handout):
//!
//! - every listed key is reconciled, while the stream goes on;
//! - events are served first: no listed key is handed out before it has waited `max_wait`
//!   (but the few the workers took before the first event existed), and until the first
//!   listed key has aged the LOW depth stays at the whole list;
//! - the aging bound, handout by handout: no event is handed out while a listed key that has
//!   waited `max_wait` is still queued.
//!
//! The same scenario with 10,000 listed keys, on the queue alone, on the paused clock and
//! against a model of the contract, is `kinform-runtime`'s
//! `workqueue_priority::listed_keys_cannot_starve_under_a_stream_of_events`: at the controller
//! level the 10,000 objects alone take seconds to create in a debug build.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use kinform::controller::{Action, Controller};
use kinform::testing::TestApiServer;
use kinform::workqueue::Priority;
use kinform_tests::controller::{Handout, QueueRecorder, client, configmap, factory};
use tokio::sync::Semaphore;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

const LISTED: usize = 2_000;
const WORKERS: usize = 2;
/// A short aging bound, so that the test is quick, and long enough that the first rounds of
/// events are queued before the listed keys age (their delivery and the sync take a moment).
const MAX_WAIT: Duration = Duration::from_millis(1500);
/// Reconciles allowed per round.
const DRAINED_PER_ROUND: usize = 200;
/// New objects per round: the stream is 1.5 times faster than the drain.
const EVENTS_PER_ROUND: usize = 300;
/// What the clock may move between the queue's aging decision and the metric's reading.
const SLACK: Duration = Duration::from_millis(50);
/// Bounds the whole run (it takes a few seconds).
const LIMIT: Duration = Duration::from_secs(60);

/// Polls `cond` every millisecond until it holds; panics after [`LIMIT`].
async fn until(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + LIMIT;
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
}

#[tokio::test]
async fn listed_keys_cannot_starve_under_a_stream_of_events() {
    let server = TestApiServer::start().await.unwrap();
    for i in 0..LISTED {
        configmap(&server, &format!("listed-{i}"));
    }
    let recorder = QueueRecorder::default();
    let factory = factory(client(&server));
    let controller = Controller::<ConfigMap>::builder(&factory)
        .name("starvation")
        .workers(WORKERS)
        .priority_queue_max_wait(Some(MAX_WAIT))
        .metrics(Arc::new(recorder.clone()))
        .build();
    let queue = controller.queue().clone();
    let permits = Arc::new(Semaphore::new(0));
    let reconciled = Arc::new(AtomicUsize::new(0));
    let listed_reconciled = Arc::new(AtomicUsize::new(0));
    let cancel = CancellationToken::new();
    let run = {
        let (permits, reconciled, listed) = (
            permits.clone(),
            reconciled.clone(),
            listed_reconciled.clone(),
        );
        tokio::spawn(controller.run(
            move |req| {
                let (permits, reconciled, listed) =
                    (permits.clone(), reconciled.clone(), listed.clone());
                async move {
                    // Closed at the end: then every reconcile goes through.
                    if let Ok(permit) = permits.acquire().await {
                        permit.forget();
                    }
                    if req.key.starts_with("default/listed-") {
                        listed.fetch_add(1, Ordering::SeqCst);
                    }
                    reconciled.fetch_add(1, Ordering::SeqCst);
                    Ok::<_, std::convert::Infallible>(Action::done())
                }
            },
            cancel.clone().cancelled_owned(),
        ))
    };
    // Synced: each worker holds a listed key, taken before any event existed.
    until("the workers to start", || queue.processing_len() == WORKERS).await;

    let started = Instant::now();
    let (mut created, mut released) = (0, 0);
    // (when, LOW depth, NORMAL depth) after each round's events are queued.
    let mut depths = Vec::new();
    while listed_reconciled.load(Ordering::SeqCst) < LISTED {
        assert!(started.elapsed() < LIMIT, "listed keys starve");
        for _ in 0..EVENTS_PER_ROUND {
            configmap(&server, &format!("event-{created}"));
            created += 1;
        }
        let queued = (LISTED + created) as u64;
        until("the round's events", || recorder.0.lock().adds >= queued).await;
        {
            let rec = recorder.0.lock();
            let depth = |p| rec.depth.get(&p).copied().unwrap_or_default();
            depths.push((
                Instant::now(),
                depth(Priority::LOW),
                depth(Priority::NORMAL),
            ));
        }
        permits.add_permits(DRAINED_PER_ROUND);
        released += DRAINED_PER_ROUND;
        until("the round's reconciles", || {
            reconciled.load(Ordering::SeqCst) >= released
        })
        .await;
    }
    let rounds = depths.len();
    permits.close();
    cancel.cancel();
    run.await.unwrap();
    factory.shutdown().await;
    server.shutdown().await;

    let rec = recorder.0.lock();
    let low: &[Handout] = &rec.handouts[&Priority::LOW];
    let normal: &[Handout] = &rec.handouts[&Priority::NORMAL];
    assert_eq!(low.len(), LISTED, "every listed key was handed out, once");
    assert_eq!(rec.depth[&Priority::LOW], 0);
    // The stream outran the drain: events were still waiting when the last listed key went.
    let (_, _, last_normal) = depths[rounds - 1];
    assert!(last_normal > 0, "{depths:?}");

    // Events first.
    let young = low.iter().filter(|h| h.waited < MAX_WAIT).count();
    assert!(
        young <= WORKERS,
        "{young} listed keys were handed out before waiting {MAX_WAIT:?}"
    );
    let first_aged = low.iter().map(Handout::queued).min().unwrap() + MAX_WAIT;
    let before_aging: Vec<_> = depths.iter().filter(|d| d.0 < first_aged).collect();
    assert!(
        !before_aging.is_empty(),
        "no round before the listed keys aged"
    );
    for &&(_, low_depth, normal_depth) in &before_aging {
        assert_eq!(low_depth, (LISTED - WORKERS) as i64, "{depths:?}");
        assert!(normal_depth > 0, "{depths:?}");
    }
    let early_events = normal.iter().filter(|h| h.at < first_aged).count();
    assert!(
        early_events >= DRAINED_PER_ROUND - WORKERS,
        "{early_events}"
    );

    // The aging bound: by queueing time, the latest handout of the listed keys queued up to
    // each point; an event handed out at `t` must come after every listed key that had aged
    // by `t`.
    let mut by_queued: Vec<Handout> = low.to_vec();
    by_queued.sort_by_key(Handout::queued);
    let mut latest = Vec::with_capacity(LISTED);
    for h in &by_queued {
        let prev = latest.last().copied().unwrap_or(h.at);
        latest.push(prev.max(h.at));
    }
    for event in normal {
        let aged = by_queued.partition_point(|h| h.queued() + MAX_WAIT + SLACK <= event.at);
        if aged > 0 {
            assert!(
                latest[aged - 1] <= event.at,
                "an event was handed out at {:?} while a listed key that had waited {MAX_WAIT:?} \
                 was queued (handed out at {:?})",
                event.at - started,
                latest[aged - 1] - started,
            );
        }
    }
    let longest = low.iter().map(|h| h.waited).max().unwrap();
    println!(
        "{rounds} rounds, {created} events, {} s; longest listed wait {longest:?}",
        started.elapsed().as_secs_f64()
    );
}
