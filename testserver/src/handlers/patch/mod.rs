//! PATCH bodies, by `Content-Type`, as kube-apiserver's `PatchResource` handler applies them
//! (`k8s.io/apiserver/pkg/endpoints/handlers/patch.go`):
//!
//! - `application/merge-patch+json`: RFC 7386 JSON merge patch ([`merge`]);
//! - `application/json-patch+json`: RFC 6902 JSON patch with the bounds kube-apiserver puts
//!   on it, at most 10000 operations and 3 MiB of values copied ([`json_patch`]);
//! - `application/strategic-merge-patch+json`: strategic merge patch, driven by the patch
//!   metadata of the kind's schema in the embedded v1.35 OpenAPI document ([`strategic`]).
//!   Custom resources have no such metadata, and kube-apiserver's CRD handler does not accept
//!   the content type at all: they answer 415 with the CRD handler's list of patch types,
//!   before the object is looked up.
//!
//! `application/apply-patch+yaml` (server-side apply) is served by module `apply`, which the
//! router calls before this one; only the `scale` subresource answers it 415 here.
//!
//! Failures answer what kube-apiserver answers: a body that does not decode is 400; a JSON
//! patch operation that does not apply is 422 `Invalid` with kube-apiserver's generic message
//! ("the server rejected our request due to an error in our request": the handler wraps the
//! library's error in `NewGenericServerResponse`, which keeps no server message for a 422; the
//! underlying reason is logged at debug level here); strategic merge patch errors keep the
//! status codes of `interpretStrategicMergePatchError` (400 for a malformed directive, 422 for
//! lists of lists, 500 with no reason for the library's other errors).

mod json_patch;
mod merge;
mod strategic;

use serde_json::{Value, json};

use crate::registry::ResourceInfo;
use crate::registry::spec::{self, Schema};
use crate::status::ApiError;

use merge::merge_patch;

/// The patch types this server accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PatchType {
    /// `application/merge-patch+json`.
    Merge,
    /// `application/json-patch+json`.
    Json,
    /// `application/strategic-merge-patch+json`.
    Strategic,
}

impl PatchType {
    /// The patch type of a `Content-Type`.
    pub fn from_content_type(ct: &str) -> Result<Self, ApiError> {
        match ct.split(';').next().unwrap_or_default().trim() {
            "application/merge-patch+json" => Ok(Self::Merge),
            "application/json-patch+json" => Ok(Self::Json),
            "application/strategic-merge-patch+json" => Ok(Self::Strategic),
            other => Err(ApiError::unsupported_media_type(other)),
        }
    }

    /// The schema a patch of `info`'s objects follows: the built-in kind's for a strategic
    /// merge patch, none for the other types. A strategic merge patch of a resource without a
    /// built-in schema (a custom resource) answers 415, as kube-apiserver's CRD handler does.
    pub fn schema_for(self, info: &ResourceInfo) -> Result<Option<Schema<'static>>, ApiError> {
        self.schema_of(info, &info.group, &info.version, &info.kind)
    }

    /// [`Self::schema_for`] for the `scale` subresource of `info`: the `autoscaling/v1`
    /// `Scale` schema for built-ins, 415 for custom resources.
    pub fn scale_schema_for(
        self,
        info: &ResourceInfo,
    ) -> Result<Option<Schema<'static>>, ApiError> {
        self.schema_of(info, "autoscaling", "v1", "Scale")
    }

    fn schema_of(
        self,
        info: &ResourceInfo,
        group: &str,
        version: &str,
        kind: &str,
    ) -> Result<Option<Schema<'static>>, ApiError> {
        if self != Self::Strategic {
            return Ok(None);
        }
        if spec::builtin_schema(&info.group, &info.version, &info.kind).is_none() {
            return Err(custom_resource_media_type());
        }
        spec::builtin_schema(group, version, kind)
            .map(Some)
            .ok_or_else(custom_resource_media_type)
    }

    /// Applies `patch` to `target`; `schema` is what [`Self::schema_for`] answered.
    pub fn apply(
        self,
        target: Value,
        patch: &[u8],
        schema: Option<Schema<'_>>,
    ) -> Result<Value, ApiError> {
        match self {
            Self::Merge => {
                let patch: Value = serde_json::from_slice(patch)
                    .map_err(|e| ApiError::bad_request(format!("error decoding patch: {e}")))?;
                if !patch.is_object() {
                    return Err(ApiError::bad_request("merge patch must be a JSON object"));
                }
                let mut t = target;
                merge_patch(&mut t, &patch);
                Ok(t)
            }
            Self::Json => json_patch::apply(target, patch).map_err(|e| match e {
                json_patch::Error::Decode(m) => ApiError::bad_request(m),
                json_patch::Error::TooManyOperations(n) => ApiError::new(
                    413,
                    "RequestEntityTooLarge",
                    format!(
                        "Request entity too large: The allowed maximum operations in a JSON patch is {}, got {n}",
                        json_patch::MAX_OPERATIONS
                    ),
                ),
                json_patch::Error::Apply(why) => {
                    tracing::debug!(%why, "json patch does not apply");
                    rejected()
                }
            }),
            Self::Strategic => {
                let schema = schema.ok_or_else(custom_resource_media_type)?;
                strategic::apply(target, patch, schema).map_err(|e| match e {
                    strategic::Error::BadRequest(m) => ApiError::bad_request(m),
                    strategic::Error::Unprocessable(why) => {
                        tracing::debug!(%why, "strategic merge patch does not apply");
                        rejected()
                    }
                    // A plain Go error reaches the client as a 500 Status with no reason.
                    strategic::Error::Internal(m) => ApiError::new(500, "", m),
                })
            }
        }
    }
}

