//! Garbage collection of dependents: what kube-controller-manager's garbage collector does in
//! every real cluster, so that deleting an owner deletes the objects whose `ownerReferences`
//! name it (<https://kubernetes.io/docs/concepts/architecture/garbage-collection/>).
//! Controllers such as sample-controller rely on it: they set an owner reference and never
//! delete their dependents themselves.
//!
//! A background task follows every committed change. It indexes the owner uids named by
//! each object's `ownerReferences`; when an object is deleted (its final deletion, after
//! finalizers), every dependent all of whose owners have been deleted is deleted in turn
//! (background cascading deletion; the dependent's own finalizers are honoured and its own
//! dependents follow through the same path). A dependent created or updated later with only
//! deleted owners (a controller that acted on a stale cache) is deleted as well. Like the real collector it acts shortly after
//! the owner is gone, not atomically with the owner's delete.
//!
//! The same task finishes what waits on a deletion: an owner deleted in the foreground loses
//! its `foregroundDeletion` finalizer (and goes) when its last dependent goes, and a
//! terminating namespace goes when its last object goes (the namespace controller's job).
//!
//! Differences from a real cluster: only owners whose deletion this server saw count as gone
//! (objects whose owners never existed, such as preloaded pods, are left alone); a watch buffer overflow of the task (more than the server's
//! `watch_buffer` changes at once) loses the index entries of the missed changes.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use serde_json::Value;
use tokio::sync::broadcast::{Receiver, error::RecvError};
use tokio_util::sync::CancellationToken;

use crate::handlers::delete::{
    DeleteOptions, FOREGROUND, delete, dependents, finish_namespace, remove_finalizer,
};
use crate::storage::{Event, EventType, Storage};

/// Where a dependent lives: its storage (`group/plural`) and key.
type Place = (Arc<str>, String);

/// Cheap test before parsing an object: most objects have no owner references.
fn mentions_owners(bytes: &[u8]) -> bool {
    bytes
        .windows(b"ownerReferences".len())
        .any(|w| w == b"ownerReferences")
}

/// The collector's view of ownership.
#[derive(Default)]
struct Index {
    /// Owner uid -> dependents naming it.
    dependents: HashMap<String, HashSet<Place>>,
    /// Dependent -> the owner uids it names.
    owners: HashMap<Place, Vec<String>>,
    /// Uids of objects seen deleted.
    gone: HashSet<String>,
}

