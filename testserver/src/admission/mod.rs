//! Dynamic admission: the registered Mutating- and ValidatingWebhookConfigurations called on
//! every write they select, and the conversion webhooks of CRDs with `strategy: Webhook`, as
//! kube-apiserver's `k8s.io/apiserver/pkg/admission/plugin/webhook` and
//! apiextensions-apiserver's `pkg/apiserver/conversion` do.
//!
//! The map, by file, in the order a request meets them:
//!
//! - `config`: the webhooks of the stored configuration objects (read back from storage on
//!   every write, parsed once per stored state), kube-apiserver's defaults filled in
//!   (`failurePolicy: Fail`, `matchPolicy: Equivalent`, `timeoutSeconds: 10`,
//!   `reinvocationPolicy: Never`, `namespaceSelector` and `objectSelector` selecting
//!   everything), and the hand-written validation of the configurations themselves
//!   (`ValidateMutatingWebhookConfiguration`'s rules that decide what can be called:
//!   `sideEffects` `None` or `NoneOnDryRun`, known `admissionReviewVersions`, one of `url` and
//!   `service`, an `https` URL, unique names, `timeoutSeconds` within 1 to 30);
//! - `matching`: which webhooks a request selects (`rules`: operations, API groups, versions,
//!   resources with `*`, `pods/*`, `*/status`, and `scope`; `matchPolicy: Equivalent` for
//!   the other versions of the same resource; `namespaceSelector` on the namespace's labels,
//!   or the Namespace object's own; `objectSelector` on the new or the old object;
//!   `matchConditions` in CEL with `object`, `oldObject` and `request`);
//! - `review`: the `admission.k8s.io/v1` `AdmissionReview` sent (`uid`, `kind`, `resource`,
//!   `subResource`, `requestKind`, `requestResource`, `name`, `namespace`, `operation`,
//!   `userInfo`, `object`, `oldObject`, `dryRun`, `options`), the response checked as
//!   `VerifyAdmissionResponse` checks it, and the errors in upstream's shape: a denial is the
//!   webhook's `Status` with `admission webhook "x" denied the request: <message>` (code 400
//!   when it gave none below 400), a failed call `Internal error occurred: failed calling
//!   webhook "x": failed to call webhook: Post "<url>?timeout=10s": <cause>` (500);
//! - `client`: the HTTPS call (`caBundle` verified against the host name of `url`, or
//!   `<service>.<namespace>.svc` for a `service` reference resolved to the loopback address a
//!   test registers with [`TestApiServer::register_service_port`]), bounded by the webhook's
//!   `timeoutSeconds`, request and answer bodies bounded;
//! - `dispatch`: mutating webhooks one after the other, sorted by configuration name and in
//!   their order within it, each one's JSON Patch applied before the next one is called, then
//!   one more round for the `reinvocationPolicy: IfNeeded` webhooks called before a later one
//!   changed the object; validating webhooks all at once, the first refusal to arrive
//!   answered; `failurePolicy: Ignore` admits past a webhook that cannot be called (or
//!   answers nonsense), `Fail` refuses; a dry run refuses webhooks whose `sideEffects` is
//!   neither `None` nor `NoneOnDryRun` (`admission webhook "x" does not support dry run`);
//! - `policy`: ValidatingAdmissionPolicies and their bindings, in CEL, at the validating
//!   point before the validating webhooks (see that module for what it evaluates);
//! - `conversion`: `apiextensions.k8s.io/v1` `ConversionReview`s, their answers checked
//!   (count, `apiVersion`, `kind`, name, namespace and uid kept; metadata but labels and
//!   annotations restored), failures as `conversion webhook for <group>/<version>,
//!   Kind=<kind> failed: <cause>`.
//!
//! # Where a request is admitted
//!
//! The write handlers (`handlers::write`: create, update, patch, and server-side apply and
//! the `status` subresource through them) call a [`Gate`] at the two points kube-apiserver
//! admits: the mutating point after decoding and defaulting, before the registry's
//! `PrepareForCreate`/`PrepareForUpdate` and validation (so a defaulting webhook's field is
//! validated), and the validating point after validation, before storage. Webhooks are
//! called with the store unlocked: a write the gate does not yet know the answer for stops at
//! the point (nothing is committed), the router calls the webhooks, and the write runs again
//! from the start with the answers recorded in the gate, as etcd's optimistic
//! `GuaranteedUpdate` loop runs the admission of an update again when the stored object
//! changed meanwhile. A webhook may therefore call back the server (a validating webhook
//! that reads other objects) without a deadlock. Deletes are admitted by the router before
//! the delete (operation `DELETE`, `oldObject` the stored object).
//!
//! The configuration objects themselves, and the other admissionregistration resources, are
//! never sent to webhooks (`IsExemptAdmissionConfigurationResource`), so a broken webhook can
//! always be removed.
//!
//! Not reproduced: MutatingAdmissionPolicy (stored, never evaluated), and of
//! ValidatingAdmissionPolicy what module `policy` lists; the `authorizer` and Kubernetes' own CEL libraries in `matchConditions` (a
//! condition the `cel` crate cannot compile refuses the request, naming it, rather than being
//! skipped); the `CONNECT` operation (exec, attach, port-forward and proxy are not admitted);
//! admission of `pods/eviction`, `pods/binding`, `pods/ephemeralcontainers`, the `scale`
//! subresource, `serviceaccounts/token` and collection deletes; webhook client
//! authentication (`--admission-control-config-file` kubeconfigs); the system trust store
//! for a webhook without `caBundle` (the call fails); audit annotations (accepted and
//! dropped); the wording of network failures beyond Go's common ones (`connect: connection
//! refused`, `context deadline exceeded`); metrics of webhook calls (rejections and
//! failures that were ignored are logged as warnings). Of CRD conversion: a watch in a
//! version other than the storage version sends the form the webhook gave when the object
//! was written (kube-apiserver converts each event as it sends it, and ends the watch with
//! an error the webhook gives); an object the webhook could not convert then, or written
//! before the CRD named its webhook, or through the server's Rust API
//! ([`TestApiServer::create_object`]), is sent with only its `apiVersion` rewritten; a CRD
//! whose storage version changes keeps its objects as they were stored.
//!
//! [`TestApiServer::create_object`]: crate::TestApiServer::create_object
//!
//! Written by hand: no Rust crate implements kube-apiserver's admission (kube-rs has the
//! review types only, as `kube::core::admission`, which would bring kube-core and its own
//! k8s-openapi dependency into the test server); the HTTPS client is hyper 1's connection
//! API over tokio-rustls, which the crate already links, rather than a pooled client
//! (webhook calls are few and each names its own CA).
//!
//! [`TestApiServer::register_service_port`]: crate::TestApiServer::register_service_port

