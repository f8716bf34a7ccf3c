//! WATCH: chunked newline-delimited JSON events.
//!
//! Reproduces "Efficient detection of changes" and "Streaming lists" of the API concepts page:
//! - `resourceVersion` unset or `"0"`: synthetic ADDED events for the current state, then
//!   changes (unless `sendInitialEvents=false`).
//! - `resourceVersion=N`: every change after `N`, if `N` is still inside the history window;
//!   otherwise a single `ERROR` event carrying Status 410 Expired "too old resource version"
//!   (HTTP 200, as the real server answers).
//! - `sendInitialEvents=true` + `resourceVersionMatch=NotOlderThan` (+ `allowWatchBookmarks`):
//!   ADDED for the current state, then a BOOKMARK annotated `k8s.io/initial-events-end: "true"`.
//! - `allowWatchBookmarks=true`: a BOOKMARK with the latest resourceVersion this watch has
//!   passed every bookmark interval.
//! - With selectors, a MODIFIED that moves an object into (out of) the selection is sent as
//!   ADDED (DELETED), as the watch cache does.
//! - `timeoutSeconds` ends the stream; so do the faults (event limit, dropped watches) and a
//!   slow watcher, as the watch cache's `cacheWatcher` is terminated when its buffer is full:
//!   each watch queues at most [`WATCH_BUFFER`] writes for its client, and a change that
//!   still finds the queue full after [`SLOW_WATCHER_WAIT`] closes the stream (no `ERROR`
//!   event; the client re-watches from its last resourceVersion). A watch that falls behind
//!   the store's broadcast is closed too. The initial state and backlog are written without
//!   that limit, as a `cacheWatcher` writes its initial events.
//! - With the watch delay fault ([`Faults::set_watch_delay`](crate::Faults::set_watch_delay))
//!   each live event and bookmark is held for its own delay, behind the ones held before it
//!   (the order of the watch is kept); a watch holding more than [`LATE_MAX`] closes as a
//!   slow watcher.
//! - Deleting the CRD that serves the watched resource ends the watch after the DELETED
//!   events of its objects, as the real server tears down a removed CRD's storage and closes
//!   its watches.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use http::Response;
use serde_json::json;
use tokio::sync::{broadcast, mpsc};
use tokio::time::Instant;

use crate::handlers::negotiation::body::{Body, ChannelBody};
use crate::handlers::negotiation::render::{Form, IncludeObject, render_object, to_bytes};
use crate::handlers::params::{ListOptions, Query};
use crate::registry::ResourceInfo;
use crate::status::ApiError;
use crate::storage::{Event, EventType, Obj, event_line};
use crate::{State, response};

