//! The lean cache's object: [`Lean<K>`], an object of type `K` kept as its decoded
//! `metadata` and the rest of its JSON, decoded into `K` only when asked.
//!
//! An informer caches objects for the life of a process, and most handlers and listers only
//! read their keys, labels, owners or deletion state. `Lean<K>` is the cached form that pays
//! for those alone (issue #20). Opt in per informer by naming the type,
//! `factory.informer::<Lean<Pod>>()` instead of `factory.informer::<Pod>()`, or for a
//! resource known at run time with `factory.dynamic_lean_informer(&resource)`, which caches
//! `Lean<DynamicObject>`. The informer, its store, indexes, label selectors, handlers and
//! listers are the same code: `Lean<K>` is a [`Resource`] with `K`'s group, version, kind
//! and scope, and a [`HasMetadata`] whose `metadata()` is the object's `ObjectMeta`, decoded
//! exactly (minus `managedFields` when the informer's transform drops them, as for `K`).
//!
//! ```
//! use k8s_openapi::api::core::v1::Pod;
//! use kinform_core::{HasMetadata, Lean};
//!
//! let json = r#"{"apiVersion":"v1","kind":"Pod",
//!     "metadata":{"name":"web-0","namespace":"prod","labels":{"app":"web"}},
//!     "spec":{"nodeName":"node-7","containers":[{"name":"app","image":"nginx:1.27"}]}}"#;
//! let lean: Lean<Pod> = serde_json::from_str(json)?;
//! // Metadata without decoding the body:
//! assert_eq!(lean.labels()["app"], "web");
//! // A borrowed view of the body: one field, no `Pod` built.
//! #[derive(serde::Deserialize)]
//! struct NodeOf<'a> {
//!     #[serde(borrow)]
//!     spec: Spec<'a>,
//! }
//! #[derive(serde::Deserialize)]
//! struct Spec<'a> {
//!     #[serde(rename = "nodeName")]
//!     node_name: Option<&'a str>,
//! }
//! assert_eq!(lean.view::<NodeOf<'_>>()?.spec.node_name, Some("node-7"));
//! // The whole object, when needed: the same `Pod` as decoding the JSON directly.
//! let pod: Pod = lean.decode()?;
//! assert_eq!(pod, serde_json::from_str::<Pod>(json)?);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Exactness
//!
//! `decode` answers the `K` that decoding the received JSON would give (tested on every
//! example of the corpus and on generated objects). The body is every member of the object
//! but `metadata`, in order, copied value for value (see `json_copy`), and `K`'s
//! `Deserialize` reads it with the `metadata` written back in the same JSON form (an object,
//! `null`, or absent). Nothing is converted field by field, so no conversion can drop or
//! rewrite a value.
//!
//! The body is *not validated as a `K`* when the lean object is built: a member that `K`
//! would refuse (a wrong type deep in `spec`) is reported by `decode`, naming the object,
//! instead of by the list or watch that received it. `metadata` is validated at once. A
//! transform given to a lean informer changes the cached `Lean<K>` (usually its metadata);
//! [`Lean::modify`] changes the body through `K`.
//!
//! # Why JSON text
//!
//! - **Memory.** JSON text is the compact form of an object, one heap block, where a decoded
//!   `K` holds one block per `String`, `Vec`, map node and `Option`. A compact struct
//!   generated per type would still hold one block per string and per container, and
//!   interning shares only the strings that repeat across objects. Figures: BENCHMARKS.md,
//!   "Lean cache".
//! - **Every type at once.** Built-ins, generated CRD types, derived types and
//!   `DynamicObject` are covered by one generic type, with no generated code to compile and
//!   no conversions to prove lossless per type.
//! - **CPU.** Building a `Lean<K>` decodes only the metadata and copies the other members'
//!   text into one buffer, with no allocation per value. A watch event that replaces a cached
//!   object is decoded into it (kinform-client's in-place decoding, through
//!   [`Lean::refill`]): the metadata into its `ObjectMeta`, and a body whose text is byte for
//!   byte the cached one is not written again but shared (an `Arc<str>`). That holds for
//!   the built-in kinds, `DynamicObject` and every custom resource type with in-place
//!   decoders (kinform-gen's and the derive's, whose `HasMetadata::__in_place` the lean
//!   form forwards).
//! - **Metadata decoded.** The store computes keys and indexes from `HasMetadata`, and
//!   handlers most often filter on metadata (owners, deletion timestamp, generation,
//!   annotations), so `metadata` is kept as the k8s-openapi `ObjectMeta`: every existing
//!   index function, selector and handler works unchanged and reads it at no cost.
//!
//! What it costs: reading a field outside `metadata` decodes it ([`Lean::view`] decodes only
//! the fields a view type names, borrowing strings; [`Lean::decode`] the whole object). A
//! controller whose handlers decode every object on every event spends more CPU than with
//! the default cache; one that reads the bodies of the few objects it reconciles spends less.

