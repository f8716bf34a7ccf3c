//! `SharedIndexInformer<K>`: one reflector, DeltaFIFO and indexed store, any number of
//! handlers (client-go's `sharedIndexInformer` and `sharedProcessor`).

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use futures_util::future::BoxFuture;
use parking_lot::{Mutex, RwLock};
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::handler::{EventHandler, Notification};
use super::registration::{HandlerSlot, Registration, wants_sync};
use crate::consistency::{WaitError, Watermark};
use crate::fifo::{Delta, DeltaFifo, Deltas, KnownObjects};
use crate::lister::Lister;
use crate::reflector::ListerWatcher;
use crate::reflector::{
    MetricsSnapshot, Reclaim, Reflector, ReflectorConfig, ReflectorMetrics, ReflectorSink,
    ShouldResync, SinkClosed, SinkOp, Transform, WatchErrorHook,
};
use crate::store::{IndexFn, ObjectKey, Store, StoreError};
use kinform_core::resource::HasMetadata;

/// The smallest resync period a handler gets (client-go's `minimumResyncPeriod`).
pub const MINIMUM_RESYNC_PERIOD: Duration = Duration::from_secs(1);

/// Replaced objects waiting at most for a decoding thread to reuse or free them (see [`Reclaim`]):
/// a few batches' worth of one handler's deliveries.
const RECLAIM_CAPACITY: usize = 1024;

/// Keys popped from the FIFO per lock acquisition.
const POP_BATCH: usize = 512;

/// A setting that can only change before the informer first starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the informer has already been started")]
pub struct AlreadyStarted;

struct RunParts<K> {
    fifo: DeltaFifo<K>,
    after_replace: Arc<dyn Fn() + Send + Sync>,
    config: ReflectorConfig,
    metrics: Arc<ReflectorMetrics>,
    hook: Option<WatchErrorHook>,
    transform: Option<Transform<K>>,
    resync: Option<(Duration, ShouldResync)>,
    reclaim: Arc<Reclaim<K>>,
    cancel: CancellationToken,
}

type Spawner<K> =
    Box<dyn Fn(RunParts<K>) -> BoxFuture<'static, Result<(), SinkClosed>> + Send + Sync>;

/// The FIFO as the reflector's sink, noticing when a Replace completes the sync.
struct InformerSink<K> {
    fifo: DeltaFifo<K>,
    after_replace: Arc<dyn Fn() + Send + Sync>,
}

impl<K: HasMetadata> ReflectorSink<K> for InformerSink<K> {
    fn add(&self, obj: Arc<K>) -> Result<(), SinkClosed> {
        self.fifo.add(obj)
    }
    fn update(&self, obj: Arc<K>) -> Result<(), SinkClosed> {
        self.fifo.update(obj)
    }
    fn delete(&self, obj: Arc<K>) -> Result<(), SinkClosed> {
        self.fifo.delete(obj)
    }
    fn replace(&self, list: Vec<Arc<K>>, resource_version: String) -> Result<(), SinkClosed> {
        self.fifo.replace(list, resource_version)?;
        (self.after_replace)();
        Ok(())
    }
    fn resync(&self) -> Result<(), SinkClosed> {
        self.fifo.resync()
    }
    fn bookmark(&self, resource_version: &str) -> Result<(), SinkClosed> {
        self.fifo.bookmark(resource_version)
    }
    fn apply_batch(&self, ops: Vec<SinkOp<K>>) -> Result<(), SinkClosed> {
        let replaced = ops.iter().any(|op| matches!(op, SinkOp::Replace { .. }));
        self.fifo.apply_batch(ops)?;
        if replaced {
            (self.after_replace)();
        }
        Ok(())
    }

    fn current(&self, key: ObjectKey<'_>) -> Option<Arc<K>> {
        ReflectorSink::current(&self.fifo, key)
    }

    fn holds_cached(&self) -> bool {
        self.fifo.holds_cached()
    }
}

struct Running<K> {
    fifo: DeltaFifo<K>,
    cancel: CancellationToken,
    tasks: Vec<JoinHandle<()>>,
}

