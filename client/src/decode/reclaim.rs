//! Objects that left a cache, handed back to the decoding threads to be reused or freed there.
//!
//! An informer puts the objects that may have left its cache (an update's old state, a
//! deletion's last state, once every handler has seen them) into a [`Reclaim`]; the watch's
//! decoding job, on one of the decoding threads (`threads`, where every cached object was
//! made), takes one of them for each object it decodes. It decodes a k8s-openapi built-in
//! type or its lean form into it (`in_place`) and drops any other type first, so the memory
//! freed is reused at once by the same thread (why that matters: [`Reclaim`]).
//!
//! 1. Only objects the putter holds the last reference to are queued (others are still in
//!    use, and dropping a reference frees nothing), and at most [`Reclaim::capacity`] of them;
//!    beyond, or when no decoder takes them, they are dropped where they are.
//! 2. What is still queued when the watch body has been quiet for [`RECLAIM_QUIET`] is freed
//!    on a decoding thread ([`free_when_quiet`]), so a burst that ends leaves nothing held.

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt as _;
use futures_util::stream::{self, BoxStream};
use parking_lot::Mutex;
use tokio::sync::Notify;

/// How long a watch body stays quiet before the replaced objects still waiting in its
/// [`Reclaim`] are dropped, on a decoding thread (without a next batch to decode, nothing
/// else would).
pub const RECLAIM_QUIET: Duration = Duration::from_millis(50);

/// Replaced objects waiting for a decoding thread to decode into or drop (see the module docs).
///
/// Why: a watch event that changes a cached object replaces it, and the replaced object is
/// freed by whoever drops its last reference: in an informer, the handler's delivery task,
/// after the handler has seen the update. That is another thread than the one that decoded
/// the object, and glibc's malloc (like most allocators with per-thread caches and arenas)
/// pays dearly for it: a freed block goes into the freeing thread's cache or back to the
/// arena of the thread that allocated it, under that arena's lock, while the decoding thread
/// finds its own cache empty and carves new objects out of its arena, often from fresh
/// pages. Handed back to the decoding thread, the memory is reused as in a decode-and-drop
/// loop (the figures: BENCHMARKS.md, "kinform vs kube-rs", the decode floor's *cached* rows).
///
/// Choosing the allocator is the application's call, not a library's; pools of freed parts by
/// type would not help, since the objects are trees of `String`s, `Vec`s and maps of every
/// size and the allocator's own caches are that pool, if the free happens on the right
/// thread. Decoding into a whole handed-back object (`in_place`) goes further where the type
/// is known: its parts are neither freed nor allocated again.
pub struct Reclaim<K> {
    queue: Mutex<Vec<Arc<K>>>,
    capacity: usize,
    /// Told when objects are queued (see [`Reclaim::queued`]).
    queued: Notify,
}

impl<K> std::fmt::Debug for Reclaim<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reclaim")
            .field("queued", &self.len())
            .field("capacity", &self.capacity)
            .finish()
    }
}

impl<K> Reclaim<K> {
    /// An empty queue holding at most `capacity` objects.
    pub fn new(capacity: usize) -> Self {
        Self {
            queue: Mutex::new(Vec::new()),
            capacity,
            queued: Notify::new(),
        }
    }

    /// The most objects queued at once.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Objects queued now.
    pub fn len(&self) -> usize {
        self.queue.lock().len()
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Hands over objects that may have left the cache: each one whose last reference this
    /// is, is queued while there is room; the others are dropped here (one lock for all).
    pub fn put_many(&self, objects: impl IntoIterator<Item = Arc<K>>) {
        let mut dropped: Vec<Arc<K>> = Vec::new();
        let mut queued = false;
        {
            let mut queue = self.queue.lock();
            for obj in objects {
                if Arc::strong_count(&obj) == 1 && queue.len() < self.capacity {
                    queue.push(obj);
                    queued = true;
                } else {
                    dropped.push(obj);
                }
            }
        }
        if queued {
            self.queued.notify_one();
        }
        // Outside the lock: dropping may free a whole object.
        drop(dropped);
    }

    /// Resolves once objects have been queued since the last call resolved (at once if
    /// they were queued meanwhile): a consumer waiting for other work learns that it has
    /// something to free.
    pub async fn queued(&self) {
        self.queued.notified().await;
    }

    /// Takes up to `n` queued objects into `into` (for the caller to drop).
    pub fn take(&self, n: usize, into: &mut Vec<Arc<K>>) {
        let mut queue = self.queue.lock();
        let from = queue.len().saturating_sub(n);
        into.extend(queue.drain(from..));
    }

    /// Drops everything queued, on a decoding thread (where the objects were made).
    pub fn free_all(&self)
    where
        K: Send + Sync + 'static,
    {
        let all = std::mem::take(&mut *self.queue.lock());
        if !all.is_empty() {
            super::threads::spawn(move || drop(all));
        }
    }
}

/// `items`, with what `reclaim` holds freed on a decoding thread whenever the next item
/// has not come for [`RECLAIM_QUIET`] since objects were queued.
pub(crate) fn free_when_quiet<T, K>(
    items: BoxStream<'static, T>,
    reclaim: Arc<Reclaim<K>>,
) -> BoxStream<'static, T>
where
    T: Send + 'static,
    K: Send + Sync + 'static,
{
    stream::unfold((items, reclaim), |(mut items, reclaim)| async move {
        let item = {
            let mut next = std::pin::pin!(items.next());
            loop {
                if reclaim.is_empty() {
                    tokio::select! {
                        biased;
                        item = &mut next => break item,
                        () = reclaim.queued() => continue,
                    }
                }
                tokio::select! {
                    biased;
                    item = &mut next => break item,
                    () = tokio::time::sleep(RECLAIM_QUIET) => reclaim.free_all(),
                }
            }
        }?;
        Some((item, (items, reclaim)))
    })
    .boxed()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_last_references_are_queued_up_to_the_capacity() {
        let r = Reclaim::new(2);
        let shared = Arc::new(1);
        let held = Arc::clone(&shared);
        r.put_many([shared, Arc::new(2), Arc::new(3), Arc::new(4)]);
        assert_eq!(
            r.len(),
            2,
            "the shared one is dropped, then the capacity is reached"
        );
        assert_eq!(
            Arc::strong_count(&held),
            1,
            "its reference was dropped, not queued"
        );
        let mut taken = Vec::new();
        r.take(1, &mut taken);
        assert_eq!(taken.len(), 1);
        assert_eq!(r.len(), 1);
        r.free_all();
        assert!(r.is_empty());
        // Queuing left a wake-up for a consumer that waits later.
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(r.queued());
        r.take(5, &mut taken);
        assert_eq!(taken.len(), 1);
    }
}
