//! The lean cache's objects decoded in place: a `Lean<K>`'s `metadata` is decoded into its
//! `ObjectMeta` as any k8s-openapi struct is, and the other members are copied as JSON text
//! into the body, whose buffer is kept when the text is unchanged (as for a change of
//! labels, the body being everything but `metadata`). The result is the `Lean<K>` that its
//! `Deserialize` builds from the same tape (`Lean::refill` follows its rules: one
//! `metadata` member at most, `null` or absent giving the default); the body does not
//! depend on `K`, so every lean type registered as a root is decoded so.

use kinform_core::Lean;

use super::values::{Members, fresh, read};
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
            read(value, cx, |de| r.member(key, de))?;
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
