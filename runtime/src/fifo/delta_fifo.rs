//! The DeltaFIFO handle: locking, waking consumers, and the reflector-facing sink.

use std::fmt;
use std::sync::Arc;

use parking_lot::{Mutex, MutexGuard};
use tokio::sync::Notify;

use super::delta::{Delta, Deltas};
use super::known::KnownObjects;
use super::state::State;
use crate::reflector::{ReflectorSink, SinkClosed, SinkOp};
use crate::store::ObjectKey;
use kinform_core::resource::HasMetadata;

/// The FIFO was closed and has nothing left to pop (client-go's `ErrFIFOClosed`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the DeltaFIFO is closed")]
pub struct FifoClosed;

/// What [`DeltaFifo::pop_batch`] did.
#[derive(Debug)]
pub struct PopBatch<E> {
    /// Number of keys popped and processed (including those requeued).
    pub popped: usize,
    /// The errors of the keys whose processing failed; their deltas were requeued.
    pub errors: Vec<E>,
}

struct Shared<K> {
    state: Mutex<State<K>>,
    notify: Notify,
    known: Option<Arc<dyn KnownObjects<K>>>,
}

/// A producer/consumer queue of per-key [`Deltas`] with client-go's DeltaFIFO semantics
/// (see the [module docs](super)). Cloning is cheap and shares the queue.
pub struct DeltaFifo<K> {
    shared: Arc<Shared<K>>,
}

impl<K> Clone for DeltaFifo<K> {
    fn clone(&self) -> Self {
        Self {
            shared: Arc::clone(&self.shared),
        }
    }
}

impl<K: HasMetadata> fmt::Debug for DeltaFifo<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.shared.state.lock();
        f.debug_struct("DeltaFifo")
            .field("len", &state.len())
            .field("has_synced", &state.has_synced())
            .field("closed", &state.closed)
            .finish()
    }
}

impl<K: HasMetadata> DeltaFifo<K> {
    /// An empty FIFO. `known` are the objects the consumer already has (normally the
    /// informer's store): Replace synthesizes deletions against them, Resync re-delivers
    /// them and Delete of a key they lack (and that is not queued) is ignored. Without
    /// them, Resync does nothing and only queued keys can be deleted.
    pub fn new(known: Option<Arc<dyn KnownObjects<K>>>) -> Self {
        Self::with_state(known, State::default())
    }

    /// A FIFO that also tracks how far its consumer has caught up, in `watermark` (the
    /// informer passes its store's): after each pop, once the consumer has applied the
    /// popped deltas, the watermark advances to the version below which nothing is left in
    /// the queue (see [`consistency`](crate::consistency)); bookmarks and lists advance it
    /// when nothing is queued. A failed pop's requeue holds it until the queue is empty once.
    pub fn with_watermark(
        known: Option<Arc<dyn KnownObjects<K>>>,
        watermark: crate::consistency::Watermark,
    ) -> Self {
        Self::with_state(known, State::with_watermark(watermark))
    }

    fn with_state(known: Option<Arc<dyn KnownObjects<K>>>, state: State<K>) -> Self {
        Self {
            shared: Arc::new(Shared {
                state: Mutex::new(state),
                notify: Notify::new(),
                known,
            }),
        }
    }

    fn known(&self) -> Option<&dyn KnownObjects<K>> {
        self.shared.known.as_deref()
    }

