//! The resources added after Kubernetes 1.35 have typed clients, listers and informers when
//! the application's k8s-openapi version has them: `resource.k8s.io/v1beta2` DeviceTaintRule
//! (from the 1.36 spec, tested from 1.36 on), `storagemigration.k8s.io/v1`
//! StorageVersionMigration (1.37, promoted from v1beta1, whose verbs and `status` it takes)
//! and `lifecycle.k8s.io/v1alpha1` EvictionRequest (1.37, a new group with the generic
//! registry's verbs), from k8s-openapi's 1.37 sources.
//!
//! TestApiServer serves the v1.35 API, so each test registers its resource with
//! `TestApiServer::register_resource` as a built-in with the server's generic semantics (as
//! `server.rs` does for batch, rbac and networking): the typed clients' requests go over HTTP
//! to the paths the generator derived, and a wrong group, version, plural, scope or verb
//! answers 404 or 405. CI runs the whole suite at 1.37, where all three run.
//!
//! Run with `K8S_OPENAPI_ENABLED_VERSION=1.37 cargo test -p kinform-api --features all --test
//! suite later_versions`; at 1.35 the module is not compiled.

use std::time::Duration;

use kinform::client::{DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kinform::informer::InformerFactory;
use kinform::testing::{ResourceInfo, TestApiServer};
use kinform::{Client, Config};
use kinform_api::prelude::*;
use serde_json::json;

async fn setup() -> (TestApiServer, Client) {
    let server = TestApiServer::start().await.expect("server starts");
    server.create_namespace("demo").expect("namespace");
    let config = Config::new(server.url().parse().expect("url"));
    let client = Client::new(config).expect("client");
    (server, client)
}

fn object<T: serde::de::DeserializeOwned>(value: serde_json::Value) -> T {
    serde_json::from_value(value).expect("valid object")
}

/// Polls `check` until it holds (informer caches converge asynchronously; up to 5 s).
async fn eventually(mut check: impl FnMut() -> bool) -> bool {
    for _ in 0..500 {
        if check() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    check()
}

#[tokio::test]
async fn resource_v1beta2_device_taint_rules_from_the_1_36_spec() {
    use kinform::k8s_openapi::api::resource::v1beta2::DeviceTaintRule;

    let (server, client) = setup().await;
    server.register_resource(
        ResourceInfo::new(
            "resource.k8s.io",
            "v1beta2",
            "DeviceTaintRule",
            "devicetaintrules",
            false,
        )
        .with_status(),
    );
    let rules = client.resource_v1beta2().devicetaintrules();
    let rule: DeviceTaintRule = object(json!({
        "apiVersion": "resource.k8s.io/v1beta2", "kind": "DeviceTaintRule",
        "metadata": {"name": "gpu-maintenance"},
        "spec": {"taint": {"key": "maintenance", "effect": "NoSchedule"}}
    }));
    let created = rules
        .create(&PostParams::default(), &rule)
        .await
        .expect("create");
    assert_eq!(created.metadata.namespace, None, "cluster-scoped");
    assert_eq!(created.spec.taint.key, "maintenance");
    let got = rules.get("gpu-maintenance").await.expect("get");
    assert_eq!(got.metadata.uid, created.metadata.uid);
    let status = rules
        .patch_status(
            "gpu-maintenance",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"conditions": [{
                "type": "EvictionInProgress", "status": "False", "reason": "NotStarted",
                "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"
            }]}})),
        )
        .await
        .expect("patch status");
    let conditions = status.status.and_then(|s| s.conditions).unwrap_or_default();
    assert_eq!(conditions.len(), 1);
    assert_eq!(conditions[0].type_, "EvictionInProgress");
    let factory = InformerFactory::new(client.clone());
    let lister = factory.resource().v1beta2().devicetaintrules().lister();
    factory.start();
    factory
        .wait_for_cache_sync(Duration::from_secs(10))
        .await
        .expect("synced");
    assert!(lister.get("", "gpu-maintenance").is_some());
    rules
        .delete("gpu-maintenance", &DeleteParams::default())
        .await
        .expect("delete");
    assert!(
        rules
            .list(&ListParams::default())
            .await
            .expect("list")
            .items
            .is_empty()
    );
    assert!(eventually(|| lister.list_all().is_empty()).await);
    factory.shutdown().await;
}

