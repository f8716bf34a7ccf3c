//! `Api<K>`: typed requests on one resource, in one namespace or across all of them.
//!
//! The typed face of client-go's generated clientsets and of its dynamic client: an `Api<K>`
//! is bound to a resource ([`ApiResource`], static for [`Resource`] types, given at run time
//! for [`DynamicObject`](super::DynamicObject)) and a namespace, and offers the verbs of
//! <https://kubernetes.io/docs/reference/using-api/api-concepts/>: get, list, watch, create,
//! replace, patch, delete, delete_collection and subresources (status, scale, log, ...).
//!
//! The user verbs decode their answers with `serde_json`: `list` reads the page into one
//! buffer and decodes it with one `serde_json::from_slice`; `watch` decodes line by line as
//! the bytes arrive (the `wire::watch` module). The reflector does not use these: it lists
//! and watches through the [`decode`](crate::decode) seam, which decodes into shared,
//! transformed objects on the two decoding threads. Decode errors name the request and the
//! resource. An `Api` made with `metadata_*` asks for `PartialObjectMetadata` with the
//! `Accept` header client-go's metadata client sends.

mod apply;
mod params;
mod query;
mod subresource;
mod verbs;

use std::marker::PhantomData;

use http::Method;
use http::header::{ACCEPT, CONTENT_TYPE};
use serde::de::DeserializeOwned;

pub use crate::wire::watch::decode_watch_line;
pub use params::{
    ApplyParams, DeleteParams, DeleteResponse, Either, Patch, PatchParams, PostParams,
    Preconditions, PropagationPolicy,
};

use crate::{Client, Error, Result};
use kinform_core::WatchEvent;
use kinform_core::resource::{ApiResource, Resource};

/// A stream of watch events ([`Api::watch`]); ends when the server closes the watch.
pub type WatchStream<K> = futures_util::stream::BoxStream<'static, Result<WatchEvent<K>>>;

/// `Accept` of metadata-only requests for one object (and watch events).
pub const ACCEPT_PARTIAL_METADATA: &str =
    "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json";
/// `Accept` of metadata-only lists.
pub const ACCEPT_PARTIAL_METADATA_LIST: &str =
    "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json";

/// Typed access to one resource in one namespace, or across all namespaces, or cluster-wide.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use futures_util::StreamExt;
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use kinform_client::{Api, DeleteParams, Patch, PatchParams, PostParams};
/// use kinform_core::{WatchEvent, WatchParams};
///
/// # let server = kinform_testserver::TestApiServer::start().await?;
/// # let client = server.client()?; // with a cluster: Client::try_default().await?
/// let configmaps: Api<ConfigMap> = Api::namespaced(client, "default");
/// let mut cm = ConfigMap::default();
/// cm.metadata.name = Some("settings".into());
/// cm.data = Some([("mode".to_string(), "fast".to_string())].into());
/// let created = configmaps.create(&PostParams::default(), &cm).await?;
///
/// // Watch from the creation on: the next change arrives as MODIFIED.
/// let rv = created.metadata.resource_version.clone().unwrap_or_default();
/// let wp = WatchParams { resource_version: Some(rv), ..Default::default() };
/// let mut events = configmaps.watch(&wp).await?;
///
/// let patch = serde_json::json!({"data": {"mode": "safe"}});
/// configmaps.patch("settings", &PatchParams::default(), &Patch::Merge(&patch)).await?;
/// match events.next().await {
///     Some(Ok(WatchEvent::Modified(cm))) => assert_eq!(cm.data.unwrap()["mode"], "safe"),
///     other => panic!("expected MODIFIED, got {other:?}"),
/// }
///
/// configmaps.delete("settings", &DeleteParams::default()).await?;
/// assert!(configmaps.get_opt("settings").await?.is_none());
/// # Ok(()) }
/// ```
pub struct Api<K> {
    client: Client,
    resource: ApiResource,
    namespace: Option<String>,
    metadata_only: bool,
    _kind: PhantomData<fn() -> K>,
}

impl<K> Clone for Api<K> {
    fn clone(&self) -> Self {
        Self {
            client: self.client.clone(),
            resource: self.resource.clone(),
            namespace: self.namespace.clone(),
            metadata_only: self.metadata_only,
            _kind: PhantomData,
        }
    }
}

impl<K> std::fmt::Debug for Api<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Api")
            .field("resource", &self.resource.to_string())
            .field("namespace", &self.namespace)
            .field("metadata_only", &self.metadata_only)
            .finish()
    }
}

