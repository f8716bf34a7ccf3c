//! Reflector metrics (client-go's reflector metrics: lists, watches, short watches, items,
//! last resourceVersion).

use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::Mutex;

/// Counters of one reflector, updated as it runs; read with [`snapshot`](Self::snapshot).
#[derive(Debug, Default)]
pub struct ReflectorMetrics {
    lists: AtomicU64,
    list_pages: AtomicU64,
    list_errors: AtomicU64,
    watches: AtomicU64,
    short_watches: AtomicU64,
    watch_errors: AtomicU64,
    items_listed: AtomicU64,
    watch_events: AtomicU64,
    last_resource_version: Mutex<String>,
}

/// A copy of a reflector's counters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MetricsSnapshot {
    /// Completed lists (paged or streaming) that replaced the sink's content.
    pub lists: u64,
    /// LIST responses read (pages).
    pub list_pages: u64,
    /// Failed LIST requests.
    pub list_errors: u64,
    /// Watches opened (including streaming lists).
    pub watches: u64,
    /// Watches that ended in under a second without events.
    pub short_watches: u64,
    /// Failed watches (open errors, ERROR events, stream errors).
    pub watch_errors: u64,
    /// Objects received by lists (and by the initial events of streaming lists).
    pub items_listed: u64,
    /// Watch events received after the initial state (including bookmarks).
    pub watch_events: u64,
    /// The last resourceVersion the reflector synced to.
    pub last_resource_version: String,
}

fn bump(counter: &AtomicU64, n: u64) {
    counter.fetch_add(n, Ordering::Relaxed);
}

impl ReflectorMetrics {
    pub(crate) fn list_done(&self) {
        bump(&self.lists, 1);
    }
    pub(crate) fn page(&self, items: usize) {
        bump(&self.list_pages, 1);
        bump(&self.items_listed, items as u64);
    }
    pub(crate) fn streamed_item(&self) {
        bump(&self.items_listed, 1);
    }
    pub(crate) fn list_error(&self) {
        bump(&self.list_errors, 1);
    }
    pub(crate) fn watch_opened(&self) {
        bump(&self.watches, 1);
    }
    pub(crate) fn short_watch(&self) {
        bump(&self.short_watches, 1);
    }
    pub(crate) fn watch_error(&self) {
        bump(&self.watch_errors, 1);
    }
    pub(crate) fn watch_event(&self) {
        bump(&self.watch_events, 1);
    }
    pub(crate) fn set_resource_version(&self, rv: &str) {
        let mut last = self.last_resource_version.lock();
        last.clear();
        last.push_str(rv);
    }

    /// The current values.
    pub fn snapshot(&self) -> MetricsSnapshot {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        MetricsSnapshot {
            lists: get(&self.lists),
            list_pages: get(&self.list_pages),
            list_errors: get(&self.list_errors),
            watches: get(&self.watches),
            short_watches: get(&self.short_watches),
            watch_errors: get(&self.watch_errors),
            items_listed: get(&self.items_listed),
            watch_events: get(&self.watch_events),
            last_resource_version: self.last_resource_version.lock().clone(),
        }
    }
}
