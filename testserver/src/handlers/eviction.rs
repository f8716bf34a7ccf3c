//! `pods/eviction`: `POST /api/v1/namespaces/{ns}/pods/{name}/eviction` with a `policy/v1`
//! (or `policy/v1beta1`) Eviction, kube-apiserver's `EvictionREST`: the pod is deleted
//! unless the PodDisruptionBudget selecting it forbids it.
//!
//! As the real server:
//! - the body must be an Eviction named as the URL (400), the pod must exist (404), and the
//!   Eviction's `deleteOptions` (preconditions, `dryRun`, also read from the query) apply to
//!   the deletion;
//! - a pod that is `Pending`, `Succeeded`, `Failed` or already being deleted is deleted
//!   without a look at budgets (`canIgnorePDB`);
//! - budgets are the PodDisruptionBudgets of the pod's namespace whose non-empty selector
//!   matches its labels: none, the pod is deleted; more than one, 500 (`This pod has more
//!   than one PodDisruptionBudget, ...`);
//! - a pod that is not Ready is deleted when the budget's `unhealthyPodEvictionPolicy` is
//!   `AlwaysAllow`, or when it has `currentHealthy >= desiredHealthy > 0`;
//! - otherwise `checkAndDecrement`: negative `disruptionsAllowed` or more than 2000
//!   `disruptedPods` are 403, zero is 429 TooManyRequests `Cannot evict pod as it would
//!   violate the pod's disruption budget.` with a `DisruptionBudget` cause naming the
//!   healthy pods needed and present; else the pod is deleted, and a stored status is
//!   decremented and records the pod in `disruptedPods`;
//! - success is a `Status` of `Success` with code 201.
//!
//! No disruption controller runs here, so a budget's status is taken as written only when a
//! test (or a controller under test) wrote it for the budget's current spec
//! (`status.observedGeneration` present and not behind `metadata.generation`). Otherwise it
//! is computed at eviction time as the disruption controller would: the matching pods not
//! being deleted are expected, those with a `Ready` condition `True` (and not in
//! `disruptedPods`) healthy; `desiredHealthy` is `minAvailable` (a percentage of the
//! expected pods, rounded up) or the expected pods less `maxUnavailable` (likewise);
//! `disruptionsAllowed` is `currentHealthy - desiredHealthy`, at least 0, and 0 with no
//! expected pods. Not reproduced there: the controller's count of expected pods from the
//! owning controllers' scale (the matching pods are counted instead), and the 429 `still
//! being processed` of a budget whose status has not caught up (a computed status never
//! lags). No kubelet marks pods Ready here: tests set the condition through `pods/status`.

use std::sync::Arc;

use serde_json::{Map, Value, json};

use crate::State;
use crate::handlers::delete::{self, DeleteOptions};
use crate::handlers::negotiation::body::Body;
use crate::handlers::negotiation::render::to_bytes;
use crate::handlers::params::Query;
use crate::handlers::validate::Check;
use crate::registry::ResourceInfo;
use crate::status::ApiError;
use crate::storage::{Inner, Obj, object_key};

/// Most `disruptedPods` entries a budget may hold (`MaxDisruptedPodSize`).
const MAX_DISRUPTED_PODS: usize = 2000;

/// The `Success` Status of a create that returns no object.
pub(crate) fn created_status() -> http::Response<Body> {
    let status = json!({
        "kind": "Status", "apiVersion": "v1", "metadata": {},
        "status": "Success", "code": 201,
    });
    crate::json_response(201, to_bytes(&status))
}

/// A `Failure` Status with no reason, as kube-apiserver writes a `metav1.Status` a REST
/// handler returns as its result (or an error that is not a `StatusError`).
pub(crate) fn failure_status(code: u16, message: &str) -> http::Response<Body> {
    let status = json!({
        "kind": "Status", "apiVersion": "v1", "metadata": {},
        "status": "Failure", "message": message, "code": code,
    });
    crate::json_response(code, to_bytes(&status))
}

