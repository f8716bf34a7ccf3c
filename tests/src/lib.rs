//! The shared support of kinform's tests, and the home of its cross-crate integration tests
//! (`tests/tests/suite/`: clients, informers, controllers, leader election, events and derived
//! types against `TestApiServer`, through the `kinform` facade).
//!
//! One module per kind of set-up, used by every crate's tests (each crate lists this one as a
//! dev-dependency), so that no test file carries its own copy:
//!
//! - [`env`]: a `TestApiServer` with a kinform client bound to it, object builders, watch
//!   helpers;
//! - [`informer`]: fast-backoff factories, a recording handler and the informer contract's
//!   history check;
//! - [`controller`]: factories and a log of reconcile calls that tests wait on;
//! - [`shard`]: a Widget CRD, a witness of concurrent reconciles and sharded replicas;
//! - [`consistency`]: a Tally CRD and a controller that counts its acts on a stale cache,
//!   for the consistency guard;
//! - [`fleet`]: the work of a fleet's replicas per cluster and a witness that no two
//!   replicas run one cluster at once;
//! - [`election`]: replicas of a leader-elected controller and a log of their reconciles
//!   that catches two replicas reconciling at once;
//! - [`http`]: a raw HTTP client (no kinform code) for checking the test server against the
//!   wire protocol itself;
//! - [`kubectl`]: the real kubectl pointed at a test server;
//! - [`python`]: the official Python client, running a pytest suite against a test server;
//! - [`proxy`]: a TCP proxy in front of the server for one client: counts the bytes it has
//!   read (backpressure tests), and cuts it off and heals the link (partition tests);
//! - [`mock`]: a small canned HTTP(S) server with its own CA, for client tests that need
//!   answers no real server gives;
//! - [`webhook`]: small admission and conversion webhook servers over real TLS that decide
//!   on what they are sent, for the tests of TestApiServer's webhook calls.
//!
//! Waits are for conditions ([`eventually`]), never fixed sleeps.

use std::time::Duration;

pub mod consistency;
pub mod controller;
pub mod election;
pub mod env;
pub mod fleet;
pub mod http;
pub mod informer;
pub mod kubectl;
pub mod mock;
pub mod proxy;
pub mod python;
pub mod shard;
pub mod webhook;

/// The numeric arguments of a benchmark binary (those not starting with `--`, which cargo
/// and the harness pass), in order; panics naming `usage` on one that is not a number.
pub fn bench_args(usage: &str) -> Vec<usize> {
    std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .map(|a| a.parse().unwrap_or_else(|_| panic!("arguments: {usage}")))
        .collect()
}

/// `bytes` in MiB, for benchmark tables.
pub fn mib(bytes: u64) -> f64 {
    #[allow(clippy::cast_precision_loss)]
    let b = bytes as f64;
    b / (1024.0 * 1024.0)
}

/// Resident memory of this process (`VmRSS` of `/proc/self/status`), in bytes; 0 where it
/// cannot be read (not Linux).
pub fn rss_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        .map_or(0, |kib| kib * 1024)
}

/// Bytes the allocator holds allocated for the program now (glibc's `mallinfo2`: in-use
/// chunks of every arena plus mmapped blocks), without the free memory it keeps, which RSS
/// includes; 0 where glibc is not the allocator. Beside [`rss_bytes`] it tells live memory
/// from the allocator's retention. (The workspace denies `unsafe`; this test-support call
/// is its one exception, for a figure no safe API gives.)
pub fn heap_bytes() -> u64 {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: `mallinfo2` takes no argument, only reads the allocator's statistics
        // (taking each arena's lock) and returns a plain struct by value; glibc >= 2.33
        // has it, as every supported Debian does.
        #[allow(unsafe_code)]
        let info = unsafe { libc::mallinfo2() };
        (info.uordblks + info.hblkhd) as u64
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        0
    }
}

/// Polls `cond` every 20 ms until it holds, for at most `limit`; the last answer of `cond`.
pub async fn eventually(limit: Duration, mut cond: impl AsyncFnMut() -> bool) -> bool {
    let deadline = tokio::time::Instant::now() + limit;
    while tokio::time::Instant::now() < deadline {
        if cond().await {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    cond().await
}
