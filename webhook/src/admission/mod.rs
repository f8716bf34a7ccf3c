//! Typed admission: validators and mutators of one kind, over `admission.k8s.io/v1`.
//!
//! A [`Validator<K>`] decides on a [`Request<K>`] (its `object` and `old_object` decoded as
//! `K`) and answers a [`Verdict`]: allow, or deny with a message and an HTTP code, with
//! warnings and audit annotations either way. A [`Mutator<K>`] changes the decoded object in
//! place and answers a `Verdict` too; the server computes the JSON Patch (RFC 6902) from the
//! object as received to the object as left (`patch.rs`). These are controller-runtime's
//! `CustomValidator` and `CustomDefaulter`, with one method each instead of one per operation
//! ([`Request::operation`] says which; [`Request::dry_run`], [`Request::user_info`],
//! [`Request::sub_resource`] reach the handler as kube-apiserver sent them).
//!
//! What the wire carries and the handler's type cannot read never reaches the handler, and
//! never panics: the request is denied (code 400) with a message naming the member and the
//! decoding error, its `uid` echoed, as controller-runtime answers an object its scheme cannot
//! decode. A request for another kind than `K` (a `scale` sub-resource, a misrouted
//! registration) is denied the same way; CONNECT's object (the connect options, not a `K`)
//! is handed over as JSON in [`Request::connect_options`].
//!
//! Invariants:
//! - the response's `uid` is the request's, whatever happens;
//! - a mutator's patch leaves alone what `K` does not model: it is the difference between
//!   `K`'s own encoding of the object before and after the handler, applied to the object as
//!   received (so members `K` does not know survive, and a member the handler removes is
//!   removed). Only when that patch does not apply to the received object (the received JSON
//!   differs from `K`'s encoding at a changed path) is the patch taken against the received
//!   object itself, with a warning.

mod handler;
mod patch;

use std::collections::BTreeMap;
use std::future::Future;

use k8s_openapi::api::authentication::v1::UserInfo;
use serde_json::Value;

pub(crate) use handler::{AdmissionHandler, Mutating, Validating};

use crate::review::{GroupVersionKind, GroupVersionResource, Operation};

/// An admission request with its objects decoded as `K`.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Request<K> {
    /// Identifies this round trip (the response carries it back).
    pub uid: String,
    /// The kind of the object (the registered version under `matchPolicy: Equivalent`).
    pub kind: GroupVersionKind,
    /// The resource.
    pub resource: GroupVersionResource,
    /// The sub-resource (`status`, ...), if any.
    pub sub_resource: Option<String>,
    /// The kind of the original request, when kube-apiserver converted it.
    pub request_kind: Option<GroupVersionKind>,
    /// The resource of the original request, when kube-apiserver converted it.
    pub request_resource: Option<GroupVersionResource>,
    /// The sub-resource of the original request.
    pub request_sub_resource: Option<String>,
    /// The object's name (empty on a CREATE whose name the server generates).
    pub name: String,
    /// The object's namespace, `None` for cluster-scoped objects.
    pub namespace: Option<String>,
    /// CREATE, UPDATE, DELETE or CONNECT.
    pub operation: Operation,
    /// Who asked.
    pub user_info: UserInfo,
    /// The object: on CREATE and UPDATE (absent on DELETE and CONNECT).
    pub object: Option<K>,
    /// The existing object: on UPDATE and DELETE.
    pub old_object: Option<K>,
    /// CONNECT's object, the connect options (`PodExecOptions`, ...), as JSON.
    pub connect_options: Option<Value>,
    /// Whether nothing will be persisted (side effects must be skipped).
    pub dry_run: bool,
    /// The operation's options (`CreateOptions`, `UpdateOptions`, `DeleteOptions`).
    pub options: Option<Value>,
}

/// Why a request is refused: an HTTP code, its reason and a message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Denial {
    /// The HTTP status code kube-apiserver answers the client with (403 by default).
    pub code: u16,
    /// The `reason` of the `Status` (`Forbidden`, `BadRequest`, `Invalid`, ...).
    pub reason: String,
    /// The message; kube-apiserver shows it as `admission webhook "<name>" denied the
    /// request: <message>`.
    pub message: String,
}

/// A webhook's answer: allowed or denied, with warnings and audit annotations.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[must_use = "a verdict does nothing unless it is returned"]
pub struct Verdict {
    pub(crate) denial: Option<Denial>,
    pub(crate) warnings: Vec<String>,
    pub(crate) audit_annotations: BTreeMap<String, String>,
}

impl Verdict {
    /// Admit the request.
    pub fn allow() -> Self {
        Self::default()
    }

    /// Refuse the request with `message`, code 403 (`Forbidden`), as controller-runtime's
    /// `admission.Denied`.
    pub fn deny(message: impl Into<String>) -> Self {
        Self::deny_with_code(403, message)
    }

