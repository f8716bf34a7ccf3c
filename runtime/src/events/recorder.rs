//! [`EventRecorder`]: builds events, correlates them and queues them without blocking.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use jiff::Timestamp;
use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::api::events::v1::Event;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use parking_lot::Mutex;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tokio::time::Instant;

use super::config::RecorderConfig;
use super::correlator::{SeriesCache, SeriesEntry, SpamFilter, series_key, spam_key};
use super::reference::object_reference;
use super::worker::{Work, run_worker};
use kinform_client::Client;
use kinform_core::resource::Resource;

/// `type` of an event.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EventType {
    /// Nothing wrong: progress worth telling.
    Normal,
    /// Something may need attention.
    Warning,
}

impl EventType {
    /// `Normal` or `Warning`.
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::Normal => "Normal",
            EventType::Warning => "Warning",
        }
    }
}

/// What happened, to be recorded about an object.
#[derive(Clone, Debug, PartialEq)]
#[must_use]
pub struct NewEvent {
    /// Normal or Warning.
    pub type_: EventType,
    /// Why, in UpperCamelCase (at most 128 characters; longer is cut).
    pub reason: String,
    /// What was done or failed, in UpperCamelCase (at most 128 characters).
    pub action: String,
    /// Human-readable detail (at most 1 kB; longer is cut).
    pub note: Option<String>,
    /// A second object involved, if any.
    pub related: Option<ObjectReference>,
}

impl NewEvent {
    /// A Normal event.
    pub fn normal(reason: impl Into<String>, action: impl Into<String>) -> Self {
        Self {
            type_: EventType::Normal,
            reason: reason.into(),
            action: action.into(),
            note: None,
            related: None,
        }
    }

    /// A Warning event.
    pub fn warning(reason: impl Into<String>, action: impl Into<String>) -> Self {
        Self {
            type_: EventType::Warning,
            ..Self::normal(reason, action)
        }
    }

    /// Sets the note.
    pub fn note(mut self, note: impl Into<String>) -> Self {
        self.note = Some(note.into());
        self
    }

    /// Sets the related object.
    pub fn related(mut self, related: ObjectReference) -> Self {
        self.related = Some(related);
        self
    }
}

/// What [`EventRecorder::publish`] did with an event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Recorded {
    /// A new Event was queued for creation.
    Queued,
    /// It repeats an earlier event: the series count is now `count`, sent by PATCH.
    Aggregated {
        /// Occurrences so far.
        count: i32,
    },
    /// Too many events for this object lately: dropped.
    SpamFiltered,
    /// The queue was full: dropped.
    QueueFull,
    /// The recorder was shut down: dropped.
    Closed,
}

/// Counters of a recorder, for metrics and tests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RecorderStats {
    /// Events created on the server.
    pub created: u64,
    /// Series updates (PATCH) accepted by the server.
    pub series_updated: u64,
    /// Occurrences folded into a series.
    pub aggregated: u64,
    /// Events dropped because the queue was full.
    pub dropped_queue_full: u64,
    /// Events dropped by the spam filter.
    pub spam_filtered: u64,
    /// Requests that failed for good (logged with the server's answer).
    pub failed: u64,
}

#[derive(Default)]
pub(crate) struct Counters {
    pub created: AtomicU64,
    pub series_updated: AtomicU64,
    pub aggregated: AtomicU64,
    pub dropped_queue_full: AtomicU64,
    pub spam_filtered: AtomicU64,
    pub failed: AtomicU64,
}

impl Counters {
    pub(crate) fn bump(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }

    fn snapshot(&self) -> RecorderStats {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        RecorderStats {
            created: get(&self.created),
            series_updated: get(&self.series_updated),
            aggregated: get(&self.aggregated),
            dropped_queue_full: get(&self.dropped_queue_full),
            spam_filtered: get(&self.spam_filtered),
            failed: get(&self.failed),
        }
    }
}

/// Correlation state shared by the recorder and its sender task.
pub(crate) struct State {
    pub series: SeriesCache,
    pub spam: SpamFilter,
    last_name_nanos: i128,
}

pub(crate) struct Shared {
    pub config: RecorderConfig,
    pub state: Mutex<State>,
    pub counters: Counters,
}

struct Inner {
    shared: Arc<Shared>,
    tx: Mutex<Option<mpsc::Sender<Work>>>,
    worker: Mutex<Option<JoinHandle<()>>>,
}

/// Records `events.k8s.io/v1` Events about objects.
///
/// Cheap to clone; clones share the queue, the correlation state and the counters.
/// [`publish`](Self::publish) never blocks and never waits for the server.
#[derive(Clone)]
pub struct EventRecorder {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for EventRecorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventRecorder")
            .field("config", &self.inner.shared.config)
            .field("stats", &self.stats())
            .finish_non_exhaustive()
    }
}

fn truncate(mut s: String, max: usize) -> String {
    if s.len() > max {
        let mut end = max;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s.truncate(end);
    }
    s
}

