//! [`ControllerStatus`]: a read-only handle on a controller's live state, taken before
//! [`Controller::run`](super::Controller::run) consumes the controller and valid while it
//! runs: its phase, whether its caches have synced, its workqueue's depth per priority, its
//! election or shard, its counters. The admin endpoint's `/readyz` and `/debug/state` read
//! controllers through it.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use parking_lot::Mutex;

use super::election::{ElectionSnapshot, ElectionState};
use super::metrics::{ReconcileStats, Recorder};
use super::queue::ControllerQueue;
use super::shard::{ShardHandle, ShardStats, Shared, lease_name};
use crate::workqueue::Priority;

/// Where a controller is in its run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ControllerPhase {
    /// Built; [`run`](super::Controller::run) has not started.
    Idle,
    /// Running, waiting for its informers to sync before it starts its workers (or, sharded,
    /// waiting for its membership).
    Syncing,
    /// Its workers reconcile (a leader-elected controller leads).
    Running,
    /// Leader-elected and not leading: competing for the Lease, reconciling nothing.
    Standby,
    /// Stopping its workers: after a lost Lease (or membership) no key starts and the
    /// reconciles in flight finish; on shutdown the queued keys drain first.
    Stopping,
    /// [`run`](super::Controller::run) has returned.
    Stopped,
}

impl ControllerPhase {
    /// The phase in lower case (`idle`, `syncing`, `running`, `standby`, `stopping`,
    /// `stopped`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Idle => "idle",
            Self::Syncing => "syncing",
            Self::Running => "running",
            Self::Standby => "standby",
            Self::Stopping => "stopping",
            Self::Stopped => "stopped",
        }
    }
}

/// A controller's workqueue now.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct QueueSnapshot {
    /// Keys waiting to be handed out.
    pub depth: usize,
    /// The same keys by priority, highest first ([`ControllerQueue::len_by_priority`]).
    pub depth_by_priority: Vec<(Priority, usize)>,
    /// Keys handed out and not yet done (reconciles in flight).
    pub processing: usize,
    /// Whether the queue is [`ControllerQueue::Priority`].
    pub priority_queue: bool,
}

/// A sharded replica's membership now (see [`ShardHandle`]).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ShardSnapshot {
    /// The Leases' namespace.
    pub lease_namespace: String,
    /// This replica's member Lease (absent for a sharder apart).
    pub member_lease: Option<String>,
    /// The Lease of the sharder election (when this replica stands for sharder).
    pub sharder_lease: Option<String>,
    /// The shard label value of the current membership.
    pub identity: String,
    /// The replica's sharding counters.
    pub stats: ShardStats,
}

/// A controller as it is now ([`ControllerStatus::snapshot`]).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ControllerSnapshot {
    /// The controller's name.
    pub name: String,
    /// Where it is in its run.
    pub phase: ControllerPhase,
    /// Whether every informer it watches has delivered its initial list to its handlers
    /// (for the current term or membership).
    pub caches_synced: bool,
    /// Its current workqueue.
    pub queue: QueueSnapshot,
    /// Its reconcile counters.
    pub stats: ReconcileStats,
    /// Its election, when [leader-elected](super::ControllerBuilder::leader_election).
    pub election: Option<ElectionSnapshot>,
    /// Its membership, when [sharded](super::ControllerBuilder::sharded).
    pub shard: Option<ShardSnapshot>,
}

impl ControllerSnapshot {
    /// Whether the controller is ready, or why not: ready when its caches have synced and
    /// it reconciles (leading, or not elected at all) or is a warm standby. A cold standby
    /// is never ready (its caches start only when it leads): a readiness probe on it would
    /// keep every standby pod unready.
    pub fn readiness(&self) -> Result<(), String> {
        let name = &self.name;
        let warm = self.election.as_ref().is_some_and(|e| e.warm_standby);
        match self.phase {
            ControllerPhase::Idle => Err(format!("controller {name}: not started")),
            ControllerPhase::Stopped => Err(format!("controller {name}: stopped")),
            ControllerPhase::Stopping => Err(format!("controller {name}: stopping")),
            ControllerPhase::Standby if !warm => Err(format!(
                "controller {name}: cold standby (its caches start when it leads)"
            )),
            _ if !self.caches_synced => Err(format!("controller {name}: caches not synced yet")),
            ControllerPhase::Syncing => Err(format!("controller {name}: starting")),
            ControllerPhase::Running | ControllerPhase::Standby => Ok(()),
        }
    }
}

/// The state a controller's run updates and its status handles read.
pub(crate) struct StatusCell {
    name: String,
    phase: Mutex<ControllerPhase>,
    caches_synced: AtomicBool,
    queue: Mutex<ControllerQueue>,
    recorder: Arc<Recorder>,
    election: Option<Arc<ElectionState>>,
    shard: Option<Arc<Shared>>,
}

impl StatusCell {
    pub(crate) fn new(
        name: String,
        queue: ControllerQueue,
        recorder: Arc<Recorder>,
        election: Option<Arc<ElectionState>>,
        shard: Option<Arc<Shared>>,
    ) -> Self {
        Self {
            name,
            phase: Mutex::new(ControllerPhase::Idle),
            caches_synced: AtomicBool::new(false),
            queue: Mutex::new(queue),
            recorder,
            election,
            shard,
        }
    }

    pub(crate) fn set_phase(&self, phase: ControllerPhase) {
        *self.phase.lock() = phase;
    }

    pub(crate) fn set_synced(&self, synced: bool) {
        self.caches_synced.store(synced, Ordering::SeqCst);
    }

    /// The queue the workers take keys from now (a new one for each term or membership).
    pub(crate) fn set_queue(&self, queue: &ControllerQueue) {
        *self.queue.lock() = queue.clone();
    }

    fn snapshot(&self) -> ControllerSnapshot {
        let queue = self.queue.lock().clone();
        ControllerSnapshot {
            name: self.name.clone(),
            phase: *self.phase.lock(),
            caches_synced: self.caches_synced.load(Ordering::SeqCst),
            queue: QueueSnapshot {
                depth: queue.len(),
                depth_by_priority: queue.len_by_priority(),
                processing: queue.processing_len(),
                priority_queue: queue.as_priority().is_some(),
            },
            stats: self.recorder.counters.snapshot(),
            election: self.election.as_ref().map(|e| e.snapshot()),
            shard: self.shard.as_ref().map(|s| {
                let role = s.config.role;
                ShardSnapshot {
                    lease_namespace: s.config.lease_namespace.clone(),
                    member_lease: role
                        .is_member()
                        .then(|| lease_name(&s.controller, &s.config.identity)),
                    sharder_lease: role
                        .stands_for_sharder()
                        .then(|| format!("{}-sharder", s.controller)),
                    identity: ShardHandle(s.clone()).identity().to_string(),
                    stats: ShardHandle(s.clone()).stats(),
                }
            }),
        }
    }
}

/// A read-only handle on one controller's live state
/// ([`Controller::status`](super::Controller::status)); cheap to clone, valid while and
/// after the controller runs.
#[derive(Clone)]
pub struct ControllerStatus(pub(crate) Arc<StatusCell>);

impl fmt::Debug for ControllerStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.snapshot().fmt(f)
    }
}

impl ControllerStatus {
    /// The controller's name.
    pub fn name(&self) -> &str {
        &self.0.name
    }

    /// The controller now: taken field by field, each under its own lock.
    pub fn snapshot(&self) -> ControllerSnapshot {
        self.0.snapshot()
    }
}
