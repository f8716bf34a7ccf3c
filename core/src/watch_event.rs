//! Decoded list and watch responses.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ListMeta, Status};

use crate::shard::ShardInfo;

/// The annotation a BOOKMARK carries at the end of the initial events of a streaming list.
pub const INITIAL_EVENTS_END_ANNOTATION: &str = "k8s.io/initial-events-end";

/// One page of a LIST response.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ObjectList<K> {
    /// `metadata`: resourceVersion, continue token, remainingItemCount.
    pub metadata: ListMeta,
    /// `metadata.shardInfo`: set when the server honoured the request's shard selector and
    /// this page is that shard (module [`shard`](crate::shard)). Decoded here because
    /// k8s-openapi's `ListMeta` has the field only from Kubernetes 1.36 on; at 1.36 and later
    /// `metadata.shard_info` holds the same.
    pub shard_info: Option<ShardInfo>,
    /// The objects.
    pub items: Vec<K>,
}

/// A BOOKMARK event: a resourceVersion the watch has reached, with no object change.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Bookmark {
    /// The resourceVersion reached.
    pub resource_version: String,
    /// The bookmark object's annotations.
    pub annotations: BTreeMap<String, String>,
}

impl Bookmark {
    /// Whether this bookmark ends the initial events of a streaming list.
    pub fn is_initial_events_end(&self) -> bool {
        self.annotations
            .get(INITIAL_EVENTS_END_ANNOTATION)
            .is_some_and(|v| v == "true")
    }
}

/// One event of a WATCH stream.
#[derive(Clone, Debug, PartialEq)]
pub enum WatchEvent<K> {
    /// ADDED.
    Added(K),
    /// MODIFIED.
    Modified(K),
    /// DELETED: the object's last state.
    Deleted(K),
    /// BOOKMARK.
    Bookmark(Bookmark),
    /// ERROR: the server ended the watch with this Status (410 Expired, for one).
    Error(Box<Status>),
}

impl<K> WatchEvent<K> {
    /// The same event with its object mapped by `f` (bookmarks and errors unchanged), e.g.
    /// `ev.map(Arc::new)` to share the object.
    pub fn map<T>(self, f: impl FnOnce(K) -> T) -> WatchEvent<T> {
        match self {
            WatchEvent::Added(o) => WatchEvent::Added(f(o)),
            WatchEvent::Modified(o) => WatchEvent::Modified(f(o)),
            WatchEvent::Deleted(o) => WatchEvent::Deleted(f(o)),
            WatchEvent::Bookmark(b) => WatchEvent::Bookmark(b),
            WatchEvent::Error(s) => WatchEvent::Error(s),
        }
    }
}
