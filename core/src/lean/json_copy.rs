//! Writes JSON values as a lean body's compact text: [`JsonWriter`], the one definition of
//! that text's form, and [`JsonCopy`], which copies one value from any serde
//! `Deserializer` through it.
//!
//! A lean object keeps the members of an object other than `metadata` as JSON text. That
//! text is not cut out of the received bytes, which may hold whitespace, escapes `serde_json`
//! does not write (Go's `\u003c` for `<`) or other number forms: it is written again, value
//! by value, from what the parser reports. The parser is simd-json's tape handed to serde
//! (or `serde_json` when simd-json cannot take a document), or the tape walked directly when
//! kinform-client's in-place decoding fills a replaced object (through
//! [`Refill::member`](super::Refill::member)). That decoding keeps a body whose received text
//! is byte for byte the body already held, which this form reads back and writes again as
//! itself.
//!
//! The copy is exact for what a typed decoding of the same parse sees: strings are the same
//! characters (escaped as `serde_json` escapes them), integers the same integers, floats the
//! same `f64` (written in the shortest form that reads back to it, which `serde_json` with
//! `float_roundtrip`, the workspace's setting, reads back exactly).
//!
//! Hand-written: what is needed is one `Visitor` writing bytes into one buffer. Crate
//! considered: `serde-transcode` (unmaintained, and it goes through a `Serializer`, one more
//! layer of calls per value).

use std::fmt;
use std::io::Write as _;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

/// Appends JSON values to a lean body as compact text, strings escaped as `serde_json`
/// escapes them. A container is written as `begin_*`, then for each member [`key`] and its
/// value (for each element [`element`] and the value), then `end_*`.
///
/// [`key`]: Self::key
/// [`element`]: Self::element
#[doc(hidden)]
pub struct JsonWriter<'b>(pub(super) &'b mut Vec<u8>);

impl JsonWriter<'_> {
    /// `null`.
    pub fn null(&mut self) {
        self.0.extend_from_slice(b"null");
    }

    /// `true` or `false`.
    pub fn bool(&mut self, v: bool) {
        self.0.extend_from_slice(if v { b"true" } else { b"false" });
    }

    /// An integer, in decimal.
    pub fn i64(&mut self, v: i64) {
        // `serde_json` writes integers in decimal, as `Display` does, only faster; writing
        // into a `Vec` cannot fail.
        let _ = serde_json::to_writer(&mut *self.0, &v);
    }

    /// An integer, in decimal.
    pub fn u64(&mut self, v: u64) {
        let _ = serde_json::to_writer(&mut *self.0, &v);
    }

    /// A float, in the shortest form that reads back to it; `false`, with nothing written,
    /// for a number JSON has no form for (infinite or NaN, which `serde_json` would write as
    /// `null`, another value).
    #[must_use]
    pub fn f64(&mut self, v: f64) -> bool {
        if v.is_finite() {
            let _ = serde_json::to_writer(&mut *self.0, &v);
        }
        v.is_finite()
    }

    /// A string, quoted and escaped.
    pub fn str(&mut self, s: &str) {
        write_str(self.0, s);
    }

    /// Opens an object.
    pub fn begin_object(&mut self) {
        self.0.push(b'{');
    }

    /// An object's next key, after a comma unless it is the first; its value follows.
    pub fn key(&mut self, key: &str) {
        if self.0.last() != Some(&b'{') {
            self.0.push(b',');
        }
        write_str(self.0, key);
        self.0.push(b':');
    }

    /// Closes an object.
    pub fn end_object(&mut self) {
        self.0.push(b'}');
    }

    /// Opens an array.
    pub fn begin_array(&mut self) {
        self.0.push(b'[');
    }

    /// Before an array's next element: a comma unless it is the first.
    pub fn element(&mut self) {
        if self.0.last() != Some(&b'[') {
            self.0.push(b',');
        }
    }

    /// Closes an array.
    pub fn end_array(&mut self) {
        self.0.push(b']');
    }
}

/// Writes the next value of a deserializer as compact JSON to the end of a buffer.
pub(super) struct JsonCopy<'b>(pub(super) &'b mut Vec<u8>);

impl<'de> DeserializeSeed<'de> for JsonCopy<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

/// Writes `s` as a JSON string (quoted and escaped as `serde_json` escapes: control
/// characters, `"` and `\`). Most strings of an object have nothing to escape: they are
/// copied as they are, without `serde_json`'s byte-by-byte writer.
fn write_str(out: &mut Vec<u8>, s: &str) {
    if !needs_escape(s.as_bytes()) {
        out.reserve(s.len() + 2);
        out.push(b'"');
        out.extend_from_slice(s.as_bytes());
        out.push(b'"');
    } else {
        // Writing a `str` into a `Vec` cannot fail.
        let _ = serde_json::to_writer(&mut *out, s);
    }
}

