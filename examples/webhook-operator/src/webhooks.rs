//! The Queue's webhooks: a validator, a defaulter, and the v1/v2 conversion, as one
//! [`Webhooks`] description the server routes and the manifests register.
//!
//! Both admission webhooks are registered for v2 with `matchPolicy: Equivalent` (the
//! default), so kube-apiserver converts a v1 request to v2 before calling them, and they
//! deal in one version only.

use kinform::HasMetadata;
use kinform::webhook::conversion::hub;
use kinform::webhook::{
    AdmissionSettings, Mutator, Operation, Request, Validator, Verdict, Webhooks,
};

use crate::api::{v1, v2};

/// A label that protects a queue from deletion.
pub const PROTECTED_LABEL: &str = "messaging.example.com/protected";
/// The retention the defaulter sets: a day.
pub const DEFAULT_RETENTION_SECONDS: i64 = 86_400;
/// Retention past this draws a warning.
const LONG_RETENTION_SECONDS: i64 = 30 * 86_400;

/// What the schema cannot say about a Queue.
#[derive(Debug, Default)]
pub struct QueueValidator;

impl Validator<v2::Queue> for QueueValidator {
    async fn validate(&self, request: &Request<v2::Queue>) -> Verdict {
        if request.operation == Operation::Delete {
            return match &request.old_object {
                Some(old)
                    if old.labels().get(PROTECTED_LABEL).map(String::as_str) == Some("true") =>
                {
                    Verdict::deny(format!(
                        "queue {} is protected: remove the label {PROTECTED_LABEL} first",
                        old.name()
                    ))
                }
                _ => Verdict::allow(),
            };
        }
        let Some(queue) = &request.object else {
            return Verdict::allow();
        };
        let spec = &queue.spec;
        if !(1..=10_000).contains(&spec.capacity) {
            return Verdict::deny_with_code(
                422,
                format!(
                    "spec.capacity must be between 1 and 10000, not {}",
                    spec.capacity
                ),
            );
        }
        if let Some(seconds) = spec.retention_seconds.filter(|s| *s < 60) {
            return Verdict::deny_with_code(
                422,
                format!("spec.retentionSeconds must be at least 60, not {seconds}"),
            );
        }
        if let Some(old) = &request.old_object
            && spec.capacity < old.spec.capacity
        {
            return Verdict::deny_with_code(
                422,
                format!(
                    "spec.capacity cannot shrink (from {} to {}): messages would be lost",
                    old.spec.capacity, spec.capacity
                ),
            );
        }
        let verdict = Verdict::allow();
        match spec.retention_seconds {
            Some(s) if s > LONG_RETENTION_SECONDS => {
                verdict.warning("spec.retentionSeconds over 30 days keeps every message that long")
            }
            _ => verdict,
        }
    }
}

/// Fills in a Queue's defaults: `priority: normal`, `retentionSeconds: 86400`.
#[derive(Debug, Default)]
pub struct QueueDefaulter;

impl Mutator<v2::Queue> for QueueDefaulter {
    async fn mutate(&self, _request: &Request<v2::Queue>, queue: &mut v2::Queue) -> Verdict {
        queue.spec.priority.get_or_insert(v2::Priority::Normal);
        queue
            .spec
            .retention_seconds
            .get_or_insert(DEFAULT_RETENTION_SECONDS);
        Verdict::allow()
    }
}

/// Everything served: the validator (CREATE, UPDATE, DELETE), the defaulter (CREATE,
/// UPDATE) and the conversion through v2.
pub fn webhooks() -> Webhooks {
    Webhooks::new()
        .validate_with(
            QueueValidator,
            AdmissionSettings::default().operations([
                Operation::Create,
                Operation::Update,
                Operation::Delete,
            ]),
        )
        .mutate(QueueDefaulter)
        .convert(hub::<v2::Queue>().spoke::<v1::Queue>())
}
