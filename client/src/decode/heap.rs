//! Growing the decoding thread's heap ahead of the objects it is about to decode, so that
//! glibc extends the thread's arena one `mprotect` per block, not one per page (how and why:
//! [`reserve`]; `docs/performance.md`, "Heap grown ahead").
//!
//! It is done once per page of a LIST and per batch of watch lines, by each decoding thread
//! for its share ([`Decoder::for_objects`](super::object::Decoder::for_objects)) when it
//! decodes the first object of it (which tells whether the objects keep `managedFields`, and
//! so how much heap a byte of their JSON takes: [`per_json_byte`]), and again in steps
//! whenever a thread decodes more than that (its share is an estimate: the threads take
//! chunks from a common counter). With another global allocator (jemalloc, mimalloc) the
//! same calls take and return a few large blocks.

/// Heap bytes an object takes per byte of its JSON, with a margin, when `metadata.managedFields`
/// is cut off the tape (pods: 25 KB for 6.2 KB of JSON, 4.0x, BENCHMARKS.md, "Informer"). At
/// exactly 4, the last percent of every thread's share of a streaming list grew its arena
/// one page, one `mprotect`, at a time: 5,800 single-page calls in a 10k-pod sync, 300
/// with 5 (`strace -f -e trace=mprotect`, docs/performance.md, "A/B measurements").
const HEAP_PER_JSON_BYTE: usize = 5;

/// The same when `managedFields` is kept. Its `fieldsV1` sets are JSON objects nested a few
/// levels deep, mostly with one member or none, and every non-empty one becomes a
/// `BTreeMap` leaf of about 630 bytes (serde_json's map, unless the application turns on
/// its `preserve_order`): a pod's 1 KB of `managedFields` takes about 10 KB of
/// heap, so the whole pod 39 KB of RSS for 6.2 KB of JSON, 6.3x. With 5, a fifth of the
/// cache grew its arena one page at a time: 115,000 single-page `mprotect` calls in a
/// 100,000-pod sync (docs/performance.md, "A/B measurements").
const HEAP_PER_JSON_BYTE_MANAGED_FIELDS: usize = 7;

/// Heap bytes to grow ahead for each byte of JSON of the objects about to be decoded, as
/// they keep `metadata.managedFields` or not.
pub(crate) fn per_json_byte(managed_fields_kept: bool) -> usize {
    if managed_fields_kept {
        HEAP_PER_JSON_BYTE_MANAGED_FIELDS
    } else {
        HEAP_PER_JSON_BYTE
    }
}

/// Below glibc's default mmap threshold, so that a block comes from the thread's arena.
const BLOCK: usize = 96 * 1024;

/// Makes this thread's heap ready for `heap_bytes` of objects.
///
/// Why: decoded objects stay in the cache, so decoding a page or a burst of watch events
/// grows the heap of the thread that decodes it by about four times the JSON's size.
/// glibc's malloc gives every thread but the main one an arena of its own, and extends such
/// an arena by exactly the pages the current allocation lacks, one `mprotect` call each time
/// (`grow_heap` in glibc's `arena.c`; only the main arena is grown with `M_TOP_PAD` to
/// spare), and each call takes the process's memory-map lock for writing, which stalls the
/// page faults of the other decoding thread meanwhile.
///
/// Allocating the expected growth first, in blocks below malloc's mmap threshold (128 KiB
/// by default, so they come from the arena), and freeing it at once, extends the arena one
/// `mprotect` per block; glibc does not lower an arena's protected size again when it trims
/// it (`shrink_heap` only `madvise`s the pages away, unless `vm.overcommit_memory` is 2), so
/// the objects decoded next are carved from space that is already writable. Only the
/// blocks' chunk headers are written, one page per block: the objects then use that page,
/// unless the arena's trim gives it back first because the blocks outgrew what was decoded
/// (so reserving far more than needed, such as each thread's preparing for both threads'
/// whole batch, costs page faults).
pub(crate) fn reserve(heap_bytes: usize) {
    let mut left = heap_bytes;
    let mut blocks: Vec<Vec<u8>> = Vec::with_capacity(left.div_ceil(BLOCK));
    while left > 0 {
        let size = left.min(BLOCK);
        // `black_box`: an allocation never used may otherwise be optimized away.
        blocks.push(std::hint::black_box(Vec::with_capacity(size)));
        left -= size;
    }
    // Newest first, so that each block merges with the free space at the arena's top.
    while let Some(block) = blocks.pop() {
        drop(std::hint::black_box(block));
    }
}