/// 415 for a strategic merge patch of a custom resource, with the media types the CRD handler
/// of apiextensions-apiserver lists (`negotiation.NewUnsupportedMediaTypeError`).
fn custom_resource_media_type() -> ApiError {
    ApiError::new(
        415,
        "UnsupportedMediaType",
        "the body of the request was in an unknown format - accepted media types include: \
         application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml",
    )
}

/// The 422 of `NewGenericServerResponse(422, ...)`: the library's message is not kept.
fn rejected() -> ApiError {
    let mut e = ApiError::new(
        422,
        "Invalid",
        "the server rejected our request due to an error in our request",
    );
    e.details = Some(json!({}));
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(group: &str, version: &str, kind: &str) -> ResourceInfo {
        let mut i = spec::builtin_resources()
            .into_iter()
            .find(|r| r.kind == "ConfigMap")
            .expect("configmaps");
        i.group = group.into();
        i.version = version.into();
        i.kind = kind.into();
        i
    }

    // kube-apiserver serves every built-in with a Go type, so every built-in accepts a
    // strategic merge patch: each one served here must find its schema.
    #[test]
    fn every_builtin_has_a_schema() {
        for r in spec::builtin_resources() {
            assert!(
                PatchType::Strategic.schema_for(&r).unwrap().is_some(),
                "{}/{} {}",
                r.group,
                r.version,
                r.kind
            );
            if r.scale.is_some() {
                assert!(PatchType::Strategic.scale_schema_for(&r).unwrap().is_some());
            }
        }
    }

    // apiextensions-apiserver's crdHandler accepts json-patch, merge-patch and apply-patch
    // only: a strategic merge patch of a custom resource (or its scale) is 415.
    #[test]
    fn custom_resources_refuse_strategic_merge_patch() {
        let cr = info("example.com", "v1", "Widget");
        let e = PatchType::Strategic.schema_for(&cr).unwrap_err();
        assert_eq!((e.code, e.reason), (415, "UnsupportedMediaType"));
        assert_eq!(
            e.message,
            "the body of the request was in an unknown format - accepted media types include: \
             application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
        );
        assert_eq!(
            PatchType::Strategic.scale_schema_for(&cr).unwrap_err().code,
            415
        );
        assert!(PatchType::Merge.schema_for(&cr).unwrap().is_none());
        assert!(PatchType::Json.schema_for(&cr).unwrap().is_none());
        let e = PatchType::Strategic
            .apply(json!({}), b"{}", None)
            .unwrap_err();
        assert_eq!(e.code, 415);
        assert_eq!(
            PatchType::from_content_type("application/apply-patch+yaml")
                .unwrap_err()
                .code,
            415
        );
    }

    // handlers/patch.go: a failed JSON patch operation is NewGenericServerResponse(422), whose
    // message is the generic one; more than 10000 operations is 413.
    #[test]
    fn json_patch_errors_are_answered_as_kube_apiserver_does() {
        let failed = PatchType::Json
            .apply(
                json!({"a": 1}),
                br#"[{"op": "test", "path": "/a", "value": 2}]"#,
                None,
            )
            .unwrap_err();
        assert_eq!((failed.code, failed.reason), (422, "Invalid"));
        assert_eq!(
            failed.message,
            "the server rejected our request due to an error in our request"
        );
        assert_eq!(failed.to_status()["details"], json!({}));
        let ops: Vec<Value> = (0..10001)
            .map(|_| json!({"op": "test", "path": "/a", "value": 1}))
            .collect();
        let big = PatchType::Json
            .apply(json!({"a": 1}), &serde_json::to_vec(&ops).unwrap(), None)
            .unwrap_err();
        assert_eq!((big.code, big.reason), (413, "RequestEntityTooLarge"));
        assert_eq!(
            big.message,
            "Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001"
        );
        let not_a_patch = PatchType::Json
            .apply(json!({}), br#"{"op": "add"}"#, None)
            .unwrap_err();
        assert_eq!(not_a_patch.code, 400);
    }

    // interpretStrategicMergePatchError: malformed directives are 400, lists of lists 422,
    // the library's other errors reach the client as 500 with no reason.
    #[test]
    fn strategic_errors_map_to_kube_apiserver_codes() {
        let deploy = spec::builtin_schema("apps", "v1", "Deployment");
        let target = json!({"metadata": {"name": "d", "finalizers": []}});
        let code = |patch: Value| {
            PatchType::Strategic
                .apply(target.clone(), &serde_json::to_vec(&patch).unwrap(), deploy)
                .unwrap_err()
        };
        let e = code(json!({"metadata": {"$retainKeys": "name"}}));
        assert_eq!((e.code, e.reason), (400, "BadRequest"));
        assert_eq!(e.message, "invalid patch format of retainKeys");
        let e = code(json!({"metadata": {"finalizers": [["x"]]}}));
        assert_eq!((e.code, e.reason), (422, "Invalid"));
        let e = code(json!({"metadata": {"$patch": "merge"}}));
        assert_eq!((e.code, e.reason), (500, ""));
        assert!(e.message.starts_with("unknown patch type: merge in map: "));
        let e = PatchType::Strategic
            .apply(target.clone(), b"[1]", deploy)
            .unwrap_err();
        assert_eq!(e.code, 400);
    }
}
