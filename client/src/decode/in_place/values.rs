//! The tape reader ([`Value`]), the [`InPlace`] trait with its impls for strings,
//! containers, JSON values, scalars and values decoded afresh, and the registry of root
//! types (see the parent module).

use std::any::{Any, TypeId};
use std::collections::{BTreeMap, HashMap};
use std::sync::OnceLock;

use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::FieldsV1;
use serde::de::DeserializeOwned;
use simd_json::prelude::ValueAsScalar as _;
use simd_json::{Node, StaticNode, Tape};

use super::{Current, Source};
use crate::decode::object::extent;

/// The value does not have the shape the target's type expects: decode afresh.
#[derive(Debug)]
pub struct Mismatch;

/// The outcome of an in-place decode: `Mismatch` gives up.
pub type Result<T = ()> = std::result::Result<T, Mismatch>;

/// One JSON value on a simd-json tape: exactly the nodes it spans.
#[derive(Clone, Copy)]
pub struct Value<'t, 'i> {
    nodes: &'t [Node<'i>],
}

impl<'t, 'i> Value<'t, 'i> {
    /// The document's root value.
    pub(super) fn root(tape: &'t [Node<'i>]) -> Result<Self> {
        let n = extent(tape, 0);
        tape.get(..n).map(|nodes| Self { nodes }).ok_or(Mismatch)
    }

    /// Whether the value is `null`.
    pub fn is_null(self) -> bool {
        matches!(self.nodes.first(), Some(Node::Static(StaticNode::Null)))
    }

    /// Checks a resource's `apiVersion` or `kind`: a string equal to `want`.
    pub(crate) fn expect_str(self, want: &str) -> Result {
        if self.str()? == want {
            Ok(())
        } else {
            Err(Mismatch)
        }
    }

    /// The members of an object.
    pub fn members(self) -> Result<Members<'t, 'i>> {
        match self.nodes.first() {
            Some(&Node::Object { len, .. }) => Ok(Members {
                rest: &self.nodes[1..],
                left: len,
            }),
            _ => Err(Mismatch),
        }
    }

    /// The value's first node: the value itself, or the head of a container.
    pub(crate) fn node(self) -> Result<&'t Node<'i>> {
        self.nodes.first().ok_or(Mismatch)
    }

    /// The elements of an array.
    pub(crate) fn elements(self) -> Result<Elements<'t, 'i>> {
        match self.nodes.first() {
            Some(&Node::Array { len, .. }) => Ok(Elements {
                rest: &self.nodes[1..],
                left: len,
            }),
            _ => Err(Mismatch),
        }
    }

    /// A string's text.
    pub(crate) fn str(self) -> Result<&'i str> {
        match self.nodes.first() {
            Some(&Node::String(s)) => Ok(s),
            _ => Err(Mismatch),
        }
    }

    /// The value that starts at `rest[0]`, and what follows it.
    fn split(rest: &'t [Node<'i>]) -> Result<(Self, &'t [Node<'i>])> {
        let n = extent(rest, 0);
        if rest.len() < n {
            return Err(Mismatch);
        }
        let (nodes, rest) = rest.split_at(n);
        Ok((Self { nodes }, rest))
    }
}

/// The members of an object, in the document's order: key and value.
#[derive(Clone)]
pub struct Members<'t, 'i> {
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
pub(crate) struct Elements<'t, 'i> {
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
/// copied to (simd-json's deserializer owns its tape), and the document's text.
pub struct Scratch<'i> {
    tape: Tape<'i>,
    /// The document as received.
    pub(crate) source: Source<'i>,
    /// The cached objects of the root's type, when the caller can look them up.
    pub(crate) current: Option<Current<'i>>,
}

/// Decodes `v` afresh into a `T`, with simd-json's serde driver over a copy of `v`'s nodes,
/// as the ordinary path does.
pub fn fresh<'i, T: DeserializeOwned>(v: Value<'_, 'i>, cx: &mut Scratch<'i>) -> Result<T> {
    let mut tape = std::mem::replace(&mut cx.tape, Tape(Vec::new()));
    tape.0.clear();
    tape.0.extend_from_slice(v.nodes);
    let mut de = simd_json::Deserializer::from_tape(tape);
    let out = T::deserialize(&mut de).map_err(|_| Mismatch);
    cx.tape = de.into_tape();
    out
}

