//! The reflector's list-and-watch loop as an explicit state machine.
//!
//! [`Machine::step`] maps `(State, Input)` to `(Output, State)` without doing any I/O: the
//! [`State`] names the request the driver must perform next ([`State::command`]), the
//! [`Input`] is that request's outcome, and the [`Output`] is what to write to the sink and
//! what to report to the watch error hook. The current instant is an argument; the step
//! updates the [`Machine`]'s bookkeeping and counts into its [`ReflectorMetrics`]. Every
//! rule of client-go's `Reflector.ListAndWatch` is one arm here and can be unit-tested by
//! feeding inputs (see the tests below).

use std::sync::Arc;
use std::time::Duration;

use rand::{Rng, SeedableRng, rngs::SmallRng};
use tokio::time::Instant;

use super::backoff::Backoff;
use super::config::{ListMode, ReflectorConfig};
use super::error::ReflectorError;
use super::metrics::ReflectorMetrics;
use kinform_client::{
    Error, ListParams, ObjectList, ResourceVersionMatch, WatchEvent, WatchParams,
};
use kinform_core::resource::HasMetadata;

/// Where the reflector is in its list-and-watch loop; each state names its pending request.
#[derive(Debug)]
pub enum State<K> {
    /// A paged (or full) LIST is under way.
    Listing(Listing<K>),
    /// A streaming list (watch with `sendInitialEvents=true`) is being opened.
    StreamOpening {
        /// The watch request.
        params: WatchParams,
    },
    /// A streaming list is delivering the initial state.
    Streaming {
        /// The objects received so far.
        items: Vec<Arc<K>>,
    },
    /// A watch from the last synced resourceVersion is being opened.
    WatchOpening {
        /// The watch request.
        params: WatchParams,
    },
    /// A watch is delivering events.
    Watching {
        /// When the watch request was sent.
        started: Instant,
        /// Events (including bookmarks) received on it.
        events: u64,
    },
    /// Waiting before going on with `then`.
    Backoff {
        /// How long to wait.
        delay: Duration,
        /// The state after the wait.
        then: Box<State<K>>,
    },
}

/// A LIST under way: the next page request and the pages read so far.
#[derive(Debug)]
pub struct Listing<K> {
    /// The next request (the first page, or a continue token).
    pub request: ListParams,
    /// The resourceVersion the list as a whole was asked at.
    pub list_rv: String,
    /// Objects of the pages read so far.
    pub items: Vec<Arc<K>>,
    /// Consecutive transient failures of the current page.
    pub failures: u32,
}

/// The request a [`State`] waits for.
#[derive(Debug, PartialEq)]
pub enum Command<'a> {
    /// Send this LIST and answer [`Input::Listed`].
    List(&'a ListParams),
    /// Open this WATCH and answer [`Input::WatchOpened`].
    Watch(&'a WatchParams),
    /// Read the next event of the open watch: [`Input::Event`], [`Input::StreamError`] or
    /// [`Input::StreamEnded`].
    NextEvent,
    /// Sleep, then answer [`Input::Woke`].
    Sleep(Duration),
}

impl<K> State<K> {
    /// The request the driver performs next.
    pub fn command(&self) -> Command<'_> {
        match self {
            State::Listing(l) => Command::List(&l.request),
            State::StreamOpening { params } | State::WatchOpening { params } => {
                Command::Watch(params)
            }
            State::Streaming { .. } | State::Watching { .. } => Command::NextEvent,
            State::Backoff { delay, .. } => Command::Sleep(*delay),
        }
    }

    /// The state's name, for logs.
    pub fn label(&self) -> &'static str {
        match self {
            State::Listing(_) => "Listing",
            State::StreamOpening { .. } => "StreamOpening",
            State::Streaming { .. } => "Streaming",
            State::WatchOpening { .. } => "WatchOpening",
            State::Watching { .. } => "Watching",
            State::Backoff { .. } => "Backoff",
        }
    }

    /// Whether the state reads an open watch stream (the driver drops it otherwise).
    pub fn reads_stream(&self) -> bool {
        matches!(self, State::Streaming { .. } | State::Watching { .. })
    }
}

