//! [`Condition`]: the standard `metav1.Condition` of a custom resource's status, kept exactly
//! as sent, with k8s-openapi's `Condition` one conversion away and apimachinery's condition
//! helpers (`k8s.io/apimachinery/pkg/api/meta`: `SetStatusCondition`,
//! `FindStatusCondition`, `RemoveStatusCondition`, `IsStatusConditionTrue`).
//!
//! Why not k8s-openapi's `Condition` itself: its `lastTransitionTime` is k8s-openapi's `Time`,
//! which writes whole seconds in UTC, while the API server stores a custom resource's
//! `"2024-01-01T02:00:00.5+02:00"` as sent; decoding into it and writing back would rewrite
//! the value. This type has the same fields with a [`Timestamp`] there, so a status read,
//! changed elsewhere and written back (an update or an apply) says what the bytes said. The
//! code generator uses it for every `conditions` item whose schema is exactly
//! `metav1.Condition`'s (controller-gen's output for `[]metav1.Condition`), so all generated
//! CRDs share one condition type; a different shape keeps its own generated struct. For
//! derived types it carries `metav1.Condition`'s schema (feature `derive`).

use serde::{Deserialize, Serialize};

use super::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1 as meta;

/// One standard condition (`metav1.Condition`): the latest observation of one aspect of an
/// object's state. Field for field k8s-openapi's `Condition`, with `lastTransitionTime` kept
/// as sent.
///
/// ```
/// use kinform_core::value::{Condition, set_condition, is_condition_true};
///
/// let mut conditions = Vec::new();
/// set_condition(&mut conditions, Condition::new("Ready", "True", "Reconciled", "all good"));
/// assert!(is_condition_true(&conditions, "Ready"));
///
/// // The same as k8s-openapi's type, and back.
/// let k8s = conditions[0].to_k8s().unwrap();
/// assert_eq!(kinform_core::value::Condition::from(k8s), conditions[0]);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Condition {
    /// When the condition last changed from one status to another.
    pub last_transition_time: Timestamp,
    /// A human-readable message with details about the transition (may be empty).
    pub message: String,
    /// The `.metadata.generation` the condition was set from, if the writer said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// A CamelCase, machine-readable reason for the last transition.
    pub reason: String,
    /// `True`, `False` or `Unknown` (kept as a string: a newer server's value survives).
    pub status: String,
    /// The condition's type in CamelCase (`Ready`, `Available`, ...), unique in its list.
    #[serde(rename = "type")]
    pub type_: String,
}

impl Condition {
    /// A condition of `type_` with `status`, `reason` and `message`, its transition time now
    /// (whole seconds in UTC, as Go's `metav1.Now()` is written).
    pub fn new(
        type_: impl Into<String>,
        status: impl Into<String>,
        reason: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Condition {
            last_transition_time: Timestamp::now(),
            message: message.into(),
            observed_generation: None,
            reason: reason.into(),
            status: status.into(),
            type_: type_.into(),
        }
    }

    /// The same condition with `observedGeneration` set.
    #[must_use]
    pub fn observed_generation(mut self, generation: i64) -> Self {
        self.observed_generation = Some(generation);
        self
    }

    /// Whether the status is `True`.
    pub fn is_true(&self) -> bool {
        self.status == "True"
    }

    /// k8s-openapi's `Condition` of the same values: the transition time becomes a `Time` of
    /// the same instant (which k8s-openapi writes in whole seconds, UTC).
    ///
    /// # Errors
    ///
    /// When `lastTransitionTime` is not an RFC 3339 timestamp.
    pub fn to_k8s(&self) -> Result<meta::Condition, k8s_openapi::jiff::Error> {
        self.clone().try_into()
    }
}

impl From<meta::Condition> for Condition {
    /// The transition time is written as RFC 3339 in UTC, with a fraction only when the
    /// instant has one.
    fn from(c: meta::Condition) -> Self {
        Condition {
            last_transition_time: Timestamp::from(c.last_transition_time),
            message: c.message,
            observed_generation: c.observed_generation,
            reason: c.reason,
            status: c.status,
            type_: c.type_,
        }
    }
}

impl TryFrom<Condition> for meta::Condition {
    type Error = k8s_openapi::jiff::Error;

    /// See [`Condition::to_k8s`].
    fn try_from(c: Condition) -> Result<Self, Self::Error> {
        Ok(meta::Condition {
            last_transition_time: c.last_transition_time.to_time()?,
            message: c.message,
            observed_generation: c.observed_generation,
            reason: c.reason,
            status: c.status,
            type_: c.type_,
        })
    }
}

