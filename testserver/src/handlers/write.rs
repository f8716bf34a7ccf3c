//! Writes: create, update (replace), patch, and the status subresource.
//!
//! Reproduces the generic registry's behaviour (`k8s.io/apiserver/pkg/registry/generic/registry`):
//! - built-in objects get their kind's defaults and initial status (module `strategy`) on
//!   create and update;
//! - create stamps `uid`, `creationTimestamp`, `resourceVersion` and, on kinds that track it,
//!   `generation: 1` (module `strategy`), fills a
//!   name from `generateName` plus five random characters (retried on collision), rejects a missing name (422
//!   Invalid), a body namespace that differs from the URL's (400), a namespace that does not
//!   exist (404) and an existing name (409 AlreadyExists);
//! - update requires the object to exist (404), treats a non-empty `metadata.resourceVersion`
//!   as a precondition (409 Conflict when stale), refuses another `metadata.uid` (422, the
//!   uid is immutable) and a patch that changes the name or namespace (400, the patch
//!   handler's `checkName`), keeps the server-owned metadata (uid,
//!   creationTimestamp, deletionTimestamp), bumps `generation` only when something outside
//!   `metadata` (and `status`, for resources with a status subresource) changed, and commits
//!   nothing for a no-op update (the resourceVersion stays);
//! - where a resource declares a status subresource, writes to the main resource keep the
//!   stored status and writes to `/status` change only the status;
//! - custom resources with a status subresource drop `status` on create, as
//!   apiextensions-apiserver does;
//! - creating a CRD registers its served versions and fills its status (`Established`,
//!   `NamesAccepted`, `acceptedNames`); updating it re-registers them. Its group is checked
//!   first (`registry::validate_crd`); a CRD naming a built-in resource is stored but leaves
//!   the built-in served.
//!
//! Every write is decoded (built-ins) or pruned and defaulted (custom resources) under the
//! request's `fieldValidation`, then validated against the kind's schema before it is stored
//! (see [`super::validate`]); then every create and replace passes its object to
//! `apply::on_write`, which maintains `metadata.managedFields` for the request's field
//! manager.
//!
//! A write that webhooks may select carries an admission gate in its [`Check`] (module
//! `admission`): it stops at the mutating point (after decoding, defaulting and the
//! namespace, before `PrepareForCreate`/`PrepareForUpdate`), at the validating point (after
//! validation, before the resourceVersion is taken) and, for a custom resource converted by
//! a webhook, at the conversion point, until the gate holds the webhooks' answers; the
//! router then runs it again. Nothing is committed before the last point.

use std::sync::Arc;

use rand::Rng;
use serde_json::{Value, json};

use crate::handlers::patch::PatchType;
use crate::handlers::validate::{self, Check};
use crate::registry::strategy;
use crate::registry::{ResourceInfo, crd_resources};
use crate::status::ApiError;
use crate::storage::{EventType, Inner, Obj, object_key};

/// The current time as the API server writes timestamps.
pub(crate) fn now_rfc3339() -> String {
    jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

/// A random version-4 UUID: object uids and token ids (`jti`).
pub(crate) fn new_uid() -> String {
    let n: u128 = rand::random();
    let n = (n & !(0xf << 76) | (0x4 << 76)) & !(0x3 << 62) | (0x2 << 62);
    let h = format!("{n:032x}");
    format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}

/// Five random characters of `generateName` (`SimpleNameGenerator`'s alphabet).
pub(crate) fn random_suffix() -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let mut rng = rand::rng();
    (0..5)
        .map(|_| ALPHABET[rng.random_range(0..ALPHABET.len())] as char)
        .collect()
}

/// Whether `name` is a DNS-1123 subdomain.
fn valid_name(name: &str) -> bool {
    let b = name.as_bytes();
    !b.is_empty()
        && b.len() <= 253
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-' || *c == b'.')
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
}

