//! The controller against TestApiServer: every object reconciled, deletions included;
//! requeue-after on the paused clock; errors backing off through the rate limiter; panics
//! caught and retried; graceful shutdown draining in-flight and queued keys.

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use kinform::Api;
use kinform::client::DeleteParams;
use kinform::controller::{Action, Controller, ReconcileStats};
use kinform::testing::TestApiServer;
use kinform::workqueue::ItemExponentialFailureRateLimiter;
use kinform_tests::controller::{Log, client, configmap, factory, run_recording};
use tokio_util::sync::CancellationToken;

#[tokio::test]
async fn every_object_is_reconciled_and_deletions_too() {
    let server = TestApiServer::start().await.unwrap();
    for i in 0..5 {
        configmap(&server, &format!("cm-{i}"));
    }
    let client = client(&server);
    let factory = factory(client.clone());
    let controller = Controller::<ConfigMap>::builder(&factory)
        .workers(3)
        .build();
    let log = Log::new();
    let cancel = CancellationToken::new();
    let run = run_recording(controller, &log, &cancel);
    log.wait_for("the initial five", |calls| {
        (0..5).all(|i| {
            calls
                .iter()
                .any(|c| c.key == format!("default/cm-{i}") && c.present)
        })
    })
    .await;
    configmap(&server, "late");
    Api::<ConfigMap>::namespaced(client, "default")
        .delete("cm-0", &DeleteParams::default())
        .await
        .unwrap();
    log.wait_for("the new one and the deletion", |calls| {
        calls.iter().any(|c| c.key == "default/late" && c.present)
            && calls.iter().any(|c| c.key == "default/cm-0" && !c.present)
    })
    .await;
    cancel.cancel();
    let stats = run.await.unwrap();
    assert!(stats.reconciles >= 7, "{stats:?}");
    assert_eq!(stats.reconciles, stats.successes);
    assert_eq!(stats.errors + stats.panics + stats.requeues, 0);
    factory.shutdown().await;
    server.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn requeue_after_reconciles_again_after_the_delay() {
    let server = TestApiServer::start().await.unwrap();
    configmap(&server, "poll");
    let factory = factory(client(&server));
    let controller = Controller::<ConfigMap>::builder(&factory).build();
    let log = Log::new();
    let cancel = CancellationToken::new();
    let l = log.clone();
    let run = tokio::spawn(controller.run(
        move |req| {
            let l = l.clone();
            async move {
                l.record(&req.key, true, req.retries);
                Ok::<_, Infallible>(Action::requeue_after(Duration::from_secs(60)))
            }
        },
        cancel.clone().cancelled_owned(),
    ));
    log.wait_for("three polls", |c| c.len() >= 3).await;
    cancel.cancel();
    let stats = run.await.unwrap();
    let calls = log.of("default/poll");
    for pair in calls.windows(2) {
        let gap = pair[1].at - pair[0].at;
        assert!(gap >= Duration::from_secs(60), "requeued after {gap:?}");
        assert!(gap < Duration::from_secs(61), "requeued after {gap:?}");
    }
    assert_eq!(stats.requeues, stats.reconciles);
    factory.shutdown().await;
    server.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn errors_back_off_through_the_rate_limiter_and_success_forgets() {
    let server = TestApiServer::start().await.unwrap();
    configmap(&server, "flaky");
    let factory = factory(client(&server));
    let controller = Controller::<ConfigMap>::builder(&factory)
        .rate_limiter(ItemExponentialFailureRateLimiter::new(
            Duration::from_secs(1),
            Duration::from_secs(100),
        ))
        .build();
    let queue = controller.queue().clone();
    let log = Log::new();
    let cancel = CancellationToken::new();
    let l = log.clone();
    let run = tokio::spawn(controller.run(
        move |req| {
            let l = l.clone();
            async move {
                l.record(&req.key, true, req.retries);
                if req.retries < 3 {
                    Err(format!("attempt {} failed", req.retries + 1))
                } else {
                    Ok(Action::done())
                }
            }
        },
        cancel.clone().cancelled_owned(),
    ));
    log.wait_for("the fourth attempt", |c| c.len() >= 4).await;
    cancel.cancel();
    let stats = run.await.unwrap();
    // The success forgot the key's failures.
    assert_eq!(queue.num_requeues(&"default/flaky".to_string()), 0);
    let calls = log.of("default/flaky");
    assert_eq!(
        calls.iter().map(|c| c.retries).collect::<Vec<_>>(),
        [0, 1, 2, 3]
    );
    let gaps: Vec<Duration> = calls.windows(2).map(|p| p[1].at - p[0].at).collect();
    for (gap, expected) in gaps.iter().zip([1, 2, 4]) {
        assert!(
            *gap >= Duration::from_secs(expected) && *gap < Duration::from_secs(expected + 1),
            "gaps {gaps:?}"
        );
    }
    assert_eq!(
        stats,
        ReconcileStats {
            reconciles: 4,
            successes: 1,
            requeues: 0,
            errors: 3,
            panics: 0,
            ..ReconcileStats::default()
        }
    );
    factory.shutdown().await;
    server.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn a_panic_is_caught_and_retried() {
    let server = TestApiServer::start().await.unwrap();
    configmap(&server, "boom");
    configmap(&server, "calm");
    let factory = factory(client(&server));
    let controller = Controller::<ConfigMap>::builder(&factory)
        .workers(1)
        .build();
    let log = Log::new();
    let cancel = CancellationToken::new();
    let l = log.clone();
    let run = tokio::spawn(controller.run(
        move |req| {
            let l = l.clone();
            async move {
                l.record(&req.key, true, req.retries);
                if req.key == "default/boom" && req.retries == 0 {
                    panic!("reconcile of {} exploded", req.key);
                }
                Ok::<_, Infallible>(Action::done())
            }
        },
        cancel.clone().cancelled_owned(),
    ));
    log.wait_for("the retry after the panic and the other key", |c| {
        c.iter().filter(|c| c.key == "default/boom").count() == 2
            && c.iter().any(|c| c.key == "default/calm")
    })
    .await;
    cancel.cancel();
    let stats = run.await.unwrap();
    assert_eq!(stats.panics, 1, "{stats:?}");
    assert_eq!(stats.successes, 2, "{stats:?}");
    assert_eq!(log.of("default/boom")[1].retries, 1);
    factory.shutdown().await;
    server.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn shutdown_drains_in_flight_and_queued_keys() {
    let server = TestApiServer::start().await.unwrap();
    configmap(&server, "a");
    configmap(&server, "b");
    let factory = factory(client(&server));
    // One worker: while it sleeps in the first reconcile, the other key waits in the queue.
    let controller = Controller::<ConfigMap>::builder(&factory)
        .workers(1)
        .build();
    let log = Log::new();
    let finished = Arc::new(AtomicUsize::new(0));
    let cancel = CancellationToken::new();
    let (l, f) = (log.clone(), finished.clone());
    let run = tokio::spawn(controller.run(
        move |req| {
            let (l, f) = (l.clone(), f.clone());
            async move {
                l.record(&req.key, true, req.retries);
                tokio::time::sleep(Duration::from_secs(10)).await;
                f.fetch_add(1, Ordering::SeqCst);
                Ok::<_, Infallible>(Action::done())
            }
        },
        cancel.clone().cancelled_owned(),
    ));
    log.wait_for("the first reconcile to start", |c| !c.is_empty())
        .await;
    let cancelled_at = tokio::time::Instant::now();
    cancel.cancel();
    let stats = run.await.unwrap();
    // run returned only after the in-flight reconcile and the queued one finished.
    assert_eq!(finished.load(Ordering::SeqCst), 2);
    assert_eq!(stats.successes, 2);
    assert!(cancelled_at.elapsed() >= Duration::from_secs(10));
    factory.shutdown().await;
    server.shutdown().await;
}

#[tokio::test]
async fn shutdown_before_sync_returns_without_reconciling() {
    let server = TestApiServer::start().await.unwrap();
    server.faults().set_internal_errors(1.0);
    let factory = factory(client(&server));
    let controller = Controller::<ConfigMap>::builder(&factory).build();
    assert!(!controller.has_synced());
    let stats = controller
        .run(
            |_req| async { Ok::<_, Infallible>(Action::done()) },
            std::future::ready(()),
        )
        .await;
    assert_eq!(stats, ReconcileStats::default());
    factory.shutdown().await;
    server.shutdown().await;
}