pub(crate) struct Inner<K> {
    name: String,
    store: Store<K>,
    spawner: Spawner<K>,
    config: Mutex<ReflectorConfig>,
    default_resync: Option<Duration>,
    transform: Mutex<Option<Transform<K>>>,
    error_hook: Mutex<Option<WatchErrorHook>>,
    handlers: RwLock<Vec<Arc<HandlerSlot<K>>>>,
    next_id: AtomicU64,
    running: Mutex<Option<Running<K>>>,
    started_once: Mutex<bool>,
    resync_check: Mutex<Option<Duration>>,
    metrics: Arc<ReflectorMetrics>,
    synced: watch::Sender<bool>,
    /// Objects that left the cache, reused or freed on a decoding thread (see [`Reclaim`]).
    reclaim: Arc<Reclaim<K>>,
}

/// A shared informer: keeps an indexed cache of one collection equal to the server's state
/// and tells any number of handlers about every change. See the [module docs](super) for the
/// contract. Cheap to clone (clones share everything).
pub struct SharedIndexInformer<K> {
    inner: Arc<Inner<K>>,
}

impl<K> Clone for SharedIndexInformer<K> {
    fn clone(&self) -> Self {
        Self {
            inner: Arc::clone(&self.inner),
        }
    }
}

impl<K> fmt::Debug for SharedIndexInformer<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedIndexInformer")
            .field("name", &self.inner.name)
            .field("handlers", &self.inner.handlers.read().len())
            .field("synced", &*self.inner.synced.borrow())
            .finish_non_exhaustive()
    }
}

impl<K: HasMetadata> SharedIndexInformer<K> {
    /// An informer over `lister_watcher` (an `Api<K>` normally). `default_resync` is the
    /// resync period of handlers added without one (`None`: no resync).
    pub fn new<L: ListerWatcher<K>>(
        lister_watcher: L,
        config: ReflectorConfig,
        default_resync: Option<Duration>,
    ) -> Self {
        let lw = Arc::new(lister_watcher);
        let spawner: Spawner<K> = Box::new(move |parts: RunParts<K>| {
            let sink = Arc::new(InformerSink {
                fifo: parts.fifo,
                after_replace: parts.after_replace,
            });
            let mut r = Reflector::new(Arc::clone(&lw), sink, parts.config)
                .with_metrics(parts.metrics)
                .with_reclaim(parts.reclaim);
            if let Some(hook) = parts.hook {
                r = r.with_error_hook(hook);
            }
            if let Some(t) = parts.transform {
                r = r.with_transform(t);
            }
            if let Some((period, should)) = parts.resync {
                r = r.with_resync(period, should);
            }
            Box::pin(r.run(parts.cancel))
        });
        let default_resync = default_resync.map(|p| p.max(MINIMUM_RESYNC_PERIOD));
        Self {
            inner: Arc::new(Inner {
                name: config.name.clone(),
                store: Store::new(),
                spawner,
                config: Mutex::new(config),
                default_resync,
                transform: Mutex::new(None),
                error_hook: Mutex::new(None),
                handlers: RwLock::new(Vec::new()),
                next_id: AtomicU64::new(1),
                running: Mutex::new(None),
                started_once: Mutex::new(false),
                resync_check: Mutex::new(default_resync),
                metrics: Arc::default(),
                synced: watch::channel(false).0,
                reclaim: Arc::new(Reclaim::new(RECLAIM_CAPACITY)),
            }),
        }
    }

    /// The informer's name (its reflector's), e.g. `v1/pods`.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// Sets the transform applied to every object before it is stored (client-go's
    /// `SetTransform`); only before the first start. It also turns off
    /// [`ReflectorConfig::skip_managed_fields`] (the new transform may not drop them).
    pub fn set_transform(&self, transform: Option<Transform<K>>) -> Result<(), AlreadyStarted> {
        self.before_start(|i| {
            *i.transform.lock() = transform;
            i.config.lock().skip_managed_fields = false;
        })
    }

    /// Sets the hook told about every list/watch error (client-go's
    /// `SetWatchErrorHandler`); only before the first start. The default logs.
    pub fn set_watch_error_handler(&self, hook: WatchErrorHook) -> Result<(), AlreadyStarted> {
        self.before_start(|i| *i.error_hook.lock() = Some(hook))
    }

    /// Changes the reflector's options (selectors, list mode, backoff...); only before the
    /// first start.
    pub fn configure(&self, f: impl FnOnce(&mut ReflectorConfig)) -> Result<(), AlreadyStarted> {
        self.before_start(|i| f(&mut i.config.lock()))
    }

    fn before_start(&self, f: impl FnOnce(&Inner<K>)) -> Result<(), AlreadyStarted> {
        let started = self.inner.started_once.lock();
        if *started {
            return Err(AlreadyStarted);
        }
        f(&self.inner);
        Ok(())
    }

