//! `metav1.Status` failures, as the real API server writes them.
//!
//! Every error the server answers is a `Status` object with `status: Failure`, the HTTP code
//! repeated in `code`, a machine-readable `reason` (`NotFound`, `AlreadyExists`, `Conflict`,
//! `Invalid`, `BadRequest`, `Expired`, `Gone`, `TooManyRequests`, `InternalError`, ...) and
//! `details` naming the object, mirroring `k8s.io/apimachinery/pkg/api/errors`.

use serde_json::{Value, json};

/// A failure to be answered as a `Status` object.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{code} {reason}: {message}")]
pub struct ApiError {
    /// HTTP status code, repeated in `Status.code`.
    pub code: u16,
    /// `Status.reason`.
    pub reason: &'static str,
    /// `Status.message`.
    pub message: String,
    /// `Status.details`, when the error concerns one object.
    pub details: Option<Value>,
    /// Seconds for a `Retry-After` header (429).
    pub retry_after: Option<u32>,
    /// `Status.metadata.continue` (an inconsistent continue token on 410 of a list).
    pub continue_token: Option<String>,
}

impl ApiError {
    /// A failure with no details.
    pub fn new(code: u16, reason: &'static str, message: impl Into<String>) -> Self {
        Self {
            code,
            reason,
            message: message.into(),
            details: None,
            retry_after: None,
            continue_token: None,
        }
    }

    fn with_details(mut self, group: &str, kind: &str, name: &str) -> Self {
        self.details = Some(details(group, kind, name, None));
        self
    }

