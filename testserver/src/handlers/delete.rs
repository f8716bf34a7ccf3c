//! DELETE of one object and of a collection, with `DeleteOptions` as kube-apiserver reads them.
//!
//! As the generic registry (`k8s.io/apiserver/pkg/registry/generic/registry/store.go`) and the
//! garbage collector of kube-controller-manager together behave:
//! - `preconditions` (uid, resourceVersion) are checked (409 Conflict);
//! - an object with finalizers is not removed but gets `deletionTimestamp` (one MODIFIED
//!   event) and goes away with the write that removes its last finalizer;
//! - `propagationPolicy` (or the deprecated `orphanDependents`):
//!   - `Background` (the default of every served group version): the object goes at once and
//!     the collector (module `gc`) deletes its dependents afterwards;
//!   - `Orphan`: the object gets the `orphan` finalizer, its dependents lose their
//!     ownerReference to it, then the finalizer is removed and the object goes;
//!   - `Foreground`: the object gets the `foregroundDeletion` finalizer and stays (visible,
//!     with `deletionTimestamp`) while its dependents are deleted, each in the foreground
//!     too; the finalizer is removed when the last dependent is gone (at once when none has
//!     finalizers of its own, otherwise by the collector when the last one goes);
//! - `default`, `kube-system` and `kube-public` cannot be deleted (403 Forbidden, the
//!   NamespaceLifecycle admission plugin's `this namespace may not be deleted`);
//! - deleting a namespace marks it `Terminating` (`deletionTimestamp`, `status.phase`),
//!   deletes everything in it (finalizers honoured), and removes it once it is empty, as the
//!   namespace controller does; creating in a terminating namespace is forbidden (`write`);
//! - deleting a CRD removes its custom resources (DELETED events) and unregisters its
//!   versions, at once;
//! - the answer: the object where kube-apiserver's storage returns the deleted object (pods,
//!   services, namespaces, persistent volumes and claims, pod templates, service accounts,
//!   storage classes) or the object is
//!   still there (finalizers), otherwise a `Status` of `Success` naming it;
//! - `dryRun` runs all of it and keeps nothing (the caller locks with `Storage::write`).
//!
//! Pods have no kubelet here, so graceful deletion is immediate (`gracePeriodSeconds` is
//! accepted and not waited for).

use std::sync::Arc;

use serde_json::{Value, json};

use crate::handlers::params::{ListOptions, dry_run_invalid};
use crate::handlers::write::now_rfc3339;
use crate::registry::{ResourceInfo, crd_resources};
use crate::status::ApiError;
use crate::storage::{EventType, Inner, Obj, object_key};

/// The finalizer kube-apiserver adds for `propagationPolicy: Orphan`.
pub(crate) const ORPHAN: &str = "orphan";
/// The finalizer kube-apiserver adds for `propagationPolicy: Foreground`.
pub(crate) const FOREGROUND: &str = "foregroundDeletion";

/// The namespaces no DELETE removes (NamespaceLifecycle's immortal namespaces).
const IMMORTAL_NAMESPACES: [&str; 3] = ["default", "kube-system", "kube-public"];

/// How dependents follow a deleted owner.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Propagation {
    /// Dependents are deleted after the owner, by the collector.
    Background,
    /// Dependents are deleted before the owner.
    Foreground,
    /// Dependents are kept and lose their ownerReference.
    Orphan,
}

/// The parts of `DeleteOptions` this server acts on.
#[derive(Clone, Debug, Default)]
pub(crate) struct DeleteOptions {
    /// `preconditions.uid`.
    pub uid: Option<String>,
    /// `preconditions.resourceVersion`.
    pub resource_version: Option<String>,
    /// `propagationPolicy`, or the deprecated `orphanDependents`; `None` for the default.
    pub propagation: Option<Propagation>,
    /// `dryRun: [All]`.
    pub dry_run: bool,
}