mod client;
mod config;
pub(crate) mod conversion;
mod dispatch;
mod matching;
mod policy;
mod review;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;

use parking_lot::Mutex;
use serde_json::Value;

use crate::registry::ResourceInfo;
use crate::status::ApiError;
use crate::storage::{Inner, Storage};

pub(crate) use config::validate_configuration;

/// An admission operation (`admission.Operation`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Operation {
    /// `CREATE`.
    Create,
    /// `UPDATE`.
    Update,
    /// `DELETE`.
    Delete,
}

impl Operation {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Create => "CREATE",
            Self::Update => "UPDATE",
            Self::Delete => "DELETE",
        }
    }
}

/// The loopback addresses tests register for Services that webhooks name
/// ([`crate::TestApiServer::register_service_port`]).
#[derive(Debug, Default)]
pub(crate) struct Services {
    ports: Mutex<HashMap<(String, String, u16), SocketAddr>>,
}

impl Services {
    /// Registers where `namespace/name:port` is served.
    pub fn register(&self, namespace: &str, name: &str, port: u16, addr: SocketAddr) {
        self.ports
            .lock()
            .insert((namespace.to_owned(), name.to_owned(), port), addr);
    }

    /// Where `namespace/name:port` is served, if a test said so.
    pub fn resolve(&self, namespace: &str, name: &str, port: u16) -> Option<SocketAddr> {
        self.ports
            .lock()
            .get(&(namespace.to_owned(), name.to_owned(), port))
            .copied()
    }
}