/// Decodes `v` afresh with `read` (a field's `deserialize_with` function), over simd-json's
/// serde driver on a copy of `v`'s nodes, as the ordinary path calls it.
pub fn fresh_with<'i, T>(
    v: Value<'_, 'i>,
    cx: &mut Scratch<'i>,
    read: impl FnOnce(&mut simd_json::Deserializer<'i>) -> simd_json::Result<T>,
) -> Result<T> {
    let mut tape = std::mem::replace(&mut cx.tape, Tape(Vec::new()));
    tape.0.clear();
    tape.0.extend_from_slice(v.nodes);
    let mut de = simd_json::Deserializer::from_tape(tape);
    let out = read(&mut de).map_err(|_| Mismatch);
    cx.tape = de.into_tape();
    out
}

/// A type whose value can be decoded into an existing one (see the module docs).
///
/// A trait of its own, not serde's `deserialize_in_place`: that is a hidden serde API which
/// k8s-openapi's hand-written impls do not implement, so it falls back to a fresh decode.
/// Nor pools of freed `String`s: serde's string visitors can take an owned `String`, but
/// nothing hands a k8s-openapi object's strings back without walking its type, which the
/// impls of this trait do.
pub trait InPlace: Sized {
    /// Makes `self` what `Self::deserialize` would build from `v`; by default, a value made
    /// afresh by [`decode_new`](Self::decode_new) (for types whose memory is not reused).
    fn decode_in_place<'i>(&mut self, v: Value<'_, 'i>, cx: &mut Scratch<'i>) -> Result {
        *self = Self::decode_new(v, cx)?;
        Ok(())
    }

    /// What `Self::deserialize` builds from `v`, where there is no value to decode into.
    fn decode_new<'i>(v: Value<'_, 'i>, cx: &mut Scratch<'i>) -> Result<Self>;
}

impl InPlace for String {
    fn decode_in_place<'i>(&mut self, v: Value<'_, 'i>, _: &mut Scratch<'i>) -> Result {
        let s = v.str()?;
        if self.capacity() == 0 {
            // A new string (a default's field): exactly its length, as `decode_new`'s.
            *self = s.to_owned();
        } else {
            self.clear();
            self.push_str(s);
        }
        Ok(())
    }

    fn decode_new<'i>(v: Value<'_, 'i>, _: &mut Scratch<'i>) -> Result<Self> {
        v.str().map(str::to_owned)
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

/// serde's `Option`: `null` is `None`, any other value a `T`, decoded into the one held.
impl<T: InPlace> InPlace for Option<T> {
    fn decode_in_place<'i>(&mut self, v: Value<'_, 'i>, cx: &mut Scratch<'i>) -> Result {
        match self {
            _ if v.is_null() => *self = None,
            Some(t) => t.decode_in_place(v, cx)?,
            None => *self = Some(T::decode_new(v, cx)?),
        }
        Ok(())
    }

    fn decode_new<'i>(v: Value<'_, 'i>, cx: &mut Scratch<'i>) -> Result<Self> {
        if v.is_null() {
            Ok(None)
        } else {
            T::decode_new(v, cx).map(Some)
        }
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
    /// The map's own entries, moved out in its order.
    type Drain: Iterator<Item = (String, Self::Value)>;
    fn count(&self) -> usize;
    fn entries(&mut self) -> impl Iterator<Item = (&String, &mut Self::Value)>;
    /// Moves every entry out, in the map's order, leaving it empty.
    fn drain_entries(&mut self) -> Self::Drain;
    fn put(&mut self, key: String, value: Self::Value);
}

impl<T: InPlace> StringMap for BTreeMap<String, T> {
    type Value = T;
    type Drain = std::collections::btree_map::IntoIter<String, T>;
    fn count(&self) -> usize {
        self.len()
    }
    fn entries(&mut self) -> impl Iterator<Item = (&String, &mut T)> {
        self.iter_mut()
    }
    fn drain_entries(&mut self) -> Self::Drain {
        std::mem::take(self).into_iter()
    }
    fn put(&mut self, key: String, value: T) {
        self.insert(key, value);
    }
}

impl StringMap for serde_json::Map<String, serde_json::Value> {
    type Value = serde_json::Value;
    type Drain = serde_json::map::IntoIter;
    fn count(&self) -> usize {
        self.len()
    }
    fn entries(&mut self) -> impl Iterator<Item = (&String, &mut serde_json::Value)> {
        self.iter_mut()
    }
    fn drain_entries(&mut self) -> Self::Drain {
        std::mem::take(self).into_iter()
    }
    fn put(&mut self, key: String, value: serde_json::Value) {
        self.insert(key, value);
    }
}

/// How many of the old entries not yet taken a refilled map's member looks through for its
/// own key: both orders are usually the same (sorted), so this finds the key past a few
/// members added or removed, and keeps a refill linear in the map's size whatever the keys.
const SAME_KEY_LOOKAHEAD: usize = 8;