/// Whether `s` holds a byte JSON escapes: a control character, `"` or `\`. Read 16 bytes
/// at a time with no early exit inside a block, which the compiler turns into vector
/// compares; most strings have none.
fn needs_escape(s: &[u8]) -> bool {
    let escaped = |b: u8| (b < 0x20) | (b == b'"') | (b == b'\\');
    let mut blocks = s.chunks_exact(16);
    for block in &mut blocks {
        if block.iter().fold(false, |any, &b| any | escaped(b)) {
            return true;
        }
    }
    blocks.remainder().iter().any(|&b| escaped(b))
}

impl<'de> Visitor<'de> for JsonCopy<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<(), E> {
        JsonWriter(self.0).bool(v);
        Ok(())
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<(), E> {
        JsonWriter(self.0).i64(v);
        Ok(())
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<(), E> {
        JsonWriter(self.0).u64(v);
        Ok(())
    }

    fn visit_i128<E: de::Error>(self, v: i128) -> Result<(), E> {
        let _ = write!(self.0, "{v}");
        Ok(())
    }

    fn visit_u128<E: de::Error>(self, v: u128) -> Result<(), E> {
        let _ = write!(self.0, "{v}");
        Ok(())
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<(), E> {
        if JsonWriter(self.0).f64(v) {
            Ok(())
        } else {
            Err(E::custom(format_args!("the number {v} has no JSON form")))
        }
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<(), E> {
        JsonWriter(self.0).str(v);
        Ok(())
    }

    fn visit_bytes<E: de::Error>(self, _: &[u8]) -> Result<(), E> {
        Err(E::invalid_type(de::Unexpected::Other("bytes"), &self))
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        JsonWriter(self.0).null();
        Ok(())
    }

    fn visit_none<E: de::Error>(self) -> Result<(), E> {
        self.visit_unit()
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        JsonWriter(self.0).begin_array();
        while seq.next_element_seed(ElementCopy(self.0))?.is_some() {}
        JsonWriter(self.0).end_array();
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        JsonWriter(self.0).begin_object();
        while map.next_key_seed(KeyCopy(self.0))?.is_some() {
            map.next_value_seed(JsonCopy(self.0))?;
        }
        JsonWriter(self.0).end_object();
        Ok(())
    }
}

/// Writes an array's next element as JSON, after a comma unless it is the first.
struct ElementCopy<'b>(&'b mut Vec<u8>);

impl<'de> DeserializeSeed<'de> for ElementCopy<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        JsonWriter(self.0).element();
        JsonCopy(self.0).deserialize(deserializer)
    }
}

/// Writes an object's next key as JSON, after a comma unless it is the first, and the colon.
struct KeyCopy<'b>(&'b mut Vec<u8>);

impl<'de> DeserializeSeed<'de> for KeyCopy<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeyCopy<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object key")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<(), E> {
        JsonWriter(self.0).key(v);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn copy(json: &str) -> String {
        let mut out = Vec::new();
        let mut de = serde_json::Deserializer::from_str(json);
        JsonCopy(&mut out).deserialize(&mut de).unwrap();
        de.end().unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn strings_and_integers_are_written_as_serde_json_writes_them() {
        for s in [
            "",
            "plain",
            "x\"y",
            "back\\slash",
            "tab\there",
            "\u{1}\u{1f}",
            "é ✓ \u{7f}",
            "</script>",
        ] {
            let mut out = Vec::new();
            write_str(&mut out, s);
            assert_eq!(out, serde_json::to_vec(s).unwrap(), "{s:?}");
        }
        for n in [0, -1, 7, i64::MIN, i64::MAX] {
            assert_eq!(copy(&n.to_string()), n.to_string());
        }
        assert_eq!(copy(&u64::MAX.to_string()), u64::MAX.to_string());
    }

    proptest::proptest! {
        #[test]
        fn any_string_is_written_as_serde_json_writes_it(s in ".*") {
            let mut out = Vec::new();
            write_str(&mut out, &s);
            proptest::prop_assert_eq!(out, serde_json::to_vec(&s).unwrap());
        }
    }

    #[test]
    fn copies_values_compactly() {
        assert_eq!(
            copy(r#" { "a" : [1, -2, 3.5, true, false, null, "x\"y\u00e9"], "b": {}, "c": [] } "#),
            r#"{"a":[1,-2,3.5,true,false,null,"x\"yé"],"b":{},"c":[]}"#
        );
    }

    #[test]
    fn floats_read_back_to_the_same_f64() {
        for f in [
            0.1,
            1e300,
            5e-324,
            123_456_789.123_456_78,
            -0.0,
            2.0f64.powi(60),
        ] {
            let text = copy(&serde_json::to_string(&f).unwrap());
            let back: f64 = serde_json::from_str(&text).unwrap();
            assert_eq!(back.to_bits(), f.to_bits(), "{f} -> {text}");
        }
    }
}
