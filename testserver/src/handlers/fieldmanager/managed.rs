//! `metadata.managedFields`: who owns which fields, and how a write changes that.
//!
//! Mirrors k8s.io/apimachinery's `managedfields` package and structured-merge-diff's
//! `merge.Updater`:
//! - an entry is identified by manager, operation, subresource and, for `Update` entries, the
//!   apiVersion (`BuildManagerIdentifier`), so each identity has one entry and repeated writes
//!   of one manager merge into it;
//! - an `Update` (create, update, patch) takes every field it added or changed away from the
//!   other managers and adds them to its entry, whose `time` moves; fields it removed leave
//!   every entry (`Updater.Update` under the name `current-operation`, then
//!   `managedFieldsUpdater`);
//! - an `Apply` owns exactly the fields of its configuration; a field another manager owns
//!   that the apply adds or changes is a conflict unless forced, when it changes hands
//!   (`Updater.Apply`);
//! - `apiVersion`, `kind`, the `metadata` node and its server-owned fields are never owned
//!   (`stripMetaManager`); empty entries are dropped; entries are written sorted by operation,
//!   time, manager, apiVersion and subresource (`sortEncodedManagedFields`).

use serde_json::{Value, json};

use crate::handlers::fieldmanager::fieldset::{Pe, Set, path_string};
use crate::handlers::fieldmanager::merge::{
    Comparison, compare, field_set, merge, prune, with_named_fields,
};
use crate::handlers::fieldmanager::types::Ty;
use crate::status::ApiError;

/// `Apply` or `Update`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Operation {
    /// Server-side apply.
    Apply,
    /// Any other write.
    Update,
}

impl Operation {
    fn as_str(self) -> &'static str {
        match self {
            Operation::Apply => "Apply",
            Operation::Update => "Update",
        }
    }
}

/// One `managedFields` entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    /// The manager's name.
    pub manager: String,
    /// How it wrote.
    pub operation: Operation,
    /// The apiVersion it wrote through.
    pub api_version: String,
    /// `status`, `scale` or empty.
    pub subresource: String,
    /// When its fields last changed.
    pub time: Option<String>,
    /// The fields it owns.
    pub set: Set,
}

impl Entry {
    /// The identity entries merge on: an applier is one entry whatever version it applied
    /// through; an updater is one entry per version.
    fn same_identity(&self, other: &Entry) -> bool {
        self.manager == other.manager
            && self.operation == other.operation
            && self.subresource == other.subresource
            && (self.operation == Operation::Apply || self.api_version == other.api_version)
    }

    /// `BuildManagerIdentifier`'s JSON, the order of conflict messages.
    fn identifier(&self) -> String {
        // Go writes the struct's fields in declaration order.
        let q = |s: &str| Value::String(s.to_owned()).to_string();
        let mut id = format!(
            "{{\"manager\":{},\"operation\":{}",
            q(&self.manager),
            q(self.operation.as_str())
        );
        if self.operation == Operation::Update {
            id.push_str(&format!(",\"apiVersion\":{}", q(&self.api_version)));
        }
        if !self.subresource.is_empty() {
            id.push_str(&format!(",\"subresource\":{}", q(&self.subresource)));
        }
        id.push('}');
        id
    }

    /// `printManager`: `"kubectl"`, `"kubectl" with subresource "status"`,
    /// `"kube-controller-manager" using apps/v1`.
    fn printed(&self) -> String {
        let mut s = format!("{:?}", self.manager);
        if !self.subresource.is_empty() {
            s = format!("{s} with subresource {:?}", self.subresource);
        }
        if self.operation == Operation::Update {
            s = format!("{s} using {}", self.api_version);
        }
        s
    }
}

