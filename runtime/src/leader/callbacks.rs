//! [`LeaderCallbacks`]: what a candidate does when it gains or loses leadership, client-go's
//! `LeaderCallbacks`.

use std::future::Future;

use futures_util::future::BoxFuture;
use tokio_util::sync::CancellationToken;

type Started = Box<dyn Fn(CancellationToken) -> BoxFuture<'static, ()> + Send + Sync>;
type Stopped = Box<dyn Fn() + Send + Sync>;
type NewLeader = Box<dyn Fn(&str) + Send + Sync>;

/// Callbacks of a [`LeaderElector`](super::LeaderElector).
#[must_use]
pub struct LeaderCallbacks {
    pub(crate) started: Started,
    pub(crate) stopped: Option<Stopped>,
    pub(crate) new_leader: Option<NewLeader>,
}

impl std::fmt::Debug for LeaderCallbacks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LeaderCallbacks")
            .field("on_stopped_leading", &self.stopped.is_some())
            .field("on_new_leader", &self.new_leader.is_some())
            .finish_non_exhaustive()
    }
}

impl LeaderCallbacks {
    /// `on_started_leading` is spawned as a task when leadership is acquired; its token is
    /// cancelled the moment leadership is lost or the elector is cancelled, before
    /// `on_stopped_leading` runs. The work must stop when the token fires.
    pub fn new<F, Fut>(on_started_leading: F) -> Self
    where
        F: Fn(CancellationToken) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        Self {
            started: Box::new(move |token| Box::pin(on_started_leading(token))),
            stopped: None,
            new_leader: None,
        }
    }

    /// Called synchronously when this candidate stops leading (after having led), before
    /// the lease is released and before [`run`](super::LeaderElector::run) returns.
    pub fn on_stopped_leading(mut self, f: impl Fn() + Send + Sync + 'static) -> Self {
        self.stopped = Some(Box::new(f));
        self
    }

    /// Called synchronously with the holder's identity whenever the observed holder changes
    /// to a non-empty one (this candidate included). Must not block.
    pub fn on_new_leader(mut self, f: impl Fn(&str) + Send + Sync + 'static) -> Self {
        self.new_leader = Some(Box::new(f));
        self
    }
}
