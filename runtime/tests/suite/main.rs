//! The runtime's suite: DeltaFIFO, store and workqueue contracts, unit, concurrency and property tests.
//!
//! One test binary per crate: every file here was its own integration test target, each
//! linking the whole dependency graph again (some 80 MB apiece in a debug build). As modules
//! of one target they link once, which keeps CI's disk use and link time small. Run one
//! file's tests by its module path: `cargo test -p <crate> --test suite <module>::`.

mod fifo_batch_proptest;
mod fifo_concurrency;
mod fifo_proptest;
mod fifo_unit;
mod store_proptest;
mod store_unit;
mod workqueue_concurrency;
mod workqueue_delaying;
mod workqueue_metrics;
mod workqueue_queue;
mod workqueue_rate_limiters;