/// A JSON object into a map, as the map's `Deserialize` inserts its members (a later
/// duplicate wins): while the keys are the map's, in its order (Kubernetes writes maps
/// sorted), the values are decoded in place. At the first that is not, the map is refilled
/// in the object's order from its own entries: a member takes the old entry of its key if
/// there is one a few entries ahead, else the next old entry not taken, whose key's buffer
/// takes the new key and whose value is decoded into; only members beyond the old entries
/// are made afresh, and old entries left over are dropped. A key of `reserved` gives up.
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
    let mut old = Lookahead::new(map.drain_entries());
    for member in members {
        let (key, v) = member?;
        if reserved.contains(&key) {
            return Err(Mismatch);
        }
        match old.take(key) {
            Some((k, mut value)) => {
                value.decode_in_place(v, cx)?;
                map.put(k, value);
            }
            None => map.put(key.to_owned(), M::Value::decode_new(v, cx)?),
        }
    }
    Ok(())
}

/// The old entries of a map being refilled, drawn in order from its owning iterator, of which
/// the next [`SAME_KEY_LOOKAHEAD`] not yet passed are held on the stack: the refill's window.
/// So a refill allocates nothing to hold them. An entry is passed once it and every entry
/// before it are taken; the first entry of the window is therefore always untaken, and is
/// the spare a member without its own key takes.
/// A `fieldsV1` window takes about 450 bytes of stack per level of maps being refilled, and
/// tapes nest at most 127 levels (`MAX_NESTING`), so the windows take at most about 60 KiB
/// of a decoding thread's stack.
struct Lookahead<I: Iterator> {
    window: [Option<I::Item>; SAME_KEY_LOOKAHEAD],
    /// Where in `window` the first entry not passed is.
    first: usize,
    /// How many of `window`'s slots, from `first` on, hold entries drawn (taken or not).
    drawn: usize,
    rest: I,
}

impl<V, I: Iterator<Item = (String, V)>> Lookahead<I> {
    fn new(rest: I) -> Self {
        let mut old = Self {
            window: std::array::from_fn(|_| None),
            first: 0,
            drawn: 0,
            rest,
        };
        old.draw();
        old
    }

    /// Fills the window's free slots from the iterator.
    fn draw(&mut self) {
        while self.drawn < SAME_KEY_LOOKAHEAD {
            let Some(entry) = self.rest.next() else { break };
            self.window[(self.first + self.drawn) % SAME_KEY_LOOKAHEAD] = Some(entry);
            self.drawn += 1;
        }
    }

    /// The old entry of `key` if the window holds it, else the first entry not taken with
    /// its key's buffer holding `key`, else `None` (every old entry is taken).
    fn take(&mut self, key: &str) -> Option<(String, V)> {
        let slot = |i| (self.first + i) % SAME_KEY_LOOKAHEAD;
        let same_key = (0..self.drawn)
            .map(slot)
            .find(|&at| self.window[at].as_ref().is_some_and(|(k, _)| k == key));
        let taken = match same_key {
            Some(at) => self.window[at].take(),
            None => self.window[self.first].take().map(|(mut k, value)| {
                k.clear();
                k.push_str(key);
                (k, value)
            }),
        };
        while self.drawn > 0 && self.window[self.first].is_none() {
            self.first = (self.first + 1) % SAME_KEY_LOOKAHEAD;
            self.drawn -= 1;
        }
        self.draw();
        taken
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
pub fn new_by_default<'i, T: InPlace + Default>(
    v: Value<'_, 'i>,
    cx: &mut Scratch<'i>,
) -> Result<T> {
    let mut out = T::default();
    out.decode_in_place(v, cx)?;
    Ok(out)
}

/// Types decoded afresh from their part of the tape by the serde driver: k8s-openapi's
/// types with a `Deserialize` of their own (`MicroTime`, `IntOrString`, `ByteString`, ...).
macro_rules! fresh_in_place {
    ($($ty:ty),* $(,)?) => {$(
        impl $crate::decode::in_place::InPlace for $ty {
            fn decode_new<'i>(
                v: $crate::decode::in_place::Value<'_, 'i>,
                cx: &mut $crate::decode::in_place::Scratch<'i>,
            ) -> $crate::decode::in_place::Result<Self> {
                $crate::decode::in_place::fresh(v, cx)
            }
        }
    )*};
}
pub(crate) use fresh_in_place;

fresh_in_place!(k8s_openapi::ByteString);

