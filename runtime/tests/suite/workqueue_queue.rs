//! `Queue`: client-go's dirty/processing semantics, checked against a reference model with
//! random operation sequences, plus the shutdown behaviours one by one.

use std::collections::{HashSet, VecDeque};
use std::time::Duration;

use futures_util::FutureExt;
use kinform_runtime::workqueue::Queue;
use proptest::prelude::*;

/// client-go's queue written the obvious way: a FIFO plus dirty and processing sets.
#[derive(Default, Debug)]
struct Model {
    queue: VecDeque<u8>,
    dirty: HashSet<u8>,
    processing: HashSet<u8>,
    shutting_down: bool,
}

/// What a `get` does right now: an item, `None` (shut down and empty), or it would wait.
#[derive(Debug, PartialEq)]
enum GetOutcome {
    Item(u8),
    Closed,
    Waits,
}

impl Model {
    fn add(&mut self, k: u8) {
        if self.shutting_down || !self.dirty.insert(k) {
            return;
        }
        if !self.processing.contains(&k) {
            self.queue.push_back(k);
        }
    }

    fn get(&mut self) -> GetOutcome {
        match self.queue.pop_front() {
            Some(k) => {
                self.processing.insert(k);
                self.dirty.remove(&k);
                GetOutcome::Item(k)
            }
            None if self.shutting_down => GetOutcome::Closed,
            None => GetOutcome::Waits,
        }
    }

    fn done(&mut self, k: u8) {
        if self.processing.remove(&k) && self.dirty.contains(&k) {
            self.queue.push_back(k);
        }
    }
}

#[derive(Debug, Clone)]
enum Op {
    Add(u8),
    Get,
    Done(u8),
    DoneLastGot,
    Shutdown,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0u8..8).prop_map(Op::Add),
        5 => Just(Op::Get),
        2 => (0u8..8).prop_map(Op::Done),
        4 => Just(Op::DoneLastGot),
        1 => Just(Op::Shutdown),
    ]
}

fn real_get(q: &Queue<u8>) -> GetOutcome {
    match q.get().now_or_never() {
        Some(Some(k)) => GetOutcome::Item(k),
        Some(None) => GetOutcome::Closed,
        None => GetOutcome::Waits,
    }
}

fn check(q: &Queue<u8>, m: &Model) -> Result<(), TestCaseError> {
    prop_assert_eq!(q.len(), m.queue.len());
    prop_assert_eq!(q.processing_len(), m.processing.len());
    prop_assert_eq!(q.is_shutting_down(), m.shutting_down);
    // Invariants of the model itself (so that the comparison means something): the FIFO holds
    // distinct items that are dirty and not processing.
    let queued: HashSet<u8> = m.queue.iter().copied().collect();
    prop_assert_eq!(queued.len(), m.queue.len());
    for k in &queued {
        prop_assert!(m.dirty.contains(k) && !m.processing.contains(k));
    }
    for k in &m.dirty {
        prop_assert!(queued.contains(k) || m.processing.contains(k));
    }
    Ok(())
}

proptest! {

    #[test]
    fn queue_matches_model(ops in proptest::collection::vec(op(), 1..200)) {
        let q = Queue::new();
        let mut m = Model::default();
        let mut got: Vec<u8> = Vec::new();
        for op in ops {
            match op {
                Op::Add(k) => { q.add(k); m.add(k); }
                Op::Get => {
                    let real = real_get(&q);
                    prop_assert_eq!(&real, &m.get());
                    if let GetOutcome::Item(k) = real { got.push(k); }
                }
                Op::Done(k) => { q.done(&k); m.done(k); }
                Op::DoneLastGot => {
                    if let Some(k) = got.pop() { q.done(&k); m.done(k); }
                }
                Op::Shutdown => { q.shutdown(); m.shutting_down = true; }
            }
            check(&q, &m)?;
        }
        // Wind down: finish everything, then the queue hands out exactly the model's rest.
        for k in got.drain(..) { q.done(&k); m.done(k); }
        q.shutdown();
        m.shutting_down = true;
        loop {
            let real = real_get(&q);
            prop_assert_eq!(&real, &m.get());
            match real {
                GetOutcome::Item(k) => { q.done(&k); m.done(k); }
                _ => break,
            }
            check(&q, &m)?;
        }
        prop_assert_eq!(q.len(), 0);
        prop_assert_eq!(q.processing_len(), 0);
    }
}

#[tokio::test]
async fn duplicate_adds_collapse_and_order_is_fifo() {
    let q = Queue::new();
    for k in ["a", "b", "a", "c", "b"] {
        q.add(k);
    }
    assert_eq!(q.len(), 3);
    assert_eq!(q.get().await, Some("a"));
    assert_eq!(q.get().await, Some("b"));
    assert_eq!(q.get().await, Some("c"));
    assert_eq!(q.len(), 0);
}

