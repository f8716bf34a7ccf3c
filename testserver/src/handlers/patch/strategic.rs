//! Strategic merge patch (`application/strategic-merge-patch+json`), as kube-apiserver applies
//! it to built-in kinds with `strategicpatch.StrategicMergeMapPatch`
//! (`k8s.io/apimachinery/pkg/util/strategicpatch`), driven by the patch metadata of the
//! kind's schema in the embedded OpenAPI document (`x-kubernetes-patch-strategy`,
//! `x-kubernetes-patch-merge-key`, generated from the Go struct tags the real server reads).
//!
//! What is reproduced:
//!
//! - maps merge recursively and `null` deletes a key; a map field with strategy `replace`
//!   (`PodDisruptionBudgetSpec.selector`) is replaced whole;
//! - lists with strategy `merge` and a merge key (`containers` by `name`, `ports` by
//!   `containerPort`, ...) merge their items by key; without a `$setElementOrder`, an item
//!   new to the list is placed as the library's `mergeSortedSlice` places it: right after the
//!   item that precedes it in the patch, or first (not appended); lists of scalars with
//!   strategy `merge` (`finalizers`) are unioned; every other list is replaced whole;
//! - the directives: `$patch: replace` (a map is replaced by the patch; in a list, the list by
//!   the patch's other items), `$patch: delete` (a whole map; in a merging list, the items
//!   with the same merge key), `$setElementOrder/<list>` (the order of the merged list, items
//!   of the server not named keeping their place relative to the others),
//!   `$deleteFromPrimitiveList/<list>` (items removed from a list of scalars) and
//!   `$retainKeys` (keys of the map not listed are cleared; the patch may set listed keys
//!   only), with the library's checks of their format;
//! - values added where the object had none lose their `$patch`-marked maps and items and
//!   their `null`s, as `removeDirectives` and `discardNullValuesFromPatch` do;
//! - the library's errors, sorted by [`Error`] into the answers of the patch handler's
//!   `interpretStrategicMergePatchError` (400, 422, or a 500 with the library's message),
//!   with messages formatted as Go formats them (`map[a:b]`).
//!
//! kube-apiserver decodes the merged map into the Go type, which drops the directive keys
//! the library leaves in values it copies whole; this server has no Go types, so it removes
//! `$patch`, `$retainKeys`, `$setElementOrder/...` and `$deleteFromPrimitiveList/...` keys
//! from every object the schema declares as a struct (never from free-form values such as
//! a ControllerRevision's `data`, which hold patches themselves).
//!
//! Not reproduced: a field the schema does not declare, or whose value has no declared
//! structure (`RawExtension`), is merged as a JSON merge patch would merge it where the real
//! library fails with "unable to find api field in struct ..." (kube-apiserver prunes such
//! fields from stored objects, this server stores them); object fields of the wrong JSON type
//! are not rejected with the Go decoder's 422.
//!
//! Written by hand: no Rust crate implements strategic merge patch.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

use crate::registry::spec::Schema;

const DIRECTIVE_MARKER: &str = "$patch";
const RETAIN_KEYS_DIRECTIVE: &str = "$retainKeys";
const SET_ELEMENT_ORDER_PREFIX: &str = "$setElementOrder";
const DELETE_FROM_PRIMITIVE_LIST_PREFIX: &str = "$deleteFromPrimitiveList";

/// `mergepatch.ErrBadPatchFormatForRetainKeys`.
const ERR_RETAIN_KEYS: &str = "invalid patch format of retainKeys";
/// `mergepatch.ErrBadPatchFormatForSetElementOrderList`.
const ERR_SET_ELEMENT_ORDER: &str = "invalid patch format of setElementOrder list";
/// `mergepatch.ErrBadPatchFormatForPrimitiveList`.
const ERR_PRIMITIVE_LIST: &str = "invalid patch format of primitive list";
/// `mergepatch.ErrNoListOfLists`.
const ERR_LIST_OF_LISTS: &str = "lists of lists are not supported";