    /// 400 BadRequest.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, "BadRequest", message)
    }

    /// 404 NotFound for an object (`pods "web" not found`).
    pub fn not_found(group: &str, plural: &str, name: &str) -> Self {
        let what = qualified(group, plural);
        Self::new(404, "NotFound", format!("{what} \"{name}\" not found"))
            .with_details(group, plural, name)
    }

    /// 404 NotFound for a path that names no resource: kube-apiserver's generic
    /// "could not find the requested resource", with (empty) `details`, which clients such as
    /// `kubectl debug` read. The path goes to the server's log, not into the message.
    pub fn no_route(path: &str) -> Self {
        tracing::debug!(path, "no route");
        let mut e = Self::new(
            404,
            "NotFound",
            "the server could not find the requested resource",
        );
        e.details = Some(json!({}));
        e
    }

    /// 405 MethodNotAllowed.
    pub fn method_not_allowed(method: &str, path: &str) -> Self {
        tracing::debug!(method, path, "method not allowed");
        let mut e = Self::new(
            405,
            "MethodNotAllowed",
            "the server does not allow this method on the requested resource",
        );
        e.details = Some(json!({}));
        e
    }

    /// 403 Forbidden: a create in a namespace that is being deleted (the NamespaceLifecycle
    /// admission plugin).
    pub fn namespace_terminating(group: &str, plural: &str, name: &str, namespace: &str) -> Self {
        let what = qualified(group, plural);
        let why = format!(
            "unable to create new content in namespace {namespace} because it is being terminated"
        );
        let mut e = Self::new(
            403,
            "Forbidden",
            format!("{what} \"{name}\" is forbidden: {why}"),
        );
        let mut d = details(group, plural, name, None);
        d["causes"] = json!([{"reason": "NamespaceTerminating", "message": why, "field": "metadata.namespace"}]);
        e.details = Some(d);
        e
    }

    /// 409 AlreadyExists.
    pub fn already_exists(group: &str, plural: &str, name: &str) -> Self {
        let what = qualified(group, plural);
        Self::new(
            409,
            "AlreadyExists",
            format!("{what} \"{name}\" already exists"),
        )
        .with_details(group, plural, name)
    }

    /// 409 Conflict on a stale resourceVersion or failed precondition.
    pub fn conflict(group: &str, plural: &str, name: &str, why: &str) -> Self {
        let what = qualified(group, plural);
        Self::new(
            409,
            "Conflict",
            format!("Operation cannot be fulfilled on {what} \"{name}\": {why}"),
        )
        .with_details(group, plural, name)
    }

    /// 410 Expired: the resourceVersion was compacted ("too old resource version").
    pub fn too_old(requested: u64, oldest: u64) -> Self {
        Self::new(
            410,
            "Expired",
            format!("too old resource version: {requested} ({oldest})"),
        )
    }

    /// 422 Invalid, with the failing field as a cause.
    pub fn invalid(group: &str, kind: &str, name: &str, field: &str, message: &str) -> Self {
        let mut e = Self::new(
            422,
            "Invalid",
            format!("{kind} \"{name}\" is invalid: {field}: {message}"),
        );
        e.details = Some(json!({
            "name": name, "group": group, "kind": kind,
            "causes": [{"reason": "FieldValueInvalid", "message": message, "field": field}],
        }));
        e
    }

    /// 415 UnsupportedMediaType.
    pub fn unsupported_media_type(content_type: &str) -> Self {
        Self::new(
            415,
            "UnsupportedMediaType",
            format!(
                "the body of the request was in an unknown format ({content_type}); \
                     accepted media types include: application/json, \
                     application/merge-patch+json, application/json-patch+json, \
                     application/strategic-merge-patch+json"
            ),
        )
    }

    /// 429 TooManyRequests with `Retry-After`.
    pub fn too_many_requests(retry_after: u32) -> Self {
        let mut e = Self::new(
            429,
            "TooManyRequests",
            "too many requests, please try again later (injected fault)",
        );
        e.details = Some(json!({"retryAfterSeconds": retry_after}));
        e.retry_after = Some(retry_after);
        e
    }

    /// 500 InternalError.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(500, "InternalError", message)
    }

    /// 504 Timeout for a resourceVersion newer than the server's.
    pub fn too_large_rv(requested: u64, current: u64) -> Self {
        let mut e = Self::new(
            504,
            "Timeout",
            format!("Too large resource version: {requested}, current: {current}"),
        );
        e.details = Some(json!({
            "causes": [{"reason": "ResourceVersionTooLarge",
                        "message": "Too large resource version"}],
            "retryAfterSeconds": 1,
        }));
        e
    }

    /// The `Status` object.
    pub fn to_status(&self) -> Value {
        let mut metadata = json!({});
        if let Some(c) = &self.continue_token {
            metadata["continue"] = json!(c);
        }
        let mut s = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": metadata,
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        });
        if let Some(d) = &self.details {
            s["details"] = d.clone();
        }
        s
    }
}

/// `Status.details` naming an object: empty fields are left out, as the real server's JSON
/// omits them (`kind` is the resource's plural, as kube-apiserver writes it there).
pub(crate) fn details(group: &str, kind: &str, name: &str, uid: Option<&str>) -> Value {
    let mut d = serde_json::Map::new();
    for (key, value) in [("name", name), ("group", group), ("kind", kind)] {
        if !value.is_empty() {
            d.insert(key.into(), json!(value));
        }
    }
    if let Some(uid) = uid.filter(|u| !u.is_empty()) {
        d.insert("uid".into(), json!(uid));
    }
    Value::Object(d)
}

/// `pods` or `deployments.apps`, as the real messages print a resource.
fn qualified(group: &str, plural: &str) -> String {
    if group.is_empty() {
        plural.to_owned()
    } else {
        format!("{plural}.{group}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_carry_code_reason_and_details() {
        let s = ApiError::not_found("apps", "deployments", "web").to_status();
        assert_eq!(s["code"], 404);
        assert_eq!(s["reason"], "NotFound");
        assert_eq!(s["message"], "deployments.apps \"web\" not found");
        assert_eq!(s["details"]["name"], "web");
        let s = ApiError::too_old(3, 9).to_status();
        assert_eq!(s["message"], "too old resource version: 3 (9)");
        assert_eq!(ApiError::too_many_requests(2).retry_after, Some(2));
    }
}
