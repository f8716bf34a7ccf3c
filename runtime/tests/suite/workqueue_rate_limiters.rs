//! Rate limiters (client-go default_rate_limiters.go) and `RateLimitingQueue`, on Tokio's
//! paused clock where time matters.

use std::time::Duration;

use kinform_runtime::workqueue::{
    BucketRateLimiter, ItemExponentialFailureRateLimiter, ItemFastSlowRateLimiter,
    MaxOfRateLimiter, RateLimiter, RateLimitingQueue, WithMaxWaitRateLimiter,
    default_controller_rate_limiter,
};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

#[test]
fn exponential_doubles_per_item_and_caps() {
    let l = ItemExponentialFailureRateLimiter::new(ms(1), Duration::from_secs(1));
    let waits: Vec<_> = (0..12).map(|_| l.when(&"one")).collect();
    assert_eq!(&waits[..5], &[ms(1), ms(2), ms(4), ms(8), ms(16)]);
    assert_eq!(waits[9], ms(512));
    assert_eq!(waits[10], Duration::from_secs(1), "1024 ms is capped");
    assert_eq!(waits[11], Duration::from_secs(1));
    assert_eq!(l.num_requeues(&"one"), 12);
    assert_eq!(l.when(&"two"), ms(1), "per item");
    l.forget(&"one");
    assert_eq!(l.num_requeues(&"one"), 0);
    assert_eq!(l.when(&"one"), ms(1));
}

#[test]
fn exponential_is_overflow_safe_for_large_requeue_counts() {
    let max = Duration::from_secs(1000);
    let l = ItemExponentialFailureRateLimiter::new(ms(5), max);
    let mut last = Duration::ZERO;
    for n in 0..10_000 {
        let w = l.when(&1u8);
        assert!(w >= last, "waits never shrink (failure {n})");
        assert!(w <= max);
        last = w;
    }
    assert_eq!(last, max);
    assert_eq!(l.num_requeues(&1u8), 10_000);

    // Extreme base and cap: the largest Duration.
    let l = ItemExponentialFailureRateLimiter::new(Duration::MAX, Duration::MAX);
    for _ in 0..300 {
        assert_eq!(l.when(&1u8), Duration::MAX);
    }
    // A cap below the base wins from the start, as client-go.
    let l = ItemExponentialFailureRateLimiter::new(Duration::from_secs(10), ms(1));
    assert_eq!(l.when(&1u8), ms(1));
    // Zero base stays zero however many failures.
    let l = ItemExponentialFailureRateLimiter::new(Duration::ZERO, Duration::from_secs(1));
    for _ in 0..200 {
        assert_eq!(l.when(&1u8), Duration::ZERO);
    }
}

#[test]
fn fast_slow_switches_after_max_fast_attempts() {
    let l = ItemFastSlowRateLimiter::new(ms(5), Duration::from_secs(10), 3);
    let waits: Vec<_> = (0..5).map(|_| l.when(&"k")).collect();
    assert_eq!(
        waits,
        vec![
            ms(5),
            ms(5),
            ms(5),
            Duration::from_secs(10),
            Duration::from_secs(10)
        ]
    );
    assert_eq!(l.num_requeues(&"k"), 5);
    assert_eq!(l.when(&"other"), ms(5));
    l.forget(&"k");
    assert_eq!(l.num_requeues(&"k"), 0);
    assert_eq!(l.when(&"k"), ms(5));
}

#[tokio::test(start_paused = true)]
async fn bucket_allows_burst_then_paces_at_qps() {
    let l = BucketRateLimiter::new(10.0, 3);
    for _ in 0..3 {
        assert_eq!(RateLimiter::<u8>::when(&l, &0), Duration::ZERO);
    }
    // Reservations queue up 100 ms apart.
    assert_eq!(RateLimiter::<u8>::when(&l, &0), ms(100));
    assert_eq!(RateLimiter::<u8>::when(&l, &0), ms(200));
    // After 1 s the debt of 2 tokens is repaid and 8 more accrue, capped at the burst of 3.
    tokio::time::advance(Duration::from_secs(1)).await;
    for _ in 0..3 {
        assert_eq!(RateLimiter::<u8>::when(&l, &0), Duration::ZERO);
    }
    assert_eq!(RateLimiter::<u8>::when(&l, &0), ms(100));
    assert_eq!(RateLimiter::<u8>::num_requeues(&l, &0), 0);
}

