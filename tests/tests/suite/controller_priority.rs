//! `ControllerBuilder::priority_queue`: keys of the initial list are queued at LOW, watch
//! events at NORMAL, so a change made during the startup backlog is reconciled next; the
//! plain rate-limiting queue reconciles it after the whole backlog. A reconcile may requeue
//! its key at a priority of its choice.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use kinform::controller::{Action, Controller};
use kinform::testing::TestApiServer;
use kinform_tests::controller::{Log, client, configmap, factory};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

const LISTED: usize = 20;

/// The position of `default/fresh` among the reconciles: one worker, the first reconcile held
/// until the fresh object's watch event is queued behind the listed keys.
async fn position_of_fresh(priority: bool) -> usize {
    let server = TestApiServer::start().await.unwrap();
    for i in 0..LISTED {
        configmap(&server, &format!("cm-{i}"));
    }
    let factory = factory(client(&server));
    let controller = Controller::<ConfigMap>::builder(&factory)
        .workers(1)
        .priority_queue(priority)
        .build();
    assert_eq!(controller.queue().as_priority().is_some(), priority);
    let queue = controller.queue().clone();
    let log = Log::new();
    let gate = Arc::new(Semaphore::new(0));
    let cancel = CancellationToken::new();
    let run = {
        let (log, gate) = (log.clone(), gate.clone());
        tokio::spawn(controller.run(
            move |req| {
                let (log, gate) = (log.clone(), gate.clone());
                async move {
                    let first = log.calls.lock().is_empty();
                    log.record(&req.key, req.object.is_some(), req.retries);
                    if first {
                        gate.acquire().await.unwrap().forget();
                    }
                    Ok::<_, std::convert::Infallible>(Action::done())
                }
            },
            cancel.clone().cancelled_owned(),
        ))
    };
    log.wait_for("the first reconcile", |c| !c.is_empty()).await;
    configmap(&server, "fresh");
    tokio::time::timeout(Duration::from_secs(30), async {
        while queue.len() < LISTED {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .expect("the fresh object's event is queued");
    gate.add_permits(1);
    log.wait_for("every object", |c| c.len() > LISTED).await;
    cancel.cancel();
    run.await.unwrap();
    factory.shutdown().await;
    server.shutdown().await;
    let calls = log.calls.lock();
    calls.iter().position(|c| c.key == "default/fresh").unwrap()
}

#[tokio::test]
async fn priority_queue_reconciles_events_ahead_of_the_initial_list() {
    assert_eq!(position_of_fresh(true).await, 1);
    assert_eq!(position_of_fresh(false).await, LISTED);
}

/// Where the second reconcile of the first key lands among the reconciles, when its first
/// reconcile answers `action`: one worker, every listed key queued at LOW before it starts.
async fn position_of_requeue(action: Action, priority_queue: bool) -> usize {
    let server = TestApiServer::start().await.unwrap();
    for i in 0..LISTED {
        configmap(&server, &format!("cm-{i}"));
    }
    let factory = factory(client(&server));
    let controller = Controller::<ConfigMap>::builder(&factory)
        .workers(1)
        .priority_queue(priority_queue)
        .build();
    let log = Log::new();
    let cancel = CancellationToken::new();
    let run = {
        let log = log.clone();
        tokio::spawn(controller.run(
            move |req| {
                let log = log.clone();
                async move {
                    let first = log.calls.lock().is_empty();
                    log.record(&req.key, req.object.is_some(), req.retries);
                    Ok::<_, std::convert::Infallible>(if first { action } else { Action::done() })
                }
            },
            cancel.clone().cancelled_owned(),
        ))
    };
    log.wait_for("every key and the requeue", |c| c.len() > LISTED)
        .await;
    cancel.cancel();
    run.await.unwrap();
    factory.shutdown().await;
    server.shutdown().await;
    let calls = log.calls.lock();
    let first = calls[0].key.clone();
    calls.iter().skip(1).position(|c| c.key == first).unwrap() + 1
}

#[tokio::test]
async fn a_reconcile_requeues_at_the_priority_it_names() {
    // Ahead of the listed keys it was queued with.
    let urgent = Action::requeue(kinform::workqueue::Priority(10));
    assert_eq!(position_of_requeue(urgent, true).await, 1);
    // Without a priority: the LOW it was handed out at, so behind them (FIFO).
    let plain = Action::requeue_after(Duration::ZERO);
    assert_eq!(position_of_requeue(plain, true).await, LISTED);
    // The plain rate-limiting queue ignores priorities.
    assert_eq!(position_of_requeue(urgent, false).await, LISTED);
}