/// Why a strategic merge patch does not apply, by the answer kube-apiserver gives.
#[derive(Debug, PartialEq)]
pub(crate) enum Error {
    /// 400 BadRequest with this message: a body that is not a JSON object, a malformed
    /// `$retainKeys`, `$setElementOrder` or `$deleteFromPrimitiveList`.
    BadRequest(String),
    /// 422 with kube-apiserver's generic message (the library's is kept for logs): lists of
    /// lists.
    Unprocessable(String),
    /// Any other error of the library, which reaches the client as a 500 `Status` with the
    /// library's message and no reason.
    Internal(String),
}

/// Applies the strategic merge patch `patch` to `original`, a built-in object of the kind
/// `schema` describes.
pub(crate) fn apply(original: Value, patch: &[u8], schema: Schema<'_>) -> Result<Value, Error> {
    let patch = match serde_json::from_slice::<Value>(patch) {
        Ok(Value::Object(p)) => p,
        // Go decodes `null` into a nil map: nothing to merge.
        Ok(Value::Null) => return Ok(original),
        Ok(other) => {
            return Err(Error::BadRequest(format!(
                "json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
                json_kind(&other)
            )));
        }
        Err(e) => return Err(Error::BadRequest(e.to_string())),
    };
    let original = match original {
        Value::Object(m) => m,
        _ => Map::new(),
    };
    let mut merged = Value::Object(merge_map(original, patch, Some(schema))?);
    strip_directives(&mut merged, Some(schema));
    Ok(merged)
}

fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

// ---- schema lookups -------------------------------------------------------------------

/// The patch metadata of one field.
struct FieldMeta<'a> {
    /// The schema of the field's value (of its items, for a list).
    schema: Option<Schema<'a>>,
    /// The patch strategy other than `retainKeys` (`merge`, `replace` or empty).
    strategy: &'a str,
    /// The merge key of a merging list of maps.
    merge_key: &'a str,
}

fn is_struct(s: Schema<'_>) -> bool {
    s.get("properties").is_some_and(Value::is_object)
}

fn is_map(s: Schema<'_>) -> bool {
    !is_struct(s) && s.additional_properties().is_some()
}

/// The metadata of field `key` of a map whose schema is `parent` (`LookupPatchMetadataFor*`
/// of `PatchMetaFromStruct`). `list` asks for the items' schema.
fn lookup<'a>(parent: Option<Schema<'a>>, key: &str, list: bool) -> Result<FieldMeta<'a>, Error> {
    let none = FieldMeta {
        schema: None,
        strategy: "",
        merge_key: "",
    };
    let Some(parent) = parent else {
        return Ok(none);
    };
    if is_map(parent) {
        // A Go map type has no fields to look up: the library fails when a value of a map of
        // structs is merged with another.
        return Err(Error::Internal(
            "merging an object in json but data type is not struct, instead is: map".into(),
        ));
    }
    let Some(field) = parent.property(key) else {
        return Ok(none);
    };
    // The extensions sit beside the field's `$ref`, which `property` has already followed.
    let declared = parent.get("properties").and_then(|p| p.get(key));
    let extension = |name: &str| {
        declared
            .and_then(|d| d.get(name))
            .and_then(Value::as_str)
            .or_else(|| field.str(name))
            .unwrap_or("")
    };
    Ok(FieldMeta {
        schema: if list { field.items() } else { Some(field) },
        strategy: strategy_of(extension("x-kubernetes-patch-strategy"))?,
        merge_key: extension("x-kubernetes-patch-merge-key"),
    })
}

/// `extractRetainKeysPatchStrategy`: the strategy besides `retainKeys`.
fn strategy_of(tag: &str) -> Result<&str, Error> {
    let parts: Vec<&str> = tag.split(',').collect();
    match parts.as_slice() {
        ["retainKeys"] => Ok(""),
        [one] => Ok(one),
        ["retainKeys", other] | [other, "retainKeys"] => Ok(other),
        _ => Err(Error::Internal(format!(
            "unexpected patch strategy: [{}]",
            parts.join(" ")
        ))),
    }
}

// ---- maps -------------------------------------------------------------------------------

