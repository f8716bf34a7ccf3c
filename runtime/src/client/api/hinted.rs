//! Exact capacities for decoded vectors: a `Deserializer` wrapper that tells every sequence
//! its length.
//!
//! Why: `serde_json` does not know how many elements an array has before it has read them,
//! so a `Vec` grows by doubling while it is decoded (four slots for a pod's two container
//! statuses, four 3 KB `Volume`s for three volumes...). Objects cached for the lifetime of an
//! informer keep that slack: about 5 KB per realistic pod, a fifth of its memory. kube-rs
//! avoids it by cloning every object into its store (a clone has exact capacities) at the
//! price of a second deep copy; here the lengths are counted by a structural scan of the
//! item's bytes ([`Tape`]) and given to serde as `size_hint`s, so the first allocation of
//! each vector is the right one and nothing is copied.
//!
//! How: `serde_json` reads values in document order, and every value is deserialized by
//! exactly one `deserialize_*` call (`visit_some` and `visit_newtype_struct` hand the same
//! value on, and are tracked as such). The tape lists the values in that order with the
//! length of each array and the number of values nested in each container, so that a value
//! serde skips (`deserialize_ignored_any`) skips its nested entries too. Should the walk
//! ever disagree with the tape (a value of another kind than the tape says), hints stop for
//! the rest of the object: a hint only sizes a first allocation and never changes what is
//! decoded.

use std::cell::Cell;
use std::fmt;

use serde::de::{
    self, DeserializeSeed, Deserializer, EnumAccess, MapAccess, SeqAccess, VariantAccess, Visitor,
};

use super::scan::{ScanError, skip_string, skip_ws};

/// The kind of a value on the tape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A string, number, boolean or null.
    Scalar,
    /// An array.
    Array,
    /// An object.
    Object,
}

/// One value of the document.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    /// What it is.
    pub kind: Kind,
    /// Elements of an array (0 otherwise).
    pub len: u32,
    /// Values nested in it, at any depth.
    pub nested: u32,
}

/// The values of one JSON document in document order, and a cursor over them.
#[derive(Debug, Default)]
pub(crate) struct Tape {
    entries: Vec<Entry>,
    cursor: Cell<usize>,
    broken: Cell<bool>,
}

impl Tape {
    /// Records the values of the JSON value starting at `b[i]` (no leading whitespace);
    /// returns the index after it. `self` is cleared first and can be reused across items.
    pub(crate) fn record(&mut self, b: &[u8], i: usize) -> Result<usize, ScanError> {
        self.entries.clear();
        self.cursor.set(0);
        self.broken.set(false);
        // Open containers: their tape index.
        let mut open: Vec<usize> = Vec::with_capacity(16);
        let mut j = i;
        loop {
            j = skip_ws(b, j);
            let Some(&c) = b.get(j) else {
                return Err(ScanError {
                    at: j,
                    what: "a value",
                });
            };
            match c {
                b'{' | b'[' => {
                    self.element_of(&open);
                    open.push(self.entries.len());
                    self.entries.push(Entry {
                        kind: if c == b'{' { Kind::Object } else { Kind::Array },
                        len: 0,
                        nested: 0,
                    });
                    j += 1;
                }
                b'}' | b']' => {
                    let Some(idx) = open.pop() else {
                        return Err(ScanError {
                            at: j,
                            what: "an open object or array",
                        });
                    };
                    self.entries[idx].nested =
                        u32::try_from(self.entries.len() - idx - 1).unwrap_or(u32::MAX);
                    j += 1;
                }
                b',' => j += 1,
                b'"' => {
                    let (end, _) = skip_string(b, j)?;
                    let after = skip_ws(b, end);
                    if b.get(after) == Some(&b':') {
                        // A key: not a value.
                        j = after + 1;
                        continue;
                    }
                    self.scalar(&open);
                    j = end;
                }
                _ => {
                    self.scalar(&open);
                    while let Some(c) = b.get(j) {
                        if matches!(c, b',' | b']' | b'}' | b' ' | b'\t' | b'\n' | b'\r') {
                            break;
                        }
                        j += 1;
                    }
                }
            }
            if open.is_empty() {
                return Ok(j);
            }
        }
    }

    fn element_of(&mut self, open: &[usize]) {
        if let Some(&p) = open.last()
            && self.entries[p].kind == Kind::Array
        {
            self.entries[p].len += 1;
        }
    }

    fn scalar(&mut self, open: &[usize]) {
        self.element_of(open);
        self.entries.push(Entry {
            kind: Kind::Scalar,
            len: 0,
            nested: 0,
        });
    }