/// The outcome of a [`Command`].
#[derive(Debug)]
pub enum Input<K> {
    /// A LIST response, its objects shared and transformed as
    /// [`ListerWatcher::list`](super::ListerWatcher::list) gives them.
    Listed(Result<ObjectList<Arc<K>>, Error>),
    /// A WATCH was opened (or failed to open); the request was sent at `sent_at`.
    WatchOpened {
        /// The outcome.
        result: Result<(), Error>,
        /// When the request was sent (client-go starts the short-watch clock there).
        sent_at: Instant,
    },
    /// One watch event, its object shared and transformed as
    /// [`ListerWatcher::watch`](super::ListerWatcher::watch) gives them (a streaming list's
    /// initial events may reuse cached objects).
    Event(WatchEvent<Arc<K>>),
    /// Reading the watch failed.
    StreamError(Error),
    /// The server closed the watch.
    StreamEnded,
    /// A backoff elapsed.
    Woke,
}

impl<K> Input<K> {
    /// The input's name, for logs.
    pub fn label(&self) -> &'static str {
        match self {
            Input::Listed(_) => "Listed",
            Input::WatchOpened { .. } => "WatchOpened",
            Input::Event(_) => "Event",
            Input::StreamError(_) => "StreamError",
            Input::StreamEnded => "StreamEnded",
            Input::Woke => "Woke",
        }
    }
}

/// A write to the reflector's sink.
#[derive(Debug, PartialEq)]
pub enum SinkOp<K> {
    /// ADDED.
    Add(Arc<K>),
    /// MODIFIED.
    Update(Arc<K>),
    /// DELETED.
    Delete(Arc<K>),
    /// A complete list.
    Replace {
        /// Every object.
        items: Vec<Arc<K>>,
        /// The list's resourceVersion.
        resource_version: String,
    },
    /// A BOOKMARK of the watch (after the initial events): nothing up to this
    /// resourceVersion is left to come.
    Bookmark(String),
}

/// What one step produces besides the next state.
#[derive(Debug)]
pub struct Output<K> {
    /// The write to perform on the sink.
    pub op: Option<SinkOp<K>>,
    /// The error to report to the watch error hook.
    pub error: Option<ReflectorError>,
}

impl<K> Output<K> {
    fn none() -> Self {
        Self {
            op: None,
            error: None,
        }
    }
    fn op(op: SinkOp<K>) -> Self {
        Self {
            op: Some(op),
            error: None,
        }
    }
    fn error(error: ReflectorError) -> Self {
        Self {
            op: None,
            error: Some(error),
        }
    }
}

/// Builds a sink write from an object.
type MakeOp<K> = fn(Arc<K>) -> SinkOp<K>;

/// Whether a failed page is worth retrying from the same continue token.
fn is_transient(e: &Error) -> bool {
    e.is_transport() || matches!(e.code(), Some(429 | 500 | 502 | 503 | 504))
}

/// Whether the server rejected a streaming list as a request it does not support.
fn is_unsupported(e: &Error) -> bool {
    matches!(
        e.code(),
        Some(400 | 403 | 404 | 405 | 406 | 415 | 422 | 501)
    )
}

/// The reflector's memory between steps: resourceVersion bookkeeping, backoffs, metrics.
#[derive(Debug)]
pub struct Machine {
    config: ReflectorConfig,
    last_sync_rv: String,
    rv_unavailable: bool,
    paginated: bool,
    streaming: bool,
    backoff: Backoff,
    page_backoff: Backoff,
    rng: SmallRng,
    metrics: Arc<ReflectorMetrics>,
    /// Whether the last list page said the server honoured the shard selector
    /// (`metadata.shardInfo`); `None` before the first page.
    server_shards: Option<bool>,
}

impl Machine {
    /// A machine that has synced nothing yet.
    pub fn new(config: ReflectorConfig, metrics: Arc<ReflectorMetrics>) -> Self {
        Self::with_rng(config, metrics, SmallRng::from_os_rng())
    }

    /// The same with a fixed random seed (deterministic timeouts and jitter, for tests).
    pub fn seeded(config: ReflectorConfig, metrics: Arc<ReflectorMetrics>, seed: u64) -> Self {
        Self::with_rng(config, metrics, SmallRng::seed_from_u64(seed))
    }