/// `mergeMap` with `MergeParallelList` and `IgnoreUnmatchedNulls`, as the server applies it.
fn merge_map(
    mut original: Map<String, Value>,
    mut patch: Map<String, Value>,
    schema: Option<Schema<'_>>,
) -> Result<Map<String, Value>, Error> {
    if let Some(directive) = patch.get(DIRECTIVE_MARKER) {
        return match directive.as_str() {
            Some("replace") => {
                patch.remove(DIRECTIVE_MARKER);
                Ok(patch)
            }
            Some("delete") => Ok(Map::new()),
            _ => Err(bad_patch_type(directive, &patch)),
        };
    }
    apply_retain_keys(&mut original, &mut patch)?;
    merge_ordered_lists(&mut original, &mut patch, schema)?;
    for (key, patch_value) in patch {
        let (key, delete_list) = if key.starts_with(DELETE_FROM_PRIMITIVE_LIST_PREFIX) {
            let field = extract_key(&key, DELETE_FROM_PRIMITIVE_LIST_PREFIX, ERR_PRIMITIVE_LIST)?;
            (field.to_owned(), true)
        } else {
            (key, false)
        };
        if patch_value.is_null() {
            original.remove(&key);
            continue;
        }
        let Some(original_value) = original.remove(&key) else {
            if !delete_list && let Some(v) = added_value(patch_value) {
                original.insert(key, v);
            }
            continue;
        };
        if go_type(&original_value) != go_type(&patch_value) {
            if delete_list {
                original.insert(key, original_value);
            } else if let Some(v) = added_value(patch_value) {
                original.insert(key, v);
            }
            continue;
        }
        let merged = match (original_value, patch_value) {
            (Value::Object(o), Value::Object(p)) => {
                let meta = lookup(schema, &key, false)?;
                if meta.strategy == "replace" {
                    Some(Value::Object(p))
                } else {
                    Some(Value::Object(merge_map(o, p, meta.schema)?))
                }
            }
            (Value::Array(o), Value::Array(p)) => {
                let meta = lookup(schema, &key, true)?;
                if meta.strategy == "merge" || delete_list {
                    Some(Value::Array(merge_list(
                        o,
                        p,
                        meta.schema,
                        meta.merge_key,
                        delete_list,
                    )?))
                } else {
                    Some(Value::Array(p))
                }
            }
            (_, p) => remove_directives(p),
        };
        if let Some(v) = merged {
            original.insert(key, v);
        }
    }
    Ok(original)
}

/// A patch value set where the object had none (or a value of another type): its nulls and
/// `$patch`-marked maps dropped. `None` when the value itself is so marked.
fn added_value(mut v: Value) -> Option<Value> {
    discard_nulls(&mut v);
    remove_directives(v)
}

/// `discardNullValuesFromPatch`.
fn discard_nulls(v: &mut Value) {
    match v {
        Value::Object(m) => {
            m.retain(|_, v| !v.is_null());
            m.values_mut().for_each(discard_nulls);
        }
        Value::Array(a) => a.iter_mut().for_each(discard_nulls),
        _ => {}
    }
}

/// `removeDirectives`: maps carrying `$patch` (and list items that are such maps) go.
fn remove_directives(v: Value) -> Option<Value> {
    match v {
        Value::Object(m) => {
            if m.contains_key(DIRECTIVE_MARKER) {
                return None;
            }
            Some(Value::Object(
                m.into_iter()
                    .filter_map(|(k, v)| remove_directives(v).map(|v| (k, v)))
                    .collect(),
            ))
        }
        Value::Array(a) => Some(Value::Array(
            a.into_iter().filter_map(remove_directives).collect(),
        )),
        other => Some(other),
    }
}

