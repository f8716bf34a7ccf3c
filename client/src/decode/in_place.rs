//! Decoding a watch event's object into the memory of an object the cache has let go of.
//!
//! Why: a burst of watch events replaces cached objects one by one, and for each the
//! decoding thread built a new k8s-openapi object (about 150 allocations for a realistic
//! pod, one per `String`, `Vec` and map node, and moves of large structs such as `Container`
//! from serde's visitors into their vectors) while the replaced object, long out of the
//! CPU's caches, was freed with as many calls into malloc: a profile of a burst put a fifth
//! of the decoding threads' time in malloc and free and another tenth in dropping and moving
//! those structs. Here the event's JSON is written into an object handed back by the
//! informer (`Reclaim`) instead: a `String` takes the new text in its own buffer, a `Vec`
//! keeps its elements and decodes into them, a map whose keys are unchanged keeps its nodes
//! and decodes into its values, an absent optional member becomes `None`. Nothing is
//! allocated where the new state fits the old one's memory, and nothing is freed. Measured
//! with the comparison bench (BENCHMARKS.md, "Why each trick"): a burst's allocations per
//! pod event fell from 151 to 8-14 and its client CPU per event by about half.
//!
//! What it must never do is decode differently: the object it leaves is equal to the one
//! k8s-openapi's `Deserialize` builds from the same tape. So it follows those impls' rules
//! exactly: every member is read as an `Option` (absent or `null` gives `None`, or, for a
//! required field, the type's default, their `unwrap_or_default`, or a missing-field error
//! for a type without one), unknown members are ignored, a later duplicate member wins, and
//! `apiVersion` and `kind` of a resource must be strings equal to the type's own. JSON
//! values (`serde_json::Value`, `FieldsV1`) are decoded in place as `serde_json`'s visitor
//! builds them; every other value (numbers, booleans, `Time`, `IntOrString`, ...) is decoded
//! afresh from its part of the tape by simd-json's serde driver, the code the ordinary path
//! runs. Anything it does not expect (a string where an object should be, a wrong `kind`)
//! gives up: the caller then drops the target and decodes the bytes the ordinary way, whose
//! result or error is the one returned. The tests decode real objects of twenty kinds (the
//! test server's, the corpus's CRDs) into one another and into defaults, and mutated pods
//! into other mutated pods, and compare with a fresh decode.
//!
//! The one difference is in memory, not in value: a `String` or `Vec` keeps the capacity it
//! had, when that was more than the new value needs.
//!
//! Which types: the k8s-openapi types reachable from every built-in resource that can be
//! listed and watched, for the Kubernetes version of the spec the impls were generated from
//! (`k8s_1_35`, emitted by `kinform-gen in-place` from the v1.35 OpenAPI spec; every
//! struct's fields are listed in a pattern without `..`, so the impls do not compile against
//! types whose fields differ). With another version of k8s-openapi enabled, and for every
//! other type (custom resources, `DynamicObject`, the lean cache), no type is supported and
//! replaced objects are freed before each decode, as before.
//!
//! Considered: serde's `deserialize_in_place` (a hidden serde API that k8s-openapi's
//! hand-written impls do not implement, so it falls back to a fresh decode), and keeping
//! pools of freed `String`s (serde's string visitors can take an owned `String`, but
//! nothing hands a k8s-openapi object's strings back without walking its type).

use std::any::{Any, TypeId};
use std::collections::{BTreeMap, HashMap};
use std::sync::OnceLock;

use serde::de::DeserializeOwned;
use simd_json::{Node, StaticNode, Tape};

use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::FieldsV1;

k8s_openapi::k8s_if_1_35! {
    #[rustfmt::skip]
    mod k8s_1_35;
}

/// The value does not have the shape the target's type expects: decode afresh.
#[derive(Debug)]
pub(crate) struct Mismatch;

pub(crate) type Result<T = ()> = std::result::Result<T, Mismatch>;