impl DeleteOptions {
    /// Reads a `DeleteOptions` body or, when the body is empty, the query parameters that
    /// stand for its fields (`propagationPolicy`, `orphanDependents`, `dryRun`,
    /// `gracePeriodSeconds`), as kube-apiserver's DELETE handler does (a body wins whole),
    /// refusing what it refuses.
    pub fn parse(body: &[u8], query: &crate::handlers::params::Query) -> Result<Self, ApiError> {
        let options: Value = if body.iter().all(u8::is_ascii_whitespace) {
            let mut o = json!({});
            if let Some(p) = query.get("propagationPolicy") {
                o["propagationPolicy"] = json!(p);
            }
            if let Some(b) = query.flag("orphanDependents") {
                o["orphanDependents"] = json!(b);
            }
            if let Some(d) = query.get("dryRun") {
                o["dryRun"] = json!([d]);
            }
            if let Some(g) = query.get("gracePeriodSeconds") {
                let g: i64 = g.parse().map_err(|_| {
                    ApiError::bad_request(format!("invalid gracePeriodSeconds {g:?}"))
                })?;
                o["gracePeriodSeconds"] = json!(g);
            }
            o
        } else {
            serde_json::from_slice(body).map_err(|e| {
                ApiError::bad_request(format!("the body is not a valid DeleteOptions: {e}"))
            })?
        };
        if !options.is_object() {
            return Err(ApiError::bad_request(
                "the body is not a valid DeleteOptions: expected a JSON object",
            ));
        }
        let text = |v: &Value, field: &str| -> Result<Option<String>, ApiError> {
            match v {
                Value::Null => Ok(None),
                Value::String(s) => Ok(Some(s.clone())),
                _ => Err(ApiError::bad_request(format!(
                    "the body is not a valid DeleteOptions: {field} must be a string"
                ))),
            }
        };
        let policy = text(&options["propagationPolicy"], "propagationPolicy")?;
        let orphan = match &options["orphanDependents"] {
            Value::Null => None,
            Value::Bool(b) => Some(*b),
            _ => {
                return Err(ApiError::bad_request(
                    "the body is not a valid DeleteOptions: orphanDependents must be a boolean",
                ));
            }
        };
        let propagation = match (policy.as_deref(), orphan) {
            (Some(_), Some(_)) => {
                return Err(invalid_options(
                    "propagationPolicy: Invalid value: \"...\": orphanDependents and deletionPropagation cannot be both set",
                ));
            }
            (Some("Background"), None) => Some(Propagation::Background),
            (Some("Foreground"), None) => Some(Propagation::Foreground),
            (Some("Orphan"), None) => Some(Propagation::Orphan),
            (Some(other), None) => {
                return Err(invalid_options(&format!(
                    "propagationPolicy: Unsupported value: {other:?}: supported values: \"Background\", \"Foreground\", \"Orphan\""
                )));
            }
            (None, Some(true)) => Some(Propagation::Orphan),
            (None, Some(false)) => Some(Propagation::Background),
            (None, None) => None,
        };
        let dry_run = match &options["dryRun"] {
            Value::Null => false,
            Value::Array(values) => {
                for v in values {
                    if v.as_str() != Some("All") {
                        return Err(dry_run_invalid(v.as_str().unwrap_or(&v.to_string())));
                    }
                }
                !values.is_empty()
            }
            other => return Err(dry_run_invalid(&other.to_string())),
        };
        if !matches!(
            options["gracePeriodSeconds"],
            Value::Null | Value::Number(_)
        ) {
            return Err(ApiError::bad_request(
                "the body is not a valid DeleteOptions: gracePeriodSeconds must be an integer",
            ));
        }
        let pre = &options["preconditions"];
        Ok(Self {
            uid: text(&pre["uid"], "preconditions.uid")?,
            resource_version: text(&pre["resourceVersion"], "preconditions.resourceVersion")?,
            propagation,
            dry_run,
        })
    }
}

fn invalid_options(message: &str) -> ApiError {
    ApiError::new(
        422,
        "Invalid",
        format!("DeleteOptions.meta.k8s.io \"\" is invalid: {message}"),
    )
}

/// What a DELETE answers.
pub(crate) enum Deleted {
    /// The object (still there, or returned as deleted by this kind's storage).
    Object(Arc<Obj>),
    /// A `Status` of `Success` naming the object that went.
    Gone(Arc<Obj>),
}

