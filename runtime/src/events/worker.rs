//! The sender task: drains the queue one request at a time (creates, series PATCHes),
//! retries unreachable-server errors as client-go's `recordEvent` does, and prunes the
//! correlation state every `series_finish`.

use std::future::Future;
use std::sync::Arc;

use k8s_openapi::api::events::v1::Event;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use serde_json::json;
use tokio::sync::{mpsc, oneshot};
use tokio::time::{Instant, MissedTickBehavior};

use super::recorder::{Counters, Shared};
use kinform_client::{Api, Client, Error, Patch, PatchParams, PostParams};

/// One unit of work for the sender.
pub(crate) enum Work {
    /// Create this event.
    Create(Box<Event>),
    /// Send the current series of this correlation key.
    Series(String),
    /// Answer once everything queued before has been handled.
    Flush(oneshot::Sender<()>),
}

struct Sender {
    client: Client,
    shared: Arc<Shared>,
}

pub(crate) async fn run_worker(client: Client, shared: Arc<Shared>, mut rx: mpsc::Receiver<Work>) {
    let sender = Sender { client, shared };
    let period = sender.shared.config.series_finish;
    let mut prune = tokio::time::interval_at(Instant::now() + period, period);
    prune.set_missed_tick_behavior(MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            work = rx.recv() => match work {
                None => break,
                Some(Work::Create(event)) => sender.create(*event).await,
                Some(Work::Series(key)) => sender.series(&key).await,
                Some(Work::Flush(done)) => {
                    let _ = done.send(());
                }
            },
            _ = prune.tick() => {
                let now = Instant::now();
                let mut state = sender.shared.state.lock();
                state.series.prune(now);
                state.spam.prune(now);
            }
        }
    }
}

impl Sender {
    fn api(&self, event: &Event) -> Api<Event> {
        Api::namespaced(
            self.client.clone(),
            event.metadata.namespace.as_deref().unwrap_or("default"),
        )
    }

    /// Runs `request`, retrying while the server cannot be reached.
    async fn with_retries<T, F, Fut>(&self, mut request: F) -> Result<T, Error>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, Error>>,
    {
        let config = &self.shared.config;
        let mut tries = 1;
        loop {
            match request().await {
                Err(e) if e.is_transport() && tries < config.max_tries => {
                    tracing::debug!(error = %e, tries, "cannot reach the server to record an event, retrying");
                    tries += 1;
                    let jitter = config.retry_interval.mul_f64(rand::random::<f64>());
                    tokio::time::sleep(config.retry_interval + jitter).await;
                }
                other => return other,
            }
        }
    }

    async fn create(&self, mut event: Event) {
        event.metadata.resource_version = None;
        let api = self.api(&event);
        let pp = PostParams::default();
        match self.with_retries(|| api.create(&pp, &event)).await {
            Ok(_) => Counters::bump(&self.shared.counters.created),
            Err(e) if e.is_already_exists() => {
                tracing::debug!(error = %e, "event already exists");
            }
            Err(e) => {
                Counters::bump(&self.shared.counters.failed);
                tracing::warn!(error = %e, "cannot record event");
            }
        }
    }

    async fn series(&self, key: &str) {
        let entry = {
            let mut state = self.shared.state.lock();
            let Some(entry) = state.series.get_mut(key) else {
                return;
            };
            entry.patch_pending = false;
            entry.clone()
        };
        let name = entry.event.metadata.name.clone().unwrap_or_default();
        let api = self.api(&entry.event);
        let patch = Patch::Merge(json!({
            "series": {
                "count": entry.count,
                "lastObservedTime": MicroTime(entry.last_observed),
            }
        }));
        let pp = PatchParams::default();
        match self.with_retries(|| api.patch(&name, &pp, &patch)).await {
            Ok(_) => Counters::bump(&self.shared.counters.series_updated),
            // Gone (expired or deleted) or never created: create it with its series.
            Err(e) if e.is_not_found() => self.create(entry.with_series()).await,
            Err(e) => {
                Counters::bump(&self.shared.counters.failed);
                tracing::warn!(error = %e, "cannot update event series");
            }
        }
    }
}