/// Checks `apiVersion`/`kind` of a body against the resource, filling them when absent.
fn check_type(info: &ResourceInfo, value: &mut Value) -> Result<(), ApiError> {
    if !value.is_object() {
        return Err(ApiError::bad_request("the body must be a JSON object"));
    }
    let api_version = info.api_version();
    match value["apiVersion"].as_str() {
        None | Some("") => value["apiVersion"] = json!(api_version),
        Some(v) if v == api_version => {}
        Some(v) => {
            return Err(ApiError::bad_request(format!(
                "the API version in the data ({v}) does not match the expected API version ({api_version})"
            )));
        }
    }
    match value["kind"].as_str() {
        None | Some("") => value["kind"] = json!(info.kind),
        Some(k) if k == info.kind => {}
        Some(k) => {
            return Err(ApiError::bad_request(format!(
                "the kind in the data ({k}) does not match the expected kind ({})",
                info.kind
            )));
        }
    }
    if !value["metadata"].is_object() {
        value["metadata"] = json!({});
    }
    Ok(())
}

/// Creates an object.
pub(crate) fn create(
    inner: &mut Inner,
    info: &ResourceInfo,
    namespace: Option<&str>,
    mut value: Value,
    check: &mut Check,
) -> Result<Arc<Obj>, ApiError> {
    check_type(info, &mut value)?;
    validate::decode(inner, info, &mut value, check)?;
    let custom = is_custom(inner, info);
    if !custom {
        strategy::default(info, &mut value);
    }
    let meta = &mut value["metadata"];
    // The real server refuses a create that carries a resourceVersion (an object read back
    // from the server and posted again) with 400, from its storage layer's
    // `ErrResourceVersionSetOnCreate`.
    if meta["resourceVersion"]
        .as_str()
        .is_some_and(|rv| !rv.is_empty())
    {
        return Err(ApiError::bad_request(
            "resourceVersion can not be set for Create requests",
        ));
    }
    if info.namespaced {
        let body_ns = meta["namespace"].as_str().filter(|s| !s.is_empty());
        let ns = match (namespace, body_ns) {
            (Some(url), Some(body)) if url != body => {
                return Err(ApiError::bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request",
                ));
            }
            (Some(ns), _) | (None, Some(ns)) => ns.to_owned(),
            (None, None) => {
                return Err(ApiError::bad_request(
                    "a namespace is required to create this object",
                ));
            }
        };
        meta["namespace"] = json!(ns);
    } else if let Some(m) = meta.as_object_mut() {
        m.remove("namespace");
    }
    let ns = meta["namespace"].as_str().unwrap_or_default().to_owned();
    // The mutating admission point: after decoding, defaulting and the request's namespace,
    // before the strategy's `PrepareForCreate` and validation. A webhook's answer is decoded
    // (pruned) and defaulted as a request body is, its unknown fields dropped silently.
    if let Some(gate) = check.admission.as_mut()
        && gate.mutating(&mut value, None, None)?
    {
        check_type(info, &mut value)?;
        validate::decode(inner, info, &mut value, &mut Check::ignoring_unknown())?;
        if !custom {
            strategy::default(info, &mut value);
        }
        if info.namespaced {
            value["metadata"]["namespace"] = json!(ns);
        }
    }
    let meta = &mut value["metadata"];
    let storage = info.storage_key();
    let name = match meta["name"].as_str().filter(|n| !n.is_empty()) {
        Some(n) => n.to_owned(),
        None => match meta["generateName"].as_str().filter(|g| !g.is_empty()) {
            // Retried on collision, as the RetryGenerateName feature does (8 attempts).
            Some(prefix) => {
                // Under admission the same suffixes are tried on every pass of the write.
                let suffix = |i: usize| {
                    check
                        .admission
                        .as_ref()
                        .and_then(|gate| gate.suffixes.get(i).cloned())
                        .unwrap_or_else(random_suffix)
                };
                (0..8)
                    .map(|i| format!("{prefix}{}", suffix(i)))
                    .find(|n| inner.get(&storage, &object_key(&ns, n)).is_none())
                    .unwrap_or_else(|| format!("{prefix}{}", suffix(8)))
            }
            None => {
                return Err(ApiError::invalid(
                    &info.group,
                    &info.kind,
                    "",
                    "metadata.name",
                    "Required value: name or generateName is required",
                ));
            }
        },
    };
    if !valid_name(&name) {
        return Err(ApiError::invalid(
            &info.group,
            &info.kind,
            &name,
            "metadata.name",
            &format!(
                "Invalid value: {name:?}: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character"
            ),
        ));
    }
    if info.namespaced {
        let namespace = inner
            .get("/namespaces", &ns)
            .ok_or_else(|| ApiError::not_found("", "namespaces", &ns))?;
        // The NamespaceLifecycle admission plugin.
        if !namespace.value()["metadata"]["deletionTimestamp"].is_null() {
            return Err(ApiError::namespace_terminating(
                &info.group,
                &info.plural,
                &name,
                &ns,
            ));
        }
    }
    if inner.get(&storage, &object_key(&ns, &name)).is_some() {
        return Err(ApiError::already_exists(&info.group, &info.plural, &name));
    }
    if info.status_subresource
        && custom
        && let Some(m) = value.as_object_mut()
    {
        m.remove("status");
    }
    // The uid is the server's (a client's is replaced), set before the strategy, which may
    // use it (a Job's generated selector).
    value["metadata"]["name"] = json!(name);
    let uid = check
        .admission
        .as_ref()
        .map_or_else(new_uid, |gate| gate.uid.clone());
    value["metadata"]["uid"] = json!(uid);
    if !custom {
        let services = other_services(inner, info, None);
        strategy::prepare_create(info, &mut value, &services)?;
        validate::builtin(info, &name, &value, None)?;
        crate::admission::validate_configuration(info, &value)?;
    }
    if info.is_namespace() {
        // The namespace strategy: the `kubernetes` finalizer the namespace controller
        // removes, and the Active phase.
        if !value["spec"].is_object() {
            value["spec"] = json!({});
        }
        if value["spec"]["finalizers"].is_null() {
            value["spec"]["finalizers"] = json!(["kubernetes"]);
        }
        value["status"] = json!({"phase": "Active"});
    }
    if info.is_crd() {
        crate::registry::validate_crd(&value, None)?;
    }
    validate::validate(inner, info, &name, &mut value, None)?;
    let crd_versions = if info.is_crd() {
        let mut probe = value.clone();
        probe["metadata"]["name"] = json!(name);
        Some(crd_resources(&probe)?)
    } else {
        None
    };
    let created = check
        .admission
        .as_ref()
        .map_or_else(now_rfc3339, |gate| gate.now.clone());
    let meta = &mut value["metadata"];
    meta["creationTimestamp"] = json!(created);
    if let Some(m) = meta.as_object_mut() {
        m.remove("deletionTimestamp");
        m.remove("deletionGracePeriodSeconds");
        m.remove("generation");
        if strategy::has_generation(info, custom) {
            m.insert("generation".into(), json!(1));
        }
    }
    // The validating admission point: the object as it will be stored, but for its
    // resourceVersion, which the storage gives.
    if let Some(gate) = check.admission.as_mut() {
        gate.validating(&value, None, None)?;
    }
    let converted = conversion_point(inner, info, check, &value)?;
    let rv = inner.next_rv();
    value["metadata"]["resourceVersion"] = json!(rv.to_string());
    if let Some(versions) = crd_versions {
        register_crd(inner, &mut value, versions);
    }
    crate::handlers::fieldmanager::on_write(inner, info, None, &mut value, false);
    let obj = stored_obj(info, &value, converted);
    Ok(inner.commit(&storage, EventType::Added, obj, None))
}

