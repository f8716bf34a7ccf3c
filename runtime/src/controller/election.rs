//! Leader-elected controllers ([`ControllerBuilder::leader_election`](super::ControllerBuilder::leader_election)):
//! several replicas of one controller run, one of them reconciles, and the others wait to
//! take over, optionally with their caches already synced
//! ([`warm_standby`](super::ControllerBuilder::warm_standby)).
//!
//! The replicas compete for one `coordination.k8s.io/v1` Lease with the elector of
//! [`crate::leader`] (client-go's `tools/leaderelection`), so a Go controller holding the
//! same Lease name excludes them and they exclude it.
//!
//! **Terms.** A replica's run is a series of terms. In each it competes for the Lease; when
//! it wins, its workers start; when the Lease is lost (no renewal within `renew_deadline`,
//! or another holder seen), the workers stop at once: a key taken after the loss is dropped,
//! the reconciles in flight finish, and only then does the elector count the term as over
//! and, if configured, release the Lease. The replica then stands by and competes again, as
//! long as [`Controller::run`](super::Controller::run)'s shutdown has not come: losing the
//! Lease never ends the process. Each term works from a fresh workqueue, filled from the
//! cache when the term's handlers are registered (every cached key is queued, at
//! [`Priority::LOW`](crate::workqueue::Priority::LOW) with the priority queue), so a new
//! leader reconciles every object once, as after a restart. No term starts before the
//! previous one's reconciles have all returned, so one replica never reconciles a key twice
//! at once across terms.
//!
//! **Warm and cold standby.** A cold standby (the default) starts the factory's informers
//! only when it first wins, and reconciles once they have synced; a warm standby starts them
//! at once and keeps its caches in sync while it waits, so a new leader reconciles as soon
//! as it holds the Lease, with its keys already queued. Either way the informers keep
//! running after a lost term: the caches are kept for the next one. On shutdown a leader
//! drains its queue (as an unelected controller does), then stops competing and, with
//! `release_on_cancel` (the default here), clears the Lease's holder so a standby takes over
//! at its next attempt instead of after the lease duration.
//!
//! **Upstream.** controller-runtime's manager runs every leader-election runnable only after
//! winning, and exits the process when the Lease is lost (its `OnStoppedLeading` returns
//! "leader election lost"); its warm replicas (`EnableWarmup`, controller-runtime #3192)
//! start a controller's sources before winning, so the queue is filled while it waits, and
//! start the workers on winning. KEP-5366 (graceful leader transition, kube-controller-manager
//! and kube-scheduler behind the `GracefulLeaderTransition` gate) keeps the process after a
//! loss: the controllers stop on the cancelled context and the component runs for the Lease
//! again, releasing what it created as leader. kinform does both, per controller, and
//! differs: after a loss the caches are kept (warm or cold, a started informer keeps
//! watching; KEP-5366 tears down what the term built), the next term's queue is filled again
//! from the cache rather than keeping the old queue, and the elector waits for the term's
//! reconciles to return before it releases the Lease (client-go releases first).
//!
//! **RBAC**: `get`, `create` and `update` on `coordination.k8s.io` `leases` in the Lease's
//! namespace, beside what the controller itself needs.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use k8s_openapi::api::coordination::v1::Lease;
use parking_lot::Mutex;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tokio_util::sync::{CancellationToken, DropGuard};

use crate::leader::{
    ConfigError, LeaderCallbacks, LeaderElectionConfig, LeaderElector, LeaseLock, RunOutcome,
};
use kinform_client::{Api, Client};

