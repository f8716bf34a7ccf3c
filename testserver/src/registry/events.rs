//! Events, served through two APIs from one store, as kube-apiserver serves them: the core
//! `v1` Event and the `events.k8s.io/v1` Event are two versions of one resource (the
//! storage of `events.k8s.io` is the core resource's), so an Event written through either
//! API is read, listed and watched through both.
//!
//! Objects are stored in the core form; [`to_core`] converts what is written through
//! `events.k8s.io/v1` ([`crate::storage::Obj::new`]) and [`from_core`] what is read through
//! it ([`crate::storage::Obj::value_for`]), with the field mapping of
//! `k8s.io/kubernetes/pkg/apis/events/v1` `conversion.go`:
//!
//! | `events.k8s.io/v1` | core `v1` |
//! | --- | --- |
//! | `regarding` | `involvedObject` |
//! | `note` | `message` |
//! | `reportingController` | `reportingComponent` |
//! | `deprecatedSource` | `source` |
//! | `deprecatedFirstTimestamp` | `firstTimestamp` |
//! | `deprecatedLastTimestamp` | `lastTimestamp` |
//! | `deprecatedCount` | `count` |
//!
//! `metadata`, `eventTime`, `series`, `reportingInstance`, `action`, `reason`, `related` and
//! `type` have the same name in both; a field neither version has is dropped, as decoding
//! into the Go types drops it. Field selectors work with both APIs' field names
//! ([`selectable_fields`]).

use serde_json::{Map, Value};

use crate::registry::ResourceInfo;

/// The `apiVersion` of the `events.k8s.io` version.
pub(crate) const EVENTS_V1: &str = "events.k8s.io/v1";

/// `(events.k8s.io/v1, core v1)` names of the fields that differ.
const RENAMED: &[(&str, &str)] = &[
    ("regarding", "involvedObject"),
    ("note", "message"),
    ("reportingController", "reportingComponent"),
    ("deprecatedSource", "source"),
    ("deprecatedFirstTimestamp", "firstTimestamp"),
    ("deprecatedLastTimestamp", "lastTimestamp"),
    ("deprecatedCount", "count"),
];

/// The fields both versions name alike.
const SHARED: &[&str] = &[
    "metadata",
    "eventTime",
    "series",
    "reportingInstance",
    "action",
    "reason",
    "related",
    "type",
];

/// Whether `info` is one of the two Event resources.
pub(crate) fn is_event(info: &ResourceInfo) -> bool {
    info.plural == "events" && (info.group.is_empty() || info.group == "events.k8s.io")
}

/// The store both Event resources share (the core resource's).
pub(crate) const STORAGE_KEY: &str = "/events";

/// An `events.k8s.io/v1` Event in the core `v1` form.
pub(crate) fn to_core(event: &Value) -> Value {
    convert(event, "v1", |(events, core)| (events, core))
}

/// A core `v1` Event in the `events.k8s.io/v1` form.
pub(crate) fn from_core(event: &Value) -> Value {
    convert(event, EVENTS_V1, |(events, core)| (core, events))
}

/// Copies the fields an Event of one version has into the other's names; `names` gives a
/// renamed pair as (source name, target name).
fn convert(
    event: &Value,
    api_version: &str,
    names: fn((&'static str, &'static str)) -> (&'static str, &'static str),
) -> Value {
    let Some(from) = event.as_object() else {
        return event.clone();
    };
    let mut out = Map::new();
    out.insert("kind".into(), Value::String("Event".into()));
    out.insert("apiVersion".into(), Value::String(api_version.into()));
    for key in SHARED {
        if let Some(v) = from.get(*key) {
            out.insert((*key).into(), v.clone());
        }
    }
    for pair in RENAMED {
        let (source, target) = names(*pair);
        if let Some(v) = from.get(source) {
            out.insert(target.into(), v.clone());
        }
    }
    Value::Object(out)
}

/// The selectable fields of a stored (core) Event under both APIs' names: the core ones
/// (`involvedObject.kind`, `source`, ...) and `events.k8s.io`'s (`regarding.kind`, ...).
pub(crate) fn selectable_fields(core: &Value) -> Vec<(String, String)> {
    let text = |v: &Value| match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    };
    let mut fields = Vec::new();
    for key in [
        "kind",
        "namespace",
        "name",
        "uid",
        "apiVersion",
        "resourceVersion",
        "fieldPath",
    ] {
        let v = text(&core["involvedObject"][key]);
        fields.push((format!("involvedObject.{key}"), v.clone()));
        fields.push((format!("regarding.{key}"), v));
    }
    for key in ["reason", "type", "reportingComponent"] {
        fields.push((key.to_owned(), text(&core[key])));
    }
    fields.push((
        "reportingController".to_owned(),
        text(&core["reportingComponent"]),
    ));
    // The core field selector `source` is the reporting component (`source.component`).
    fields.push(("source".to_owned(), text(&core["source"]["component"])));
    fields
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The field mapping of `pkg/apis/events/v1/conversion.go`, both ways, lossless for the
    /// fields either version has.
    #[test]
    fn events_convert_between_the_two_versions() {
        let new = json!({
            "apiVersion": "events.k8s.io/v1", "kind": "Event",
            "metadata": {"name": "e", "namespace": "ns"},
            "eventTime": "2026-01-01T00:00:00.000000Z",
            "series": {"count": 2, "lastObservedTime": "2026-01-01T00:00:01.000000Z"},
            "reportingController": "kinform.dev/ctl", "reportingInstance": "ctl-0",
            "action": "Reconcile", "reason": "Synced", "type": "Normal",
            "regarding": {"kind": "Pod", "name": "web", "namespace": "ns"},
            "note": "synced web",
            "deprecatedSource": {"component": "ctl", "host": "node-1"},
            "deprecatedFirstTimestamp": "2026-01-01T00:00:00Z",
            "deprecatedLastTimestamp": "2026-01-01T00:00:01Z",
            "deprecatedCount": 3,
            "unknown": true,
        });
        let core = to_core(&new);
        assert_eq!(core["apiVersion"], "v1");
        assert_eq!(core["involvedObject"]["name"], "web");
        assert_eq!(core["message"], "synced web");
        assert_eq!(core["reportingComponent"], "kinform.dev/ctl");
        assert_eq!(core["reportingInstance"], "ctl-0");
        assert_eq!(core["source"]["host"], "node-1");
        assert_eq!(core["firstTimestamp"], "2026-01-01T00:00:00Z");
        assert_eq!(core["lastTimestamp"], "2026-01-01T00:00:01Z");
        assert_eq!(core["count"], 3);
        assert_eq!(core["series"]["count"], 2);
        assert!(core.get("unknown").is_none() && core.get("note").is_none());
        let mut back = new.clone();
        back.as_object_mut().unwrap().remove("unknown");
        assert_eq!(from_core(&core), back);
        let fields = selectable_fields(&core);
        assert!(fields.contains(&("regarding.name".into(), "web".into())));
        assert!(fields.contains(&("involvedObject.kind".into(), "Pod".into())));
        assert!(fields.contains(&("source".into(), "ctl".into())));
    }
}
