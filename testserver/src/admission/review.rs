//! The `AdmissionReview` a webhook is sent (`webhook/request.CreateAdmissionObjects`), the
//! checks of its answer (`VerifyAdmissionResponse`), and the errors in upstream's shapes
//! (`webhook/errors.ToStatusErr`, `ErrCallingWebhook`).

use base64::Engine as _;
use serde_json::{Value, json};

use super::config::Webhook;
use super::{Operation, Request, intern_reason};
use crate::status::ApiError;

/// The version of the resource a webhook is sent (the request's, or an equivalent one under
/// `matchPolicy: Equivalent`).
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Invocation {
    pub group: String,
    pub version: String,
    pub kind: String,
}

/// The review version a webhook accepts, in its order of preference (`v1`, `v1beta1`).
pub(super) fn review_version(hook: &Webhook) -> Option<&'static str> {
    hook.review_versions.iter().find_map(|v| match v.as_str() {
        "v1" => Some("v1"),
        "v1beta1" => Some("v1beta1"),
        _ => None,
    })
}

/// The `request` of an `AdmissionReview` (without its uid, given by [`review`]).
#[allow(clippy::too_many_arguments)]
pub(super) fn request(
    req: &Request,
    invocation: &Invocation,
    operation: Operation,
    object: Option<&Value>,
    old: Option<&Value>,
) -> Value {
    let info = &req.info;
    // A PATCH is admitted with the options of what it does (`patchToCreateOptions`,
    // `patchToUpdateOptions`).
    let mut options = req.options.clone();
    options["kind"] = json!(match operation {
        Operation::Create => "CreateOptions",
        Operation::Update => "UpdateOptions",
        Operation::Delete => "DeleteOptions",
    });
    if operation != Operation::Delete
        && let Some(m) = options.as_object_mut()
    {
        m.remove("force");
    }
    let mut r = json!({
        "kind": {"group": invocation.group, "version": invocation.version, "kind": invocation.kind},
        "resource": {"group": info.group, "version": invocation.version, "resource": info.plural},
        "requestKind": {"group": info.group, "version": info.version, "kind": info.kind},
        "requestResource": {"group": info.group, "version": info.version, "resource": info.plural},
        "operation": operation.as_str(),
        "userInfo": {"username": req.user.username, "groups": req.user.groups},
        "object": object.cloned().unwrap_or(Value::Null),
        "oldObject": old.cloned().unwrap_or(Value::Null),
        "dryRun": req.dry_run,
        "options": options,
    });
    let name = if req.name.is_empty() {
        object
            .or(old)
            .and_then(|o| o["metadata"]["name"].as_str())
            .unwrap_or_default()
    } else {
        &req.name
    };
    if !name.is_empty() {
        r["name"] = json!(name);
    }
    let namespace = if info.is_namespace() {
        name
    } else {
        &req.namespace
    };
    if !namespace.is_empty() {
        r["namespace"] = json!(namespace);
    }
    if !req.subresource.is_empty() {
        r["subResource"] = json!(req.subresource);
        r["requestSubResource"] = json!(req.subresource);
    }
    r
}

/// The whole review sent.
pub(super) fn review(version: &str, uid: &str, request: &Value) -> Value {
    let mut request = request.clone();
    request["uid"] = json!(uid);
    json!({
        "kind": "AdmissionReview",
        "apiVersion": format!("admission.k8s.io/{version}"),
        "request": request,
    })
}

/// A webhook's checked answer.
#[derive(Debug, Default, PartialEq)]
pub(super) struct Answer {
    pub allowed: bool,
    /// `response.status` (`result` in Go).
    pub result: Value,
    /// The decoded JSON Patch, if any.
    pub patch: Option<Vec<u8>>,
    pub warnings: Vec<String>,
}

