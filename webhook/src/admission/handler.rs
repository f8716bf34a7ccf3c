//! From a wire [`AdmissionRequest`] to a typed [`Request<K>`], the user's handler, and back
//! to an [`AdmissionResponse`]: the type-erased handlers the router holds.

use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Status;
use kinform_core::Resource;
use serde_json::Value;

use super::{Denial, Mutator, Request, Validator, Verdict, patch};
use crate::review::{AdmissionRequest, AdmissionResponse, Operation};

/// A boxed answer of a handler.
pub(crate) type Answer<'a> = Pin<Box<dyn Future<Output = AdmissionResponse> + Send + 'a>>;

/// One admission route's handler, its type erased.
pub(crate) trait AdmissionHandler: Send + Sync {
    /// The answer to `request`; never fails (a failure is a denial).
    fn admit(&self, request: AdmissionRequest) -> Answer<'_>;
}

/// A [`Validator`] of `K` as an [`AdmissionHandler`].
pub(crate) struct Validating<K, V> {
    validator: V,
    kind: PhantomData<fn() -> K>,
}

impl<K, V> Validating<K, V> {
    pub(crate) fn new(validator: V) -> Self {
        Self {
            validator,
            kind: PhantomData,
        }
    }
}

/// A [`Mutator`] of `K` as an [`AdmissionHandler`].
pub(crate) struct Mutating<K, M> {
    mutator: M,
    kind: PhantomData<fn() -> K>,
}

impl<K, M> Mutating<K, M> {
    pub(crate) fn new(mutator: M) -> Self {
        Self {
            mutator,
            kind: PhantomData,
        }
    }
}

impl<K: Resource, V: Validator<K>> AdmissionHandler for Validating<K, V> {
    fn admit(&self, request: AdmissionRequest) -> Answer<'_> {
        Box::pin(async move {
            let uid = request.uid.clone();
            match typed::<K>(request) {
                Ok(typed) => {
                    let verdict = self.validator.validate(&typed).await;
                    respond(uid, verdict, None)
                }
                Err(denial) => denied(uid, denial),
            }
        })
    }
}

impl<K: Resource, M: Mutator<K>> AdmissionHandler for Mutating<K, M> {
    fn admit(&self, request: AdmissionRequest) -> Answer<'_> {
        Box::pin(async move {
            let uid = request.uid.clone();
            let received = match request.operation {
                Operation::Connect => None,
                _ => request.object.clone(),
            };
            let typed = match typed::<K>(request) {
                Ok(typed) => typed,
                Err(denial) => return denied(uid, denial),
            };
            let (Some(received), Some(mut object)) = (received, typed.object.clone()) else {
                // Nothing to change (DELETE, CONNECT): admitted as it is.
                return respond(uid, Verdict::allow(), None);
            };
            let before = match encode(&object) {
                Ok(v) => v,
                Err(denial) => return denied(uid, denial),
            };
            let verdict = self.mutator.mutate(&typed, &mut object).await;
            if !verdict.is_allowed() {
                return respond(uid, verdict, None);
            }
            let after = match encode(&object) {
                Ok(v) => v,
                Err(denial) => return denied(uid, denial),
            };
            let computed = patch::compute(&received, &before, &after);
            if computed.against_received {
                tracing::warn!(
                    kind = K::KIND,
                    name = %typed.name,
                    "the mutation's patch did not apply to the object as received; answered a \
                     patch against the received object, which drops members {} does not model",
                    K::KIND,
                );
            }
            respond(uid, verdict, computed.patch)
        })
    }
}

fn encode<K: Resource>(object: &K) -> Result<Value, Denial> {
    serde_json::to_value(object).map_err(|e| Denial {
        code: 500,
        reason: "InternalError".into(),
        message: format!("encoding the {} {}: {e}", K::API_VERSION, K::KIND),
    })
}

/// The typed request, or why it cannot be made.
fn typed<K: Resource>(request: AdmissionRequest) -> Result<Request<K>, Denial> {
    let bad = |message: String| {
        tracing::warn!(kind = K::KIND, "denied an admission request: {message}");
        Denial {
            code: 400,
            reason: "BadRequest".into(),
            message,
        }
    };
    let connect = request.operation == Operation::Connect;
    let gvk = &request.kind;
    if !connect && (gvk.group != K::GROUP || gvk.version != K::VERSION || gvk.kind != K::KIND) {
        return Err(bad(format!(
            "this webhook decodes {} {}; the request's object is {} {} (kind {:?}, group {:?}, version {:?})",
            K::API_VERSION,
            K::KIND,
            api_version(&gvk.group, &gvk.version),
            gvk.kind,
            gvk.kind,
            gvk.group,
            gvk.version,
        )));
    }
    let decode = |value: Option<Value>, member: &str| -> Result<Option<K>, Denial> {
        match value {
            None | Some(Value::Null) => Ok(None),
            Some(value) => serde_json::from_value::<K>(value).map(Some).map_err(|e| {
                bad(format!(
                    "request.{member} is not a valid {} {}: {e}",
                    K::API_VERSION,
                    K::KIND
                ))
            }),
        }
    };
    let (object, connect_options) = if connect {
        (None, request.object)
    } else {
        (decode(request.object, "object")?, None)
    };
    let old_object = decode(request.old_object, "oldObject")?;
    let non_empty = |s: String| (!s.is_empty()).then_some(s);
    Ok(Request {
        uid: request.uid,
        kind: request.kind,
        resource: request.resource,
        sub_resource: non_empty(request.sub_resource),
        request_kind: request.request_kind,
        request_resource: request.request_resource,
        request_sub_resource: non_empty(request.request_sub_resource),
        name: request.name,
        namespace: non_empty(request.namespace),
        operation: request.operation,
        user_info: request.user_info,
        object,
        old_object,
        connect_options,
        dry_run: request.dry_run.unwrap_or(false),
        options: request.options,
    })
}

fn api_version(group: &str, version: &str) -> String {
    if group.is_empty() {
        version.to_owned()
    } else {
        format!("{group}/{version}")
    }
}

/// A denial without the handler's warnings.
pub(crate) fn denied(uid: String, denial: Denial) -> AdmissionResponse {
    respond(
        uid,
        Verdict {
            denial: Some(denial),
            ..Verdict::default()
        },
        None,
    )
}

/// The response of `verdict`, with `patch` (a JSON Patch document) when allowed.
fn respond(uid: String, verdict: Verdict, patch: Option<Vec<u8>>) -> AdmissionResponse {
    let allowed = verdict.denial.is_none();
    let result = verdict.denial.map(|d| Status {
        code: Some(i32::from(d.code)),
        message: Some(d.message),
        reason: (!d.reason.is_empty()).then_some(d.reason),
        status: Some("Failure".into()),
        ..Status::default()
    });
    let patch = patch.filter(|_| allowed);
    AdmissionResponse {
        uid,
        allowed,
        result,
        patch_type: patch.as_ref().map(|_| "JSONPatch".to_owned()),
        patch,
        audit_annotations: verdict.audit_annotations,
        warnings: verdict.warnings,
    }
}
