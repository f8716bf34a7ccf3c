//! Test fixtures: pods, pages, errors, a machine without jitter.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ListMeta, Status, StatusDetails};

use crate::reflector::{Input, ListMode, Machine, ReflectorConfig, ReflectorMetrics};
use kinform_client::{Bookmark, Error, INITIAL_EVENTS_END_ANNOTATION, ObjectList, WatchEvent};

pub fn pod(name: &str, rv: &str) -> Pod {
    let mut p = Pod::default();
    p.metadata.namespace = Some("default".into());
    p.metadata.name = Some(name.into());
    p.metadata.resource_version = Some(rv.into());
    p
}

/// A LIST page of `items`, shared as the reflector's lister-watcher hands them over.
pub fn page(items: Vec<Pod>, rv: &str, continue_token: Option<&str>) -> ObjectList<Arc<Pod>> {
    ObjectList {
        metadata: ListMeta {
            resource_version: Some(rv.into()),
            continue_: continue_token.map(Into::into),
            ..ListMeta::default()
        },
        shard_info: None,
        items: items.into_iter().map(Arc::new).collect(),
    }
}

/// A watch event as the machine's input, its object shared.
pub fn event(ev: WatchEvent<Pod>) -> Input<Pod> {
    Input::Event(ev.map(Arc::new))
}

pub fn status(code: i32, reason: &str) -> Box<Status> {
    Box::new(Status {
        code: Some(code),
        reason: Some(reason.into()),
        message: Some(format!("{reason} for test")),
        ..Status::default()
    })
}

pub fn api_err(code: i32, reason: &str) -> Error {
    Error::Api {
        request: "GET /api/v1/pods".into(),
        status: status(code, reason),
        retry_after: None,
    }
}

pub fn too_many(retry_after_secs: i32) -> Error {
    let mut s = status(429, "TooManyRequests");
    s.details = Some(StatusDetails {
        retry_after_seconds: Some(retry_after_secs),
        ..StatusDetails::default()
    });
    Error::Api {
        request: "GET /api/v1/pods".into(),
        status: s,
        retry_after: None,
    }
}

pub fn transport_err() -> Error {
    Error::Transport {
        request: "GET /api/v1/pods".into(),
        message: "connection refused".into(),
        source: None,
    }
}

pub fn bookmark(rv: &str, end: bool) -> Bookmark {
    let mut annotations = BTreeMap::new();
    if end {
        annotations.insert(INITIAL_EVENTS_END_ANNOTATION.to_owned(), "true".to_owned());
    }
    Bookmark {
        resource_version: rv.into(),
        annotations,
    }
}

pub fn config(mode: ListMode) -> ReflectorConfig {
    let mut c = ReflectorConfig::new("v1/pods").list_mode(mode);
    c.backoff = c.backoff.without_jitter();
    c.page_retry_backoff = c.page_retry_backoff.without_jitter();
    c
}

pub fn machine(mode: ListMode) -> (Machine, Arc<ReflectorMetrics>) {
    let metrics = Arc::new(ReflectorMetrics::default());
    (Machine::seeded(config(mode), metrics.clone(), 42), metrics)
}

pub fn names(items: &[Arc<Pod>]) -> Vec<String> {
    items
        .iter()
        .map(|p| p.metadata.name.clone().unwrap_or_default())
        .collect()
}