    /// Locks the state for a producer; fails once the FIFO is closed.
    fn lock_open(&self) -> Result<MutexGuard<'_, State<K>>, SinkClosed> {
        let state = self.shared.state.lock();
        if state.closed {
            return Err(SinkClosed);
        }
        Ok(state)
    }

    /// Wakes consumers after `new_keys` keys entered the queue (called without the lock).
    fn wake(&self, new_keys: usize) {
        match new_keys {
            0 => {}
            1 => self.shared.notify.notify_one(),
            _ => {
                self.shared.notify.notify_waiters();
                self.shared.notify.notify_one();
            }
        }
    }

    /// Waits until a key is queued and returns the locked state; fails when the FIFO is
    /// closed and empty (queued keys are still handed out after `close`, as client-go does).
    async fn lock_non_empty(&self) -> Result<MutexGuard<'_, State<K>>, FifoClosed> {
        loop {
            let notified = self.shared.notify.notified();
            let mut notified = std::pin::pin!(notified);
            {
                let state = self.shared.state.lock();
                if state.len() > 0 {
                    return Ok(state);
                }
                if state.closed {
                    return Err(FifoClosed);
                }
                // Register before unlocking so that no wake-up between here and the await is
                // lost.
                notified.as_mut().enable();
            }
            notified.await;
        }
    }

    /// Waits for the oldest queued key and runs `process` on its deltas under the FIFO lock
    /// (client-go's `Pop`), so that no delta can be queued, and no Replace or Resync can read
    /// the known objects, between taking the deltas and `process` applying them.
    ///
    /// `process` must be short and must not call back into this FIFO (it would deadlock): the
    /// informer's closure updates its store and pushes notifications into handler buffers; it
    /// never runs user handlers. When `process` returns `Err`, the deltas are queued again at
    /// the back unless the key was queued meanwhile (client-go's `addIfNotPresent`). The
    /// deltas say whether they belong to the initial list
    /// ([`Deltas::is_in_initial_list`]). If `process` panics, the deltas of that key are
    /// dropped (the lock does not poison; the FIFO stays usable).
    ///
    /// Returns `Err(FifoClosed)` once the FIFO is closed and empty.
    pub async fn pop<R, E>(
        &self,
        process: impl FnOnce(&Deltas<K>) -> Result<R, E>,
    ) -> Result<Result<R, E>, FifoClosed> {
        let mut state = self.lock_non_empty().await?;
        let deltas = state.pop_front().expect("the queue is not empty");
        let result = process(&deltas);
        let requeued = if result.is_err() {
            state.requeue(deltas)
        } else {
            state.recycle(deltas);
            false
        };
        state.publish_progress();
        drop(state);
        self.wake(usize::from(requeued));
        Ok(result)
    }

    /// Like [`DeltaFifo::pop`] for up to `max` distinct keys (at least one) in one lock
    /// acquisition: waits for the first, then processes the keys queued at that moment in
    /// queue order, each with `process`. Failed keys are requeued (and not retried within the
    /// batch).
    pub async fn pop_batch<E>(
        &self,
        max: usize,
        mut process: impl FnMut(&Deltas<K>) -> Result<(), E>,
    ) -> Result<PopBatch<E>, FifoClosed> {
        let mut state = self.lock_non_empty().await?;
        let count = max.max(1).min(state.len());
        let mut batch = PopBatch {
            popped: 0,
            errors: Vec::new(),
        };
        let mut requeued = 0;
        for _ in 0..count {
            let deltas = state.pop_front().expect("count <= len");
            batch.popped += 1;
            match process(&deltas) {
                Ok(()) => state.recycle(deltas),
                Err(e) => {
                    requeued += usize::from(state.requeue(deltas));
                    batch.errors.push(e);
                }
            }
        }
        state.publish_progress();
        drop(state);
        self.wake(requeued);
        Ok(batch)
    }

    /// Like [`DeltaFifo::pop_batch`] for a consumer that never fails: waits for the first key,
    /// then hands the deltas of up to `max` queued keys (at least one), in queue order, to one
    /// call of `process`, under the FIFO lock (so the consumer can apply them all under one
    /// lock of its own). If `process` panics, those deltas are dropped.
    pub async fn pop_many<R>(
        &self,
        max: usize,
        process: impl FnOnce(&[Deltas<K>]) -> R,
    ) -> Result<R, FifoClosed> {
        let mut state = self.lock_non_empty().await?;
        let count = max.max(1).min(state.len());
        let mut batch = Vec::with_capacity(count);
        for _ in 0..count {
            batch.push(state.pop_front().expect("count <= len"));
        }
        let result = process(&batch);
        for deltas in batch {
            state.recycle(deltas);
        }
        state.publish_progress();
        Ok(result)
    }

    /// Whether the first Replace's population has been popped, or an Add, Update or Delete
    /// came before any Replace (client-go's `HasSynced`).
    pub fn has_synced(&self) -> bool {
        self.shared.state.lock().has_synced()
    }

    /// Closes the FIFO: producers get [`SinkClosed`], consumers drain what is queued and then
    /// get [`FifoClosed`]; waiting consumers wake up.
    pub fn close(&self) {
        self.shared.state.lock().closed = true;
        self.shared.notify.notify_waiters();
    }

    /// Whether [`DeltaFifo::close`] was called.
    pub fn is_closed(&self) -> bool {
        self.shared.state.lock().closed
    }

    /// Number of queued keys.
    pub fn len(&self) -> usize {
        self.shared.state.lock().len()
    }

    /// Whether no key is queued.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The queued keys, in queue order (client-go's `ListKeys`).
    pub fn list_keys(&self) -> Vec<String> {
        self.shared.state.lock().keys()
    }

    /// A copy of the deltas queued for `key` (client-go's `GetByKey`).
    pub fn get(&self, key: &str) -> Option<Deltas<K>> {
        self.shared.state.lock().get(ObjectKey::parse(key)).cloned()
    }

    fn push(&self, delta: Delta<K>) -> Result<(), SinkClosed> {
        let new = self.lock_open()?.add(delta);
        self.wake(usize::from(new));
        Ok(())
    }
}