/// One JSON value on a simd-json tape: exactly the nodes it spans.
#[derive(Clone, Copy)]
pub(crate) struct Value<'t, 'i> {
    nodes: &'t [Node<'i>],
}

/// The number of tape nodes the value at `nodes[0]` spans.
fn extent(nodes: &[Node<'_>]) -> usize {
    match nodes.first() {
        Some(Node::Object { count, .. } | Node::Array { count, .. }) => 1 + count,
        _ => 1,
    }
}

impl<'t, 'i> Value<'t, 'i> {
    /// The document's root value.
    fn root(tape: &'t [Node<'i>]) -> Result<Self> {
        let n = extent(tape);
        tape.get(..n).map(|nodes| Self { nodes }).ok_or(Mismatch)
    }

    /// Whether the value is `null`.
    pub(crate) fn is_null(self) -> bool {
        matches!(self.nodes.first(), Some(Node::Static(StaticNode::Null)))
    }

    /// The members of an object.
    pub(crate) fn members(self) -> Result<Members<'t, 'i>> {
        match self.nodes.first() {
            Some(&Node::Object { len, .. }) => Ok(Members {
                rest: &self.nodes[1..],
                left: len,
            }),
            _ => Err(Mismatch),
        }
    }

    /// The elements of an array.
    fn elements(self) -> Result<Elements<'t, 'i>> {
        match self.nodes.first() {
            Some(&Node::Array { len, .. }) => Ok(Elements {
                rest: &self.nodes[1..],
                left: len,
            }),
            _ => Err(Mismatch),
        }
    }

    /// A string's text.
    fn str(self) -> Result<&'i str> {
        match self.nodes.first() {
            Some(&Node::String(s)) => Ok(s),
            _ => Err(Mismatch),
        }
    }

    /// Checks a resource's `apiVersion` or `kind`: a string equal to `want`.
    pub(crate) fn expect_str(self, want: &str) -> Result {
        if self.str()? == want {
            Ok(())
        } else {
            Err(Mismatch)
        }
    }

    /// The value that starts at `rest[0]`, and what follows it.
    fn split(rest: &'t [Node<'i>]) -> Result<(Self, &'t [Node<'i>])> {
        let n = extent(rest);
        if rest.len() < n {
            return Err(Mismatch);
        }
        let (nodes, rest) = rest.split_at(n);
        Ok((Self { nodes }, rest))
    }
}

/// The members of an object, in the document's order: key and value.
#[derive(Clone)]
pub(crate) struct Members<'t, 'i> {
    rest: &'t [Node<'i>],
    left: usize,
}

impl<'t, 'i> Iterator for Members<'t, 'i> {
    type Item = Result<(&'i str, Value<'t, 'i>)>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let Some((&Node::String(key), rest)) = self.rest.split_first() else {
            self.left = 0;
            return Some(Err(Mismatch));
        };
        Some(Value::split(rest).map(|(value, rest)| {
            self.rest = rest;
            (key, value)
        }))
    }
}

/// The elements of an array, in order.
struct Elements<'t, 'i> {
    rest: &'t [Node<'i>],
    left: usize,
}

impl<'t, 'i> Iterator for Elements<'t, 'i> {
    type Item = Result<Value<'t, 'i>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        Some(Value::split(self.rest).map(|(value, rest)| {
            self.rest = rest;
            value
        }))
    }
}

/// Scratch space of one document's in-place decode: the tape a value decoded afresh is
/// copied to (simd-json's deserializer owns its tape).
pub(crate) struct Scratch<'i> {
    tape: Tape<'i>,
}