    /// Adds named indexes to the cache (client-go's `AddIndexers`); existing objects are
    /// indexed at once.
    pub fn add_indexers(
        &self,
        indexers: impl IntoIterator<Item = (String, IndexFn<K>)>,
    ) -> Result<(), StoreError> {
        self.inner.store.add_indexers(indexers)
    }

    /// The cache (client-go's `GetIndexer`).
    pub fn store(&self) -> &Store<K> {
        &self.inner.store
    }

    /// A lister over the cache.
    pub fn lister(&self) -> Lister<K> {
        Lister::new(self.inner.store.clone())
    }

    /// Registers `handler` with the informer's default resync period.
    pub fn add_event_handler(&self, handler: impl EventHandler<K>) -> Registration<K> {
        self.add_handler(Arc::new(handler), self.inner.default_resync)
    }

    /// Registers `handler` with its own resync period (at least one second; once started,
    /// at least the informer's resync check period, as client-go).
    pub fn add_event_handler_with_resync(
        &self,
        handler: impl EventHandler<K>,
        resync: Duration,
    ) -> Registration<K> {
        self.add_handler(Arc::new(handler), Some(resync))
    }

    fn add_handler(
        &self,
        handler: Arc<dyn EventHandler<K>>,
        resync: Option<Duration>,
    ) -> Registration<K> {
        let inner = &self.inner;
        let resync = resync.map(|p| p.max(MINIMUM_RESYNC_PERIOD));
        let resync = {
            let started = inner.started_once.lock();
            let mut check = inner.resync_check.lock();
            match (resync, *started, *check) {
                (None, ..) => None,
                (Some(p), false, c) => {
                    *check = Some(c.map_or(p, |c| c.min(p)));
                    Some(p)
                }
                (Some(p), true, Some(c)) => Some(p.max(c)),
                (Some(_), true, None) => {
                    tracing::warn!(informer = %inner.name, "informer: resync requested after start of an informer without resync; ignored");
                    None
                }
            }
        };
        let id = inner.next_id.fetch_add(1, Ordering::Relaxed);
        let slot = Arc::new(HandlerSlot::new(
            id,
            handler,
            resync,
            inner.synced.subscribe(),
            Arc::clone(&inner.reclaim),
        ));
        {
            // Blocks delta processing: the replayed objects and later notifications form one
            // consistent history (client-go's blockDeltas).
            let mut handlers = inner.handlers.write();
            for obj in inner.store.list() {
                slot.push(Notification::Add { obj, initial: true });
            }
            handlers.push(Arc::clone(&slot));
        }
        if let Some(run) = inner.running.lock().as_mut() {
            run.tasks.push(slot.spawn(run.cancel.child_token()));
        }
        Registration {
            slot,
            informer: Arc::downgrade(inner),
        }
    }

    /// Whether the initial list has been stored and handed to the handlers' buffers
    /// (client-go's `HasSynced`).
    pub fn has_synced(&self) -> bool {
        *self.inner.synced.borrow()
    }

    /// Waits until [`has_synced`](Self::has_synced).
    pub async fn wait_for_sync(&self) {
        let mut rx = self.inner.synced.subscribe();
        let _ = rx.wait_for(|s| *s).await;
    }

    /// How far the cache has caught up with the server: the highest resourceVersion up to
    /// which every change of the collection is in the store (the store's
    /// [`Watermark`](crate::consistency::Watermark)). Unlike
    /// [`last_sync_resource_version`](Self::last_sync_resource_version) (what the reflector
    /// received), it counts only what the store holds.
    pub fn watermark(&self) -> &Watermark {
        self.inner.store.watermark()
    }

    /// Waits until the cache holds every change up to `resource_version` (a write's answer,
    /// say), at most `timeout`: read-your-own-writes for a lister's reader. An incomparable
    /// version returns at once (fail open, counted in the watermark).
    pub async fn wait_for_resource_version(
        &self,
        resource_version: &str,
        timeout: Duration,
    ) -> Result<(), WaitError> {
        self.watermark().wait_for(resource_version, timeout).await
    }

    /// The resourceVersion the reflector last synced to.
    pub fn last_sync_resource_version(&self) -> String {
        self.inner.metrics.snapshot().last_resource_version
    }

    /// The reflector's counters.
    pub fn metrics(&self) -> MetricsSnapshot {
        self.inner.metrics.snapshot()
    }

