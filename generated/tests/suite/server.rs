//! The generated clients and informers against TestApiServer, across groups: core, apps,
//! batch, coordination, rbac, networking and apiextensions. TestApiServer serves core, apps,
//! coordination and apiextensions resources from the start; the batch, rbac and networking
//! resources are registered with `TestApiServer::register_resource`, as built-ins with the
//! server's generic semantics.
//!
//! Run with `cargo test -p kinform-api --features all` (the test needs those seven groups).

use std::time::Duration;

use futures_util::StreamExt;
use kinform::client::{DeleteParams, ListParams, Patch, PatchParams, PostParams, WatchParams};
use kinform::informer::InformerFactory;
use kinform::k8s_openapi::api::apps::v1::Deployment;
use kinform::k8s_openapi::api::autoscaling::v1::Scale;
use kinform::k8s_openapi::api::batch::v1::Job;
use kinform::k8s_openapi::api::coordination::v1::Lease;
use kinform::k8s_openapi::api::core::v1::{ConfigMap, Pod};
use kinform::k8s_openapi::api::networking::v1::Ingress;
use kinform::k8s_openapi::api::rbac::v1::{ClusterRole, Role};
use kinform::k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kinform::testing::{ResourceInfo, TestApiServer};
use kinform::{Client, Config, WatchEvent};
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

fn pod(name: &str) -> Pod {
    object(json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "demo", "labels": {"app": "web"}},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]}
    }))
}

fn deployment(name: &str, replicas: i32) -> Deployment {
    object(json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": "demo"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]}
            }
        }
    }))
}

/// `.spec.replicas` of a Deployment, through its JSON: `spec` is an `Option` in k8s-openapi up
/// to v1_36 and required from v1_37 on, and this crate builds at every supported version.
fn spec_replicas(d: &Deployment) -> Option<i32> {
    let v = serde_json::to_value(d).expect("serializes");
    v["spec"]["replicas"]
        .as_i64()
        .and_then(|r| i32::try_from(r).ok())
}

/// Polls `check` until it holds: informer caches converge asynchronously (a convergence wait
/// of up to 5 s, as the runtime's informer tests do; nothing asserts on timing).
async fn eventually(mut check: impl FnMut() -> bool) -> bool {
    for _ in 0..500 {
        if check() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    check()
}

/// Starts `factory`'s informers and waits until their caches have synced.
async fn start_synced(factory: &InformerFactory) {
    factory.start();
    factory
        .wait_for_cache_sync(Duration::from_secs(10))
        .await
        .expect("synced");
}

#[tokio::test]
async fn core_pods_crud_status_and_watch() {
    let (_server, client) = setup().await;
    let pods = client.core_v1().pods("demo");
    let pp = PostParams::default();

    let created = pods.create(&pp, &pod("web-0")).await.expect("create");
    assert_eq!(created.metadata.namespace.as_deref(), Some("demo"));
    pods.create(&pp, &pod("web-1")).await.expect("create");

    let got = pods.get("web-0").await.expect("get");
    assert_eq!(got.metadata.uid, created.metadata.uid);

    let list = pods.list(&ListParams::default()).await.expect("list");
    let mut names: Vec<_> = list
        .items
        .iter()
        .filter_map(|p| p.metadata.name.clone())
        .collect();
    names.sort();
    assert_eq!(names, ["web-0", "web-1"]);
    // `""`: all namespaces.
    let all = client
        .core_v1()
        .pods("")
        .list(&ListParams::default())
        .await
        .expect("list all");
    assert_eq!(all.items.len(), 2);

    let patched = pods
        .patch(
            "web-0",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"tier": "front"}}})),
        )
        .await
        .expect("patch");
    assert_eq!(
        patched
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get("tier"))
            .map(String::as_str),
        Some("front")
    );

    // Status subresource: a status write changes status, not spec or labels.
    let status = pods
        .patch_status(
            "web-0",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"phase": "Running"}})),
        )
        .await
        .expect("patch status");
    assert_eq!(
        status.status.as_ref().and_then(|s| s.phase.as_deref()),
        Some("Running")
    );
    let read = pods.get_status("web-0").await.expect("get status");
    assert_eq!(
        read.status.and_then(|s| s.phase).as_deref(),
        Some("Running")
    );

    // Watch through the generated client sees a delete.
    let rv = list.metadata.resource_version.clone();
    let mut events = pods
        .watch(&WatchParams {
            resource_version: rv,
            ..WatchParams::default()
        })
        .await
        .expect("watch");
    pods.delete("web-1", &DeleteParams::default())
        .await
        .expect("delete");
    let deleted = loop {
        match events.next().await.expect("event").expect("no watch error") {
            WatchEvent::Deleted(p) => break p,
            WatchEvent::Added(_) | WatchEvent::Modified(_) | WatchEvent::Bookmark(_) => {}
            WatchEvent::Error(s) => panic!("watch error {s:?}"),
        }
    };
    assert_eq!(deleted.metadata.name.as_deref(), Some("web-1"));
    assert!(pods.get("web-1").await.is_err(), "deleted");

    // configmaps: replace and delete_collection.
    let cms = client.core_v1().configmaps("demo");
    let mut cm: ConfigMap = object(json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "cfg", "namespace": "demo"}, "data": {"k": "v1"}
    }));
    cm = cms.create(&pp, &cm).await.expect("create cm");
    cm.data = Some([("k".to_owned(), "v2".to_owned())].into());
    let replaced = cms.replace("cfg", &pp, &cm).await.expect("replace");
    assert_eq!(replaced.data.unwrap()["k"], "v2");
    cms.delete_collection(&DeleteParams::default(), &ListParams::default())
        .await
        .expect("delete collection");
    assert!(
        cms.list(&ListParams::default())
            .await
            .expect("list")
            .items
            .is_empty()
    );
}