/// Decodes `v` afresh into a `T`, with simd-json's serde driver, as the ordinary path does.
pub(crate) fn fresh<'i, T: DeserializeOwned>(v: Value<'_, 'i>, cx: &mut Scratch<'i>) -> Result<T> {
    let mut tape = std::mem::replace(&mut cx.tape, Tape(Vec::new()));
    tape.0.clear();
    tape.0.extend_from_slice(v.nodes);
    let mut de = simd_json::Deserializer::from_tape(tape);
    let out = T::deserialize(&mut de).map_err(|_| Mismatch);
    cx.tape = de.into_tape();
    out
}

/// A type whose value can be decoded into an existing one (see the module docs).
pub(crate) trait InPlace: Sized {
    /// Makes `self` what `Self::deserialize` would build from `v`.
    fn decode_in_place<'i>(&mut self, v: Value<'_, 'i>, cx: &mut Scratch<'i>) -> Result;

    /// What `Self::deserialize` builds from `v`, where there is no value to decode into.
    fn decode_new<'i>(v: Value<'_, 'i>, cx: &mut Scratch<'i>) -> Result<Self>;
}

/// A k8s-openapi struct field: an `Option` of an [`InPlace`] type, or such a type itself
/// when the field is required. k8s-openapi reads every member as an `Option`, so `null` is
/// the same as absent, and a required field absent holds its type's default
/// (`unwrap_or_default`).
pub(crate) trait Field {
    /// Makes `self` what the struct holds for member value `v`.
    fn decode_field<'i>(&mut self, v: Value<'_, 'i>, cx: &mut Scratch<'i>) -> Result;

    /// Makes `self` what the struct holds when the member is absent (a [`Mismatch`] where
    /// k8s-openapi reports a missing field).
    fn reset(&mut self) -> Result;
}

impl<T: InPlace> Field for Option<T> {
    fn decode_field<'i>(&mut self, v: Value<'_, 'i>, cx: &mut Scratch<'i>) -> Result {
        match self {
            _ if v.is_null() => *self = None,
            Some(t) => t.decode_in_place(v, cx)?,
            None => *self = Some(T::decode_new(v, cx)?),
        }
        Ok(())
    }

    fn reset(&mut self) -> Result {
        *self = None;
        Ok(())
    }
}

impl<T: InPlace + Required> Field for T {
    fn decode_field<'i>(&mut self, v: Value<'_, 'i>, cx: &mut Scratch<'i>) -> Result {
        if v.is_null() {
            self.reset()
        } else {
            self.decode_in_place(v, cx)
        }
    }

    fn reset(&mut self) -> Result {
        self.clear_in_place()
    }
}

/// A type k8s-openapi has required fields of.
pub(crate) trait Required {
    /// Makes `self` what k8s-openapi holds for the absent member: `Self::default()`
    /// (`unwrap_or_default`), kept in the memory `self` has; a [`Mismatch`] for a type
    /// without a default (k8s-openapi's missing-field error).
    fn clear_in_place(&mut self) -> Result;
}

impl InPlace for String {
    fn decode_in_place<'i>(&mut self, v: Value<'_, 'i>, _: &mut Scratch<'i>) -> Result {
        let s = v.str()?;
        self.clear();
        self.push_str(s);
        Ok(())
    }

    fn decode_new<'i>(v: Value<'_, 'i>, _: &mut Scratch<'i>) -> Result<Self> {
        v.str().map(str::to_owned)
    }
}

impl Required for String {
    fn clear_in_place(&mut self) -> Result {
        self.clear();
        Ok(())
    }
}

impl<T: InPlace> InPlace for Box<T> {
    fn decode_in_place<'i>(&mut self, v: Value<'_, 'i>, cx: &mut Scratch<'i>) -> Result {
        (**self).decode_in_place(v, cx)
    }

    fn decode_new<'i>(v: Value<'_, 'i>, cx: &mut Scratch<'i>) -> Result<Self> {
        T::decode_new(v, cx).map(Box::new)
    }
}

