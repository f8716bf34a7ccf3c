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
//! (`JsonCopy` in kinform-core), not through that driver: the driver needs the member's
//! nodes copied into a tape of its own, and a call through serde per value. In a profile of
//! a lean burst, the driver and `JsonCopy`'s visits took 6.4% of the client's samples, and
//! `memmove` (the copy of nodes among others) 6.8% (BENCHMARKS.md, "Why each trick").

use kinform_core::Lean;
use kinform_core::lean::JsonWriter;
use simd_json::{Node, StaticNode};

use super::values::{Members, fresh};
use super::{InPlace, Mismatch, Result, Scratch, Value};

impl<K: 'static> InPlace for Lean<K> {
    fn decode_in_place<'i>(&mut self, v: Value<'_, 'i>, cx: &mut Scratch<'i>) -> Result {
        let members = v.members()?;
        if self.refill(|r| fill(r, members, cx).is_ok()) {
            Ok(())
        } else {
            Err(Mismatch)
        }
    }

    fn decode_new<'i>(v: Value<'_, 'i>, cx: &mut Scratch<'i>) -> Result<Self> {
        fresh(v, cx)
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
