//! Sharded controllers against `TestApiServer`: three replicas of one controller in one
//! process, each with its own client identity, share the Widgets of a CRD through member
//! Leases and shard labels only.
//!
//! A witness in the reconcile proves that no Widget is ever reconciled by two replicas at
//! once (and that a replica only reconciles Widgets labelled for it); every Widget reaches
//! its final state under concurrent creates, updates and deletes; when a replica stops
//! renewing its Lease its Widgets move to the others within one lease duration plus a
//! bounded delay, and when a replica joins about a third of the Widgets move to it and no
//! other Widget moves.
//!
//! A replica cut off the API server by a proxy (`a_partitioned_replica_rejoins_with_a_fresh_cache`)
//! stops, its Widgets move, and once healed it rejoins under a new shard label value and
//! takes about a third back. The sharder run apart
//! (`a_sharder_apart_assigns_to_members_that_never_shard`) assigns every Widget to members
//! that never stand for sharder, and reconciles none itself. A sharder denied the `patch`
//! verb by RBAC (`a_sharder_without_the_patch_verb_fails_loudly`) counts every refused write
//! and records a Warning Event per Widget.
//!
//! [`OBJECTS`] is 1,000 so the test stays fast in CI's debug build; the issue's figure is
//! 10,000, run in an optimised build (the bench profile, whose dependencies the sharding
//! benchmark builds anyway):
//!
//! ```text
//! SHARD_TEST_OBJECTS=10000 cargo test --profile bench -p kinform-tests \
//!     --test suite controller_sharded::three_replicas -- --nocapture
//! ```
//!
//! At commit fcb8fd3 on the 2-core machine it passed in 43 s: 10,000 Widgets created in
//! 5.8 s, settled on three replicas (3052 / 2937 / 3011) 5.3 s after the updates and
//! deletes; after a crash the first Widget moved 6.3 s after the crash (4 s lease) and all
//! in 8.0 s; 2894 moved to a joining replica in 8.0 s. Waits and the crash bound's slack
//! scale with the count. In the debug build 10,000 take over ten minutes: every write goes
//! through one debug-build TestApiServer. Real clock, test-sized leases (4 s / 3 s / 500 ms).

use std::collections::BTreeMap;
use std::time::Duration;

use futures_util::{StreamExt, stream};
use k8s_openapi::api::core::v1::ConfigMap;
use kinform::client::{DeleteParams, ListParams};
use kinform::controller::shard::{ShardRole, ShardStats, owner_of};
use kinform::{Api, HasMetadata, PartialObjectMetadata, Resource};
use kinform_tests::eventually;
use kinform_tests::proxy::Proxy;
use kinform_tests::shard::{
    Replica, ReplicaOptions, Widget, Witness, create_widgets, set_widget_values, start_replica,
    start_replica_behind, start_replica_with, widget_name, widget_server,
};
use tokio::time::Instant;

/// How many Widgets the test creates (the issue asks for 10,000; see the module docs).
const OBJECTS: usize = 1_000;

/// The shard label of the Widget controller (named after the plural).
const SHARD: &str = "shard.kinform.io/widgets";
const DRAIN: &str = "drain.shard.kinform.io/widgets";

/// The lease duration of `test_timing`.
const LEASE: Duration = Duration::from_secs(4);