/// The reflector feeds the FIFO: watch events become `Added`/`Updated`/`Deleted`, lists
/// become `Replace`, and resync ticks become `Sync` deltas. Every operation fails with
/// [`SinkClosed`] once the FIFO is closed.
impl<K: HasMetadata> ReflectorSink<K> for DeltaFifo<K> {
    fn add(&self, obj: Arc<K>) -> Result<(), SinkClosed> {
        self.push(Delta::Added(obj))
    }

    fn update(&self, obj: Arc<K>) -> Result<(), SinkClosed> {
        self.push(Delta::Updated(obj))
    }

    fn delete(&self, obj: Arc<K>) -> Result<(), SinkClosed> {
        let new = self.lock_open()?.delete(obj, self.known());
        self.wake(usize::from(new));
        Ok(())
    }

    fn replace(&self, list: Vec<Arc<K>>, resource_version: String) -> Result<(), SinkClosed> {
        let new = self
            .lock_open()?
            .replace(list, &resource_version, self.known());
        self.wake(new);
        Ok(())
    }

    fn bookmark(&self, resource_version: &str) -> Result<(), SinkClosed> {
        self.lock_open()?.bookmark(resource_version);
        Ok(())
    }

    fn resync(&self) -> Result<(), SinkClosed> {
        let new = self.lock_open()?.resync(self.known());
        self.wake(new);
        Ok(())
    }

    /// The writes of a batch of watch events under one lock, with one wake-up: exactly what
    /// calling `add`/`update`/`delete`/`replace` in order does, without the per-event lock
    /// and consumer wake-up.
    fn apply_batch(&self, ops: Vec<SinkOp<K>>) -> Result<(), SinkClosed> {
        let mut state = self.lock_open()?;
        let mut new = 0;
        for op in ops {
            new += match op {
                SinkOp::Add(o) => usize::from(state.add(Delta::Added(o))),
                SinkOp::Update(o) => usize::from(state.add(Delta::Updated(o))),
                SinkOp::Delete(o) => usize::from(state.delete(o, self.known())),
                SinkOp::Replace {
                    items,
                    resource_version,
                } => state.replace(items, &resource_version, self.known()),
                SinkOp::Bookmark(rv) => {
                    state.bookmark(&rv);
                    0
                }
            };
        }
        drop(state);
        self.wake(new);
        Ok(())
    }

    /// The known object (the informer's store) with `key`.
    fn current(&self, key: ObjectKey<'_>) -> Option<Arc<K>> {
        self.known()?.get_key(key)
    }

    fn holds_cached(&self) -> bool {
        self.known().is_some_and(|k| !k.is_empty())
    }
}