#[tokio::test(start_paused = true)]
async fn bucket_edge_rates() {
    let never = BucketRateLimiter::new(0.0, 1);
    assert_eq!(RateLimiter::<u8>::when(&never, &0), Duration::ZERO);
    assert_eq!(RateLimiter::<u8>::when(&never, &0), Duration::MAX);
    let nan = BucketRateLimiter::new(f64::NAN, 0);
    assert_eq!(RateLimiter::<u8>::when(&nan, &0), Duration::MAX);
    let unlimited = BucketRateLimiter::new(f64::INFINITY, 0);
    for _ in 0..1000 {
        assert_eq!(RateLimiter::<u8>::when(&unlimited, &0), Duration::ZERO);
    }
    let slow = BucketRateLimiter::new(1e-300, 0);
    assert_eq!(RateLimiter::<u8>::when(&slow, &0), Duration::MAX);
}

#[test]
fn max_of_takes_the_longest_and_asks_everyone() {
    let l: MaxOfRateLimiter<&str> = MaxOfRateLimiter::new(vec![
        Box::new(ItemFastSlowRateLimiter::new(ms(3), ms(30), 2)),
        Box::new(ItemExponentialFailureRateLimiter::new(
            ms(1),
            Duration::from_secs(1),
        )),
    ]);
    let waits: Vec<_> = (0..7).map(|_| l.when(&"k")).collect();
    assert_eq!(
        waits,
        vec![ms(3), ms(3), ms(30), ms(30), ms(30), ms(32), ms(64)]
    );
    assert_eq!(l.num_requeues(&"k"), 7);
    l.forget(&"k");
    assert_eq!(l.num_requeues(&"k"), 0);
    assert_eq!(l.when(&"k"), ms(3));
    let empty: MaxOfRateLimiter<u8> = MaxOfRateLimiter::new(Vec::new());
    assert_eq!(empty.when(&0), Duration::ZERO);
}

#[test]
fn with_max_wait_caps_and_delegates() {
    let l = WithMaxWaitRateLimiter::new(
        Box::new(ItemExponentialFailureRateLimiter::new(
            ms(10),
            Duration::from_secs(100),
        )),
        ms(50),
    );
    let waits: Vec<_> = (0..5).map(|_| l.when(&1u32)).collect();
    assert_eq!(waits, vec![ms(10), ms(20), ms(40), ms(50), ms(50)]);
    assert_eq!(l.num_requeues(&1), 5);
    l.forget(&1);
    assert_eq!(l.num_requeues(&1), 0);
}

#[tokio::test(start_paused = true)]
async fn default_controller_rate_limiter_is_client_gos() {
    let l = default_controller_rate_limiter::<String>();
    // Per item: 5 ms, 10 ms, 20 ms ... while the bucket's burst of 100 lasts.
    assert_eq!(l.when(&"a".to_string()), ms(5));
    assert_eq!(l.when(&"a".to_string()), ms(10));
    assert_eq!(l.when(&"a".to_string()), ms(20));
    for _ in 0..40 {
        l.when(&"a".to_string());
    }
    assert_eq!(
        l.when(&"a".to_string()),
        Duration::from_secs(1000),
        "capped at 1000 s"
    );
    // 44 tokens used; 56 more distinct items pass on the exponential's 5 ms.
    for i in 0..56 {
        assert_eq!(l.when(&format!("item-{i}")), ms(5));
    }
    // Then the bucket (10 qps) dominates: 100 ms, 200 ms, ...
    assert_eq!(l.when(&"b".to_string()), ms(100));
    assert_eq!(l.when(&"c".to_string()), ms(200));
}

#[tokio::test(start_paused = true)]
async fn rate_limiting_queue_retries_with_backoff() {
    let q = RateLimitingQueue::new(ItemExponentialFailureRateLimiter::new(
        ms(100),
        Duration::from_secs(10),
    ));
    q.add("k");
    let start = tokio::time::Instant::now();
    let mut got_at = Vec::new();
    for attempt in 0..4 {
        let k = q.get().await.unwrap();
        got_at.push(start.elapsed());
        if attempt < 3 {
            q.add_rate_limited(k);
        }
        q.done(&k);
    }
    assert_eq!(got_at, vec![ms(0), ms(100), ms(300), ms(700)]);
    assert_eq!(q.num_requeues(&"k"), 3);
    q.forget(&"k");
    assert_eq!(q.num_requeues(&"k"), 0);
}