/// Whether kube-apiserver's storage of `info` answers a completed delete with the deleted
/// object (`ReturnDeletedObject`) rather than a Status.
fn returns_deleted_object(info: &ResourceInfo) -> bool {
    (info.group == "storage.k8s.io" && info.plural == "storageclasses")
        || info.group.is_empty()
            && matches!(
                info.plural.as_str(),
                "pods"
                    | "services"
                    | "namespaces"
                    | "persistentvolumes"
                    | "persistentvolumeclaims"
                    | "podtemplates"
                    | "serviceaccounts"
            )
}

/// Deletes one object, honouring preconditions, finalizers and the propagation policy.
pub(crate) fn delete(
    inner: &mut Inner,
    info: &ResourceInfo,
    namespace: &str,
    name: &str,
    options: &DeleteOptions,
) -> Result<Deleted, ApiError> {
    let storage = info.storage_key();
    let old = inner
        .get(&storage, &object_key(namespace, name))
        .ok_or_else(|| ApiError::not_found(&info.group, &info.plural, name))?;
    // The NamespaceLifecycle admission plugin keeps the namespaces the cluster needs.
    if info.is_namespace() && IMMORTAL_NAMESPACES.contains(&name) {
        let mut e = ApiError::new(
            403,
            "Forbidden",
            format!("namespaces \"{name}\" is forbidden: this namespace may not be deleted"),
        );
        e.details = Some(crate::status::details("", "namespaces", name, None));
        return Err(e);
    }
    let value = old.value();
    if let Some(uid) = &options.uid {
        let have = value["metadata"]["uid"].as_str().unwrap_or_default();
        if uid != have {
            return Err(ApiError::conflict(
                &info.group,
                &info.plural,
                name,
                &format!(
                    "Precondition failed: UID in precondition: {uid}, UID in object meta: {have}"
                ),
            ));
        }
    }
    if let Some(rv) = &options.resource_version
        && *rv != old.rv.to_string()
    {
        return Err(ApiError::conflict(
            &info.group,
            &info.plural,
            name,
            &format!(
                "Precondition failed: ResourceVersion in precondition: {rv}, ResourceVersion in object meta: {}",
                old.rv
            ),
        ));
    }
    if info.is_namespace() {
        return delete_namespace(inner, info, old);
    }
    let policy = options.propagation.unwrap_or(Propagation::Background);
    let marked = !value["metadata"]["deletionTimestamp"].is_null();
    let mut finalizers = finalizers(&value);
    match policy {
        Propagation::Orphan if !finalizers.iter().any(|f| f == ORPHAN) => {
            finalizers.push(ORPHAN.to_owned())
        }
        Propagation::Foreground if !finalizers.iter().any(|f| f == FOREGROUND) => {
            finalizers.push(FOREGROUND.to_owned())
        }
        _ => {}
    }
    if finalizers.is_empty() {
        if info.is_crd()
            && let Some(first) = crd_resources(&value)
                .ok()
                .and_then(|v| v.into_iter().next())
            && !crate::registry::is_builtin_resource(&first.group, &first.plural)
        {
            inner.drop_storage(&first.storage_key());
            if !inner.dry_run {
                inner.registry.remove(&first.group, &first.plural);
            }
        }
        let gone = inner.delete_now(&storage, &old);
        return Ok(if returns_deleted_object(info) {
            Deleted::Object(gone)
        } else {
            Deleted::Gone(gone)
        });
    }
    // Finalizers (the object's own, or the one the policy adds) keep the object until they
    // are removed.
    let current = if marked && finalizers == self::finalizers(&value) {
        old
    } else {
        let mut value = value;
        let rv = inner.next_rv();
        let meta = &mut value["metadata"];
        if !marked {
            meta["deletionTimestamp"] = json!(now_rfc3339());
            meta["deletionGracePeriodSeconds"] = json!(0);
        }
        meta["finalizers"] = json!(finalizers);
        meta["resourceVersion"] = json!(rv.to_string());
        inner.commit(
            &storage,
            EventType::Modified,
            Obj::new(&value, info).keeping_views(&old),
            Some(old),
        )
    };
    let uid = current.value()["metadata"]["uid"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    match policy {
        Propagation::Orphan => {
            orphan_dependents(inner, &uid);
            // The answer shows the object as marked, as the real server answers before its
            // collector has orphaned the dependents.
            remove_finalizer(inner, info, &current, ORPHAN);
            Ok(Deleted::Object(current))
        }
        Propagation::Foreground => {
            for (dep_info, dep) in dependents(inner, &uid) {
                let opts = DeleteOptions {
                    propagation: Some(Propagation::Foreground),
                    ..DeleteOptions::default()
                };
                // A dependent that went meanwhile (a cascade reached it first) is fine.
                let _ = delete(inner, &dep_info, &dep.namespace, &dep.name, &opts);
            }
            if !inner.dry_run && dependents(inner, &uid).is_empty() {
                remove_finalizer(inner, info, &current, FOREGROUND);
            }
            Ok(Deleted::Object(current))
        }
        Propagation::Background => Ok(Deleted::Object(current)),
    }
}

/// The object's finalizers.
fn finalizers(value: &Value) -> Vec<String> {
    value["metadata"]["finalizers"]
        .as_array()
        .map(|f| {
            f.iter()
                .filter_map(|s| s.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// Removes `finalizer` from a marked object, which goes away when it was the last one (the
/// deleted state, for the answer), as the collector's update does. `None` when the object no
/// longer carries it.
pub(crate) fn remove_finalizer(
    inner: &mut Inner,
    info: &ResourceInfo,
    obj: &Arc<Obj>,
    finalizer: &str,
) -> Option<Arc<Obj>> {
    let mut value = obj.value();
    let mut left = finalizers(&value);
    let before = left.len();
    left.retain(|f| f != finalizer);
    if left.len() == before {
        return None;
    }
    let storage = info.storage_key();
    let rv = inner.next_rv();
    value["metadata"]["resourceVersion"] = json!(rv.to_string());
    if left.is_empty() {
        if let Some(m) = value["metadata"].as_object_mut() {
            m.remove("finalizers");
        }
        let obj_new = Obj::new(&value, info).keeping_views(obj);
        return Some(inner.commit(&storage, EventType::Deleted, obj_new, Some(obj.clone())));
    }
    value["metadata"]["finalizers"] = json!(left);
    Some(inner.commit(
        &storage,
        EventType::Modified,
        Obj::new(&value, info).keeping_views(obj),
        Some(obj.clone()),
    ))
}

/// Every object whose `ownerReferences` name `uid`, with the resource serving it.
pub(crate) fn dependents(inner: &Inner, uid: &str) -> Vec<(Arc<ResourceInfo>, Arc<Obj>)> {
    if uid.is_empty() {
        return Vec::new();
    }
    let needle = uid.as_bytes();
    let mut out = Vec::new();
    for s in inner.storages() {
        for obj in inner.objects(&s, None) {
            // Cheap test first: the uid must appear in the bytes.
            if !obj.bytes.windows(needle.len()).any(|w| w == needle) {
                continue;
            }
            let owned = obj.value()["metadata"]["ownerReferences"]
                .as_array()
                .is_some_and(|refs| refs.iter().any(|r| r["uid"] == uid));
            if owned && let Some(info) = inner.info_for(&s, &obj.api_version) {
                out.push((info, obj));
            }
        }
    }
    out
}

/// Removes the ownerReference to `uid` from every dependent, as the collector orphans them.
fn orphan_dependents(inner: &mut Inner, uid: &str) {
    for (info, dep) in dependents(inner, uid) {
        let mut value = dep.value();
        if let Some(refs) = value["metadata"]["ownerReferences"].as_array_mut() {
            refs.retain(|r| r["uid"] != uid);
            if refs.is_empty()
                && let Some(m) = value["metadata"].as_object_mut()
            {
                m.remove("ownerReferences");
            }
        }
        let rv = inner.next_rv();
        value["metadata"]["resourceVersion"] = json!(rv.to_string());
        inner.commit(
            &info.storage_key(),
            EventType::Modified,
            Obj::new(&value, &info).keeping_views(&dep),
            Some(dep),
        );
    }
}

/// Deletes a namespace as the API server and the namespace controller do together.
fn delete_namespace(
    inner: &mut Inner,
    info: &ResourceInfo,
    old: Arc<Obj>,
) -> Result<Deleted, ApiError> {
    let name = old.name.clone();
    let terminating = if old.value()["metadata"]["deletionTimestamp"].is_null() {
        let mut value = old.value();
        let rv = inner.next_rv();
        value["metadata"]["deletionTimestamp"] = json!(now_rfc3339());
        value["metadata"]["deletionGracePeriodSeconds"] = json!(0);
        value["metadata"]["resourceVersion"] = json!(rv.to_string());
        value["status"]["phase"] = json!("Terminating");
        inner.commit(
            &info.storage_key(),
            EventType::Modified,
            Obj::new(&value, info).keeping_views(&old),
            Some(old),
        )
    } else {
        old
    };
    for s in inner.storages() {
        for obj in inner.objects(&s, Some(&name)) {
            if !obj.value()["metadata"]["deletionTimestamp"].is_null() {
                continue;
            }
            let Some(child) = inner.info_for(&s, &obj.api_version) else {
                inner.delete_now(&s, &obj);
                continue;
            };
            let _ = delete(inner, &child, &name, &obj.name, &DeleteOptions::default());
        }
    }
    Ok(Deleted::Object(
        finish_namespace(inner, info, &name).unwrap_or(terminating),
    ))
}

/// Removes a terminating namespace that has become empty (the namespace controller's last
/// step); the deleted state, or `None` while content is left or it is not terminating.
pub(crate) fn finish_namespace(
    inner: &mut Inner,
    info: &ResourceInfo,
    name: &str,
) -> Option<Arc<Obj>> {
    if inner.dry_run {
        return None;
    }
    let ns = inner.get(&info.storage_key(), name)?;
    if ns.value()["metadata"]["deletionTimestamp"].is_null() {
        return None;
    }
    let empty = inner
        .storages()
        .iter()
        .all(|s| inner.objects(s, Some(name)).is_empty());
    empty.then(|| inner.delete_now(&info.storage_key(), &ns))
}

/// Deletes every object of a collection matching the selectors; returns what was deleted
/// (or marked for deletion).
pub(crate) fn delete_collection(
    inner: &mut Inner,
    info: &ResourceInfo,
    namespace: Option<&str>,
    opts: &ListOptions,
    options: &DeleteOptions,
) -> Result<Vec<Arc<Obj>>, ApiError> {
    let storage = info.storage_key();
    let mut out = Vec::new();
    for obj in inner.objects(&storage, namespace) {
        if opts.matches(&obj) {
            out.push(
                match delete(inner, info, &obj.namespace, &obj.name, options)? {
                    Deleted::Object(o) | Deleted::Gone(o) => o,
                },
            );
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handlers::params::Query;

    fn parse(body: &str, query: &str) -> Result<DeleteOptions, ApiError> {
        DeleteOptions::parse(body.as_bytes(), &Query::parse(Some(query)))
    }

    #[test]
    fn options_as_the_real_server_reads_them() {
        let o = parse(r#"{"dryRun":["All"],"propagationPolicy":"Orphan"}"#, "").unwrap();
        assert!(o.dry_run);
        assert_eq!(o.propagation, Some(Propagation::Orphan));
        // A body wins whole over the query.
        let o = parse(
            r#"{"propagationPolicy":"Foreground"}"#,
            "propagationPolicy=Orphan",
        )
        .unwrap();
        assert_eq!(o.propagation, Some(Propagation::Foreground));
        let o = parse("", "dryRun=All&propagationPolicy=Foreground").unwrap();
        assert!(o.dry_run);
        assert_eq!(o.propagation, Some(Propagation::Foreground));
        assert_eq!(
            parse(r#"{"orphanDependents":false}"#, "")
                .unwrap()
                .propagation,
            Some(Propagation::Background)
        );
        assert_eq!(parse("", "").unwrap().propagation, None);
        // Refused, never panicking: a non-object body, unknown values, both policies.
        for (body, query) in [
            ("[1]", "propagationPolicy=Orphan"),
            ("\"x\"", ""),
            (r#"{"dryRun":["Some"]}"#, ""),
            ("", "dryRun=yes"),
            ("", "propagationPolicy=Sideways"),
            (
                r#"{"orphanDependents":true,"propagationPolicy":"Orphan"}"#,
                "",
            ),
            (r#"{"propagationPolicy":3}"#, ""),
        ] {
            let e = parse(body, query).unwrap_err();
            assert!(e.code == 400 || e.code == 422, "{body} {query}: {e}");
        }
    }
}
