//! The fail-over benchmark (issue #42): how long a leader-elected controller reconciles
//! nothing when its leader dies, with a cold standby (informers started after winning, the
//! default) and a warm one (`ControllerBuilder::warm_standby(true)`: caches synced and keys
//! queued before it holds the Lease).
//!
//! One `TestApiServer` in this process holds `objects` ConfigMaps of `payload` bytes of
//! data. Each round, for each standby mode and each kind of death:
//!
//! 1. replica `a` starts, wins the Lease and reconciles every ConfigMap once;
//! 2. replica `b` starts in the mode measured and stands by (warm: until its caches have
//!    synced and every key is queued; cold: until it has seen `a` hold the Lease);
//! 3. `a` dies: **graceful**, its run is cancelled (it drains its empty queue and releases
//!    the Lease, as on SIGTERM); **crash**, its run is aborted with `release_on_cancel` off
//!    (its Lease is neither renewed nor released, as when the process is killed);
//! 4. measured from the death: **first reconcile**, until `b` starts its first reconcile;
//!    **all reconciled**, until `b` has reconciled every ConfigMap once.
//!
//! Both replicas are the `kinform_tests::election` ConfigMap controller (4 workers, a
//! reconcile that only records), each with its own client and factory; a fresh Lease each
//! round. Lease timing, short for the benchmark: 2 s lease duration, 1.5 s renew deadline,
//! 100 ms retry period. After a graceful death `b` takes the Lease at its next attempt
//! (within 100-220 ms: the retry period plus client-go's jitter); after a crash it waits for
//! the lease to expire, 2 s after it last saw `a` renew. Each figure is the median over the
//! rounds, with the fastest and the slowest.
//!
//! Run (figures in BENCHMARKS.md, `## Fail-over`), a minute or two:
//!
//! ```text
//! cargo bench -p kinform-tests --bench failover -- [objects=10000] [rounds=3] [payload=1024]
//! ```

use std::time::Duration;

use kinform::leader::LeaderElectionConfig;
use kinform::testing::TestApiServer;
use kinform_tests::election::{Activity, Replica, ReplicaOptions, create_configmaps_of};
use tokio::time::Instant;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Death {
    Graceful,
    Crash,
}

fn timing(release: bool) -> LeaderElectionConfig {
    LeaderElectionConfig {
        lease_duration: Duration::from_secs(2),
        renew_deadline: Duration::from_millis(1500),
        retry_period: Duration::from_millis(100),
        release_on_cancel: release,
    }
}

/// One round's two figures.
struct Figures {
    first: Duration,
    all: Duration,
}

fn main() {
    let args = kinform_tests::bench_args("[objects] [rounds] [payload bytes]");
    let objects = args.first().copied().unwrap_or(10_000);
    let rounds = args.get(1).copied().unwrap_or(3).max(1);
    let payload = args.get(2).copied().unwrap_or(1024);
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime")
        .block_on(run(objects, rounds, payload));
}

async fn run(objects: usize, rounds: usize, payload: usize) {
    let server = TestApiServer::start().await.expect("the server starts");
    create_configmaps_of(&server, objects, &"x".repeat(payload));
    println!(
        "fail-over: {objects} ConfigMaps of {payload} B, {rounds} round(s); lease 2 s / renew 1.5 s / retry 100 ms"
    );
    let cases = [
        ("cold", false, Death::Graceful),
        ("warm", true, Death::Graceful),
        ("cold", false, Death::Crash),
        ("warm", true, Death::Crash),
    ];
    let mut results: Vec<Vec<Figures>> = cases.iter().map(|_| Vec::new()).collect();
    for round in 0..rounds {
        for (i, (name, warm, death)) in cases.iter().enumerate() {
            let lease = format!("failover-{round}-{i}");
            let f = failover(&server, objects, &lease, *warm, *death).await;
            println!(
                "  round {round} {name} {death:?}: first reconcile {:.0} ms, all reconciled {:.0} ms",
                ms(f.first),
                ms(f.all)
            );
            results[i].push(f);
        }
    }
    println!();
    println!("| standby | death | death -> first reconcile | death -> all {objects} reconciled |");
    println!("|---|---|---|---|");
    for ((name, _, death), figures) in cases.iter().zip(&mut results) {
        let first = stats(figures.iter().map(|f| f.first).collect());
        let all = stats(figures.iter().map(|f| f.all).collect());
        let death = match death {
            Death::Graceful => "graceful (released)",
            Death::Crash => "crash (lease expires)",
        };
        println!("| {name} | {death} | {first} | {all} |");
    }
    server.shutdown().await;
}

/// One fail-over: `a` leads, `b` stands by, `a` dies, `b` takes over.
async fn failover(
    server: &TestApiServer,
    objects: usize,
    lease: &str,
    warm: bool,
    death: Death,
) -> Figures {
    let activity = Activity::new();
    let options = |warm: bool, release: bool| ReplicaOptions {
        warm,
        lease: lease.to_owned(),
        timing: timing(release),
        workers: 4,
    };
    let client = || server.client().expect("a client");
    let a = Replica::start(
        client(),
        "a",
        &options(warm, death == Death::Graceful),
        &activity,
    );
    activity.wait_finished("a", objects).await;
    let b = Replica::start(client(), "b", &options(warm, true), &activity);
    if warm {
        b.wait_until("b synced with every key queued", |s| {
            s.caches_synced && s.queue.depth >= objects
        })
        .await;
    } else {
        b.wait_until("b sees a hold the Lease", |s| {
            s.election.as_ref().and_then(|e| e.holder.as_deref()) == Some("a")
        })
        .await;
    }
    let died = Instant::now();
    let dying = match death {
        Death::Graceful => Some(tokio::spawn(a.stop())),
        Death::Crash => {
            a.kill().await;
            None
        }
    };
    let first = activity.wait_started("b").await - died;
    activity.wait_finished("b", objects).await;
    let all = died.elapsed();
    if let Some(stopping) = dying {
        let _ = stopping.await;
    }
    activity.assert_exclusive();
    b.stop().await;
    Figures { first, all }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// `median ms (min-max)`.
fn stats(mut v: Vec<Duration>) -> String {
    v.sort();
    let median = v[v.len() / 2];
    format!(
        "{:.0} ms ({:.0}-{:.0})",
        ms(median),
        ms(v[0]),
        ms(v[v.len() - 1])
    )
}