/// The conversion point of a write (module `admission::conversion`): for a custom resource
/// whose CRD converts through a webhook, `value` (in the request's version) in the storage
/// version and every other served version; `None` for any other resource.
fn conversion_point(
    inner: &Inner,
    info: &ResourceInfo,
    check: &mut Check,
    value: &Value,
) -> Result<Option<Converted>, ApiError> {
    let Some(gate) = check.admission.as_mut() else {
        return Ok(None);
    };
    let Some(crd) = inner
        .crd_of(info)
        .and_then(|c| crate::admission::conversion::webhook_crd(&c))
    else {
        return Ok(None);
    };
    let versions = crd["spec"]["versions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let api_version =
        |v: &Value| format!("{}/{}", info.group, v["name"].as_str().unwrap_or_default());
    let Some(storage) = versions
        .iter()
        .find(|v| v["storage"].as_bool() == Some(true))
        .map(api_version)
    else {
        return Ok(None);
    };
    let others: Vec<String> = versions
        .iter()
        .filter(|v| v["served"].as_bool() == Some(true))
        .map(api_version)
        .filter(|v| *v != storage && *v != info.api_version())
        .collect();
    let views = gate.converting(value, &storage, &others)?;
    Ok(Some(Converted { storage, views }))
}

/// A write's object in the other versions of its resource.
struct Converted {
    /// `group/version` of the storage version.
    storage: String,
    /// The forms in the storage version (unless the request's) and the other served ones.
    views: Vec<(String, Value)>,
}

/// The object to store for the final `value` of a write: as it is, or, converted by a
/// webhook, in the storage version with its forms in the other versions, each carrying
/// `value`'s final metadata but for the labels and annotations the webhook gave.
fn stored_obj(info: &ResourceInfo, value: &Value, converted: Option<Converted>) -> Obj {
    let Some(Converted { storage, views }) = converted else {
        return Obj::new(value, info);
    };
    let with_meta = |mut form: Value| {
        let mut meta = value["metadata"].clone();
        for key in ["labels", "annotations"] {
            match form["metadata"].get(key) {
                Some(x) if !x.is_null() => meta[key] = x.clone(),
                _ => {
                    if let Some(m) = meta.as_object_mut() {
                        m.remove(key);
                    }
                }
            }
        }
        form["metadata"] = meta;
        form
    };
    let own = info.api_version();
    let mut stored = None;
    let mut others = Vec::new();
    for (version, form) in views {
        if version == storage {
            stored = Some(with_meta(form));
        } else {
            others.push((version, with_meta(form)));
        }
    }
    if own != storage {
        others.push((own, value.clone()));
    }
    Obj::new(stored.as_ref().unwrap_or(value), info).with_views(others)
}

/// The specs of the stored Services but the one with uid `except` (their cluster IPs and
/// node ports are taken), when `info` is the Services resource; none otherwise.
fn other_services(inner: &Inner, info: &ResourceInfo, except: Option<&str>) -> Vec<Value> {
    if !(info.group.is_empty() && info.plural == "services") {
        return Vec::new();
    }
    inner
        .objects(&info.storage_key(), None)
        .iter()
        .filter(|s| except.is_none_or(|uid| s.uid() != uid))
        .map(|s| json!({"spec": s.value()["spec"].clone()}))
        .collect()
}

/// Whether `info` is served through a CRD (not a built-in).
fn is_custom(inner: &Inner, info: &ResourceInfo) -> bool {
    inner.crd_of(info).is_some()
}

fn register_crd(inner: &mut Inner, crd: &mut Value, versions: Vec<ResourceInfo>) {
    let shadowed = versions
        .first()
        .is_some_and(|v| crate::registry::is_builtin_resource(&v.group, &v.plural));
    if !inner.dry_run && !shadowed {
        if let Some(first) = versions.first() {
            let (group, plural) = (first.group.clone(), first.plural.clone());
            inner.registry.remove(&group, &plural);
        }
        for v in versions {
            inner.registry.add(v);
        }
    }
    let now = now_rfc3339();
    let stored: Vec<Value> = crd["spec"]["versions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|v| v["storage"].as_bool() == Some(true))
        .map(|v| v["name"].clone())
        .collect();
    crd["status"] = json!({
        "acceptedNames": crd["spec"]["names"].clone(),
        "conditions": [
            {"type": "NamesAccepted", "status": "True", "reason": "NoConflicts",
             "message": "no conflicts found", "lastTransitionTime": now},
            {"type": "Established", "status": "True", "reason": "InitialNamesAccepted",
             "message": "the initial names have been accepted", "lastTransitionTime": now},
        ],
        "storedVersions": stored,
    });
}

/// Replaces an object (PUT), on the main resource or the `status` subresource.
pub(crate) fn update(
    inner: &mut Inner,
    info: &ResourceInfo,
    namespace: &str,
    name: &str,
    status_only: bool,
    mut body: Value,
    check: &mut Check,
) -> Result<Arc<Obj>, ApiError> {
    check_type(info, &mut body)?;
    let body_name = body["metadata"]["name"].as_str().unwrap_or_default();
    if !body_name.is_empty() && body_name != name {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({body_name}) does not match the name on the URL ({name})"
        )));
    }
    let body_ns = body["metadata"]["namespace"].as_str().unwrap_or_default();
    if info.namespaced && !body_ns.is_empty() && body_ns != namespace {
        return Err(ApiError::bad_request(
            "the namespace of the provided object does not match the namespace sent on the request",
        ));
    }
    let storage = info.storage_key();
    let old = inner
        .get(&storage, &object_key(namespace, name))
        .ok_or_else(|| ApiError::not_found(&info.group, &info.plural, name))?;
    replace(inner, info, &old, status_only, body, check)
}

