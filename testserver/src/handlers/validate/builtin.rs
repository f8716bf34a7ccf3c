//! The hand-written Go validation of built-in kinds that the OpenAPI document cannot express,
//! for the rules clients and controllers trip over (`pkg/apis/*/validation`, and the
//! strategies' `ValidateUpdate`):
//!
//! - workloads (Deployments, ReplicaSets, StatefulSets, ReplicationControllers, Jobs): a
//!   negative `spec.replicas` (`parallelism`, `completions`, `backoffLimit` of a Job) is
//!   refused (`ValidateNonnegativeField`);
//! - Jobs: the pod template's `restartPolicy` must be `OnFailure` or `Never` (the pod
//!   defaulting makes an unset one `Always`, refused as a required value), a Job with
//!   `manualSelector: true` needs a `spec.selector`, and the selector must match the pod
//!   template's labels;
//! - on update, `spec.selector` of the apps/v1 workloads and of Jobs is immutable, and a
//!   ConfigMap or Secret with `immutable: true` keeps its `data` and `binaryData` and its
//!   `immutable` flag (`ValidateConfigMapUpdate`, `ValidateSecretUpdate`; a Secret's `type`
//!   is immutable in any case).
//!
//! The causes are worded as `k8s.io/apimachinery/pkg/util/validation/field` words them;
//! a struct value (a selector) is printed as JSON.

use serde_json::{Value, json};

use super::{Cause, invalid_error};
use crate::registry::ResourceInfo;
use crate::status::ApiError;

const IMMUTABLE: &str = "field is immutable";
const IMMUTABLE_WHEN_SET: &str = "field is immutable when `immutable` is set";

/// Checks a built-in object about to be stored (`old`: the stored one, on update): 422
/// Invalid listing every failure.
pub(crate) fn check(
    info: &ResourceInfo,
    name: &str,
    new: &Value,
    old: Option<&Value>,
) -> Result<(), ApiError> {
    let mut causes = Vec::new();
    let kind = (info.group.as_str(), info.kind.as_str());
    match kind {
        ("apps", "Deployment" | "ReplicaSet" | "StatefulSet") | ("", "ReplicationController") => {
            non_negative(&mut causes, new, "replicas");
        }
        ("batch", "Job") => job(&mut causes, new),
        _ => {}
    }
    if let Some(old) = old {
        match kind {
            ("apps", "Deployment" | "ReplicaSet" | "StatefulSet" | "DaemonSet")
            | ("batch", "Job") => {
                let (n, o) = (&new["spec"]["selector"], &old["spec"]["selector"]);
                if n != o {
                    causes.push(Cause::invalid("spec.selector", n, IMMUTABLE));
                }
            }
            ("", "ConfigMap") => immutable_data(&mut causes, new, old, &["data", "binaryData"]),
            ("", "Secret") => {
                let (n, o) = (&new["type"], &old["type"]);
                if n != o {
                    causes.push(Cause::invalid("type", n, IMMUTABLE));
                }
                immutable_data(&mut causes, new, old, &["data"]);
            }
            _ => {}
        }
    }
    if causes.is_empty() {
        Ok(())
    } else {
        Err(invalid_error(&info.group, &info.kind, name, causes))
    }
}

/// `spec.<field>` must not be negative.
fn non_negative(causes: &mut Vec<Cause>, obj: &Value, field: &str) {
    let v = &obj["spec"][field];
    if v.as_i64().is_some_and(|n| n < 0) {
        causes.push(Cause::invalid(
            &format!("spec.{field}"),
            v,
            "must be greater than or equal to 0",
        ));
    }
}

fn job(causes: &mut Vec<Cause>, job: &Value) {
    for field in [
        "parallelism",
        "completions",
        "activeDeadlineSeconds",
        "backoffLimit",
        "ttlSecondsAfterFinished",
    ] {
        non_negative(causes, job, field);
    }
    let spec = &job["spec"];
    let selector = &spec["selector"];
    if selector.is_null() {
        causes.push(Cause::required("spec.selector"));
    } else if !selector_matches(selector, &spec["template"]["metadata"]["labels"]) {
        let labels = &spec["template"]["metadata"]["labels"];
        causes.push(Cause::invalid(
            "spec.template.metadata.labels",
            labels,
            "`selector` does not match template `labels`",
        ));
    }
    let field = "spec.template.spec.restartPolicy";
    match spec["template"]["spec"]["restartPolicy"].as_str() {
        None | Some("" | "Always") => causes.push(Cause::required_because(
            field,
            "valid values: \"OnFailure\", \"Never\"",
        )),
        Some("OnFailure" | "Never") => {}
        Some(other) => causes.push(Cause::not_supported(
            field,
            &json!(other),
            &["OnFailure", "Never"],
        )),
    }
}