/// Decodes `metadata.managedFields` (`None` when absent).
pub(crate) fn decode(v: &Value) -> Result<Vec<Entry>, String> {
    let Some(list) = v.as_array() else {
        return if v.is_null() {
            Ok(Vec::new())
        } else {
            Err("managedFields must be a list".to_owned())
        };
    };
    let mut out: Vec<Entry> = Vec::new();
    for e in list {
        let s = |k: &str| e[k].as_str().unwrap_or_default().to_owned();
        let operation = match e["operation"].as_str() {
            Some("Apply") => Operation::Apply,
            Some("Update") => Operation::Update,
            other => return Err(format!("invalid operation {other:?}")),
        };
        if e["fieldsType"].as_str() != Some("FieldsV1") {
            return Err(format!(
                "invalid fieldsType {:?}: only FieldsV1 is supported",
                e["fieldsType"]
            ));
        }
        let entry = Entry {
            manager: s("manager"),
            operation,
            api_version: s("apiVersion"),
            subresource: s("subresource"),
            time: e["time"].as_str().map(str::to_owned),
            set: Set::from_fields_v1(&e["fieldsV1"])?,
        };
        match out.iter_mut().find(|o| o.same_identity(&entry)) {
            Some(o) => *o = entry,
            None => out.push(entry),
        }
    }
    Ok(out)
}

/// Encodes entries as `metadata.managedFields`, sorted as kube-apiserver sorts them.
pub(crate) fn encode(entries: &[Entry]) -> Value {
    let mut sorted: Vec<&Entry> = entries.iter().filter(|e| !e.set.is_empty()).collect();
    sorted.sort_by(|p, q| {
        p.operation
            .cmp(&q.operation)
            .then_with(|| p.time.cmp(&q.time))
            .then_with(|| p.manager.cmp(&q.manager))
            .then_with(|| p.api_version.cmp(&q.api_version))
            .then_with(|| p.subresource.cmp(&q.subresource))
    });
    Value::Array(
        sorted
            .into_iter()
            .map(|e| {
                let mut v = json!({
                    "manager": e.manager,
                    "operation": e.operation.as_str(),
                    "apiVersion": e.api_version,
                    "fieldsType": "FieldsV1",
                    "fieldsV1": e.set.to_fields_v1(),
                });
                if let Some(t) = &e.time {
                    v["time"] = json!(t);
                }
                if !e.subresource.is_empty() {
                    v["subresource"] = json!(e.subresource);
                }
                v
            })
            .collect(),
    )
}

/// Which part of the object a write may own (the registry's reset fields): the main resource
/// of a kind with a status subresource never owns `status`, the `status` subresource owns
/// only `status`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Scope {
    /// Everything.
    All,
    /// Everything but `status`.
    NoStatus,
    /// Only `status`.
    StatusOnly,
}

impl Scope {
    fn filter(self, mut set: Set) -> Set {
        let status = Pe::Field("status".to_owned());
        match self {
            Scope::All => set,
            Scope::NoStatus => {
                set.members.remove(&status);
                set.children.remove(&status);
                set
            }
            Scope::StatusOnly => {
                let mut out = Set::default();
                if set.members.contains(&status) {
                    out.members.insert(status.clone());
                }
                if let Some(c) = set.children.remove(&status) {
                    out.children.insert(status, c);
                }
                out
            }
        }
    }

    fn filter_comparison(self, c: Comparison) -> Comparison {
        Comparison {
            added: self.filter(c.added),
            modified: self.filter(c.modified),
            removed: self.filter(c.removed),
        }
    }
}

/// Removes the fields nobody owns (`stripMetaManager`).
fn strip_meta(set: &Set) -> Set {
    let mut strip = Set::default();
    let f = |n: &str| Pe::Field(n.to_owned());
    strip.insert(&[f("apiVersion")]);
    strip.insert(&[f("kind")]);
    strip.insert(&[f("metadata")]);
    for n in [
        "name",
        "namespace",
        "creationTimestamp",
        "selfLink",
        "uid",
        "clusterName",
        "generation",
        "managedFields",
        "resourceVersion",
    ] {
        strip.insert(&[f("metadata"), f(n)]);
    }
    set.difference(&strip)
}