/// Starts a watch and answers with its streaming body.
pub(crate) fn watch(
    state: &Arc<State>,
    info: &Arc<ResourceInfo>,
    namespace: Option<&str>,
    q: &Query,
    form: Form,
) -> Result<Response<Body>, ApiError> {
    let opts = ListOptions::parse(q, info, true, state.config.sharded_list_and_watch)?;
    let storage = info.storage_key();
    let mut w = Watcher {
        info: info.clone(),
        namespace: namespace.map(str::to_owned),
        opts,
        form,
        include: IncludeObject::parse(q.get("includeObject")),
        storage: storage.clone(),
        sent: 0,
        last_rv: 0,
        after: 0,
        late: VecDeque::new(),
        state: state.clone(),
    };
    let mut drops = state.faults.drop_signal();
    drops.mark_unchanged();
    // Under the lock: the snapshot or history, and the subscription, line up exactly.
    let inner = state.storage.lock();
    let initial_state = w.opts.send_initial_events == Some(true)
        || (w.opts.send_initial_events.is_none()
            && matches!(w.opts.rv.as_deref(), None | Some("0")));
    let mut initial: Vec<Arc<Obj>> = Vec::new();
    let mut backlog: Result<Vec<Arc<Event>>, ApiError> = Ok(Vec::new());
    match w.opts.rv_number().filter(|rv| *rv > 0) {
        Some(rv) if w.opts.send_initial_events == Some(true) => {
            if rv > inner.rv {
                return Err(ApiError::too_large_rv(rv, inner.rv));
            }
            initial = inner.objects(&storage, w.namespace.as_deref());
        }
        // Still ahead after the router's wait: kube-apiserver's watch cache gives up too.
        Some(rv) if rv > inner.rv => return Err(ApiError::too_large_rv(rv, inner.rv)),
        Some(rv) => backlog = inner.events_since(&storage, rv),
        None if initial_state => initial = inner.objects(&storage, w.namespace.as_deref()),
        None => {}
    }
    if w.opts.send_initial_events != Some(true) {
        // Only changes after the requested version (which may be ahead of the server).
        w.after = w.opts.rv_number().unwrap_or(0);
    }
    w.last_rv = inner.rv.max(w.after);
    let start_rv = inner.rv;
    let rx = state.storage.subscribe();
    drop(inner);

    let (tx, body_rx) = mpsc::channel::<Bytes>(WATCH_BUFFER);
    let initial_end = w.opts.send_initial_events == Some(true);
    tokio::spawn(async move {
        let cancel = w.state.cancel.clone();
        tokio::select! {
            _ = w.run(&tx, initial, initial_end, start_rv, backlog, rx, &mut drops) => {}
            _ = cancel.cancelled() => {}
            _ = tx.closed() => {}
        }
    });
    Ok(response(
        200,
        "application/json",
        http_body_util::BodyExt::boxed(ChannelBody::new(body_rx)),
    ))
}

/// Writes a watch queues for its client (events, chunks of the initial state, bookmarks).
pub(crate) const WATCH_BUFFER: usize = 256;

/// How long a change waits for room in a full queue before the watch is closed as slow.
pub(crate) const SLOW_WATCHER_WAIT: Duration = Duration::from_secs(1);

/// Lines a watch holds back at most under the watch delay fault.
pub(crate) const LATE_MAX: usize = 16 * 1024;

/// Size from which a chunk of initial or backlog lines is sent.
const WRITE_CHUNK: usize = 64 * 1024;

/// Why a watch stream ended.
struct Ended;

struct Watcher {
    info: Arc<ResourceInfo>,
    namespace: Option<String>,
    opts: ListOptions,
    form: Form,
    include: IncludeObject,
    storage: String,
    sent: u64,
    /// The latest resourceVersion this watch has passed (bookmarks carry it).
    last_rv: u64,
    /// Changes at or below this version are not sent.
    after: u64,
    /// Lines held back by the watch delay fault, with when each is due (in order: a line
    /// is never due before the one ahead of it).
    late: VecDeque<(Instant, Bytes)>,
    state: Arc<State>,
}

