//! The example's controller against TestApiServer: the Deployments and Foo statuses it
//! produces, after creations, an update and a deletion, and the refusal to adopt.

#![allow(clippy::disallowed_names)]

use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::events::v1::Event;
use kinform::CancellationToken;
use kinform::client::{DeleteParams, Patch, PatchParams, PostParams};
use kinform::controller::{controller_of, is_controlled_by};
use kinform::informer::InformerFactory;
use kinform::testing::TestApiServer;
use kinform::{Api, HasMetadata, ListParams};
use sample_controller::api::prelude::*;
use sample_controller::demo::{self, Observer, Snapshot, foo};
use sample_controller::runner::{self, Options};
use sample_controller::{FOO_CRD_YAML, foo_controller, simulator};

const WAIT: Duration = Duration::from_secs(120);

async fn until(observer: &Observer, what: &str, done: impl Fn(&Snapshot) -> bool) -> Snapshot {
    match observer.wait_for(WAIT, done, |_| {}).await {
        Ok(s) => s,
        Err(s) => panic!("timed out waiting until {what}: {}", s.line()),
    }
}

fn replicas(d: &Deployment) -> Option<i32> {
    d.spec.as_ref()?.replicas
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deployments_and_statuses_follow_the_foos() {
    let server = TestApiServer::start().await.unwrap();
    server.register_crd_yaml(FOO_CRD_YAML).unwrap();
    let client = server.client().unwrap();
    let ns = "default";
    let cancel = CancellationToken::new();
    // Test-sized reflector backoff everywhere (client-go's rules, millisecond delays).
    let sim_factory = InformerFactory::builder(client.clone())
        .test_backoff()
        .build();
    let sim = tokio::spawn(simulator::run(
        sim_factory.clone(),
        Duration::from_millis(20),
        cancel.clone().cancelled_owned(),
    ));
    let options = Options {
        test_backoff: true,
        ..Options::new("test-replica")
    };
    let admin = options.admin_bound.clone();
    let controller = tokio::spawn(runner::run(client.clone(), options, cancel.clone()));
    let observer = Observer::start(client.clone()).await.unwrap();
    let foos = client.samplecontroller_v1alpha1().foos(ns);

    let mut squatter =
        foo_controller::new_deployment(&foo(ns, "x", "squatter", 1), "squatter", Some(1));
    squatter.metadata.owner_references = None;
    Api::<Deployment>::namespaced(client.clone(), ns)
        .create(&PostParams::default(), &squatter)
        .await
        .unwrap();
    for (name, deployment, n) in [
        ("a", "a-dep", 1),
        ("b", "b-dep", 3),
        ("c", "c-dep", 2),
        ("d", "squatter", 4),
    ] {
        foos.create(&PostParams::default(), &foo(ns, name, deployment, n))
            .await
            .unwrap();
    }
    let s = until(&observer, "the Foos converge", |s| {
        s.foos.len() == 4 && s.deployments.len() == 4 && s.converged()
    })
    .await;
    for f in &s.foos {
        let d = s.deployment_of(f).unwrap();
        if f.name() == "d" {
            // Not adopted: no owner, replicas untouched, no status written.
            assert!(controller_of(&**d).is_none());
            assert_eq!(replicas(d), Some(1));
            assert_eq!(f.status, None);
            continue;
        }
        assert!(
            is_controlled_by(&**d, &**f),
            "{} not owned by {}",
            d.name(),
            f.name()
        );
        let want = f.spec.as_ref().unwrap().replicas.unwrap();
        assert_eq!(replicas(d).map(i64::from), Some(want));
        assert_eq!(f.status.as_ref().unwrap().available_replicas, Some(want));
        let labels = d
            .spec
            .as_ref()
            .unwrap()
            .template
            .metadata
            .as_ref()
            .unwrap()
            .labels
            .clone()
            .unwrap();
        assert_eq!(labels["controller"], f.name());
    }

    // Scaling a Foo scales its Deployment and the status follows.
    foos.patch(
        "b",
        &PatchParams::default(),
        &Patch::Merge(serde_json::json!({"spec": {"replicas": 6}})),
    )
    .await
    .unwrap();
    let s = until(&observer, "b scales to 6", |s| {
        s.converged() && s.deployment(ns, "b-dep").and_then(|d| replicas(d)) == Some(6)
    })
    .await;
    let b = s.foos.iter().find(|f| f.name() == "b").unwrap();
    assert_eq!(b.status.as_ref().unwrap().available_replicas, Some(6));

    // Deleting a Foo deletes its Deployment (its ownerReference, acted on by TestApiServer's
    // garbage collector as kube-controller-manager's would); the others stay.
    foos.delete("c", &DeleteParams::default()).await.unwrap();
    let s = until(&observer, "c-dep is collected", |s| {
        s.deployment(ns, "c-dep").is_none() && s.foos.len() == 3
    })
    .await;
    assert!(s.deployment(ns, "a-dep").is_some() && s.deployment(ns, "b-dep").is_some());

    // The admin endpoint, over HTTP: ready (the leader), the reconciles counted, the Lease
    // held.
    let address = *admin.get().expect("the admin endpoint listens");
    let (status, body) = demo::admin_get(address, "/readyz?verbose").await.unwrap();
    assert_eq!(status, 200, "{body}");
    assert!(
        body.contains("[+]controller sample-controller ok"),
        "{body}"
    );
    let (_, metrics) = demo::admin_get(address, "/metrics").await.unwrap();
    assert!(
        metrics
            .contains("controller_runtime_reconcile_total{controller=\"sample-controller\",result=\"success\"}"),
        "{metrics}"
    );
    let (_, state) = demo::admin_get(address, "/debug/state").await.unwrap();
    let state: serde_json::Value = serde_json::from_str(&state).unwrap();
    assert_eq!(state["leases"][0]["name"], "sample-controller");
    assert_eq!(state["leases"][0]["held"], true);

    cancel.cancel();
    let report = controller.await.unwrap().unwrap();
    sim.await.unwrap();
    sim_factory.shutdown().await;
    assert_eq!(report.terms, 1);
    assert!(
        report.stats.errors >= 1,
        "the refusal of squatter is an error: {report:?}"
    );

    // Events: Synced on the managed Foos, ErrResourceExists (Warning) on d.
    let events = Api::<Event>::namespaced(client.clone(), ns)
        .list(&ListParams::default())
        .await
        .unwrap()
        .items;
    let has = |foo: &str, reason: &str, kind: &str| {
        events.iter().any(|e| {
            e.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some(foo)
                && e.reason.as_deref() == Some(reason)
                && e.type_.as_deref() == Some(kind)
        })
    };
    assert!(has("a", "Synced", "Normal"), "{events:?}");
    assert!(has("b", "Synced", "Normal"));
    assert!(has("d", "ErrResourceExists", "Warning"));
    assert!(!has("d", "Synced", "Normal"));
    observer.shutdown().await;
    server.shutdown().await;
}