kinform::k8s_openapi::k8s_if_ge_1_37! {
    #[tokio::test]
    async fn storagemigration_v1_promoted_with_status_and_informer() {
        use kinform::k8s_openapi::api::storagemigration::v1::StorageVersionMigration;

        let (server, client) = setup().await;
        server.register_resource(
            ResourceInfo::new(
                "storagemigration.k8s.io",
                "v1",
                "StorageVersionMigration",
                "storageversionmigrations",
                false,
            )
            .with_status(),
        );
        let migrations = client.storagemigration_v1().storageversionmigrations();
        let factory = InformerFactory::new(client.clone());
        let lister = factory.storagemigration().v1().storageversionmigrations().lister();
        factory.start();
        factory.wait_for_cache_sync(Duration::from_secs(10)).await.expect("synced");

        let migration: StorageVersionMigration = object(json!({
            "apiVersion": "storagemigration.k8s.io/v1", "kind": "StorageVersionMigration",
            "metadata": {"name": "secrets"},
            "spec": {"resource": {"group": "", "resource": "secrets"}}
        }));
        migrations.create(&PostParams::default(), &migration).await.expect("create");
        let done = migrations
            .patch_status(
                "secrets",
                &PatchParams::default(),
                &Patch::Merge(json!({"status": {"resourceVersion": "42"}})),
            )
            .await
            .expect("patch status");
        assert_eq!(done.status.and_then(|s| s.resource_version).as_deref(), Some("42"));
        assert!(
            eventually(|| lister
                .get("", "secrets")
                .and_then(|m| m.status.as_ref().and_then(|s| s.resource_version.clone()))
                .as_deref()
                == Some("42"))
            .await,
            "the informer sees the status write"
        );
        migrations.delete("secrets", &DeleteParams::default()).await.expect("delete");
        assert!(eventually(|| lister.list_all().is_empty()).await);
        factory.shutdown().await;
    }

    #[tokio::test]
    async fn lifecycle_v1alpha1_eviction_requests_in_a_new_group() {
        use kinform::k8s_openapi::api::lifecycle::v1alpha1::EvictionRequest;

        let (server, client) = setup().await;
        server.register_resource(ResourceInfo::new(
            "lifecycle.k8s.io",
            "v1alpha1",
            "EvictionRequest",
            "evictionrequests",
            true,
        ));
        let requests = client.lifecycle_v1alpha1().evictionrequests("demo");
        let request: EvictionRequest = object(json!({
            "apiVersion": "lifecycle.k8s.io/v1alpha1", "kind": "EvictionRequest",
            "metadata": {"name": "web-0", "namespace": "demo"},
            "spec": {
                "intent": "Evict", "requester": "example.com/drainer",
                "target": {"pod": {"name": "web-0", "uid": "u-1"}}
            }
        }));
        let created = requests.create(&PostParams::default(), &request).await.expect("create");
        assert_eq!(created.metadata.namespace.as_deref(), Some("demo"));
        assert_eq!(created.spec.requester, "example.com/drainer");
        let all = client.lifecycle_v1alpha1().evictionrequests("");
        assert_eq!(all.list(&ListParams::default()).await.expect("list all").items.len(), 1);

        let factory = InformerFactory::new(client.clone());
        let lister = factory.lifecycle().v1alpha1().evictionrequests().lister();
        factory.start();
        factory.wait_for_cache_sync(Duration::from_secs(10)).await.expect("synced");
        assert!(lister.get("demo", "web-0").is_some());
        requests
            .delete_collection(&DeleteParams::default(), &ListParams::default())
            .await
            .expect("delete collection");
        assert!(eventually(|| lister.list_all().is_empty()).await);
        factory.shutdown().await;
    }
}
