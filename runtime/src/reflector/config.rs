//! Reflector options, with client-go's defaults.

use std::time::Duration;

use kinform_core::ShardSelector;

use super::backoff::BackoffConfig;

/// How the reflector obtains the initial state (and every relist).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum ListMode {
    /// Streaming list (a watch with `sendInitialEvents=true`) and, when the server does not
    /// support it or the attempt fails, a paged LIST for that round. A server that rejects
    /// the request as invalid (4xx other than 410/429) is not asked again.
    #[default]
    Auto,
    /// Streaming list only; failures back off and retry it.
    Streaming,
    /// Paged LIST only (client-go's classic ListAndWatch).
    Paged,
}

/// Options of a [`Reflector`](super::Reflector).
#[derive(Clone, Debug)]
#[must_use]
pub struct ReflectorConfig {
    /// A name for logs and errors, e.g. `v1/pods`.
    pub name: String,
    /// `labelSelector` of every list and watch.
    pub label_selector: Option<String>,
    /// `fieldSelector` of every list and watch.
    pub field_selector: Option<String>,
    /// `shardSelector` of every list and watch (KEP-5866, alpha in Kubernetes 1.36): the
    /// server sends only the shard when it honours the parameter, and the reflector keeps
    /// only the shard's objects either way (a server that ignores it, gate off or older than
    /// 1.36, sends every object: they are dropped here, on the client, by the same hash).
    pub shard_selector: Option<ShardSelector>,
    /// Streaming list, paged list, or streaming with fallback.
    pub list_mode: ListMode,
    /// Page size of paged lists (client-go's pager default: 500).
    pub page_size: u32,
    /// Backoff after errors (client-go: 800 ms doubling with jitter to 30 s, reset after
    /// 2 minutes).
    pub backoff: BackoffConfig,
    /// Backoff between retries of one failed page of a paged list (reset by every page read).
    pub page_retry_backoff: BackoffConfig,
    /// Transient failures of one page tolerated before the whole list is abandoned.
    pub max_page_retries: u32,
    /// Lower bound of the random `timeoutSeconds` of each watch (client-go: 5 minutes).
    pub min_watch_timeout: Duration,
    /// Upper bound of the random watch timeout (client-go: twice the lower bound).
    pub max_watch_timeout: Duration,
    /// A watch that ends sooner than this with no event counts as an error (client-go: 1 s).
    pub short_watch: Duration,
    /// The objects' `metadata.managedFields` is dropped by the transform anyway, so list
    /// decoding may skip it (set by the informer factory unless it keeps managedFields).
    pub skip_managed_fields: bool,
}

impl ReflectorConfig {
    /// client-go's defaults, named `name`.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            label_selector: None,
            field_selector: None,
            shard_selector: None,
            list_mode: ListMode::Auto,
            page_size: 500,
            backoff: BackoffConfig::default(),
            page_retry_backoff: BackoffConfig {
                initial: Duration::from_millis(100),
                ..BackoffConfig::default()
            },
            max_page_retries: 10,
            min_watch_timeout: Duration::from_secs(300),
            max_watch_timeout: Duration::from_secs(600),
            short_watch: Duration::from_secs(1),
            skip_managed_fields: false,
        }
    }

    /// Sets the label selector.
    pub fn label_selector(mut self, selector: impl Into<String>) -> Self {
        self.label_selector = Some(selector.into()).filter(|s: &String| !s.is_empty());
        self
    }

    /// Sets the field selector.
    pub fn field_selector(mut self, selector: impl Into<String>) -> Self {
        self.field_selector = Some(selector.into()).filter(|s: &String| !s.is_empty());
        self
    }

    /// Sets the shard selector (see [`shard_selector`](Self::shard_selector)).
    pub fn shard_selector(mut self, selector: ShardSelector) -> Self {
        self.shard_selector = Some(selector);
        self
    }

    /// Sets the list mode.
    pub fn list_mode(mut self, mode: ListMode) -> Self {
        self.list_mode = mode;
        self
    }

    /// Test-sized backoffs (for tests against a `TestApiServer`, never for a cluster): the
    /// error backoff becomes [`BackoffConfig::for_tests`] (20 ms to 300 ms) and a failed page
    /// is retried after 5 ms to 100 ms. Every rule stays: a watch that ends in under
    /// [`short_watch`](Self::short_watch) without events still counts as an error and backs
    /// off, only for milliseconds instead of up to 30 s.
    pub fn test_backoff(mut self) -> Self {
        self.backoff = BackoffConfig::for_tests();
        self.page_retry_backoff = BackoffConfig {
            initial: Duration::from_millis(5),
            max: Duration::from_millis(100),
            ..BackoffConfig::for_tests()
        };
        self
    }
}

impl Default for ReflectorConfig {
    fn default() -> Self {
        Self::new("reflector")
    }
}
