//! Live heap bytes: the global allocator (the system one, for both libraries) wrapped with
//! one counter, so that "memory per object" can also be read without the allocator's
//! retained free memory that RSS includes.

use std::alloc::{GlobalAlloc, Layout};

#[cfg(feature = "mimalloc")]
use mimalloc::MiMalloc as Inner;
#[cfg(not(feature = "mimalloc"))]
use std::alloc::System as Inner;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static BASE: AtomicU64 = AtomicU64::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
/// Allocations made (`alloc`, `alloc_zeroed` and `realloc` calls), for allocations per event.
static ALLOCS: AtomicU64 = AtomicU64::new(0);

/// Raises the recorded peak to `now` (a plain load first: most allocations do not set a
/// new peak, so they add no write to a shared cache line).
fn peak(now: usize) {
    if now > PEAK.load(Ordering::Relaxed) {
        PEAK.fetch_max(now, Ordering::Relaxed);
    }
}

// SAFETY: every call is forwarded to `System` unchanged; only a counter is added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        peak(LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size());
        unsafe { Inner.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        unsafe { Inner.dealloc(ptr, layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        peak(LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size());
        unsafe { Inner.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        peak(LIVE.fetch_add(new_size, Ordering::Relaxed) + new_size);
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        unsafe { Inner.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Bytes currently allocated.
pub fn live() -> u64 {
    LIVE.load(Ordering::Relaxed) as u64
}

/// Allocations made so far (`alloc`, `alloc_zeroed`, `realloc`).
pub fn allocs() -> u64 {
    ALLOCS.load(Ordering::Relaxed)
}

/// Records the current live bytes as the scenario's base.
pub fn mark_base() {
    BASE.store(live(), Ordering::Relaxed);
}

/// The recorded base.
pub fn base() -> u64 {
    BASE.load(Ordering::Relaxed)
}

/// The highest live bytes since the last call (exact: tracked on every allocation), then
/// resets the peak to the current live bytes.
pub fn take_peak() -> u64 {
    let p = PEAK.swap(LIVE.load(Ordering::Relaxed), Ordering::Relaxed);
    p.max(LIVE.load(Ordering::Relaxed)) as u64
}