/// The request body as a JSON object of one of `kinds` in one of `api_versions`.
pub(crate) fn body_object(
    body: &[u8],
    kind: &str,
    api_versions: &[&str],
) -> Result<Map<String, Value>, ApiError> {
    let value: Value = serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request(format!("the body is not valid JSON: {e}")))?;
    let Value::Object(map) = value else {
        return Err(ApiError::bad_request(format!(
            "the body is not a {kind} object: expected a JSON object"
        )));
    };
    match map.get("kind") {
        None => {}
        Some(Value::String(k)) if k == kind => {}
        Some(other) => {
            return Err(ApiError::bad_request(format!(
                "the body is not a {kind} object: kind {other}"
            )));
        }
    }
    match map.get("apiVersion") {
        None => {}
        Some(Value::String(v)) if api_versions.contains(&v.as_str()) => {}
        Some(other) => {
            return Err(ApiError::bad_request(format!(
                "the body is not a {kind} object: apiVersion {other} is not one of {api_versions:?}"
            )));
        }
    }
    if !map.get("metadata").is_none_or(Value::is_object) {
        return Err(ApiError::bad_request(format!(
            "the body is not a {kind} object: metadata must be an object"
        )));
    }
    Ok(map)
}

/// The pods resource and its stored pod `namespace/name` (404 when absent).
pub(crate) fn stored_pod(
    inner: &Inner,
    namespace: &str,
    name: &str,
) -> Result<(Arc<ResourceInfo>, Arc<Obj>), ApiError> {
    let not_found = || ApiError::not_found("", "pods", name);
    let info = inner.registry.get("", "v1", "pods").ok_or_else(not_found)?;
    let pod = inner
        .get(&info.storage_key(), &object_key(namespace, name))
        .ok_or_else(not_found)?;
    Ok((info, pod))
}

