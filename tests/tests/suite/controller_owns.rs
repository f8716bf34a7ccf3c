//! Related objects reach their owner's key: `owns` through controller references, `watches`
//! through a mapper; and the reconcile metrics hooks.

use std::sync::Arc;

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use k8s_openapi::api::core::v1::ConfigMap;
use kinform::HasMetadata;
use kinform::controller::{Action, Controller, controller_reference, key_of};
use kinform::testing::TestApiServer;
use kinform_tests::controller::{Log, client, deployment, factory, run_recording};
use serde_json::json;
use tokio_util::sync::CancellationToken;

fn replica_set(server: &TestApiServer, name: &str, owner: Option<&Deployment>, controller: bool) {
    let mut refs = Vec::new();
    if let Some(owner) = owner {
        let mut r = controller_reference(owner);
        r.controller = Some(controller);
        refs.push(serde_json::to_value(r).unwrap());
    }
    server
        .create_object(json!({
            "apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": name, "namespace": "default", "ownerReferences": refs},
            "spec": {
                "selector": {"matchLabels": {"app": name}},
                "template": {"metadata": {"labels": {"app": name}},
                             "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
            }
        }))
        .unwrap();
}

#[tokio::test]
async fn owned_and_mapped_objects_reconcile_their_owner() {
    let server = TestApiServer::start().await.unwrap();
    let web = deployment(&server, "web");
    let api = deployment(&server, "api");
    let factory = factory(client(&server));
    let controller = Controller::<Deployment>::builder(&factory)
        .owns::<ReplicaSet>()
        .watches(|cm: &ConfigMap| {
            cm.metadata
                .labels
                .as_ref()
                .and_then(|l| l.get("for-deployment"))
                .map(|d| key_of::<Deployment>(cm.namespace(), d))
        })
        .build();
    let log = Log::new();
    let cancel = CancellationToken::new();
    let run = run_recording(controller, &log, &cancel);
    let count = |calls: &[kinform_tests::controller::Call], key: &str| {
        calls.iter().filter(|c| c.key == key).count()
    };
    log.wait_for("both deployments", |c| {
        count(c, "default/web") >= 1 && count(c, "default/api") >= 1
    })
    .await;
    // Settle: nothing else is queued now.
    let (web0, api0) = {
        let c = log.calls.lock();
        (count(&c, "default/web"), count(&c, "default/api"))
    };

    // A ReplicaSet controlled by web reconciles web; one with a non-controller reference and
    // an orphan reconcile nothing; the ConfigMap pointing at api reconciles api.
    replica_set(&server, "plain", Some(&api), false);
    replica_set(&server, "orphan", None, false);
    replica_set(&server, "web-1", Some(&web), true);
    server
        .create_object(json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "settings", "namespace": "default",
                         "labels": {"for-deployment": "api"}}
        }))
        .unwrap();
    log.wait_for("web via its ReplicaSet and api via the ConfigMap", |c| {
        count(c, "default/web") > web0 && count(c, "default/api") > api0
    })
    .await;
    // The keys queued were only ever those of Deployments.
    assert!(
        log.calls
            .lock()
            .iter()
            .all(|c| c.key == "default/web" || c.key == "default/api"),
        "{:?}",
        log.calls.lock()
    );
    cancel.cancel();
    run.await.unwrap();
    factory.shutdown().await;
    server.shutdown().await;
}

#[tokio::test]
async fn prometheus_metrics_count_reconciles_and_queue_activity() {
    use kinform::controller::PrometheusControllerMetrics;
    let server = TestApiServer::start().await.unwrap();
    deployment(&server, "web");
    deployment(&server, "api");
    let registry = prometheus::Registry::new();
    let metrics = Arc::new(PrometheusControllerMetrics::new(&registry).unwrap());
    let factory = factory(client(&server));
    let controller = Controller::<Deployment>::builder(&factory)
        .name("deployments-test")
        .metrics(metrics)
        .build();
    let log = Log::new();
    let cancel = CancellationToken::new();
    let l = log.clone();
    let run = tokio::spawn(controller.run(
        move |req| {
            let l = l.clone();
            async move {
                l.record(&req.key, true, req.retries);
                if req.key == "default/api" && req.retries == 0 {
                    return Err("first attempt fails");
                }
                Ok(Action::done())
            }
        },
        cancel.clone().cancelled_owned(),
    ));
    log.wait_for("web once, api twice", |c| {
        c.iter().filter(|c| c.key == "default/api").count() == 2
            && c.iter().any(|c| c.key == "default/web")
    })
    .await;
    cancel.cancel();
    let stats = run.await.unwrap();
    let text = prometheus::TextEncoder::new()
        .encode_to_string(&registry.gather())
        .unwrap();
    // Sums the samples of `name` whose labels include every one of `labels`.
    let value = |name: &str, labels: &[(&str, &str)]| -> f64 {
        text.lines()
            .filter(|l| !l.starts_with('#'))
            .filter_map(|l| l.rsplit_once(' '))
            .filter(|(series, _)| {
                let metric = series.split('{').next().unwrap_or_default();
                metric == name
                    && labels
                        .iter()
                        .all(|(k, v)| series.contains(&format!("{k}=\"{v}\"")))
            })
            .map(|(_, v)| v.parse::<f64>().unwrap())
            .sum()
    };
    let c = [("controller", "deployments-test")];
    assert_eq!(
        value(
            "controller_runtime_reconcile_total",
            &[("controller", "deployments-test"), ("result", "success")]
        ),
        stats.successes as f64
    );
    assert_eq!(value("controller_runtime_reconcile_errors_total", &c), 1.0);
    assert_eq!(value("controller_runtime_reconcile_panics_total", &c), 0.0);
    assert_eq!(
        value("controller_runtime_reconcile_time_seconds_count", &c),
        stats.reconciles as f64
    );
    assert_eq!(value("controller_runtime_active_workers", &c), 0.0);
    let q = [("name", "deployments-test")];
    assert!(value("workqueue_adds_total", &q) >= 3.0);
    assert_eq!(value("workqueue_retries_total", &q), 1.0);
    factory.shutdown().await;
    server.shutdown().await;
}
