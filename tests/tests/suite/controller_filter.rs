//! Event filters: `ControllerBuilder::filter` on the controller's own type and
//! `filter_related` on a watched type decide which updates queue a key; adds always do, and
//! the generation filter lets the deletion mark through.

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::ConfigMap;
use kinform::Api;
use kinform::client::DeleteParams;
use kinform::controller::{Controller, Filter, key_of};
use kinform::testing::TestApiServer;
use kinform_tests::controller::{
    Call, Log, change_configmap, client, configmap, deployment, factory, run_recording,
};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// Reconciles of web among `calls`.
fn webs(calls: &[Call]) -> usize {
    calls.iter().filter(|c| c.key == "default/web").count()
}

fn patch_web(server: &TestApiServer, patch: Value) {
    server
        .merge_patch_object("apps/v1", "Deployment", Some("default"), "web", &patch)
        .unwrap();
}

#[tokio::test]
async fn filters_decide_which_updates_reconcile() {
    let server = TestApiServer::start().await.unwrap();
    deployment(&server, "web");
    configmap(&server, "settings");
    let client = client(&server);
    let factory = factory(client.clone());
    // `settings` maps to web, any other ConfigMap to the Deployment of its name.
    let controller = Controller::<Deployment>::builder(&factory)
        .workers(1)
        .filter(Filter::generation_changed())
        .watches(|cm: &ConfigMap| {
            let name = cm.metadata.name.as_deref().unwrap_or_default();
            let target = if name == "settings" { "web" } else { name };
            [key_of::<Deployment>(Some("default"), target)]
        })
        .filter_related::<ConfigMap>(Filter::annotations_changed())
        .build();
    let log = Log::new();
    let cancel = CancellationToken::new();
    let run = run_recording(controller, &log, &cancel);
    let web = || log.of("default/web").len();
    // A probe is an add (never filtered) on the informer of the change before it: with one
    // worker, a key queued by that change would be reconciled before the probe's.
    let deployment_probe = |n: usize| {
        deployment(&server, &format!("probe-{n}"));
        let key = format!("default/probe-{n}");
        let log = log.clone();
        async move { log.wait_for(&key, |c| c.iter().any(|c| c.key == key)).await }
    };
    let configmap_probe = |n: usize| {
        configmap(&server, &format!("cm-probe-{n}"));
        let key = format!("default/cm-probe-{n}");
        let log = log.clone();
        async move { log.wait_for(&key, |c| c.iter().any(|c| c.key == key)).await }
    };
    log.wait_for("web", |c| c.iter().any(|c| c.key == "default/web"))
        .await;
    deployment_probe(0).await;
    configmap_probe(0).await;
    let start = web();

    // Metadata and data changes: same generation, no annotation change.
    patch_web(&server, json!({"metadata": {"labels": {"tier": "front"}}}));
    deployment_probe(1).await;
    change_configmap(&server, "settings", "other");
    configmap_probe(1).await;
    assert_eq!(web(), start, "{:?}", log.calls.lock());

    // A spec change is a new generation.
    patch_web(&server, json!({"spec": {"replicas": 3}}));
    log.wait_for("web after its spec change", |c| webs(c) == start + 1)
        .await;
    // An annotation of the related ConfigMap passes its filter.
    server
        .merge_patch_object(
            "v1",
            "ConfigMap",
            Some("default"),
            "settings",
            &json!({"metadata": {"annotations": {"reload": "1"}}}),
        )
        .unwrap();
    log.wait_for("web after the annotation", |c| webs(c) == start + 2)
        .await;

    // The deletion mark of a finalized object passes the generation filter.
    patch_web(
        &server,
        json!({"metadata": {"finalizers": ["example.com/hold"]}}),
    );
    deployment_probe(2).await;
    assert_eq!(web(), start + 2);
    let api = Api::<Deployment>::namespaced(client, "default");
    api.delete("web", &DeleteParams::default()).await.unwrap();
    log.wait_for("web after its deletion mark", |c| webs(c) == start + 3)
        .await;
    assert!(log.of("default/web").last().unwrap().present);
    patch_web(&server, json!({"metadata": {"finalizers": null}}));
    log.wait_for("web gone", |c| {
        c.iter()
            .rev()
            .find(|c| c.key == "default/web")
            .is_some_and(|c| !c.present)
    })
    .await;

    cancel.cancel();
    run.await.unwrap();
    factory.shutdown().await;
    server.shutdown().await;
}