/// Serves one eviction.
pub(crate) fn evict(
    state: &State,
    namespace: &str,
    name: &str,
    q: &Query,
    body: &[u8],
) -> Result<http::Response<Body>, ApiError> {
    let eviction = body_object(body, "Eviction", &["policy/v1", "policy/v1beta1"])?;
    let meta = eviction.get("metadata").cloned().unwrap_or_default();
    if meta["name"].as_str().unwrap_or_default() != name {
        return Err(ApiError::bad_request(
            "name in URL does not match name in Eviction object",
        ));
    }
    let body_ns = meta["namespace"].as_str().unwrap_or_default();
    if !body_ns.is_empty() && body_ns != namespace {
        return Err(ApiError::bad_request(
            "the namespace of the provided object does not match the namespace sent on the request",
        ));
    }
    let query_dry_run = q.dry_run()?;
    let options = match eviction.get("deleteOptions") {
        None | Some(Value::Null) => DeleteOptions::default(),
        Some(o) => DeleteOptions::parse(&serde_json::to_vec(o).unwrap_or_default(), q)?,
    };
    // A dryRun in the body's deleteOptions or in the query makes the eviction a dry run
    // (only `All` is valid, so the two cannot disagree: `propagateDryRun`).
    let options = DeleteOptions {
        dry_run: options.dry_run || query_dry_run,
        ..options
    };
    let mut inner = state.storage.write(options.dry_run);
    let (pods, pod) = stored_pod(&inner, namespace, name)?;
    let pod = pod.value();
    let phase = pod["status"]["phase"].as_str().unwrap_or_default();
    let deleting = !pod["metadata"]["deletionTimestamp"].is_null();
    if matches!(phase, "Pending" | "Succeeded" | "Failed") || deleting {
        delete::delete(&mut inner, &pods, namespace, name, &options)?;
        return Ok(created_status());
    }
    let Some(pdb_info) = inner.registry.get("policy", "v1", "poddisruptionbudgets") else {
        delete::delete(&mut inner, &pods, namespace, name, &options)?;
        return Ok(created_status());
    };
    let labels = &pod["metadata"]["labels"];
    let budgets: Vec<Value> = inner
        .objects(&pdb_info.storage_key(), Some(namespace))
        .iter()
        .map(|o| o.value())
        .filter(|b| selects(&b["spec"]["selector"], labels))
        .collect();
    let budget = match budgets.as_slice() {
        [] => {
            delete::delete(&mut inner, &pods, namespace, name, &options)?;
            return Ok(created_status());
        }
        [one] => one.clone(),
        _ => {
            return Ok(failure_status(
                500,
                "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.",
            ));
        }
    };
    let pods_in_ns: Vec<Value> = inner
        .objects(&pods.storage_key(), Some(namespace))
        .iter()
        .map(|o| o.value())
        .collect();
    let status = BudgetStatus::of(&budget, &pods_in_ns);
    let pdb_name = budget["metadata"]["name"].as_str().unwrap_or_default();
    let unhealthy_allowed = budget["spec"]["unhealthyPodEvictionPolicy"] == "AlwaysAllow"
        || (status.current_healthy >= status.desired_healthy && status.desired_healthy > 0);
    if !ready(&pod) && unhealthy_allowed {
        delete::delete(&mut inner, &pods, namespace, name, &options)?;
        return Ok(created_status());
    }
    // checkAndDecrement
    if status.disruptions_allowed < 0 {
        return Err(forbidden(pdb_name, "pdb disruptions allowed is negative"));
    }
    if status.disrupted_pods.len() > MAX_DISRUPTED_PODS {
        return Err(forbidden(
            pdb_name,
            "DisruptedPods map too big - too many evictions not confirmed by PDB controller",
        ));
    }
    if status.disruptions_allowed == 0 {
        let mut e = ApiError::new(
            429,
            "TooManyRequests",
            "Cannot evict pod as it would violate the pod's disruption budget.",
        );
        e.details = Some(json!({"causes": [{
            "reason": "DisruptionBudget",
            "message": format!(
                "The disruption budget {pdb_name} needs {} healthy pods and has {} currently",
                status.desired_healthy, status.current_healthy
            ),
        }]}));
        return Err(e);
    }
    if status.stored && !options.dry_run {
        let mut updated = budget.clone();
        let allowed = status.disruptions_allowed - 1;
        updated["status"]["disruptionsAllowed"] = json!(allowed);
        let mut disrupted = status.disrupted_pods.clone();
        disrupted.insert(
            name.to_owned(),
            json!(crate::handlers::write::now_rfc3339()),
        );
        updated["status"]["disruptedPods"] = Value::Object(disrupted);
        if allowed == 0 {
            set_insufficient_pods(&mut updated["status"]);
        }
        let mut check = Check::from_request(&Query::default(), b"{}", "UpdateOptions")?;
        crate::handlers::write::update(
            &mut inner, &pdb_info, namespace, pdb_name, true, updated, &mut check,
        )?;
    }
    delete::delete(&mut inner, &pods, namespace, name, &options)?;
    Ok(created_status())
}

fn forbidden(pdb: &str, why: &str) -> ApiError {
    let mut e = ApiError::new(
        403,
        "Forbidden",
        format!("poddisruptionbudget.policy {pdb:?} is forbidden: {why}"),
    );
    e.details = Some(json!({"name": pdb, "group": "policy", "kind": "poddisruptionbudget"}));
    e
}