mod json_copy;

use std::cell::RefCell;
use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::de::{self, DeserializeOwned, DeserializeSeed, Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize, Serializer};

use crate::resource::{HasMetadata, Resource, Scope};
use json_copy::JsonCopy;
#[doc(hidden)]
pub use json_copy::JsonWriter;

/// An object of type `K` kept as its decoded `metadata` and the JSON text of its other
/// members (see the [module docs](self)). Decoded into `K` with [`decode`](Self::decode),
/// read in part with [`view`](Self::view).
pub struct Lean<K> {
    metadata: ObjectMeta,
    /// Every member but `metadata`, in the received order, as one compact JSON object;
    /// shared with the object's next state when a change leaves it as it was.
    body: Arc<str>,
    /// How `metadata` was written, so that `K` decodes the same document.
    form: MetaForm,
    _kind: PhantomData<fn() -> K>,
}

/// How an object wrote its `metadata` member.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum MetaForm {
    Object,
    Null,
    Absent,
}

/// A lean object could not be turned into `K`, or `K` into JSON.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LeanError {
    /// The cached JSON is not a valid `K` (see the module docs: the body is validated when
    /// decoded).
    #[error("decoding the cached {kind} {key}: {source}")]
    Decode {
        /// The type's name.
        kind: &'static str,
        /// The object's `namespace/name`.
        key: String,
        /// `serde_json`'s error, with the line and column in the body.
        source: serde_json::Error,
    },
    /// The object could not be written as JSON.
    #[error("encoding a {kind} as JSON: {source}")]
    Encode {
        /// The type's name.
        kind: &'static str,
        /// `serde_json`'s error.
        source: serde_json::Error,
    },
}

impl<K> Lean<K> {
    /// The JSON text of every member but `metadata` (`{"apiVersion":…,"spec":…}`), compact,
    /// in the order the object was received.
    pub fn body_json(&self) -> &str {
        &self.body
    }

    /// Reads the members of the body that `V` names, borrowing strings from the body where
    /// `V` borrows (`&str` fields need `#[serde(borrow)]` on the enclosing struct field and
    /// fail on strings with escapes; `Cow<str>` borrows when it can). `metadata` is not in
    /// the body: read it with [`HasMetadata`].
    pub fn view<'a, V: Deserialize<'a>>(&'a self) -> Result<V, LeanError> {
        serde_json::from_str(&self.body).map_err(|source| self.decode_error(source))
    }

    fn decode_error(&self, source: serde_json::Error) -> LeanError {
        LeanError::Decode {
            kind: short_type_name::<K>(),
            key: crate::resource::object_key(self.metadata.namespace.as_deref(), self.name()),
            source,
        }
    }

    fn name(&self) -> &str {
        self.metadata.name.as_deref().unwrap_or("")
    }
}

impl<K: HasMetadata + DeserializeOwned> Lean<K> {
    /// The whole object, decoded by `K`'s `Deserialize` from the body with the cached
    /// `metadata`: the `K` that decoding the received JSON gives (with the informer's
    /// transform applied to the metadata).
    pub fn decode(&self) -> Result<K, LeanError> {
        let mut obj: K = with_scratch(|doc| {
            doc.push(b'{');
            match self.form {
                MetaForm::Object => doc.extend_from_slice(b"\"metadata\":{}"),
                MetaForm::Null => doc.extend_from_slice(b"\"metadata\":null"),
                MetaForm::Absent => {}
            }
            let members = &self.body.as_bytes()[1..];
            if self.form != MetaForm::Absent && members != b"}" {
                doc.push(b',');
            }
            doc.extend_from_slice(members);
            serde_json::from_slice(doc)
        })
        .map_err(|source| self.decode_error(source))?;
        *obj.metadata_mut() = self.metadata.clone();
        Ok(obj)
    }

    /// Changes the object through `K`: decodes it, runs `f`, and keeps the result (for a
    /// transform that rewrites the body; one that only touches metadata needs none of it).
    pub fn modify(&mut self, f: impl FnOnce(&mut K)) -> Result<(), LeanError>
    where
        K: Serialize,
    {
        let mut obj = self.decode()?;
        f(&mut obj);
        *self = Self::from_object(&obj)?;
        Ok(())
    }
}

impl<K: HasMetadata + Serialize> Lean<K> {
    /// The lean form of `obj`: `decode` gives back an equal `K`.
    pub fn from_object(obj: &K) -> Result<Self, LeanError> {
        let json = serde_json::to_vec(obj).map_err(|source| LeanError::Encode {
            kind: short_type_name::<K>(),
            source,
        })?;
        let mut lean: Self = serde_json::from_slice(&json).map_err(|source| LeanError::Decode {
            kind: short_type_name::<K>(),
            key: obj.key(),
            source,
        })?;
        // The metadata as `obj` holds it, not as its JSON reads back.
        lean.metadata = obj.metadata().clone();
        Ok(lean)
    }
}