    fn with_rng(config: ReflectorConfig, metrics: Arc<ReflectorMetrics>, rng: SmallRng) -> Self {
        Self {
            backoff: Backoff::new(config.backoff.clone()),
            page_backoff: Backoff::new(config.page_retry_backoff.clone()),
            streaming: config.list_mode != ListMode::Paged,
            config,
            last_sync_rv: String::new(),
            rv_unavailable: false,
            paginated: false,
            rng,
            metrics,
            server_shards: None,
        }
    }

    /// The resourceVersion of the last list, event or bookmark applied.
    pub fn last_sync_resource_version(&self) -> &str {
        &self.last_sync_rv
    }

    /// The first state: a streaming list or a paged list.
    pub fn initial_state<K>(&mut self) -> State<K> {
        self.relist_state()
    }

    /// One transition.
    pub fn step<K: HasMetadata>(
        &mut self,
        state: State<K>,
        input: Input<K>,
        now: Instant,
    ) -> (Output<K>, State<K>) {
        match (state, input) {
            (State::Backoff { then, .. }, Input::Woke) => (Output::none(), *then),
            (State::Listing(l), Input::Listed(Ok(page))) => self.on_page(l, page),
            (State::Listing(l), Input::Listed(Err(e))) => self.on_list_error(l, e, now),
            (State::StreamOpening { .. }, Input::WatchOpened { result, .. }) => match result {
                Ok(()) => {
                    self.metrics.watch_opened();
                    (Output::none(), State::Streaming { items: Vec::new() })
                }
                Err(e) => self.stream_failed("the request failed", Some(e), now),
            },
            (State::Streaming { items }, Input::Event(ev)) => self.on_stream_event(items, ev, now),
            (State::Streaming { .. }, Input::StreamError(e)) => {
                self.stream_failed("reading it failed", Some(e), now)
            }
            (State::Streaming { .. }, Input::StreamEnded) => {
                self.stream_failed("it ended before the initial-events-end bookmark", None, now)
            }
            (State::WatchOpening { .. }, Input::WatchOpened { result, sent_at }) => {
                self.on_watch_opened(result, sent_at, now)
            }
            (State::Watching { started, events }, Input::Event(ev)) => {
                self.on_watch_event(started, events, ev, now)
            }
            (State::Watching { started, events }, Input::StreamError(e)) => {
                self.on_watch_stream_error(started, events, e, now)
            }
            (State::Watching { started, events }, Input::StreamEnded) => {
                self.watch_ended(started, events, None, now)
            }
            (state, input) => {
                tracing::warn!(name = %self.config.name, state = state.label(), input = input.label(), "reflector: input does not fit the state; ignored");
                (Output::none(), state)
            }
        }
    }

    // ---- requests -------------------------------------------------------------------

    /// client-go's `relistResourceVersion`: "" after the last RV became unavailable, "0"
    /// before anything was synced (any cached state), otherwise the last synced RV.
    fn relist_rv(&self) -> String {
        if self.rv_unavailable {
            String::new()
        } else if self.last_sync_rv.is_empty() {
            "0".to_owned()
        } else {
            self.last_sync_rv.clone()
        }
    }

    fn relist_state<K>(&mut self) -> State<K> {
        if self.streaming {
            State::StreamOpening {
                params: self.stream_params(),
            }
        } else {
            State::Listing(self.new_list())
        }
    }

    fn new_list<K>(&self) -> Listing<K> {
        let rv = self.relist_rv();
        // Paging is off for a relist at a known RV (served from the watch cache), unless the
        // first list showed that the server pages (client-go's `paginatedResult`).
        let paged = self.paginated || rv.is_empty() || rv == "0";
        Listing {
            request: ListParams {
                label_selector: self.config.label_selector.clone(),
                field_selector: self.config.field_selector.clone(),
                shard_selector: self.shard_selector(),
                limit: paged.then_some(self.config.page_size),
                resource_version: Some(rv.clone()),
                ..ListParams::default()
            },
            list_rv: rv,
            items: Vec::new(),
            failures: 0,
        }
    }

    fn watch_timeout(&mut self) -> u32 {
        let lo = self.config.min_watch_timeout.as_secs();
        let hi = self.config.max_watch_timeout.as_secs().max(lo);
        u32::try_from(self.rng.random_range(lo..=hi)).unwrap_or(u32::MAX)
    }

