//! The runtime's suite: DeltaFIFO, store and workqueue contracts, unit, concurrency and
//! property tests.
//!
//! The crate's one integration test target; why one, and how to run a module's tests:
//! ARCHITECTURE.md, "Integration tests".

mod fifo_batch_proptest;
mod fifo_concurrency;
mod fifo_proptest;
mod fifo_unit;
mod fifo_watermark_proptest;
mod store_proptest;
mod store_unit;
mod workqueue_concurrency;
mod workqueue_delaying;
mod workqueue_metrics;
mod workqueue_priority;
mod workqueue_queue;
mod workqueue_rate_limiters;