/// An object with `immutable: true` keeps `fields` and the flag.
fn immutable_data(causes: &mut Vec<Cause>, new: &Value, old: &Value, fields: &[&str]) {
    if old["immutable"] != json!(true) {
        return;
    }
    if new["immutable"] != json!(true) {
        causes.push(Cause::forbidden("immutable", IMMUTABLE_WHEN_SET));
    }
    for f in fields {
        if empty_as_null(&new[*f]) != empty_as_null(&old[*f]) {
            causes.push(Cause::forbidden(f, IMMUTABLE_WHEN_SET));
        }
    }
}

/// An empty map compares as an absent one (Go's `reflect.DeepEqual` of decoded maps that
/// `omitempty` dropped).
fn empty_as_null(v: &Value) -> &Value {
    match v {
        Value::Object(m) if m.is_empty() => &Value::Null,
        v => v,
    }
}

/// Whether a `metav1.LabelSelector` selects `labels` (an empty selector selects
/// everything).
fn selector_matches(selector: &Value, labels: &Value) -> bool {
    let label = |k: &str| labels.get(k).and_then(Value::as_str);
    let by_labels = selector["matchLabels"]
        .as_object()
        .into_iter()
        .flatten()
        .all(|(k, v)| label(k) == v.as_str());
    let by_expressions = selector["matchExpressions"]
        .as_array()
        .into_iter()
        .flatten()
        .all(|e| {
            let key = e["key"].as_str().unwrap_or_default();
            let values: Vec<&str> = e["values"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            match e["operator"].as_str().unwrap_or_default() {
                "In" => label(key).is_some_and(|l| values.contains(&l)),
                "NotIn" => label(key).is_none_or(|l| !values.contains(&l)),
                "Exists" => label(key).is_some(),
                "DoesNotExist" => label(key).is_none(),
                _ => false,
            }
        });
    by_labels && by_expressions
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::Registry;

    fn info(group: &str, plural: &str) -> std::sync::Arc<ResourceInfo> {
        Registry::with_builtins()
            .get(group, "v1", plural)
            .expect("served")
    }

    #[test]
    fn selectors_match_like_label_selectors() {
        let labels = json!({"app": "web", "tier": "front"});
        assert!(selector_matches(&json!({}), &labels));
        assert!(selector_matches(
            &json!({"matchLabels": {"app": "web"}}),
            &labels
        ));
        assert!(!selector_matches(
            &json!({"matchLabels": {"app": "db"}}),
            &labels
        ));
        let expr = |op: &str, values: Value| json!({"matchExpressions": [{"key": "tier", "operator": op, "values": values}]});
        assert!(selector_matches(&expr("In", json!(["front"])), &labels));
        assert!(!selector_matches(&expr("NotIn", json!(["front"])), &labels));
        assert!(selector_matches(&expr("Exists", json!([])), &labels));
        assert!(!selector_matches(&expr("DoesNotExist", json!([])), &labels));
    }

    /// `ValidateJob`: an `Always` restart policy is a required value, a selector that does
    /// not select the template is invalid.
    #[test]
    fn jobs_need_a_terminating_restart_policy() {
        let jobs = info("batch", "jobs");
        let job = json!({"spec": {"selector": {"matchLabels": {"a": "b"}},
            "template": {"metadata": {"labels": {"a": "b"}}, "spec": {"restartPolicy": "Always"}}}});
        let e = check(&jobs, "j", &job, None).unwrap_err();
        assert_eq!(
            e.message,
            "Job.batch \"j\" is invalid: spec.template.spec.restartPolicy: Required value: valid values: \"OnFailure\", \"Never\""
        );
        let mut ok = job.clone();
        ok["spec"]["template"]["spec"]["restartPolicy"] = json!("Never");
        check(&jobs, "j", &ok, None).unwrap();
        let mut off = ok.clone();
        off["spec"]["template"]["metadata"]["labels"] = json!({"a": "c"});
        let e = check(&jobs, "j", &off, None).unwrap_err();
        let cause = &e.details.unwrap()["causes"][0];
        assert_eq!(cause["field"], "spec.template.metadata.labels");
    }

    /// `ValidateConfigMapUpdate`: data and the flag of an immutable ConfigMap are forbidden
    /// to change.
    #[test]
    fn immutable_config_maps_keep_their_data() {
        let cms = info("", "configmaps");
        let old = json!({"immutable": true, "data": {"a": "1"}});
        check(&cms, "c", &old, Some(&old)).unwrap();
        let changed = json!({"immutable": true, "data": {"a": "2"}});
        let e = check(&cms, "c", &changed, Some(&old)).unwrap_err();
        assert_eq!(
            e.message,
            "ConfigMap \"c\" is invalid: data: Forbidden: field is immutable when `immutable` is set"
        );
        let unset = json!({"data": {"a": "1"}});
        let e = check(&cms, "c", &unset, Some(&old)).unwrap_err();
        assert_eq!(e.details.unwrap()["causes"][0]["field"], "immutable");
        let mutable = json!({"data": {"a": "1"}});
        check(&cms, "c", &json!({"data": {"a": "2"}}), Some(&mutable)).unwrap();
    }
}
