//! Decoding objects that will be cached: simd-json, with serde_json's safeguards and errors
//! (why: `docs/performance.md`, "simd-json tape with exact capacities").
//!
//! simd-json finds the structure of a document with SIMD instructions first and then drives
//! serde from that tape. The tape knows how many elements every array has, and gives serde
//! that count as `size_hint`, so every `Vec` is allocated once with its final capacity:
//! objects cached for the lifetime of an informer carry none of the slack of serde_json's
//! doubling growth. For a k8s-openapi built-in type the object is built from the tape by the
//! in-place walk (see [`in_place`]), from the type's default; what the walk gives up on goes
//! to simd-json's serde driver over the same tape.
//!
//! What stays serde_json's:
//! - **The recursion limit.** simd-json has none and its serde driver recurses per nesting
//!   level, so a deeply nested `serde_json::Value` field would overflow the stack. A document
//!   whose tape nests more containers than serde_json accepts ([`MAX_NESTING`]) goes to
//!   serde_json, which refuses it.
//! - **Surrogate escapes** need nothing of their own: simd-json (0.19 and later) pairs
//!   `\uD83D\uDE00` as serde_json does and fails on a lone `\uD800`, which then goes to
//!   serde_json like any failure (tested).
//! - **Errors and the last word.** Any failure (invalid JSON, the limit, a type mismatch, a
//!   type simd-json cannot drive such as `RawValue`) decodes the same bytes again with
//!   `serde_json`, whose result is returned: callers see serde_json's errors with line and
//!   column, and whatever serde_json accepts is accepted.
//!
//! One difference remains, in numbers: `-0` is the integer 0 where serde_json makes it the
//! float -0.0. Floats agree: simd-json parses every float to the nearest `f64` (tested
//! against the standard library's parser), and so does serde_json with `float_roundtrip`,
//! which kinform-core turns on (the lean cache needs it; its default parser is best-effort
//! and could land one unit in the last place away). Kubernetes objects carry quantities as
//! strings; only `number` fields of custom resources can see the difference.
//!
//! One more job, for informers: when the reflector's hints say `metadata.managedFields` is
//! dropped anyway (the informer factory's default transform, as kube-controller-manager
//! does), that member is taken off the tape before the object is built, so its entries are
//! never allocated. The transform still runs, so this is only a shortcut (the serde_json
//! fallback decodes it and the transform drops it). The checks and the cut work on
//! simd-json's tape, not through a wrapping `Deserializer`, which would add a call per value
//! to the path simd-json makes cheap.

use kinform_core::HasMetadata;
use serde::de::DeserializeOwned;
use simd_json::{Node, Tape};

use super::in_place::{Current, Source};
use super::{heap, in_place};

/// The most containers serde_json lets a document nest: its recursion limit, 128, is hit on
/// opening the 128th (`remaining_depth` reaches 0). Documents nested deeper go to
/// serde_json, which refuses them.
const MAX_NESTING: usize = 127;

/// Scratch space for decoding many objects on one thread, all reused from one object to the
/// next: the padded mutable copy of the input simd-json parses in place, its parsing
/// buffers and its tape. Reusing the tape matters most: allocated and freed for every
/// object, it left a hole among the cached objects that malloc then split up and merged
/// again (glibc's `unlink_chunk` and `_int_malloc` were a sixth of a watch burst's user
/// time: docs/performance.md, "A/B measurements").
pub(crate) struct Decoder {
    input: Vec<u8>,
    buffers: simd_json::Buffers,
    /// Empty between documents; only its allocation is kept.
    tape: Tape<'static>,
    /// Empty between documents: the scratch tape of in-place decoding (see [`in_place`]).
    scratch: Tape<'static>,
    /// Bytes of JSON of new objects announced ([`Decoder::for_objects`],
    /// [`Decoder::prepare_for_new`]) that the heap is grown ahead for at the next document
    /// decoded afresh, which tells whether they keep `managedFields` (see [`heap`]).
    announced: usize,
    /// Bytes of JSON this thread's heap is still grown ahead for (see [`heap`]).
    heap_ahead_for: usize,
    /// Whether the heap is grown again in steps once `heap_ahead_for` is used up (see
    /// [`Decoder::prepare_for_new`]).
    steps: bool,
    /// Whether the in-place decoders are used; `false` only in tests, for the path every
    /// type takes with a Kubernetes version that has none (see [`in_place`]).
    in_place: bool,
}

