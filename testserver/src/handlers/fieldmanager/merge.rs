//! The value walks of server-side apply, after structured-merge-diff's `typed` package: merging
//! an applied configuration into a live object, the field set of a value, the comparison of two
//! values (added, modified and removed fields) and the removal of fields an applier gave up.
//!
//! Every walk types a node by its value and the schema ([`Ty`]): objects are granular maps
//! unless `x-kubernetes-map-type: atomic`; lists merge by key, as sets, or whole
//! ([`ListKind`]); scalars, atomic maps and atomic lists are leaves. As in the Go library, an
//! empty (or absent) map or list on both sides is a leaf too, which keeps `{}` apart from an
//! absent field.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::handlers::fieldmanager::fieldset::{Pe, Set};
use crate::handlers::fieldmanager::types::{ListKind, Ty};

/// The path element of a list item, or `None` for an item of an atomic list.
fn item_pe(kind: &ListKind, items: Ty<'_>, item: &Value) -> Option<Pe> {
    match kind {
        ListKind::Atomic => None,
        ListKind::Set => Some(Pe::Value(item.clone())),
        ListKind::Map(keys) => {
            let mut fields: Vec<(String, Value)> = keys
                .iter()
                .filter_map(|k| {
                    item.get(k)
                        .cloned()
                        .or_else(|| items.default_of(k))
                        .map(|v| (k.clone(), v))
                })
                .collect();
            fields.sort_by(|a, b| a.0.cmp(&b.0));
            Some(Pe::Key(fields))
        }
    }
}

/// The items of a list with their path elements, first occurrence of a duplicate kept.
fn index_items<'v>(
    kind: &ListKind,
    items: Ty<'_>,
    list: &'v [Value],
) -> (Vec<Pe>, BTreeMap<Pe, &'v Value>) {
    let mut order = Vec::new();
    let mut by_pe = BTreeMap::new();
    for item in list {
        let Some(pe) = item_pe(kind, items, item) else {
            continue;
        };
        if !by_pe.contains_key(&pe) {
            by_pe.insert(pe.clone(), item);
            order.push(pe);
        }
    }
    (order, by_pe)
}

fn is_empty_collection(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => true,
        Some(Value::Object(m)) => m.is_empty(),
        Some(Value::Array(a)) => a.is_empty(),
        _ => false,
    }
}

/// Merges `rhs` (an applied configuration) into `lhs` (the live object): the configuration's
/// leaves win, maps merge key by key, associative lists item by item in the Go library's
/// order (live items keep their places, new items follow the configuration's order).
pub(crate) fn merge(lhs: Option<&Value>, rhs: Option<&Value>, ty: Ty<'_>) -> Option<Value> {
    let (l, r) = match (lhs, rhs) {
        (None, None) => return None,
        (Some(l), None) => return Some(l.clone()),
        (None, Some(r)) => return Some(r.clone()),
        (Some(l), Some(r)) => (l, r),
    };
    match (l, r) {
        (Value::Object(lm), Value::Object(rm)) => {
            if ty.map_atomic() || (lm.is_empty() && rm.is_empty()) {
                return Some(r.clone());
            }
            let mut out = Map::new();
            for (k, lv) in lm {
                let child = ty.field(k).0;
                if let Some(v) = merge(Some(lv), rm.get(k), child) {
                    out.insert(k.clone(), v);
                }
            }
            for (k, rv) in rm {
                if !lm.contains_key(k) {
                    out.insert(k.clone(), rv.clone());
                }
            }
            Some(Value::Object(out))
        }
        (Value::Array(la), Value::Array(ra)) => {
            let kind = ty.list_kind();
            if kind == ListKind::Atomic || (la.is_empty() && ra.is_empty()) {
                return Some(r.clone());
            }
            Some(Value::Array(merge_lists(&kind, ty.items(), la, ra)))
        }
        _ => Some(r.clone()),
    }
}

