//! Query parameters of list and watch requests (`metav1.ListOptions`).

/// How `resourceVersion` is interpreted by a list (`metav1.ResourceVersionMatch`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ResourceVersionMatch {
    /// Any data at least as new as the given resourceVersion.
    NotOlderThan,
    /// Exactly the data at the given resourceVersion.
    Exact,
}

impl ResourceVersionMatch {
    /// The query parameter value.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::NotOlderThan => "NotOlderThan",
            Self::Exact => "Exact",
        }
    }
}

/// Parameters of a LIST request.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ListParams {
    /// `labelSelector`.
    pub label_selector: Option<String>,
    /// `fieldSelector`.
    pub field_selector: Option<String>,
    /// `limit`: page size; `None` asks for everything at once.
    pub limit: Option<u32>,
    /// `continue`: the token of the previous page.
    pub continue_token: Option<String>,
    /// `resourceVersion`: `None` or `""` is a consistent read, `"0"` any cached state.
    pub resource_version: Option<String>,
    /// `resourceVersionMatch`.
    pub resource_version_match: Option<ResourceVersionMatch>,
    /// `timeoutSeconds`.
    pub timeout_seconds: Option<u32>,
    /// `shardSelector` (KEP-5866, alpha in Kubernetes 1.36): only the objects whose hashed
    /// field falls in the selector's ranges, e.g.
    /// `ShardSelector::nth(ShardField::Uid, 0, 2)?.to_string()` (module
    /// [`shard`](crate::shard)). A server without the feature ignores it and answers the whole
    /// collection: [`ObjectList::shard_info`](crate::ObjectList::shard_info) tells which.
    pub shard_selector: Option<String>,
}

/// Parameters of a WATCH request.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct WatchParams {
    /// `labelSelector`.
    pub label_selector: Option<String>,
    /// `fieldSelector`.
    pub field_selector: Option<String>,
    /// `resourceVersion` to start from (exclusive).
    pub resource_version: Option<String>,
    /// `resourceVersionMatch` (required as `NotOlderThan` with `sendInitialEvents`).
    pub resource_version_match: Option<ResourceVersionMatch>,
    /// `timeoutSeconds`: the server ends the watch after this long.
    pub timeout_seconds: Option<u32>,
    /// `allowWatchBookmarks`.
    pub allow_watch_bookmarks: bool,
    /// `sendInitialEvents`: stream the current state first (streaming list).
    pub send_initial_events: bool,
    /// `shardSelector` (KEP-5866, alpha in Kubernetes 1.36): only the events of objects whose
    /// hashed field falls in the selector's ranges (bookmarks are not filtered); see
    /// [`ListParams::shard_selector`] and module [`shard`](crate::shard).
    pub shard_selector: Option<String>,
}
