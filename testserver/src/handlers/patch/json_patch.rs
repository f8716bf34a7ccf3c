//! RFC 6902 JSON patch (`application/json-patch+json`) with the semantics and bounds of
//! kube-apiserver, which applies it with `gopkg.in/evanphx/json-patch.v4`:
//!
//! - at most [`MAX_OPERATIONS`] operations (`maxJSONPatchOperations` in
//!   `handlers/patch.go`, answered 413);
//! - `copy` operations may copy at most [`MAX_COPY_BYTES`] of JSON in total (the library's
//!   `AccumulatedCopySizeLimit`, which the generic API server sets from
//!   `JSONPatchMaxCopyBytes`, 3 MiB): without it a patch of a few hundred doubling `copy`
//!   operations builds an object of gigabytes. The request body itself is capped at 3 MiB by
//!   the router, so a patched object stays within a few megabytes;
//! - the library's leniencies, which clients may rely on: negative array indices count from
//!   the end, `replace` of a missing object key adds it, `copy` from a missing object key
//!   copies `null`, a missing `value` is `null`, and a path's first segment is not required to
//!   be empty.
//!
//! Written by hand (the `json-patch` crate was considered): the limits and the v4 library's
//! leniencies above are what the server must reproduce, and the crate has neither.

use serde_json::Value;

/// `maxJSONPatchOperations` of kube-apiserver's patch handler.
pub(crate) const MAX_OPERATIONS: usize = 10_000;

/// `JSONPatchMaxCopyBytes` of the generic API server (3 MiB).
pub(crate) const MAX_COPY_BYTES: usize = 3 * 1024 * 1024;

/// Why a JSON patch was refused.
#[derive(Debug, PartialEq)]
pub(crate) enum Error {
    /// The body is not a JSON array of operation objects (400).
    Decode(String),
    /// More than [`MAX_OPERATIONS`] operations (413).
    TooManyOperations(usize),
    /// An operation does not apply (422).
    Apply(String),
}

/// Applies the JSON patch `patch` to `target`.
pub(crate) fn apply(target: Value, patch: &[u8]) -> Result<Value, Error> {
    let ops: Value = serde_json::from_slice(patch).map_err(|e| Error::Decode(e.to_string()))?;
    let ops = match ops {
        // Go decodes `null` into an empty patch.
        Value::Null => Vec::new(),
        Value::Array(ops) => ops,
        other => {
            return Err(Error::Decode(format!(
                "json: cannot unmarshal {} into Go value of type jsonpatch.Patch",
                go_kind(&other)
            )));
        }
    };
    if let Some(bad) = ops.iter().find(|op| !op.is_object() && !op.is_null()) {
        return Err(Error::Decode(format!(
            "json: cannot unmarshal {} into Go value of type jsonpatch.Operation",
            go_kind(bad)
        )));
    }
    if ops.len() > MAX_OPERATIONS {
        return Err(Error::TooManyOperations(ops.len()));
    }
    let mut doc = target;
    let mut copied = 0usize;
    for (i, op) in ops.iter().enumerate() {
        apply_one(&mut doc, op, &mut copied)
            .map_err(|m| Error::Apply(format!("operation {i}: {m}")))?;
    }
    Ok(doc)
}

/// The JSON kind Go's decoder names in its type errors.
fn go_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn string_field<'a>(op: &'a Value, field: &str) -> Result<&'a str, String> {
    match op.get(field) {
        Some(Value::String(s)) => Ok(s),
        None | Some(Value::Null) => Err(format!("operation missing {field} field")),
        Some(_) => Err(format!("{field} is not a string")),
    }
}

