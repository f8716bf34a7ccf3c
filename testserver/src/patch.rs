//! PATCH bodies: JSON merge patch (RFC 7386), JSON patch (RFC 6902).
//!
//! `application/strategic-merge-patch+json` is applied as a JSON merge patch: lists are
//! replaced whole instead of merged by their patch keys. That is what kubectl's `label`,
//! `annotate` and `patch` send for built-in types and is exact for maps (labels, annotations,
//! spec fields); patches that rely on list merge keys or `$patch` directives are not
//! reproduced. `application/apply-patch+yaml` (server-side apply) answers 415.

use serde_json::Value;

use super::status::ApiError;

/// The patch types this server accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PatchType {
    /// `application/merge-patch+json`.
    Merge,
    /// `application/json-patch+json`.
    Json,
    /// `application/strategic-merge-patch+json`, applied as a merge patch.
    StrategicAsMerge,
}

impl PatchType {
    /// The patch type of a `Content-Type`.
    pub fn from_content_type(ct: &str) -> Result<Self, ApiError> {
        match ct.split(';').next().unwrap_or_default().trim() {
            "application/merge-patch+json" => Ok(Self::Merge),
            "application/json-patch+json" => Ok(Self::Json),
            "application/strategic-merge-patch+json" => Ok(Self::StrategicAsMerge),
            other => Err(ApiError::unsupported_media_type(other)),
        }
    }

    /// Applies `patch` to `target`.
    pub fn apply(self, target: Value, patch: &[u8]) -> Result<Value, ApiError> {
        let patch: Value = serde_json::from_slice(patch)
            .map_err(|e| ApiError::bad_request(format!("error decoding patch: {e}")))?;
        match self {
            Self::Merge | Self::StrategicAsMerge => {
                if !patch.is_object() {
                    return Err(ApiError::bad_request("merge patch must be a JSON object"));
                }
                let mut t = target;
                merge_patch(&mut t, &patch);
                Ok(t)
            }
            Self::Json => json_patch(target, &patch),
        }
    }
}

/// RFC 7386: objects merge recursively, `null` deletes, anything else replaces.
pub(crate) fn merge_patch(target: &mut Value, patch: &Value) {
    let Value::Object(p) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = Value::Object(Default::default());
    }
    let Value::Object(t) = target else { return };
    for (k, v) in p {
        if v.is_null() {
            t.remove(k);
        } else {
            merge_patch(t.entry(k.clone()).or_insert(Value::Null), v);
        }
    }
}

/// RFC 6902 operations: add, remove, replace, move, copy, test.
pub(crate) fn json_patch(mut target: Value, patch: &Value) -> Result<Value, ApiError> {
    let ops = patch
        .as_array()
        .ok_or_else(|| ApiError::bad_request("json patch must be an array of operations"))?;
    for (i, op) in ops.iter().enumerate() {
        let fail =
            |m: &str| ApiError::new(422, "Invalid", format!("json patch operation {i}: {m}"));
        let path = op["path"]
            .as_str()
            .ok_or_else(|| fail("missing \"path\""))?;
        match op["op"].as_str().unwrap_or_default() {
            "add" => {
                add(&mut target, path, value_of(op).map_err(|m| fail(&m))?).map_err(|m| fail(&m))?
            }
            "remove" => {
                remove(&mut target, path).map_err(|m| fail(&m))?;
            }
            "replace" => {
                let v = value_of(op).map_err(|m| fail(&m))?;
                let slot = target
                    .pointer_mut(path)
                    .ok_or_else(|| fail(&format!("path {path:?} does not exist")))?;
                *slot = v;
            }
            "move" => {
                let from = op["from"]
                    .as_str()
                    .ok_or_else(|| fail("missing \"from\""))?;
                let v = remove(&mut target, from).map_err(|m| fail(&m))?;
                add(&mut target, path, v).map_err(|m| fail(&m))?;
            }
            "copy" => {
                let from = op["from"]
                    .as_str()
                    .ok_or_else(|| fail("missing \"from\""))?;
                let v = target
                    .pointer(from)
                    .cloned()
                    .ok_or_else(|| fail(&format!("path {from:?} does not exist")))?;
                add(&mut target, path, v).map_err(|m| fail(&m))?;
            }
            "test" => {
                let v = value_of(op).map_err(|m| fail(&m))?;
                if target.pointer(path) != Some(&v) {
                    return Err(fail(&format!("test failed at {path:?}")));
                }
            }
            other => return Err(fail(&format!("unknown op {other:?}"))),
        }
    }
    Ok(target)
}

fn value_of(op: &Value) -> Result<Value, String> {
    op.get("value")
        .cloned()
        .ok_or_else(|| "missing \"value\"".to_owned())
}

fn split(path: &str) -> Result<(&str, String), String> {
    let (parent, last) = path
        .rsplit_once('/')
        .ok_or_else(|| format!("invalid path {path:?}"))?;
    Ok((parent, last.replace("~1", "/").replace("~0", "~")))
}

fn add(target: &mut Value, path: &str, value: Value) -> Result<(), String> {
    if path.is_empty() {
        *target = value;
        return Ok(());
    }
    let (parent, last) = split(path)?;
    match target.pointer_mut(parent) {
        Some(Value::Object(m)) => {
            m.insert(last, value);
            Ok(())
        }
        Some(Value::Array(a)) => {
            let idx = if last == "-" {
                a.len()
            } else {
                last.parse::<usize>()
                    .ok()
                    .filter(|i| *i <= a.len())
                    .ok_or_else(|| format!("invalid array index {last:?} in {path:?}"))?
            };
            a.insert(idx, value);
            Ok(())
        }
        _ => Err(format!("parent of {path:?} does not exist")),
    }
}

fn remove(target: &mut Value, path: &str) -> Result<Value, String> {
    let (parent, last) = split(path)?;
    let missing = || format!("path {path:?} does not exist");
    match target.pointer_mut(parent) {
        Some(Value::Object(m)) => m.remove(&last).ok_or_else(missing),
        Some(Value::Array(a)) => {
            let i = last
                .parse::<usize>()
                .ok()
                .filter(|i| *i < a.len())
                .ok_or_else(missing)?;
            Ok(a.remove(i))
        }
        _ => Err(missing()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn merge_patch_follows_rfc_7386() {
        let mut t = json!({"a": {"b": 1, "c": 2}, "l": [1, 2]});
        merge_patch(&mut t, &json!({"a": {"b": null, "d": 3}, "l": [9]}));
        assert_eq!(t, json!({"a": {"c": 2, "d": 3}, "l": [9]}));
    }

    #[test]
    fn json_patch_operations() {
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
        let out = json_patch(t.clone(), &p).unwrap();
        assert_eq!(
            out,
            json!({"metadata": {"labels": {"a": "x", "b/c": "2"}}, "l": [2, 3], "n": [2, 3]})
        );
        let bad = json!([{"op": "replace", "path": "/nope", "value": 1}]);
        assert_eq!(json_patch(t.clone(), &bad).unwrap_err().code, 422);
        let failed_test = json!([{"op": "test", "path": "/l/0", "value": 5}]);
        assert!(json_patch(t, &failed_test).is_err());
        assert_eq!(
            PatchType::from_content_type("application/apply-patch+yaml")
                .unwrap_err()
                .code,
            415
        );
    }
}