/// Patches an object, on the main resource or the `status` subresource.
#[allow(clippy::too_many_arguments)]
pub(crate) fn patch(
    inner: &mut Inner,
    info: &ResourceInfo,
    namespace: &str,
    name: &str,
    status_only: bool,
    patch_type: PatchType,
    patch: &[u8],
    check: &mut Check,
) -> Result<Arc<Obj>, ApiError> {
    // Checked before the object is read: 415 for a strategic merge patch of a custom resource.
    let schema = patch_type.schema_for(info)?;
    let old = inner
        .get(&info.storage_key(), &object_key(namespace, name))
        .ok_or_else(|| ApiError::not_found(&info.group, &info.plural, name))?;
    let mut current = old.value_for(info);
    current["apiVersion"] = json!(info.api_version());
    let mut patched = patch_type.apply(current, patch, schema)?;
    // The patch handler's `checkName`: the patched object keeps the URL's name and namespace.
    let patched_name = patched["metadata"]["name"].as_str().unwrap_or_default();
    if patched_name != name {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({patched_name}) does not match the name on the URL ({name})"
        )));
    }
    let patched_ns = patched["metadata"]["namespace"]
        .as_str()
        .unwrap_or_default();
    if !namespace.is_empty() && !patched_ns.is_empty() && patched_ns != namespace {
        return Err(ApiError::bad_request(format!(
            "the namespace of the object ({patched_ns}) does not match the namespace on the request ({namespace})"
        )));
    }
    check_type(info, &mut patched)?;
    replace(inner, info, &old, status_only, patched, check)
}