/// The Lease a [leader-elected](super::ControllerBuilder::leader_election) controller
/// competes for, this replica's identity in it, and the elector's timing.
#[derive(Clone, Debug, PartialEq, Eq)]
#[must_use]
pub struct LeaderElection {
    /// The namespace of the Lease.
    pub lease_namespace: String,
    /// The Lease's name, the same in every replica (e.g. the controller's name).
    pub lease_name: String,
    /// This replica's identity, unique among the replicas (the pod name in a cluster): the
    /// Lease's `holderIdentity` while it leads.
    pub identity: String,
    /// The elector's timing (default: client-go's 15 s / 10 s / 2 s, with
    /// `release_on_cancel` on: a replica that shuts down clears the holder, so a standby
    /// takes over without waiting for the lease to expire; client-go's default is off).
    pub timing: LeaderElectionConfig,
}

impl LeaderElection {
    /// Competes for the Lease `lease_namespace/lease_name` as `identity`, with the default
    /// timing.
    pub fn new(
        lease_namespace: impl Into<String>,
        lease_name: impl Into<String>,
        identity: impl Into<String>,
    ) -> Self {
        Self {
            lease_namespace: lease_namespace.into(),
            lease_name: lease_name.into(),
            identity: identity.into(),
            timing: LeaderElectionConfig::default().release_on_cancel(true),
        }
    }

    /// The elector's timing (and `release_on_cancel`).
    pub fn timing(mut self, timing: LeaderElectionConfig) -> Self {
        self.timing = timing;
        self
    }

    /// Checks the timing as client-go does ([`LeaderElectionConfig::validate`]) and that
    /// the identity and Lease name are not empty.
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.timing.validate()?;
        if self.identity.is_empty() {
            return Err(ConfigError::EmptyIdentity);
        }
        if self.lease_name.is_empty() {
            return Err(ConfigError::EmptyLeaseName);
        }
        Ok(())
    }
}

/// A leader-elected controller's election as it is now (see
/// [`ControllerSnapshot::election`](super::ControllerSnapshot::election)).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ElectionSnapshot {
    /// The Lease's namespace.
    pub lease_namespace: String,
    /// The Lease's name.
    pub lease_name: String,
    /// This replica's identity.
    pub identity: String,
    /// Whether the replica keeps its caches synced while it stands by.
    pub warm_standby: bool,
    /// Whether this replica holds the Lease now (from winning until its term is over).
    pub leading: bool,
    /// The holder this replica last saw in the Lease (itself included), if any.
    pub holder: Option<String>,
    /// How many terms this replica has led (counting the current one).
    pub terms: u64,
}

/// The live state of one replica's election, shared by its run and its status handle.
pub(crate) struct ElectionState {
    pub(crate) config: LeaderElection,
    pub(crate) warm: bool,
    leading: AtomicBool,
    terms: AtomicU64,
    holder: Mutex<Option<String>>,
}

impl fmt::Debug for ElectionState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.snapshot().fmt(f)
    }
}

impl ElectionState {
    pub(crate) fn new(config: LeaderElection, warm: bool) -> Self {
        Self {
            config,
            warm,
            leading: AtomicBool::new(false),
            terms: AtomicU64::new(0),
            holder: Mutex::new(None),
        }
    }

    pub(crate) fn snapshot(&self) -> ElectionSnapshot {
        ElectionSnapshot {
            lease_namespace: self.config.lease_namespace.clone(),
            lease_name: self.config.lease_name.clone(),
            identity: self.config.identity.clone(),
            warm_standby: self.warm,
            leading: self.leading.load(Ordering::SeqCst),
            holder: self.holder.lock().clone(),
            terms: self.terms.load(Ordering::SeqCst),
        }
    }
}

/// The Lease a term was won on, as the elector hands it over: the leading token (cancelled
/// when the Lease is lost) and the sender that tells the elector the term's work is over.
type Won = (CancellationToken, oneshot::Sender<()>);

/// One replica's candidacy over all its terms. Dropping it (with the run future) stops the
/// elector: no renewal after that.
pub(crate) struct Campaign {
    state: Arc<ElectionState>,
    api: Api<Lease>,
    stop: CancellationToken,
    _stop_on_drop: DropGuard,
}