/// `applyRetainKeysDirective`.
fn apply_retain_keys(
    original: &mut Map<String, Value>,
    patch: &mut Map<String, Value>,
) -> Result<(), Error> {
    let Some(keep) = patch.remove(RETAIN_KEYS_DIRECTIVE) else {
        return Ok(());
    };
    let Value::Array(keep) = keep else {
        return Err(Error::BadRequest(ERR_RETAIN_KEYS.into()));
    };
    let kept = |k: &str| keep.iter().any(|v| v.as_str() == Some(k));
    for (k, v) in patch.iter() {
        if v.is_null()
            || k.starts_with(DELETE_FROM_PRIMITIVE_LIST_PREFIX)
            || k.starts_with(SET_ELEMENT_ORDER_PREFIX)
        {
            continue;
        }
        if !kept(k) {
            return Err(Error::BadRequest(ERR_RETAIN_KEYS.into()));
        }
    }
    original.retain(|k, _| kept(k));
    Ok(())
}

/// `extractKey`: the field a parallel-list directive names.
fn extract_key<'k>(key: &'k str, prefix: &str, err: &str) -> Result<&'k str, Error> {
    match key.split_once('/') {
        Some((p, field)) if p == prefix => Ok(field),
        _ => Err(Error::BadRequest(err.into())),
    }
}

/// `mergePatchIntoOriginal`: every `$setElementOrder/<field>` of the patch merges the list
/// `<field>` of the patch into the object's and orders the result.
fn merge_ordered_lists(
    original: &mut Map<String, Value>,
    patch: &mut Map<String, Value>,
    schema: Option<Schema<'_>>,
) -> Result<(), Error> {
    let keys: Vec<String> = patch
        .keys()
        .filter(|k| k.starts_with(SET_ELEMENT_ORDER_PREFIX))
        .cloned()
        .collect();
    for key in keys {
        let Some(order) = patch.remove(&key) else {
            continue;
        };
        let Value::Array(order) = order else {
            return Err(bad_arg_type("[]interface {}", &order));
        };
        let field = extract_key(&key, SET_ELEMENT_ORDER_PREFIX, ERR_SET_ELEMENT_ORDER)?;
        let original_list = match original.remove(field) {
            None => None,
            Some(Value::Array(a)) => Some(a),
            Some(other) => return Err(bad_arg_type("[]interface {}", &other)),
        };
        let patch_list = match patch.remove(field) {
            None => None,
            Some(Value::Array(a)) => Some(a),
            Some(other) => return Err(bad_arg_type("[]interface {}", &other)),
        };
        let meta = lookup(schema, field, true)?;
        validate_order(patch_list.as_deref().unwrap_or(&[]), &order, meta.merge_key)?;
        let server_order = original_list.clone().unwrap_or_default();
        let kind = element_kind(&[
            original_list.as_deref().unwrap_or(&[]),
            patch_list.as_deref().unwrap_or(&[]),
        ]);
        let merged = match (original_list, patch_list) {
            (Some(o), None) => o,
            (None, Some(p)) => p.into_iter().filter_map(remove_directives).collect(),
            (Some(o), Some(p)) => {
                if meta.strategy == "merge" {
                    merge_list(o, p, meta.schema, meta.merge_key, false)?
                } else {
                    p
                }
            }
            (None, None) => continue,
        };
        let (patch_items, server_only) = partition(merged, &order, meta.merge_key)?;
        let both = normalize_element_order(
            patch_items,
            server_only,
            &order,
            &server_order,
            meta.merge_key,
            kind?,
        )?;
        original.insert(field.to_owned(), Value::Array(both));
    }
    Ok(())
}

