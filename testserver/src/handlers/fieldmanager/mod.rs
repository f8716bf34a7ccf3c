//! Server-side apply and `metadata.managedFields`, as kube-apiserver's field manager
//! (k8s.io/apiserver `fieldmanager`, k8s.io/apimachinery `managedfields`) and
//! kubernetes-sigs/structured-merge-diff define them.
//!
//! - `PATCH` with `Content-Type: application/apply-patch+yaml` ([`apply`]) merges the applied
//!   configuration (YAML or JSON) into the live object, or creates the object (201) when it
//!   does not exist. `fieldManager` is required (422 `PatchOptions.meta.k8s.io "" is invalid`,
//!   as the real server answers); `force=true` takes fields from other managers instead of
//!   failing with 409 and one `FieldManagerConflict` cause per field. Fields the applier
//!   applied before and no longer applies are removed unless another manager owns them.
//!   Applies to `/status` own and change only `status`. A configuration without
//!   `metadata.name` applies to the object the URL names; the merged object's name must be the
//!   URL's (so a create needs the name in the body), as `checkName` checks after the merge.
//! - Every other write (create, update, patch, through the main resource or a subresource)
//!   records an `Update` entry for its manager ([`on_write`], called by `write.rs` just before
//!   it commits): the `fieldManager` parameter, else the User-Agent up to its first `/`
//!   (`prefixFromUserAgent`), else `unknown`. A client that sends non-empty managedFields in a
//!   main-resource body replaces the stored ones; `[]` or `[{}]` removes them all
//!   (`isResetManagedFields`). A write that changes nothing keeps the entries and their times,
//!   so it commits nothing. An object keeps at most ten `Update` entries: after an update, the
//!   oldest are folded into one `ancient-changes` entry per apiVersion
//!   ([`managed::cap_update_managers`], `capManagersManager`).
//! - For the manager `kubectl`, the client-side apply annotation
//!   (`kubectl.kubernetes.io/last-applied-configuration`) lets an apply take the fields
//!   client-side apply recorded without conflicts, and is rewritten to the applied
//!   configuration ([`last_applied`]).
//! - A `fieldManager` over 128 bytes or with a non-printable character fails every write
//!   with 422 on its options kind (`ValidateFieldManager`, checked with the other options in
//!   `validate::Check::from_request`).
//! - How lists and maps merge comes from the schema: the embedded v1.35 OpenAPI definitions
//!   for built-ins, the CRD's `openAPIV3Schema` (with `ObjectMeta` for `metadata`) for custom
//!   resources ([`types`]).
//!
//! The request's manager reaches `write.rs` through a scoped thread-local set by the router
//! around one synchronous dispatch ([`with_writer`]), so the write functions other modules
//! call keep their signatures. Writes made by the server itself (its Rust API, preloading,
//! garbage collection) have no manager and leave managedFields as they are.
//!
//! Written by hand: no maintained Rust crate implements structured-merge-diff (kube-rs sends
//! apply patches but leaves merging to the server; `json-patch` does RFC 6902/7386 only).

mod fieldset;
mod last_applied;
mod managed;
mod merge;
mod types;

use std::cell::RefCell;
use std::sync::Arc;

use serde_json::{Value, json};

use crate::handlers::params::Query;
use crate::handlers::validate::MAX_MANAGER_LEN;
use crate::handlers::write::{self, now_rfc3339};
use crate::registry::ResourceInfo;
use crate::status::ApiError;
use crate::storage::{Inner, Obj, object_key};
use managed::{Entry, Operation, Scope};
use types::Ty;

/// The apply patch media type.
const APPLY_CONTENT_TYPE: &str = "application/apply-patch+yaml";

/// Whether a `Content-Type` is an apply patch (`application/apply-patch+yaml`, also with
/// `+cbor`'s sibling parameters ignored).
pub(crate) fn is_apply(content_type: &str) -> bool {
    content_type.split(';').next().unwrap_or_default().trim() == APPLY_CONTENT_TYPE
}

/// Who is writing, for the duration of one request.
#[derive(Clone, Debug)]
pub(crate) struct Writer {
    manager: String,
    subresource: String,
    /// managedFields an apply computed, installed as they are.
    install: Option<Value>,
}

impl Writer {
    /// The writer of a request: `fieldManager`, else the User-Agent's product name, else
    /// `unknown` (kube-apiserver's `managerOrUserAgent` and `buildManagerInfo`).
    pub fn from_request(q: &Query, user_agent: Option<&str>, subresource: Option<&str>) -> Self {
        let manager = match q.get("fieldManager").filter(|m| !m.is_empty()) {
            Some(m) => m.to_owned(),
            None => prefix_from_user_agent(user_agent.unwrap_or_default()),
        };
        Self {
            manager: if manager.is_empty() {
                "unknown".to_owned()
            } else {
                manager
            },
            subresource: subresource.unwrap_or_default().to_owned(),
            install: None,
        }
    }

