//! Leader election on `coordination.k8s.io/v1` Lease objects.
//!
//! Several replicas of a controller run; one of them does the work. Kubernetes itself is the
//! distributed lock: the replicas compete for one Lease, the way client-go's
//! `tools/leaderelection` (`leaderelection.go`, `resourcelock/leaselock.go`) does it, and
//! interoperate with Go controllers competing for the same Lease.
//!
//! The algorithm ([`LeaderElector::run`], client-go's `tryAcquireOrRenew`):
//!
//! - A candidate reads the Lease. If it does not exist, it creates it naming itself holder.
//! - A Lease held by someone else is honoured while `observed_time + leaseDurationSeconds >
//!   now`, where `observed_time` is when **this** candidate, on its own monotonic clock, last
//!   saw the record change. The record's `renewTime` is never compared to the local clock, so
//!   clock skew between replicas does not matter.
//! - A free (empty holder) or expired Lease is taken over by writing the candidate's identity
//!   with `leaseTransitions + 1`. Every write is an update at the resourceVersion last read
//!   ([`ResourceLock`]): of two candidates racing, one gets 409 Conflict and retries next
//!   period.
//! - The leader renews every `retry_period` (first optimistically from the record it wrote,
//!   then through a fresh read). If no renewal succeeds within `renew_deadline`, it steps
//!   down. As `renew_deadline < lease_duration`, it has stopped before any other candidate
//!   may consider the lease expired.
//! - On stepping down, the leading token given to `on_started_leading` is cancelled, then
//!   `on_stopped_leading` is called, then (with `release_on_cancel`) the holder is cleared,
//!   so a successor does not wait for expiry.
//!
//! Differences from client-go, all on the side of safety: the leading token is cancelled and
//! `on_stopped_leading` runs *before* the release (client-go releases first); a leader that
//! sees another holder steps down at once instead of at the deadline; release checks the
//! fresh record still names this candidate; `on_stopped_leading` is only called by a
//! candidate that led; `on_new_leader` is not called for an empty holder. The Lease's
//! `leaseDurationSeconds` is whole seconds, so `lease_duration` is rounded up.
//!
//! ```no_run
//! # async fn demo(client: kinform_client::Client) -> Result<(), Box<dyn std::error::Error>> {
//! use kinform_client::Api;
//! use kinform_runtime::leader::{
//!     CancellationToken, LeaderCallbacks, LeaderElectionConfig, LeaderElector, LeaseLock,
//! };
//!
//! let lock = LeaseLock::new(Api::namespaced(client, "kube-system"), "my-controller", "pod-1");
//! let callbacks = LeaderCallbacks::new(|leading: CancellationToken| async move {
//!     // run the controller until `leading` is cancelled
//!     leading.cancelled().await;
//! })
//! .on_stopped_leading(|| tracing::info!("no longer leader"));
//! let config = LeaderElectionConfig::default().release_on_cancel(true);
//! let elector = LeaderElector::new(lock, config, callbacks)?;
//! elector.run(CancellationToken::new()).await;
//! # Ok(()) }
//! ```

mod callbacks;
mod config;
mod elector;
mod lock;
mod record;

#[cfg(test)]
mod tests;

pub use callbacks::LeaderCallbacks;
pub use config::{ConfigError, JITTER_FACTOR, LeaderElectionConfig};
pub use elector::{LeaderElector, RunOutcome};
pub use lock::{LeaseLock, LockError, ResourceLock};
pub use record::LeaderElectionRecord;

/// The token of [`LeaderElector::run`] (cancel it to stop competing) and of the leading
/// callback (cancelled when leadership ends): tokio-util's, re-exported so that electing a
/// leader needs no tokio-util dependency. Also `kinform::CancellationToken`.
pub use tokio_util::sync::CancellationToken;