/// The common end of update and patch.
fn replace(
    inner: &mut Inner,
    info: &ResourceInfo,
    old: &Arc<Obj>,
    status_only: bool,
    mut body: Value,
    check: &mut Check,
) -> Result<Arc<Obj>, ApiError> {
    validate::decode(inner, info, &mut body, check)?;
    let body_rv = body["metadata"]["resourceVersion"]
        .as_str()
        .unwrap_or_default();
    if !body_rv.is_empty() && body_rv != old.rv.to_string() {
        return Err(ApiError::conflict(
            &info.group,
            &info.plural,
            &old.name,
            "the object has been modified; please apply your changes to the latest version and try again",
        ));
    }
    // `ValidateObjectMetaUpdate`: a uid left out is kept, another one is refused.
    let body_uid = body["metadata"]["uid"].as_str().unwrap_or_default();
    if !body_uid.is_empty() && body_uid != old.uid() {
        return Err(validate::invalid_error(
            &info.group,
            &info.kind,
            &old.name,
            vec![validate::Cause::invalid(
                "metadata.uid",
                &json!(body_uid),
                "field is immutable",
            )],
        ));
    }
    let old_v = {
        let mut v = old.value_for(info);
        v["apiVersion"] = json!(info.api_version());
        v
    };
    // The mutating admission point of an update (and of a patch, once applied): the
    // decoded and defaulted object, before `PrepareForUpdate` and validation.
    if let Some(gate) = check.admission.as_mut() {
        let custom = is_custom(inner, info);
        if !custom {
            strategy::default(info, &mut body);
        }
        if gate.mutating(&mut body, Some(&old_v), Some(old.rv))? {
            check_type(info, &mut body)?;
            validate::decode(inner, info, &mut body, &mut Check::ignoring_unknown())?;
        }
    }
    let mut new = if status_only {
        let mut v = old_v.clone();
        set_or_remove(&mut v, "status", body.get("status").cloned());
        v
    } else {
        let mut v = body;
        if !is_custom(inner, info) {
            strategy::default(info, &mut v);
            let services = other_services(inner, info, Some(&old.uid()));
            strategy::prepare_update(info, &old_v, &mut v, &services)?;
        }
        if info.status_subresource {
            set_or_remove(&mut v, "status", old_v.get("status").cloned());
        }
        v
    };
    // Server-owned metadata survives every write.
    for key in [
        "uid",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "name",
        "namespace",
        "generation",
    ] {
        set_or_remove(
            &mut new["metadata"],
            key,
            old_v["metadata"].get(key).cloned(),
        );
    }
    new["metadata"]["resourceVersion"] = json!(old.rv.to_string());
    if !status_only && !is_custom(inner, info) {
        validate::builtin(info, &old.name, &new, Some(&old_v))?;
        crate::admission::validate_configuration(info, &new)?;
    }
    if info.is_crd() {
        crate::registry::validate_crd(&new, Some(&old_v))?;
    }
    validate::validate(inner, info, &old.name, &mut new, Some(&old_v))?;
    // The validating admission point of an update: before storage (and before its no-op
    // detection: a webhook sees an update that changes nothing too).
    if let Some(gate) = check.admission.as_mut() {
        gate.validating(&new, Some(&old_v), Some(old.rv))?;
    }
    let converted = conversion_point(inner, info, check, &new)?;
    crate::handlers::fieldmanager::on_write(inner, info, Some(&old_v), &mut new, status_only);
    if new == old_v {
        return Ok(old.clone());
    }
    let strip = |v: &Value| {
        let mut v = v.clone();
        if let Some(m) = v.as_object_mut() {
            m.remove("metadata");
            if info.status_subresource || m.contains_key("spec") {
                m.remove("status");
            }
        }
        v
    };
    if strip(&new) != strip(&old_v) && strategy::has_generation(info, is_custom(inner, info)) {
        let g = old_v["metadata"]["generation"].as_i64().unwrap_or(0);
        new["metadata"]["generation"] = json!(g + 1);
    }
    if info.is_crd() {
        let versions = crd_resources(&new)?;
        let shadowed = versions
            .first()
            .is_some_and(|v| crate::registry::is_builtin_resource(&v.group, &v.plural));
        register_crd(inner, &mut new, versions);
        if !shadowed {
            validate::redefault_stored(inner, &new);
        }
    }
    let storage = info.storage_key();
    let finalizers_left = new["metadata"]["finalizers"]
        .as_array()
        .is_some_and(|f| !f.is_empty());
    let rv = inner.next_rv();
    new["metadata"]["resourceVersion"] = json!(rv.to_string());
    let obj = stored_obj(info, &new, converted);
    if !new["metadata"]["deletionTimestamp"].is_null() && !finalizers_left {
        // The last finalizer is gone: the object goes away with this write.
        return Ok(inner.commit(&storage, EventType::Deleted, obj, Some(old.clone())));
    }
    Ok(inner.commit(&storage, EventType::Modified, obj, Some(old.clone())))
}

fn set_or_remove(target: &mut Value, key: &str, value: Option<Value>) {
    match (target.as_object_mut(), value) {
        (Some(m), Some(v)) if !v.is_null() => {
            m.insert(key.to_owned(), v);
        }
        (Some(m), _) => {
            m.remove(key);
        }
        (None, _) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uids_look_like_uuid_v4() {
        let u = new_uid();
        assert_eq!(u.len(), 36);
        assert_eq!(&u[14..15], "4");
        assert!(valid_name("a.b-c1"));
        assert!(!valid_name("A"));
        assert!(!valid_name("-a"));
        assert_eq!(random_suffix().len(), 5);
    }
}