    fn watch_params(&mut self) -> WatchParams {
        WatchParams {
            label_selector: self.config.label_selector.clone(),
            field_selector: self.config.field_selector.clone(),
            shard_selector: self.shard_selector(),
            resource_version: Some(self.last_sync_rv.clone()),
            timeout_seconds: Some(self.watch_timeout()),
            allow_watch_bookmarks: true,
            ..WatchParams::default()
        }
    }

    /// Logs when a list first shows, or changes, whether the server shards.
    fn note_server_sharding(&mut self, shards: bool) {
        if self.server_shards == Some(shards) {
            return;
        }
        self.server_shards = Some(shards);
        let selector = self.shard_selector().unwrap_or_default();
        if shards {
            tracing::info!(reflector = %self.config.name, %selector, "the server sends only the shard (shardSelector honoured)");
        } else {
            tracing::info!(reflector = %self.config.name, %selector, "the server ignored shardSelector (no shardInfo: its ShardedListAndWatch gate is off, or it predates Kubernetes 1.36); the shard is filtered on the client");
        }
    }

    fn shard_selector(&self) -> Option<String> {
        self.config.shard_selector.as_ref().map(ToString::to_string)
    }

    /// Whether `o` belongs in the cache: every object, or those of the shard selector
    /// (whether or not the server filtered them already).
    fn in_shard<K: HasMetadata>(&self, o: &K) -> bool {
        self.config
            .shard_selector
            .as_ref()
            .is_none_or(|s| s.matches(o.metadata()))
    }

    fn stream_params(&mut self) -> WatchParams {
        let rv = if self.rv_unavailable {
            String::new()
        } else {
            self.last_sync_rv.clone()
        };
        WatchParams {
            resource_version: Some(rv),
            resource_version_match: Some(ResourceVersionMatch::NotOlderThan),
            send_initial_events: true,
            ..self.watch_params()
        }
    }

    fn backoff_then<K>(
        &mut self,
        now: Instant,
        then: State<K>,
        at_least: Option<Duration>,
    ) -> State<K> {
        let delay = self.backoff.next_delay(now, &mut self.rng);
        State::Backoff {
            delay: delay.max(at_least.unwrap_or_default()),
            then: Box::new(then),
        }
    }

    fn synced(&mut self, rv: &str) {
        if !rv.is_empty() {
            self.last_sync_rv.clear();
            self.last_sync_rv.push_str(rv);
            self.metrics.set_resource_version(rv);
        }
    }

    // ---- paged list -----------------------------------------------------------------

    fn on_page<K: HasMetadata>(
        &mut self,
        l: Listing<K>,
        page: ObjectList<Arc<K>>,
    ) -> (Output<K>, State<K>) {
        self.metrics.page(page.items.len());
        if self.config.shard_selector.is_some() {
            self.note_server_sharding(page.shard_info.is_some());
        }
        self.page_backoff.reset();
        let Listing {
            mut request,
            list_rv,
            mut items,
            ..
        } = l;
        items.reserve(page.items.len());
        items.extend(page.items.into_iter().filter(|o| self.in_shard(&**o)));
        let continue_token = page.metadata.continue_.filter(|c| !c.is_empty());
        if let Some(token) = continue_token {
            if list_rv == "0" {
                self.paginated = true;
            }
            // A continue token carries the snapshot: no resourceVersion with it.
            request.continue_token = Some(token);
            request.resource_version = None;
            request.resource_version_match = None;
            let next = Listing {
                request,
                list_rv,
                items,
                failures: 0,
            };
            return (Output::none(), State::Listing(next));
        }
        let rv = page.metadata.resource_version.unwrap_or_default();
        self.synced(&rv);
        self.rv_unavailable = false;
        self.metrics.list_done();
        let out = Output::op(SinkOp::Replace {
            items,
            resource_version: rv,
        });
        let params = self.watch_params();
        (out, State::WatchOpening { params })
    }

