//! The wire types: `admission.k8s.io/v1` `AdmissionReview` and `apiextensions.k8s.io/v1`
//! `ConversionReview`, as kube-apiserver sends and expects them.
//!
//! k8s-openapi ships neither (they are not served resources, so the OpenAPI documents it is
//! generated from do not describe them), so these are written after the upstream Go types
//! (`k8s.io/api/admission/v1/types.go`, `k8s.io/apiextensions-apiserver/pkg/apis/
//! apiextensions/v1/types.go`), with the same JSON names and the same optional members. The
//! objects they carry stay JSON ([`serde_json::Value`]): a review is decoded first, its objects
//! then one at a time, so that an object the handler's type cannot read is answered with a
//! denial naming it rather than a failed request (the [`admission`](crate::admission) and
//! [`conversion`](crate::conversion) modules do that).
//!
//! The nested types that k8s-openapi does have are its own: `UserInfo`
//! (`authentication.k8s.io/v1`) and `Status` (`meta/v1`).

use k8s_openapi::api::authentication::v1::UserInfo;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Status;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// `admission.k8s.io/v1`, the only admission version served (the configurations this crate
/// produces list `admissionReviewVersions: ["v1"]`).
pub const ADMISSION_API_VERSION: &str = "admission.k8s.io/v1";
/// `apiextensions.k8s.io/v1`, the only conversion review version served.
pub const CONVERSION_API_VERSION: &str = "apiextensions.k8s.io/v1";

/// A group, version and kind (`metav1.GroupVersionKind`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct GroupVersionKind {
    /// The API group, `""` for the core group.
    #[serde(default)]
    pub group: String,
    /// The version.
    #[serde(default)]
    pub version: String,
    /// The kind.
    #[serde(default)]
    pub kind: String,
}

/// A group, version and resource (`metav1.GroupVersionResource`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct GroupVersionResource {
    /// The API group, `""` for the core group.
    #[serde(default)]
    pub group: String,
    /// The version.
    #[serde(default)]
    pub version: String,
    /// The resource (plural).
    #[serde(default)]
    pub resource: String,
}

/// The operation an admission request is for (`admission/v1.Operation`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[non_exhaustive]
pub enum Operation {
    /// `CREATE`.
    #[serde(rename = "CREATE")]
    Create,
    /// `UPDATE`.
    #[serde(rename = "UPDATE")]
    Update,
    /// `DELETE`.
    #[serde(rename = "DELETE")]
    Delete,
    /// `CONNECT` (exec, attach, port-forward, proxy).
    #[serde(rename = "CONNECT")]
    Connect,
}

impl Operation {
    /// The name on the wire and in webhook rules: `CREATE`, `UPDATE`, `DELETE`, `CONNECT`.
    pub fn as_str(self) -> &'static str {
        match self {
            Operation::Create => "CREATE",
            Operation::Update => "UPDATE",
            Operation::Delete => "DELETE",
            Operation::Connect => "CONNECT",
        }
    }
}

impl std::fmt::Display for Operation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `admission.k8s.io/v1` `AdmissionReview`: a request from kube-apiserver, or the answer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AdmissionReview {
    /// `admission.k8s.io/v1`.
    #[serde(default)]
    pub api_version: String,
    /// `AdmissionReview`.
    #[serde(default)]
    pub kind: String,
    /// The request (in what kube-apiserver sends).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<AdmissionRequest>,
    /// The response (in what the webhook answers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<AdmissionResponse>,
}

impl AdmissionReview {
    /// The review that answers a request with `response`.
    pub fn answer(response: AdmissionResponse) -> Self {
        Self {
            api_version: ADMISSION_API_VERSION.to_owned(),
            kind: "AdmissionReview".to_owned(),
            request: None,
            response: Some(response),
        }
    }
}

/// `admission/v1.AdmissionRequest`, its objects as JSON.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AdmissionRequest {
    /// Identifies this round trip; the response must carry it back.
    pub uid: String,
    /// The type of `object` (for example `v1.Pod`, or `autoscaling/v1.Scale` for a scale
    /// sub-resource).
    pub kind: GroupVersionKind,
    /// The resource requested.
    pub resource: GroupVersionResource,
    /// The sub-resource requested (`status`, `scale`, ...), empty when none.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub sub_resource: String,
    /// The kind of the original request, when kube-apiserver converted it to the version
    /// the webhook registered for (`matchPolicy: Equivalent`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_kind: Option<GroupVersionKind>,
    /// The resource of the original request, as `request_kind`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_resource: Option<GroupVersionResource>,
    /// The sub-resource of the original request, as `request_kind`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub request_sub_resource: String,
    /// The object's name; empty on a CREATE whose name the server generates.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// The object's namespace, empty for cluster-scoped objects.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    /// The operation.
    pub operation: Operation,
    /// Who asked.
    #[serde(default)]
    pub user_info: UserInfo,
    /// The object of the request (absent on DELETE; the options object on CONNECT).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object: Option<Value>,
    /// The existing object, on UPDATE and DELETE.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub old_object: Option<Value>,
    /// Whether the change will not be persisted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dry_run: Option<bool>,
    /// The operation's options (`CreateOptions`, `UpdateOptions`, `DeleteOptions`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub options: Option<Value>,
}

