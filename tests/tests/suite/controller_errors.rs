//! How a reconcile fails: a terminal error is reported (warning, stats, metrics) and not
//! retried until the object changes; a reconcile past `reconcile_timeout` is cancelled,
//! counted as an error and retried with backoff.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use kinform::controller::{Action, Controller, PrometheusControllerMetrics, ReconcileError};
use kinform::testing::TestApiServer;
use kinform::workqueue::ItemExponentialFailureRateLimiter;
use kinform_tests::controller::{Log, change_configmap, client, configmap, factory, sample};
use tokio_util::sync::CancellationToken;

fn prometheus_text(registry: &prometheus::Registry) -> String {
    prometheus::TextEncoder::new()
        .encode_to_string(&registry.gather())
        .unwrap()
}

#[tokio::test(start_paused = true)]
async fn a_terminal_error_is_reported_and_not_retried_until_the_object_changes() {
    let server = TestApiServer::start().await.unwrap();
    configmap(&server, "bad");
    configmap(&server, "flaky");
    let registry = prometheus::Registry::new();
    let metrics = Arc::new(PrometheusControllerMetrics::new(&registry).unwrap());
    let factory = factory(client(&server));
    let controller = Controller::<ConfigMap>::builder(&factory)
        .name("errors-test")
        .metrics(metrics)
        .rate_limiter(ItemExponentialFailureRateLimiter::new(
            Duration::from_secs(1),
            Duration::from_secs(100),
        ))
        .build();
    let queue = controller.queue().clone();
    let stats = controller.stats();
    let log = Log::new();
    let cancel = CancellationToken::new();
    let l = log.clone();
    let run = tokio::spawn(controller.run(
        move |req| {
            let l = l.clone();
            async move {
                l.record(&req.key, req.object.is_some(), req.retries);
                let value = req
                    .object
                    .as_ref()
                    .and_then(|cm| cm.data.as_ref()?.get("k").cloned());
                if req.key == "default/bad" && value.as_deref() == Some("v") {
                    return Err(ReconcileError::terminal(format!(
                        "{}: data.k {value:?} can never be valid",
                        req.key
                    )));
                }
                if req.key == "default/flaky" && req.retries == 0 {
                    // `?` on a plain error: retried.
                    Err::<(), _>("transient".to_owned())?;
                }
                Ok(Action::done())
            }
        },
        cancel.clone().cancelled_owned(),
    ));
    log.wait_for("bad once, flaky retried", |c| {
        c.iter().filter(|c| c.key == "default/flaky").count() == 2
            && c.iter().any(|c| c.key == "default/bad")
    })
    .await;
    // A retry would have come after 1 s; the terminal key stays out of the queue.
    tokio::time::sleep(Duration::from_secs(30)).await;
    assert_eq!(log.of("default/bad").len(), 1);
    assert_eq!(queue.num_requeues(&"default/bad".to_owned()), 0);
    let s = stats.snapshot();
    assert_eq!((s.terminal, s.errors, s.successes), (1, 1, 1), "{s:?}");
    let text = prometheus_text(&registry);
    let c = [("controller", "errors-test")];
    assert_eq!(
        sample(
            &text,
            "controller_runtime_terminal_reconcile_errors_total",
            &c
        ),
        1.0
    );
    assert_eq!(
        sample(&text, "controller_runtime_reconcile_errors_total", &c),
        2.0
    );
    assert_eq!(
        sample(
            &text,
            "controller_runtime_reconcile_total",
            &[("controller", "errors-test"), ("result", "error")]
        ),
        2.0
    );
    // One retry (flaky's); none for the terminal error.
    assert_eq!(
        sample(&text, "workqueue_retries_total", &[("name", "errors-test")]),
        1.0
    );

    // The fix reconciles it again.
    change_configmap(&server, "bad", "fixed");
    log.wait_for("bad after its change", |c| {
        c.iter().filter(|c| c.key == "default/bad").count() == 2
    })
    .await;
    cancel.cancel();
    let end = run.await.unwrap();
    assert_eq!(
        (end.terminal, end.errors, end.successes),
        (1, 1, 2),
        "{end:?}"
    );
    factory.shutdown().await;
    server.shutdown().await;
}

/// Sets its flag when dropped: the reconcile's future was cancelled (or finished).
struct Dropped(Arc<AtomicBool>);

impl Drop for Dropped {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

#[tokio::test(start_paused = true)]
async fn a_reconcile_past_its_timeout_is_cancelled_and_retried_with_backoff() {
    let server = TestApiServer::start().await.unwrap();
    configmap(&server, "slow");
    let registry = prometheus::Registry::new();
    let metrics = Arc::new(PrometheusControllerMetrics::new(&registry).unwrap());
    let factory = factory(client(&server));
    let controller = Controller::<ConfigMap>::builder(&factory)
        .name("timeout-test")
        .metrics(metrics)
        .reconcile_timeout(Duration::from_secs(5))
        .rate_limiter(ItemExponentialFailureRateLimiter::new(
            Duration::from_secs(2),
            Duration::from_secs(100),
        ))
        .build();
    let log = Log::new();
    let cancelled = Arc::new(AtomicBool::new(false));
    let finished = Arc::new(AtomicBool::new(false));
    let cancel = CancellationToken::new();
    let (l, c, f) = (log.clone(), cancelled.clone(), finished.clone());
    let run = tokio::spawn(controller.run(
        move |req| {
            let (l, c, f) = (l.clone(), c.clone(), f.clone());
            async move {
                l.record(&req.key, true, req.retries);
                if req.retries == 0 {
                    let _guard = Dropped(c);
                    tokio::time::sleep(Duration::from_secs(3600)).await;
                    f.store(true, Ordering::SeqCst);
                }
                Ok::<_, std::convert::Infallible>(Action::done())
            }
        },
        cancel.clone().cancelled_owned(),
    ));
    log.wait_for("the retry", |c| c.len() == 2).await;
    cancel.cancel();
    let stats = run.await.unwrap();
    assert!(
        cancelled.load(Ordering::SeqCst),
        "the first future was dropped"
    );
    assert!(!finished.load(Ordering::SeqCst), "and never ran to its end");
    let calls = log.of("default/slow");
    assert_eq!(calls[1].retries, 1);
    // Cancelled at 5 s, then retried after the limiter's 2 s.
    let gap = calls[1].at - calls[0].at;
    assert!(
        gap >= Duration::from_secs(7) && gap < Duration::from_secs(8),
        "{gap:?}"
    );
    assert_eq!((stats.timeouts, stats.successes, stats.errors), (1, 1, 0));
    let text = prometheus_text(&registry);
    let c = [("controller", "timeout-test")];
    assert_eq!(sample(&text, "kinform_reconcile_timeouts_total", &c), 1.0);
    assert_eq!(
        sample(&text, "controller_runtime_reconcile_errors_total", &c),
        1.0
    );
    assert_eq!(
        sample(
            &text,
            "controller_runtime_reconcile_total",
            &[("controller", "timeout-test"), ("result", "error")]
        ),
        1.0
    );
    factory.shutdown().await;
    server.shutdown().await;
}