    fn on_list_error<K>(&mut self, l: Listing<K>, e: Error, now: Instant) -> (Output<K>, State<K>) {
        self.metrics.list_error();
        let retry_after = e.retry_after();
        let continuing = l.request.continue_token.is_some();
        let e_too_large = e.is_too_large_resource_version();
        let expired = e.is_gone() || e_too_large;
        let transient = is_transient(&e) && !expired;
        let out = Output::error(ReflectorError::List {
            name: self.config.name.clone(),
            source: e,
        });
        if continuing && e_too_large {
            // A continued page at a resourceVersion the server does not have (it lost its
            // history): a consistent relist at once, as client-go's reflector does with
            // the error its pager passes up (a full list at that RV would wait and fail
            // again).
            self.rv_unavailable = true;
            return (out, State::Listing(self.new_list()));
        }
        if continuing && expired {
            // The continue token expired: one full list at the list's RV (client-go's pager
            // with FullListIfExpired).
            let request = ListParams {
                limit: None,
                continue_token: None,
                resource_version: Some(l.list_rv.clone()),
                ..l.request
            };
            let next = Listing {
                request,
                list_rv: l.list_rv,
                items: Vec::new(),
                failures: 0,
            };
            return (out, State::Listing(next));
        }
        if transient && l.failures < self.config.max_page_retries {
            // Retry this page from the same continue token; pages read so far are kept.
            let delay = self.page_backoff.next_delay(now, &mut self.rng);
            let then = State::Listing(Listing {
                failures: l.failures + 1,
                ..l
            });
            let delay = delay.max(retry_after.unwrap_or_default());
            return (
                out,
                State::Backoff {
                    delay,
                    then: Box::new(then),
                },
            );
        }
        if expired && !l.list_rv.is_empty() {
            // The RV is gone or too large: relist at once with a consistent read.
            self.rv_unavailable = true;
            return (out, State::Listing(self.new_list()));
        }
        let then = self.relist_state();
        (out, self.backoff_then(now, then, retry_after))
    }

    // ---- streaming list -------------------------------------------------------------

    fn on_stream_event<K: HasMetadata>(
        &mut self,
        mut items: Vec<Arc<K>>,
        ev: WatchEvent<Arc<K>>,
        now: Instant,
    ) -> (Output<K>, State<K>) {
        match ev {
            WatchEvent::Added(o) => {
                self.metrics.streamed_item();
                if self.in_shard(&*o) {
                    items.push(o);
                }
            }
            WatchEvent::Modified(o) if !self.in_shard(&*o) => {}
            // The server sends only ADDED before the bookmark; anything else is applied to
            // the pending list so that the Replace is still exact.
            WatchEvent::Modified(o) => {
                let key = o.key();
                match items.iter_mut().find(|i| i.key() == key) {
                    Some(slot) => *slot = o,
                    None => items.push(o),
                }
            }
            WatchEvent::Deleted(o) => {
                let key = o.key();
                items.retain(|i| i.key() != key);
            }
            WatchEvent::Bookmark(b) if b.is_initial_events_end() => {
                self.synced(&b.resource_version);
                self.rv_unavailable = false;
                self.metrics.list_done();
                let out = Output::op(SinkOp::Replace {
                    items,
                    resource_version: b.resource_version,
                });
                return (
                    out,
                    State::Watching {
                        started: now,
                        events: 0,
                    },
                );
            }
            WatchEvent::Bookmark(_) => {}
            WatchEvent::Error(status) => {
                let e = Error::Api {
                    request: format!("WATCH {} (sendInitialEvents)", self.config.name),
                    status,
                    retry_after: None,
                };
                return self.stream_failed("the server sent an ERROR event", Some(e), now);
            }
        }
        (Output::none(), State::Streaming { items })
    }

    fn stream_failed<K>(
        &mut self,
        reason: &str,
        source: Option<Error>,
        now: Instant,
    ) -> (Output<K>, State<K>) {
        self.metrics.watch_error();
        if let Some(e) = &source {
            if e.is_gone() || e.is_too_large_resource_version() {
                self.rv_unavailable = true;
            }
            if self.config.list_mode == ListMode::Auto && is_unsupported(e) {
                self.streaming = false;
            }
        }
        let out = Output::error(ReflectorError::StreamingList {
            name: self.config.name.clone(),
            reason: reason.to_owned(),
            source,
        });
        if self.config.list_mode == ListMode::Streaming {
            let params = self.stream_params();
            let then = State::StreamOpening { params };
            return (out, self.backoff_then(now, then, None));
        }
        // Making progress beats waiting: fall back to a paged list for this round.
        (out, State::Listing(self.new_list()))
    }

    // ---- watch ----------------------------------------------------------------------