    /// Notifications waiting in all handlers' buffers.
    pub fn pending_notifications(&self) -> usize {
        self.inner.handlers.read().iter().map(|h| h.pending()).sum()
    }

    /// Whether the informer is running.
    pub fn is_running(&self) -> bool {
        self.inner.running.lock().is_some()
    }

    /// Starts the reflector, the processing loop and the handlers' delivery tasks on the
    /// current tokio runtime. Does nothing when already running; after [`stop`](Self::stop)
    /// it starts again (a new list, checked against the cache kept meanwhile).
    pub fn start(&self) {
        let inner = &self.inner;
        let mut running = inner.running.lock();
        if running.is_some() {
            return;
        }
        *inner.started_once.lock() = true;
        inner.synced.send_replace(false);
        let known: Arc<dyn KnownObjects<K>> = Arc::new(inner.store.clone());
        let fifo = DeltaFifo::with_watermark(Some(known), inner.store.watermark().clone());
        let cancel = CancellationToken::new();
        let resync = (*inner.resync_check.lock()).map(|period| {
            let weak = Arc::downgrade(inner);
            let should: ShouldResync = Arc::new(move || {
                weak.upgrade()
                    .is_some_and(|i| i.should_resync(Instant::now()))
            });
            (period, should)
        });
        let weak = Arc::downgrade(inner);
        let synced_fifo = fifo.clone();
        let after_replace = Arc::new(move || {
            // A list that leaves nothing to pop (empty, and nothing cached) syncs at once.
            if synced_fifo.has_synced()
                && let Some(i) = weak.upgrade()
            {
                i.synced.send_if_modified(|s| !std::mem::replace(s, true));
            }
        });
        let parts = RunParts {
            fifo: fifo.clone(),
            after_replace,
            config: inner.config.lock().clone(),
            metrics: Arc::clone(&inner.metrics),
            hook: inner.error_hook.lock().clone(),
            transform: inner.transform.lock().clone(),
            resync,
            reclaim: Arc::clone(&inner.reclaim),
            cancel: cancel.clone(),
        };
        let reflector = (inner.spawner)(parts);
        let mut tasks = Vec::new();
        let closer = fifo.clone();
        tasks.push(tokio::spawn(async move {
            let _ = reflector.await;
            closer.close();
        }));
        tasks.push(tokio::spawn(process(Arc::downgrade(inner), fifo.clone())));
        for slot in inner.handlers.read().iter() {
            tasks.push(slot.spawn(cancel.child_token()));
        }
        *running = Some(Running {
            fifo,
            cancel,
            tasks,
        });
    }

    /// Stops the reflector, the processing and the delivery tasks without waiting for them.
    /// The cache and pending notifications are kept for a later [`start`](Self::start).
    pub fn stop(&self) {
        drop(self.stop_tasks());
    }

    fn stop_tasks(&self) -> Vec<JoinHandle<()>> {
        let Some(run) = self.inner.running.lock().take() else {
            return Vec::new();
        };
        run.cancel.cancel();
        run.fifo.close();
        for slot in self.inner.handlers.read().iter() {
            slot.stop();
        }
        run.tasks
    }

    /// Stops and waits until every task of the informer has ended.
    pub async fn shutdown(&self) {
        for task in self.stop_tasks() {
            let _ = task.await;
        }
    }
}

/// What the controller's consistency guard asks of a cache, whatever its object type.
pub(crate) trait CacheView: Send + Sync {
    /// The informer's name, for logs.
    fn cache_name(&self) -> &str;
    /// How far the cache has caught up.
    fn cache_watermark(&self) -> &Watermark;
    /// Whether the cache holds the object with `uid` under `key`.
    fn holds(&self, key: &str, uid: &str) -> bool;
    /// Whether the informer runs and has synced (a cache that does not cannot catch up).
    fn is_live(&self) -> bool;
}

impl<K: HasMetadata> CacheView for SharedIndexInformer<K> {
    fn cache_name(&self) -> &str {
        self.name()
    }
    fn cache_watermark(&self) -> &Watermark {
        self.watermark()
    }
    fn holds(&self, key: &str, uid: &str) -> bool {
        self.store().get(key).is_some_and(|o| o.uid() == uid)
    }
    fn is_live(&self) -> bool {
        self.is_running() && self.has_synced()
    }
}

