//! A structural JSON scanner for list responses: where each list item's bytes are, and what
//! an item's `metadata` says, without decoding the items.
//!
//! Why: a Kubernetes LIST answer (`{"kind":..,"metadata":{..},"items":[..]}`) is decoded
//! much faster when its items are cut into byte ranges first: the ranges can be decoded on
//! several threads, an item whose `namespace`/`name`/`resourceVersion` match the cached
//! object need not be decoded at all (an object's resourceVersion identifies its state, the
//! rule client-go's informers rely on to tell resyncs from updates).
//!
//! The scanner is strict about the structure it walks (objects, arrays, strings, commas,
//! colons and whitespace) and leaves every scalar and every item to the decoder (simd-json,
//! then `serde_json`), which validates them when it decodes them. Any disagreement ends in a
//! [`ScanError`]; the caller then decodes the whole body with `serde_json` to report
//! serde_json's own error. Strings are skipped with `memchr` (quotes and backslashes; short
//! ones byte by byte), so a scan costs a fraction of a decode.

use std::ops::Range;

/// The body is not the JSON the scanner expects.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("malformed JSON at byte {at}: {what}")]
pub(crate) struct ScanError {
    /// Byte offset of the problem.
    pub at: usize,
    /// What was expected.
    pub what: &'static str,
}

fn err<T>(at: usize, what: &'static str) -> Result<T, ScanError> {
    Err(ScanError { at, what })
}

/// Index of the first non-whitespace byte at or after `i`.
pub(crate) fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while let Some(c) = b.get(i) {
        if !matches!(c, b' ' | b'\t' | b'\n' | b'\r') {
            break;
        }
        i += 1;
    }
    i
}

/// Bytes of a string looked at one by one before [`skip_string`] searches with `memchr`.
const SHORT_STRING: usize = 24;

/// `b[i]` is `"`: the index after the closing quote, and whether the string has escapes.
pub(crate) fn skip_string(b: &[u8], i: usize) -> Result<(usize, bool), ScanError> {
    let mut j = i + 1;
    // Most strings of an object (keys, names, short values) end within a few bytes: looking
    // at those directly is cheaper than starting a SIMD search for each of them.
    for (k, &c) in b.iter().enumerate().skip(j).take(SHORT_STRING) {
        match c {
            b'"' => return Ok((k + 1, false)),
            b'\\' => break,
            _ => j = k + 1,
        }
    }
    let mut escaped = false;
    loop {
        let Some(k) = memchr::memchr2(b'"', b'\\', &b[j.min(b.len())..]) else {
            return err(i, "an unterminated string");
        };
        let k = j + k;
        if b[k] == b'"' {
            return Ok((k + 1, escaped));
        }
        escaped = true;
        // A backslash escapes the next byte (a `\uXXXX` is validated by serde_json).
        j = k + 2;
        if j > b.len() {
            return err(i, "an unterminated string");
        }
    }
}

/// Index after the scalar (number, `true`, `false`, `null`) starting at `i`; its content is
/// left to serde_json.
fn skip_scalar(b: &[u8], i: usize) -> Result<usize, ScanError> {
    let mut j = i;
    while let Some(c) = b.get(j) {
        if matches!(
            c,
            b',' | b']' | b'}' | b':' | b' ' | b'\t' | b'\n' | b'\r' | b'"' | b'[' | b'{'
        ) {
            break;
        }
        j += 1;
    }
    if j == i {
        return err(i, "a value");
    }
    Ok(j)
}

/// Index after the JSON value starting at `i` (no leading whitespace).
pub(crate) fn skip_value(b: &[u8], i: usize) -> Result<usize, ScanError> {
    match b.get(i) {
        Some(b'"') => Ok(skip_string(b, i)?.0),
        Some(b'{' | b'[') => skip_container(b, i),
        Some(_) => skip_scalar(b, i),
        None => err(i, "a value"),
    }
}