/// The apply configuration of a [`Condition`] (client-go's `ConditionApplyConfiguration`):
/// every member optional and serialized only when set, so a server-side apply claims exactly
/// the members a field manager gave. A conditions list is a list map keyed by `type`:
/// [`ConditionApply::new`] starts from the key.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConditionApply {
    /// See [`Condition::last_transition_time`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<Timestamp>,
    /// See [`Condition::message`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// See [`Condition::observed_generation`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// See [`Condition::reason`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// See [`Condition::status`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// See [`Condition::type_`]: the key of the item in its list.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
}

impl ConditionApply {
    /// The configuration of the condition of `type_` (its list's key), nothing else set.
    pub fn new(type_: impl Into<String>) -> Self {
        Self {
            type_: Some(type_.into()),
            ..Self::default()
        }
    }

    /// Sets `status`.
    #[must_use]
    pub fn with_status(mut self, status: impl Into<String>) -> Self {
        self.status = Some(status.into());
        self
    }

    /// Sets `reason`.
    #[must_use]
    pub fn with_reason(mut self, reason: impl Into<String>) -> Self {
        self.reason = Some(reason.into());
        self
    }

    /// Sets `message`.
    #[must_use]
    pub fn with_message(mut self, message: impl Into<String>) -> Self {
        self.message = Some(message.into());
        self
    }

    /// Sets `observedGeneration`.
    #[must_use]
    pub fn with_observed_generation(mut self, generation: i64) -> Self {
        self.observed_generation = Some(generation);
        self
    }

    /// Sets `lastTransitionTime`.
    #[must_use]
    pub fn with_last_transition_time(mut self, time: impl Into<Timestamp>) -> Self {
        self.last_transition_time = Some(time.into());
        self
    }
}

impl From<&Condition> for ConditionApply {
    /// Every member of `c`, set.
    fn from(c: &Condition) -> Self {
        Self {
            last_transition_time: Some(c.last_transition_time.clone()),
            message: Some(c.message.clone()),
            observed_generation: c.observed_generation,
            reason: Some(c.reason.clone()),
            status: Some(c.status.clone()),
            type_: Some(c.type_.clone()),
        }
    }
}

/// The condition of `type_`, if the list has one (apimachinery's `FindStatusCondition`).
pub fn find_condition<'a>(conditions: &'a [Condition], type_: &str) -> Option<&'a Condition> {
    conditions.iter().find(|c| c.type_ == type_)
}

/// Whether the condition of `type_` is present with status `True`
/// (apimachinery's `IsStatusConditionTrue`).
pub fn is_condition_true(conditions: &[Condition], type_: &str) -> bool {
    find_condition(conditions, type_).is_some_and(Condition::is_true)
}

/// Sets `new` in the list, as apimachinery's `SetStatusCondition` does: a condition of a new
/// type is appended as given; for an existing type, status, reason, message and
/// observedGeneration are taken from `new`, and `lastTransitionTime` only when the status
/// changes (so it keeps saying when the status last changed). Returns whether the list
/// changed.
pub fn set_condition(conditions: &mut Vec<Condition>, new: Condition) -> bool {
    let Some(old) = conditions.iter_mut().find(|c| c.type_ == new.type_) else {
        conditions.push(new);
        return true;
    };
    let mut changed = false;
    if old.status != new.status {
        old.status = new.status;
        old.last_transition_time = new.last_transition_time;
        changed = true;
    }
    for (old, new) in [
        (&mut old.reason, new.reason),
        (&mut old.message, new.message),
    ] {
        if *old != new {
            *old = new;
            changed = true;
        }
    }
    if old.observed_generation != new.observed_generation {
        old.observed_generation = new.observed_generation;
        changed = true;
    }
    changed
}

/// Removes the condition of `type_` (apimachinery's `RemoveStatusCondition`); returns
/// whether there was one.
pub fn remove_condition(conditions: &mut Vec<Condition>, type_: &str) -> bool {
    let before = conditions.len();
    conditions.retain(|c| c.type_ != type_);
    conditions.len() != before
}