/// When the heap grown ahead is used up, it is grown again for this much more JSON at
/// least: a thread that takes more than its share of a batch (its expected share is
/// prepared when it starts) grows its heap in steps of 1.25 MiB (1.75 MiB with
/// managedFields kept) instead of one page at a time, each page an `mprotect` that stalls
/// the other thread's page faults.
const HEAP_AHEAD_STEP: usize = 256 * 1024;

impl Default for Decoder {
    fn default() -> Self {
        Self {
            input: Vec::new(),
            buffers: simd_json::Buffers::default(),
            tape: Tape(Vec::new()),
            scratch: Tape(Vec::new()),
            announced: 0,
            heap_ahead_for: 0,
            steps: true,
            in_place: true,
        }
    }
}

impl Decoder {
    /// A decoder that decodes nothing in place: what a Kubernetes version without in-place
    /// decoders runs for every type (see [`in_place`]).
    #[cfg(test)]
    pub(crate) fn without_in_place() -> Self {
        Self {
            in_place: false,
            ..Self::default()
        }
    }

    /// The in-place decoder of `K` (see `in_place::root_of`), when this decoder uses them.
    fn root_of<K: 'static>(&self) -> Option<in_place::Root> {
        if self.in_place {
            in_place::root_of::<K>()
        } else {
            None
        }
    }

    /// A decoder for about `json_bytes` of objects on this thread, whose heap is made ready
    /// for them when the first is decoded (see [`heap`]).
    pub(crate) fn for_objects(json_bytes: usize) -> Self {
        Self {
            announced: json_bytes,
            ..Self::default()
        }
    }

    /// Makes this decoder, kept from one batch of watch events to the next, ready for a
    /// batch whose new objects (ADDED events) have `new_json_bytes` of JSON: the heap is
    /// grown ahead for those only, and not in further steps. The other events replace
    /// cached objects, whose memory the watch frees on this thread before decoding them
    /// (see `Reclaim`), so growing the heap for them would only leave it bigger.
    pub(crate) fn prepare_for_new(&mut self, new_json_bytes: usize) {
        self.steps = false;
        self.announced = new_json_bytes;
        self.heap_ahead_for = 0;
    }

    /// Grows the heap ahead (see [`heap`]) before `json_bytes` of JSON are decoded
    /// into a new object: for all the objects announced, at the first of them, and then in
    /// steps, when steps are on, once that is used up. The growth per byte of JSON is the
    /// larger when `managedFields` is kept.
    fn grow_heap_ahead(&mut self, json_bytes: usize, managed_fields_kept: bool) {
        let announced = std::mem::take(&mut self.announced);
        let grow = if announced > 0 {
            announced
        } else if self.steps && json_bytes > self.heap_ahead_for {
            json_bytes.max(HEAP_AHEAD_STEP)
        } else {
            0
        };
        if grow > 0 {
            heap::reserve(grow.saturating_mul(heap::per_json_byte(managed_fields_kept)));
            self.heap_ahead_for = grow;
        }
        self.heap_ahead_for = self.heap_ahead_for.saturating_sub(json_bytes);
    }

    /// Decodes `src` as one JSON document (see the module docs); `skip_managed_fields`
    /// leaves out `metadata.managedFields` of the document's root object.
    pub(crate) fn decode<K: DeserializeOwned + 'static>(
        &mut self,
        src: &[u8],
        skip_managed_fields: bool,
    ) -> serde_json::Result<K> {
        let walk = self.root_of::<Option<K>>();
        self.decode_with(src, skip_managed_fields, walk)
    }

    /// [`decode`](Self::decode) without the in-place walk: simd-json's serde driver builds
    /// every object, the reference the walk's new objects are tested and measured against.
    pub(crate) fn decode_by_serde<K: DeserializeOwned + 'static>(
        &mut self,
        src: &[u8],
        skip_managed_fields: bool,
    ) -> serde_json::Result<K> {
        self.decode_with(src, skip_managed_fields, None)
    }

    /// [`decode`](Self::decode), with `walk` the in-place decoder that builds new `K`s, if
    /// any (see [`decode_simd`](Self::decode_simd)).
    fn decode_with<K: DeserializeOwned + 'static>(
        &mut self,
        src: &[u8],
        skip_managed_fields: bool,
        walk: Option<in_place::Root>,
    ) -> serde_json::Result<K> {
        self.grow_heap_ahead(src.len(), !skip_managed_fields);
        match self.decode_simd(src, skip_managed_fields, walk) {
            Some(obj) => Ok(obj),
            None => serde_json::from_slice(src),
        }
    }

    /// Makes `target` the object `src` holds, as [`decode`](Self::decode) would return it,
    /// in `target`'s own memory (see [`in_place`]), sharing what it can with the cached
    /// objects `current` finds. `false` when `K` has no in-place decoding or `src` is not
    /// what it expects: `target` is then partly written and must be dropped, and `src`
    /// decoded with [`decode`](Self::decode), which says why.
    pub(crate) fn decode_into<K: 'static>(
        &mut self,
        target: &mut K,
        src: &[u8],
        skip_managed_fields: bool,
        current: Option<Current<'_>>,
    ) -> bool {
        let Some(root) = self.root_of::<K>() else {
            return false;
        };
        self.decode_into_with(root, target, src, skip_managed_fields, current)
    }

    /// The in-place decoders of resource type `K` (see `in_place::resource_roots`: built-in
    /// or a custom resource's), when this decoder uses them.
    fn resource_roots<K: HasMetadata>(&self) -> Option<(in_place::Root, Option<in_place::Root>)> {
        if self.in_place {
            in_place::resource_roots::<K>()
        } else {
            None
        }
    }

    /// [`decode`](Self::decode) of a resource type: a custom resource with in-place
    /// decoders (`custom_in_place!`) is built by them too.
    pub(crate) fn decode_resource<K: HasMetadata + DeserializeOwned>(
        &mut self,
        src: &[u8],
        skip_managed_fields: bool,
    ) -> serde_json::Result<K> {
        let walk = self.resource_roots::<K>().and_then(|(_, new)| new);
        self.decode_with(src, skip_managed_fields, walk)
    }

    /// [`decode_into`](Self::decode_into) of a resource type, with a custom resource's
    /// in-place decoders too.
    pub(crate) fn decode_resource_into<K: HasMetadata>(
        &mut self,
        target: &mut K,
        src: &[u8],
        skip_managed_fields: bool,
        current: Option<Current<'_>>,
    ) -> bool {
        let Some((root, _)) = self.resource_roots::<K>() else {
            return false;
        };
        self.decode_into_with(root, target, src, skip_managed_fields, current)
    }

    /// The new object the in-place walk of resource type `K` builds from `src`, `None` when
    /// `K` has none or the walk gives up (for the differential tests: no serde fallback).
    pub(crate) fn walk_new_resource<K: HasMetadata>(&mut self, src: &[u8]) -> Option<K> {
        let new = self.resource_roots::<K>()?.1?;
        self.with_tape(src, false, |tape, source, scratch| {
            let mut out: Option<K> = None;
            let ok = walk_into(new, &mut out, &tape, source, None, scratch);
            (out.filter(|_| ok), tape)
        })
    }

    /// Runs `root`, the in-place decoder of `K`, over `src` into `target`.
    fn decode_into_with<K: 'static>(
        &mut self,
        root: in_place::Root,
        target: &mut K,
        src: &[u8],
        skip_managed_fields: bool,
        current: Option<Current<'_>>,
    ) -> bool {
        self.with_tape(src, skip_managed_fields, |tape, source, scratch| {
            let ok = walk_into(root, target, &tape, source, current, scratch);
            (ok.then_some(()), tape)
        })
        .is_some()
    }

    /// Builds the tape of `src` and nothing else (for the `in_place` bench's `tape` figure).
    pub(crate) fn tape_only(&mut self, src: &[u8]) -> bool {
        self.with_tape(src, false, |tape, _, _| (Some(()), tape))
            .is_some()
    }

    /// simd-json's decoding of `src`, when it succeeds and passes the checks of the module
    /// docs: the new object built by `walk`, the in-place decoder of `Option<K>` (see the
    /// module docs), else by simd-json's serde driver, which also takes what the walk gives
    /// up on.
    fn decode_simd<K: DeserializeOwned + 'static>(
        &mut self,
        src: &[u8],
        skip_managed_fields: bool,
        walk: Option<in_place::Root>,
    ) -> Option<K> {
        self.with_tape(src, skip_managed_fields, |tape, source, scratch| {
            if let Some(root) = walk {
                let mut new: Option<K> = None;
                if walk_into(root, &mut new, &tape, source, None, scratch) {
                    return (new, tape);
                }
            }
            let mut de = simd_json::Deserializer::from_tape(tape);
            let obj = K::deserialize(&mut de).ok();
            (obj, de.into_tape())
        })
    }

    /// Builds the tape of `src` and, when it passes the checks of the module docs (and has
    /// `managedFields` cut when asked), gives it to `f` with `src` as the tape's [`Source`]
    /// and the in-place scratch tape; the tapes' memory is kept for the next document.
    fn with_tape<R>(
        &mut self,
        src: &[u8],
        skip_managed_fields: bool,
        f: impl for<'i> FnOnce(Tape<'i>, Source<'i>, &mut Tape<'static>) -> (Option<R>, Tape<'i>),
    ) -> Option<R> {
        let Self {
            input,
            buffers,
            tape,
            scratch,
            ..
        } = self;
        input.clear();
        input.extend_from_slice(src);
        input.resize(src.len() + simd_json::INPUT_PADDING, 0);
        let source = Source::new(src, input);
        let mut own = std::mem::replace(tape, Tape(Vec::new())).reset();
        let out = match simd_json::fill_tape_padded(input, src.len(), buffers, &mut own) {
            Ok(()) if nesting_within(&own.0, MAX_NESTING) => {
                if skip_managed_fields {
                    remove_managed_fields(&mut own.0);
                }
                let (out, back) = f(own, source, scratch);
                own = back;
                out
            }
            _ => None,
        };
        *tape = own.reset();
        out
    }
}

