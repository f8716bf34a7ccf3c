//! The driver that performs the state machine's requests against a [`ListerWatcher`] and
//! writes its outputs to a [`ReflectorSink`].
//!
//! Watches are read in batches of shared objects ([`ListerWatcher::watch`], with the
//! same decoding hints as lists; cached objects may stand in only for the initial events of
//! a streaming list): every event of a batch
//! still goes through [`Machine::step`] on its own (resourceVersion, ERROR and bookmark
//! rules per event), but the sink writes of one batch are handed to the sink together
//! ([`ReflectorSink::apply_batch`]), so the DeltaFIFO takes its lock and wakes the informer
//! once per batch instead of once per event.

use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::ListerWatcher;
use super::config::ReflectorConfig;
use super::error::ReflectorError;
use super::metrics::ReflectorMetrics;
use super::sink::{ReflectorSink, SinkClosed};
use super::state::{Command, Input, Machine, SinkOp, State};
use kinform_client::Error;
use kinform_client::decode::{ListHints, PageAhead, Reclaim, WatchBatchStream};
use kinform_core::resource::HasMetadata;
use kinform_core::{Transform, WatchEvent};

/// Called with every error the reflector recovers from (client-go's `WatchErrorHandler`).
pub type WatchErrorHook = Arc<dyn Fn(&ReflectorError) + Send + Sync>;

/// Decides, at each resync check, whether the sink should be resynced (client-go's
/// `ShouldResync`, answered by the informer's handlers).
pub type ShouldResync = Arc<dyn Fn() -> bool + Send + Sync>;

/// The open watch: its stream of batches and the undelivered rest of the current batch.
struct OpenWatch<K> {
    stream: Option<WatchBatchStream<Arc<K>>>,
    pending: std::vec::IntoIter<Result<WatchEvent<Arc<K>>, Error>>,
}

impl<K> Default for OpenWatch<K> {
    fn default() -> Self {
        Self {
            stream: None,
            pending: Vec::new().into_iter(),
        }
    }
}

fn event_input<K>(item: Result<WatchEvent<Arc<K>>, Error>) -> Input<K> {
    match item {
        Ok(event) => Input::Event(event),
        Err(e) => Input::StreamError(e),
    }
}

/// Lists and watches one collection into a sink until cancelled or the sink closes
/// (client-go's `Reflector.Run`).
#[must_use]
pub struct Reflector<K, L, S: ?Sized> {
    lister_watcher: L,
    sink: Arc<S>,
    config: ReflectorConfig,
    metrics: Arc<ReflectorMetrics>,
    error_hook: WatchErrorHook,
    resync: Option<(Duration, ShouldResync)>,
    transform: Option<Transform<K>>,
    reclaim: Option<Arc<Reclaim<K>>>,
    seed: Option<u64>,
    _objects: PhantomData<fn() -> K>,
}

impl<K, L, S: ?Sized> fmt::Debug for Reflector<K, L, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Reflector")
            .field("config", &self.config)
            .field("metrics", &self.metrics)
            .finish_non_exhaustive()
    }
}

fn log_error(error: &ReflectorError) {
    if error.is_gone() {
        tracing::debug!(%error, "reflector: resourceVersion expired; relisting");
    } else {
        tracing::warn!(%error, "reflector");
    }
}