/// One field owned by another manager that an apply would change.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Conflict {
    manager: Entry,
    path: Vec<Pe>,
}

/// The 409 kube-apiserver answers for conflicts (`internal.NewConflictError`): one cause per
/// field, `reason: FieldManagerConflict`.
pub(crate) fn conflict_error(conflicts: &[Conflict]) -> ApiError {
    let causes: Vec<Value> = conflicts
        .iter()
        .map(|c| {
            json!({
                "reason": "FieldManagerConflict",
                "message": format!("conflict with {}", c.manager.printed()),
                "field": path_string(&c.path),
            })
        })
        .collect();
    let message = match conflicts {
        [one] => format!(
            "Apply failed with 1 conflict: conflict with {}: {}",
            one.manager.printed(),
            path_string(&one.path)
        ),
        _ => {
            let mut managers: Vec<&Entry> = Vec::new();
            for c in conflicts {
                if !managers.iter().any(|m| m.same_identity(&c.manager)) {
                    managers.push(&c.manager);
                }
            }
            managers.sort_by_key(|m| m.identifier());
            let mut lines = Vec::new();
            for m in managers {
                lines.push(format!("conflicts with {}:", m.printed()));
                for c in conflicts.iter().filter(|c| c.manager.same_identity(m)) {
                    lines.push(format!("- {}", path_string(&c.path)));
                }
            }
            format!(
                "Apply failed with {} conflicts: {}",
                conflicts.len(),
                lines.join("\n")
            )
        }
    };
    let mut e = ApiError::new(409, "Conflict", message);
    e.details = Some(json!({"causes": causes}));
    e
}

/// The shared part of `Updater.update`: other managers lose the fields this write removed,
/// and the fields it added or changed (or, without `force`, those are conflicts).
fn take_from_others(
    entries: &mut Vec<Entry>,
    me: &Entry,
    cmp: &Comparison,
    force: bool,
) -> Result<(), Vec<Conflict>> {
    let changed = cmp.modified.union(&cmp.added);
    let mut conflicts = Vec::new();
    let mut order: Vec<usize> = (0..entries.len()).collect();
    order.sort_by_key(|i| entries[*i].identifier());
    for i in order {
        let e = &entries[i];
        if e.same_identity(me) {
            continue;
        }
        let taken = e.set.intersection(&changed);
        conflicts.extend(taken.paths().into_iter().map(|path| Conflict {
            manager: e.clone(),
            path,
        }));
    }
    if !force && !conflicts.is_empty() {
        return Err(conflicts);
    }
    for e in entries.iter_mut().filter(|e| !e.same_identity(me)) {
        e.set = e.set.difference(&changed).difference(&cmp.removed);
    }
    entries.retain(|e| !e.set.is_empty());
    Ok(())
}

/// `v` as the typed object kube-apiserver compares: laid over `zero`, the kind's zero value.
fn typed(zero: &Value, v: &Value, ty: Ty<'_>) -> Value {
    if zero.as_object().is_some_and(|z| z.is_empty()) {
        return v.clone();
    }
    merge(Some(zero), Some(v), ty).unwrap_or_else(|| v.clone())
}