/// structured-merge-diff's associative list merge order.
fn merge_lists(kind: &ListKind, items: Ty<'_>, la: &[Value], ra: &[Value]) -> Vec<Value> {
    let (lpes, lmap) = index_items(kind, items, la);
    let (rpes, rmap) = index_items(kind, items, ra);
    let mut shared = rpes.iter().filter(|pe| lmap.contains_key(*pe));
    let mut next_shared = shared.next();
    let mut merged_rhs = std::collections::BTreeSet::new();
    let mut out = Vec::with_capacity(la.len().max(ra.len()));
    let (mut li, mut ri) = (0, 0);
    while li < lpes.len() || ri < rpes.len() {
        if li < lpes.len() && ri < rpes.len() {
            let pe = &lpes[li];
            if *pe == rpes[ri] {
                merged_rhs.insert(pe.clone());
                out.extend(merge(lmap.get(pe).copied(), rmap.get(pe).copied(), items));
                li += 1;
                ri += 1;
                next_shared = shared.next();
                continue;
            }
            if rmap.contains_key(pe) && next_shared.is_some_and(|n| n != pe) {
                li += 1;
                continue;
            }
        }
        if li < lpes.len() {
            let pe = &lpes[li];
            if !rmap.contains_key(pe) {
                out.extend(lmap.get(pe).map(|v| (*v).clone()));
                li += 1;
                continue;
            } else if merged_rhs.contains(pe) {
                li += 1;
            }
        }
        if ri < rpes.len() {
            let pe = &rpes[ri];
            merged_rhs.insert(pe.clone());
            out.extend(merge(lmap.get(pe).copied(), rmap.get(pe).copied(), items));
            ri += 1;
            if next_shared == Some(pe) {
                next_shared = shared.next();
            }
        }
    }
    out
}

/// The set of fields `value` sets (structured-merge-diff's `ToFieldSet`): every leaf, every
/// list item, and every map entry that is null, empty, or not a declared struct field.
pub(crate) fn field_set(value: &Value, ty: Ty<'_>) -> Set {
    let mut set = Set::default();
    walk_set(value, ty, &mut Vec::new(), &mut set);
    set
}

fn walk_set(v: &Value, ty: Ty<'_>, path: &mut Vec<Pe>, set: &mut Set) {
    match v {
        Value::Object(m) => {
            if ty.map_atomic() {
                set.insert(path);
                return;
            }
            for (k, child) in m {
                let (cty, declared) = ty.field(k);
                path.push(Pe::Field(k.clone()));
                walk_set(child, cty, path, set);
                let empty = child.is_null() || child.as_object().is_some_and(Map::is_empty);
                if empty || !declared {
                    set.insert(path);
                }
                path.pop();
            }
        }
        Value::Array(a) => {
            let kind = ty.list_kind();
            if kind == ListKind::Atomic {
                set.insert(path);
                return;
            }
            let items = ty.items();
            let (order, by_pe) = index_items(&kind, items, a);
            for pe in order {
                path.push(pe.clone());
                if let Some(item) = by_pe.get(&pe) {
                    walk_set(item, items, path, set);
                }
                set.insert(path);
                path.pop();
            }
        }
        _ => set.insert(path),
    }
}

/// What changed from one value to another (structured-merge-diff's `Comparison`).
#[derive(Debug, Default)]
pub(crate) struct Comparison {
    /// Fields only the new value has.
    pub added: Set,
    /// Leaves present in both with different values.
    pub modified: Set,
    /// Fields only the old value has.
    pub removed: Set,
}

/// Compares `old` with `new`.
pub(crate) fn compare(old: &Value, new: &Value, ty: Ty<'_>) -> Comparison {
    let mut c = Comparison::default();
    walk_compare(Some(old), Some(new), ty, &mut Vec::new(), &mut c);
    c
}

fn leaf(l: Option<&Value>, r: Option<&Value>, path: &[Pe], c: &mut Comparison) {
    match (l, r) {
        (None, Some(_)) => c.added.insert(path),
        (Some(_), None) => c.removed.insert(path),
        (Some(a), Some(b)) if a != b => c.modified.insert(path),
        _ => {}
    }
}