/// `validatePatchWithSetOrderList`: the patch's items must appear in the order list, in the
/// same relative order.
fn validate_order(patch: &[Value], order: &[Value], merge_key: &str) -> Result<(), Error> {
    if order.is_empty() || patch.is_empty() {
        return Ok(());
    }
    let non_delete: Vec<&Value> = if merge_key.is_empty() {
        patch.iter().collect()
    } else {
        let mut keep = Vec::new();
        for v in patch {
            let Value::Object(m) = v else {
                return Err(bad_arg_type("map[string]interface {}", v));
            };
            if m.get(DIRECTIVE_MARKER).and_then(Value::as_str) != Some("delete") {
                keep.push(v);
            }
        }
        keep
    };
    let (mut p, mut o) = (0, 0);
    while p < non_delete.len() && o < order.len() {
        if non_delete[p]
            .as_object()
            .is_some_and(|m| m.contains_key(DIRECTIVE_MARKER))
        {
            p += 1;
            continue;
        }
        if merge_key_value_equal(non_delete[p], &order[o], merge_key)? {
            p += 1;
        }
        o += 1;
    }
    if p < non_delete.len() && o >= order.len() {
        return Err(Error::Internal(format!(
            "The order in patch list:\n{}\n doesn't match {SET_ELEMENT_ORDER_PREFIX} list:\n{}\n",
            go_fmt(&Value::Array(patch.to_vec())),
            go_fmt(&Value::Array(order.to_vec()))
        )));
    }
    Ok(())
}

/// `mergeKeyValueEqual`.
fn merge_key_value_equal(left: &Value, right: &Value, merge_key: &str) -> Result<bool, Error> {
    if merge_key.is_empty() {
        if left.is_object() || left.is_array() {
            return Err(uncomparable(left));
        }
        return Ok(left == right);
    }
    let l = left
        .as_object()
        .ok_or_else(|| bad_arg_type("map[string]interface {}", left))?;
    let r = right
        .as_object()
        .ok_or_else(|| bad_arg_type("map[string]interface {}", right))?;
    let lk = l.get(merge_key).ok_or_else(|| no_merge_key(l, merge_key))?;
    let rk = r.get(merge_key).ok_or_else(|| no_merge_key(r, merge_key))?;
    Ok(lk == rk)
}

// ---- lists ------------------------------------------------------------------------------

/// The kind of the elements of lists, which must all be of one JSON type (`sliceElementType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Map,
    Scalar,
}

fn element_kind(lists: &[&[Value]]) -> Result<Kind, Error> {
    let mut first: Option<&Value> = None;
    for v in lists.iter().flat_map(|l| l.iter()) {
        match first {
            None => {
                if v.is_array() {
                    return Err(Error::Unprocessable(ERR_LIST_OF_LISTS.into()));
                }
                if v.is_null() {
                    return Err(Error::Internal(
                        "runtime error: invalid memory address or nil pointer dereference".into(),
                    ));
                }
                first = Some(v);
            }
            Some(f) if go_type(f) != go_type(v) => {
                let lists: Vec<Value> = lists.iter().map(|l| Value::Array(l.to_vec())).collect();
                return Err(Error::Internal(format!(
                    "list element types are not identical: {}",
                    go_fmt(&Value::Array(lists))
                )));
            }
            Some(_) => {}
        }
    }
    match first {
        None => Err(Error::Internal(
            "no elements in any of the given slices".into(),
        )),
        Some(Value::Object(_)) => Ok(Kind::Map),
        Some(_) => Ok(Kind::Scalar),
    }
}

/// `mergeSlice`: merges a merging list (or applies a `$deleteFromPrimitiveList`).
fn merge_list(
    original: Vec<Value>,
    patch: Vec<Value>,
    items: Option<Schema<'_>>,
    merge_key: &str,
    delete_list: bool,
) -> Result<Vec<Value>, Error> {
    if original.is_empty() && patch.is_empty() {
        return Ok(original);
    }
    let kind = element_kind(&[&original, &patch])?;
    if kind == Kind::Scalar {
        if delete_list {
            let gone: HashSet<String> = patch.iter().map(canonical).collect();
            return Ok(original
                .into_iter()
                .filter(|v| !gone.contains(&canonical(v)))
                .collect());
        }
        let server_order = original.clone();
        let mut seen = HashSet::new();
        let merged: Vec<Value> = original
            .into_iter()
            .chain(patch.iter().cloned())
            .filter(|v| seen.insert(canonical(v)))
            .collect();
        let (patch_items, server_only) = partition(merged, &patch, "")?;
        return normalize_element_order(patch_items, server_only, &patch, &server_order, "", kind);
    }
    if merge_key.is_empty() {
        return Err(Error::Internal(
            "cannot merge lists without merge key for struct".into(),
        ));
    }
    let (original, patch) = apply_list_directives(original, patch, merge_key)?;
    let server_order = original.clone();
    let merged = merge_items(original, patch.clone(), items, merge_key)?;
    let (patch_items, server_only) = partition(merged, &patch, merge_key)?;
    normalize_element_order(
        patch_items,
        server_only,
        &patch,
        &server_order,
        merge_key,
        kind,
    )
}