impl<K: HasMetadata> Inner<K> {
    pub(crate) fn remove_handler(&self, id: u64) -> bool {
        let mut handlers = self.handlers.write();
        let before = handlers.len();
        handlers.retain(|h| h.id != id);
        before != handlers.len()
    }

    pub(crate) fn has_handler(&self, id: u64) -> bool {
        self.handlers.read().iter().any(|h| h.id == id)
    }

    /// client-go's `sharedProcessor.shouldResync`: marks the handlers whose resync is due.
    fn should_resync(&self, now: Instant) -> bool {
        let mut any = false;
        for h in self.handlers.read().iter() {
            let due = h.resync_due(now);
            h.syncing.store(due, Ordering::Relaxed);
            any |= due;
        }
        any
    }

    /// client-go's `HandleDeltas` for a batch of keys: apply every delta to the store under
    /// one store lock, then hand the notifications to each handler's buffer under one buffer
    /// lock with one wake-up. Runs under the FIFO lock and the handlers' read lock; handlers
    /// themselves run on their own tasks. The store holds the whole batch before any handler
    /// is told; each handler receives the notifications in delta order.
    fn handle_batch(&self, batch: &[Deltas<K>]) {
        let handlers = self.handlers.read();
        // Without handlers (a lister-only informer) no key or notification is built.
        let notify = !handlers.is_empty();
        let deltas = if notify {
            batch.iter().map(|d| d.as_slice().len()).sum()
        } else {
            0
        };
        let mut out: Vec<Outgoing<K>> = Vec::with_capacity(deltas);
        let mut garbage: Vec<Arc<K>> = Vec::new();
        self.store.write_with(|store| {
            for deltas in batch {
                let initial = deltas.is_in_initial_list();
                for delta in deltas {
                    out.extend(apply_delta(store, delta, initial, notify, &mut garbage));
                }
            }
        });
        self.reclaim.put_many(garbage);
        let Some((last, others)) = handlers.split_last() else {
            return;
        };
        for h in others {
            h.push_many(
                out.iter()
                    .filter(|o| !o.sync || wants_sync(h))
                    .map(|o| o.n.clone()),
            );
        }
        let sync_ok = wants_sync(last);
        last.push_many(out.into_iter().filter(|o| !o.sync || sync_ok).map(|o| o.n));
    }
}

/// A notification for the handlers: all of them, or only those whose resync is due when
/// `sync` (an unchanged resourceVersion).
struct Outgoing<K> {
    sync: bool,
    n: Notification<K>,
}

/// Applies one delta to the locked store and, when `notify`, says what to tell the
/// handlers. Objects that leave the store go to `garbage` (dropped after the lock is
/// released).
fn apply_delta<K: HasMetadata>(
    store: &mut crate::store::StoreInner<K>,
    delta: &Delta<K>,
    initial: bool,
    notify: bool,
    garbage: &mut Vec<Arc<K>>,
) -> Option<Outgoing<K>> {
    match delta {
        Delta::Deleted(d) => {
            garbage.extend(store.remove(d.key()));
            notify.then(|| Outgoing {
                sync: false,
                n: Notification::Delete(d.clone()),
            })
        }
        Delta::Added(obj) | Delta::Updated(obj) | Delta::Replaced(obj) | Delta::Sync(obj) => {
            let (_, old) = store.upsert(Arc::clone(obj));
            if !notify {
                garbage.extend(old);
                return None;
            }
            Some(match old {
                // An unchanged resourceVersion is a resync: only handlers whose resync is
                // due hear about it.
                Some(old) => Outgoing {
                    sync: old.resource_version() == obj.resource_version(),
                    n: Notification::Update {
                        old,
                        new: Arc::clone(obj),
                    },
                },
                None => Outgoing {
                    sync: false,
                    n: Notification::Add {
                        obj: Arc::clone(obj),
                        initial,
                    },
                },
            })
        }
    }
}

/// The processing loop: pop deltas, store, notify; mark synced after the initial list.
async fn process<K: HasMetadata>(inner: Weak<Inner<K>>, fifo: DeltaFifo<K>) {
    loop {
        let popped = fifo
            .pop_many(POP_BATCH, |batch| {
                if let Some(inner) = inner.upgrade() {
                    inner.handle_batch(batch);
                }
            })
            .await;
        if popped.is_err() {
            return;
        }
        let Some(inner) = inner.upgrade() else { return };
        if fifo.has_synced() {
            inner
                .synced
                .send_if_modified(|s| !std::mem::replace(s, true));
        }
    }
}
