//! The finalizer helper over HTTP against TestApiServer: the finalizer goes on before any
//! work, a delete waits for the cleanup, another controller's finalizer is kept, and a
//! concurrent change of the finalizers is a conflict, not a lost write.

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use k8s_openapi::api::core::v1::ConfigMap;
use kinform::Api;
use kinform::client::DeleteParams;
use kinform::controller::{
    Action, Controller, FinalizerError, FinalizerEvent, FinalizerWrite, finalizer,
};
use kinform::testing::TestApiServer;
use kinform_tests::controller::{Log, client, factory};
use serde_json::json;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

const OURS: &str = "example.com/release-bucket";
const OTHER: &str = "example.com/other";

fn finalizers(cm: &ConfigMap) -> Vec<String> {
    cm.metadata.finalizers.clone().unwrap_or_default()
}

fn set_finalizers(server: &TestApiServer, name: &str, list: &[&str]) {
    server
        .merge_patch_object(
            "v1",
            "ConfigMap",
            Some("default"),
            name,
            &json!({"metadata": {"finalizers": list}}),
        )
        .unwrap();
}

#[tokio::test]
async fn the_finalizer_goes_on_first_and_a_delete_waits_for_the_cleanup() {
    let server = TestApiServer::start().await.unwrap();
    server
        .create_object(json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "bucket", "namespace": "default", "finalizers": [OTHER]}
        }))
        .unwrap();
    let client = client(&server);
    let api: Api<ConfigMap> = Api::all(client.clone());
    let factory = factory(client.clone());
    let controller = Controller::<ConfigMap>::builder(&factory).build();
    let log = Log::new();
    let cleanup_may_end = Arc::new(Semaphore::new(0));
    let cancel = CancellationToken::new();
    let run = {
        let (log, gate, api) = (log.clone(), cleanup_may_end.clone(), api.clone());
        tokio::spawn(controller.run(
            move |req| {
                let (log, gate, api) = (log.clone(), gate.clone(), api.clone());
                async move {
                    let Some(object) = req.object else {
                        log.record("gone", false, req.retries);
                        return Ok(Action::done());
                    };
                    finalizer(&api, OURS, object, |event| async move {
                        match event {
                            FinalizerEvent::Apply(cm) => {
                                // The work sees the finalizer in place.
                                let held = finalizers(&cm).iter().any(|f| f == OURS);
                                log.record("apply", held, req.retries);
                            }
                            FinalizerEvent::Cleanup(cm) => {
                                log.record("cleanup", cm.metadata.deletion_timestamp.is_some(), 0);
                                gate.acquire().await.unwrap().forget();
                            }
                        }
                        Ok::<_, Infallible>(Action::done())
                    })
                    .await
                }
            },
            cancel.clone().cancelled_owned(),
        ))
    };
    log.wait_for("the first apply", |c| c.iter().any(|c| c.key == "apply"))
        .await;
    assert!(
        log.of("apply")[0].present,
        "apply ran with the finalizer on"
    );
    let stored = Api::<ConfigMap>::namespaced(client.clone(), "default")
        .get("bucket")
        .await
        .unwrap();
    assert_eq!(finalizers(&stored), [OTHER, OURS]);

    let ns_api = Api::<ConfigMap>::namespaced(client.clone(), "default");
    ns_api
        .delete("bucket", &DeleteParams::default())
        .await
        .unwrap();
    log.wait_for("the cleanup", |c| c.iter().any(|c| c.key == "cleanup"))
        .await;
    assert!(
        log.of("cleanup")[0].present,
        "cleanup sees the deletion mark"
    );
    // The object waits for the cleanup.
    let waiting = ns_api.get("bucket").await.unwrap();
    assert!(waiting.metadata.deletion_timestamp.is_some());
    assert_eq!(finalizers(&waiting), [OTHER, OURS]);
    cleanup_may_end.add_permits(1);
    // Ours is removed; the other controller's stays, and holds the object.
    assert!(
        kinform_tests::eventually(std::time::Duration::from_secs(30), async || {
            ns_api
                .get("bucket")
                .await
                .is_ok_and(|cm| finalizers(&cm) == [OTHER])
        })
        .await
    );
    assert!(log.of("gone").is_empty());
    set_finalizers(&server, "bucket", &[]);
    log.wait_for("the object gone", |c| c.iter().any(|c| c.key == "gone"))
        .await;
    assert!(ns_api.get_opt("bucket").await.unwrap().is_none());
    assert_eq!(log.of("cleanup").len(), 1);

    cancel.cancel();
    let stats = run.await.unwrap();
    assert_eq!(stats.errors, 0, "{stats:?}");
    factory.shutdown().await;
    server.shutdown().await;
}

#[tokio::test]
async fn a_concurrent_change_of_the_finalizers_is_a_conflict_not_a_lost_write() {
    let server = TestApiServer::start().await.unwrap();
    server
        .create_object(json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "bucket", "namespace": "default"}
        }))
        .unwrap();
    let api = Api::<ConfigMap>::namespaced(client(&server), "default");
    let calls = AtomicUsize::new(0);
    let run = |object: ConfigMap| {
        finalizer(&api, OURS, Arc::new(object), |_event| async {
            calls.fetch_add(1, Ordering::SeqCst);
            Ok::<_, Infallible>(Action::done())
        })
    };

    // Adding, from a copy read before another controller put its finalizer on.
    let stale = api.get("bucket").await.unwrap();
    set_finalizers(&server, "bucket", &[OTHER]);
    match run(stale).await {
        Err(FinalizerError::Conflict { write, key, .. }) => {
            assert_eq!(
                (write, key.as_str()),
                (FinalizerWrite::Add, "default/bucket")
            );
        }
        other => panic!("expected a conflict, got {other:?}"),
    }
    assert_eq!(
        calls.load(Ordering::SeqCst),
        0,
        "no work without the finalizer"
    );
    assert_eq!(finalizers(&api.get("bucket").await.unwrap()), [OTHER]);
    assert_eq!(
        run(api.get("bucket").await.unwrap()).await.unwrap(),
        Action::done()
    );
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert_eq!(finalizers(&api.get("bucket").await.unwrap()), [OTHER, OURS]);

    // Removing, from a copy read before the other finalizer went (ours moved to index 0).
    api.delete("bucket", &DeleteParams::default())
        .await
        .unwrap();
    let stale = api.get("bucket").await.unwrap();
    set_finalizers(&server, "bucket", &[OURS]);
    let err = run(stale).await.unwrap_err();
    assert!(err.is_conflict(), "{err}");
    assert_eq!(calls.load(Ordering::SeqCst), 2, "the cleanup ran");
    let kept = api.get("bucket").await.unwrap();
    assert_eq!(
        finalizers(&kept),
        [OURS],
        "ours stays until a removal succeeds"
    );
    // The retry, on the fresh object, runs the cleanup again and lets the object go.
    assert_eq!(run(kept).await.unwrap(), Action::done());
    assert_eq!(calls.load(Ordering::SeqCst), 3);
    assert!(api.get_opt("bucket").await.unwrap().is_none());

    // A bad name is refused before any request.
    let object = Arc::new(ConfigMap::default());
    let err = finalizer(&api, "Example.com/x", object, |_| async {
        Ok::<_, Infallible>(Action::done())
    })
    .await
    .unwrap_err();
    assert!(matches!(err, FinalizerError::InvalidName { .. }), "{err}");
    server.shutdown().await;
}
