//! The `--shards` embedded demo as a test: two sharded replicas share six Foos, replica-b
//! leaves, replica-a takes every Foo over, and every Foo converges (its Deployment at
//! `spec.replicas`, as many available, mirrored in its status), including a change made
//! after the leave.

#![allow(clippy::disallowed_names)]

use std::collections::BTreeSet;

use kinform::HasMetadata;
use sample_controller::demo::{self, SHARD_LABEL};
use sample_controller::runner::Options;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_share_the_foos_and_one_takes_them_all_over() {
    let outcome = demo::sharded(Options {
        test_backoff: true,
        ..Options::new("unused")
    })
    .await
    .expect("the sharded demo completes");

    // While both ran, each owned some of the Foos (rendezvous hashing of these six names over
    // these two identities is fixed: a 4/2 split or so, never 6/0).
    let owners: BTreeSet<&str> = outcome.shared.iter().map(|(_, o)| o.as_str()).collect();
    assert_eq!(
        owners,
        BTreeSet::from(["replica-a", "replica-b"]),
        "{:?}",
        outcome.shared
    );
    assert_eq!(outcome.shared.len(), 6);
    // After replica-b left, replica-a holds every Foo.
    assert_eq!(outcome.after_leave.len(), 6);
    assert!(
        outcome.after_leave.iter().all(|(_, o)| o == "replica-a"),
        "{:?}",
        outcome.after_leave
    );
    // Every Foo converged, each with its own Deployment, bravo at its new size.
    let last = &outcome.last;
    assert!(last.converged(), "{}", last.line());
    assert_eq!(last.foos.len(), 6);
    for foo in &last.foos {
        assert_eq!(
            foo.labels().get(SHARD_LABEL).map(String::as_str),
            Some("replica-a")
        );
        let deployment = last
            .deployment_of(foo)
            .unwrap_or_else(|| panic!("{} has its Deployment", foo.name()));
        let want = foo.spec.as_ref().and_then(|s| s.replicas);
        assert_eq!(
            deployment
                .spec
                .as_ref()
                .and_then(|s| s.replicas)
                .map(i64::from),
            want,
            "{}",
            foo.name()
        );
    }
    let bravo = last
        .deployment("default", "bravo-nginx")
        .expect("bravo's Deployment");
    assert_eq!(bravo.spec.as_ref().and_then(|s| s.replicas), Some(4));
    // Both replicas did work.
    assert!(
        outcome.reconciles.0 > 0 && outcome.reconciles.1 > 0,
        "{:?}",
        outcome.reconciles
    );
}
