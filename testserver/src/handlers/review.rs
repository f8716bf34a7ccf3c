//! The review resources: create-only kinds whose answer is computed, never stored.
//!
//! kube-apiserver serves `authentication.k8s.io/v1` `SelfSubjectReview` (`kubectl auth
//! whoami`) and `TokenReview`, and `authorization.k8s.io/v1` `SelfSubjectAccessReview`
//! (`kubectl auth can-i`), `SelfSubjectRulesReview` (`kubectl auth can-i --list`),
//! `SubjectAccessReview` and `LocalSubjectAccessReview` as create-only resources: a POST
//! answers 201 with the request and its `status`, and nothing is stored or watched.
//!
//! The reviews answer with the server's authentication and authorization (module `authorization`):
//! without RBAC every request is the admin `USER` in the groups `GROUPS` of module `authorization` and every access
//! review is allowed; with it, a review is evaluated against the stored RBAC objects for the
//! requesting user (or the user a `SubjectAccessReview` names), and a token review knows the
//! tokens the server issued.

use serde_json::{Value, json};

use crate::authorization::{self, Attributes, User};
use crate::registry::ResourceInfo;
use crate::status::ApiError;
use crate::storage::Inner;

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

/// The answer to a POST of a review: the request with its `status`.
pub(crate) fn answer(
    inner: &Inner,
    auth: &authorization::Auth,
    user: &User,
    info: &ResourceInfo,
    namespace: Option<&str>,
    mut review: Value,
) -> Result<Value, ApiError> {
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
        "SelfSubjectReview" => json!({"userInfo": user.to_json()}),
        "TokenReview" => {
            let token = spec["token"].as_str().unwrap_or_default();
            if token.is_empty() {
                return Err(invalid("spec.token", "Required value"));
            }
            if let Some(who) = auth.user_of_token(token) {
                json!({"authenticated": true, "user": who.to_json(), "audiences": spec["audiences"]})
            } else {
                json!({"authenticated": false, "error": "invalid bearer token"})
            }
        }
        "SelfSubjectRulesReview" => {
            if spec["namespace"].as_str().unwrap_or_default().is_empty() {
                return Err(invalid("spec.namespace", "Required value"));
            }
            let all = json!({
                "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
                "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
                "incomplete": false,
            });
            if !auth.enabled() || user.groups.iter().any(|g| g == "system:masters") {
                all
            } else {
                let rules = authorization::rules_for(inner, user, spec["namespace"].as_str());
                json!({
                    "resourceRules": rules,
                    "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": ["/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/openapi", "/openapi/*", "/readyz", "/version", "/version/"]}],
                    "incomplete": false,
                })
            }
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
            let subject = match info.kind.as_str() {
                "SubjectAccessReview" | "LocalSubjectAccessReview" => {
                    let name = spec["user"].as_str().unwrap_or_default();
                    let groups: Vec<String> = spec["groups"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(|g| g.as_str().map(str::to_owned))
                        .collect();
                    if name.is_empty() && groups.is_empty() {
                        return Err(invalid(
                            "spec.user",
                            "Invalid value: \"\": at least one of user or group must be specified",
                        ));
                    }
                    User {
                        name: name.to_owned(),
                        groups,
                    }
                }
                _ => user.clone(),
            };
            let ra = &spec["resourceAttributes"];
            let text = |k: &str| ra[k].as_str().filter(|s| !s.is_empty());
            let review_ns = if info.kind == "LocalSubjectAccessReview" {
                namespace
            } else {
                text("namespace")
            };
            let allowed = !auth.enabled()
                || !resource
                || authorization::allowed(
                    inner,
                    &subject,
                    &Attributes {
                        verb: text("verb").unwrap_or_default(),
                        group: text("group").unwrap_or_default(),
                        resource: text("resource").unwrap_or_default(),
                        subresource: text("subresource"),
                        namespace: review_ns,
                        name: text("name"),
                    },
                );
            if allowed {
                json!({"allowed": true, "reason": "allowed by this test server's authorizer"})
            } else {
                json!({"allowed": false})
            }
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