fn apply_one(doc: &mut Value, op: &Value, copied: &mut usize) -> Result<(), String> {
    let kind = match op.get("op") {
        Some(Value::String(s)) => s.as_str(),
        _ => "unknown",
    };
    // An absent `value` and `"value": null` are both null to the v4 library.
    let value = || op.get("value").cloned().unwrap_or(Value::Null);
    match kind {
        "add" => {
            let path = string_field(op, "path")?;
            add(doc, path, value())
        }
        "remove" => {
            let path = string_field(op, "path")?;
            remove(doc, path).map(drop)
        }
        "replace" => {
            let path = string_field(op, "path")?;
            if path.is_empty() {
                let v = value();
                if !v.is_object() && !v.is_array() {
                    return Err("replace operation value must be object or array".into());
                }
                *doc = v;
                return Ok(());
            }
            let (parent, key) = parent_of(doc, path).ok_or_else(|| {
                format!("replace operation does not apply: doc is missing path: {path}")
            })?;
            match parent {
                Value::Object(m) => {
                    m.insert(key, value());
                    Ok(())
                }
                Value::Array(a) => {
                    let i = index(&key, a.len(), false)?;
                    if let Some(slot) = a.get_mut(i) {
                        *slot = value();
                    }
                    Ok(())
                }
                _ => Err(format!(
                    "replace operation does not apply: doc is missing path: {path}"
                )),
            }
        }
        "move" => {
            let from = string_field(op, "from")?;
            let v = remove(doc, from)?;
            let path = string_field(op, "path")?;
            add(doc, path, v)
        }
        "copy" => {
            let from = string_field(op, "from")?;
            let v = get(doc, from)?;
            let path = string_field(op, "path")?;
            if parent_of(doc, path).is_none() {
                return Err(format!(
                    "copy operation does not apply: doc is missing destination path: {path}"
                ));
            }
            if !v.is_null() {
                *copied = copied.saturating_add(serde_json::to_vec(&v).map_or(0, |b| b.len()));
            }
            if *copied > MAX_COPY_BYTES {
                return Err(format!(
                    "Unable to complete the copy, the accumulated size increase of copy is {copied}, exceeding the limit {MAX_COPY_BYTES}"
                ));
            }
            add(doc, path, v)
        }
        "test" => {
            let path = string_field(op, "path")?;
            let expected = op.get("value").unwrap_or(&Value::Null);
            if path.is_empty() {
                return if doc == expected {
                    Ok(())
                } else {
                    Err(format!("testing value {path} failed"))
                };
            }
            let actual = get(doc, path)?;
            if actual == *expected {
                Ok(())
            } else {
                Err(format!("testing value {path} failed"))
            }
        }
        other => Err(format!("Unexpected kind: {other}")),
    }
}

fn decode(token: &str) -> String {
    token.replace("~1", "/").replace("~0", "~")
}

/// An array index as the v4 library reads it: `len` is the bound (`len + 1` for `add`);
/// negative indices count from the end.
fn index(key: &str, len: usize, inclusive: bool) -> Result<usize, String> {
    let i: i64 = key
        .parse()
        .map_err(|_| format!("value was not a proper array index: '{key}'"))?;
    let len = i64::try_from(len).unwrap_or(i64::MAX);
    let bound = if inclusive { len + 1 } else { len };
    let resolved = if i < 0 { i + bound } else { i };
    if i < -bound || resolved >= bound || resolved < 0 {
        return Err(format!("Unable to access invalid index: {i}"));
    }
    usize::try_from(resolved).map_err(|_| format!("Unable to access invalid index: {i}"))
}

/// The container of `path`'s last segment and that segment, as the library's `findObject`
/// walks it: every segment but the first and the last is followed; a missing, `null` or
/// scalar step is no container.
fn parent_of<'a>(doc: &'a mut Value, path: &str) -> Option<(&'a mut Value, String)> {
    let segments: Vec<&str> = path.split('/').collect();
    let (last, inner) = segments.split_last()?;
    let inner = inner.get(1..)?;
    let mut cur = doc;
    for seg in inner {
        let seg = decode(seg);
        cur = match cur {
            Value::Object(m) => m.get_mut(&seg)?,
            Value::Array(a) => {
                let i = index(&seg, a.len(), false).ok()?;
                a.get_mut(i)?
            }
            _ => return None,
        };
        if !cur.is_object() && !cur.is_array() {
            return None;
        }
    }
    Some((cur, decode(last)))
}