    /// A writer whose managedFields are already computed (an apply's).
    fn installing(managed_fields: Value) -> Self {
        Self {
            manager: String::new(),
            subresource: String::new(),
            install: Some(managed_fields),
        }
    }
}

/// The User-Agent before its first `/`, printable characters only, at most 128 bytes.
fn prefix_from_user_agent(ua: &str) -> String {
    let mut out = String::new();
    for c in ua.split('/').next().unwrap_or_default().chars() {
        if c.is_control() {
            continue;
        }
        if out.len() + c.len_utf8() > MAX_MANAGER_LEN {
            break;
        }
        out.push(c);
    }
    out
}

thread_local! {
    static WRITER: RefCell<Option<Writer>> = const { RefCell::new(None) };
}

/// Runs `f` (one synchronous request dispatch) with `writer` as the current writer.
pub(crate) fn with_writer<R>(writer: Writer, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<Writer>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let prev = self.0.take();
            WRITER.with(|w| *w.borrow_mut() = prev);
        }
    }
    let prev = WRITER.with(|w| w.borrow_mut().replace(writer));
    let _restore = Restore(prev);
    f()
}

fn current_writer() -> Option<Writer> {
    WRITER.with(|w| w.borrow().clone())
}

/// Checks `PatchOptions` of a non-apply patch: `force` is forbidden
/// (`ValidatePatchOptions`).
pub(crate) fn check_patch_options(q: &Query) -> Result<(), ApiError> {
    if q.get("force").is_some() {
        return Err(invalid_patch_options(
            "force",
            "FieldValueForbidden",
            "Forbidden: may not be specified for non-apply patch",
        ));
    }
    Ok(())
}

fn invalid_patch_options(field: &str, reason: &str, message: &str) -> ApiError {
    let mut e = ApiError::new(
        422,
        "Invalid",
        format!("PatchOptions.meta.k8s.io \"\" is invalid: {field}: {message}"),
    );
    e.details = Some(json!({
        "group": "meta.k8s.io", "kind": "PatchOptions",
        "causes": [{"reason": reason, "message": message, "field": field}],
    }));
    e
}