impl<T: InPlace> InPlace for Vec<T> {
    fn decode_in_place<'i>(&mut self, v: Value<'_, 'i>, cx: &mut Scratch<'i>) -> Result {
        let elements = v.elements()?;
        let len = elements.left;
        self.truncate(len);
        self.reserve_exact(len - self.len());
        for (i, element) in elements.enumerate() {
            let element = element?;
            match self.get_mut(i) {
                Some(t) => t.decode_in_place(element, cx)?,
                None => self.push(T::decode_new(element, cx)?),
            }
        }
        Ok(())
    }

    fn decode_new<'i>(v: Value<'_, 'i>, cx: &mut Scratch<'i>) -> Result<Self> {
        new_by_default(v, cx)
    }
}

impl<T> Required for Vec<T> {
    fn clear_in_place(&mut self) -> Result {
        self.clear();
        Ok(())
    }
}

impl<T: InPlace> InPlace for BTreeMap<String, T> {
    fn decode_in_place<'i>(&mut self, v: Value<'_, 'i>, cx: &mut Scratch<'i>) -> Result {
        map_in_place(self, v, cx, &[])
    }

    fn decode_new<'i>(v: Value<'_, 'i>, cx: &mut Scratch<'i>) -> Result<Self> {
        new_by_default(v, cx)
    }
}

/// A map with string keys and a fixed order: `BTreeMap<String, T>` and `serde_json::Map`.
trait StringMap {
    type Value: InPlace;
    fn count(&self) -> usize;
    fn entries(&mut self) -> impl Iterator<Item = (&String, &mut Self::Value)>;
    fn empty(&mut self);
    fn put(&mut self, key: String, value: Self::Value);
}

impl<T: InPlace> StringMap for BTreeMap<String, T> {
    type Value = T;
    fn count(&self) -> usize {
        self.len()
    }
    fn entries(&mut self) -> impl Iterator<Item = (&String, &mut T)> {
        self.iter_mut()
    }
    fn empty(&mut self) {
        self.clear();
    }
    fn put(&mut self, key: String, value: T) {
        self.insert(key, value);
    }
}

impl StringMap for serde_json::Map<String, serde_json::Value> {
    type Value = serde_json::Value;
    fn count(&self) -> usize {
        self.len()
    }
    fn entries(&mut self) -> impl Iterator<Item = (&String, &mut serde_json::Value)> {
        self.iter_mut()
    }
    fn empty(&mut self) {
        self.clear();
    }
    fn put(&mut self, key: String, value: serde_json::Value) {
        self.insert(key, value);
    }
}

/// A JSON object into a map, as the map's `Deserialize` inserts its members (a later
/// duplicate wins): while the keys are the map's, in its order (Kubernetes writes maps
/// sorted), the values are decoded in place; at the first that is not, the map is
/// refilled. A key of `reserved` gives up.
fn map_in_place<'i, M: StringMap>(
    map: &mut M,
    v: Value<'_, 'i>,
    cx: &mut Scratch<'i>,
    reserved: &[&str],
) -> Result {
    let members = v.members()?;
    if members.left == map.count() {
        let mut same = true;
        for (member, (key, value)) in members.clone().zip(map.entries()) {
            let (k, v) = member?;
            if k != key {
                same = false;
                break;
            }
            value.decode_in_place(v, cx)?;
        }
        if same {
            return Ok(());
        }
    }
    map.empty();
    for member in members {
        let (key, v) = member?;
        if reserved.contains(&key) {
            return Err(Mismatch);
        }
        map.put(key.to_owned(), M::Value::decode_new(v, cx)?);
    }
    Ok(())
}

impl<T> Required for BTreeMap<String, T> {
    fn clear_in_place(&mut self) -> Result {
        self.clear();
        Ok(())
    }
}