    fn on_watch_opened<K>(
        &mut self,
        result: Result<(), Error>,
        sent_at: Instant,
        now: Instant,
    ) -> (Output<K>, State<K>) {
        let e = match result {
            Ok(()) => {
                self.metrics.watch_opened();
                return (
                    Output::none(),
                    State::Watching {
                        started: sent_at,
                        events: 0,
                    },
                );
            }
            Err(e) => e,
        };
        self.metrics.watch_error();
        // client-go's isWatchErrorRetriable: connection refused and 429 back off and
        // re-watch from the same RV; anything else ends ListAndWatch (backoff, relist).
        let rewatch = e.is_transport() || e.is_too_many_requests();
        let retry_after = e.retry_after();
        let out = Output::error(ReflectorError::Watch {
            name: self.config.name.clone(),
            source: e,
        });
        let then = if rewatch {
            State::WatchOpening {
                params: self.watch_params(),
            }
        } else {
            self.relist_state()
        };
        (out, self.backoff_then(now, then, retry_after))
    }

    fn on_watch_event<K: HasMetadata>(
        &mut self,
        started: Instant,
        events: u64,
        ev: WatchEvent<Arc<K>>,
        now: Instant,
    ) -> (Output<K>, State<K>) {
        let (obj, op): (Arc<K>, MakeOp<K>) = match ev {
            WatchEvent::Added(o) => (o, SinkOp::Add),
            WatchEvent::Modified(o) => (o, SinkOp::Update),
            WatchEvent::Deleted(o) => (o, SinkOp::Delete),
            WatchEvent::Bookmark(b) => {
                self.metrics.watch_event();
                self.synced(&b.resource_version);
                let next = State::Watching {
                    started,
                    events: events + 1,
                };
                return (Output::op(SinkOp::Bookmark(b.resource_version)), next);
            }
            WatchEvent::Error(status) => return self.on_watch_error_event(status, now),
        };
        self.metrics.watch_event();
        self.synced(obj.resource_version());
        let next = State::Watching {
            started,
            events: events + 1,
        };
        if !self.in_shard(&*obj) {
            return (Output::none(), next);
        }
        (Output::op(op(obj)), next)
    }

    fn on_watch_error_event<K>(
        &mut self,
        status: Box<k8s_openapi::apimachinery::pkg::apis::meta::v1::Status>,
        now: Instant,
    ) -> (Output<K>, State<K>) {
        self.metrics.watch_error();
        let e = Error::Api {
            request: format!("WATCH {}", self.config.name),
            status,
            retry_after: None,
        };
        let too_many = e.is_too_many_requests();
        let retry_after = e.retry_after();
        let out = Output::error(ReflectorError::Watch {
            name: self.config.name.clone(),
            source: e,
        });
        // 429: back off and re-watch from the same RV. 410 (and anything else): back off and
        // relist at the last synced RV, which the server serves "not older than".
        let then = if too_many {
            State::WatchOpening {
                params: self.watch_params(),
            }
        } else {
            self.relist_state()
        };
        (out, self.backoff_then(now, then, retry_after))
    }

    fn on_watch_stream_error<K>(
        &mut self,
        started: Instant,
        events: u64,
        e: Error,
        now: Instant,
    ) -> (Output<K>, State<K>) {
        self.metrics.watch_error();
        let transport = e.is_transport();
        let error = ReflectorError::Watch {
            name: self.config.name.clone(),
            source: e,
        };
        if transport {
            // A connection reset ends the watch as a close does (client-go's StreamWatcher).
            return self.watch_ended(started, events, Some(error), now);
        }
        // An undecodable event: relist after a backoff.
        let then = self.relist_state();
        (Output::error(error), self.backoff_then(now, then, None))
    }

    fn watch_ended<K>(
        &mut self,
        started: Instant,
        events: u64,
        error: Option<ReflectorError>,
        now: Instant,
    ) -> (Output<K>, State<K>) {
        let elapsed = now.saturating_duration_since(started);
        if events == 0 && elapsed < self.config.short_watch {
            self.metrics.short_watch();
            let out = Output::error(ReflectorError::ShortWatch {
                name: self.config.name.clone(),
                elapsed,
            });
            let then = self.relist_state();
            return (out, self.backoff_then(now, then, None));
        }
        let params = self.watch_params();
        let out = Output { op: None, error };
        (out, State::WatchOpening { params })
    }
}
