//! DELETE of one object and of a collection.
//!
//! As the real server: `DeleteOptions.preconditions` (uid, resourceVersion) are checked (409
//! Conflict); an object with finalizers is not removed but gets `deletionTimestamp` (one
//! MODIFIED event) and goes away with the write that removes its last finalizer; otherwise the
//! object is removed at once and its DELETED event carries the last state stamped with the
//! delete's resourceVersion. Pods have no kubelet here, so graceful deletion is immediate.
//! Deleting a namespace deletes (or, with finalizers, marks) everything in it and then the
//! namespace itself, without a lingering `Terminating` phase. Deleting a CRD removes its custom
//! resources (DELETED events) and unregisters its versions. Garbage collection of dependents
//! (`propagationPolicy`) is not run: owner references are kept as written.

use std::sync::Arc;

use serde_json::{Value, json};

use super::params::ListOptions;
use super::registry::{ResourceInfo, crd_resources};
use super::status::ApiError;
use super::storage::{EventType, Inner, Obj, object_key};
use super::write::now_rfc3339;

/// Deletes one object, honouring preconditions and finalizers.
pub(crate) fn delete(
    inner: &mut Inner,
    info: &ResourceInfo,
    namespace: &str,
    name: &str,
    options: &Value,
) -> Result<Arc<Obj>, ApiError> {
    let storage = info.storage_key();
    let old = inner
        .get(&storage, &object_key(namespace, name))
        .ok_or_else(|| ApiError::not_found(&info.group, &info.plural, name))?;
    let pre = &options["preconditions"];
    let mut value = old.value();
    if let Some(uid) = pre["uid"].as_str() {
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
    if let Some(rv) = pre["resourceVersion"].as_str()
        && rv != old.rv.to_string()
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
    let has_finalizers = value["metadata"]["finalizers"]
        .as_array()
        .is_some_and(|f| !f.is_empty());
    if has_finalizers {
        if !value["metadata"]["deletionTimestamp"].is_null() {
            return Ok(old);
        }
        let rv = inner.next_rv();
        let meta = &mut value["metadata"];
        meta["deletionTimestamp"] = json!(now_rfc3339());
        meta["deletionGracePeriodSeconds"] = json!(0);
        meta["resourceVersion"] = json!(rv.to_string());
        let obj = Obj::new(&value, info);
        return Ok(inner.commit(&storage, EventType::Modified, obj, Some(old)));
    }
    if info.is_namespace() {
        for s in inner.storages() {
            for obj in inner.objects(&s, Some(name)) {
                let Some(child) = inner.info_for(&s, &obj.api_version) else {
                    inner.delete_now(&s, &obj);
                    continue;
                };
                let _ = delete(inner, &child, name, &obj.name, &Value::Null);
            }
        }
    }
    if info.is_crd()
        && let Some(first) = crd_resources(&value)
            .ok()
            .and_then(|v| v.into_iter().next())
    {
        inner.drop_storage(&first.storage_key());
        inner.registry.remove(&first.group, &first.plural);
    }
    Ok(inner.delete_now(&storage, &old))
}

/// Deletes every object of a collection matching the selectors; returns what was deleted
/// (or marked for deletion).
pub(crate) fn delete_collection(
    inner: &mut Inner,
    info: &ResourceInfo,
    namespace: Option<&str>,
    opts: &ListOptions,
    options: &Value,
) -> Result<Vec<Arc<Obj>>, ApiError> {
    let storage = info.storage_key();
    let mut out = Vec::new();
    for obj in inner.objects(&storage, namespace) {
        if opts.matches(&obj) {
            out.push(delete(inner, info, &obj.namespace, &obj.name, options)?);
        }
    }
    Ok(out)
}