#[tokio::test]
async fn readd_while_processing_is_requeued_once_after_done() {
    let q = Queue::new();
    q.add(1);
    let k = q.get().await.unwrap();
    q.add(1);
    q.add(1);
    assert_eq!(q.len(), 0, "not handed out while processing");
    assert!(q.get().now_or_never().is_none());
    q.done(&k);
    assert_eq!(q.len(), 1);
    assert_eq!(q.get().await, Some(1));
    q.done(&1);
    assert_eq!(q.len(), 0);
    assert_eq!(q.processing_len(), 0);
}

#[tokio::test]
async fn done_of_an_item_not_processing_changes_nothing() {
    let q = Queue::new();
    q.add(1);
    q.done(&1);
    q.done(&2);
    assert_eq!(q.len(), 1);
    assert_eq!(q.get().await, Some(1));
    assert!(q.get().now_or_never().is_none(), "no duplicate was queued");
}

#[tokio::test(start_paused = true)]
async fn get_waits_for_an_add() {
    let q = Queue::new();
    let worker = tokio::spawn({
        let q = q.clone();
        async move { q.get().await }
    });
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(!worker.is_finished());
    q.add(7);
    assert_eq!(worker.await.unwrap(), Some(7));
}

#[tokio::test(start_paused = true)]
async fn shutdown_wakes_every_waiting_getter() {
    let q: Queue<u32> = Queue::new();
    let workers: Vec<_> = (0..4)
        .map(|_| {
            let q = q.clone();
            tokio::spawn(async move { q.get().await })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(10)).await;
    q.shutdown();
    for w in workers {
        assert_eq!(w.await.unwrap(), None);
    }
    assert_eq!(
        q.get().await,
        None,
        "immediately None once shut down and empty"
    );
}

#[tokio::test]
async fn after_shutdown_adds_are_ignored_and_queued_items_still_served() {
    let q = Queue::new();
    q.add(1);
    q.add(2);
    q.shutdown();
    q.add(3);
    assert!(q.is_shutting_down());
    assert_eq!(q.get().await, Some(1));
    assert_eq!(q.get().await, Some(2));
    assert_eq!(q.get().await, None);
}

#[tokio::test]
async fn dirty_item_is_requeued_by_done_even_after_shutdown() {
    let q = Queue::new();
    q.add(1);
    let k = q.get().await.unwrap();
    q.add(1);
    q.shutdown();
    q.done(&k);
    assert_eq!(q.get().await, Some(1));
    q.done(&1);
    assert_eq!(q.get().await, None);
}

#[tokio::test(start_paused = true)]
async fn cancelled_get_loses_nothing() {
    let q = Queue::new();
    {
        let pending = q.get();
        let r = tokio::time::timeout(Duration::from_millis(5), pending).await;
        assert!(r.is_err());
    }
    q.add(5);
    assert_eq!(q.get().await, Some(5));
}

#[tokio::test(start_paused = true)]
async fn shutdown_with_drain_waits_for_processing() {
    let q = Queue::new();
    q.add("a");
    q.add("b");
    let a = q.get().await.unwrap();
    let drain = tokio::spawn({
        let q = q.clone();
        async move { q.shutdown_with_drain().await }
    });
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(!drain.is_finished());
    assert!(q.is_shutting_down());
    q.add("c");
    // Workers still get what was queued.
    let b = q.get().await.unwrap();
    q.done(&a);
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(!drain.is_finished(), "b is still processing");
    q.done(&b);
    drain.await.unwrap();
    assert_eq!(q.get().await, None);
}

#[tokio::test(start_paused = true)]
async fn shutdown_releases_a_pending_drain() {
    let q = Queue::new();
    q.add(1);
    let _held = q.get().await.unwrap();
    let drain = tokio::spawn({
        let q = q.clone();
        async move { q.shutdown_with_drain().await }
    });
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(!drain.is_finished());
    q.shutdown();
    drain.await.unwrap();
}

#[tokio::test]
async fn drain_with_nothing_processing_returns_at_once() {
    let q: Queue<u8> = Queue::new();
    q.shutdown_with_drain().await;
    assert!(q.is_shutting_down());
}

#[tokio::test]
async fn emptied_queue_reuses_items() {
    let q = Queue::new();
    for round in 0..3u32 {
        for k in 0..100u32 {
            q.add(k + round);
        }
        while let Some(k) = q.get().now_or_never().flatten() {
            q.done(&k);
        }
        assert_eq!(q.processing_len(), 0);
    }
}