/// `mergeSliceWithSpecialElements`: the list's `$patch` items. Answers the server's items
/// left and the patch's plain items.
fn apply_list_directives(
    original: Vec<Value>,
    patch: Vec<Value>,
    merge_key: &str,
) -> Result<(Vec<Value>, Vec<Value>), Error> {
    let mut plain = Vec::with_capacity(patch.len());
    let mut replace = false;
    let mut deleted: HashSet<String> = HashSet::new();
    for v in patch {
        let Value::Object(m) = &v else {
            plain.push(v);
            continue;
        };
        let Some(directive) = m.get(DIRECTIVE_MARKER) else {
            plain.push(v);
            continue;
        };
        match directive.as_str() {
            Some("delete") => {
                let key = m.get(merge_key).ok_or_else(|| no_merge_key(m, merge_key))?;
                deleted.insert(canonical(key));
            }
            Some("replace") => replace = true,
            Some("merge") => {
                return Err(Error::Internal(
                    "merging lists cannot yet be specified in the patch".into(),
                ));
            }
            _ => return Err(bad_patch_type(directive, m)),
        }
    }
    if replace {
        return Ok((plain, Vec::new()));
    }
    let kept = original
        .into_iter()
        .filter(|v| {
            v.get(merge_key)
                .is_none_or(|k| !deleted.contains(&canonical(k)))
        })
        .collect();
    Ok((kept, plain))
}

/// `mergeSliceWithoutSpecialElements`: each patch item merges into the first server item
/// with its merge key, or is appended.
fn merge_items(
    mut original: Vec<Value>,
    patch: Vec<Value>,
    items: Option<Schema<'_>>,
    merge_key: &str,
) -> Result<Vec<Value>, Error> {
    let mut by_key: HashMap<String, usize> = HashMap::new();
    for (i, v) in original.iter().enumerate() {
        if let Some(k) = v.get(merge_key) {
            by_key.entry(canonical(k)).or_insert(i);
        }
    }
    for v in patch {
        let Value::Object(p) = v else {
            return Err(bad_arg_type("map[string]interface {}", &v));
        };
        let key = canonical(
            p.get(merge_key)
                .ok_or_else(|| no_merge_key(&p, merge_key))?,
        );
        match by_key.get(&key).copied() {
            Some(i) => {
                let current = match original.get_mut(i).map(Value::take) {
                    Some(Value::Object(m)) => m,
                    _ => Map::new(),
                };
                if let Some(slot) = original.get_mut(i) {
                    *slot = Value::Object(merge_map(current, p, items)?);
                }
            }
            None => {
                by_key.insert(key, original.len());
                original.push(Value::Object(p));
            }
        }
    }
    Ok(original)
}

/// Splits `merged` into the items named by `by` (by merge key, or equal scalars) and the
/// others (`partitionMapsByPresentInList`, `partitionPrimitivesByPresentInList`).
fn partition(
    merged: Vec<Value>,
    by: &[Value],
    merge_key: &str,
) -> Result<(Vec<Value>, Vec<Value>), Error> {
    if merge_key.is_empty() {
        // Go hashes scalars into a set; maps and lists cannot be hashed.
        if let Some(bad) = merged
            .iter()
            .chain(by)
            .find(|v| v.is_object() || v.is_array())
        {
            return Err(Error::Internal(format!(
                "runtime error: hash of unhashable type {}",
                go_type_name(bad)
            )));
        }
        let named: HashSet<String> = by.iter().map(canonical).collect();
        return Ok(merged
            .into_iter()
            .partition(|v| named.contains(&canonical(v))));
    }
    let mut named: HashSet<String> = HashSet::new();
    for (i, v) in by.iter().enumerate() {
        let Value::Object(m) = v else {
            return Err(Error::Internal(format!("value for key {i} is not a map")));
        };
        if let Some(k) = m.get(merge_key) {
            named.insert(canonical(k));
        }
    }
    let (mut named_items, mut others) = (Vec::new(), Vec::new());
    for v in merged {
        let Value::Object(m) = &v else {
            return Err(bad_arg_type("map[string]interface {}", &v));
        };
        let k = m.get(merge_key).ok_or_else(|| no_merge_key(m, merge_key))?;
        if named.contains(&canonical(k)) {
            named_items.push(v);
        } else {
            others.push(v);
        }
    }
    Ok((named_items, others))
}