/// Scalars read from their tape node as simd-json's serde driver reads them (its
/// `deserialize_bool`, `parse_i32`, `parse_i64` and `parse_double`), without building a
/// deserializer over a copy of the node; what the driver refuses gives up.
macro_rules! scalar_in_place {
    ($($ty:ty => |$node:ident| $read:expr),* $(,)?) => {$(
        #[allow(clippy::cast_precision_loss)]
        impl InPlace for $ty {
            fn decode_new<'i>(v: Value<'_, 'i>, _: &mut Scratch<'i>) -> Result<Self> {
                match v.nodes.first() {
                    Some(Node::Static($node)) => $read.ok_or(Mismatch),
                    _ => Err(Mismatch),
                }
            }
        }
    )*};
}

scalar_in_place!(
    bool => |node| match node {
        StaticNode::Bool(b) => Some(*b),
        _ => None,
    },
    i32 => |node| node.as_i32(),
    i64 => |node| node.as_i64(),
    // Integers converted as the driver converts them.
    f64 => |node| match *node {
        StaticNode::F64(n) => Some(n),
        StaticNode::I64(n) => Some(n as f64),
        StaticNode::U64(n) => Some(n as f64),
        _ => None,
    },
);

/// Decodes a document into a type-erased root object of type `T`, or, registered as
/// `Option<T>`'s, into a new `T` it puts in the `Option`.
pub type RootFn = for<'t, 'i> fn(&mut dyn Any, Value<'t, 'i>, &mut Scratch<'i>) -> Result;

/// The root types with in-place decoding, by type: the built-in ones of the enabled
/// version (none at a version without decoders), each also as `Option<T>`, the target of a
/// new object built by the walk (a lean object is built by its `Deserialize`, which writes
/// its body from the tape without copying the nodes).
fn roots() -> &'static HashMap<TypeId, RootFn> {
    static ROOTS: OnceLock<HashMap<TypeId, RootFn>> = OnceLock::new();
    ROOTS.get_or_init(|| {
        let mut roots: HashMap<TypeId, RootFn> = HashMap::new();
        super::builtin_roots(&mut |id, f| {
            roots.insert(id, f);
        });
        roots
    })
}

/// The in-place decoder of a root type (see [`root_of`]).
#[derive(Clone, Copy)]
pub(crate) struct Root(RootFn);

/// The in-place decoder of `K`, when objects of type `K` can be decoded in place; for
/// `Option<T>`, the decoder that builds a new `T` into it.
pub(crate) fn root_of<K: 'static>() -> Option<Root> {
    roots().get(&TypeId::of::<K>()).copied().map(Root)
}

/// [`RootFn`] of `T`.
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

/// [`RootFn`] of a new `T`: the target is an `Option<T>`, made `Some` with the object the
/// document holds, decoded into `T`'s default ([`InPlace::decode_new`]).
pub(crate) fn new_root<'i, T: InPlace + 'static>(
    target: &mut dyn Any,
    v: Value<'_, 'i>,
    cx: &mut Scratch<'i>,
) -> Result {
    let new = target.downcast_mut::<Option<T>>().ok_or(Mismatch)?;
    *new = Some(T::decode_new(v, cx)?);
    Ok(())
}

/// The in-place decoders of resource type `K`: the first decodes into a `K`, the second,
/// when `K` has one, builds a new `K` into an `Option<K>` (a lean object has none: its
/// `Deserialize` builds it). They are `K`'s built-in ones (see [`root_of`]), else those
/// its `HasMetadata::__in_place` hook gives (a generated or derived custom resource,
/// `custom_in_place!`, or the lean form of one).
pub(crate) fn resource_roots<K: kinform_core::HasMetadata>() -> Option<(Root, Option<Root>)> {
    if let Some(into) = root_of::<K>() {
        return Some((into, root_of::<Option<K>>()));
    }
    let custom = K::__in_place()?.downcast_ref::<super::custom::CustomRoots>()?;
    let of = TypeId::of::<K>();
    if of == (custom.of)() {
        Some((Root(custom.into), Some(Root(custom.new))))
    } else if of == (custom.lean_of)() {
        Some((Root(custom.lean?), None))
    } else {
        None
    }
}

impl Root {
    /// Makes `target` (of the root's type) the object the document on `tape` holds, as its
    /// `Deserialize` would build it; `false` when the document is not what it expects
    /// (`target` is then partly written and must be dropped).
    pub(crate) fn decode<'i>(
        self,
        target: &mut dyn Any,
        tape: &[Node<'i>],
        source: Source<'i>,
        current: Option<Current<'i>>,
        scratch: Tape<'i>,
    ) -> (bool, Tape<'i>) {
        let mut cx = Scratch {
            tape: scratch,
            source,
            current,
        };
        let ok = Value::root(tape)
            .and_then(|v| (self.0)(target, v, &mut cx))
            .is_ok();
        (ok, cx.tape)
    }
}