/// What admission needs of the server: its store (configurations, namespaces, CRDs) and the
/// registered Service addresses.
#[derive(Clone)]
pub(crate) struct Context {
    /// The store.
    pub storage: Arc<Storage>,
    /// The Services webhooks may name.
    pub services: Arc<Services>,
}

/// Who makes the request (`userInfo`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct UserInfo {
    /// `username`.
    pub username: String,
    /// `groups`.
    pub groups: Vec<String>,
}

/// The attributes of one request, as `admission.Attributes` holds them.
#[derive(Clone, Debug)]
pub(crate) struct Request {
    /// The resource requested (its group, version, plural, kind, scope).
    pub info: Arc<ResourceInfo>,
    /// `""` or `status`.
    pub subresource: String,
    /// The URL's namespace (`""` for cluster-scoped requests).
    pub namespace: String,
    /// The object's name (`""` on a create with `generateName`, until it is generated).
    pub name: String,
    /// Who asks.
    pub user: UserInfo,
    /// `dryRun=All`.
    pub dry_run: bool,
    /// The request's options, sent to webhooks in `request.options` as the
    /// `CreateOptions`, `UpdateOptions` or `DeleteOptions` of the operation (a PATCH's too,
    /// as `patchToCreateOptions` and `patchToUpdateOptions` make them).
    pub options: Value,
    /// The operation, once known (a server-side apply is a CREATE or an UPDATE depending on
    /// whether the object exists).
    pub operation: Option<Operation>,
}

/// What the gate waits for before the write can go on.
#[derive(Clone, Debug)]
enum Pending {
    /// The mutating webhooks' answer for this object (and stored object).
    Mutate {
        object: Value,
        old: Option<Value>,
        old_rv: Option<u64>,
    },
    /// The validating webhooks' answer.
    Validate {
        object: Value,
        old: Option<Value>,
        old_rv: Option<u64>,
    },
    /// The conversion webhook's forms of the object in the storage version and the other
    /// served versions.
    Convert {
        object: Value,
        storage: String,
        others: Vec<String>,
    },
}

/// One answer of the webhooks, for the input it was given.
#[derive(Clone, Debug)]
struct Answered {
    input: Value,
    old_rv: Option<u64>,
    output: Value,
}

/// The admission of one write request across the passes of its write (see the module doc):
/// the webhooks' answers so far, and the values a create generates, kept so that every pass
/// makes the same object.
#[derive(Clone, Debug)]
pub(crate) struct Gate {
    /// The request's attributes.
    pub request: Request,
    pending: Option<Pending>,
    mutated: Option<Answered>,
    validated: Option<Answered>,
    converted: Option<(Value, Vec<(String, Value)>)>,
    /// The uid a create gives the object.
    pub uid: String,
    /// The suffixes tried for a `generateName`.
    pub suffixes: Vec<String>,
    /// The creation time a create stamps.
    pub now: String,
    /// The webhooks' warnings, answered as `Warning` headers.
    pub warnings: Vec<String>,
    /// Applies a webhook's JSON Patch (the patch handler's RFC 6902 implementation).
    pub patcher: Patcher,
    passes: u32,
}

/// Applies an RFC 6902 JSON Patch to an object.
pub(crate) type Patcher = fn(Value, &[u8]) -> Result<Value, String>;

/// A random version-4 UUID (the `uid` of a review).
pub(crate) fn new_uid() -> String {
    let n: u128 = rand::random();
    let n = (n & !(0xf << 76) | (0x4 << 76)) & !(0x3 << 62) | (0x2 << 62);
    let h = format!("{n:032x}");
    format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}

/// The most passes a write makes before it gives up on an object that keeps changing under it.
const MAX_PASSES: u32 = 16;

/// The error a pass ends with while the gate waits for webhooks; never answered.
fn waiting() -> ApiError {
    ApiError::internal("admission is waiting for webhooks")
}