/// Records an `Update` by `me` from `old` to `new` (both without managedFields; `zero` is the
/// kind's zero value).
pub(crate) fn record_update(
    entries: &mut Vec<Entry>,
    me: Entry,
    old: &Value,
    new: &Value,
    (ty, zero): (Ty<'_>, &Value),
    scope: Scope,
) {
    let cmp = scope.filter_comparison(compare(&typed(zero, old, ty), &typed(zero, new, ty), ty));
    // The current operation is a manager of its own: every entry, this manager's earlier
    // one included, loses what changed; force is implied.
    let changed = strip_meta(&cmp.modified.union(&cmp.added));
    let current = Entry {
        manager: String::new(),
        ..me.clone()
    };
    let _ = take_from_others(entries, &current, &cmp, true);
    if changed.is_empty() {
        return;
    }
    match entries.iter_mut().find(|e| e.same_identity(&me)) {
        Some(e) => {
            e.set = e.set.union(&changed);
            e.api_version = me.api_version;
            e.time = me.time;
        }
        None => entries.push(Entry { set: changed, ..me }),
    }
}

/// How many `Update` entries an object keeps (`DefaultMaxUpdateManagers`).
pub(crate) const MAX_UPDATE_MANAGERS: usize = 10;
/// The manager the oldest `Update` entries are folded into.
const ANCIENT_CHANGES: &str = "ancient-changes";

/// Caps the `Update` entries at [`MAX_UPDATE_MANAGERS`] after an update, as
/// `capManagersManager.capUpdateManagers` does: oldest first (by time in seconds, then by
/// identifier), the first entry seen of an apiVersion stays and each further one of that
/// version is merged into an `ancient-changes` entry of the version (which the first becomes
/// when there is none yet), taking the merged entry's time, until the cap holds.
pub(crate) fn cap_update_managers(entries: &mut Vec<Entry>) {
    let mut updaters: Vec<Entry> = entries
        .iter()
        .filter(|e| e.operation == Operation::Update)
        .cloned()
        .collect();
    if updaters.len() <= MAX_UPDATE_MANAGERS {
        return;
    }
    let seconds = |e: &Entry| {
        e.time
            .as_deref()
            .and_then(|t| t.parse::<jiff::Timestamp>().ok())
            .map_or(0, |t| t.as_second())
    };
    updaters.sort_by_cached_key(|e| (seconds(e), e.identifier()));
    let mut first_of_version: Vec<(String, Entry)> = Vec::new();
    let mut length = updaters.len();
    for e in updaters {
        if length <= MAX_UPDATE_MANAGERS {
            break;
        }
        let bucket = Entry {
            manager: ANCIENT_CHANGES.to_owned(),
            operation: Operation::Update,
            api_version: e.api_version.clone(),
            subresource: String::new(),
            time: None,
            set: Set::default(),
        };
        let Some((_, first)) = first_of_version.iter().find(|(v, _)| *v == e.api_version) else {
            first_of_version.push((e.api_version.clone(), e));
            continue;
        };
        if !entries.iter().any(|x| x.same_identity(&bucket))
            && let Some(f) = entries.iter_mut().find(|x| x.same_identity(first))
        {
            f.manager = bucket.manager.clone();
            f.subresource = String::new();
        }
        if !e.same_identity(&bucket) {
            entries.retain(|x| !x.same_identity(&e));
        }
        if let Some(b) = entries.iter_mut().find(|x| x.same_identity(&bucket)) {
            b.set = e.set.union(&b.set);
            b.time = e.time;
        }
        length -= 1;
    }
}

/// Applies `config` by `me` to `live` (both without managedFields; `live` is the kind's zero
/// value `zero` when the object does not exist): the merged object, or the 409 of the
/// conflicts.
pub(crate) fn apply(
    entries: &mut Vec<Entry>,
    me: Entry,
    live: &Value,
    config: &Value,
    typing: (Ty<'_>, &Value),
    scope: Scope,
    force: bool,
) -> Result<Value, ApiError> {
    try_apply(entries, me, live, config, typing, scope, force).map_err(|c| conflict_error(&c))
}

/// [`apply`] with the conflicts as they are; `entries` are unchanged when there are some.
pub(crate) fn try_apply(
    entries: &mut Vec<Entry>,
    me: Entry,
    live: &Value,
    config: &Value,
    (ty, zero): (Ty<'_>, &Value),
    scope: Scope,
    force: bool,
) -> Result<Value, Vec<Conflict>> {
    let mut merged = merge(Some(live), Some(config), ty).unwrap_or_else(|| json!({}));
    let applied = scope.filter(field_set(config, ty));
    let last = entries
        .iter()
        .find(|e| e.same_identity(&me))
        .map(|e| e.set.clone());
    if let Some(last) = last.filter(|l| !l.is_empty()) {
        let owned = entries
            .iter()
            .filter(|e| !e.same_identity(&me))
            .fold(applied.clone(), |acc, e| acc.union(&e.set));
        prune(
            &mut merged,
            ty,
            &with_named_fields(&last, ty),
            Some(&with_named_fields(&owned, ty)),
        );
    }
    let cmp = scope.filter_comparison(compare(
        &typed(zero, live, ty),
        &typed(zero, &merged, ty),
        ty,
    ));
    take_from_others(entries, &me, &cmp, force)?;
    let set = strip_meta(&applied);
    entries.retain(|e| !e.same_identity(&me));
    if !set.is_empty() {
        entries.push(Entry { set, ..me });
    }
    Ok(merged)
}

/// The fields of `live`'s client-side apply annotation (`last_applied`, already parsed) that
/// still hold the value it recorded: those a `kubectl` server-side apply may take without a
/// conflict (`lastAppliedManager.allowedConflictsFromLastApplied`). `None` when the
/// annotation was written through another apiVersion.
pub(crate) fn allowed_by_last_applied(
    last_applied: &Value,
    live: &Value,
    api_version: &str,
    (ty, zero): (Ty<'_>, &Value),
) -> Option<Set> {
    if last_applied["apiVersion"].as_str() != Some(api_version) {
        return None;
    }
    let c = compare(last_applied, &typed(zero, live, ty), ty);
    Some(
        field_set(last_applied, ty)
            .difference(&c.modified)
            .difference(&c.added)
            .difference(&c.removed),
    )
}

/// The conflicts whose field `allowed` does not hold.
pub(crate) fn not_allowed(conflicts: Vec<Conflict>, allowed: &Set) -> Vec<Conflict> {
    conflicts
        .into_iter()
        .filter(|c| !allowed.has(&c.path))
        .collect()
}

/// Whether `new` differs from `old` in nothing this write may own.
pub(crate) fn unchanged(
    old: &Value,
    new: &Value,
    (ty, zero): (Ty<'_>, &Value),
    scope: Scope,
) -> bool {
    let c = scope.filter_comparison(compare(&typed(zero, old, ty), &typed(zero, new, ty), ty));
    c.added.is_empty() && c.modified.is_empty() && c.removed.is_empty()
}

/// Whether two lists of entries are the same apart from their times.
pub(crate) fn same_but_time(a: &[Entry], b: &[Entry]) -> bool {
    a.len() == b.len()
        && a.iter().all(|x| {
            b.iter()
                .any(|y| y.same_identity(x) && y.set == x.set && y.api_version == x.api_version)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(manager: &str, op: Operation) -> Entry {
        Entry {
            manager: manager.to_owned(),
            operation: op,
            api_version: "v1".to_owned(),
            subresource: String::new(),
            time: Some("2026-01-01T00:00:00Z".to_owned()),
            set: Set::default(),
        }
    }

    fn cm() -> Ty<'static> {
        Ty::builtin("", "v1", "ConfigMap")
    }

    fn f(n: &str) -> Pe {
        Pe::Field(n.to_owned())
    }

    /// Eleven updaters of one version, one second apart, an older one of another version and
    /// an applier: the three oldest of the first version become one `ancient-changes` entry
    /// with the union of their fields and the time of the youngest; the other version's only
    /// entry is the first of its version and stays; the applier is never folded.
    #[test]
    fn update_entries_are_capped_at_ten() {
        let mut entries: Vec<Entry> = (0..11)
            .map(|i| {
                let mut e = entry(&format!("m{i:02}"), Operation::Update);
                e.time = Some(format!("2026-01-01T00:00:{i:02}Z"));
                e.set.insert(&[f("data"), f(&format!("k{i}"))]);
                e
            })
            .collect();
        entries.push(entry("applier", Operation::Apply));
        let mut other_version = entry("apps", Operation::Update);
        other_version.api_version = "v2".to_owned();
        other_version.time = Some("2025-01-01T00:00:00Z".to_owned());
        entries.push(other_version);
        cap_update_managers(&mut entries);
        let updates: Vec<&Entry> = entries
            .iter()
            .filter(|e| e.operation == Operation::Update)
            .collect();
        assert_eq!(updates.len(), MAX_UPDATE_MANAGERS);
        let ancient = updates
            .iter()
            .find(|e| e.manager == ANCIENT_CHANGES)
            .expect("a bucket");
        for k in ["k0", "k1", "k2"] {
            assert!(ancient.set.has(&[f("data"), f(k)]), "{k}");
        }
        assert!(!ancient.set.has(&[f("data"), f("k3")]));
        assert_eq!(ancient.time.as_deref(), Some("2026-01-01T00:00:02Z"));
        assert!(entries.iter().any(|e| e.manager == "applier"));
        // The only entry of version v2, though the oldest, is the first of its version: kept.
        assert!(entries.iter().any(|e| e.manager == "apps"));
        assert!(
            !entries
                .iter()
                .any(|e| e.manager == "m00" || e.manager == "m01")
        );

        // Ten updaters: nothing to fold.
        let mut ten: Vec<Entry> = entries.clone();
        ten.retain(|e| e.manager != "apps");
        let before = ten.clone();
        cap_update_managers(&mut ten);
        assert_eq!(ten, before);
    }

    #[test]
    fn managed_fields_round_trip_and_sort() {
        let v = json!([
            {"manager": "b", "operation": "Update", "apiVersion": "v1", "time": "2026-01-02T00:00:00Z",
             "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {"f:x": {}}}},
            {"manager": "a", "operation": "Apply", "apiVersion": "v1", "time": "2026-01-03T00:00:00Z",
             "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {"f:y": {}}}, "subresource": "status"},
        ]);
        let entries = decode(&v).unwrap();
        assert_eq!(entries.len(), 2);
        let out = encode(&entries);
        // Apply sorts before Update.
        assert_eq!(out[0]["manager"], "a");
        assert_eq!(out[1], v[0]);
        assert!(decode(&json!([{"operation": "Nope"}])).is_err());
        assert!(decode(&json!([{"operation": "Apply", "fieldsType": "FieldsV2"}])).is_err());
    }

    /// An Update takes the fields it changes from other managers and merges into its own
    /// entry; fields it removes leave every entry.
    #[test]
    fn updates_take_ownership_and_merge() {
        let mut entries = Vec::new();
        let old = json!({});
        let v1 = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"},
            "data": {"a": "1", "b": "2"}});
        record_update(
            &mut entries,
            entry("x", Operation::Update),
            &old,
            &v1,
            (cm(), &json!({})),
            Scope::All,
        );
        assert_eq!(entries.len(), 1);
        assert!(entries[0].set.has(&[f("data"), f("a")]));
        assert!(entries[0].set.has(&[f("data")]));
        assert!(!entries[0].set.has(&[f("metadata"), f("name")]));
        assert!(!entries[0].set.has(&[f("apiVersion")]));
        let mut v2 = v1.clone();
        v2["data"]["a"] = json!("9");
        v2["data"].as_object_mut().unwrap().remove("b");
        record_update(
            &mut entries,
            entry("y", Operation::Update),
            &v1,
            &v2,
            (cm(), &json!({})),
            Scope::All,
        );
        let x = entries.iter().find(|e| e.manager == "x").unwrap();
        assert!(!x.set.has(&[f("data"), f("a")]) && !x.set.has(&[f("data"), f("b")]));
        let y = entries.iter().find(|e| e.manager == "y").unwrap();
        assert_eq!(y.set.paths(), vec![vec![f("data"), f("a")]]);
        // A no-op update records nothing.
        let before = entries.clone();
        record_update(
            &mut entries,
            entry("z", Operation::Update),
            &v2,
            &v2,
            (cm(), &json!({})),
            Scope::All,
        );
        assert_eq!(entries, before);
    }

    /// Apply: conflicts with a field another manager owns at a different value; force takes
    /// it; the same value is shared.
    #[test]
    fn apply_conflicts_and_force() {
        let live = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"},
            "data": {"a": "1"}});
        let mut owner = entry("owner", Operation::Update);
        owner.set.insert(&[f("data"), f("a")]);
        let mut entries = vec![owner];
        let cfg = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"},
            "data": {"a": "2"}});
        let me = entry("me", Operation::Apply);
        let err = apply(
            &mut entries.clone(),
            me.clone(),
            &live,
            &cfg,
            (cm(), &json!({})),
            Scope::All,
            false,
        )
        .unwrap_err();
        assert_eq!(err.code, 409);
        assert_eq!(
            err.message,
            "Apply failed with 1 conflict: conflict with \"owner\" using v1: .data.a"
        );
        let causes = &err.details.as_ref().unwrap()["causes"];
        assert_eq!(causes[0]["field"], ".data.a");
        assert_eq!(causes[0]["reason"], "FieldManagerConflict");
        // Same value: shared, no conflict.
        let same = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"},
            "data": {"a": "1"}});
        let mut shared = entries.clone();
        apply(
            &mut shared,
            me.clone(),
            &live,
            &same,
            (cm(), &json!({})),
            Scope::All,
            false,
        )
        .unwrap();
        assert_eq!(shared.len(), 2);
        // Forced: ownership moves.
        let merged = apply(
            &mut entries,
            me,
            &live,
            &cfg,
            (cm(), &json!({})),
            Scope::All,
            true,
        )
        .unwrap();
        assert_eq!(merged["data"]["a"], "2");
        assert_eq!(entries.len(), 1);
        assert_eq!(entries[0].manager, "me");
    }

    /// Apply removes what the applier owned before and no longer applies, unless another
    /// manager owns it.
    #[test]
    fn apply_prunes_given_up_fields() {
        let base = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}});
        let mut cfg1 = base.clone();
        cfg1["data"] = json!({"a": "1", "b": "2", "c": "3"});
        let mut entries = Vec::new();
        let me = entry("me", Operation::Apply);
        let live = apply(
            &mut entries,
            me.clone(),
            &json!({}),
            &cfg1,
            (cm(), &json!({})),
            Scope::All,
            false,
        )
        .unwrap();
        let mut other = entry("other", Operation::Apply);
        other.set.insert(&[f("data"), f("c")]);
        entries.push(other);
        let mut cfg2 = base.clone();
        cfg2["data"] = json!({"a": "1"});
        let out = apply(
            &mut entries,
            me,
            &live,
            &cfg2,
            (cm(), &json!({})),
            Scope::All,
            false,
        )
        .unwrap();
        assert_eq!(out["data"], json!({"a": "1", "c": "3"}));
    }

    #[test]
    fn conflict_messages_group_by_manager() {
        let a = entry("a", Operation::Apply);
        let b = entry("b", Operation::Update);
        let cs = vec![
            Conflict {
                manager: b.clone(),
                path: vec![f("x")],
            },
            Conflict {
                manager: a.clone(),
                path: vec![f("y")],
            },
            Conflict {
                manager: a,
                path: vec![f("z")],
            },
        ];
        let e = conflict_error(&cs);
        assert_eq!(
            e.message,
            "Apply failed with 3 conflicts: conflicts with \"a\":\n- .y\n- .z\nconflicts with \"b\" using v1:\n- .x"
        );
        assert_eq!(e.details.unwrap()["causes"].as_array().unwrap().len(), 3);
    }
}