/// Index after the object or array starting at `i`, checking the nesting and that members,
/// elements, commas and colons alternate as JSON requires.
fn skip_container(b: &[u8], i: usize) -> Result<usize, ScanError> {
    // One entry per open container: `true` for an object.
    let mut stack: Vec<bool> = Vec::with_capacity(16);
    let mut j = i;
    // What may come next: a value (or the close of an empty container), or a separator.
    let mut want_value = true;
    loop {
        let Some(&c) = b.get(j) else {
            return err(j, "the end of an object or array");
        };
        match c {
            b' ' | b'\t' | b'\n' | b'\r' => j += 1,
            b'{' | b'[' if want_value => {
                stack.push(c == b'{');
                j = skip_ws(b, j + 1);
                if stack.last() == Some(&true) {
                    // An object: a key, or `}`.
                    match b.get(j) {
                        Some(b'}') => {
                            stack.pop();
                            j += 1;
                            want_value = false;
                        }
                        Some(b'"') => j = object_key(b, j)?,
                        _ => return err(j, "a key or `}`"),
                    }
                } else if b.get(j) == Some(&b']') {
                    stack.pop();
                    j += 1;
                    want_value = false;
                }
            }
            b'}' | b']' if !want_value => {
                let object = stack.pop().ok_or(ScanError {
                    at: j,
                    what: "an open object or array",
                })?;
                if object != (c == b'}') {
                    return err(j, "a matching bracket");
                }
                j += 1;
            }
            b',' if !want_value => {
                want_value = true;
                j = skip_ws(b, j + 1);
                if stack.last() == Some(&true) {
                    if b.get(j) != Some(&b'"') {
                        return err(j, "a key");
                    }
                    j = object_key(b, j)?;
                }
            }
            b'"' if want_value => {
                j = skip_string(b, j)?.0;
                want_value = false;
            }
            _ if want_value => {
                j = skip_scalar(b, j)?;
                want_value = false;
            }
            _ => return err(j, "`,` or the end of an object or array"),
        }
        if stack.is_empty() {
            return Ok(j);
        }
    }
}

/// `b[i]` is the `"` of a key: the index after its `:` and following whitespace.
fn object_key(b: &[u8], i: usize) -> Result<usize, ScanError> {
    let (j, _) = skip_string(b, i)?;
    let j = skip_ws(b, j);
    if b.get(j) != Some(&b':') {
        return err(j, "`:`");
    }
    Ok(skip_ws(b, j + 1))
}

/// One member of an object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Member {
    /// The key's bytes between the quotes (raw: escapes not decoded).
    pub key: Range<usize>,
    /// Whether the key has escapes.
    pub key_escaped: bool,
    /// The value's bytes.
    pub value: Range<usize>,
}

/// The members of the object starting at `i` (no leading whitespace), and the index after it.
/// `f` sees each member as it is found; returning `Err` stops the walk.
pub(crate) fn members(
    b: &[u8],
    i: usize,
    f: impl FnMut(&Member) -> Result<(), ScanError>,
) -> Result<usize, ScanError> {
    members_with(b, i, |_, v| skip_value(b, v), f)
}

/// [`members`], with `value_end(key, at)` finding the end of the value of `key` (raw bytes
/// between the quotes) that starts at `at`.
fn members_with(
    b: &[u8],
    i: usize,
    mut value_end: impl FnMut(&[u8], usize) -> Result<usize, ScanError>,
    mut f: impl FnMut(&Member) -> Result<(), ScanError>,
) -> Result<usize, ScanError> {
    if b.get(i) != Some(&b'{') {
        return err(i, "an object");
    }
    let mut j = skip_ws(b, i + 1);
    if b.get(j) == Some(&b'}') {
        return Ok(j + 1);
    }
    loop {
        if b.get(j) != Some(&b'"') {
            return err(j, "a key");
        }
        let (key_end, key_escaped) = skip_string(b, j)?;
        let key = j + 1..key_end - 1;
        let colon = skip_ws(b, key_end);
        if b.get(colon) != Some(&b':') {
            return err(colon, "`:`");
        }
        let v = skip_ws(b, colon + 1);
        let v_end = value_end(&b[key.clone()], v)?;
        f(&Member {
            key,
            key_escaped,
            value: v..v_end,
        })?;
        j = skip_ws(b, v_end);
        match b.get(j) {
            Some(b',') => j = skip_ws(b, j + 1),
            Some(b'}') => return Ok(j + 1),
            _ => return err(j, "`,` or `}`"),
        }
    }
}

/// The elements of the array starting at `i` (no leading whitespace), each as a byte range,
/// and the index after the array.
pub(crate) fn elements(b: &[u8], i: usize) -> Result<(Vec<Range<usize>>, usize), ScanError> {
    if b.get(i) != Some(&b'[') {
        return err(i, "an array");
    }
    let mut out = Vec::new();
    let mut j = skip_ws(b, i + 1);
    if b.get(j) == Some(&b']') {
        return Ok((out, j + 1));
    }
    loop {
        let end = skip_value(b, j)?;
        out.push(j..end);
        j = skip_ws(b, end);
        match b.get(j) {
            Some(b',') => j = skip_ws(b, j + 1),
            Some(b']') => return Ok((out, j + 1)),
            _ => return err(j, "`,` or `]`"),
        }
    }
}

/// Whether the member's key (raw bytes) is exactly `name` (keys with escapes never match:
/// the caller then takes the slow path).
pub(crate) fn key_is(b: &[u8], m: &Member, name: &str) -> bool {
    !m.key_escaped && &b[m.key.clone()] == name.as_bytes()
}