impl Gate {
    /// A gate for `request`; `uid`, `suffixes` and `now` are what the create will use.
    pub fn new(
        request: Request,
        patcher: Patcher,
        uid: String,
        suffixes: Vec<String>,
        now: String,
    ) -> Self {
        Self {
            patcher,
            request,
            pending: None,
            mutated: None,
            validated: None,
            converted: None,
            uid,
            suffixes,
            now,
            warnings: Vec::new(),
            passes: 0,
        }
    }

    /// Whether the last pass stopped to wait for webhooks.
    pub fn is_pending(&self) -> bool {
        self.pending.is_some()
    }

    fn operation_for(&self, old: Option<&Value>) -> Operation {
        match self.request.operation {
            Some(op) => op,
            None if old.is_some() => Operation::Update,
            None => Operation::Create,
        }
    }

    /// The mutating point: replaces `object` by the mutating webhooks' answer for it, or
    /// stops the pass (an error the router never answers) until they have answered.
    /// Returns whether the object was changed.
    pub fn mutating(
        &mut self,
        object: &mut Value,
        old: Option<&Value>,
        old_rv: Option<u64>,
    ) -> Result<bool, ApiError> {
        if let Some(a) = &self.mutated
            && a.input == *object
            && a.old_rv == old_rv
        {
            let changed = a.output != *object;
            object.clone_from(&a.output);
            return Ok(changed);
        }
        self.pending = Some(Pending::Mutate {
            object: object.clone(),
            old: old.cloned(),
            old_rv,
        });
        Err(waiting())
    }

    /// The validating point: lets the write go on once the validating webhooks admitted this
    /// very object, or stops the pass until they have.
    pub fn validating(
        &mut self,
        object: &Value,
        old: Option<&Value>,
        old_rv: Option<u64>,
    ) -> Result<(), ApiError> {
        if let Some(a) = &self.validated
            && a.input == *object
            && a.old_rv == old_rv
        {
            return Ok(());
        }
        self.pending = Some(Pending::Validate {
            object: object.clone(),
            old: old.cloned(),
            old_rv,
        });
        Err(waiting())
    }

    /// The conversion point of a custom resource whose CRD converts through a webhook:
    /// `object` (in the request's version) in the storage version `storage` and in the
    /// `others` served versions, or a stop of the pass until the webhook has answered.
    pub fn converting(
        &mut self,
        object: &Value,
        storage: &str,
        others: &[String],
    ) -> Result<Vec<(String, Value)>, ApiError> {
        if let Some((input, outputs)) = &self.converted
            && input == object
        {
            return Ok(outputs.clone());
        }
        self.pending = Some(Pending::Convert {
            object: object.clone(),
            storage: storage.to_owned(),
            others: others.to_vec(),
        });
        Err(waiting())
    }

    /// Calls the webhooks the last pass waits for and records their answer; an error is the
    /// request's answer (a refusal, a failed call under `failurePolicy: Fail`).
    pub async fn settle(&mut self, cx: &Context) -> Result<(), ApiError> {
        self.passes += 1;
        if self.passes > MAX_PASSES {
            return Err(ApiError::new(
                409,
                "Conflict",
                "the object kept changing while admission webhooks were called; try again",
            ));
        }
        let Some(pending) = self.pending.take() else {
            return Ok(());
        };
        match pending {
            Pending::Mutate {
                object,
                old,
                old_rv,
            } => {
                let operation = self.operation_for(old.as_ref());
                let output = dispatch::mutate(cx, self, operation, &object, old.as_ref()).await?;
                self.mutated = Some(Answered {
                    input: object,
                    old_rv,
                    output,
                });
            }
            Pending::Validate {
                object,
                old,
                old_rv,
            } => {
                let operation = self.operation_for(old.as_ref());
                dispatch::validate(cx, self, operation, Some(&object), old.as_ref()).await?;
                self.validated = Some(Answered {
                    input: object.clone(),
                    old_rv,
                    output: object,
                });
            }
            Pending::Convert {
                object,
                storage,
                others,
            } => {
                let crd = {
                    let inner = cx.storage.lock();
                    inner.crd_of(&self.request.info).map(|c| c.value())
                };
                let own = object["apiVersion"].as_str().unwrap_or_default().to_owned();
                let stored = if own == storage {
                    object.clone()
                } else {
                    conversion::convert(cx, crd.as_ref(), vec![object.clone()], &storage)
                        .await?
                        .remove(0)
                };
                let mut outputs = Vec::new();
                // Only the conversion to the storage version decides the write, as in
                // kube-apiserver; a form the webhook cannot give now is asked for again by
                // each read in that version (and fails it then).
                for to in others.iter().filter(|v| **v != own && **v != storage) {
                    match conversion::convert(cx, crd.as_ref(), vec![stored.clone()], to).await {
                        Ok(mut view) => outputs.push((to.clone(), view.remove(0))),
                        Err(e) => tracing::warn!(
                            version = %to,
                            "a written object could not be converted for watches: {}",
                            e.message
                        ),
                    }
                }
                if own != storage {
                    outputs.insert(0, (storage, stored));
                }
                self.converted = Some((object, outputs));
            }
        }
        Ok(())
    }