fn walk_compare(
    l: Option<&Value>,
    r: Option<&Value>,
    ty: Ty<'_>,
    path: &mut Vec<Pe>,
    c: &mut Comparison,
) {
    let shape = |v: Option<&Value>| match v {
        Some(Value::Object(_)) => 1,
        Some(Value::Array(_)) => 2,
        Some(_) => 3,
        None => 0,
    };
    let (mut sl, mut sr) = (shape(l), shape(r));
    // A null on one side is an empty collection of the other side's shape (a Go zero value
    // without `omitempty`): present, so not itself added or removed.
    if l == Some(&Value::Null) && (sr == 1 || sr == 2) {
        sl = sr;
    }
    if r == Some(&Value::Null) && (sl == 1 || sl == 2) {
        sr = sl;
    }
    if sl != 0 && sr != 0 && sl != sr {
        leaf(l, r, path, c);
        return;
    }
    let both_empty = is_empty_collection(l) && is_empty_collection(r);
    match sl.max(sr) {
        1 => {
            if ty.map_atomic() || both_empty {
                leaf(l, r, path, c);
                return;
            }
            let empty = Map::new();
            let lm = l.and_then(Value::as_object).unwrap_or(&empty);
            let rm = r.and_then(Value::as_object).unwrap_or(&empty);
            let mut keys: Vec<&String> = lm.keys().chain(rm.keys()).collect();
            keys.sort();
            keys.dedup();
            for k in keys {
                path.push(Pe::Field(k.clone()));
                walk_compare(lm.get(k), rm.get(k), ty.field(k).0, path, c);
                path.pop();
            }
        }
        2 => {
            let kind = ty.list_kind();
            if kind == ListKind::Atomic || both_empty {
                leaf(l, r, path, c);
                return;
            }
            let items = ty.items();
            let none: Vec<Value> = Vec::new();
            let la = l.and_then(Value::as_array).unwrap_or(&none);
            let ra = r.and_then(Value::as_array).unwrap_or(&none);
            let (lpes, lmap) = index_items(&kind, items, la);
            let (rpes, rmap) = index_items(&kind, items, ra);
            let mut all = lpes;
            all.extend(rpes.into_iter().filter(|pe| !lmap.contains_key(pe)));
            for pe in all {
                path.push(pe.clone());
                walk_compare(
                    lmap.get(&pe).copied(),
                    rmap.get(&pe).copied(),
                    items,
                    path,
                    c,
                );
                path.pop();
            }
        }
        _ => {
            leaf(l, r, path, c);
            return;
        }
    }
    if l.is_none() {
        c.added.insert(path);
    } else if r.is_none() {
        c.removed.insert(path);
    }
}

/// `set` with every declared struct field that has children also a member
/// (structured-merge-diff's `EnsureNamedFieldsAreMembers`).
pub(crate) fn with_named_fields(set: &Set, ty: Ty<'_>) -> Set {
    let mut out = Set {
        members: set.members.clone(),
        children: BTreeMap::new(),
    };
    for (pe, child) in &set.children {
        let cty = match pe {
            Pe::Field(name) => {
                let (cty, declared) = ty.field(name);
                if declared {
                    out.members.insert(pe.clone());
                }
                cty
            }
            _ => ty.items(),
        };
        out.children
            .insert(pe.clone(), with_named_fields(child, cty));
    }
    out
}