/// Whether the quoted key `b[quoted]` (quotes included, no escapes) is one `serde_json`
/// takes as a field name: valid UTF-8 without control characters. (`serde_json` skips an
/// ignored *value* without checking its UTF-8, but reads every key of a struct as a string.)
pub(crate) fn valid_key(b: &[u8], quoted: Range<usize>) -> bool {
    serde_json::from_slice::<&str>(&b[quoted]).is_ok()
}

/// The top-level parts of a list body.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct ListParts {
    /// The `metadata` value, if present.
    pub metadata: Option<Range<usize>>,
    /// The `items` value, if present (an array or `null`).
    pub items: Option<Range<usize>>,
    /// The elements of `items` when it is an array (found in the same walk).
    pub item_ranges: Vec<Range<usize>>,
    /// Every other member's value (checked by serde_json by the caller).
    pub others: Vec<Range<usize>>,
    /// The `kind` value, if present.
    pub kind: Option<Range<usize>>,
    /// The keys of the other members, with their quotes (checked by serde_json by the
    /// caller: the scanner does not validate string contents).
    pub other_keys: Vec<Range<usize>>,
}

/// Splits a list body into its `metadata`, `items` and other members. Keys with escapes,
/// repeated keys and trailing bytes are errors (the caller falls back to serde_json).
pub(crate) fn list_parts(b: &[u8]) -> Result<ListParts, ScanError> {
    let mut parts = ListParts::default();
    let mut item_ranges = Vec::new();
    let start = skip_ws(b, 0);
    let items_end = |key: &[u8], v: usize| {
        if key == b"items" && b.get(v) == Some(&b'[') {
            let (ranges, end) = elements(b, v)?;
            item_ranges = ranges;
            Ok(end)
        } else {
            skip_value(b, v)
        }
    };
    let end = members_with(b, start, items_end, |m| {
        if m.key_escaped {
            return err(m.key.start, "a key without escapes");
        }
        let slot = match &b[m.key.clone()] {
            b"metadata" => &mut parts.metadata,
            b"items" => &mut parts.items,
            b"kind" => &mut parts.kind,
            _ => {
                parts.others.push(m.value.clone());
                parts.other_keys.push(m.key.start - 1..m.key.end + 1);
                return Ok(());
            }
        };
        if slot.replace(m.value.clone()).is_some() {
            return err(m.key.start, "keys that are not repeated");
        }
        Ok(())
    })?;
    if skip_ws(b, end) != b.len() {
        return err(end, "the end of the body");
    }
    parts.item_ranges = item_ranges;
    Ok(parts)
}

/// What the scanner reads from one item's `metadata`, without decoding the item.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct ItemMeta {
    /// `metadata.namespace` (raw string bytes without quotes), if present and a string.
    pub namespace: Option<Range<usize>>,
    /// `metadata.name`.
    pub name: Option<Range<usize>>,
    /// `metadata.resourceVersion`.
    pub resource_version: Option<Range<usize>>,
    /// Whether one of the three strings above has escapes (then they are not used).
    pub escaped: bool,
}

/// Reads the `metadata` of the item object at `item` (trimmed range). `None` when the item is
/// not an object with one `metadata` object (the caller then just decodes it).
pub(crate) fn item_meta(b: &[u8], item: Range<usize>) -> Option<ItemMeta> {
    let mut meta: Option<Range<usize>> = None;
    let mut repeated = false;
    let end = members(b, item.start, |m| {
        if key_is(b, m, "metadata") {
            repeated |= meta.replace(m.value.clone()).is_some();
        }
        // An escaped key may be `metadata` in disguise: do not guess.
        repeated |= m.key_escaped;
        Ok(())
    })
    .ok()?;
    let meta = meta.filter(|_| !repeated && end == item.end)?;
    let mut out = ItemMeta::default();
    let mut repeated = false;
    members(b, meta.start, |m| {
        let slot = if key_is(b, m, "namespace") {
            &mut out.namespace
        } else if key_is(b, m, "name") {
            &mut out.name
        } else if key_is(b, m, "resourceVersion") {
            &mut out.resource_version
        } else {
            // `"n\u0061me"` is `name` too: do not guess.
            repeated |= m.key_escaped;
            return Ok(());
        };
        let s = (b.get(m.value.start) == Some(&b'"')).then(|| m.value.start + 1..m.value.end - 1);
        if let Some(s) = &s {
            out.escaped |= memchr::memchr(b'\\', &b[s.clone()]).is_some();
        }
        repeated |= slot.is_some();
        *slot = s;
        Ok(())
    })
    .ok()?;
    (!repeated).then_some(out)
}

#[cfg(test)]
mod tests;
