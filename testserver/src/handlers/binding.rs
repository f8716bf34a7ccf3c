//! `pods/binding` (`POST /api/v1/namespaces/{ns}/pods/{name}/binding`) and the `bindings`
//! collection (`POST /api/v1/namespaces/{ns}/bindings`, the pod named by the Binding):
//! kube-apiserver's `BindingREST`, which a scheduler uses to assign a pod to a node.
//!
//! As the real server:
//! - the body must be a `v1` Binding (400), named as the URL's pod (400 `name in URL does
//!   not match name in Binding object`; a Binding with no name is 400 `Name parameter
//!   required.`), whose `target` is a Node by name (`ValidatePodBinding`: `target.name`
//!   required, `target.kind` empty or `Node`; its errors are not `Status` errors there, so
//!   they are 500 with no reason);
//! - the pod must exist (404); the Binding's `metadata.uid` and `resourceVersion`, when set,
//!   are preconditions on it (409 Conflict on `pods`);
//! - a pod being deleted, already bound, or with `spec.schedulingGates` is refused with 409
//!   Conflict on `pods/binding` (`pod web is already assigned to node "n1"`);
//! - otherwise the pod gets `spec.nodeName`, the Binding's annotations, and a `PodScheduled`
//!   condition `True`, in one write straight to storage (no field manager entry, as the
//!   real handler's `GuaranteedUpdate`), and the answer is a `Success` Status with code 201;
//!   `dryRun=All` writes nothing.

use serde_json::{Value, json};

use crate::State;
use crate::handlers::eviction::{body_object, created_status, failure_status, stored_pod};
use crate::handlers::negotiation::body::Body;
use crate::handlers::params::Query;
use crate::handlers::validate::{bad_value, go_quote};
use crate::status::ApiError;
use crate::storage::{EventType, Obj};

/// Serves one Binding; `url_name` is the pod of a `pods/{name}/binding` path.
pub(crate) fn bind(
    state: &State,
    namespace: &str,
    url_name: Option<&str>,
    q: &Query,
    body: &[u8],
) -> Result<http::Response<Body>, ApiError> {
    let binding = body_object(body, "Binding", &["v1"])?;
    let meta = binding.get("metadata").cloned().unwrap_or_default();
    let name = meta["name"].as_str().unwrap_or_default();
    if let Some(url_name) = url_name
        && url_name != name
    {
        return Err(ApiError::bad_request(
            "name in URL does not match name in Binding object",
        ));
    }
    if name.is_empty() {
        return Err(ApiError::bad_request("Name parameter required."));
    }
    let body_ns = meta["namespace"].as_str().unwrap_or_default();
    if !body_ns.is_empty() && body_ns != namespace {
        return Err(ApiError::bad_request(
            "the namespace of the provided object does not match the namespace sent on the request",
        ));
    }
    let target = binding.get("target").cloned().unwrap_or_default();
    let mut errors = Vec::new();
    match &target["kind"] {
        Value::Null => {}
        Value::String(k) if k.is_empty() || k == "Node" => {}
        other => errors.push(format!(
            "target.kind: Unsupported value: {}: supported values: {}, {}",
            bad_value(other),
            go_quote("Node"),
            go_quote("<empty>")
        )),
    }
    let node = target["name"].as_str().unwrap_or_default();
    if node.is_empty() {
        errors.push("target.name: Required value".to_owned());
    }
    match errors.as_slice() {
        [] => {}
        [one] => return Ok(failure_status(500, one)),
        many => return Ok(failure_status(500, &format!("[{}]", many.join(", ")))),
    }
    let dry_run = q.dry_run()?;
    let mut inner = state.storage.write(dry_run);
    let (pods, old) = stored_pod(&inner, namespace, name)?;
    let mut pod = old.value();
    let precondition = |what: &str, wanted: &str, have: &str| {
        ApiError::conflict(
            "",
            "pods",
            name,
            &format!(
                "Precondition failed: {what} in precondition: {wanted}, {what} in object meta: {have}"
            ),
        )
    };
    let uid = old.uid();
    if let Some(want) = meta["uid"].as_str().filter(|u| !u.is_empty())
        && want != uid
    {
        return Err(precondition("UID", want, &uid));
    }
    if let Some(want) = meta["resourceVersion"].as_str().filter(|r| !r.is_empty())
        && want != old.rv.to_string()
    {
        return Err(precondition("ResourceVersion", want, &old.rv.to_string()));
    }
    let refuse = |why: String| ApiError::conflict("", "pods/binding", name, &why);
    if !pod["metadata"]["deletionTimestamp"].is_null() {
        return Err(refuse(format!(
            "pod {name} is being deleted, cannot be assigned to a host"
        )));
    }
    let bound = pod["spec"]["nodeName"].as_str().unwrap_or_default();
    if !bound.is_empty() {
        return Err(refuse(format!(
            "pod {name} is already assigned to node {bound:?}"
        )));
    }
    if pod["spec"]["schedulingGates"]
        .as_array()
        .is_some_and(|g| !g.is_empty())
    {
        return Err(refuse(format!(
            "pod {name} has non-empty .spec.schedulingGates"
        )));
    }
    pod["spec"]["nodeName"] = json!(node);
    if let Some(annotations) = meta["annotations"].as_object().filter(|a| !a.is_empty()) {
        if !pod["metadata"]["annotations"].is_object() {
            pod["metadata"]["annotations"] = json!({});
        }
        for (k, v) in annotations {
            pod["metadata"]["annotations"][k] = v.clone();
        }
    }
    set_scheduled(&mut pod["status"]);
    let rv = inner.next_rv();
    pod["metadata"]["resourceVersion"] = json!(rv.to_string());
    inner.commit(
        &pods.storage_key(),
        EventType::Modified,
        Obj::new(&pod, &pods),
        Some(old),
    );
    Ok(created_status())
}

/// `UpdatePodCondition` with `PodScheduled: True`: a new transition time unless the
/// condition already had that status.
fn set_scheduled(status: &mut Value) {
    if !status.is_object() {
        *status = json!({});
    }
    let now = crate::handlers::write::now_rfc3339();
    let mut condition = json!({"type": "PodScheduled", "status": "True",
                               "lastProbeTime": null, "lastTransitionTime": now});
    let conditions = status["conditions"].as_array().cloned().unwrap_or_default();
    let mut out = Vec::with_capacity(conditions.len() + 1);
    let mut found = false;
    for c in conditions {
        if c["type"] == "PodScheduled" {
            if c["status"] == "True" {
                condition["lastTransitionTime"] = c["lastTransitionTime"].clone();
            }
            out.push(condition.clone());
            found = true;
        } else {
            out.push(c);
        }
    }
    if !found {
        out.push(condition);
    }
    status["conditions"] = json!(out);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scheduled_condition_is_added_or_replaced() {
        let mut s = json!({"phase": "Pending"});
        set_scheduled(&mut s);
        assert_eq!(s["conditions"][0]["type"], "PodScheduled");
        let mut s = json!({"conditions": [
            {"type": "PodScheduled", "status": "False", "reason": "Unschedulable"},
            {"type": "Ready", "status": "False"}]});
        set_scheduled(&mut s);
        assert_eq!(s["conditions"][0]["status"], "True");
        assert!(s["conditions"][0]["reason"].is_null());
        assert_eq!(s["conditions"].as_array().unwrap().len(), 2);
    }
}