/// `normalizeElementOrder`: the patch's items in the patch's order, the server's in the
/// server's, then interleaved keeping the server's relative order where both know an item.
fn normalize_element_order(
    patch_items: Vec<Value>,
    server_only: Vec<Value>,
    patch_order: &[Value],
    server_order: &[Value],
    merge_key: &str,
    kind: Kind,
) -> Result<Vec<Value>, Error> {
    let patch_items = sort_by_order(patch_items, patch_order, merge_key, kind)?;
    let server_only = sort_by_order(server_only, server_order, merge_key, kind)?;
    let server_index = positions(server_order, merge_key, kind);
    let pos = |v: &Value| server_index.get(&order_key(v, merge_key, kind)).copied();
    let mut out = Vec::with_capacity(patch_items.len() + server_only.len());
    let mut left = server_only.into_iter().peekable();
    let mut right = patch_items.into_iter().peekable();
    loop {
        let take_left = match (left.peek(), right.peek()) {
            (None, None) => break,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (Some(l), Some(r)) => matches!((pos(l), pos(r)), (Some(li), Some(ri)) if li < ri),
        };
        let next = if take_left { left.next() } else { right.next() };
        out.extend(next);
    }
    Ok(out)
}

/// `normalizeSliceOrder`: a stable sort by position in `order` (items it does not name, which
/// the library's callers never pass, go last); `$patch: delete` items at the end.
fn sort_by_order(
    items: Vec<Value>,
    order: &[Value],
    merge_key: &str,
    kind: Kind,
) -> Result<Vec<Value>, Error> {
    let mut deletes = Vec::new();
    let mut items = if kind == Kind::Map {
        for v in items.iter().chain(order) {
            let m = v
                .as_object()
                .ok_or_else(|| bad_arg_type("map[string]interface {}", v))?;
            if !m.contains_key(merge_key) {
                return Err(no_merge_key(m, merge_key));
            }
        }
        let (d, keep): (Vec<Value>, Vec<Value>) = items
            .into_iter()
            .partition(|v| v.get(DIRECTIVE_MARKER).and_then(Value::as_str) == Some("delete"));
        deletes = d;
        keep
    } else {
        items
    };
    let index = positions(order, merge_key, kind);
    items.sort_by_key(|v| {
        index
            .get(&order_key(v, merge_key, kind))
            .copied()
            .unwrap_or(usize::MAX)
    });
    items.extend(deletes);
    Ok(items)
}

/// What identifies an item in an order list: its merge key's value, or itself.
fn order_key(v: &Value, merge_key: &str, kind: Kind) -> String {
    match kind {
        Kind::Map => canonical(v.get(merge_key).unwrap_or(&Value::Null)),
        Kind::Scalar => canonical(v),
    }
}

/// The first position of each item of `order` (the library's `index`).
fn positions(order: &[Value], merge_key: &str, kind: Kind) -> HashMap<String, usize> {
    let mut m = HashMap::new();
    for (i, v) in order.iter().enumerate() {
        m.entry(order_key(v, merge_key, kind)).or_insert(i);
    }
    m
}

// ---- the result ---------------------------------------------------------------------------

fn is_directive_key(k: &str) -> bool {
    k == DIRECTIVE_MARKER
        || k == RETAIN_KEYS_DIRECTIVE
        || k.starts_with(SET_ELEMENT_ORDER_PREFIX)
        || k.starts_with(DELETE_FROM_PRIMITIVE_LIST_PREFIX)
}