impl<K> Lean<K> {
    /// Makes this object the one a document's members describe, member by member, in the
    /// memory it holds: `fill` is given a [`Refill`] and reports each member of the
    /// document, in order. `Deserialize` builds every lean object this way, from an empty
    /// one; the body's buffer is kept when its text is unchanged. For the in-place decoding
    /// of watch events (kinform-client's `decode/in_place`), not for users.
    ///
    /// `false` when `fill` returns `false` (or the text is not UTF-8, which a [`Refill`]
    /// does not write): the object is then partly written and must be dropped.
    #[doc(hidden)]
    #[must_use]
    pub fn refill(&mut self, fill: impl FnOnce(&mut Refill<'_>) -> bool) -> bool {
        with_scratch(|body| {
            body.push(b'{');
            let mut refill = Refill {
                metadata: &mut self.metadata,
                form: MetaForm::Absent,
                body,
            };
            if !fill(&mut refill) {
                return false;
            }
            let form = refill.form;
            body.push(b'}');
            if self.body.as_bytes() != body.as_slice() {
                let Ok(text) = std::str::from_utf8(body) else {
                    return false;
                };
                self.body = text.into();
            }
            if form != MetaForm::Object {
                self.metadata = ObjectMeta::default();
            }
            self.form = form;
            true
        })
    }
}

impl<K> Lean<K> {
    /// Makes this object the one a document describes whose members other than `metadata`
    /// are, as text, exactly the body of `body_of` (this object or another), and whose
    /// `metadata` is an object: `decode` decodes that object into the `ObjectMeta` (holding
    /// what this object had), and the body is `body_of`'s, shared. For the in-place decoding
    /// of watch events, which checks the text (kinform-client's `decode/in_place`), not for
    /// users.
    ///
    /// `false` when `decode` returns `false`: the object is then partly written and must be
    /// dropped.
    #[doc(hidden)]
    #[must_use]
    pub fn refill_metadata(
        &mut self,
        body_of: Option<&Self>,
        decode: impl FnOnce(&mut ObjectMeta) -> bool,
    ) -> bool {
        if let Some(other) = body_of {
            self.body = Arc::clone(&other.body);
        }
        if self.form != MetaForm::Object {
            self.metadata = ObjectMeta::default();
        }
        self.form = MetaForm::Object;
        decode(&mut self.metadata)
    }
}

/// A lean object being rebuilt from a document's members (see [`Lean::refill`]).
#[doc(hidden)]
pub struct Refill<'a> {
    metadata: &'a mut ObjectMeta,
    form: MetaForm,
    body: &'a mut Vec<u8>,
}

impl Refill<'_> {
    /// The document's `metadata` member is an object: the `ObjectMeta` to decode it into
    /// (holding what the object had). `None` when the document already had a `metadata`
    /// member (`Deserialize` refuses the document).
    pub fn metadata_object(&mut self) -> Option<&mut ObjectMeta> {
        self.set_form(MetaForm::Object)
            .then_some(&mut *self.metadata)
    }

    /// The document's `metadata` member is `null`; `false` when it already had one.
    pub fn metadata_null(&mut self) -> bool {
        self.set_form(MetaForm::Null)
    }

    fn set_form(&mut self, form: MetaForm) -> bool {
        let first = self.form == MetaForm::Absent;
        self.form = form;
        first
    }

    /// Another member (`key` is not `metadata`), whose value `write` writes through the
    /// [`JsonWriter`] (exactly one value, as the lean type's `Deserialize` writes what its
    /// deserializer reports); `write`'s answer is returned.
    pub fn member<R>(&mut self, key: &str, write: impl FnOnce(&mut JsonWriter<'_>) -> R) -> R {
        let mut w = JsonWriter(self.body);
        w.key(key);
        write(&mut w)
    }
}

/// The last segment of `K`'s type name (`Pod`), for errors.
fn short_type_name<K>() -> &'static str {
    let full = std::any::type_name::<K>();
    let base = full.split('<').next().unwrap_or(full);
    base.rsplit("::").next().unwrap_or(base)
}