fn objects() -> usize {
    std::env::var("SHARD_TEST_OBJECTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(OBJECTS)
}

/// A wait of `secs` seconds for the default 1,000 Widgets, longer in proportion for more
/// (every write of the run goes through one debug-build server on a shared machine).
fn scaled(objects: usize, secs: u64) -> Duration {
    Duration::from_secs(secs) * u32::try_from(objects.div_ceil(OBJECTS).max(1)).unwrap_or(1)
}

/// The delay allowed after a crashed member's lease expired until its first Widget moves:
/// the sharder's next pass (one retry period), its first writes and this test's poll, which
/// lists every Widget: 3 s, plus 0.5 ms per Widget.
fn slack(objects: usize) -> Duration {
    Duration::from_secs(3) + Duration::from_micros(500) * u32::try_from(objects).unwrap_or(0)
}

/// Metadata-only access to the Widgets of `api`'s namespace: the checks below read labels
/// and annotations only, and listing 10,000 full Widgets every poll would cost the server
/// and the replicas (all on two cores, in a debug build) more than the work under test.
fn metadata(api: &Api<Widget>) -> Api<PartialObjectMetadata> {
    Api::metadata_namespaced(api.client().clone(), "default", &Widget::api_resource())
}

/// Every Widget's owner label (empty when unlabelled), by name.
async fn owners(api: &Api<Widget>) -> BTreeMap<String, String> {
    metadata(api)
        .list(&ListParams::default())
        .await
        .expect("list widgets")
        .items
        .into_iter()
        .map(|w| {
            let owner = w.labels().get(SHARD).cloned().unwrap_or_default();
            (w.name().to_owned(), owner)
        })
        .collect()
}

/// Whether every Widget is labelled for its owner among `members` (the rendezvous choice:
/// the sharder has seen exactly these members), none is draining, and each has observed its
/// expected value; and exactly `expected` of them exist.
async fn settled(api: &Api<Widget>, members: &[&str], expected: &BTreeMap<String, i64>) -> bool {
    let Ok(list) = metadata(api).list(&ListParams::default()).await else {
        return false;
    };
    list.items.len() == expected.len()
        && list.items.iter().all(|w| {
            let owner = w.labels().get(SHARD).map(String::as_str);
            let want = expected.get(w.name()).map(ToString::to_string);
            owner == owner_of(&w.key(), members.iter().copied())
                && !w.labels().contains_key(DRAIN)
                && want.is_some()
                && w.annotations().get("observed") == want.as_ref()
        })
}

/// Creates the Widgets `w-00000` .. of value 0, 32 at a time.
fn counts(owners: &BTreeMap<String, String>) -> BTreeMap<String, usize> {
    let mut c = BTreeMap::new();
    for o in owners.values() {
        *c.entry(o.clone()).or_default() += 1;
    }
    c
}

fn assert_about(n: usize, total: usize, share: f64, what: &str) {
    #[allow(clippy::cast_precision_loss)]
    let (n, total) = (n as f64, total as f64);
    assert!(
        (n - total * share).abs() < total * 0.08,
        "{what}: {n} of {total}, expected about {share}"
    );
}

async fn wait_settled(
    api: &Api<Widget>,
    members: &[&str],
    expected: &BTreeMap<String, i64>,
    limit: Duration,
    what: &str,
) -> Duration {
    let started = Instant::now();
    // Poll every 200 ms: listing every Widget is not free on a shared machine.
    let mut ok = false;
    while started.elapsed() < limit {
        if settled(api, members, expected).await {
            ok = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    if !ok {
        let owners = owners(api).await;
        panic!(
            "{what}: not settled within {limit:?}; owners {:?}",
            counts(&owners)
        );
    }
    started.elapsed()
}

/// How long after `since` the first Widget labelled `from` in `before` is labelled for
/// another member (polled every 100 ms, for at most `limit`).
async fn first_move(
    api: &Api<Widget>,
    before: &BTreeMap<String, String>,
    from: &str,
    since: Instant,
    limit: Duration,
) -> Duration {
    loop {
        let now = owners(api).await;
        if now
            .iter()
            .any(|(n, o)| before.get(n).is_some_and(|b| b == from) && o != from)
        {
            return since.elapsed();
        }
        assert!(
            since.elapsed() < limit,
            "nothing left {from} within {limit:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_replicas_share_widgets_and_hand_them_over_without_overlap() {
    let _ = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::INFO)
        .with_test_writer()
        .try_init();
    let (server, api) = widget_server().await;
    let witness = Witness::new();
    let total = objects();

    let mut replicas: Vec<Replica> = ["r0", "r1", "r2"]
        .iter()
        .map(|id| start_replica(&server, id, &witness))
        .collect();

    // Phase 1: concurrent creates, updates and deletes while the replicas start.
    let mut expected: BTreeMap<String, i64> = BTreeMap::new();
    let phase = Instant::now();
    create_widgets(&api, total, "").await;
    eprintln!("created {total} widgets in {:?}", phase.elapsed());
    let phase = Instant::now();
    for i in 0..total {
        expected.insert(widget_name(i), 0);
    }
    let updated: Vec<String> = (0..total).filter(|i| i % 2 == 0).map(widget_name).collect();
    let deleted: Vec<String> = (0..total)
        .filter(|i| i % 10 == 5)
        .map(widget_name)
        .collect();
    let (u, d) = (api.clone(), api.clone());
    let updates = tokio::spawn({
        let names = updated.clone();
        async move { set_widget_values(&u, names, 1).await }
    });
    let deletes = tokio::spawn({
        let names = deleted.clone();
        async move {
            stream::iter(names)
                .for_each_concurrent(16, |n| {
                    let d = d.clone();
                    async move {
                        d.delete(&n, &DeleteParams::default())
                            .await
                            .expect("delete a widget");
                    }
                })
                .await;
        }
    });
    updates.await.unwrap();
    deletes.await.unwrap();
    for n in &updated {
        expected.insert(n.clone(), 1);
    }
    for n in &deleted {
        expected.remove(n);
    }
    eprintln!("updated and deleted in {:?}", phase.elapsed());
    let took = wait_settled(
        &api,
        &["r0", "r1", "r2"],
        &expected,
        scaled(total, 120),
        "three replicas",
    )
    .await;
    let before = owners(&api).await;
    let c = counts(&before);
    eprintln!("settled in {took:?}: {c:?}");
    for id in ["r0", "r1", "r2"] {
        assert_about(
            c.get(id).copied().unwrap_or(0),
            expected.len(),
            1.0 / 3.0,
            id,
        );
    }
    // Each replica caches only its own shard.
    for r in &replicas {
        let cached = r.factory.lister::<Widget>().list_all().len();
        assert_eq!(cached, 0, "{}: nothing in the unscoped cache", r.identity);
        assert_eq!(
            r.cached(),
            c[&r.identity],
            "{}: the scoped cache holds its shard",
            r.identity
        );
    }

    // Phase 2: a replica that is not the sharder stops renewing (a crash). Its Widgets move
    // to the two others within one lease duration plus a bounded delay.
    let victim = replicas
        .iter()
        .position(|r| !r.shard().stats().is_sharder)
        .expect("two replicas are not the sharder");
    let gone = replicas.remove(victim);
    let gone_id = gone.identity.clone();
    let left: Vec<&str> = ["r0", "r1", "r2"]
        .into_iter()
        .filter(|id| *id != gone_id)
        .collect();
    gone.shard().abandon();
    let abandoned = Instant::now();
    // The first Widget leaves the crashed replica once its lease expired (plus one pass)...
    let first = first_move(&api, &before, &gone_id, abandoned, LEASE * 2 + slack(total)).await;
    // ... and the rest as fast as the sharder can write them.
    wait_settled(&api, &left, &expected, scaled(total, 60), "after a crash").await;
    let took = abandoned.elapsed();
    eprintln!("{gone_id} crashed: first widget moved after {first:?}, all after {took:?}");
    // The bound: the lease duration, counted from when the sharder last saw the Lease
    // change (up to one retry period after the last renewal), plus one retry period until
    // its next pass, plus the first writes and this test's own poll on a loaded machine.
    assert!(
        first <= LEASE + slack(total),
        "first move after {first:?}, more than one lease duration plus {:?}",
        slack(total)
    );
    let after_crash = owners(&api).await;
    let mut moved = 0;
    for (n, o) in &before {
        if o != &after_crash[n] {
            assert_eq!(o, &gone_id, "{n} moved from a live replica");
            moved += 1;
        }
    }
    assert_eq!(
        moved, c[&gone_id],
        "all of the crashed replica's widgets moved"
    );
    gone.task.await.expect("the crashed replica's run returns");
    gone.factory.shutdown().await;

    // Phase 3: a replica joins while the Widgets change: about a third move, all onto it.
    // Releases made before (objects created while r2 was still joining were drained to it)
    // are not this phase's.
    let released_before: u64 = replicas.iter().map(|r| r.shard().stats().released).sum();
    let updates = tokio::spawn({
        let (api, names) = (api.clone(), expected.keys().cloned().collect::<Vec<_>>());
        async move { set_widget_values(&api, names, 2).await }
    });
    replicas.push(start_replica(&server, "r3", &witness));
    updates.await.unwrap();
    for v in expected.values_mut() {
        *v = 2;
    }
    let mut members = left.clone();
    members.push("r3");
    let took = wait_settled(
        &api,
        &members,
        &expected,
        scaled(total, 120),
        "after a join",
    )
    .await;
    let after_join = owners(&api).await;
    let mut moved = 0;
    for (n, o) in &after_crash {
        if o != &after_join[n] {
            assert_eq!(
                after_join[n], "r3",
                "{n} moved between two staying replicas"
            );
            moved += 1;
        }
    }
    eprintln!("r3 joined: {moved} widgets moved in {took:?}");
    assert_about(moved, expected.len(), 1.0 / 3.0, "moved to the new replica");

    // The sharder counted the handovers, and the replicas released what they handed over.
    let stats: Vec<_> = replicas.iter().map(|r| r.shard().stats()).collect();
    let released: u64 = stats.iter().map(|s| s.released).sum::<u64>() - released_before;
    assert_eq!(
        usize::try_from(released).unwrap(),
        moved,
        "each move to r3 was released once by its owner: {stats:?}"
    );
    let sharder = stats
        .iter()
        .find(|s| s.is_sharder)
        .expect("one replica is the sharder");
    assert!(sharder.handovers > 0, "{sharder:?}");

    // Graceful leave: the Lease is released, so the Widgets move without waiting for expiry.
    let leaving = replicas.remove(0);
    let leaving_id = leaving.identity.clone();
    leaving.shutdown().await;
    let released_at = Instant::now();
    let members: Vec<&str> = members.into_iter().filter(|m| *m != leaving_id).collect();
    let first = first_move(
        &api,
        &after_join,
        &leaving_id,
        released_at,
        LEASE * 2 + slack(total),
    )
    .await;
    wait_settled(
        &api,
        &members,
        &expected,
        scaled(total, 60),
        "after a leave",
    )
    .await;
    eprintln!(
        "{leaving_id} left: first widget moved after {first:?}, all after {:?}",
        released_at.elapsed()
    );
    assert!(
        first < LEASE,
        "a graceful leave does not wait for the lease: {first:?}"
    );

    witness.assert_none();
    eprintln!("reconciles per replica: {:?}", witness.reconciles.lock());
    for r in replicas {
        r.shutdown().await;
    }
    let _ = Widget::api_resource();
}

/// Whether every Widget has its ConfigMap and each ConfigMap carries its owner's shard label.
async fn configmaps_follow(widgets: &Api<Widget>, cms: &Api<ConfigMap>, n: usize) -> bool {
    let owners = owners(widgets).await;
    let Ok(list) = cms.list(&ListParams::default()).await else {
        return false;
    };
    let labelled: BTreeMap<String, String> = list
        .items
        .iter()
        .filter_map(|cm| {
            let widget = cm.name().strip_prefix("cm-")?.to_owned();
            Some((widget, cm.labels().get(SHARD).cloned().unwrap_or_default()))
        })
        .collect();
    owners.len() == n
        && owners
            .iter()
            .all(|(w, o)| !o.is_empty() && labelled.get(w) == Some(o))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn owned_objects_follow_their_owners_shard() {
    const WIDGETS: usize = 60;
    let (server, api) = widget_server().await;
    let cms: Api<ConfigMap> = Api::namespaced(api.client().clone(), "default");
    let witness = Witness::new();
    let owning = ReplicaOptions {
        owns_configmaps: true,
        ..ReplicaOptions::default()
    };
    let mut replicas: Vec<Replica> = ["r0", "r1"]
        .iter()
        .map(|id| start_replica_with(&server, id, &witness, &owning))
        .collect();
    create_widgets(&api, WIDGETS, "").await;
    let follow = async |what: &str| {
        let started = Instant::now();
        while !configmaps_follow(&api, &cms, WIDGETS).await {
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "{what}: the ConfigMaps do not follow their Widgets"
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    };
    // Both members seen by the sharder: every Widget on its owner among the two (a Widget
    // created while only one had joined is moved once the other joins).
    let placed = async || {
        let owners = owners(&api).await;
        owners.len() == WIDGETS
            && owners
                .iter()
                .all(|(n, o)| owner_of(&format!("default/{n}"), ["r0", "r1"]) == Some(o.as_str()))
    };
    assert!(
        eventually(Duration::from_secs(60), placed).await,
        "the Widgets are not placed on r0 and r1"
    );
    follow("two replicas").await;
    // Each replica caches only the ConfigMaps of its shard.
    let scoped = |r: &Replica| {
        r.factory
            .informer_in::<ConfigMap>(r.factory.scope().labels(format!("{SHARD}={}", r.identity)))
            .lister()
            .list_all()
            .len()
    };
    let counts = counts(&owners(&api).await);
    for r in &replicas {
        assert_eq!(scoped(r), counts[&r.identity], "{}", r.identity);
    }
    // A third replica joins: the moved Widgets' ConfigMaps move with them.
    replicas.push(start_replica_with(&server, "r2", &witness, &owning));
    let started = Instant::now();
    while !owners(&api).await.values().any(|o| o == "r2") {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "nothing moved to r2"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    follow("after a join").await;
    witness.assert_none();
    for r in replicas {
        r.shutdown().await;
    }
}

/// The sharder run apart ([`ShardRole::Sharder`]) assigns every Widget to two members that
/// never stand for sharder ([`ShardRole::Member`]): it caches and reconciles none, they
/// reconcile all of them between them, and when it stops a member does not take over.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sharder_apart_assigns_to_members_that_never_shard() {
    const WIDGETS: usize = 200;
    let (server, api) = widget_server().await;
    let witness = Witness::new();
    let role = |role| ReplicaOptions {
        role,
        ..ReplicaOptions::default()
    };
    let sharder = start_replica_with(&server, "s0", &witness, &role(ShardRole::Sharder));
    let members: Vec<Replica> = ["m0", "m1"]
        .iter()
        .map(|id| start_replica_with(&server, id, &witness, &role(ShardRole::Member)))
        .collect();
    create_widgets(&api, WIDGETS, "").await;
    let expected: BTreeMap<String, i64> = (0..WIDGETS).map(|i| (widget_name(i), 0)).collect();
    wait_settled(
        &api,
        &["m0", "m1"],
        &expected,
        Duration::from_secs(60),
        "a sharder apart",
    )
    .await;
    // The sharder counts the objects per shard at its full passes (every retry period).
    let counted = |s: &ShardStats| s.objects_per_shard.values().sum::<usize>() == WIDGETS;
    eventually(Duration::from_secs(10), async || {
        counted(&sharder.shard().stats())
    })
    .await;
    let stats = sharder.shard().stats();
    assert!(stats.is_sharder, "{stats:?}");
    assert_eq!(stats.cached, 0, "the sharder apart caches no shard");
    assert!(
        counted(&stats),
        "every Widget counted in a shard: {stats:?}"
    );
    for m in &members {
        assert!(
            !m.shard().stats().is_sharder,
            "{} stood for sharder",
            m.identity
        );
    }
    let counts = counts(&owners(&api).await);
    assert_eq!(counts.get("s0"), None, "nothing is assigned to the sharder");
    for m in &members {
        assert_eq!(m.cached(), counts[&m.identity], "{}", m.identity);
    }
    let reconciles = witness.reconciles.lock().clone();
    assert_eq!(
        reconciles.get("s0"),
        None,
        "the sharder reconciled: {reconciles:?}"
    );
    // Without a sharder candidate, no member takes the role over.
    let stats = sharder.shutdown().await;
    assert_eq!(stats.reconciles, 0);
    tokio::time::sleep(LEASE).await;
    for m in &members {
        assert!(!m.shard().stats().is_sharder, "{} took over", m.identity);
    }
    witness.assert_none();
    for m in members {
        m.shutdown().await;
    }
}

/// A replica cut off the API server (its renewals fail) stops reconciling, its Widgets move
/// to the others once its Lease expires; healed, it joins again as `r2.1` with a fresh cache
/// and gets about a third of the Widgets back, and the witness never sees two replicas on
/// one Widget, nor a replica on a Widget not labelled for it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_partitioned_replica_rejoins_with_a_fresh_cache() {
    const WIDGETS: usize = 300;
    let (server, api) = widget_server().await;
    let witness = Witness::new();
    // r0 first, so that it is the sharder and the partitioned replica is not.
    let mut replicas = vec![start_replica(&server, "r0", &witness)];
    let started = Instant::now();
    while !replicas[0].shard().stats().is_sharder {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "r0 never became the sharder"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let partition = Proxy::start(server.addr()).await;
    replicas.push(start_replica(&server, "r1", &witness));
    replicas.push(start_replica_behind(&server, &partition, "r2", &witness));
    create_widgets(&api, WIDGETS, "").await;
    let mut expected: BTreeMap<String, i64> = (0..WIDGETS).map(|i| (widget_name(i), 0)).collect();
    let all = ["r0", "r1", "r2"];
    wait_settled(
        &api,
        &all,
        &expected,
        Duration::from_secs(60),
        "three replicas",
    )
    .await;
    assert_about(
        counts(&owners(&api).await)["r2"],
        WIDGETS,
        1.0 / 3.0,
        "r2 before",
    );

    // Cut r2 off; change every Widget while it is away.
    partition.cut();
    let cut = Instant::now();
    set_widget_values(&api, expected.keys().cloned(), 1).await;
    for v in expected.values_mut() {
        *v = 1;
    }
    wait_settled(&api, &["r0", "r1"], &expected, LEASE * 10, "r2 cut off").await;
    eprintln!("r2 cut off: its widgets moved within {:?}", cut.elapsed());
    let r2 = &replicas[2];
    assert_eq!(r2.shard().stats().cached, 0, "r2 dropped its cache");
    assert!(
        !r2.task.is_finished(),
        "r2's run goes on after losing its membership"
    );

    // Heal: r2 joins again under a new label value and gets about a third back.
    partition.heal();
    let healed = Instant::now();
    let members = ["r0", "r1", "r2.1"];
    let took = wait_settled(&api, &members, &expected, Duration::from_secs(60), "healed").await;
    let c = counts(&owners(&api).await);
    eprintln!(
        "r2 healed: rejoined as r2.1 within {:?} ({took:?} settling): {c:?}",
        healed.elapsed()
    );
    let stats = r2.shard().stats();
    assert_eq!(&*r2.shard().identity(), "r2.1");
    assert_eq!(stats.rejoins, 1, "{stats:?}");
    assert_about(c["r2.1"], WIDGETS, 1.0 / 3.0, "r2.1 after the rejoin");
    // The labels are written; r2.1's fresh informer may still be backing off from the
    // failures of the partition before it lists them (at most the reflector's backoff).
    let deadline = Instant::now() + Duration::from_secs(30);
    while r2.shard().stats().cached != c["r2.1"] && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(
        r2.shard().stats().cached,
        c["r2.1"],
        "r2.1 caches exactly its shard"
    );
    // It reconciles again: a change reaches its Widgets.
    set_widget_values(&api, expected.keys().cloned(), 2).await;
    for v in expected.values_mut() {
        *v = 2;
    }
    wait_settled(
        &api,
        &members,
        &expected,
        Duration::from_secs(60),
        "after the rejoin",
    )
    .await;

    witness.assert_none();
    for r in replicas {
        r.shutdown().await;
    }
}

/// A sharder whose user may read the Widgets but not `patch` them (RBAC on, the verb
/// forgotten in its ClusterRole) cannot assign them: each refused write is counted in
/// `kinform_shard_assignment_failures_total` and in the shard stats, and recorded as a
/// Warning Event about the Widget naming the verb and the server's message. Once the verb is
/// granted, the next passes assign every Widget and the counter stops rising.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sharder_without_the_patch_verb_fails_loudly() {
    use k8s_openapi::api::events::v1::Event;
    use kinform::controller::shard::ShardingConfig;
    use kinform::controller::{Action, Controller, PrometheusControllerMetrics};
    use kinform::testing::TestApiServer;
    use kinform_tests::shard::{register_widgets, test_timing};
    use serde_json::json;
    use std::sync::Arc;

    const WIDGETS: usize = 3;
    let server = TestApiServer::builder().rbac().start().await.unwrap();
    register_widgets(&server);
    let admin = server.client().unwrap();
    let api: Api<Widget> = Api::namespaced(admin.clone(), "default");
    let grant = |name: &str, rules: serde_json::Value| {
        server
            .create_object(json!({
                "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                "metadata": {"name": name}, "rules": rules,
            }))
            .unwrap();
        server
            .create_object(json!({
                "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
                "metadata": {"name": name},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
                "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "r0"}],
            }))
            .unwrap();
    };
    // The module's RBAC, without `patch` on the Widgets.
    grant(
        "sharded-widgets",
        json!([
            {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"],
             "verbs": ["get", "list", "create", "update"]},
            {"apiGroups": ["shard.example.com"], "resources": ["widgets"],
             "verbs": ["get", "list", "watch"]},
            {"apiGroups": ["events.k8s.io"], "resources": ["events"], "verbs": ["create", "patch"]},
        ]),
    );
    create_widgets(&api, WIDGETS, "").await;

    let registry = prometheus::Registry::new();
    let metrics = Arc::new(PrometheusControllerMetrics::new(&registry).unwrap());
    let failures = || -> f64 {
        let text = prometheus::TextEncoder::new()
            .encode_to_string(&registry.gather())
            .unwrap();
        text.lines()
            .filter_map(|l| {
                l.strip_prefix("kinform_shard_assignment_failures_total{controller=\"widgets\"} ")
            })
            .map(|v| v.parse::<f64>().unwrap())
            .sum()
    };
    let client = server.client_for("r0", &[]).unwrap();
    let factory = kinform_tests::controller::factory(client);
    let controller = Controller::<Widget>::builder(&factory)
        .metrics(metrics)
        .sharded(ShardingConfig::new("default", "r0").timing(test_timing()))
        .unwrap()
        .build();
    let shard = controller.shard().unwrap();
    let stop = tokio_util::sync::CancellationToken::new();
    let run = tokio::spawn(controller.run(
        |_| async { Ok::<_, std::convert::Infallible>(Action::done()) },
        stop.clone().cancelled_owned(),
    ));

    let counted = eventually(Duration::from_secs(30), async || {
        failures() >= WIDGETS as f64 && shard.stats().assignment_failures >= WIDGETS as u64
    })
    .await;
    assert!(
        counted,
        "refused writes counted: metric {}, {:?}",
        failures(),
        shard.stats()
    );
    let events: Api<Event> = Api::namespaced(admin.clone(), "default");
    let warned = |list: &[Event]| {
        (0..WIDGETS).all(|i| {
            list.iter().any(|e| {
                e.reason.as_deref() == Some("ShardAssignmentFailed")
                    && e.type_.as_deref() == Some("Warning")
                    && e.regarding.as_ref().and_then(|r| r.name.as_deref())
                        == Some(widget_name(i).as_str())
                    && e.note.as_deref().is_some_and(|n| {
                        n.contains("cannot patch")
                            && n.contains("forbidden")
                            && n.contains("\"r0\"")
                    })
            })
        })
    };
    let recorded = eventually(Duration::from_secs(30), async || {
        warned(&events.list(&ListParams::default()).await.unwrap().items)
    })
    .await;
    assert!(
        recorded,
        "a Warning Event per Widget: {:#?}",
        events.list(&ListParams::default()).await.unwrap().items
    );
    let unassigned = owners(&api).await;
    assert!(
        unassigned.len() == WIDGETS && unassigned.values().all(String::is_empty),
        "no Widget could be labelled: {unassigned:?}"
    );

    // The verb granted, every Widget is assigned and no write fails any more.
    grant(
        "sharded-widgets-patch",
        json!([{"apiGroups": ["shard.example.com"], "resources": ["widgets"], "verbs": ["patch"]}]),
    );
    let assigned = eventually(Duration::from_secs(30), async || {
        owners(&api).await.values().filter(|o| *o == "r0").count() == WIDGETS
    })
    .await;
    assert!(assigned, "assigned once granted: {:?}", owners(&api).await);
    let settled = failures();
    tokio::time::sleep(2 * test_timing().retry_period).await;
    assert_eq!(failures(), settled, "no write fails once granted");

    stop.cancel();
    run.await.unwrap();
    factory.shutdown().await;
    server.shutdown().await;
}