#[tokio::test]
async fn apps_deployments_scale_status_and_informer() {
    let (_server, client) = setup().await;
    let deployments = client.apps_v1().deployments("demo");
    let pp = PostParams::default();
    deployments
        .create(&pp, &deployment("api", 2))
        .await
        .expect("create");

    // Scale subresource (autoscaling/v1 Scale).
    let scale: Scale = deployments.get_scale("api").await.expect("get scale");
    assert_eq!(scale.spec.as_ref().and_then(|s| s.replicas), Some(2));
    let scaled = deployments
        .patch_scale(
            "api",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": 5}})),
        )
        .await
        .expect("patch scale");
    assert_eq!(scaled.spec.and_then(|s| s.replicas), Some(5));
    let mut scale = deployments.get_scale("api").await.expect("get scale");
    scale.spec.get_or_insert_default().replicas = Some(3);
    deployments
        .replace_scale("api", &pp, &scale)
        .await
        .expect("replace scale");
    let d = deployments.get("api").await.expect("get");
    assert_eq!(spec_replicas(&d), Some(3));

    // Status subresource.
    let mut d = deployments.get_status("api").await.expect("get status");
    d.status.get_or_insert_default().ready_replicas = Some(3);
    let d = deployments
        .replace_status("api", &pp, &d)
        .await
        .expect("replace status");
    assert_eq!(d.status.and_then(|s| s.ready_replicas), Some(3));

    // factory.apps().v1().deployments(): informer + lister.
    let factory = InformerFactory::new(client.clone());
    let handle = factory.apps().v1().deployments();
    let lister = handle.lister();
    let _informer = handle.informer();
    start_synced(&factory).await;
    assert_eq!(
        lister.get("demo", "api").and_then(|d| spec_replicas(&d)),
        Some(3)
    );
    deployments
        .create(&pp, &deployment("worker", 1))
        .await
        .expect("create");
    assert!(eventually(|| lister.get("demo", "worker").is_some()).await);
    deployments
        .delete("api", &DeleteParams::default())
        .await
        .expect("delete");
    assert!(eventually(|| lister.get("demo", "api").is_none()).await);
    assert_eq!(lister.namespaced("demo").list_all().len(), 1);
    factory.shutdown().await;
}

#[tokio::test]
async fn batch_jobs_registered_as_builtins() {
    let (server, client) = setup().await;
    server.register_resource(ResourceInfo::new("batch", "v1", "Job", "jobs", true).with_status());
    let jobs = client.batch_v1().jobs("demo");
    let job: Job = object(json!({
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": "migrate", "namespace": "demo"},
        "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}}
    }));
    jobs.create(&PostParams::default(), &job)
        .await
        .expect("create");
    let done = jobs
        .patch_status(
            "migrate",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"succeeded": 1}})),
        )
        .await
        .expect("patch status");
    assert_eq!(done.status.and_then(|s| s.succeeded), Some(1));
    assert_eq!(
        jobs.list(&ListParams::default())
            .await
            .expect("list")
            .items
            .len(),
        1
    );

    let factory = InformerFactory::new(client.clone());
    let lister = factory.batch().v1().jobs().lister();
    start_synced(&factory).await;
    assert!(lister.get("demo", "migrate").is_some());
    jobs.delete("migrate", &DeleteParams::background())
        .await
        .expect("delete");
    assert!(eventually(|| lister.list_all().is_empty()).await);
    factory.shutdown().await;
}

#[tokio::test]
async fn coordination_leases() {
    let (_server, client) = setup().await;
    let leases = client.coordination_v1().leases("demo");
    let lease: Lease = object(json!({
        "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
        "metadata": {"name": "leader", "namespace": "demo"},
        "spec": {"holderIdentity": "a", "leaseDurationSeconds": 15}
    }));
    let mut lease = leases
        .create(&PostParams::default(), &lease)
        .await
        .expect("create");
    lease.spec.get_or_insert_default().holder_identity = Some("b".into());
    let renewed = leases
        .replace("leader", &PostParams::default(), &lease)
        .await
        .expect("replace");
    assert_eq!(
        renewed.spec.and_then(|s| s.holder_identity).as_deref(),
        Some("b")
    );
    // A stale resourceVersion conflicts (optimistic concurrency through the typed client).
    let err = leases
        .replace("leader", &PostParams::default(), &lease)
        .await
        .expect_err("stale write");
    assert!(
        err.to_string().contains("409") || err.to_string().to_lowercase().contains("conflict"),
        "{err}"
    );

    let factory = InformerFactory::new(client.clone());
    let lister = factory.coordination().v1().leases().lister();
    start_synced(&factory).await;
    assert_eq!(
        lister
            .get("demo", "leader")
            .and_then(|l| l.spec.as_ref().and_then(|s| s.holder_identity.clone()))
            .as_deref(),
        Some("b")
    );
    factory.shutdown().await;
}