/// The schema view of a resource: the CRD's version schema for custom resources, the
/// embedded definitions for built-ins, none for resources registered without a schema.
fn with_type<R>(inner: &Inner, info: &ResourceInfo, f: impl FnOnce(Ty<'_>, bool) -> R) -> R {
    if inner.crd_of(info).is_none() {
        return f(Ty::builtin(&info.group, &info.version, &info.kind), true);
    }
    let schema = crate::handlers::validate::crd_version_schema(inner, info);
    f(Ty::custom(schema.as_deref()), false)
}

/// The object a create starts from, as kube-apiserver's typed objects carry it: custom
/// resources start empty; built-ins carry the Go zero values of their non-pointer structs
/// (`metadata`, `spec`, `status`, a pod template's `metadata` and `spec`, `strategy`, ...) and
/// `null` for their required fields (those without `omitempty`, such as a pod's
/// `containers`), so those nodes are not themselves owned by the creator. The schema does not
/// say which fields are Go pointers; the struct names above are the common non-pointer ones.
fn zero_object(ty: Ty<'_>, builtin: bool) -> Value {
    fn fill(ty: Ty<'_>, names: &[&str], depth: usize) -> Value {
        const NESTED: &[&str] = &[
            "template",
            "metadata",
            "spec",
            "strategy",
            "updateStrategy",
            "jobTemplate",
        ];
        let mut m = serde_json::Map::new();
        if depth < 6 {
            for name in names {
                let (child, declared) = ty.field(name);
                if declared && child.is_struct() {
                    m.insert((*name).to_owned(), fill(child, NESTED, depth + 1));
                }
            }
            for name in ty.required() {
                m.entry(name).or_insert(Value::Null);
            }
        }
        Value::Object(m)
    }
    if builtin {
        fill(ty, &["metadata", "spec", "status"], 0)
    } else {
        json!({})
    }
}

fn scope(info: &ResourceInfo, status_only: bool) -> Scope {
    if status_only {
        Scope::StatusOnly
    } else if info.status_subresource {
        Scope::NoStatus
    } else {
        Scope::All
    }
}

fn take_managed_fields(v: &mut Value) -> Option<Value> {
    v.get_mut("metadata")
        .and_then(Value::as_object_mut)
        .and_then(|m| m.remove("managedFields"))
}

fn set_managed_fields(v: &mut Value, mf: Option<Value>) {
    let Some(meta) = v.get_mut("metadata").and_then(Value::as_object_mut) else {
        return;
    };
    match mf {
        Some(mf) if mf.as_array().is_some_and(|a| !a.is_empty()) => {
            meta.insert("managedFields".to_owned(), mf);
        }
        _ => {
            meta.remove("managedFields");
        }
    }
}

/// `[]` or `[{}]`: the client asks for managedFields to be removed.
fn is_reset(mf: &Value) -> bool {
    match mf.as_array().map(Vec::as_slice) {
        Some([]) => true,
        Some([only]) => only.as_object().is_some_and(|o| o.is_empty()),
        _ => false,
    }
}

/// The hook of `write.rs`: maintains `new`'s managedFields for the current request's writer
/// (`old` is the stored object, `None` on create). Without a writer (the server's own
/// writes) nothing changes. Like `UpdateNoErrors`, it never fails: managedFields that cannot
/// be decoded are dropped.
pub(crate) fn on_write(
    inner: &Inner,
    info: &ResourceInfo,
    old: Option<&Value>,
    new: &mut Value,
    status_only: bool,
) {
    let Some(writer) = current_writer() else {
        return;
    };
    if let Some(mf) = writer.install {
        set_managed_fields(new, Some(mf));
        return;
    }
    let subresource = !writer.subresource.is_empty() || status_only;
    let sent = take_managed_fields(new);
    if !subresource && sent.as_ref().is_some_and(is_reset) {
        return;
    }
    let sent_entries = sent
        .filter(|_| !subresource)
        .and_then(|s| managed::decode(&s).ok())
        .filter(|e| !e.is_empty());
    let mut old_v = old.cloned();
    let old_mf = old_v.as_mut().and_then(take_managed_fields);
    let mut entries = match sent_entries {
        Some(e) => e,
        None => old_mf
            .and_then(|m| managed::decode(&m).ok())
            .unwrap_or_default(),
    };
    let me = Entry {
        manager: writer.manager,
        operation: Operation::Update,
        api_version: info.api_version(),
        subresource: writer.subresource,
        time: Some(now_rfc3339()),
        set: Default::default(),
    };
    with_type(inner, info, |ty, builtin| {
        let zero = zero_object(ty, builtin);
        let old_v = old_v.unwrap_or_else(|| zero.clone());
        let scope = scope(info, status_only);
        managed::record_update(&mut entries, me, &old_v, new, (ty, &zero), scope);
    });
    managed::cap_update_managers(&mut entries);
    set_managed_fields(new, Some(managed::encode(&entries)));
}

/// Parses an applied configuration: JSON, or YAML (one document).
fn parse_config(body: &[u8]) -> Result<Value, ApiError> {
    let v: Value = match serde_json::from_slice(body) {
        Ok(v) => v,
        Err(_) => {
            let text = std::str::from_utf8(body).map_err(|e| {
                ApiError::bad_request(format!("error decoding YAML: the body is not UTF-8: {e}"))
            })?;
            serde_saphyr::from_str(text)
                .map_err(|e| ApiError::bad_request(format!("error decoding YAML: {e}")))?
        }
    };
    if !v.is_object() {
        return Err(ApiError::bad_request(
            "error decoding YAML: the applied configuration must be an object",
        ));
    }
    Ok(v)
}

/// Server-side apply (`PATCH` with `application/apply-patch+yaml`): the stored object and
/// whether it was created.
#[allow(clippy::too_many_arguments)]
pub(crate) fn apply(
    inner: &mut Inner,
    info: &ResourceInfo,
    namespace: Option<&str>,
    name: &str,
    status_only: bool,
    q: &Query,
    body: &[u8],
    check: &mut crate::handlers::validate::Check,
) -> Result<(Arc<Obj>, bool), ApiError> {
    let manager = q
        .get("fieldManager")
        .filter(|m| !m.is_empty())
        .ok_or_else(|| {
            invalid_patch_options(
                "fieldManager",
                "FieldValueRequired",
                "Required value: is required for apply patch",
            )
        })?
        .to_owned();
    let force = q.flag("force") == Some(true);
    let config = parse_config(body)?;
    let s = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    let (api_version, kind) = (s(&config["apiVersion"]), s(&config["kind"]));
    if api_version != info.api_version() || kind != info.kind {
        let (group, version) = match api_version.split_once('/') {
            Some((g, v)) => (g.to_owned(), v.to_owned()),
            None => (String::new(), api_version.clone()),
        };
        return Err(ApiError::bad_request(format!(
            "invalid object type: {group}/{version}, Kind={kind}"
        )));
    }
    if !config["metadata"]["managedFields"].is_null() {
        return Err(ApiError::bad_request("metadata.managedFields must be nil"));
    }
    let ns = namespace.unwrap_or_default();
    let live = inner.get(&info.storage_key(), &object_key(ns, name));
    // kube-apiserver checks the name of the merged object against the URL (`checkName`
    // after `applyPatchToCurrentObject`): a configuration without `metadata.name` keeps the
    // live object's, and one applied to nothing (a create) has none and is refused.
    let config_name = s(&config["metadata"]["name"]);
    let merged_name = match (&live, config_name.is_empty()) {
        (Some(live), true) => live.name.clone(),
        _ => config_name,
    };
    if merged_name != name {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({merged_name}) does not match the name on the URL ({name})"
        )));
    }
    if live.is_none() && status_only {
        return Err(ApiError::not_found(&info.group, &info.plural, name));
    }
    let me = Entry {
        manager: manager.clone(),
        operation: Operation::Apply,
        api_version: info.api_version(),
        subresource: if status_only { "status" } else { "" }.to_owned(),
        time: Some(now_rfc3339()),
        set: Default::default(),
    };
    let scope = scope(info, status_only);
    let Some(live) = live else {
        let mut entries = Vec::new();
        let mut merged = with_type(inner, info, |ty, builtin| {
            let zero = zero_object(ty, builtin);
            let empty = json!({});
            managed::apply(&mut entries, me, &empty, &config, (ty, &zero), scope, force)
        })?;
        last_applied::sync(&mut merged, &config, &manager);
        set_managed_fields(&mut merged, None);
        let obj = with_writer(Writer::installing(managed::encode(&entries)), || {
            write::create(inner, info, namespace, merged, check)
        })?;
        return Ok((obj, true));
    };
    let mut live_v = live.value_for(info);
    live_v["apiVersion"] = json!(info.api_version());
    let old_mf = take_managed_fields(&mut live_v);
    let mut entries = old_mf
        .as_ref()
        .and_then(|m| managed::decode(m).ok())
        .unwrap_or_default();
    let before = entries.clone();
    let api_version = info.api_version();
    let (merged, unchanged) = with_type(inner, info, |ty, builtin| {
        let zero = zero_object(ty, builtin);
        let typing = (ty, &zero);
        let mut merged = last_applied::apply(
            &mut entries,
            me,
            &live_v,
            &config,
            typing,
            scope,
            force,
            &api_version,
        )?;
        last_applied::sync(&mut merged, &config, &manager);
        let unchanged = managed::unchanged(&live_v, &merged, typing, scope);
        Ok::<_, ApiError>((merged, unchanged))
    })?;
    // kube-apiserver ignores managedFields timestamps when deciding whether a write changes
    // anything: a repeated apply keeps the old entries and commits nothing.
    let mf = if unchanged && managed::same_but_time(&before, &entries) {
        old_mf.unwrap_or(Value::Null)
    } else {
        managed::encode(&entries)
    };
    let obj = with_writer(Writer::installing(mf), || {
        write::update(inner, info, ns, name, status_only, merged, check)
    })?;
    Ok((obj, false))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn managers_come_from_the_user_agent() {
        assert_eq!(
            prefix_from_user_agent("kubectl/v1.35.0 (linux/amd64) kubernetes/abc"),
            "kubectl"
        );
        let q = Query::parse(Some("fieldManager=mine"));
        assert_eq!(Writer::from_request(&q, Some("x/1"), None).manager, "mine");
        let w = Writer::from_request(&Query::parse(None), None, Some("status"));
        assert_eq!(
            (w.manager.as_str(), w.subresource.as_str()),
            ("unknown", "status")
        );
        assert_eq!(prefix_from_user_agent(&"a".repeat(300)).len(), 128);
        assert!(is_apply("application/apply-patch+yaml; charset=utf-8"));
        assert!(!is_apply("application/merge-patch+json"));
    }

    #[test]
    fn resets_and_zero_objects() {
        assert!(is_reset(&json!([])));
        assert!(is_reset(&json!([{}])));
        assert!(!is_reset(&json!([{"manager": "a"}])));
        let zero = zero_object(Ty::builtin("apps", "v1", "Deployment"), true);
        assert_eq!(
            zero["spec"]["template"],
            json!({"metadata": {}, "spec": {"containers": null}})
        );
        assert!(zero["spec"]["strategy"].is_object());
        assert_eq!(zero_object(Ty::none(), false), json!({}));
    }

    #[test]
    fn configs_parse_as_yaml_or_json() {
        let y = parse_config(b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n").unwrap();
        assert_eq!(y["metadata"]["name"], "a");
        assert_eq!(parse_config(b"{\"a\": 1}").unwrap()["a"], 1);
        assert_eq!(parse_config(b"- 1\n").unwrap_err().code, 400);
        assert_eq!(parse_config(b"a: [").unwrap_err().code, 400);
    }
}
