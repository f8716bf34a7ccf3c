//! [`Controller::run`] of a leader-elected controller: stand by, lead a term, stand by
//! again, until the shutdown future completes (the rules: [`election`](crate::controller::election)).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use futures_util::future::join_all;
use tokio_util::sync::CancellationToken;

use super::Controller;
use crate::controller::action::{Action, Request};
use crate::controller::builder::Register;
use crate::controller::election::{Campaign, ElectionState, Term};
use crate::controller::error::ReconcileFailure;
use crate::controller::queue::{ControllerQueue, QueueSpec};
use crate::controller::status::ControllerPhase;
use kinform_core::resource::Resource;

/// The parts of a leader-elected controller ([`ControllerBuilder::leader_election`](crate::controller::ControllerBuilder::leader_election)).
pub(crate) struct Election<K> {
    pub(crate) state: Arc<ElectionState>,
    /// Registers the handlers again, on a fresh queue, for the next term.
    pub(crate) register: Register<K>,
    /// How to make the next term's queue.
    pub(crate) queue: QueueSpec,
}

/// Stops a term's workers if the run future is dropped while they run (they take no key
/// after that, and the queue hands out no more): the elector, dropped with the run, stops
/// renewing, so no worker may go on as if it still led.
struct HaltOnDrop {
    halt: CancellationToken,
    queue: ControllerQueue,
}

impl Drop for HaltOnDrop {
    fn drop(&mut self) {
        self.halt.cancel();
        self.queue.shutdown();
    }
}

/// How waiting for the Lease ended.
enum Standby {
    Won(Term),
    Shutdown,
    /// The elector ended on its own (it could not run, or its task failed).
    ElectorEnded,
}

impl<K: Resource> Controller<K> {
    /// The run of a leader-elected controller: each term it wins runs the workers until the
    /// Lease is lost (they stop at once, in-flight reconciles finish) or `shutdown` (they
    /// drain first, then the Lease is released); after a lost term the handlers are
    /// registered again on a fresh queue and the replica competes again. A warm standby
    /// starts the informers before its first term, a cold one when it first wins; once
    /// started they run until the end of the run.
    pub(super) async fn run_elected<F, Fut, E>(
        &mut self,
        election: Election<K>,
        reconcile: Arc<F>,
        mut shutdown: Pin<&mut impl Future<Output = ()>>,
    ) where
        F: Fn(Request<K>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Action, E>> + Send + 'static,
        E: ReconcileFailure,
    {
        let state = election.state.clone();
        let identity = state.config.identity.clone();
        let campaign = Campaign::new(state.clone(), self.factory.client().clone());
        let mut started = state.warm;
        if started {
            self.factory.start();
        }
        tracing::info!(controller = %self.name, %identity, warm = state.warm, lease = %state.config.lease_name, "standing by for the leader Lease");
        loop {
            self.status.set_phase(ControllerPhase::Standby);
            let mut candidacy = campaign.stand();
            let standby = {
                let (watches, status) = (&self.watches, &self.status);
                // Marks the caches synced while waiting (a warm standby, or any after its
                // first term); never completes.
                let mark_synced = async {
                    if started {
                        join_all(watches.iter().map(|w| w.wait_for_sync())).await;
                        status.set_synced(true);
                    }
                    std::future::pending::<()>().await;
                };
                tokio::select! {
                    term = candidacy.won() => term.map_or(Standby::ElectorEnded, Standby::Won),
                    () = mark_synced => Standby::ElectorEnded,
                    () = &mut shutdown => Standby::Shutdown,
                }
            };
            let term = match standby {
                Standby::Won(term) => term,
                Standby::Shutdown => {
                    campaign.stop();
                    candidacy.withdraw().await;
                    break;
                }
                Standby::ElectorEnded => {
                    tracing::warn!(controller = %self.name, %identity, "the leader elector ended on its own; standing again after the retry period");
                    tokio::select! {
                        () = tokio::time::sleep(state.config.timing.retry_period) => continue,
                        () = &mut shutdown => break,
                    }
                }
            };

            tracing::info!(controller = %self.name, %identity, "leading: starting the workers once the caches have synced");
            if !started {
                self.factory.start();
                started = true;
            }
            self.status.set_phase(ControllerPhase::Syncing);
            let leading = term.leading().clone();
            let mut stopping = false;
            let synced = tokio::select! {
                _ = join_all(self.watches.iter().map(|w| w.wait_for_sync())) => true,
                () = leading.cancelled() => false,
                () = &mut shutdown => {
                    stopping = true;
                    false
                }
            };
            let mut workers = None;
            let mut guard = None;
            if synced {
                self.status.set_synced(true);
                self.status.set_phase(ControllerPhase::Running);
                // The workers' halt token is the leading token's child: the instant the
                // elector sees the Lease lost, no worker starts another reconcile.
                let w = self.spawn_workers_until(
                    &self.queue,
                    &self.lister,
                    &reconcile,
                    None,
                    leading.child_token(),
                );
                guard = Some(HaltOnDrop {
                    halt: w.halt.clone(),
                    queue: self.queue.clone(),
                });
                workers = Some(w);
                tokio::select! {
                    () = leading.cancelled() => {}
                    () = &mut shutdown => stopping = true,
                }
            }
            let lost = leading.is_cancelled();
            self.status.set_phase(ControllerPhase::Stopping);
            if lost {
                tracing::warn!(controller = %self.name, %identity, "lost the leader Lease; stopping the workers at once (in-flight reconciles finish)");
            }
            // On shutdown the leader drains its queue while it still holds the Lease; a loss
            // meanwhile halts the workers (their token is the leading token's child), which
            // then drop the keys left and the drain ends.
            self.stop_workers(&self.queue, workers, !lost).await;
            drop(guard);
            if stopping {
                campaign.stop();
            }
            let outcome = term.end().await;
            tracing::info!(controller = %self.name, %identity, ?outcome, "leadership term over");
            if stopping {
                for w in &self.watches {
                    w.remove();
                }
                self.status.set_phase(ControllerPhase::Stopped);
                return;
            }
            // Back to standby, caches kept: the next term's queue is filled from them.
            for w in &self.watches {
                w.remove();
            }
            self.status.set_synced(false);
            self.queue = election.queue.build();
            let (lister, watches) = (election.register)(&self.factory, &self.queue, None, None);
            self.lister = lister;
            self.watches = watches;
            self.status.set_queue(&self.queue);
        }
        // Stopped while standing by: nothing in flight.
        self.queue.shutdown();
        for w in &self.watches {
            w.remove();
        }
    }
}
