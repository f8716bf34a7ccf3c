//! The lean cache's objects decoded in place: a `Lean<K>`'s `metadata` is decoded into its
//! `ObjectMeta` as any k8s-openapi struct is, and the other members are written as JSON
//! text into the body, whose buffer is kept when the text is unchanged (as for a change of
//! labels, the body being everything but `metadata`). The result is the `Lean<K>` that its
//! `Deserialize` builds from the same tape (`Lean::refill` follows its rules: one
//! `metadata` member at most, `null` or absent giving the default); the body does not
//! depend on `K`, so every lean type registered as a root is decoded so.
//!
//! The body's text is written from the tape's nodes directly ([`write_json`]), with the
//! calls the lean type's own decoding makes for what simd-json's serde driver reports
//! (`JsonCopy` in kinform-core), not through that driver, which needs the member's nodes
//! copied into a tape of its own and a call through serde per value.
//!
//! Most events of a burst change the metadata alone (labels, annotations, the
//! `resourceVersion`), so before writing anything the decoder compares the document's text
//! around `metadata` ([`Received`]) with the body of the object cached under the same key
//! (the reflector's `ListHints::current`; the object decoded into is another one the cache
//! let go of, see `reclaim`), then with its own: when they are the same bytes, only
//! `metadata` is decoded, the body is shared with that object, and the other members are
//! neither walked nor written (why: `docs/performance.md`, "Lean cache and shared lean
//! bodies").

use kinform_core::lean::JsonWriter;
use kinform_core::{Lean, ObjectKey};
use simd_json::{Node, StaticNode};

use super::values::{Members, fresh};
use super::{InPlace, Mismatch, Result, Scratch, Source, Value};

impl<K: 'static> InPlace for Lean<K> {
    fn decode_in_place<'i>(&mut self, v: Value<'_, 'i>, cx: &mut Scratch<'i>) -> Result {
        let members = v.members()?;
        if let Some(received) = Received::of(members.clone(), cx.source) {
            // The body of the object cached under the same key (the state this event
            // changes, or an earlier one), else this object's own.
            let cached = cx
                .current
                .zip(key_of(received.metadata))
                .and_then(|(current, key)| current(key));
            let cached = cached.as_deref().and_then(|c| c.downcast_ref::<Self>());
            let body_of = match cached {
                Some(c) if received.is(c.body_json()) => Some(Some(c)),
                _ if received.is(self.body_json()) => Some(None),
                _ => None,
            };
            if let Some(body_of) = body_of {
                return refilled(self.refill_metadata(body_of, |m| {
                    m.decode_in_place(received.metadata, cx).is_ok()
                }));
            }
        }
        refilled(self.refill(|r| fill(r, members, cx).is_ok()))
    }

    fn decode_new<'i>(v: Value<'_, 'i>, cx: &mut Scratch<'i>) -> Result<Self> {
        fresh(v, cx)
    }
}

fn refilled(done: bool) -> Result {
    if done { Ok(()) } else { Err(Mismatch) }
}

/// The `namespace/name` key in a `metadata` object, when its name is a string.
fn key_of<'i>(metadata: Value<'_, 'i>) -> Option<ObjectKey<'i>> {
    let (mut name, mut namespace) = (None, None);
    for member in metadata.members().ok()? {
        match member.ok()? {
            ("name", v) => name = Some(v.str().ok()?),
            ("namespace", v) => namespace = Some(v.str().ok()?),
            _ => {}
        }
    }
    Some(ObjectKey::new(namespace, name?))
}

/// A document's text around its `metadata` member, which is an object and the only one:
/// the members before it (from the object's `{` to the quote of the `metadata` key, without
/// the comma) and after it (from the comma before the next key, or the object's `}`, to the
/// end), cut at the offsets of the tape's keys ([`Source`]).
///
/// When these are exactly a lean object's body (`{"apiVersion":…}`), the document's body is
/// that body: a body is the text the lean type writes for some values, which reads back as
/// those values and is written again as the same text, so the received members, being that
/// text, are those values. Whitespace, other escapes or another number form than the lean
/// type writes compare unequal, and the body is written from the tape as any changed body.
struct Received<'t, 'i> {
    metadata: Value<'t, 'i>,
    before: &'i [u8],
    after: &'i [u8],
}

impl<'t, 'i> Received<'t, 'i> {
    fn of(members: Members<'t, 'i>, source: Source<'i>) -> Option<Self> {
        let text = source.text();
        let mut metadata = None;
        let mut next_comma = None;
        let mut previous_is_metadata = false;
        for member in members {
            let (key, value) = member.ok()?;
            if previous_is_metadata {
                // The comma and the quote before the next key.
                let comma = source.offset_of(key)?.checked_sub(2)?;
                (text.get(comma..comma + 2) == Some(&b",\""[..])).then_some(())?;
                next_comma = Some(comma);
            }
            previous_is_metadata = key == "metadata";
            if previous_is_metadata {
                if metadata.is_some() || !matches!(value.node(), Ok(Node::Object { .. })) {
                    return None;
                }
                let quote = source.offset_of(key)?.checked_sub(1)?;
                (text.get(quote..quote + 10) == Some(&b"\"metadata\""[..])).then_some(())?;
                metadata = Some((value, quote));
            }
        }
        let (metadata, quote) = metadata?;
        let open = text.iter().position(|b| !b.is_ascii_whitespace())?;
        let close = text.iter().rposition(|b| !b.is_ascii_whitespace())?;
        (text[open] == b'{' && text[close] == b'}').then_some(())?;
        let before = match text.get(open + 1..quote)? {
            [] => &[][..],
            [members @ .., b','] => members,
            _ => return None,
        };
        let after = match next_comma {
            // Without the comma when nothing comes before.
            Some(comma) => text.get(comma + usize::from(before.is_empty())..=close)?,
            None => &text[close..=close],
        };
        Some(Self {
            metadata,
            before,
            after,
        })
    }