/// Removes the directive keys the Go decoder would drop: from objects the schema declares
/// as structs, and from undeclared fields (which the real server prunes altogether).
fn strip_directives(v: &mut Value, schema: Option<Schema<'_>>) {
    match v {
        Value::Object(m) => match schema {
            Some(s) if is_struct(s) => {
                m.retain(|k, _| !is_directive_key(k));
                for (k, v) in m.iter_mut() {
                    strip_directives(v, s.property(k));
                }
            }
            Some(s) => {
                if let Some(values) = s.additional_properties() {
                    for v in m.values_mut() {
                        strip_directives(v, Some(values));
                    }
                }
            }
            None => {
                m.retain(|k, _| !is_directive_key(k));
                for v in m.values_mut() {
                    strip_directives(v, None);
                }
            }
        },
        Value::Array(a) => {
            let items = schema.and_then(Schema::items);
            if schema.is_some() && items.is_none() {
                return;
            }
            for v in a.iter_mut() {
                strip_directives(v, items);
            }
        }
        _ => {}
    }
}

// ---- Go's formatting ------------------------------------------------------------------------

/// The Go type a decoded JSON value has (`reflect.TypeOf`): integers and other numbers differ.
fn go_type(v: &Value) -> u8 {
    match v {
        Value::Null => 0,
        Value::Bool(_) => 1,
        Value::Number(n) if n.is_i64() || n.is_u64() => 2,
        Value::Number(_) => 3,
        Value::String(_) => 4,
        Value::Array(_) => 5,
        Value::Object(_) => 6,
    }
}

fn go_type_name(v: &Value) -> &'static str {
    match go_type(v) {
        0 => "%!s(<nil>)",
        1 => "bool",
        2 => "int64",
        3 => "float64",
        4 => "string",
        5 => "[]interface {}",
        _ => "map[string]interface {}",
    }
}

/// `fmt.Sprintf("%v", v)` of a decoded JSON value.
fn go_fmt(v: &Value) -> String {
    match v {
        Value::Null => "<nil>".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => s.clone(),
        Value::Array(a) => format!("[{}]", a.iter().map(go_fmt).collect::<Vec<_>>().join(" ")),
        Value::Object(m) => format!(
            "map[{}]",
            m.iter()
                .map(|(k, v)| format!("{k}:{}", go_fmt(v)))
                .collect::<Vec<_>>()
                .join(" ")
        ),
    }
}

/// `%s` of a value: strings as they are, others as Go's `%!s(type=value)`.
fn go_fmt_s(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "%!s(<nil>)".into(),
        other => format!("%!s({}={})", go_type_name(other), go_fmt(other)),
    }
}

/// A value as a hashable key with JSON equality (maps are ordered, so serialization is
/// canonical).
fn canonical(v: &Value) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

/// `mergepatch.ErrBadArgType`.
fn bad_arg_type(expected: &str, actual: &Value) -> Error {
    Error::Internal(format!(
        "expected a {expected}, but received a {}",
        go_type_name(actual)
    ))
}

/// `mergepatch.ErrNoMergeKey`.
fn no_merge_key(m: &Map<String, Value>, key: &str) -> Error {
    Error::Internal(format!(
        "map: {} does not contain declared merge key: {key}",
        go_fmt(&Value::Object(m.clone()))
    ))
}

/// `mergepatch.ErrBadPatchType`.
fn bad_patch_type(directive: &Value, m: &Map<String, Value>) -> Error {
    Error::Internal(format!(
        "unknown patch type: {} in map: {}",
        go_fmt_s(directive),
        go_fmt(&Value::Object(m.clone()))
    ))
}

/// Go panics comparing maps or lists with `==`; the server answers 500.
fn uncomparable(v: &Value) -> Error {
    Error::Internal(format!(
        "runtime error: comparing uncomparable type {}",
        go_type_name(v)
    ))
}

#[cfg(test)]
mod tests;
