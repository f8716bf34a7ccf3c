//! `DelayingQueue` on Tokio's paused clock.

use std::time::Duration;

use futures_util::FutureExt;
use kinform_runtime::workqueue::DelayingQueue;

fn secs(s: u64) -> Duration {
    Duration::from_secs(s)
}

/// Lets the timer task run at the current (paused) instant.
async fn settle() {
    for _ in 0..8 {
        tokio::task::yield_now().await;
    }
}

#[tokio::test(start_paused = true)]
async fn item_arrives_when_its_delay_has_passed() {
    let q = DelayingQueue::new();
    q.add_after("a", secs(10));
    assert_eq!(q.waiting_len(), 1);
    tokio::time::advance(secs(9)).await;
    settle().await;
    assert_eq!(q.len(), 0);
    tokio::time::advance(secs(1)).await;
    settle().await;
    assert_eq!(q.len(), 1);
    assert_eq!(q.waiting_len(), 0);
    assert_eq!(q.get().await, Some("a"));
}

#[tokio::test(start_paused = true)]
async fn zero_delay_adds_at_once() {
    let q = DelayingQueue::new();
    q.add_after(1, Duration::ZERO);
    assert_eq!(q.len(), 1);
    assert_eq!(q.waiting_len(), 0);
}

#[tokio::test(start_paused = true)]
async fn readding_only_moves_earlier() {
    let q = DelayingQueue::new();
    q.add_after("x", secs(10));
    q.add_after("x", secs(20)); // later: ignored
    assert_eq!(q.waiting_len(), 1);
    tokio::time::advance(secs(10)).await;
    settle().await;
    assert_eq!(q.get().await, Some("x"));
    q.done(&"x");

    q.add_after("y", secs(10));
    q.add_after("y", secs(3)); // earlier: moved
    assert_eq!(q.waiting_len(), 1);
    tokio::time::advance(secs(3)).await;
    settle().await;
    assert_eq!(q.len(), 1);
    assert_eq!(q.get().await, Some("y"));
    q.done(&"y");
    // The stale entry at 10 s does not add it a second time.
    tokio::time::advance(secs(10)).await;
    settle().await;
    assert_eq!(q.len(), 0);
    assert_eq!(q.waiting_len(), 0);
}

#[tokio::test(start_paused = true)]
async fn items_fire_in_time_order_regardless_of_add_order() {
    let q = DelayingQueue::new();
    q.add_after(3, secs(30));
    q.add_after(1, secs(10));
    q.add_after(2, secs(20));
    let mut order = Vec::new();
    for _ in 0..3 {
        order.push(q.get().await.unwrap());
    }
    assert_eq!(order, vec![1, 2, 3]);
}

#[tokio::test(start_paused = true)]
async fn an_earlier_add_wakes_a_timer_sleeping_for_a_later_one() {
    let q = DelayingQueue::new();
    q.add_after("late", secs(3600));
    settle().await;
    q.add_after("soon", secs(1));
    let start = tokio::time::Instant::now();
    assert_eq!(q.get().await, Some("soon"));
    assert_eq!(start.elapsed(), secs(1));
}

#[tokio::test(start_paused = true)]
async fn waiting_item_already_in_queue_collapses() {
    let q = DelayingQueue::new();
    q.add(5);
    q.add_after(5, secs(1));
    tokio::time::advance(secs(1)).await;
    settle().await;
    assert_eq!(q.len(), 1);
}

#[tokio::test(start_paused = true)]
async fn shutdown_drops_waiting_items_and_ignores_add_after() {
    let q = DelayingQueue::new();
    q.add_after(1, secs(5));
    q.shutdown();
    q.add_after(2, secs(1));
    q.add_after(3, Duration::ZERO);
    tokio::time::advance(secs(10)).await;
    settle().await;
    assert_eq!(q.len(), 0);
    assert_eq!(q.waiting_len(), 0);
    assert_eq!(q.get().now_or_never(), Some(None));
}

#[tokio::test(start_paused = true)]
async fn huge_delay_does_not_overflow() {
    let q = DelayingQueue::new();
    q.add_after(1, Duration::MAX);
    q.add_after(2, secs(1));
    tokio::time::advance(secs(2)).await;
    settle().await;
    assert_eq!(q.get().await, Some(2));
    assert_eq!(q.waiting_len(), 1);
}