    /// Whether the members other than `metadata` are, as received, exactly `body`.
    fn is(&self, body: &str) -> bool {
        body.as_bytes()
            .strip_prefix(b"{")
            .and_then(|rest| rest.strip_prefix(self.before))
            .is_some_and(|rest| rest == self.after)
    }
}

/// Reports each member of the document to the refill, decoding `metadata` in place.
fn fill<'i>(
    r: &mut kinform_core::lean::Refill<'_>,
    members: Members<'_, 'i>,
    cx: &mut Scratch<'i>,
) -> Result {
    for member in members {
        let (key, value) = member?;
        if key != "metadata" {
            r.member(key, |w| write_json(value, w))?;
        } else if value.is_null() {
            if !r.metadata_null() {
                return Err(Mismatch);
            }
        } else {
            r.metadata_object()
                .ok_or(Mismatch)?
                .decode_in_place(value, cx)?;
        }
    }
    Ok(())
}

/// Writes `v` as the lean type's decoding writes what simd-json's serde driver reports for
/// it (`deserialize_any`: a string as `visit_borrowed_str`, an `I64` node as `visit_i64`,
/// ...); a [`Mismatch`] where that decoding fails (a float JSON cannot write).
fn write_json(v: Value<'_, '_>, w: &mut JsonWriter<'_>) -> Result {
    match v.node()? {
        Node::String(s) => w.str(s),
        Node::Static(StaticNode::Null) => w.null(),
        Node::Static(StaticNode::Bool(b)) => w.bool(*b),
        Node::Static(StaticNode::I64(n)) => w.i64(*n),
        Node::Static(StaticNode::U64(n)) => w.u64(*n),
        Node::Static(StaticNode::F64(n)) => {
            if !w.f64(*n) {
                return Err(Mismatch);
            }
        }
        Node::Object { .. } => {
            w.begin_object();
            for member in v.members()? {
                let (key, value) = member?;
                w.key(key);
                write_json(value, w)?;
            }
            w.end_object();
        }
        Node::Array { .. } => {
            w.begin_array();
            for element in v.elements()? {
                w.element();
                write_json(element?, w)?;
            }
            w.end_array();
        }
        // Nodes of simd-json's optional 128-bit integers: left to the ordinary path.
        #[allow(unreachable_patterns)]
        _ => return Err(Mismatch),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use simd_json::{Buffers, Tape};

    use super::{Received, Source, Value};

    /// Whether `doc`'s members other than `metadata` are, as received, the lean body `body`.
    fn as_received(doc: &str, body: &str) -> bool {
        let mut copy = doc.as_bytes().to_vec();
        copy.resize(doc.len() + simd_json::INPUT_PADDING, 0);
        let source = Source::new(doc.as_bytes(), &copy);
        let mut tape = Tape(Vec::new());
        simd_json::fill_tape_padded(&mut copy, doc.len(), &mut Buffers::default(), &mut tape)
            .expect("JSON");
        let members = Value::root(&tape.0)
            .and_then(Value::members)
            .expect("an object");
        Received::of(members, source).is_some_and(|r| r.is(body))
    }

    #[test]
    fn the_body_is_taken_as_received_only_when_its_text_is_the_body() {
        let body = r#"{"kind":"Pod","spec":{"n":1}}"#;
        for doc in [
            r#"{"metadata":{"name":"a"},"kind":"Pod","spec":{"n":1}}"#,
            r#"{"kind":"Pod","metadata":{"name":"a"},"spec":{"n":1}}"#,
            r#"{"kind":"Pod","spec":{"n":1},"metadata":{"name":"\"a\""}}"#,
            // Whitespace around `metadata`'s value is not in the body.
            r#"{"kind":"Pod","metadata": { } ,"spec":{"n":1}}"#,
            " {\"kind\":\"Pod\",\"spec\":{\"n\":1},\"metadata\": { } }\n",
        ] {
            assert!(as_received(doc, body), "{doc}");
        }
        assert!(as_received(r#"{"metadata":{}}"#, "{}"));
        for doc in [
            // Other values, or the same values in another text.
            r#"{"kind":"Pod","metadata":{},"spec":{"n":2}}"#,
            r#"{"kind":"Pod","metadata":{},"spec":{"n":1},"status":{}}"#,
            r#"{"kind":"Pod","metadata":{},"spec":{"n":1.0}}"#,
            r#"{"kind":"Pod", "metadata":{},"spec":{"n":1}}"#,
            r#"{"kind":"P\u006fd","metadata":{},"spec":{"n":1}}"#,
            // `metadata` absent, `null`, twice, or its key escaped.
            r#"{"kind":"Pod","spec":{"n":1}}"#,
            r#"{"kind":"Pod","metadata":null,"spec":{"n":1}}"#,
            r#"{"kind":"Pod","metadata":{},"spec":{"n":1},"metadata":{}}"#,
            r#"{"kind":"Pod","m\u0065tadata":{},"spec":{"n":1}}"#,
        ] {
            assert!(!as_received(doc, body), "{doc}");
        }
        // simd-json unescapes a string in its copy of the text, over the escape: the copy
        // then reads `"Au0041"`, the text as received `"\u0041"` ("A").
        assert!(!as_received(
            r#"{"metadata":{},"data":{"a":"\u0041"}}"#,
            r#"{"data":{"a":"Au0041"}}"#
        ));
        assert!(as_received(
            r#"{"metadata":{},"data":{"a":"Au0041"}}"#,
            r#"{"data":{"a":"Au0041"}}"#
        ));
    }
}
