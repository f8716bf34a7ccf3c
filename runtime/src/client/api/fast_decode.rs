//! Decoding objects that will be cached: simd-json, with serde_json's safeguards and errors.
//!
//! Why: decoding is nearly all of an informer's sync and much of its watch path. simd-json
//! finds the structure of a document with SIMD instructions first and then drives serde from
//! that tape, which took an informer's sync from about the one-thread serde_json floor to
//! well below it (BENCHMARKS.md, session 3).
//! Its tape also knows how many elements every array has, and it gives serde that count as
//! `size_hint`, so every `Vec` is allocated once with its final capacity: objects cached for
//! the lifetime of an informer carry none of the slack of serde_json's doubling growth
//! (about 5 KB per realistic pod, a fifth of its memory; kube-rs gets exact capacities by
//! cloning every object into its store, at the price of a second deep copy).
//!
//! What stays serde_json's:
//! - **The recursion limit.** simd-json has none and its serde driver recurses per nesting
//!   level, so a deeply nested `serde_json::Value` field would overflow the stack. A document
//!   whose tape nests deeper than serde_json's own limit of 128 levels goes to serde_json.
//! - **Surrogate escapes.** A document with a `\uD800`-`\uDFFF` escape goes to serde_json
//!   directly (simd-json 0.15 decodes a lone surrogate as `\0` instead of failing).
//! - **Errors and the last word.** Any failure (invalid JSON, the limit, a type mismatch, a
//!   type simd-json cannot drive such as `RawValue`) decodes the same bytes again with
//!   `serde_json`, whose result is returned: callers see serde_json's errors with line and
//!   column, and whatever serde_json accepts is accepted.
//!
//! Two differences remain, both in numbers: simd-json parses every float to the nearest
//! `f64` (tested against the standard library's parser), while serde_json's default parser
//! is best-effort and may land one unit in the last place away; and `-0` is the integer 0
//! where serde_json makes it the float -0.0. Kubernetes objects carry quantities as strings;
//! only `number` fields of custom resources can see either.
//!
//! One more job, for informers: when the reflector's hints say `metadata.managedFields` is
//! dropped anyway (the informer factory's default transform, as kube-controller-manager
//! does), that member is taken off the tape before the object is built, so its entries are
//! never allocated. The transform still runs and would drop it anyway, so this is only a
//! shortcut (the serde_json fallback decodes it and the transform drops it).
//!
//! The checks and the cut work on simd-json's tape (one node per value and key, each
//! container with its number of nested nodes), not through a wrapping `Deserializer`: a
//! wrapper around every value costs about as much as simd-json saves.

use serde::de::DeserializeOwned;
use simd_json::Node;

/// serde_json's recursion limit: documents nested deeper go to serde_json.
const RECURSION_LIMIT: usize = 128;

/// Scratch space for decoding many objects on one thread (simd-json needs a mutable copy of
/// its input and parsing buffers; both are reused).
#[derive(Default)]
pub(crate) struct Decoder {
    input: Vec<u8>,
    buffers: simd_json::Buffers,
    /// Open containers while the depth is checked: the tape index each one ends at.
    ends: Vec<usize>,
}

impl Decoder {
    /// A decoder for about `json_bytes` of objects on this thread, whose heap is made ready
    /// for them first (see [`heap_ahead`](super::heap_ahead)).
    pub(crate) fn for_objects(json_bytes: usize) -> Self {
        super::heap_ahead::reserve_for(json_bytes);
        Self::default()
    }

    /// Decodes `src` as one JSON document (see the module docs); `skip_managed_fields`
    /// leaves out `metadata.managedFields` of the document's root object.
    pub(crate) fn decode<K: DeserializeOwned>(
        &mut self,
        src: &[u8],
        skip_managed_fields: bool,
    ) -> serde_json::Result<K> {
        if !has_surrogate_escape(src) {
            self.input.clear();
            self.input.extend_from_slice(src);
            if let Ok(mut tape) =
                simd_json::to_tape_with_buffers(&mut self.input, &mut self.buffers)
                && nesting_within(&tape.0, RECURSION_LIMIT, &mut self.ends)
            {
                if skip_managed_fields {
                    remove_managed_fields(&mut tape.0);
                }
                if let Ok(obj) = tape.deserialize() {
                    return Ok(obj);
                }
            }
        }
        serde_json::from_slice(src)
    }
}

/// Whether `src` may hold a `\uD800`-`\uDFFF` escape (UTF-16 surrogates, which serde_json
/// pairs or rejects and simd-json 0.15 mis-decodes). A false positive (`\\ud` is an escaped
/// backslash before `ud`) only costs the serde_json path.
fn has_surrogate_escape(src: &[u8]) -> bool {
    memchr::memmem::find_iter(src, br"\u").any(|i| matches!(src.get(i + 2), Some(b'd' | b'D')))
}

/// The number of tape nodes the value at `tape[i]` spans.
fn extent(tape: &[Node<'_>], i: usize) -> usize {
    match tape[i] {
        Node::Object { count, .. } | Node::Array { count, .. } => 1 + count,
        _ => 1,
    }
}

/// Whether no container of `tape` is nested more than `limit` deep (`ends` is scratch).
fn nesting_within(tape: &[Node<'_>], limit: usize, ends: &mut Vec<usize>) -> bool {
    ends.clear();
    for (i, node) in tape.iter().enumerate() {
        while ends.last().is_some_and(|&end| end <= i) {
            ends.pop();
        }
        if let Node::Object { count, .. } | Node::Array { count, .. } = *node {
            ends.push(i + 1 + count);
            if ends.len() > limit {
                return false;
            }
        }
    }
    true
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
mod tests;