thread_local! {
    /// The buffer a lean object's JSON is assembled in before it is copied out at its exact
    /// size (one allocation per object, none for growth).
    static SCRATCH: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Runs `f` with an empty buffer, reusing this thread's unless it is in use (a lean object
/// nested in another's decoding).
fn with_scratch<R>(f: impl FnOnce(&mut Vec<u8>) -> R) -> R {
    let mut buf = SCRATCH
        .with(|s| s.try_borrow_mut().map(|mut b| std::mem::take(&mut *b)))
        .unwrap_or_default();
    buf.clear();
    let r = f(&mut buf);
    // Keep a buffer of a usual object's size, not the largest one ever seen.
    if buf.capacity() <= 1 << 20 {
        SCRATCH.with(|s| {
            if let Ok(mut b) = s.try_borrow_mut() {
                *b = buf;
            }
        });
    }
    r
}

impl<K: HasMetadata> HasMetadata for Lean<K> {
    fn metadata(&self) -> &ObjectMeta {
        &self.metadata
    }
    fn metadata_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
    /// `K`'s: the in-place decoders of a custom resource include its lean form's.
    fn __in_place() -> Option<&'static (dyn std::any::Any + Send + Sync)> {
        K::__in_place()
    }
}

impl<K: Resource> Resource for Lean<K> {
    const GROUP: &'static str = K::GROUP;
    const VERSION: &'static str = K::VERSION;
    const API_VERSION: &'static str = K::API_VERSION;
    const KIND: &'static str = K::KIND;
    const PLURAL: &'static str = K::PLURAL;
    const SCOPE: Scope = K::SCOPE;
}

impl<K> Clone for Lean<K> {
    fn clone(&self) -> Self {
        Self {
            metadata: self.metadata.clone(),
            body: self.body.clone(),
            form: self.form,
            _kind: PhantomData,
        }
    }
}

/// Equal metadata and equal body text: the same object as received (two equal `K`s
/// received as differently ordered JSON are not equal lean objects; compare their
/// `decode`s).
impl<K> PartialEq for Lean<K> {
    fn eq(&self, other: &Self) -> bool {
        self.metadata == other.metadata && self.body == other.body && self.form == other.form
    }
}

impl<K> fmt::Debug for Lean<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Lean")
            .field("kind", &short_type_name::<K>())
            .field("metadata", &self.metadata)
            .field("body", &self.body)
            .finish()
    }
}

/// Serializes as `K` does (the object is decoded first): the JSON of the lean object is the
/// JSON of its `K`.
impl<K: HasMetadata + Serialize + DeserializeOwned> Serialize for Lean<K> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.decode()
            .map_err(serde::ser::Error::custom)?
            .serialize(serializer)
    }
}

impl<'de, K> Deserialize<'de> for Lean<K> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(LeanVisitor::<K>(PhantomData))
    }
}

struct LeanVisitor<K>(PhantomData<fn() -> K>);

impl<'de, K> Visitor<'de> for LeanVisitor<K> {
    type Value = Lean<K>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a {} object", short_type_name::<K>())
    }

    /// The members are reported to [`Lean::refill`] of an empty object, as the in-place
    /// decoding reports them from a tape: one way to build a lean object from members.
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Lean<K>, A::Error> {
        let mut lean = Lean {
            metadata: ObjectMeta::default(),
            body: Arc::from(""),
            form: MetaForm::Absent,
            _kind: PhantomData,
        };
        let mut failed = None;
        let filled = lean.refill(|refill| match refill.members_of(&mut map) {
            Ok(()) => true,
            Err(e) => {
                failed = Some(e);
                false
            }
        });
        match failed {
            Some(e) => Err(e),
            None if filled => Ok(lean),
            None => Err(de::Error::custom("the object's text is not UTF-8")),
        }
    }
}

impl Refill<'_> {
    /// Reports every member of `map`, keys written to the body as they are read.
    fn members_of<'de, A: MapAccess<'de>>(&mut self, map: &mut A) -> Result<(), A::Error> {
        while let Some(member) = map.next_key_seed(MemberKey(self.body))? {
            match member {
                Member::Metadata => {
                    let first = match map.next_value::<Option<ObjectMeta>>()? {
                        Some(metadata) => self.metadata_object().map(|m| *m = metadata).is_some(),
                        None => self.metadata_null(),
                    };
                    if !first {
                        return Err(de::Error::duplicate_field("metadata"));
                    }
                }
                Member::Other => map.next_value_seed(JsonCopy(self.body))?,
            }
        }
        Ok(())
    }
}

/// A member's key: `metadata`, or another one, written to the body (with the comma before
/// it and the colon after it).
enum Member {
    Metadata,
    Other,
}

struct MemberKey<'b>(&'b mut Vec<u8>);

impl<'de> DeserializeSeed<'de> for MemberKey<'_> {
    type Value = Member;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Member, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for MemberKey<'_> {
    type Value = Member;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a member name")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Member, E> {
        if v == "metadata" {
            return Ok(Member::Metadata);
        }
        JsonWriter(self.0).key(v);
        Ok(Member::Other)
    }
}

#[cfg(test)]
mod tests;