#[tokio::test(start_paused = true)]
async fn a_worker_waiting_in_get_receives_a_delayed_item() {
    let q = DelayingQueue::new();
    let worker = tokio::spawn({
        let q = q.clone();
        async move { q.get().await }
    });
    q.add_after(9, Duration::from_millis(250));
    assert_eq!(worker.await.unwrap(), Some(9));
}

#[tokio::test(start_paused = true)]
async fn dropping_every_handle_ends_the_timer_task() {
    let metrics = tokio::runtime::Handle::current().metrics();
    let before = metrics.num_alive_tasks();
    let q: DelayingQueue<u32> = DelayingQueue::new();
    q.add_after(1, secs(60));
    settle().await;
    assert_eq!(metrics.num_alive_tasks(), before + 1, "one timer task");
    let plain = q.queue().clone();
    drop(q);
    settle().await;
    assert_eq!(metrics.num_alive_tasks(), before, "timer task ended");
    tokio::time::advance(secs(120)).await;
    settle().await;
    assert_eq!(
        plain.len(),
        0,
        "nothing fires once the delaying queue is gone"
    );
}

#[tokio::test(start_paused = true)]
async fn shutdown_through_the_plain_queue_ends_the_timer_task() {
    let metrics = tokio::runtime::Handle::current().metrics();
    let before = metrics.num_alive_tasks();
    let q: DelayingQueue<u32> = DelayingQueue::new();
    q.add_after(1, secs(60));
    settle().await;
    q.queue().shutdown();
    settle().await;
    assert_eq!(metrics.num_alive_tasks(), before);
    assert_eq!(q.waiting_len(), 0);
}

mod model {
    //! `DelayingQueue` against a reference model with random `add_after`s and clock advances.

    use std::collections::{BTreeSet, HashMap};
    use std::time::Duration;

    use futures_util::FutureExt;
    use kinform_runtime::workqueue::DelayingQueue;
    use proptest::prelude::*;

    #[derive(Debug, Clone)]
    enum Op {
        AddAfter(u8, u64),
        Advance(u64),
        Drain,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            5 => (0u8..6, 0u64..20).prop_map(|(k, d)| Op::AddAfter(k, d)),
            3 => (0u64..10).prop_map(Op::Advance),
            1 => Just(Op::Drain),
        ]
    }

    #[derive(Default)]
    struct Model {
        now: u64,
        waiting: HashMap<u8, u64>,
        queued: BTreeSet<u8>,
    }

    async fn settle() {
        for _ in 0..8 {
            tokio::task::yield_now().await;
        }
    }

    fn drain(q: &DelayingQueue<u8>) -> BTreeSet<u8> {
        let mut got = BTreeSet::new();
        while let Some(Some(k)) = q.get().now_or_never() {
            assert!(got.insert(k), "{k} handed out twice");
            q.done(&k);
        }
        got
    }

    async fn run(ops: Vec<Op>) -> Result<(), TestCaseError> {
        let q = DelayingQueue::new();
        let mut m = Model::default();
        for op in ops {
            match op {
                Op::AddAfter(k, 0) => {
                    q.add_after(k, Duration::ZERO);
                    m.queued.insert(k);
                }
                Op::AddAfter(k, d) => {
                    q.add_after(k, Duration::from_secs(d));
                    let at = m.now + d;
                    let e = m.waiting.entry(k).or_insert(at);
                    *e = (*e).min(at);
                }
                Op::Advance(d) => {
                    tokio::time::advance(Duration::from_secs(d)).await;
                    settle().await;
                    m.now += d;
                    let now = m.now;
                    let ready: Vec<u8> = m
                        .waiting
                        .iter()
                        .filter(|&(_, &at)| at <= now)
                        .map(|(&k, _)| k)
                        .collect();
                    for k in ready {
                        m.waiting.remove(&k);
                        m.queued.insert(k);
                    }
                }
                Op::Drain => {
                    let got = drain(&q);
                    prop_assert_eq!(&got, &m.queued);
                    m.queued.clear();
                }
            }
            prop_assert_eq!(q.len(), m.queued.len());
            prop_assert_eq!(q.waiting_len(), m.waiting.len());
        }
        Ok(())
    }

    proptest! {

        #[test]
        fn delaying_queue_matches_model(ops in proptest::collection::vec(op(), 1..80)) {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_time()
                .start_paused(true)
                .build()
                .unwrap();
            rt.block_on(run(ops))?;
        }
    }
}