impl<K, L, S> Reflector<K, L, S>
where
    K: HasMetadata,
    L: ListerWatcher<K>,
    S: ReflectorSink<K> + ?Sized,
{
    /// A reflector from `lister_watcher` into `sink`.
    pub fn new(lister_watcher: L, sink: Arc<S>, config: ReflectorConfig) -> Self {
        Self {
            lister_watcher,
            sink,
            config,
            metrics: Arc::default(),
            error_hook: Arc::new(log_error),
            resync: None,
            transform: None,
            reclaim: None,
            seed: None,
            _objects: PhantomData,
        }
    }

    /// Replaces the default error hook (which logs).
    pub fn with_error_hook(mut self, hook: WatchErrorHook) -> Self {
        self.error_hook = hook;
        self
    }

    /// Every `period`, calls `sink.resync()` when `should_resync` says so.
    pub fn with_resync(mut self, period: Duration, should_resync: ShouldResync) -> Self {
        self.resync = Some((period, should_resync));
        self
    }

    /// Applies `transform` to every listed and watched object before the sink sees it.
    pub fn with_transform(mut self, transform: Transform<K>) -> Self {
        self.transform = Some(transform);
        self
    }

    /// Objects that left the sink's cache come back through `reclaim`, to be decoded into
    /// or dropped on the decoding thread that decodes the watch's next events, or dropped on
    /// one when the watch has been quiet for
    /// [`RECLAIM_QUIET`](kinform_client::decode::RECLAIM_QUIET) (see [`Reclaim`]).
    pub fn with_reclaim(mut self, reclaim: Arc<Reclaim<K>>) -> Self {
        self.reclaim = Some(reclaim);
        self
    }

    /// Shares `metrics` instead of fresh counters.
    pub fn with_metrics(mut self, metrics: Arc<ReflectorMetrics>) -> Self {
        self.metrics = metrics;
        self
    }

    /// Fixes the random seed of watch timeouts and jitter (for tests).
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }

    /// The reflector's counters.
    pub fn metrics(&self) -> Arc<ReflectorMetrics> {
        self.metrics.clone()
    }

    /// Runs until `cancel` fires (`Ok`) or the sink closes (`Err(SinkClosed)`).
    pub async fn run(self, cancel: CancellationToken) -> Result<(), SinkClosed> {
        let resync = self.resync.clone();
        let sink = self.sink.clone();
        let resync_loop = async move {
            let Some((period, should)) = resync else {
                return std::future::pending().await;
            };
            let mut tick = tokio::time::interval_at(Instant::now() + period, period);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                if should() {
                    sink.resync()?;
                }
            }
        };
        tokio::select! {
            biased;
            () = cancel.cancelled() => Ok(()),
            r = resync_loop => r,
            r = self.list_and_watch() => r,
        }
    }

    async fn list_and_watch(&self) -> Result<(), SinkClosed> {
        let mut machine = match self.seed {
            Some(seed) => Machine::seeded(self.config.clone(), self.metrics.clone(), seed),
            None => Machine::new(self.config.clone(), self.metrics.clone()),
        };
        let mut state: State<K> = machine.initial_state();
        let mut watch = OpenWatch::default();
        // Sink writes of the current batch of watch events, applied as one batch when the
        // batch is used up (or before any other write, or when the watch ends).
        let mut ops: Vec<SinkOp<K>> = Vec::new();
        let hints = self.list_hints();
        loop {
            // Listed objects and watch events come transformed (the hints carry the
            // transform into the decoding).
            let input = match (state.command(), watch.pending.next()) {
                (Command::NextEvent, Some(item)) => event_input(item),
                _ => self.perform(&state, &mut watch, &hints).await,
            };
            let (out, next) = machine.step(state, input, Instant::now());
            if !next.reads_stream() {
                // The rest of a batch after the event that ended the watch is dropped, as
                // the rest of the stream is.
                watch = OpenWatch::default();
            }
            if let Some(error) = &out.error {
                (self.error_hook)(error);
            }
            match out.op {
                Some(
                    op @ (SinkOp::Add(_)
                    | SinkOp::Update(_)
                    | SinkOp::Delete(_)
                    | SinkOp::Bookmark(_)),
                ) => {
                    ops.push(op);
                }
                Some(op) => {
                    self.flush(&mut ops)?;
                    self.apply(op)?;
                }
                None => {}
            }
            if watch.pending.as_slice().is_empty() {
                self.flush(&mut ops)?;
            }
            state = next;
        }
    }

    fn flush(&self, ops: &mut Vec<SinkOp<K>>) -> Result<(), SinkClosed> {
        match ops.len() {
            0 => Ok(()),
            1 => self.apply(ops.pop().expect("one op")),
            _ => self.sink.apply_batch(std::mem::take(ops)),
        }
    }

    /// What list decoding may skip or reuse: the transform (applied while decoding), whether
    /// managedFields is dropped anyway, and the sink's objects (at their resourceVersions,
    /// and as they are now).
    fn list_hints(&self) -> ListHints<K> {
        let sink = Arc::clone(&self.sink);
        let now = Arc::clone(&self.sink);
        ListHints {
            skip_managed_fields: self.config.skip_managed_fields,
            transform: self.transform.clone(),
            cached: Some(Arc::new(move |key, rv: &str| sink.cached(key, rv))),
            current: Some(Arc::new(move |key| now.current(key))),
            reclaim: self.reclaim.clone(),
            page_ahead: PageAhead::default(),
        }
    }

    async fn perform(
        &self,
        state: &State<K>,
        watch: &mut OpenWatch<K>,
        hints: &ListHints<K>,
    ) -> Input<K> {
        // Cached objects may stand in for listed ones only when the sink holds some (not on
        // the first list), and among watch events only for a streaming list's initial ones.
        let lookups = || self.sink.holds_cached();
        let without_lookups = || ListHints {
            cached: None,
            ..hints.clone()
        };
        match state.command() {
            Command::List(params) => {
                let hints = if lookups() {
                    hints.clone()
                } else {
                    without_lookups()
                };
                Input::Listed(self.lister_watcher.list(params, &hints).await)
            }
            Command::Watch(params) => {
                let sent_at = Instant::now();
                let hints = if params.send_initial_events && lookups() {
                    hints.clone()
                } else {
                    without_lookups()
                };
                let result = match self.lister_watcher.watch(params, &hints).await {
                    Ok(s) => {
                        *watch = OpenWatch {
                            stream: Some(s),
                            pending: Vec::new().into_iter(),
                        };
                        Ok(())
                    }
                    Err(e) => Err(e),
                };
                Input::WatchOpened { result, sent_at }
            }
            Command::NextEvent => {
                let Some(stream) = watch.stream.as_mut() else {
                    return Input::StreamEnded;
                };
                loop {
                    let Some(batch) = stream.next().await else {
                        return Input::StreamEnded;
                    };
                    watch.pending = batch.into_iter();
                    if let Some(item) = watch.pending.next() {
                        return event_input(item);
                    }
                }
            }
            Command::Sleep(delay) => {
                tokio::time::sleep(delay).await;
                Input::Woke
            }
        }
    }

    fn apply(&self, op: SinkOp<K>) -> Result<(), SinkClosed> {
        match op {
            SinkOp::Add(o) => self.sink.add(o),
            SinkOp::Update(o) => self.sink.update(o),
            SinkOp::Delete(o) => self.sink.delete(o),
            SinkOp::Replace {
                items,
                resource_version,
            } => self.sink.replace(items, resource_version),
            SinkOp::Bookmark(rv) => self.sink.bookmark(&rv),
        }
    }
}