impl Watcher {
    #[allow(clippy::too_many_arguments)]
    async fn run(
        &mut self,
        tx: &mpsc::Sender<Bytes>,
        initial: Vec<Arc<Obj>>,
        initial_end: bool,
        start_rv: u64,
        backlog: Result<Vec<Arc<Event>>, ApiError>,
        mut rx: broadcast::Receiver<Arc<Event>>,
        drops: &mut tokio::sync::watch::Receiver<u64>,
    ) -> Result<(), Ended> {
        let backlog = match backlog {
            Ok(b) => b,
            Err(e) => {
                let line = event_line("ERROR", &crate::status::encode(&e.to_status(), false));
                let _ = tx.send(line).await;
                return Err(Ended);
            }
        };
        // The initial state and the backlog are written in chunks of many lines.
        let mut chunk = BytesMut::new();
        for obj in initial {
            if self.selected(&obj) {
                let line = self.line(EventType::Added, &obj, None);
                self.buffer(tx, &mut chunk, &line).await?;
            }
        }
        if initial_end {
            let b = self.bookmark(start_rv, true);
            self.buffer(tx, &mut chunk, &b).await?;
        }
        for ev in backlog {
            if let Some(line) = self.render(&ev)? {
                self.buffer(tx, &mut chunk, &line).await?;
            }
        }
        self.flush(tx, &mut chunk).await?;
        let timeout = self.opts.timeout_seconds.map(Duration::from_secs);
        let deadline = tokio::time::sleep(timeout.unwrap_or(Duration::from_secs(86400 * 365)));
        tokio::pin!(deadline);
        let interval = self.state.config.bookmark_interval;
        let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + interval, interval);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                // A drop first: a change made after `drop_watches` returned must not reach
                // a watch it ended, even when both are ready at once.
                biased;
                _ = drops.changed() => return Err(Ended),
                () = tokio::time::sleep_until(self.late.front().map_or_else(Instant::now, |l| l.0)),
                    if !self.late.is_empty() => self.release(tx).await?,
                ev = rx.recv() => match ev {
                    Ok(ev) => self.deliver(tx, &ev).await?,
                    Err(_) => return Err(Ended),
                },
                _ = ticks.tick(), if self.opts.allow_bookmarks => {
                    let b = self.bookmark(self.last_rv, false);
                    self.send_live(tx, b).await?;
                }
                _ = &mut deadline, if timeout.is_some() => return Ok(()),
            }
        }
    }

    /// Adds `line` to `chunk`, sending the chunk once it is large (or the event limit is
    /// reached: the lines up to the limit are sent, then the watch ends).
    async fn buffer(
        &mut self,
        tx: &mpsc::Sender<Bytes>,
        chunk: &mut BytesMut,
        line: &[u8],
    ) -> Result<(), Ended> {
        chunk.extend_from_slice(line);
        self.sent += 1;
        let limited =
            matches!(self.state.faults.watch_event_limit(), Some(limit) if self.sent >= limit);
        if limited || chunk.len() >= WRITE_CHUNK {
            self.flush(tx, chunk).await?;
        }
        if limited { Err(Ended) } else { Ok(()) }
    }

    async fn flush(&mut self, tx: &mpsc::Sender<Bytes>, chunk: &mut BytesMut) -> Result<(), Ended> {
        if chunk.is_empty() {
            return Ok(());
        }
        tx.send(chunk.split().freeze()).await.map_err(|_| Ended)
    }

    /// Queues one live line; a queue still full after [`SLOW_WATCHER_WAIT`] ends the watch.
    async fn send(&mut self, tx: &mpsc::Sender<Bytes>, line: Bytes) -> Result<(), Ended> {
        match tx.try_send(line) {
            Ok(()) => {}
            Err(mpsc::error::TrySendError::Closed(_)) => return Err(Ended),
            Err(mpsc::error::TrySendError::Full(line)) => {
                match tokio::time::timeout(SLOW_WATCHER_WAIT, tx.send(line)).await {
                    Ok(Ok(())) => {}
                    Ok(Err(_)) => return Err(Ended),
                    Err(_) => {
                        tracing::debug!(
                            resource = %self.storage,
                            "closing a slow watcher: its buffer is full"
                        );
                        return Err(Ended);
                    }
                }
            }
        }
        self.sent += 1;
        match self.state.faults.watch_event_limit() {
            Some(limit) if self.sent >= limit => Err(Ended),
            _ => Ok(()),
        }
    }

    fn selected(&self, obj: &Obj) -> bool {
        self.namespace
            .as_deref()
            .is_none_or(|ns| obj.namespace == ns)
            && self.opts.matches(obj)
    }

    async fn deliver(&mut self, tx: &mpsc::Sender<Bytes>, ev: &Arc<Event>) -> Result<(), Ended> {
        match self.render(ev)? {
            Some(line) => self.send_live(tx, line).await,
            None => Ok(()),
        }
    }

    /// Sends a live line now, or holds it back under the watch delay fault (and while
    /// earlier lines are held, so that it does not overtake them).
    async fn send_live(&mut self, tx: &mpsc::Sender<Bytes>, line: Bytes) -> Result<(), Ended> {
        let delay = self.state.faults.draw_watch_delay();
        if delay.is_none() && self.late.is_empty() {
            return self.send(tx, line).await;
        }
        if self.late.len() >= LATE_MAX {
            tracing::debug!(resource = %self.storage, "closing a delayed watcher: it holds too many events");
            return Err(Ended);
        }
        let mut due = Instant::now() + delay.unwrap_or_default();
        if let Some((last, _)) = self.late.back() {
            due = due.max(*last);
        }
        self.late.push_back((due, line));
        Ok(())
    }

    /// Sends the held lines that are due.
    async fn release(&mut self, tx: &mpsc::Sender<Bytes>) -> Result<(), Ended> {
        let now = Instant::now();
        while self.late.front().is_some_and(|(due, _)| *due <= now) {
            let (_, line) = self.late.pop_front().expect("a front line");
            self.send(tx, line).await?;
        }
        Ok(())
    }

    /// The line this watch sends for `ev`, if any; `Err` when `ev` ends the watch.
    fn render(&mut self, ev: &Arc<Event>) -> Result<Option<Bytes>, Ended> {
        self.last_rv = self.last_rv.max(ev.rv);
        if self.unregistered_by(ev) {
            return Err(Ended);
        }
        if *ev.storage != *self.storage || ev.rv <= self.after {
            return Ok(None);
        }
        let now = self.selected(&ev.obj);
        let kind = match ev.kind {
            EventType::Added => now.then_some(EventType::Added),
            EventType::Deleted => now.then_some(EventType::Deleted),
            EventType::Modified => {
                let was = ev.prev.as_deref().is_some_and(|p| self.selected(p));
                match (was, now) {
                    (true, true) => Some(EventType::Modified),
                    (false, true) => Some(EventType::Added),
                    (true, false) => Some(EventType::Deleted),
                    (false, false) => None,
                }
            }
        };
        let Some(kind) = kind else { return Ok(None) };
        Ok(Some(self.line(
            kind,
            &ev.obj,
            (kind == ev.kind).then_some(&ev.line),
        )))
    }

    /// Whether `ev` deletes a CRD and this watch's resource is no longer served (the CRD
    /// served it). The registry is only consulted on CRD deletions, off the hot path.
    fn unregistered_by(&self, ev: &Event) -> bool {
        ev.kind == EventType::Deleted
            && *ev.storage == *"apiextensions.k8s.io/customresourcedefinitions"
            && !self.info.is_crd()
            && self
                .state
                .storage
                .lock()
                .registry
                .get(&self.info.group, &self.info.version, &self.info.plural)
                .is_none()
    }

    fn line(&self, kind: EventType, obj: &Obj, prebuilt: Option<&Bytes>) -> Bytes {
        if let (Form::Json, Some(line)) = (self.form, prebuilt)
            && obj.api_version == self.info.api_version()
        {
            return line.clone();
        }
        event_line(
            kind.as_str(),
            &render_object(&self.info, obj, self.form, self.include),
        )
    }

    fn bookmark(&self, rv: u64, initial_end: bool) -> Bytes {
        let mut meta = json!({ "resourceVersion": rv.to_string() });
        if initial_end {
            meta["annotations"] = json!({ "k8s.io/initial-events-end": "true" });
        }
        let (kind, api_version) = match self.form {
            Form::Metadata => (
                "PartialObjectMetadata".to_owned(),
                "meta.k8s.io/v1".to_owned(),
            ),
            _ => (self.info.kind.clone(), self.info.api_version()),
        };
        let obj = json!({ "kind": kind, "apiVersion": api_version, "metadata": meta });
        event_line("BOOKMARK", &to_bytes(&obj))
    }
}