fn owner_uids(value: &Value) -> Vec<String> {
    value["metadata"]["ownerReferences"]
        .as_array()
        .map(|refs| {
            refs.iter()
                .filter_map(|r| r["uid"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

impl Index {
    fn forget(&mut self, place: &Place) {
        for uid in self.owners.remove(place).unwrap_or_default() {
            if let Some(set) = self.dependents.get_mut(&uid) {
                set.remove(place);
                if set.is_empty() {
                    self.dependents.remove(&uid);
                }
            }
        }
    }

    fn record(&mut self, place: Place, uids: Vec<String>) {
        self.forget(&place);
        if uids.is_empty() {
            return;
        }
        for uid in &uids {
            self.dependents
                .entry(uid.clone())
                .or_default()
                .insert(place.clone());
        }
        self.owners.insert(place, uids);
    }

    /// Applies one change; returns the dependents to delete.
    fn apply(&mut self, event: &Event) -> Vec<Place> {
        let place: Place = (event.storage.clone(), event.obj.key.clone());
        match event.kind {
            EventType::Added | EventType::Modified => {
                if !mentions_owners(&event.obj.bytes) && !self.owners.contains_key(&place) {
                    return Vec::new();
                }
                let uids = owner_uids(&event.obj.value());
                // A dependent written after its owners were deleted (a controller acting on
                // a stale cache) is collected too, as the real collector does.
                let orphaned = !uids.is_empty() && uids.iter().all(|u| self.gone.contains(u));
                self.record(place.clone(), uids);
                if orphaned { vec![place] } else { Vec::new() }
            }
            EventType::Deleted => {
                self.forget(&place);
                let uid = event.obj.value()["metadata"]["uid"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned();
                if uid.is_empty() {
                    return Vec::new();
                }
                let candidates: Vec<Place> = self
                    .dependents
                    .get(&uid)
                    .map(|s| s.iter().cloned().collect())
                    .unwrap_or_default();
                self.gone.insert(uid);
                candidates
                    .into_iter()
                    .filter(|p| {
                        self.owners
                            .get(p)
                            .is_some_and(|uids| uids.iter().all(|u| self.gone.contains(u)))
                    })
                    .collect()
            }
        }
    }
}

/// Runs the collector until `cancel`. `events` must be subscribed before the server takes
/// requests.
pub(crate) async fn run(
    storage: Arc<Storage>,
    mut events: Receiver<Arc<Event>>,
    cancel: CancellationToken,
) {
    let mut index = Index::default();
    loop {
        let event = tokio::select! {
            e = events.recv() => e,
            _ = cancel.cancelled() => return,
        };
        let event = match event {
            Ok(e) => e,
            Err(RecvError::Lagged(missed)) => {
                tracing::warn!(
                    missed,
                    "TestApiServer garbage collector fell behind; some dependents may not be collected"
                );
                continue;
            }
            Err(RecvError::Closed) => return,
        };
        for (storage_key, key) in index.apply(&event) {
            collect(&storage, &storage_key, &key);
        }
        if event.kind == EventType::Deleted {
            finish_waiting_owners(&storage, &event);
        }
    }
}

/// Deletes one dependent (its deletion event then cascades to its own dependents).
fn collect(storage: &Storage, storage_key: &str, key: &str) {
    let mut inner = storage.lock();
    let Some(obj) = inner.get(storage_key, key) else {
        return;
    };
    let Some(info) = inner.info_for(storage_key, &obj.api_version) else {
        return;
    };
    let (namespace, name) = (obj.namespace.clone(), obj.name.clone());
    match delete(
        &mut inner,
        &info,
        &namespace,
        &name,
        &DeleteOptions::default(),
    ) {
        Ok(_) => tracing::debug!(storage = storage_key, key, "garbage collected"),
        Err(e) => {
            tracing::warn!(storage = storage_key, key, error = %e, "garbage collection failed")
        }
    }
}

/// After a deletion: removes the `foregroundDeletion` finalizer of owners whose last
/// dependent this was, and removes the object's namespace if it is terminating and now empty.
fn finish_waiting_owners(storage: &Storage, event: &Event) {
    let value = if mentions_owners(&event.obj.bytes) {
        event.obj.value()
    } else {
        Value::Null
    };
    let mut inner = storage.lock();
    let namespace = event.obj.namespace.as_str();
    for owner in value["metadata"]["ownerReferences"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let (Some(api_version), Some(kind), Some(name)) = (
            owner["apiVersion"].as_str(),
            owner["kind"].as_str(),
            owner["name"].as_str(),
        ) else {
            continue;
        };
        let Some(info) = inner.registry.by_kind(api_version, kind) else {
            continue;
        };
        let ns = if info.namespaced { namespace } else { "" };
        let Some(obj) = inner.get(&info.storage_key(), &crate::storage::object_key(ns, name))
        else {
            continue;
        };
        let owner_value = obj.value();
        let waiting = !owner_value["metadata"]["deletionTimestamp"].is_null()
            && owner_value["metadata"]["finalizers"]
                .as_array()
                .is_some_and(|f| f.iter().any(|f| f == FOREGROUND));
        let uid = owner_value["metadata"]["uid"].as_str().unwrap_or_default();
        if waiting && owner["uid"] == uid && dependents(&inner, uid).is_empty() {
            remove_finalizer(&mut inner, &info, &obj, FOREGROUND);
        }
    }
    if !namespace.is_empty()
        && let Some(ns_info) = inner.registry.get("", "v1", "namespaces")
    {
        finish_namespace(&mut inner, &ns_info, namespace);
    }
}
