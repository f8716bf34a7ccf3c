//! Decoding a watch event's object into the memory of an object the cache has let go of,
//! and new objects into a default one (why: `docs/performance.md`, "Replaced objects freed
//! and decoded into on the decoding thread").
//!
//! The event's JSON is written into an object handed back by the informer (`Reclaim`): a
//! `String` takes the new text in its own buffer, a `Vec` keeps its elements and decodes into
//! them, a map whose keys are unchanged keeps its nodes and decodes into its values, a map
//! whose keys changed is refilled from its own entries (each new member decoded into the old
//! entry of its key, else into a spare one whose key buffer takes the new key), an absent
//! optional member becomes `None`. Nothing is allocated where the new state fits the old
//! one's memory, and nothing is freed. An object of a k8s-openapi root type decoded afresh (a
//! list's item, an ADDED event, an event with no replaced object to take) is decoded by the
//! same walk into its type's default, whose strings and vectors are empty and so take exactly
//! their new contents. A new lean object is built by its `Deserialize`, which writes its body
//! from simd-json's tape directly, where its `decode_new` would copy the nodes first.
//!
//! 1. **The same value.** The object it leaves is equal to the one k8s-openapi's
//!    `Deserialize` builds from the same tape. So it follows those impls' rules exactly:
//!    every member is read as an `Option` (absent or `null` gives `None`, or, for a required
//!    field, the type's default, their `unwrap_or_default`, or a missing-field error for a
//!    type without one), unknown members are ignored, a later duplicate member wins, and
//!    `apiVersion` and `kind` of a resource must be strings equal to the type's own. JSON
//!    values (`serde_json::Value`, `FieldsV1`) are decoded in place as `serde_json`'s visitor
//!    builds them; booleans and numbers are read from their tape node as simd-json's serde
//!    driver reads them, and a `Time` in the form Kubernetes writes directly (`time`, the
//!    same instant jiff reads); every other value (other `Time`s, `IntOrString`, ...) is
//!    decoded afresh from its part of the tape by that driver, the code the ordinary path
//!    runs.
//! 2. **Giving up, never guessing.** Anything it does not expect (a string where an object
//!    should be, a wrong `kind`) gives up: the caller then drops the target and decodes the
//!    bytes the ordinary way, whose result or error is the one returned.
//! 3. **Memory, not value.** The one difference: a `String` or `Vec` keeps the capacity it
//!    had, when that was more than the new value needs.
//!
//! `tests` checks rule 1 against the types' `Deserialize`, on real objects of twenty kinds
//! and on mutated pods, at every version that has decoders.
//!
//! Which types: the k8s-openapi types reachable from every built-in resource that can be
//! listed and watched, at the Kubernetes version enabled, and the lean cache's objects of
//! those resources and of `DynamicObject` (`lean`: the metadata decoded in place, the body's
//! text kept when it is unchanged). Each version kinform supports has its own generated
//! file (`k8s_1_35`, `k8s_1_36`, `k8s_1_37`), emitted by `kinform-gen in-place` from that
//! version's definitions: the OpenAPI spec of 1.35 and of 1.36, and for 1.37, whose spec
//! the corpus lacks, k8s-openapi's own sources of it (the types its generator wrote from
//! that spec; the code generator's drift test checks that both sources give the same file
//! for 1.35 and 1.36; `in_place/SOURCE.md` records each file's source and how to
//! regenerate it). Every struct's fields are listed in a pattern without `..`, so a
//! file does not compile against types whose fields differ: each is compiled only at its
//! own version. Custom resource types that opt in (`custom`: `custom_in_place!`, which
//! kinform-gen's `crd` output invokes for the structs it can) are decoded in place by
//! the same walk, with serde derive's rules instead of k8s-openapi's, at every version.
//! For every other type (`DynamicObject` itself, a derived type, the lean form of a
//! generated or derived type) nothing is decoded in place, and replaced objects are freed
//! before each decode.
//!
//! **Another Kubernetes version** (one k8s-openapi has and kinform has no file for: older
//! than 1.35, or one newer than kinform) falls back to that ordinary path for every
//! built-in type (`without`): the objects are decoded by serde, equal to what the decoders
//! would have built, only with more allocation and CPU per event. A custom resource's
//! decoders still run there, with its `metadata` decoded afresh. The shared pieces
//! (`values`, `custom`) are compiled at every version for that reason.
//! `fallback_tests` checks which types each version decodes in place (every built-in
//! resource at every supported version, none at another), and `differential_tests` checks
//! the fallback's objects against `serde_json`'s.

