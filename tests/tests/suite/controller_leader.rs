//! Leader-elected controllers against TestApiServer over HTTP (`ControllerBuilder::
//! leader_election`): two replicas of one ConfigMap controller, each with its own client and
//! factory, competing for one Lease. A standby never reconciles; cancelling the leader hands
//! over to the standby, which with warm standby already holds synced caches and queued keys
//! and with cold standby starts its informers only then; a leader that loses its Lease
//! stops reconciling at once (its in-flight reconcile finishes), stands by with its caches
//! and leads again. Every run checks that no two replicas ever reconcile at once.
//!
//! Real clock, test-sized Leases (`kinform_tests::election::timing`: 4 s / 3 s / 200 ms):
//! the hand-overs ride on releases and on a stolen Lease of 1 s, so no test waits for a
//! 4 s expiry.

use std::time::Duration;

use kinform::controller::ControllerPhase;
use kinform::testing::TestApiServer;
use kinform_tests::controller::client;
use kinform_tests::election::{
    Activity, Replica, ReplicaOptions, all_reconciled, create_configmap, create_configmaps,
    lease_holder, steal_lease,
};

const OBJECTS: usize = 20;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_warm_standby_never_reconciles_and_takes_over_when_the_leader_is_cancelled() {
    let server = TestApiServer::start().await.unwrap();
    let mut keys = create_configmaps(&server, OBJECTS);
    let activity = Activity::new();
    let a = Replica::start(client(&server), "a", &ReplicaOptions::new(true), &activity);
    activity
        .wait_for("a reconciles every ConfigMap", |c| {
            all_reconciled(c, "a", &keys, 1)
        })
        .await;
    assert!(a.leads());

    let b = Replica::start(client(&server), "b", &ReplicaOptions::new(true), &activity);
    // Warm: synced and every key queued, before it holds the Lease.
    b.wait_until("b synced with its keys queued", |s| {
        s.phase == ControllerPhase::Standby && s.caches_synced && s.queue.depth == OBJECTS
    })
    .await;
    assert_eq!(b.status.snapshot().readiness(), Ok(()));
    assert_eq!(lease_holder(&client(&server)).await.as_deref(), Some("a"));
    // A change while b stands by is the leader's alone; b only queues it.
    keys.push(create_configmap(&server, "during"));
    activity
        .wait_for("a reconciles the new ConfigMap", |c| {
            all_reconciled(c, "a", &keys[OBJECTS..], 1)
        })
        .await;
    b.wait_until("b queued the new key", |s| s.queue.depth == OBJECTS + 1)
        .await;
    assert!(activity.of("b").is_empty(), "{:?}", activity.of("b"));
    let snapshot = b.status.snapshot();
    assert_eq!(snapshot.stats.reconciles, 0);
    let election = snapshot.election.expect("b is leader-elected");
    assert_eq!((election.leading, election.terms), (false, 0));
    assert_eq!(election.holder.as_deref(), Some("a"));
    let lists_before = b.lists();
    assert_eq!(
        lists_before, 1,
        "b's informer listed once, while standing by"
    );

    // The leader is cancelled: it drains, releases the Lease, and b takes over at once.
    let a_stats = a.stop().await;
    assert!(a_stats.reconciles as usize > OBJECTS, "{a_stats:?}");
    activity
        .wait_for("b reconciles every ConfigMap", |c| {
            all_reconciled(c, "b", &keys, 1)
        })
        .await;
    assert!(b.leads());
    assert_eq!(
        b.lists(),
        lists_before,
        "the new leader worked from its warm cache"
    );
    assert_eq!(lease_holder(&client(&server)).await.as_deref(), Some("b"));
    activity.assert_exclusive();
    b.stop().await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cold_standby_starts_its_informers_only_when_it_wins() {
    let server = TestApiServer::start().await.unwrap();
    let keys = create_configmaps(&server, OBJECTS);
    let activity = Activity::new();
    let a = Replica::start(client(&server), "a", &ReplicaOptions::new(false), &activity);
    activity
        .wait_for("a reconciles every ConfigMap", |c| {
            all_reconciled(c, "a", &keys, 1)
        })
        .await;
    let b = Replica::start(client(&server), "b", &ReplicaOptions::new(false), &activity);
    b.wait_until("b sees a hold the Lease", |s| {
        s.election.as_ref().and_then(|e| e.holder.as_deref()) == Some("a")
    })
    .await;
    let snapshot = b.status.snapshot();
    assert_eq!(snapshot.phase, ControllerPhase::Standby);
    assert!(!snapshot.caches_synced);
    assert!(
        snapshot
            .readiness()
            .is_err_and(|r| r.contains("cold standby")),
        "{snapshot:?}"
    );
    let informers = b.factory.informers();
    assert!(
        !informers.is_empty() && informers.iter().all(|i| !i.started && i.objects == 0),
        "{informers:?}"
    );
    assert_eq!(b.lists(), 0);

    a.stop().await;
    activity
        .wait_for("b reconciles every ConfigMap", |c| {
            all_reconciled(c, "b", &keys, 1)
        })
        .await;
    assert_eq!(b.lists(), 1, "b listed once it led");
    activity.assert_exclusive();
    b.stop().await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_leader_that_loses_the_lease_stops_at_once_and_leads_again_with_its_caches() {
    let server = TestApiServer::start().await.unwrap();
    let mut keys = create_configmaps(&server, 5);
    let activity = Activity::new();
    let a = Replica::start(client(&server), "a", &ReplicaOptions::new(true), &activity);
    activity
        .wait_for("a reconciles every ConfigMap", |c| {
            all_reconciled(c, "a", &keys, 1)
        })
        .await;
    // A reconcile in flight when the Lease is lost.
    activity.hold("default/slow");
    keys.push(create_configmap(&server, "slow"));
    activity
        .wait_for("slow's reconcile started", |c| {
            c.iter().any(|c| c.key == "default/slow")
        })
        .await;

    // Another process takes the Lease for 1 s: a's next renewal fails and it stops.
    steal_lease(&client(&server), "thief", 1).await;
    a.wait_phase(ControllerPhase::Stopping).await;
    let lost_at = tokio::time::Instant::now();
    // Changes now are cached and queued, not reconciled: no reconcile starts.
    keys.push(create_configmap(&server, "after-loss"));
    a.wait_until("a cached the new ConfigMap", |_| {
        a.factory
            .informers()
            .iter()
            .map(|i| i.objects)
            .sum::<usize>()
            == keys.len()
    })
    .await;
    // The reconcile in flight finishes, then the term is over.
    activity.release("default/slow");
    a.wait_phase(ControllerPhase::Standby).await;
    let calls = activity.of("a");
    assert!(
        calls
            .iter()
            .filter(|c| c.key == "default/slow")
            .all(|c| c.finished && c.term == 1),
        "{calls:?}"
    );
    assert!(
        calls.iter().all(|c| c.term == 1 && c.at < lost_at),
        "a reconcile started after the loss: {calls:?}"
    );
    assert!(!a.status.snapshot().election.unwrap().leading);

    // The stolen Lease expires; a leads again from its kept caches, every key queued anew.
    activity
        .wait_for("a reconciles every ConfigMap in its second term", |c| {
            all_reconciled(c, "a", &keys, 2)
        })
        .await;
    let election = a.status.snapshot().election.unwrap();
    assert_eq!((election.leading, election.terms), (true, 2));
    assert_eq!(a.lists(), 1, "the caches were kept across the terms");
    assert_eq!(lease_holder(&client(&server)).await.as_deref(), Some("a"));
    let after = activity.of("a");
    assert!(
        after
            .iter()
            .filter(|c| c.key == "default/after-loss")
            .all(|c| c.term == 2)
    );
    activity.assert_exclusive();
    tokio::time::timeout(Duration::from_secs(30), a.stop())
        .await
        .expect("a stops");
    server.shutdown().await;
}