/// `admission/v1.AdmissionResponse`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AdmissionResponse {
    /// The request's `uid`.
    pub uid: String,
    /// Whether the request is admitted.
    pub allowed: bool,
    /// Why not (kube-apiserver reads it only when `allowed` is false). Named `status` on the
    /// wire, `Result` in Go.
    #[serde(default, rename = "status", skip_serializing_if = "Option::is_none")]
    pub result: Option<Status>,
    /// The JSON Patch (RFC 6902) of a mutating webhook, base64 on the wire.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "base64_bytes"
    )]
    pub patch: Option<Vec<u8>>,
    /// `JSONPatch` when `patch` is set (the only type kube-apiserver takes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patch_type: Option<String>,
    /// Audit annotations (kube-apiserver prefixes their keys with the webhook's name).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub audit_annotations: std::collections::BTreeMap<String, String>,
    /// Warnings for the client that made the request.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// `apiextensions.k8s.io/v1` `ConversionReview`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConversionReview {
    /// `apiextensions.k8s.io/v1`.
    #[serde(default)]
    pub api_version: String,
    /// `ConversionReview`.
    #[serde(default)]
    pub kind: String,
    /// The request (in what kube-apiserver sends).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<ConversionRequest>,
    /// The response (in what the webhook answers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<ConversionResponse>,
}

impl ConversionReview {
    /// The review that answers a request with `response`.
    pub fn answer(response: ConversionResponse) -> Self {
        Self {
            api_version: CONVERSION_API_VERSION.to_owned(),
            kind: "ConversionReview".to_owned(),
            request: None,
            response: Some(response),
        }
    }
}

/// `apiextensions/v1.ConversionRequest`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConversionRequest {
    /// Identifies this round trip; the response must carry it back.
    pub uid: String,
    /// The `apiVersion` every object is to be converted to (`group/version`).
    #[serde(rename = "desiredAPIVersion")]
    pub desired_api_version: String,
    /// The objects, possibly of several versions.
    #[serde(default)]
    pub objects: Vec<Value>,
}

/// `apiextensions/v1.ConversionResponse`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConversionResponse {
    /// The request's `uid`.
    pub uid: String,
    /// The converted objects, in the request's order; empty when the conversion failed.
    #[serde(default)]
    pub converted_objects: Vec<Value>,
    /// `status: Success`, or `status: Failure` with a message (the whole review failed).
    pub result: Status,
}

/// `[]byte` as Go's encoding/json writes it: standard base64 in a string.
mod base64_bytes {
    use base64::Engine as _;
    use base64::engine::general_purpose::STANDARD;
    use serde::{Deserialize, Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(v: &Option<Vec<u8>>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(bytes) => s.serialize_str(&STANDARD.encode(bytes)),
            None => s.serialize_none(),
        }
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<Vec<u8>>, D::Error> {
        let text: Option<String> = Option::deserialize(d)?;
        text.map(|t| STANDARD.decode(t).map_err(serde::de::Error::custom))
            .transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A review as kube-apiserver sends it decodes; the answer has Go's member names.
    #[test]
    fn wire_names_are_upstream_names() {
        let review: AdmissionReview = serde_json::from_value(json!({
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "request": {
                "uid": "705ab4f5-6393-11e8-b7cc-42010a800002",
                "kind": {"group": "autoscaling", "version": "v1", "kind": "Scale"},
                "resource": {"group": "apps", "version": "v1", "resource": "deployments"},
                "subResource": "scale",
                "requestKind": {"group": "autoscaling", "version": "v1", "kind": "Scale"},
                "requestResource": {"group": "apps", "version": "v1", "resource": "deployments"},
                "requestSubResource": "scale",
                "name": "my-deployment",
                "namespace": "my-namespace",
                "operation": "UPDATE",
                "userInfo": {"username": "admin", "uid": "014fbff9a07c", "groups": ["system:authenticated"], "extra": {"some-key": ["v1", "v2"]}},
                "object": {"apiVersion": "autoscaling/v1", "kind": "Scale"},
                "oldObject": {"apiVersion": "autoscaling/v1", "kind": "Scale"},
                "options": {"apiVersion": "meta.k8s.io/v1", "kind": "UpdateOptions"},
                "dryRun": false
            }
        }))
        .unwrap();
        let request = review.request.unwrap();
        assert_eq!(request.operation, Operation::Update);
        assert_eq!(request.sub_resource, "scale");
        assert_eq!(request.user_info.username.as_deref(), Some("admin"));
        assert_eq!(request.dry_run, Some(false));

        let answer = AdmissionReview::answer(AdmissionResponse {
            uid: request.uid,
            allowed: true,
            patch: Some(b"[]".to_vec()),
            patch_type: Some("JSONPatch".into()),
            warnings: vec!["w".into()],
            ..AdmissionResponse::default()
        });
        assert_eq!(
            serde_json::to_value(&answer).unwrap(),
            json!({
                "apiVersion": "admission.k8s.io/v1",
                "kind": "AdmissionReview",
                "response": {
                    "uid": "705ab4f5-6393-11e8-b7cc-42010a800002",
                    "allowed": true,
                    "patch": "W10=",
                    "patchType": "JSONPatch",
                    "warnings": ["w"]
                }
            })
        );
        let back: AdmissionReview =
            serde_json::from_value(serde_json::to_value(&answer).unwrap()).unwrap();
        assert_eq!(back, answer);
    }

    #[test]
    fn conversion_review_names() {
        let review: ConversionReview = serde_json::from_value(json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "ConversionReview",
            "request": {"uid": "u", "desiredAPIVersion": "example.com/v2", "objects": [{"a": 1}]}
        }))
        .unwrap();
        let request = review.request.unwrap();
        assert_eq!(request.desired_api_version, "example.com/v2");
        assert_eq!(request.objects.len(), 1);
    }
}