    /// Takes the next value's entry.
    fn take(&self) -> Option<usize> {
        if self.broken.get() {
            return None;
        }
        let i = self.cursor.get();
        if i >= self.entries.len() {
            self.broken.set(true);
            return None;
        }
        self.cursor.set(i + 1);
        Some(i)
    }

    /// Skips what is nested in entry `i` (serde skipped the whole value).
    fn skip_nested(&self, i: Option<usize>) {
        if let Some(i) = i
            && !self.broken.get()
        {
            self.cursor.set(i + 1 + self.entries[i].nested as usize);
        }
    }

    /// Checks that entry `i` is an object.
    fn expect_object(&self, i: Option<usize>) {
        if self.entries.get(i.unwrap_or(usize::MAX)).map(|e| e.kind) != Some(Kind::Object) {
            self.broken.set(true);
        }
    }

    /// The length of array entry `i`, if the tape agrees that it is an array.
    fn array_len(&self, i: Option<usize>) -> Option<usize> {
        let e = self.entries.get(i?)?;
        if self.broken.get() || e.kind != Kind::Array {
            self.broken.set(true);
            return None;
        }
        Some(e.len as usize)
    }
}

/// Deserializes a `T` from `de`, sizing every sequence from `tape` (recorded over the same
/// bytes).
pub(crate) fn deserialize<'de, T, D>(de: D, tape: &Tape) -> Result<T, D::Error>
where
    T: de::Deserialize<'de>,
    D: Deserializer<'de>,
{
    T::deserialize(Hinted {
        de,
        tape,
        entry: None,
    })
}

/// A deserializer of one value; `entry` is set when the value's tape entry was already
/// taken (the deserializer that `visit_some` and `visit_newtype_struct` receive).
struct Hinted<'t, D> {
    de: D,
    tape: &'t Tape,
    entry: Option<Option<usize>>,
}

impl<D> Hinted<'_, D> {
    fn entry(&self) -> Option<usize> {
        match self.entry {
            Some(e) => e,
            None => self.tape.take(),
        }
    }
}

/// A visitor of the value at `entry`.
struct V<'t, X> {
    inner: X,
    tape: &'t Tape,
    entry: Option<usize>,
}