/// The `DisruptionAllowed` condition as `UpdateDisruptionAllowedCondition` sets it once no
/// disruption is left.
fn set_insufficient_pods(status: &mut Value) {
    let generation = status["observedGeneration"].clone();
    let condition = json!({
        "type": "DisruptionAllowed", "status": "False", "reason": "InsufficientPods",
        "message": "", "observedGeneration": generation,
        "lastTransitionTime": crate::handlers::write::now_rfc3339(),
    });
    let mut conditions: Vec<Value> = status["conditions"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .filter(|c| c["type"] != "DisruptionAllowed")
        .collect();
    conditions.push(condition);
    status["conditions"] = json!(conditions);
}

/// Whether the pod's `Ready` condition is `True` (`IsPodReady`).
fn ready(pod: &Value) -> bool {
    pod["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["type"] == "Ready" && c["status"] == "True")
}

/// A `metav1.LabelSelector` against labels, as the eviction handler matches budgets: a
/// missing, empty or invalid selector matches nothing.
fn selects(selector: &Value, labels: &Value) -> bool {
    let Some(sel) = selector.as_object() else {
        return false;
    };
    let match_labels = sel.get("matchLabels").and_then(Value::as_object);
    let exprs = sel.get("matchExpressions").and_then(Value::as_array);
    if match_labels.is_none_or(Map::is_empty) && exprs.is_none_or(Vec::is_empty) {
        return false;
    }
    let label = |k: &str| labels[k].as_str();
    let labels_ok = match_labels
        .into_iter()
        .flatten()
        .all(|(k, v)| v.as_str().is_some() && label(k) == v.as_str());
    let exprs_ok = exprs.into_iter().flatten().all(|e| {
        let Some(key) = e["key"].as_str() else {
            return false;
        };
        let values: Vec<&str> = e["values"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        match e["operator"].as_str() {
            Some("In") => !values.is_empty() && label(key).is_some_and(|v| values.contains(&v)),
            Some("NotIn") => !values.is_empty() && label(key).is_none_or(|v| !values.contains(&v)),
            Some("Exists") => values.is_empty() && label(key).is_some(),
            Some("DoesNotExist") => values.is_empty() && label(key).is_none(),
            _ => false,
        }
    });
    labels_ok && exprs_ok
}

/// A budget's status, stored or computed (see the module documentation).
#[derive(Debug, PartialEq)]
struct BudgetStatus {
    desired_healthy: i64,
    current_healthy: i64,
    disruptions_allowed: i64,
    disrupted_pods: Map<String, Value>,
    /// Whether the status is the stored one (decremented and written back).
    stored: bool,
}

impl BudgetStatus {
    fn of(budget: &Value, pods: &[Value]) -> Self {
        let status = &budget["status"];
        let generation = budget["metadata"]["generation"].as_i64().unwrap_or(0);
        let observed = status["observedGeneration"].as_i64();
        let disrupted_pods = status["disruptedPods"]
            .as_object()
            .cloned()
            .unwrap_or_default();
        if observed.is_some_and(|o| o >= generation) {
            let n = |k: &str| status[k].as_i64().unwrap_or(0);
            return Self {
                desired_healthy: n("desiredHealthy"),
                current_healthy: n("currentHealthy"),
                disruptions_allowed: n("disruptionsAllowed"),
                disrupted_pods,
                stored: true,
            };
        }
        let labels_match = |p: &&Value| {
            selects(&budget["spec"]["selector"], &p["metadata"]["labels"])
                && p["metadata"]["deletionTimestamp"].is_null()
        };
        let matching: Vec<&Value> = pods.iter().filter(labels_match).collect();
        let expected = matching.len() as i64;
        let current = matching
            .iter()
            .filter(|p| {
                let name = p["metadata"]["name"].as_str().unwrap_or_default();
                ready(p) && !disrupted_pods.contains_key(name)
            })
            .count() as i64;
        let spec = &budget["spec"];
        let desired = if !spec["maxUnavailable"].is_null() {
            scaled(&spec["maxUnavailable"], expected).map(|max| (expected - max).max(0))
        } else if !spec["minAvailable"].is_null() {
            scaled(&spec["minAvailable"], expected)
        } else {
            Some(0)
        };
        let (desired, allowed) = match desired {
            Some(d) if expected > 0 => (d, (current - d).max(0)),
            Some(d) => (d, 0),
            None => (0, 0),
        };
        Self {
            desired_healthy: desired,
            current_healthy: current,
            disruptions_allowed: allowed,
            disrupted_pods,
            stored: false,
        }
    }
}

/// An int-or-string as `GetScaledValueFromIntOrPercent(.., total, roundUp: true)`; `None`
/// for a string that is not a percentage.
fn scaled(v: &Value, total: i64) -> Option<i64> {
    match v {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => {
            let pct: i64 = s.strip_suffix('%')?.parse().ok()?;
            Some((pct * total + 99).div_euclid(100))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(name: &str, ready_: bool) -> Value {
        json!({"metadata": {"name": name, "labels": {"app": "web"}},
               "status": {"conditions": [{"type": "Ready", "status": if ready_ {"True"} else {"False"}}]}})
    }

    #[test]
    fn selectors_match_as_the_eviction_handler_does() {
        let labels = json!({"app": "web", "tier": "fe"});
        assert!(selects(&json!({"matchLabels": {"app": "web"}}), &labels));
        assert!(!selects(&json!({"matchLabels": {"app": "db"}}), &labels));
        assert!(!selects(&json!({}), &labels), "empty matches nothing");
        assert!(!selects(&Value::Null, &labels), "null matches nothing");
        let e = |op: &str, values: Value| json!({"matchExpressions": [{"key": "tier", "operator": op, "values": values}]});
        assert!(selects(&e("In", json!(["fe", "be"])), &labels));
        assert!(!selects(&e("NotIn", json!(["fe"])), &labels));
        assert!(selects(&e("Exists", json!([])), &labels));
        assert!(!selects(&e("DoesNotExist", json!([])), &labels));
        assert!(
            !selects(&e("Bogus", json!([])), &labels),
            "invalid matches nothing"
        );
    }

    /// The disruption controller's arithmetic, computed when no status was written.
    #[test]
    fn budgets_are_computed_as_the_disruption_controller_does() {
        let pods = [pod("a", true), pod("b", true), pod("c", false)];
        let budget = |spec: Value| {
            json!({"metadata": {"name": "pdb", "generation": 1},
                   "spec": {"selector": {"matchLabels": {"app": "web"}}}})
            .as_object()
            .cloned()
            .map(|mut b| {
                b["spec"]
                    .as_object_mut()
                    .unwrap()
                    .extend(spec.as_object().unwrap().clone());
                Value::Object(b)
            })
            .unwrap()
        };
        let s = BudgetStatus::of(&budget(json!({"minAvailable": 2})), &pods);
        assert_eq!(
            (s.desired_healthy, s.current_healthy, s.disruptions_allowed),
            (2, 2, 0)
        );
        let s = BudgetStatus::of(&budget(json!({"minAvailable": 1})), &pods);
        assert_eq!(s.disruptions_allowed, 1);
        // 50% of 3 rounds up to 2.
        let s = BudgetStatus::of(&budget(json!({"minAvailable": "50%"})), &pods);
        assert_eq!(s.desired_healthy, 2);
        let s = BudgetStatus::of(&budget(json!({"maxUnavailable": 1})), &pods);
        assert_eq!((s.desired_healthy, s.disruptions_allowed), (2, 0));
        let s = BudgetStatus::of(&budget(json!({"maxUnavailable": "bad"})), &pods);
        assert_eq!(s.disruptions_allowed, 0);
        assert!(!s.stored);
        // A status written for the current generation is taken as it is.
        let mut b = budget(json!({"minAvailable": 2}));
        b["status"] = json!({"observedGeneration": 1, "disruptionsAllowed": 4,
                             "desiredHealthy": 1, "currentHealthy": 5});
        let s = BudgetStatus::of(&b, &pods);
        assert!(s.stored && s.disruptions_allowed == 4);
    }
}