impl InPlace for Quantity {
    fn decode_in_place<'i>(&mut self, v: Value<'_, 'i>, cx: &mut Scratch<'i>) -> Result {
        // A string is the quantity's text; a number is written as text by its visitor.
        if let Ok(s) = v.str() {
            self.0.clear();
            self.0.push_str(s);
        } else {
            *self = fresh(v, cx)?;
        }
        Ok(())
    }

    fn decode_new<'i>(v: Value<'_, 'i>, cx: &mut Scratch<'i>) -> Result<Self> {
        fresh(v, cx)
    }
}

impl Required for Quantity {
    fn clear_in_place(&mut self) -> Result {
        self.0.clear();
        Ok(())
    }
}

/// Keys `serde_json::Value`'s own `Deserialize` reads as a raw value or an arbitrary-
/// precision number rather than as a member: an object with one is decoded afresh.
const SERDE_JSON_MAGIC_KEYS: [&str; 2] = [
    "$serde_json::private::RawValue",
    "$serde_json::private::Number",
];

impl InPlace for serde_json::Value {
    fn decode_in_place<'i>(&mut self, v: Value<'_, 'i>, cx: &mut Scratch<'i>) -> Result {
        use serde_json::Value as Json;
        match (v.nodes.first(), &mut *self) {
            (Some(Node::String(_)), Json::String(s)) => s.decode_in_place(v, cx)?,
            (Some(Node::Array { .. }), Json::Array(a)) => a.decode_in_place(v, cx)?,
            (Some(Node::Object { .. }), Json::Object(m)) => {
                map_in_place(m, v, cx, &SERDE_JSON_MAGIC_KEYS)?
            }
            (Some(Node::String(s)), _) => *self = Json::String((*s).to_owned()),
            (Some(Node::Array { .. }), _) => *self = Json::Array(Vec::decode_new(v, cx)?),
            (Some(Node::Object { .. }), _) => {
                let mut m = serde_json::Map::new();
                map_in_place(&mut m, v, cx, &SERDE_JSON_MAGIC_KEYS)?;
                *self = Json::Object(m);
            }
            // Scalars hold no memory: decoded afresh, as serde_json's visitor makes them.
            _ => *self = fresh(v, cx)?,
        }
        Ok(())
    }

    fn decode_new<'i>(v: Value<'_, 'i>, cx: &mut Scratch<'i>) -> Result<Self> {
        new_by_default(v, cx)
    }
}

impl InPlace for FieldsV1 {
    fn decode_in_place<'i>(&mut self, v: Value<'_, 'i>, cx: &mut Scratch<'i>) -> Result {
        // k8s-openapi reads it as a newtype of `serde_json::Value`.
        self.0.decode_in_place(v, cx)
    }

    fn decode_new<'i>(v: Value<'_, 'i>, cx: &mut Scratch<'i>) -> Result<Self> {
        serde_json::Value::decode_new(v, cx).map(FieldsV1)
    }
}

/// A default `T` with `v` decoded into it: [`InPlace::decode_new`] of a struct.
pub(crate) fn new_by_default<'i, T: InPlace + Default>(
    v: Value<'_, 'i>,
    cx: &mut Scratch<'i>,
) -> Result<T> {
    let mut out = T::default();
    out.decode_in_place(v, cx)?;
    Ok(out)
}

/// Types decoded afresh from their part of the tape: scalars, and k8s-openapi's types
/// with a `Deserialize` of their own (`Time`, `IntOrString`, `serde_json::Value`, ...).
/// `@new` gives only [`InPlace::decode_new`] (for a struct decoded in place).
macro_rules! fresh_in_place {
    (@new $ty:ty) => {
        fn decode_new<'i>(
            v: $crate::decode::in_place::Value<'_, 'i>,
            cx: &mut $crate::decode::in_place::Scratch<'i>,
        ) -> $crate::decode::in_place::Result<Self> {
            $crate::decode::in_place::fresh(v, cx)
        }
    };
    ($($ty:ty),* $(,)?) => {$(
        impl $crate::decode::in_place::InPlace for $ty {
            fn decode_in_place<'i>(
                &mut self,
                v: $crate::decode::in_place::Value<'_, 'i>,
                cx: &mut $crate::decode::in_place::Scratch<'i>,
            ) -> $crate::decode::in_place::Result {
                *self = $crate::decode::in_place::fresh(v, cx)?;
                Ok(())
            }

            $crate::decode::in_place::fresh_in_place!(@new $ty);
        }
    )*};
}
pub(crate) use fresh_in_place;