impl<K: Resource> Api<K> {
    /// Objects in namespace `ns` (for a cluster-scoped resource the namespace is ignored).
    pub fn namespaced(client: Client, ns: &str) -> Self {
        Self::new(client, K::api_resource(), Some(ns))
    }

    /// Objects of all namespaces, or of the cluster for a cluster-scoped resource.
    pub fn all(client: Client) -> Self {
        Self::new(client, K::api_resource(), None)
    }

    /// Objects in the client's default namespace (the kubeconfig context's).
    pub fn default_namespaced(client: Client) -> Self {
        let ns = client.default_namespace().to_owned();
        Self::new(client, K::api_resource(), Some(&ns))
    }
}

impl<K> Api<K> {
    fn new(client: Client, resource: ApiResource, ns: Option<&str>) -> Self {
        let namespace = match resource.scope {
            kinform_core::resource::Scope::Namespaced => ns.map(str::to_owned),
            kinform_core::resource::Scope::Cluster => None,
        };
        Self {
            client,
            resource,
            namespace,
            metadata_only: false,
            _kind: PhantomData,
        }
    }

    /// Objects of a resource known at run time, in namespace `ns`.
    pub fn namespaced_with(client: Client, ns: &str, resource: &ApiResource) -> Self {
        Self::new(client, resource.clone(), Some(ns))
    }

    /// Objects of a resource known at run time, in all namespaces or cluster-wide.
    pub fn all_with(client: Client, resource: &ApiResource) -> Self {
        Self::new(client, resource.clone(), None)
    }

    /// Objects of a resource known at run time, in the client's default namespace.
    pub fn default_namespaced_with(client: Client, resource: &ApiResource) -> Self {
        let ns = client.default_namespace().to_owned();
        Self::new(client, resource.clone(), Some(&ns))
    }

    /// The resource.
    pub fn resource(&self) -> &ApiResource {
        &self.resource
    }

    /// The namespace, `None` for all namespaces or a cluster-scoped resource.
    pub fn namespace(&self) -> Option<&str> {
        self.namespace.as_deref()
    }

    /// The client.
    pub fn client(&self) -> &Client {
        &self.client
    }

    pub(crate) fn with_metadata_only(mut self) -> Self {
        self.metadata_only = true;
        self
    }

    /// The collection path, in `ns` if given, else in the Api's namespace.
    fn collection(&self, ns: Option<&str>) -> String {
        self.resource
            .collection_path(ns.or(self.namespace.as_deref()))
    }

    /// `collection/name[/sub]`.
    fn object_path(&self, name: &str, sub: Option<&str>) -> String {
        let mut p = self.collection(None);
        p.push('/');
        p.push_str(&query::segment(name));
        if let Some(sub) = sub {
            p.push('/');
            p.push_str(sub);
        }
        p
    }

    /// Whether this Api asks for `PartialObjectMetadata` (made with `metadata_*`).
    pub(crate) fn is_metadata_only(&self) -> bool {
        self.metadata_only
    }

    fn accept(&self, list: bool) -> &'static str {
        match (self.metadata_only, list) {
            (false, _) => "application/json",
            (true, false) => ACCEPT_PARTIAL_METADATA,
            (true, true) => ACCEPT_PARTIAL_METADATA_LIST,
        }
    }

    pub(crate) fn request(
        &self,
        method: Method,
        uri: String,
        body: Vec<u8>,
        content_type: Option<&str>,
        list: bool,
    ) -> Result<http::Request<Vec<u8>>> {
        let mut b = http::Request::builder()
            .method(method.clone())
            .uri(&uri)
            .header(ACCEPT, self.accept(list));
        if let Some(ct) = content_type {
            b = b.header(CONTENT_TYPE, ct);
        }
        b.body(body).map_err(|e| Error::Transport {
            request: format!("{method} {uri}"),
            message: format!("cannot build request: {e}"),
            source: None,
        })
    }

    /// Sends and decodes a JSON answer; decode errors name `what` of this resource.
    async fn send<T: DeserializeOwned>(
        &self,
        req: http::Request<Vec<u8>>,
        what: &str,
    ) -> Result<T> {
        let (request, bytes) = self.client.request_bytes(req).await?;
        serde_json::from_slice(&bytes).map_err(|source| Error::Decode {
            request,
            what: format!("{} {what}", self.resource),
            source,
        })
    }

    fn encode<T: serde::Serialize>(
        &self,
        method: &Method,
        uri: &str,
        value: &T,
    ) -> Result<Vec<u8>> {
        serde_json::to_vec(value).map_err(|source| Error::Encode {
            request: format!("{method} {uri}"),
            what: format!("a {} body", self.resource),
            source,
        })
    }
}