impl Campaign {
    pub(crate) fn new(state: Arc<ElectionState>, client: Client) -> Self {
        let api = Api::namespaced(client, &state.config.lease_namespace);
        let stop = CancellationToken::new();
        Self {
            state,
            api,
            _stop_on_drop: stop.clone().drop_guard(),
            stop,
        }
    }

    /// Stops competing: an elector not leading returns at once, a leading one after its term
    /// is over (releasing the Lease if configured).
    pub(crate) fn stop(&self) {
        self.stop.cancel();
    }

    /// Starts one elector; [`Candidacy::won`] waits for it to win.
    pub(crate) fn stand(&self) -> Candidacy {
        let (won_tx, won_rx) = oneshot::channel::<Won>();
        let won_tx = Mutex::new(Some(won_tx));
        let state = self.state.clone();
        let holder = self.state.clone();
        let callbacks = LeaderCallbacks::new(move |leading: CancellationToken| {
            let won_tx = won_tx.lock().take();
            let state = state.clone();
            async move {
                let Some(won_tx) = won_tx else { return };
                let (done_tx, done_rx) = oneshot::channel();
                state.leading.store(true, Ordering::SeqCst);
                state.terms.fetch_add(1, Ordering::SeqCst);
                if won_tx.send((leading, done_tx)).is_ok() {
                    // Until the run has stopped the term's workers (or was dropped).
                    let _ = done_rx.await;
                }
                state.leading.store(false, Ordering::SeqCst);
            }
        })
        .on_new_leader(move |id| *holder.holder.lock() = Some(id.to_owned()));
        let config = &self.state.config;
        let lock = LeaseLock::new(
            self.api.clone(),
            config.lease_name.clone(),
            config.identity.clone(),
        );
        let task = match LeaderElector::new(lock, config.timing.clone(), callbacks) {
            Ok(elector) => {
                let stop = self.stop.clone();
                Some(tokio::spawn(async move { elector.run(stop).await }))
            }
            Err(error) => {
                // Validated by the builder; kept as an error path rather than a panic.
                tracing::error!(%error, lease = %config.lease_name, "cannot run the leader election");
                None
            }
        };
        Candidacy { won_rx, task }
    }
}

/// One elector, until it has won (or stopped).
pub(crate) struct Candidacy {
    won_rx: oneshot::Receiver<Won>,
    task: Option<JoinHandle<RunOutcome>>,
}

impl Candidacy {
    /// Waits until this elector leads; `None` when it stopped without leading (the campaign
    /// was stopped, or the elector could not run, in which case this never completes, so
    /// that a broken election never spins).
    pub(crate) async fn won(&mut self) -> Option<Term> {
        if self.task.is_none() {
            std::future::pending::<()>().await;
        }
        match (&mut self.won_rx).await {
            Ok((leading, done)) => Some(Term {
                leading,
                done,
                task: self.task.take(),
            }),
            Err(_) => {
                if let Some(task) = self.task.take() {
                    let _ = task.await;
                }
                None
            }
        }
    }

    /// Waits for the elector to end after [`Campaign::stop`] (a term it won meanwhile ends
    /// at once: nothing was started for it).
    pub(crate) async fn withdraw(mut self) {
        self.won_rx.close();
        if let Ok((_, done)) = self.won_rx.try_recv() {
            drop(done);
        }
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

/// A term this replica leads.
pub(crate) struct Term {
    leading: CancellationToken,
    done: oneshot::Sender<()>,
    task: Option<JoinHandle<RunOutcome>>,
}

impl Term {
    /// Cancelled when the Lease is lost (or the campaign stopped).
    pub(crate) fn leading(&self) -> &CancellationToken {
        &self.leading
    }

    /// Tells the elector the term's work is over (its workers have stopped) and waits for
    /// it to return: after a stopped campaign it has released the Lease if configured to.
    pub(crate) async fn end(self) -> Option<RunOutcome> {
        let Self { done, task, .. } = self;
        let _ = done.send(());
        match task {
            Some(task) => task.await.ok(),
            None => None,
        }
    }
}
