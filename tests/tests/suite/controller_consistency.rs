//! The consistency guard against TestApiServer with late watch events (200 ms to 2 s each):
//! a controller that creates an owned object and writes its status on every reconcile acts
//! on a stale cache without the guard, and never with it, while no worker waits for a
//! cache.
//!
//! The suite runs some hundreds of reconciles each way: a key's rounds under the guard are
//! paced by the watch delay (each waits for its own events, about 2 s), so many keys are
//! needed for many reconciles, and a run's speed is then the machine's. The 10,000
//! reconciles are `ten_thousand_reconciles`, ignored by default:
//! `cargo test -p kinform-tests --test suite controller_consistency:: -- --ignored`.

use std::time::Duration;

use kinform_tests::consistency::{Outcome, Scenario, run_scenario};

const DELAY: (Duration, Duration) = (Duration::from_millis(200), Duration::from_secs(2));
const WORKERS: usize = 4;

/// The Tally controller without the guard: `keys` Tallies, stopped after `reconciles`.
async fn unguarded(keys: usize, reconciles: u64) -> Outcome {
    run_scenario(&Scenario {
        keys,
        rounds: i64::MAX,
        workers: WORKERS,
        guard: false,
        delay: DELAY,
        poll: Duration::from_millis(10),
        max_reconciles: reconciles,
    })
    .await
}

/// The Tally controller with the guard: `keys` Tallies counted up `rounds` times each.
async fn guarded(keys: usize, rounds: i64) -> Outcome {
    run_scenario(&Scenario {
        keys,
        rounds,
        workers: WORKERS,
        guard: true,
        delay: DELAY,
        poll: Duration::from_millis(10),
        max_reconciles: u64::MAX,
    })
    .await
}

fn assert_stale_acts(o: &Outcome, reconciles: u64) {
    eprintln!("guard off: {o:?}");
    assert!(o.stats.reconciles >= reconciles, "{o:?}");
    assert!(
        o.stale_acts() > 0,
        "a lagging cache makes stale acts: {o:?}"
    );
    assert_eq!(o.stats.parked, 0, "nothing is set aside: {o:?}");
}

fn assert_no_stale_act_and_no_worker_held(o: &Outcome, keys: usize, rounds: i64) {
    eprintln!("guard on: {o:?}");
    assert_eq!(
        o.counted,
        keys as u64 * rounds as u64,
        "every Tally counted up: {o:?}"
    );
    assert_eq!(o.stale_acts(), 0, "no act on a stale cache: {o:?}");
    assert_eq!(
        o.stats.parked_timeouts, 0,
        "no key waited out the bound: {o:?}"
    );
    assert!(
        o.stats.woken > 0 && o.stats.parked >= o.stats.woken,
        "{o:?}"
    );
    // Parking never holds a worker: far more keys than workers wait at once, and the
    // other keys keep being reconciled meanwhile.
    assert!(o.most_parked > 4 * WORKERS as u64, "{o:?}");
    assert!(o.progress_while_parked > 0, "{o:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_guard_a_lagging_cache_makes_stale_acts() {
    let o = unguarded(20, 300).await;
    assert_stale_acts(&o, 300);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_guard_no_reconcile_acts_on_a_stale_cache_and_no_worker_waits() {
    let o = guarded(100, 3).await;
    assert_no_stale_act_and_no_worker_held(&o, 100, 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "10,000 reconciles each way: a minute or more; run with --ignored"]
async fn ten_thousand_reconciles() {
    let o = unguarded(50, 10_000).await;
    assert_stale_acts(&o, 10_000);
    let o = guarded(1_000, 10).await;
    assert_no_stale_act_and_no_worker_held(&o, 1_000, 10);
}