/// A k8s-openapi struct decoded member by member, as its `Deserialize` reads it: each
/// member's JSON name and the field it goes to. `resource` checks `apiVersion` and `kind`
/// (k8s-openapi's resource types have no fields for them); `no_default` is a struct without
/// `Default` (a required field's type has none), made afresh when there is no value to
/// decode into. The fields are listed in a pattern without `..`, so a struct with a field
/// the list lacks does not compile.
#[allow(unused_macros)] // Used by the generated decoders only, which exist for Kubernetes 1.35 alone.
macro_rules! in_place_struct {
    (resource $ty:ty { $($json:literal => $field:ident),* $(,)? }) => {
        $crate::decode::in_place::in_place_struct!(@impl $ty { $($json => $field),* } {
            "apiVersion" => <$ty as k8s_openapi::Resource>::API_VERSION,
            "kind" => <$ty as k8s_openapi::Resource>::KIND,
        } $crate::decode::in_place::new_by_default);
        $crate::decode::in_place::in_place_struct!(@clear $ty { $($field),* });
    };
    (no_default $ty:ty { $($json:literal => $field:ident),* $(,)? }) => {
        $crate::decode::in_place::in_place_struct!(@impl $ty { $($json => $field),* } {}
            $crate::decode::in_place::fresh);
        $crate::decode::in_place::required_field!(no_default $ty);
    };
    ($ty:ty { $($json:literal => $field:ident),* $(,)? }) => {
        $crate::decode::in_place::in_place_struct!(@impl $ty { $($json => $field),* } {}
            $crate::decode::in_place::new_by_default);
        $crate::decode::in_place::in_place_struct!(@clear $ty { $($field),* });
    };
    (@impl $ty:ty { $($json:literal => $field:ident),* }
        { $($check:literal => $want:expr),* $(,)? } $new:path) => {
        impl $crate::decode::in_place::InPlace for $ty {
            fn decode_in_place<'i>(
                &mut self,
                v: $crate::decode::in_place::Value<'_, 'i>,
                cx: &mut $crate::decode::in_place::Scratch<'i>,
            ) -> $crate::decode::in_place::Result {
                use $crate::decode::in_place::Field as _;
                let Self { $($field: _),* } = self;
                $(let mut $field = false;)*
                for member in v.members()? {
                    let (key, value) = member?;
                    match key {
                        $($json => {
                            self.$field.decode_field(value, cx)?;
                            $field = true;
                        })*
                        $($check => value.expect_str($want)?,)*
                        _ => {}
                    }
                }
                $(if !$field {
                    self.$field.reset()?;
                })*
                Ok(())
            }

            fn decode_new<'i>(
                v: $crate::decode::in_place::Value<'_, 'i>,
                cx: &mut $crate::decode::in_place::Scratch<'i>,
            ) -> $crate::decode::in_place::Result<Self> {
                $new(v, cx)
            }
        }
    };
    (@clear $ty:ty { $($field:ident),* }) => {
        impl $crate::decode::in_place::Required for $ty {
            fn clear_in_place(&mut self) -> $crate::decode::in_place::Result {
                use $crate::decode::in_place::Field as _;
                $(self.$field.reset()?;)*
                Ok(())
            }
        }
    };
}
#[allow(unused_imports)]
// Used by the generated decoders only, which exist for Kubernetes 1.35 alone.
pub(crate) use in_place_struct;

fresh_in_place!(bool, i32, i64, f64, k8s_openapi::ByteString);

