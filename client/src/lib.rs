//! # kinform-client
//!
//! Talking to the API server: the second layer of kinform (see the repository's
//! `ARCHITECTURE.md`). It imports `kinform-core` only, never the runtime; the runtime's
//! reflector reads lists and watches through the [`decode`] seam.
//!
//! - [`Config`]: where the server is and how to authenticate (kubeconfig with kubectl's
//!   loading rules, exec credential plugins, in-cluster service account), client-go's
//!   `rest.Config` + `clientcmd`.
//! - [`Client`]: the hyper 1 + rustls transport (TLS, HTTP/2, gzip, QPS/burst, retries on
//!   429/503/504 with `Retry-After`), client-go's `rest.RESTClient`.
//! - [`Api`]: typed verbs on one resource, for generated, derived and untyped
//!   ([`DynamicObject`], [`PartialObjectMetadata`]) objects; [`Discovery`] of `/api` and `/apis`.
//! - [`connect`]: exec, attach and port-forward over WebSocket, and the proxy subresource.
//! - [`decode`]: the list/watch decoding pipeline behind the reflector (its module docs are
//!   the map of what runs where and why); its requests ask the server to drop
//!   managedFields when the reflector drops them anyway ([`ManagedFieldsOptOut`], KEP-5958).
//! - The typed [`Error`] that keeps the server's `Status`; the request vocabulary of
//!   `kinform-core` ([`ListParams`], [`WatchParams`], [`ObjectList`], [`WatchEvent`]) is
//!   re-exported here.

mod api;
pub mod config;
pub mod connect;
pub mod decode;
mod discovery;
mod dynamic;
mod error;
mod managed_fields;
mod secret;
mod transport;
mod wire;

pub use api::{
    ACCEPT_PARTIAL_METADATA, ACCEPT_PARTIAL_METADATA_LIST, Api, ApplyParams, DeleteParams,
    DeleteResponse, Either, Patch, PatchParams, PostParams, Preconditions, PropagationPolicy,
    WatchStream, decode_watch_line,
};
pub use config::{AuthConfig, Config, ConfigError, KubeConfigOptions, Kubeconfig};
pub use connect::{
    AttachParams, AttachedProcess, ConnectError, ExecStatus, Portforwarder, ProxyRequest,
    ProxyResponse, TerminalSize,
};
pub use discovery::{DiscoveredGroup, DiscoveredResource, DiscoveredVersion, Discovery};
pub use dynamic::{DynamicObject, PartialObjectMetadata, TypeMeta};
pub use error::{Error, Result};
pub use kinform_core::{
    Bookmark, INITIAL_EVENTS_END_ANNOTATION, ListParams, ObjectList, ResourceVersionMatch,
    WatchEvent, WatchParams,
};
pub use managed_fields::{ACCEPT_DROP_MANAGED_FIELDS, ManagedFieldsOptOut};
pub use secret::Secret;
pub use transport::Client;

/// A response body streamed as it arrives (`pods/log`).
pub type ByteStream = futures_util::stream::BoxStream<'static, Result<bytes::Bytes>>;