    /// Refuse the request with `message` and HTTP `code` (for example 422 for an invalid
    /// object, 400 for a malformed one); the reason is the one kube-apiserver names for the
    /// code.
    pub fn deny_with_code(code: u16, message: impl Into<String>) -> Self {
        Self {
            denial: Some(Denial {
                code,
                reason: reason_for(code).to_owned(),
                message: message.into(),
            }),
            ..Self::default()
        }
    }

    /// Add a warning for the client (kubectl prints `Warning: <text>`); keep it under 120
    /// characters.
    pub fn warning(mut self, warning: impl Into<String>) -> Self {
        self.warnings.push(warning.into());
        self
    }

    /// Add an audit annotation (kube-apiserver prefixes the key with the webhook's name).
    pub fn audit_annotation(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.audit_annotations.insert(key.into(), value.into());
        self
    }

    /// Whether the request is admitted.
    pub fn is_allowed(&self) -> bool {
        self.denial.is_none()
    }

    /// Why not, when denied.
    pub fn denial(&self) -> Option<&Denial> {
        self.denial.as_ref()
    }

    /// The warnings.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }
}

/// The `metav1.StatusReason` kube-apiserver uses for an HTTP code.
fn reason_for(code: u16) -> &'static str {
    match code {
        400 => "BadRequest",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "NotFound",
        405 => "MethodNotAllowed",
        406 => "NotAcceptable",
        409 => "Conflict",
        410 => "Expired",
        413 => "RequestEntityTooLarge",
        415 => "UnsupportedMediaType",
        422 => "Invalid",
        429 => "TooManyRequests",
        500 => "InternalError",
        503 => "ServiceUnavailable",
        504 => "Timeout",
        _ => "",
    }
}

/// Decides on requests for objects of kind `K` (controller-runtime's `CustomValidator`).
///
/// Implement it with an `async fn`:
///
/// ```
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use kinform_webhook::{Operation, Request, Validator, Verdict};
///
/// struct NoEmptyData;
/// impl Validator<ConfigMap> for NoEmptyData {
///     async fn validate(&self, request: &Request<ConfigMap>) -> Verdict {
///         match (&request.operation, &request.object) {
///             (Operation::Create | Operation::Update, Some(cm)) if cm.data.is_none() => {
///                 Verdict::deny("data must not be empty")
///             }
///             _ => Verdict::allow(),
///         }
///     }
/// }
/// ```
///
/// Closures work through [`validator_fn`].
pub trait Validator<K>: Send + Sync + 'static {
    /// The verdict on `request`.
    fn validate(&self, request: &Request<K>) -> impl Future<Output = Verdict> + Send;
}

/// Changes objects of kind `K` on their way in (controller-runtime's `CustomDefaulter`).
///
/// Called for requests that carry an object (CREATE, UPDATE; a request without one is
/// admitted unchanged). The object the handler leaves in `object` is the changed object: the
/// server answers the JSON Patch from the received object to it. Closures work through
/// [`mutator_fn`].
pub trait Mutator<K>: Send + Sync + 'static {
    /// Change `object` (the request's object) and answer whether to admit it; a denial
    /// discards the changes.
    fn mutate(&self, request: &Request<K>, object: &mut K) -> impl Future<Output = Verdict> + Send;
}

/// A [`Validator`] of a synchronous closure.
pub fn validator_fn<K, F>(f: F) -> ValidatorFn<F>
where
    F: Fn(&Request<K>) -> Verdict + Send + Sync + 'static,
{
    ValidatorFn(f)
}

/// A [`Mutator`] of a synchronous closure.
pub fn mutator_fn<K, F>(f: F) -> MutatorFn<F>
where
    F: Fn(&Request<K>, &mut K) -> Verdict + Send + Sync + 'static,
{
    MutatorFn(f)
}

/// The [`Validator`] [`validator_fn`] makes.
#[derive(Clone, Debug)]
pub struct ValidatorFn<F>(F);

/// The [`Mutator`] [`mutator_fn`] makes.
#[derive(Clone, Debug)]
pub struct MutatorFn<F>(F);

impl<K, F> Validator<K> for ValidatorFn<F>
where
    K: Sync,
    F: Fn(&Request<K>) -> Verdict + Send + Sync + 'static,
{
    fn validate(&self, request: &Request<K>) -> impl Future<Output = Verdict> + Send {
        std::future::ready((self.0)(request))
    }
}

impl<K, F> Mutator<K> for MutatorFn<F>
where
    K: Send + Sync,
    F: Fn(&Request<K>, &mut K) -> Verdict + Send + Sync + 'static,
{
    fn mutate(&self, request: &Request<K>, object: &mut K) -> impl Future<Output = Verdict> + Send {
        std::future::ready((self.0)(request, object))
    }
}
