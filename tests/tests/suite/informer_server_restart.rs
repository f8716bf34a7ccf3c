//! An API server that restarts with other state (a restore from backup, a test server started
//! again on the same port) answers the informers' watches from their old resourceVersion with
//! "too large resource version" after its short wait, as kube-apiserver's watch cache does;
//! client-go's reflector then relists with a consistent read, and so does kinform's: every
//! informer converges to the new server's state.

use std::collections::BTreeSet;
use std::time::Duration;

use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use kinform::client::PostParams;
use kinform::testing::TestApiServer;
use kinform::{Api, HasMetadata, LabelSelector};
use kinform_tests::env::cm;
use kinform_tests::eventually;
use kinform_tests::informer::{client, fast_factory, pod};

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
