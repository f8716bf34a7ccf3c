//! The one-document decoders the informer pipeline uses, for the `in_place` criterion bench
//! (`client/benches/in_place.rs`) only: not a supported API, hidden from the docs. Objects
//! reach an application through [`list`](super::list) and [`watch`](super::watch).

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
}