macro_rules! forward {
    ($($method:ident($($arg:ident: $ty:ty),*);)*) => {$(
        fn $method<X: Visitor<'de>>(self, $($arg: $ty,)* visitor: X) -> Result<X::Value, D::Error> {
            let entry = self.entry();
            self.de.$method($($arg,)* V { inner: visitor, tape: self.tape, entry })
        }
    )*};
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for Hinted<'_, D> {
    type Error = D::Error;

    forward! {
        deserialize_any();
        deserialize_bool();
        deserialize_i8();
        deserialize_i16();
        deserialize_i32();
        deserialize_i64();
        deserialize_i128();
        deserialize_u8();
        deserialize_u16();
        deserialize_u32();
        deserialize_u64();
        deserialize_u128();
        deserialize_f32();
        deserialize_f64();
        deserialize_char();
        deserialize_str();
        deserialize_string();
        deserialize_bytes();
        deserialize_byte_buf();
        deserialize_option();
        deserialize_unit();
        deserialize_unit_struct(name: &'static str);
        deserialize_newtype_struct(name: &'static str);
        deserialize_seq();
        deserialize_tuple(len: usize);
        deserialize_tuple_struct(name: &'static str, len: usize);
        deserialize_map();
        deserialize_struct(name: &'static str, fields: &'static [&'static str]);
        deserialize_enum(name: &'static str, variants: &'static [&'static str]);
        deserialize_identifier();
    }

    fn deserialize_ignored_any<X: Visitor<'de>>(self, visitor: X) -> Result<X::Value, D::Error> {
        let entry = self.entry();
        self.tape.skip_nested(entry);
        self.de.deserialize_ignored_any(visitor)
    }

    fn is_human_readable(&self) -> bool {
        self.de.is_human_readable()
    }
}

macro_rules! visit {
    ($($method:ident($ty:ty);)*) => {$(
        fn $method<E: de::Error>(self, v: $ty) -> Result<X::Value, E> {
            self.inner.$method(v)
        }
    )*};
}

impl<'de, X: Visitor<'de>> Visitor<'de> for V<'_, X> {
    type Value = X::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.inner.expecting(f)
    }

    visit! {
        visit_bool(bool);
        visit_i8(i8);
        visit_i16(i16);
        visit_i32(i32);
        visit_i64(i64);
        visit_i128(i128);
        visit_u8(u8);
        visit_u16(u16);
        visit_u32(u32);
        visit_u64(u64);
        visit_u128(u128);
        visit_f32(f32);
        visit_f64(f64);
        visit_char(char);
        visit_str(&str);
        visit_borrowed_str(&'de str);
        visit_string(String);
        visit_bytes(&[u8]);
        visit_borrowed_bytes(&'de [u8]);
        visit_byte_buf(Vec<u8>);
    }

    fn visit_none<E: de::Error>(self) -> Result<X::Value, E> {
        self.inner.visit_none()
    }

    fn visit_unit<E: de::Error>(self) -> Result<X::Value, E> {
        self.inner.visit_unit()
    }

    fn visit_some<D2: Deserializer<'de>>(self, d: D2) -> Result<X::Value, D2::Error> {
        self.inner.visit_some(Hinted {
            de: d,
            tape: self.tape,
            entry: Some(self.entry),
        })
    }

    fn visit_newtype_struct<D2: Deserializer<'de>>(self, d: D2) -> Result<X::Value, D2::Error> {
        self.inner.visit_newtype_struct(Hinted {
            de: d,
            tape: self.tape,
            entry: Some(self.entry),
        })
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<X::Value, A::Error> {
        let len = self.tape.array_len(self.entry);
        self.inner.visit_seq(Seq {
            inner: seq,
            tape: self.tape,
            left: len,
        })
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<X::Value, A::Error> {
        self.tape.expect_object(self.entry);
        self.inner.visit_map(Map {
            inner: map,
            tape: self.tape,
        })
    }

    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<X::Value, A::Error> {
        self.inner.visit_enum(Enum {
            inner: data,
            tape: self.tape,
        })
    }
}

/// A seed whose value is the next one on the tape.
struct Seed<'t, S> {
    inner: S,
    tape: &'t Tape,
}

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for Seed<'_, S> {
    type Value = S::Value;
    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<S::Value, D::Error> {
        self.inner.deserialize(Hinted {
            de,
            tape: self.tape,
            entry: None,
        })
    }
}

struct Seq<'t, A> {
    inner: A,
    tape: &'t Tape,
    left: Option<usize>,
}

impl<'de, A: SeqAccess<'de>> SeqAccess<'de> for Seq<'_, A> {
    type Error = A::Error;
    fn next_element_seed<S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<Option<S::Value>, A::Error> {
        self.left = self.left.map(|l| l.saturating_sub(1));
        self.inner.next_element_seed(Seed {
            inner: seed,
            tape: self.tape,
        })
    }
    fn size_hint(&self) -> Option<usize> {
        self.left.or_else(|| self.inner.size_hint())
    }
}

struct Map<'t, A> {
    inner: A,
    tape: &'t Tape,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for Map<'_, A> {
    type Error = A::Error;
    fn next_key_seed<S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<Option<S::Value>, A::Error> {
        // Keys are not on the tape.
        self.inner.next_key_seed(seed)
    }
    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<S::Value, A::Error> {
        self.inner.next_value_seed(Seed {
            inner: seed,
            tape: self.tape,
        })
    }
    fn size_hint(&self) -> Option<usize> {
        self.inner.size_hint()
    }
}

struct Enum<'t, A> {
    inner: A,
    tape: &'t Tape,
}

impl<'de, 't, A: EnumAccess<'de>> EnumAccess<'de> for Enum<'t, A> {
    type Error = A::Error;
    type Variant = Variant<'t, A::Variant>;
    fn variant_seed<S: DeserializeSeed<'de>>(
        self,
        seed: S,
    ) -> Result<(S::Value, Self::Variant), A::Error> {
        let (v, variant) = self.inner.variant_seed(seed)?;
        Ok((
            v,
            Variant {
                inner: variant,
                tape: self.tape,
            },
        ))
    }
}

struct Variant<'t, A> {
    inner: A,
    tape: &'t Tape,
}

impl<'de, A: VariantAccess<'de>> VariantAccess<'de> for Variant<'_, A> {
    type Error = A::Error;
    fn unit_variant(self) -> Result<(), A::Error> {
        self.inner.unit_variant()
    }
    fn newtype_variant_seed<S: DeserializeSeed<'de>>(self, seed: S) -> Result<S::Value, A::Error> {
        self.inner.newtype_variant_seed(Seed {
            inner: seed,
            tape: self.tape,
        })
    }
    fn tuple_variant<X: Visitor<'de>>(self, len: usize, visitor: X) -> Result<X::Value, A::Error> {
        let entry = self.tape.take();
        self.inner.tuple_variant(
            len,
            V {
                inner: visitor,
                tape: self.tape,
                entry,
            },
        )
    }
    fn struct_variant<X: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: X,
    ) -> Result<X::Value, A::Error> {
        let entry = self.tape.take();
        self.inner.struct_variant(
            fields,
            V {
                inner: visitor,
                tape: self.tape,
                entry,
            },
        )
    }
}

#[cfg(test)]
mod tests;
