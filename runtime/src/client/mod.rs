//! Talking to the API server.
//!
//! - [`Config`]: where the server is and how to authenticate (kubeconfig with kubectl's
//!   loading rules, exec credential plugins, in-cluster service account), client-go's
//!   `rest.Config` + `clientcmd`.
//! - [`Client`]: the hyper 1 + rustls transport (TLS, HTTP/2, gzip, QPS/burst, retries on
//!   429/503/504 with `Retry-After`), client-go's `rest.RESTClient`.
//! - [`Api`]: typed verbs on one resource, for generated, derived and untyped
//!   ([`DynamicObject`], [`PartialObjectMetadata`]) objects; [`Discovery`] of `/api` and `/apis`.
//! - [`connect`]: exec, attach and port-forward over WebSocket, and the proxy subresource.
//! - The vocabulary shared with the reflector: [`ListParams`], [`WatchParams`],
//!   [`ObjectList`], [`WatchEvent`], the typed [`Error`] that keeps the server's `Status`,
//!   and [`ListerWatcher`] (client-go's `cache.ListerWatcher`), implemented by `Api<K>`.

mod api;
pub mod config;
pub mod connect;
mod discovery;
mod dynamic;
mod error;
mod lister_watcher;
mod params;
mod secret;
mod transport;
mod watch_event;

pub use api::{
    ACCEPT_PARTIAL_METADATA, ACCEPT_PARTIAL_METADATA_LIST, Api, DeleteParams, DeleteResponse,
    Either, Patch, PatchParams, PostParams, Preconditions, PropagationPolicy, decode_watch_line,
};
pub use config::{AuthConfig, Config, ConfigError, KubeConfigOptions, Kubeconfig};
pub use connect::{
    AttachParams, AttachedProcess, ConnectError, ExecStatus, Portforwarder, ProxyRequest,
    ProxyResponse, TerminalSize,
};
pub use discovery::{DiscoveredGroup, DiscoveredResource, DiscoveredVersion, Discovery};
pub use dynamic::{DynamicObject, PartialObjectMetadata, TypeMeta};
pub use error::{Error, Result};
pub use lister_watcher::{
    CachedLookup, ListHints, ListerWatcher, WatchBatch, WatchBatchStream, WatchStream,
};
pub use params::{ListParams, ResourceVersionMatch, WatchParams};
pub use secret::Secret;
pub use transport::Client;

/// A response body streamed as it arrives (`pods/log`).
pub type ByteStream = futures_util::stream::BoxStream<'static, Result<bytes::Bytes>>;
pub use watch_event::{Bookmark, INITIAL_EVENTS_END_ANNOTATION, ObjectList, WatchEvent};