/// Removes from `value` what the applier owned last time (`last`) and nobody owns now
/// (`owned`), both with named fields as members: the outcome of structured-merge-diff's
/// `prune` (remove the last applied set, add back owned items, add back items the applier
/// never owned).
pub(crate) fn prune(value: &mut Value, ty: Ty<'_>, last: &Set, owned: Option<&Set>) {
    let gone =
        |pe: &Pe| last.members.contains(pe) && !owned.is_some_and(|o| o.members.contains(pe));
    match value {
        Value::Object(m) => {
            if ty.map_atomic() {
                return;
            }
            let keys: Vec<String> = m.keys().cloned().collect();
            for k in keys {
                let pe = Pe::Field(k.clone());
                if gone(&pe) {
                    m.remove(&k);
                } else if let (Some(sub), Some(child)) = (last.child(&pe), m.get_mut(&k)) {
                    prune(child, ty.field(&k).0, sub, owned.and_then(|o| o.child(&pe)));
                }
            }
        }
        Value::Array(a) => {
            let kind = ty.list_kind();
            if kind == ListKind::Atomic {
                return;
            }
            let items = ty.items();
            a.retain_mut(|item| {
                let Some(pe) = item_pe(&kind, items, item) else {
                    return true;
                };
                if gone(&pe) {
                    return false;
                }
                if let Some(sub) = last.child(&pe) {
                    prune(item, items, sub, owned.and_then(|o| o.child(&pe)));
                }
                true
            });
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn f(n: &str) -> Pe {
        Pe::Field(n.to_owned())
    }

    fn deploy() -> Ty<'static> {
        Ty::builtin("apps", "v1", "Deployment")
    }

    fn key(name: &str) -> Pe {
        Pe::Key(vec![("name".into(), json!(name))])
    }

    /// structured-merge-diff merges containers by name and keeps the live order, appending new
    /// items in the configuration's order; scalars from the configuration win.
    #[test]
    fn merge_by_list_map_keys() {
        let live = json!({"spec": {"template": {"spec": {"containers": [
            {"name": "a", "image": "a:1"}, {"name": "b", "image": "b:1"}]}}}});
        let cfg = json!({"spec": {"template": {"spec": {"containers": [
            {"name": "c", "image": "c:1"}, {"name": "a", "image": "a:2"}]}}}});
        let out = merge(Some(&live), Some(&cfg), deploy()).unwrap();
        let names: Vec<(&str, &str)> = out["spec"]["template"]["spec"]["containers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| (c["name"].as_str().unwrap(), c["image"].as_str().unwrap()))
            .collect();
        assert_eq!(names, [("c", "c:1"), ("a", "a:2"), ("b", "b:1")]);
        // Atomic lists (args) and atomic maps (selector) are replaced whole.
        let live = json!({"spec": {"selector": {"matchLabels": {"a": "1", "b": "2"}},
            "template": {"spec": {"containers": [{"name": "a", "args": ["x", "y"]}]}}}});
        let cfg = json!({"spec": {"selector": {"matchLabels": {"a": "1"}},
            "template": {"spec": {"containers": [{"name": "a", "args": ["z"]}]}}}});
        let out = merge(Some(&live), Some(&cfg), deploy()).unwrap();
        assert_eq!(out["spec"]["selector"], json!({"matchLabels": {"a": "1"}}));
        assert_eq!(
            out["spec"]["template"]["spec"]["containers"][0]["args"],
            json!(["z"])
        );
        // Sets (finalizers) merge by value.
        let out = merge(
            Some(&json!({"metadata": {"finalizers": ["a", "b"]}})),
            Some(&json!({"metadata": {"finalizers": ["c", "a"]}})),
            deploy(),
        )
        .unwrap();
        assert_eq!(out["metadata"]["finalizers"], json!(["c", "a", "b"]));
    }

    /// `ToFieldSet`: list items and declared-but-empty or undeclared map entries are members,
    /// atomic nodes are single leaves.
    #[test]
    fn field_sets_follow_to_field_set() {
        let cfg = json!({"apiVersion": "apps/v1", "metadata": {"labels": {"app": "x"}},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "x"}},
                "template": {"spec": {"containers": [{"name": "a", "image": "i",
                    "resources": {}}]}}}});
        let s = field_set(&cfg, deploy());
        let c = [
            f("spec"),
            f("template"),
            f("spec"),
            f("containers"),
            key("a"),
        ];
        assert!(s.has(&c));
        assert!(s.has(&[c.as_slice(), &[f("resources")]].concat()));
        assert!(s.has(&[f("spec"), f("selector")]));
        assert!(!s.has(&[f("spec"), f("selector"), f("matchLabels")]));
        assert!(s.has(&[f("metadata"), f("labels"), f("app")]));
        assert!(!s.has(&[f("metadata"), f("labels")]));
        assert!(!s.has(&[f("spec")]));
        assert!(s.has(&[f("apiVersion")]));
    }

    #[test]
    fn compare_reports_added_modified_removed() {
        let old = json!({"spec": {"replicas": 1, "paused": true,
            "template": {"spec": {"containers": [{"name": "a", "image": "1"}]}}}});
        let new = json!({"spec": {"replicas": 2, "minReadySeconds": 3,
            "template": {"spec": {"containers": [{"name": "a", "image": "1"},
                {"name": "b", "image": "2"}]}}}});
        let c = compare(&old, &new, deploy());
        assert!(c.modified.has(&[f("spec"), f("replicas")]));
        assert!(c.added.has(&[f("spec"), f("minReadySeconds")]));
        assert!(c.removed.has(&[f("spec"), f("paused")]));
        let b = [
            f("spec"),
            f("template"),
            f("spec"),
            f("containers"),
            key("b"),
        ];
        assert!(c.added.has(&b));
        assert!(c.added.has(&[b.as_slice(), &[f("image")]].concat()));
        assert!(!c.added.has(&[f("spec")]));
        // A map added whole is a member as well as its leaves.
        let c = compare(
            &json!({}),
            &json!({"metadata": {"labels": {"a": "1"}}}),
            deploy(),
        );
        assert!(c.added.has(&[f("metadata"), f("labels")]));
    }

    /// `prune`: a field the applier owned and no longer applies goes unless someone else owns
    /// it.
    #[test]
    fn prune_removes_fields_given_up() {
        let mut v = json!({"metadata": {"labels": {"a": "1", "b": "2", "c": "3"}}});
        let mut last = Set::default();
        last.insert(&[f("metadata"), f("labels"), f("a")]);
        last.insert(&[f("metadata"), f("labels"), f("b")]);
        let mut owned = Set::default();
        owned.insert(&[f("metadata"), f("labels"), f("b")]);
        let t = deploy();
        prune(
            &mut v,
            t,
            &with_named_fields(&last, t),
            Some(&with_named_fields(&owned, t)),
        );
        assert_eq!(v, json!({"metadata": {"labels": {"b": "2", "c": "3"}}}));
    }
}
