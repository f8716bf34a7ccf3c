//! The `Queue` custom resource (`messaging.example.com`) in two versions, and the
//! conversions between them.
//!
//! - `v1`: `size` and `retentionHours`;
//! - `v2` (the hub and storage version): `capacity`, `retentionSeconds` and `priority`.
//!
//! v2 says more than v1, so what v1 cannot hold travels in annotations (metadata's labels
//! and annotations are the only metadata a conversion may change): a v2 object read as v1
//! keeps its `priority`, and a retention that is not a whole number of hours its exact
//! seconds, and comes back unchanged when written as v1 and read as v2 again.

use std::collections::BTreeMap;

use kinform::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The annotation that keeps v2's `priority` on a v1 object.
pub const PRIORITY_ANNOTATION: &str = "messaging.example.com/priority";
/// The annotation that keeps v2's exact `retentionSeconds` on a v1 object.
pub const RETENTION_ANNOTATION: &str = "messaging.example.com/retention-seconds";

pub mod v1 {
    //! `messaging.example.com/v1`.
    use super::*;

    /// A queue, as first published.
    #[derive(CustomResource, Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
    #[kinform(
        group = "messaging.example.com",
        version = "v1",
        kind = "Queue",
        namespaced,
        shortname = "q",
        storage = false,
        derive = "PartialEq"
    )]
    #[serde(rename_all = "camelCase")]
    pub struct QueueSpec {
        /// How many messages the queue holds.
        pub size: i32,
        /// How long messages are kept, in hours.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub retention_hours: Option<i32>,
    }
}

pub mod v2 {
    //! `messaging.example.com/v2`, the storage version and the conversion hub.
    use super::*;

    /// A queue.
    #[derive(CustomResource, Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
    #[kinform(
        group = "messaging.example.com",
        version = "v2",
        kind = "Queue",
        namespaced,
        shortname = "q",
        printcolumn(name = "Capacity", type = "integer", json_path = ".spec.capacity"),
        printcolumn(name = "Priority", type = "string", json_path = ".spec.priority"),
        derive = "PartialEq"
    )]
    #[serde(rename_all = "camelCase")]
    pub struct QueueSpec {
        /// How many messages the queue holds (1 to 10000).
        pub capacity: i32,
        /// How long messages are kept, in seconds (at least 60; defaulted to a day).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub retention_seconds: Option<i64>,
        /// The scheduling priority (defaulted to `normal`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub priority: Option<Priority>,
    }

    /// A queue's scheduling priority.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
    #[serde(rename_all = "lowercase")]
    pub enum Priority {
        /// Served last.
        Low,
        /// The default.
        Normal,
        /// Served first.
        High,
    }

    impl Priority {
        /// The name on the wire.
        pub fn as_str(self) -> &'static str {
            match self {
                Priority::Low => "low",
                Priority::Normal => "normal",
                Priority::High => "high",
            }
        }

        fn parse(text: &str) -> Option<Self> {
            match text {
                "low" => Some(Priority::Low),
                "normal" => Some(Priority::Normal),
                "high" => Some(Priority::High),
                _ => None,
            }
        }
    }

    impl From<v1::Queue> for Queue {
        fn from(old: v1::Queue) -> Self {
            let mut metadata = old.metadata;
            let annotations = metadata.annotations.take().unwrap_or_default();
            let (kept, rest): (BTreeMap<_, _>, BTreeMap<_, _>) = annotations
                .into_iter()
                .partition(|(k, _)| k == PRIORITY_ANNOTATION || k == RETENTION_ANNOTATION);
            metadata.annotations = (!rest.is_empty()).then_some(rest);
            let hours_in_seconds = old.spec.retention_hours.map(|h| i64::from(h) * 3600);
            // The exact seconds, if they still round to the hours v1 shows (a v1 writer that
            // changed the hours meant the new value).
            let exact = kept
                .get(RETENTION_ANNOTATION)
                .and_then(|s| s.parse::<i64>().ok())
                .filter(|s| {
                    old.spec.retention_hours.map(|h| s / 3600 == i64::from(h)) == Some(true)
                });
            Queue {
                metadata,
                spec: QueueSpec {
                    capacity: old.spec.size,
                    retention_seconds: exact.or(hours_in_seconds),
                    priority: kept
                        .get(PRIORITY_ANNOTATION)
                        .and_then(|p| Priority::parse(p)),
                },
            }
        }
    }

    impl From<Queue> for v1::Queue {
        fn from(new: Queue) -> Self {
            let mut metadata = new.metadata;
            let mut annotations = metadata.annotations.take().unwrap_or_default();
            if let Some(priority) = new.spec.priority {
                annotations.insert(PRIORITY_ANNOTATION.into(), priority.as_str().into());
            }
            let seconds = new.spec.retention_seconds;
            if let Some(s) = seconds.filter(|s| s % 3600 != 0) {
                annotations.insert(RETENTION_ANNOTATION.into(), s.to_string());
            }
            metadata.annotations = (!annotations.is_empty()).then_some(annotations);
            v1::Queue {
                metadata,
                spec: v1::QueueSpec {
                    size: new.spec.capacity,
                    retention_hours: seconds.map(|s| i32::try_from(s / 3600).unwrap_or(i32::MAX)),
                },
            }
        }
    }
}