fn add(doc: &mut Value, path: &str, value: Value) -> Result<(), String> {
    let missing = || format!("add operation does not apply: doc is missing path: \"{path}\"");
    let (parent, key) = parent_of(doc, path).ok_or_else(missing)?;
    match parent {
        Value::Object(m) => {
            m.insert(key, value);
            Ok(())
        }
        Value::Array(a) => {
            let i = if key == "-" {
                a.len()
            } else {
                index(&key, a.len(), true)?
            };
            a.insert(i, value);
            Ok(())
        }
        _ => Err(missing()),
    }
}

fn remove(doc: &mut Value, path: &str) -> Result<Value, String> {
    let missing = || format!("doc is missing path: \"{path}\"");
    let (parent, key) = parent_of(doc, path).ok_or_else(missing)?;
    match parent {
        Value::Object(m) => m
            .remove(&key)
            .ok_or_else(|| format!("Unable to remove nonexistent key: {key}")),
        Value::Array(a) => {
            let i = index(&key, a.len(), false)?;
            Ok(a.remove(i))
        }
        _ => Err(missing()),
    }
}

/// The value at `path`: `null` for a missing object key (the library's `partialDoc.get`
/// does not fail), an error for a missing container or an index out of range.
fn get(doc: &mut Value, path: &str) -> Result<Value, String> {
    let (parent, key) =
        parent_of(doc, path).ok_or_else(|| format!("doc is missing path: {path}"))?;
    match parent {
        Value::Object(m) => Ok(m.get(&key).cloned().unwrap_or(Value::Null)),
        Value::Array(a) => {
            let i = index(&key, a.len(), false)?;
            Ok(a.get(i).cloned().unwrap_or(Value::Null))
        }
        _ => Err(format!("doc is missing path: {path}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(target: Value, patch: Value) -> Result<Value, Error> {
        apply(target, &serde_json::to_vec(&patch).unwrap())
    }

    // RFC 6902 section 4: the six operations, with ~0/~1 escapes.
    #[test]
    fn operations() {
        let t = json!({"metadata": {"labels": {"a": "1"}}, "l": [1, 2]});
        let p = json!([
            {"op": "add", "path": "/metadata/labels/b~1c", "value": "2"},
            {"op": "replace", "path": "/metadata/labels/a", "value": "x"},
            {"op": "add", "path": "/l/-", "value": 3},
            {"op": "remove", "path": "/l/0"},
            {"op": "copy", "from": "/l", "path": "/m"},
            {"op": "move", "from": "/m", "path": "/n"},
            {"op": "test", "path": "/n/0", "value": 2},
        ]);
        assert_eq!(
            run(t.clone(), p).unwrap(),
            json!({"metadata": {"labels": {"a": "x", "b/c": "2"}}, "l": [2, 3], "n": [2, 3]})
        );
        for bad in [
            json!([{"op": "test", "path": "/l/0", "value": 5}]),
            json!([{"op": "remove", "path": "/nope"}]),
            json!([{"op": "add", "path": "/nope/x", "value": 1}]),
            json!([{"op": "add", "path": "/l/5", "value": 1}]),
            json!([{"op": "add", "path": "", "value": {}}]),
            json!([{"op": "frobnicate", "path": "/l"}]),
            json!([{"op": "add", "value": 1}]),
            json!([{"op": "move", "from": "/nope", "path": "/x"}]),
            json!([{"op": "replace", "path": "/l/2", "value": 1}]),
        ] {
            assert!(
                matches!(run(t.clone(), bad.clone()), Err(Error::Apply(_))),
                "{bad}"
            );
        }
    }

    // evanphx/json-patch v4, which kube-apiserver uses, is lenient where RFC 6902 is not.
    #[test]
    fn v4_library_leniencies() {
        let t = json!({"a": {"b": 1}, "l": [1, 2, 3]});
        // replace of a missing object key adds it.
        let out = run(
            t.clone(),
            json!([{"op": "replace", "path": "/a/c", "value": 2}]),
        )
        .unwrap();
        assert_eq!(out["a"], json!({"b": 1, "c": 2}));
        // negative indices count from the end.
        let out = run(t.clone(), json!([{"op": "remove", "path": "/l/-1"}])).unwrap();
        assert_eq!(out["l"], json!([1, 2]));
        let out = run(
            t.clone(),
            json!([{"op": "replace", "path": "/l/-3", "value": 9}]),
        )
        .unwrap();
        assert_eq!(out["l"], json!([9, 2, 3]));
        // copy from a missing key copies null; add without a value adds null.
        let out = run(
            t.clone(),
            json!([{"op": "copy", "from": "/a/zz", "path": "/c"}, {"op": "add", "path": "/d"}]),
        )
        .unwrap();
        assert_eq!((&out["c"], &out["d"]), (&Value::Null, &Value::Null));
        // test of a missing key against null passes.
        assert!(
            run(
                t.clone(),
                json!([{"op": "test", "path": "/zz", "value": null}])
            )
            .is_ok()
        );
        // replace of the whole document.
        let out = run(
            t.clone(),
            json!([{"op": "replace", "path": "", "value": {"x": 1}}]),
        )
        .unwrap();
        assert_eq!(out, json!({"x": 1}));
        // a null patch is no operation.
        assert_eq!(apply(t.clone(), b"null").unwrap(), t);
    }

    // AccumulatedCopySizeLimit: doubling copies of an object stop at 3 MiB instead of
    // building an object of gigabytes from a patch of 1.9 KB.
    #[test]
    fn copies_are_bounded() {
        // Each operation appends the whole list to itself: 64 of them (about 2.5 KB) would
        // build 2^64 copies.
        let mut ops = vec![json!({"op": "add", "path": "/x", "value": ["0123456789abcdef"]})];
        ops.extend((0..64).map(|_| json!({"op": "copy", "from": "/x", "path": "/x/-"})));
        let patch = serde_json::to_vec(&ops).unwrap();
        let started = std::time::Instant::now();
        let err = apply(json!({}), &patch).unwrap_err();
        let Error::Apply(msg) = err else {
            panic!("{err:?}")
        };
        assert!(msg.contains("accumulated size increase of copy"), "{msg}");
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
        // Below the limit, copies work.
        let ok = json!([{"op": "add", "path": "/x", "value": "v"}, {"op": "copy", "from": "/x", "path": "/y"}]);
        assert_eq!(run(json!({}), ok).unwrap(), json!({"x": "v", "y": "v"}));
    }

    // maxJSONPatchOperations and the decoding errors (400).
    #[test]
    fn limits_and_decoding() {
        let ops: Vec<Value> = (0..=MAX_OPERATIONS)
            .map(|_| json!({"op": "test", "path": "/a", "value": null}))
            .collect();
        assert_eq!(
            run(json!({}), Value::Array(ops)),
            Err(Error::TooManyOperations(MAX_OPERATIONS + 1))
        );
        let ops: Vec<Value> = (0..MAX_OPERATIONS)
            .map(|_| json!({"op": "test", "path": "/a", "value": null}))
            .collect();
        assert!(run(json!({}), Value::Array(ops)).is_ok());
        assert!(matches!(
            apply(json!({}), b"{\"op\": 1}"),
            Err(Error::Decode(_))
        ));
        assert!(matches!(
            apply(json!({}), b"[\"add\"]"),
            Err(Error::Decode(_))
        ));
        assert!(matches!(apply(json!({}), b"[{"), Err(Error::Decode(_))));
    }
}