#[cfg(feature = "derive")]
impl schemars::JsonSchema for Condition {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Condition".into()
    }

    /// `metav1.Condition`'s schema as controller-gen writes it into CRDs (validation
    /// keywords included), so a derived CRD's conditions validate as Kubernetes' own do.
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "Condition contains details for one aspect of the current state of this API Resource.",
            "type": "object",
            "required": ["lastTransitionTime", "message", "reason", "status", "type"],
            "properties": {
                "lastTransitionTime": {"type": "string", "format": "date-time"},
                "message": {"type": "string", "maxLength": 32768},
                "observedGeneration": {"type": "integer", "format": "int64", "minimum": 0},
                "reason": {
                    "type": "string",
                    "maxLength": 1024,
                    "minLength": 1,
                    "pattern": "^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$"
                },
                "status": {"type": "string", "enum": ["True", "False", "Unknown"]},
                "type": {
                    "type": "string",
                    "maxLength": 316,
                    "pattern": "^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$"
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ready(status: &str, time: &str) -> Condition {
        Condition {
            last_transition_time: Timestamp::from(time),
            status: status.to_owned(),
            ..Condition::new("Ready", "", "Because", "msg")
        }
    }

    #[test]
    fn decodes_and_writes_back_exactly() {
        let v = json!({
            "type": "Ready", "status": "Maybe", "reason": "R", "message": "",
            "lastTransitionTime": "2024-01-01T02:00:00.5+02:00", "observedGeneration": 3
        });
        let c: Condition = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(serde_json::to_value(&c).unwrap(), v);
        let without: Condition = serde_json::from_value(json!({
            "type": "A", "status": "True", "reason": "R", "message": "m",
            "lastTransitionTime": "2024-01-01T00:00:00Z"
        }))
        .unwrap();
        assert_eq!(without.observed_generation, None);
        assert!(
            !serde_json::to_value(&without)
                .unwrap()
                .as_object()
                .unwrap()
                .contains_key("observedGeneration")
        );
        // A required field missing is an error, not a default.
        let err = serde_json::from_value::<Condition>(json!({"type": "A", "status": "True"}));
        assert!(err.is_err());
    }

    #[test]
    fn converts_to_and_from_k8s_openapi() {
        let c = ready("True", "2024-01-01T02:00:00.5+02:00");
        let k = c.to_k8s().unwrap();
        assert_eq!(k.type_, "Ready");
        assert_eq!(
            k.last_transition_time.0,
            "2024-01-01T00:00:00.5Z".parse().unwrap()
        );
        let back = Condition::from(k.clone());
        assert_eq!(back.last_transition_time.as_str(), "2024-01-01T00:00:00.5Z");
        assert_eq!(meta::Condition::try_from(back).unwrap(), k);
        assert!(ready("True", "yesterday").to_k8s().is_err());
    }

    #[test]
    fn set_keeps_the_transition_time_unless_the_status_changes() {
        let mut list = vec![ready("False", "2024-01-01T00:00:00Z")];
        // Same status, new reason: the time stays.
        let mut same = ready("False", "2025-01-01T00:00:00Z");
        same.reason = "Other".into();
        assert!(set_condition(&mut list, same));
        assert_eq!(list[0].reason, "Other");
        assert_eq!(
            list[0].last_transition_time.as_str(),
            "2024-01-01T00:00:00Z"
        );
        // Nothing new: unchanged.
        let mut again = list[0].clone();
        again.last_transition_time = Timestamp::from("2026-01-01T00:00:00Z");
        assert!(!set_condition(&mut list, again));
        // A new status: the time moves.
        assert!(set_condition(
            &mut list,
            ready("True", "2025-06-01T00:00:00Z").observed_generation(2)
        ));
        assert!(is_condition_true(&list, "Ready"));
        assert_eq!(list[0].observed_generation, Some(2));
        assert_eq!(
            list[0].last_transition_time.as_str(),
            "2025-06-01T00:00:00Z"
        );
        // Another type is appended; removal.
        assert!(set_condition(
            &mut list,
            Condition::new("Synced", "False", "R", "")
        ));
        assert_eq!(list.len(), 2);
        assert!(!is_condition_true(&list, "Synced"));
        assert!(remove_condition(&mut list, "Synced"));
        assert!(!remove_condition(&mut list, "Synced"));
        assert!(find_condition(&list, "Synced").is_none());
    }

    #[test]
    fn new_conditions_are_stamped_in_whole_seconds_utc() {
        let c = Condition::new("Ready", "True", "R", "");
        let text = c.last_transition_time.as_str();
        assert!(text.ends_with('Z') && !text.contains('.'), "{text}");
        c.last_transition_time.parse().unwrap();
    }
}