    /// Admits a DELETE of `old` (mutating webhooks first, which may not change anything,
    /// then validating ones).
    pub async fn admit_delete(&mut self, cx: &Context, old: &Value) -> Result<(), ApiError> {
        dispatch::delete(cx, self, old).await
    }
}

/// Whether `info` is a version of a custom resource whose CRD converts through a webhook
/// (its writes are converted to the storage version at the gate's conversion point).
pub(crate) fn converts(inner: &Inner, info: &ResourceInfo) -> bool {
    inner
        .crd_of(info)
        .is_some_and(|crd| conversion::webhook_crd(&crd).is_some())
}

/// Whether any stored webhook could select a request for `info` (and `subresource`) with
/// one of `operations`: the cheap test that lets every other write run as before, in one
/// pass under the store lock.
pub(crate) fn may_apply(
    inner: &Inner,
    info: &ResourceInfo,
    subresource: &str,
    operations: &[Operation],
) -> bool {
    if matching::exempt(info) {
        return false;
    }
    let webhooks = [true, false].into_iter().any(|mutating| {
        config::webhooks(inner, mutating).iter().any(|w| {
            operations
                .iter()
                .any(|op| matching::rules_may_match(w, info, subresource, *op))
        })
    });
    webhooks
        || operations
            .iter()
            .any(|op| policy::may_apply(inner, info, subresource, *op))
}

/// Bounded interning of the `reason`s webhooks answer (a `Status` reason is a
/// `&'static str` here): the reasons of `metav1` are static already, and at most
/// [`MAX_REASONS`] others are kept; past that a refusal carries an empty reason.
pub(crate) fn intern_reason(reason: &str) -> &'static str {
    const KNOWN: &[&str] = &[
        "",
        "Unauthorized",
        "Forbidden",
        "NotFound",
        "AlreadyExists",
        "Conflict",
        "Gone",
        "Invalid",
        "ServerTimeout",
        "StoreReadError",
        "Timeout",
        "TooManyRequests",
        "BadRequest",
        "MethodNotAllowed",
        "NotAcceptable",
        "RequestEntityTooLarge",
        "UnsupportedMediaType",
        "InternalError",
        "Expired",
        "ServiceUnavailable",
    ];
    if let Some(known) = KNOWN.iter().find(|k| **k == reason) {
        return known;
    }
    static OTHERS: Mutex<Vec<&'static str>> = Mutex::new(Vec::new());
    let mut others = OTHERS.lock();
    if let Some(r) = others.iter().find(|r| **r == reason) {
        return r;
    }
    if others.len() >= MAX_REASONS || reason.len() > 256 {
        tracing::warn!(
            reason,
            "a webhook's Status reason is dropped: too many distinct reasons"
        );
        return "";
    }
    let leaked: &'static str = Box::leak(reason.to_owned().into_boxed_str());
    others.push(leaked);
    leaked
}

/// Distinct non-standard `Status` reasons kept by [`intern_reason`].
const MAX_REASONS: usize = 64;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_are_interned_with_a_bound() {
        assert_eq!(intern_reason("Forbidden"), "Forbidden");
        let a = intern_reason("PolicyViolation");
        assert!(std::ptr::eq(a, intern_reason("PolicyViolation")));
        assert_eq!(intern_reason(&"x".repeat(300)), "");
    }
}