impl EventRecorder {
    /// Starts a recorder and its sender task (on the current tokio runtime).
    pub fn new(client: Client, config: RecorderConfig) -> Self {
        let (tx, rx) = mpsc::channel(config.queue_capacity.max(1));
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                series: SeriesCache::new(config.series_finish),
                spam: SpamFilter::new(config.spam_burst, config.spam_refill),
                last_name_nanos: 0,
            }),
            counters: Counters::default(),
            config,
        });
        let worker = tokio::spawn(run_worker(client, shared.clone(), rx));
        Self {
            inner: Arc::new(Inner {
                shared,
                tx: Mutex::new(Some(tx)),
                worker: Mutex::new(Some(worker)),
            }),
        }
    }

    /// Records an event about `obj`.
    pub fn record<K: Resource>(&self, obj: &K, event: NewEvent) -> Recorded {
        self.publish(&object_reference(obj), event)
    }

    /// Records an event about the object `regarding` refers to: spam-filtered per object,
    /// folded into a series when it repeats an earlier one, queued without blocking.
    pub fn publish(&self, regarding: &ObjectReference, event: NewEvent) -> Recorded {
        let Some(tx) = self.inner.tx.lock().clone() else {
            return Recorded::Closed;
        };
        let shared = &self.inner.shared;
        let counters = &shared.counters;
        let now = Instant::now();
        let wall = Timestamp::now();
        let mut state = shared.state.lock();
        let mut ev = self.make_event(regarding, event, wall, &mut state);
        if !state.spam.allow(&spam_key(&ev), now) {
            Counters::bump(&counters.spam_filtered);
            tracing::debug!(reason = ?ev.reason, regarding = ?regarding.name, "event spam-filtered");
            return Recorded::SpamFiltered;
        }
        let key = series_key(&ev);
        if let Some(entry) = state.series.live(&key, now) {
            entry.count += 1;
            entry.last_observed = wall;
            entry.last_seen = now;
            let count = entry.count;
            Counters::bump(&counters.aggregated);
            if entry.patch_pending {
                return Recorded::Aggregated { count };
            }
            return match tx.try_send(Work::Series(key)) {
                Ok(()) => {
                    entry.patch_pending = true;
                    Recorded::Aggregated { count }
                }
                Err(e) => self.dropped(e),
            };
        }
        ev.series = None;
        match tx.try_send(Work::Create(Box::new(ev.clone()))) {
            Ok(()) => {
                state.series.insert(
                    key,
                    SeriesEntry {
                        event: ev,
                        count: 1,
                        last_observed: wall,
                        last_seen: now,
                        patch_pending: false,
                    },
                );
                Recorded::Queued
            }
            Err(e) => self.dropped(e),
        }
    }

    fn dropped<T>(&self, e: mpsc::error::TrySendError<T>) -> Recorded {
        match e {
            mpsc::error::TrySendError::Full(_) => {
                Counters::bump(&self.inner.shared.counters.dropped_queue_full);
                tracing::warn!("event queue full, event dropped");
                Recorded::QueueFull
            }
            mpsc::error::TrySendError::Closed(_) => Recorded::Closed,
        }
    }

    /// client-go's `makeEvent`: named `<regarding name>.<unix nanos in hex>` (unique per
    /// recorder), in the object's namespace or `default`.
    fn make_event(
        &self,
        regarding: &ObjectReference,
        event: NewEvent,
        wall: Timestamp,
        state: &mut State,
    ) -> Event {
        let config = &self.inner.shared.config;
        let nanos = wall.as_nanosecond().max(state.last_name_nanos + 1);
        state.last_name_nanos = nanos;
        let base = regarding.name.as_deref().unwrap_or("event");
        Event {
            metadata: ObjectMeta {
                name: Some(format!("{base}.{nanos:x}")),
                namespace: Some(
                    regarding
                        .namespace
                        .clone()
                        .filter(|n| !n.is_empty())
                        .unwrap_or_else(|| "default".into()),
                ),
                ..ObjectMeta::default()
            },
            event_time: Some(MicroTime(wall)),
            reporting_controller: Some(config.reporting_controller.clone()),
            reporting_instance: Some(config.reporting_instance.clone()),
            action: Some(truncate(event.action, 128)),
            reason: Some(truncate(event.reason, 128)),
            note: event.note.map(|n| truncate(n, 1024)),
            type_: Some(event.type_.as_str().into()),
            regarding: Some(regarding.clone()),
            related: event.related,
            ..Event::default()
        }
    }

    /// The counters so far.
    pub fn stats(&self) -> RecorderStats {
        self.inner.shared.counters.snapshot()
    }

    /// Waits until every event queued before this call has been sent (or has failed).
    pub async fn flush(&self) {
        let Some(tx) = self.inner.tx.lock().clone() else {
            return;
        };
        let (done, wait) = oneshot::channel();
        if tx.send(Work::Flush(done)).await.is_ok() {
            let _ = wait.await;
        }
    }

    /// Stops accepting events, sends the queued ones and waits for the sender task.
    pub async fn shutdown(&self) {
        self.inner.tx.lock().take();
        let worker = self.inner.worker.lock().take();
        if let Some(w) = worker
            && let Err(e) = w.await
        {
            tracing::error!(error = %e, "event sender task failed");
        }
    }
}