/// Types of required fields decoded afresh: made their default when the member is absent,
/// or, `no_default`, a [`Mismatch`] (k8s-openapi's missing-field error).
macro_rules! required_field {
    (no_default $($ty:ty),* $(,)?) => {$(
        impl $crate::decode::in_place::Required for $ty {
            fn clear_in_place(&mut self) -> $crate::decode::in_place::Result {
                Err($crate::decode::in_place::Mismatch)
            }
        }
    )*};
    ($($ty:ty),* $(,)?) => {$(
        impl $crate::decode::in_place::Required for $ty {
            fn clear_in_place(&mut self) -> $crate::decode::in_place::Result {
                *self = <$ty>::default();
                Ok(())
            }
        }
    )*};
}
pub(crate) use required_field;

required_field!(
    bool,
    i32,
    i64,
    f64,
    serde_json::Value,
    k8s_openapi::ByteString
);

/// Decodes a document into a type-erased root object of type `T`.
pub(crate) type RootFn = for<'t, 'i> fn(&mut dyn Any, Value<'t, 'i>, &mut Scratch<'i>) -> Result;

/// [`RootFn`] of `T`.
#[allow(dead_code)] // Used by the generated decoders only, which exist for Kubernetes 1.35 alone.
pub(crate) fn root<'i, T: InPlace + 'static>(
    target: &mut dyn Any,
    v: Value<'_, 'i>,
    cx: &mut Scratch<'i>,
) -> Result {
    target
        .downcast_mut::<T>()
        .ok_or(Mismatch)?
        .decode_in_place(v, cx)
}

/// The root types: emits `roots(add)`, which registers each with its [`RootFn`].
#[allow(unused_macros)] // Used by the generated decoders only, which exist for Kubernetes 1.35 alone.
macro_rules! root_types {
    ($($ty:ty),* $(,)?) => {
        /// Registers every root type with its decoder.
        pub(super) fn roots(
            add: &mut dyn FnMut(std::any::TypeId, $crate::decode::in_place::RootFn),
        ) {
            $(add(std::any::TypeId::of::<$ty>(), $crate::decode::in_place::root::<$ty>);)*
        }
    };
}
#[allow(unused_imports)]
// Used by the generated decoders only, which exist for Kubernetes 1.35 alone.
pub(crate) use root_types;

/// The root types with in-place decoding, by type.
fn roots() -> &'static HashMap<TypeId, RootFn> {
    static ROOTS: OnceLock<HashMap<TypeId, RootFn>> = OnceLock::new();
    ROOTS.get_or_init(|| {
        #[allow(unused_mut)]
        let mut roots: HashMap<TypeId, RootFn> = HashMap::new();
        k8s_openapi::k8s_if_1_35! {
            k8s_1_35::roots(&mut |id, f| {
                roots.insert(id, f);
            });
        }
        roots
    })
}

/// Whether objects of type `K` can be decoded in place.
pub(crate) fn supports<K: 'static>() -> bool {
    roots().contains_key(&TypeId::of::<K>())
}

/// Makes `target` the object the document on `tape` holds, as `K::deserialize` would build
/// it; `false` when `K` has no in-place decoding or the document is not what it expects
/// (`target` is then partly written and must be dropped).
pub(crate) fn decode_root<'i, K: 'static>(
    target: &mut K,
    tape: &[Node<'i>],
    scratch: Tape<'i>,
) -> (bool, Tape<'i>) {
    let Some(f) = roots().get(&TypeId::of::<K>()) else {
        return (false, scratch);
    };
    let mut cx = Scratch { tape: scratch };
    let ok = Value::root(tape)
        .and_then(|v| f(target, v, &mut cx))
        .is_ok();
    (ok, cx.tape)
}

// The tests compare with the decoders of 1.35; with another version there are none to test.
k8s_openapi::k8s_if_1_35! {
    #[cfg(test)]
    mod tests;
}
