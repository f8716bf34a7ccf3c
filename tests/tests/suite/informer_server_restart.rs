//! An API server that restarts with other state (a restore from backup, a test server started
//! again on the same port) answers the informers' watches from their old resourceVersion with
//! "too large resource version" after its short wait, as kube-apiserver's watch cache does;
//! client-go's reflector then relists with a consistent read, and so does kinform's: every
//! informer converges to the new server's state.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use kinform::client::{Patch, PatchParams, PostParams};
use kinform::testing::TestApiServer;
use kinform::{Api, HasMetadata, LabelSelector, ListParams};
use kinform_tests::env::cm;
use kinform_tests::eventually;
use kinform_tests::informer::{client, factory_builder, fast_factory, pod};

fn names<K: HasMetadata>(items: Vec<std::sync::Arc<K>>) -> BTreeSet<String> {
    items.iter().map(|o| o.name().to_owned()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn informers_converge_after_the_server_restarts() {
    let first = TestApiServer::builder()
        .future_rv_wait(Duration::from_millis(300))
        .start()
        .await
        .unwrap();
    let port = first.addr().port();
    let cms: Api<ConfigMap> = Api::namespaced(first.client().unwrap(), "default");
    let pods: Api<Pod> = Api::namespaced(first.client().unwrap(), "default");
    // Enough writes that the first server's resourceVersion is ahead of the second's.
    for i in 0..20 {
        cms.create(&PostParams::default(), &cm(&format!("old-{i}"), &[]))
            .await
            .unwrap();
    }
    pods.create(&PostParams::default(), &pod("old-pod", 1))
        .await
        .unwrap();

    // No client retries: the reflector sees each 504 as it comes (client-go retries it up to
    // ten times first, which only delays the same outcome).
    let factory = fast_factory(client(&first, 0));
    let cm_lister = factory.lister::<ConfigMap>();
    let pod_lister = factory.lister::<Pod>();
    factory.start();
    factory
        .wait_for_cache_sync(Duration::from_secs(10))
        .await
        .unwrap();
    assert_eq!(cm_lister.list(&LabelSelector::everything()).len(), 20);
    first.shutdown().await;

    let second = TestApiServer::builder()
        .port(port)
        .future_rv_wait(Duration::from_millis(300))
        .start()
        .await
        .unwrap();
    let cms: Api<ConfigMap> = Api::namespaced(second.client().unwrap(), "default");
    let pods: Api<Pod> = Api::namespaced(second.client().unwrap(), "default");
    cms.create(&PostParams::default(), &cm("new", &[]))
        .await
        .unwrap();
    pods.create(&PostParams::default(), &pod("new-pod", 1))
        .await
        .unwrap();
    assert!(second.resource_version() < 20);

    let converged = eventually(Duration::from_secs(20), async || {
        names(cm_lister.list(&LabelSelector::everything())) == BTreeSet::from(["new".to_owned()])
            && names(pod_lister.list(&LabelSelector::everything()))
                == BTreeSet::from(["new-pod".to_owned()])
    })
    .await;
    assert!(
        converged,
        "informers kept {:?} and {:?}",
        names(cm_lister.list(&LabelSelector::everything())),
        names(pod_lister.list(&LabelSelector::everything()))
    );
    factory.shutdown().await;
    second.shutdown().await;
}

/// A port on 127.0.0.1 that was free a moment ago (bound, read, released).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The server's objects of `api`, key -> resourceVersion.
async fn server_rvs<K>(api: &Api<K>) -> BTreeMap<String, String>
where
    K: kinform::Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    api.list(&ListParams::default())
        .await
        .map(|l| {
            l.items
                .iter()
                .map(|o| (o.key(), o.resource_version().to_owned()))
                .collect()
        })
        .unwrap_or_default()
}

fn cache_rvs<K: HasMetadata>(items: Vec<std::sync::Arc<K>>) -> BTreeMap<String, String> {
    items
        .iter()
        .map(|o| (o.key(), o.resource_version().to_owned()))
        .collect()
}

/// A server restarted on its own port with none of its history: the informer's last
/// resourceVersion is ahead of the new server's, whose watch cache answers a watch from it
/// 504 "Too large resource version" after its wait (kube-apiserver's `waitUntilFreshAndBlock`,
/// 3 s by default, the builder's default here too). client-go's client does not retry that
/// 504 (no `Retry-After`) and its reflector relists at "" on it; the informer, with the
/// default client and the test support's factory, then holds the new server's objects
/// within seconds. `writer` keeps a writer running on the new server meanwhile (its
/// writes stay below the informer's old resourceVersion, checked).
async fn informer_follows_a_server_restarted_on_its_port(writer: bool) {
    let port = free_port();
    let first = TestApiServer::builder().port(port).start().await.unwrap();
    let cms: Api<ConfigMap> = Api::namespaced(first.client().unwrap(), "default");
    let pods: Api<Pod> = Api::namespaced(first.client().unwrap(), "default");
    // The first server's resourceVersion ends well ahead of what the second one reaches.
    for i in 0..20 {
        cms.create(&PostParams::default(), &cm(&format!("old-{i}"), &[]))
            .await
            .unwrap();
    }
    for round in 0..10 {
        for i in 0..20 {
            let patch = serde_json::json!({"data": {"round": round.to_string()}});
            cms.patch(
                &format!("old-{i}"),
                &PatchParams::default(),
                &Patch::Merge(patch),
            )
            .await
            .unwrap();
        }
    }
    pods.create(&PostParams::default(), &pod("old-pod", 1))
        .await
        .unwrap();

    let factory = factory_builder(first.client().unwrap()).build();
    let cm_lister = factory.lister::<ConfigMap>();
    let pod_lister = factory.lister::<Pod>();
    factory.start();
    factory
        .wait_for_cache_sync(Duration::from_secs(10))
        .await
        .unwrap();
    assert_eq!(cm_lister.list(&LabelSelector::everything()).len(), 20);
    let old_rv = first.resource_version();
    first.shutdown().await;

    let second = TestApiServer::builder().port(port).start().await.unwrap();
    let cms: Api<ConfigMap> = Api::namespaced(second.client().unwrap(), "default");
    let pods: Api<Pod> = Api::namespaced(second.client().unwrap(), "default");
    for i in 0..3 {
        cms.create(&PostParams::default(), &cm(&format!("new-{i}"), &[]))
            .await
            .unwrap();
    }
    pods.create(&PostParams::default(), &pod("new-pod", 1))
        .await
        .unwrap();
    assert!(second.resource_version() < old_rv);

    let stop = tokio_util::sync::CancellationToken::new();
    let writes = writer.then(|| {
        let (cms, stop) = (cms.clone(), stop.clone());
        tokio::spawn(async move {
            let mut n = 0u32;
            while !stop.is_cancelled() {
                let patch = serde_json::json!({"data": {"n": n.to_string()}});
                let name = format!("new-{}", n % 3);
                let _ = cms
                    .patch(&name, &PatchParams::default(), &Patch::Merge(patch))
                    .await;
                n += 1;
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            n
        })
    });

    let want_cms: BTreeSet<String> = (0..3).map(|i| format!("new-{i}")).collect();
    let started = std::time::Instant::now();
    let converged = eventually(Duration::from_secs(20), async || {
        names(cm_lister.list(&LabelSelector::everything())) == want_cms
            && names(pod_lister.list(&LabelSelector::everything()))
                == BTreeSet::from(["new-pod".to_owned()])
    })
    .await;
    let took = started.elapsed();
    eprintln!("converged after the restart in {took:?} (writer: {writer})");
    let requests = second.requests();
    assert!(
        converged,
        "after {took:?} the informers kept {:?} and {:?}; the new server's requests: {requests:#?}",
        names(cm_lister.list(&LabelSelector::everything())),
        names(pod_lister.list(&LabelSelector::everything())),
    );
    // Still below the old resourceVersion: the informer recovered by relisting, not by a
    // watch that the new server's history happened to reach.
    assert!(
        second.resource_version() < old_rv,
        "the writer took the new server past the informer's resourceVersion {old_rv}"
    );
    stop.cancel();
    if let Some(w) = writes {
        assert!(w.await.unwrap() > 0, "the writer wrote nothing");
    }
    // Once the writes stop, the caches hold the server's last resourceVersions: the watch
    // the informer runs after its relist sees every write.
    let synced = eventually(Duration::from_secs(10), async || {
        cache_rvs(cm_lister.list(&LabelSelector::everything())) == server_rvs(&cms).await
            && cache_rvs(pod_lister.list(&LabelSelector::everything())) == server_rvs(&pods).await
    })
    .await;
    assert!(synced, "the caches lag behind the new server's writes");
    factory.shutdown().await;
    second.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_informer_converges_after_a_restart_on_the_same_port() {
    informer_follows_a_server_restarted_on_its_port(false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn informer_converges_after_a_restart_on_the_same_port_under_writes() {
    informer_follows_a_server_restarted_on_its_port(true).await;
}