/// `VerifyAdmissionResponse`: the answer must be an `AdmissionReview` of the version sent,
/// for this uid, with a patch only from a mutating webhook and only as a `JSONPatch`. The
/// error is the text after `received invalid webhook response: `.
pub(super) fn verify(
    version: &str,
    uid: &str,
    mutating: bool,
    body: &[u8],
) -> Result<Answer, String> {
    let review: Value = serde_json::from_slice(body).map_err(|e| e.to_string())?;
    let response = &review["response"];
    if version == "v1" {
        let api_version = review["apiVersion"].as_str().unwrap_or_default();
        let kind = review["kind"].as_str().unwrap_or_default();
        if api_version != "admission.k8s.io/v1" || kind != "AdmissionReview" {
            let (g, v) = api_version.split_once('/').unwrap_or(("", api_version));
            return Err(format!(
                "expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got {g}/{v}, Kind={kind}"
            ));
        }
    }
    if !response.is_object() {
        return Err("webhook response was absent".into());
    }
    if version == "v1" {
        let got = response["uid"].as_str().unwrap_or_default();
        if got != uid {
            return Err(format!("expected response.uid={uid:?}, got {got:?}"));
        }
    }
    let patch = match response["patch"].as_str().filter(|p| !p.is_empty()) {
        Some(p) => Some(
            base64::engine::general_purpose::STANDARD
                .decode(p)
                .map_err(|e| format!("illegal base64 data in response.patch: {e}"))?,
        ),
        None => None,
    };
    let patch_type = response["patchType"].as_str().unwrap_or_default();
    if version == "v1" {
        if patch.is_some() && patch_type.is_empty() {
            return Err("webhook returned response.patch but not response.patchType".into());
        }
        if !mutating && !patch_type.is_empty() {
            return Err("validating webhook may not return response.patchType".into());
        }
        if mutating && !patch_type.is_empty() && patch_type != "JSONPatch" {
            return Err(format!("invalid webhook response.patchType={patch_type:?}"));
        }
    }
    if !mutating && patch.is_some() {
        return Err("validating webhook may not return response.patch".into());
    }
    Ok(Answer {
        allowed: response["allowed"].as_bool().unwrap_or(false),
        result: response["status"].clone(),
        patch,
        warnings: response["warnings"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
    })
}

/// `ToStatusErr`: the webhook's `Status`, its message prefixed with `admission webhook
/// "<name>" denied the request`, its code at least 400.
pub(super) fn denied(name: &str, result: &Value) -> ApiError {
    let code = result["code"]
        .as_u64()
        .and_then(|c| u16::try_from(c).ok())
        .filter(|c| *c >= 400 && *c <= 599)
        .unwrap_or(400);
    let reason = result["reason"].as_str().unwrap_or_default();
    let message = result["message"].as_str().unwrap_or_default();
    let denied_by = format!("admission webhook {name:?} denied the request");
    let message = if !message.is_empty() {
        format!("{denied_by}: {message}")
    } else if !reason.is_empty() {
        format!("{denied_by}: {reason}")
    } else {
        format!("{denied_by} without explanation")
    };
    let mut e = ApiError::new(code, intern_reason(reason), message);
    if result["details"].is_object() {
        e.details = Some(result["details"].clone());
    }
    e
}

/// `NewInternalError(ErrCallingWebhook)` of a `failurePolicy: Fail` webhook that could not
/// be called.
pub(super) fn calling_failed(name: &str, reason: &str) -> ApiError {
    let message = format!("failed calling webhook {name:?}: {reason}");
    let mut e = ApiError::internal(format!("Internal error occurred: {message}"));
    e.details = Some(json!({"causes": [{"message": message}]}));
    e
}

/// `NewDryRunUnsupportedErr`.
pub(super) fn dry_run_unsupported(name: &str) -> ApiError {
    ApiError::bad_request(format!(
        "admission webhook {name:?} does not support dry run"
    ))
}

/// `NewForbidden(resource, name, err)` of a request whose `matchConditions` failed.
pub(super) fn conditions_failed(req: &Request, name: &str, why: &str) -> ApiError {
    let info = &req.info;
    let resource = if info.group.is_empty() {
        info.plural.clone()
    } else {
        format!("{}.{}", info.plural, info.group)
    };
    let mut e = ApiError::new(
        403,
        "Forbidden",
        format!("{resource} {name:?} is forbidden: {why}"),
    );
    e.details = Some(json!({"name": name, "group": info.group, "kind": info.plural}));
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_read_and_code_as_to_status_err() {
        let e = denied(
            "deny.example.com",
            &json!({"code": 403, "message": "no thanks"}),
        );
        assert_eq!(e.code, 403);
        assert_eq!(
            e.message,
            "admission webhook \"deny.example.com\" denied the request: no thanks"
        );
        let e = denied("d", &json!({"code": 200}));
        assert_eq!(
            (e.code, e.message.as_str()),
            (
                400,
                "admission webhook \"d\" denied the request without explanation"
            )
        );
        assert_eq!(denied("d", &Value::Null).code, 400);
        let e = denied("d", &json!({"reason": "Forbidden"}));
        assert_eq!(
            e.message,
            "admission webhook \"d\" denied the request: Forbidden"
        );
        assert_eq!(e.reason, "Forbidden");
    }

    #[test]
    fn answers_are_verified_as_upstream() {
        let ok = |body: Value, mutating| verify("v1", "u1", mutating, body.to_string().as_bytes());
        let review = |response: Value| json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response});
        assert!(
            ok(review(json!({"uid": "u1", "allowed": true})), false)
                .unwrap()
                .allowed
        );
        assert_eq!(
            ok(review(json!({"uid": "u2", "allowed": true})), false).unwrap_err(),
            "expected response.uid=\"u1\", got \"u2\""
        );
        assert_eq!(
            ok(json!({"apiVersion": "admission.k8s.io/v1beta1", "kind": "AdmissionReview", "response": {"uid": "u1"}}), false).unwrap_err(),
            "expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got admission.k8s.io/v1beta1, Kind=AdmissionReview"
        );
        let patch = base64::engine::general_purpose::STANDARD.encode("[]");
        assert_eq!(
            ok(
                review(json!({"uid": "u1", "allowed": true, "patch": patch})),
                true
            )
            .unwrap_err(),
            "webhook returned response.patch but not response.patchType"
        );
        assert!(
            ok(
                review(
                    json!({"uid": "u1", "allowed": true, "patch": patch, "patchType": "JSONPatch"})
                ),
                false
            )
            .is_err()
        );
        let a = ok(review(json!({"uid": "u1", "allowed": true, "patch": patch, "patchType": "JSONPatch", "warnings": ["w"]})), true).unwrap();
        assert_eq!(
            (a.patch.as_deref(), a.warnings),
            (Some(&b"[]"[..]), vec!["w".to_owned()])
        );
        assert_eq!(
            ok(review(Value::Null), false).unwrap_err(),
            "webhook response was absent"
        );
    }
}
