//! The one-document decoders the informer pipeline uses, for the `in_place` criterion bench
//! (`client/benches/in_place.rs`) and the differential tests of generated custom resource
//! types (kinform-codegen's `crd_roundtrip`) only: not a supported API, hidden from the docs. Objects
//! reach an application through [`list`](super::list) and [`watch`](super::watch).

use kinform_core::HasMetadata;
use serde::de::DeserializeOwned;

use super::object::Decoder;

/// A decoder reused from one document to the next, as a decoding thread keeps one.
#[derive(Default)]
pub struct DocDecoder(Decoder);

impl DocDecoder {
    /// `src` decoded afresh (simd-json's tape, then the in-place walk from a default for a
    /// k8s-openapi built-in type, else serde; `serde_json` as the fallback), managedFields
    /// kept, as a list's items are (the heap grown ahead for them).
    ///
    /// # Errors
    /// `serde_json`'s error when `src` is not a `K`.
    pub fn decode<K: DeserializeOwned + 'static>(&mut self, src: &[u8]) -> serde_json::Result<K> {
        self.0.decode(src, false)
    }

    /// [`decode`](Self::decode) with every object built by simd-json's serde driver, as
    /// before the in-place walk built new ones: what the walk is measured against.
    ///
    /// # Errors
    /// `serde_json`'s error when `src` is not a `K`.
    pub fn decode_by_serde<K: DeserializeOwned + 'static>(
        &mut self,
        src: &[u8],
    ) -> serde_json::Result<K> {
        self.0.decode_by_serde(src, false)
    }

    /// Makes `target` the object `src` holds, in `target`'s own memory, as an informer's
    /// watch does with a replaced object; `false` when that path does not take it (`target`
    /// is then partly written).
    #[must_use]
    pub fn decode_into<K: 'static>(&mut self, target: &mut K, src: &[u8]) -> bool {
        self.0.decode_into(target, src, false, None)
    }

    /// Builds `src`'s simd-json tape only (the first step of both decoders); `false` when
    /// simd-json does not take it.
    #[must_use]
    pub fn tape(&mut self, src: &[u8]) -> bool {
        self.0.tape_only(src)
    }

    /// [`decode`](Self::decode) of a resource type, whose in-place walk may be a custom
    /// resource's (`custom_in_place!`), as an informer's list decodes items.
    ///
    /// # Errors
    /// `serde_json`'s error when `src` is not a `K`.
    pub fn decode_resource<K: HasMetadata + DeserializeOwned>(
        &mut self,
        src: &[u8],
    ) -> serde_json::Result<K> {
        self.0.decode_resource(src, false)
    }

    /// [`decode_into`](Self::decode_into) of a resource type, as an informer's watch decodes
    /// into a replaced object (a custom resource's decoders included).
    #[must_use]
    pub fn decode_resource_into<K: HasMetadata>(&mut self, target: &mut K, src: &[u8]) -> bool {
        self.0.decode_resource_into(target, src, false, None)
    }

    /// The new object the in-place walk of `K` alone builds from `src`: `None` when `K` has
    /// no in-place decoder or the walk gives up (no serde fallback; for differential tests).
    #[must_use]
    pub fn walk_new_resource<K: HasMetadata>(&mut self, src: &[u8]) -> Option<K> {
        self.0.walk_new_resource(src)
    }

    /// Whether resource type `K` is decoded in place by informers.
    #[must_use]
    pub fn has_in_place<K: HasMetadata>() -> bool {
        super::in_place::resource_roots::<K>().is_some()
    }
}