#[tokio::test]
async fn rbac_roles_and_cluster_roles() {
    let (server, client) = setup().await;
    let g = "rbac.authorization.k8s.io";
    server.register_resource(ResourceInfo::new(g, "v1", "Role", "roles", true));
    server.register_resource(ResourceInfo::new(
        g,
        "v1",
        "ClusterRole",
        "clusterroles",
        false,
    ));

    let role: Role = object(json!({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
        "metadata": {"name": "reader", "namespace": "demo"},
        "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}]
    }));
    let roles = client.rbac_v1().roles("demo");
    roles
        .create(&PostParams::default(), &role)
        .await
        .expect("create role");
    let got = roles.get("reader").await.expect("get role");
    assert_eq!(got.rules.map(|r| r.len()), Some(1));

    // Cluster-scoped: the accessor takes no namespace.
    let cluster_roles = client.rbac_v1().clusterroles();
    let cr: ClusterRole = object(json!({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": "viewer", "labels": {"scope": "cluster"}}
    }));
    let created = cluster_roles
        .create(&PostParams::default(), &cr)
        .await
        .expect("create");
    assert_eq!(created.metadata.namespace, None);
    let patched = cluster_roles
        .patch(
            "viewer",
            &PatchParams::default(),
            &Patch::<()>::Json(json!([{"op": "add", "path": "/rules", "value": [{"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["watch"]}]}])),
        )
        .await
        .expect("json patch");
    assert_eq!(patched.rules.map(|r| r.len()), Some(1));

    let factory = InformerFactory::new(client.clone());
    let lister = factory.rbac().v1().clusterroles().lister();
    start_synced(&factory).await;
    assert!(lister.get("", "viewer").is_some());
    factory.shutdown().await;
    cluster_roles
        .delete("viewer", &DeleteParams::default())
        .await
        .expect("delete");
    assert!(
        cluster_roles
            .list(&ListParams::default())
            .await
            .expect("list")
            .items
            .is_empty()
    );
}

#[tokio::test]
async fn networking_ingress_with_status() {
    let (server, client) = setup().await;
    server.register_resource(
        ResourceInfo::new("networking.k8s.io", "v1", "Ingress", "ingresses", true).with_status(),
    );
    let ingresses = client.networking_v1().ingresses("demo");
    let ing: Ingress = object(json!({
        "apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
        "metadata": {"name": "web", "namespace": "demo"},
        "spec": {"defaultBackend": {"service": {"name": "web", "port": {"number": 80}}}}
    }));
    ingresses
        .create(&PostParams::default(), &ing)
        .await
        .expect("create");
    let with_status = ingresses
        .patch_status(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"loadBalancer": {"ingress": [{"ip": "10.0.0.1"}]}}})),
        )
        .await
        .expect("patch status");
    let ip = with_status
        .status
        .and_then(|s| s.load_balancer)
        .and_then(|lb| lb.ingress)
        .and_then(|i| i.into_iter().next())
        .and_then(|i| i.ip);
    assert_eq!(ip.as_deref(), Some("10.0.0.1"));
    // A spec write through the main resource leaves the status alone.
    let mut spec_only = ingresses.get("web").await.expect("get");
    spec_only.status = None;
    let kept = ingresses
        .replace("web", &PostParams::default(), &spec_only)
        .await
        .expect("replace");
    assert!(kept.status.and_then(|s| s.load_balancer).is_some());
}

#[tokio::test]
async fn apiextensions_crds_client_and_informer() {
    let (_server, client) = setup().await;
    let crds = client.apiextensions_v1().customresourcedefinitions();
    let crd: CustomResourceDefinition = object(json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com", "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]
        }
    }));
    crds.create(&PostParams::default(), &crd)
        .await
        .expect("create crd");
    let got = crds.get("widgets.example.com").await.expect("get crd");
    assert_eq!(got.spec.names.kind, "Widget");
    let status = crds
        .get_status("widgets.example.com")
        .await
        .expect("get status");
    assert_eq!(status.metadata.name.as_deref(), Some("widgets.example.com"));

    let factory = InformerFactory::new(client.clone());
    let lister = factory
        .apiextensions()
        .v1()
        .customresourcedefinitions()
        .lister();
    start_synced(&factory).await;
    assert!(lister.get("", "widgets.example.com").is_some());
    crds.delete("widgets.example.com", &DeleteParams::default())
        .await
        .expect("delete");
    assert!(eventually(|| lister.list_all().is_empty()).await);
    factory.shutdown().await;
}
