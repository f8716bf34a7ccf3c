//! The review resources: create-only kinds whose answer is computed, never stored.
//!
//! kube-apiserver serves `authentication.k8s.io/v1` `SelfSubjectReview` (`kubectl auth
//! whoami`) and `TokenReview`, and `authorization.k8s.io/v1` `SelfSubjectAccessReview`
//! (`kubectl auth can-i`), `SelfSubjectRulesReview` (`kubectl auth can-i --list`),
//! `SubjectAccessReview` and `LocalSubjectAccessReview` as create-only resources: a POST
//! answers 201 with the request and its `status`, and nothing is stored or watched.
//!
//! This server authenticates every request as one user, [`USER`] in the groups [`GROUPS`]
//! (the kubeconfig's bearer token stands for it), and authorizes everything, as a cluster
//! admin is authorized: every access review is allowed and the rules list is `*`. A token
//! review accepts exactly the kubeconfig's token.

use serde_json::{Value, json};

use super::registry::ResourceInfo;
use super::status::ApiError;

/// The user every request is authenticated as.
pub(crate) const USER: &str = "kinform-testserver-admin";
/// The groups of [`USER`].
pub(crate) const GROUPS: [&str; 2] = ["system:masters", "system:authenticated"];

/// Whether `info` is one of the review resources.
pub(crate) fn is_review(info: &ResourceInfo) -> bool {
    matches!(
        (info.group.as_str(), info.kind.as_str()),
        ("authentication.k8s.io", "SelfSubjectReview" | "TokenReview")
            | (
                "authorization.k8s.io",
                "SelfSubjectAccessReview"
                    | "SelfSubjectRulesReview"
                    | "SubjectAccessReview"
                    | "LocalSubjectAccessReview"
            )
    )
}

fn user_info() -> Value {
    json!({"username": USER, "groups": GROUPS})
}

/// The answer to a POST of a review: the request with its `status`.
pub(crate) fn answer(info: &ResourceInfo, mut review: Value) -> Result<Value, ApiError> {
    if !review.is_object() {
        return Err(ApiError::bad_request("the body must be a JSON object"));
    }
    let invalid =
        |field: &str, message: &str| ApiError::invalid(&info.group, &info.kind, "", field, message);
    review["apiVersion"] = json!(info.api_version());
    review["kind"] = json!(info.kind);
    review["metadata"] = json!({"creationTimestamp": null});
    let spec = &review["spec"];
    let status = match info.kind.as_str() {
        "SelfSubjectReview" => json!({"userInfo": user_info()}),
        "TokenReview" => {
            let token = spec["token"].as_str().unwrap_or_default();
            if token.is_empty() {
                return Err(invalid("spec.token", "Required value"));
            }
            if token == super::TOKEN {
                json!({"authenticated": true, "user": user_info(), "audiences": spec["audiences"]})
            } else {
                json!({"authenticated": false, "error": "invalid bearer token"})
            }
        }
        "SelfSubjectRulesReview" => {
            if spec["namespace"].as_str().unwrap_or_default().is_empty() {
                return Err(invalid("spec.namespace", "Required value"));
            }
            json!({
                "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
                "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
                "incomplete": false,
            })
        }
        _ => {
            let resource = spec["resourceAttributes"].is_object();
            let non_resource = spec["nonResourceAttributes"].is_object();
            if resource == non_resource {
                return Err(invalid(
                    "spec.resourceAttributes",
                    "Invalid value: \"null\": exactly one of nonResourceAttributes or resourceAttributes must be specified",
                ));
            }
            if info.kind == "SubjectAccessReview"
                && spec["user"].as_str().unwrap_or_default().is_empty()
                && spec["groups"].as_array().is_none_or(Vec::is_empty)
            {
                return Err(invalid(
                    "spec.user",
                    "Invalid value: \"\": at least one of user or group must be specified",
                ));
            }
            json!({
                "allowed": true,
                "reason": "this test server authorizes every request",
            })
        }
    };
    review["status"] = status;
    Ok(review)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::Registry;

    #[test]
    fn reviews_are_recognised_and_validated() {
        let reg = Registry::with_builtins();
        let ssar = reg
            .get("authorization.k8s.io", "v1", "selfsubjectaccessreviews")
            .unwrap();
        assert!(is_review(&ssar));
        assert!(!is_review(&reg.get("", "v1", "pods").unwrap()));
    }
}