/// Runs the in-place decoder `root` over `tape` (the document `source`) into `target`, with
/// the cached objects `current` finds and the decoder's scratch tape, whose memory is kept;
/// `false` when it gives up (see [`in_place`]).
fn walk_into<'i>(
    root: in_place::Root,
    target: &mut dyn std::any::Any,
    tape: &Tape<'i>,
    source: Source<'i>,
    current: Option<Current<'i>>,
    scratch: &mut Tape<'static>,
) -> bool {
    let own = std::mem::replace(scratch, Tape(Vec::new())).reset();
    let (ok, own) = root.decode(target, &tape.0, source, current, own);
    *scratch = own.reset();
    ok
}

/// The number of tape nodes the value at `tape[i]` spans (1 past the tape's end).
pub(super) fn extent(tape: &[Node<'_>], i: usize) -> usize {
    match tape.get(i) {
        Some(Node::Object { count, .. } | Node::Array { count, .. }) => 1 + count,
        _ => 1,
    }
}

/// Whether no container of `tape` is nested more than `limit` deep. A value of `n` tape nodes
/// holds at most `n` nested containers, so only the containers larger than the depth still
/// allowed are walked into: for a pod, a few dozen of its thousand nodes.
fn nesting_within(tape: &[Node<'_>], limit: usize) -> bool {
    /// Whether the value at `tape[i]` opens at most `left` containers, itself included.
    fn within(tape: &[Node<'_>], i: usize, left: usize) -> bool {
        let (object, count) = match tape.get(i) {
            Some(&Node::Object { count, .. }) => (true, count),
            Some(&Node::Array { count, .. }) => (false, count),
            _ => return true,
        };
        if left == 0 {
            return false;
        }
        // `count < left`: its 1 + count nodes open at most `left` containers.
        if count < left {
            return true;
        }
        let end = i + 1 + count;
        let mut at = i + 1;
        while at < end {
            // An object's member: its key, then its value.
            at += usize::from(object);
            if !within(tape, at, left - 1) {
                return false;
            }
            at += extent(tape, at);
        }
        true
    }
    within(tape, 0, limit)
}

/// The tape index of the key `name` among the members of the object at `tape[obj]`, when it
/// is there exactly once.
fn member(tape: &[Node<'_>], obj: usize, name: &str) -> Option<usize> {
    let Node::Object { len, .. } = tape[obj] else {
        return None;
    };
    let mut found = None;
    let mut key = obj + 1;
    for _ in 0..len {
        if matches!(tape[key], Node::String(k) if k == name) {
            if found.is_some() {
                return None;
            }
            found = Some(key);
        }
        key += 1 + extent(tape, key + 1);
    }
    found
}

/// Takes the root object's `metadata.managedFields` member (key and value) off `tape`.
fn remove_managed_fields(tape: &mut Vec<Node<'_>>) {
    let Some(meta) = member(tape, 0, "metadata").map(|k| k + 1) else {
        return;
    };
    let Some(key) = member(tape, meta, "managedFields") else {
        return;
    };
    let removed = 1 + extent(tape, key + 1);
    tape.drain(key..key + removed);
    for (obj, members) in [(0, 0), (meta, 1)] {
        if let Node::Object { len, count } = &mut tape[obj] {
            *len -= members;
            *count -= removed;
        }
    }
}

#[cfg(test)]
pub(super) mod tests;