use std::any::Any;
use std::sync::Arc;

use kinform_core::ObjectKey;

/// Looks up the object cached under a key now, of the root's type (see
/// `hints::ListHints::current`): what an object decoded in place may share with it (a lean
/// object's body, `lean`).
pub(crate) type Current<'a> = &'a dyn Fn(ObjectKey<'_>) -> Option<Arc<dyn Any>>;

/// A document's text as received, and where the tape's strings are in it.
///
/// simd-json parses a copy of the document (with its padding), and each string of the tape
/// is the text of that copy from the byte after the string's opening quote: a string with
/// escapes is unescaped in place there, over the text it replaces, so the copy's other bytes
/// no longer read as received, but every string still starts where it started. The offset
/// of a tape string in the copy is its offset in the received text.
#[derive(Clone, Copy)]
pub(crate) struct Source<'i> {
    text: &'i [u8],
    /// The address of the copy simd-json parsed.
    copy: usize,
}

impl<'i> Source<'i> {
    /// `text` parsed by simd-json as `copy`, a copy at the same offsets.
    pub(crate) fn new(text: &'i [u8], copy: &[u8]) -> Self {
        Self {
            text,
            copy: copy.as_ptr() as usize,
        }
    }

    /// The document's text as received.
    #[allow(dead_code)] // Read by the lean objects' decoder, which needs a version's decoders.
    pub(crate) fn text(self) -> &'i [u8] {
        self.text
    }

    /// The offset in the text of the first byte of `s`, a string of the tape (after its
    /// opening quote); `None` for a string that is not from the copy.
    #[allow(dead_code)] // As `text`.
    pub(crate) fn offset_of(self, s: &str) -> Option<usize> {
        let at = (s.as_ptr() as usize).checked_sub(self.copy)?;
        (at + s.len() <= self.text.len()).then_some(at)
    }
}

// The shared pieces: the tape reader, `InPlace` and its impls for std's and serde_json's
// types, and the custom resources' decoders, at every version.
pub mod custom;
#[cfg(test)]
mod custom_tests;
mod values;

#[allow(unused_imports)] // Used by the generated decoders.
pub(crate) use values::fresh_in_place;
pub(crate) use values::{
    InPlace, Mismatch, Result, Root, RootFn, Scratch, Value, fresh, new_by_default, new_root,
    resource_roots, root, root_of,
};

// The pieces of the built-in types' decoders, at every version that has generated ones.
k8s_openapi::k8s_if_ge_1_35! {
    k8s_openapi::k8s_if_le_1_37! {
        mod fields;
        mod lean;
        #[cfg(test)]
        mod tests;
        mod time;

        pub(crate) use fields::{builtin_roots, decode_metadata, lean_root};
    }
}

// The generated decoders of the enabled version; their entry points shadow `without`'s.
k8s_openapi::k8s_if_1_35! {
    #[rustfmt::skip]
    mod k8s_1_35;
    use k8s_1_35 as generated;
}
k8s_openapi::k8s_if_1_36! {
    #[rustfmt::skip]
    mod k8s_1_36;
    use k8s_1_36 as generated;
}
k8s_openapi::k8s_if_1_37! {
    #[rustfmt::skip]
    mod k8s_1_37;
    use k8s_1_37 as generated;
}

#[cfg(test)]
mod fallback_tests;

// Any other Kubernetes version: no type is decoded in place. A glob import, which the named
// imports above shadow where a version has decoders.
#[allow(unused_imports)]
pub(crate) use without::*;

/// The decoding entry points when no built-in type has in-place decoding.
#[allow(dead_code)] // With a version's decoders, the entry points are `fields`'.
mod without {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    use super::{Result, RootFn, Scratch, Value, fresh};

    /// No built-in root type has an in-place decoder.
    pub(crate) fn builtin_roots(_: &mut dyn FnMut(std::any::TypeId, RootFn)) {}

    /// No lean object is decoded in place: `ObjectMeta` has no in-place decoder.
    #[allow(clippy::extra_unused_type_parameters)] // The signature of `fields::lean_root`.
    pub(crate) const fn lean_root<K: 'static>() -> Option<RootFn> {
        None
    }

    /// A custom resource's `metadata`, decoded afresh: `ObjectMeta` has no in-place decoder
    /// at this version.
    pub(crate) fn decode_metadata<'i>(
        meta: &mut ObjectMeta,
        v: Value<'_, 'i>,
        cx: &mut Scratch<'i>,
    ) -> Result {
        *meta = fresh(v, cx)?;
        Ok(())
    }
}
