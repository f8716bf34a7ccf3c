//! # kinform
//!
//! Kubernetes controllers in Rust with client-go's semantics: typed clients over a hyper +
//! rustls transport, the reflector, DeltaFIFO, indexed store, shared informers, listers, the
//! workqueue family and a controller toolkit, plus `#[derive(CustomResource)]` (feature
//! `derive`) and an in-process test API server (feature `testing`).
//!
//! This crate is the facade users add: it re-exports the layers below under the paths that
//! generated code, derived code and users name (`kinform::client::…`, `kinform::informer::…`,
//! `kinform::testing::…`). The layers, what each may import and the flow of one object from
//! the API server to a reconcile are mapped in the repository's `ARCHITECTURE.md`:
//!
//! - [`kinform_core`]: the vocabulary ([`resource`], [`selector`], [`shard`] selectors, keys, list/watch
//!   parameters, watch events, transforms, [`defaulting`], exact [`value`]s, [`crd`] building);
//! - [`kinform_client`] as [`client`]: config, transport, `Api<K>`, discovery, connect, and
//!   the list/watch decoding pipeline;
//! - [`kinform_runtime`]: [`reflector`], [`fifo`], [`store`], [`informer`], [`lister`],
//!   [`workqueue`], [`controller`], [`leader`], [`events`], [`admin`] (the admin HTTP
//!   endpoint), [`consistency`];
//! - `kinform_testserver` as `testing` (feature `testing`): `TestApiServer`;
//! - `kinform_webhook` as `webhook` (feature `webhook`): admission and CRD conversion
//!   webhooks, their TLS server and their configuration objects.
//!
//! The application picks the Kubernetes version: kinform's crates depend on k8s-openapi
//! without a version feature, so add `k8s-openapi = { version = "0.29", features = ["v1_35"] }`
//! (or the version your cluster runs) to the application's manifest, as with kube-rs.
//! Supported: Kubernetes 1.35 (the oldest minor maintained upstream) to 1.37 (the newest
//! k8s-openapi 0.29 offers), features `v1_35`, `v1_36` and `v1_37`; kinform and kube-rs in one
//! binary share the same k8s-openapi types.
//!
//! Objects are decoded once and shared as [`Arc<K>`](std::sync::Arc) between the FIFO, the
//! indexer, event handlers and listers. Keys are `namespace/name`, or `name` for
//! cluster-scoped objects, as client-go's `MetaNamespaceKeyFunc`.
//!
//! # A first program
//!
//! A client, a typed [`Api`], and a shared informer whose [`lister`] answers from its cache,
//! here against the in-process [`testing::TestApiServer`] (feature `testing`; with a cluster,
//! [`Client::try_default`] reads the kubeconfig, then the in-cluster service account):
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use std::time::Duration;
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use kinform::client::PostParams;
//! use kinform::informer::InformerFactory;
//! use kinform::testing::TestApiServer;
//! use kinform::{Api, HasMetadata};
//!
//! let server = TestApiServer::start().await?;
//! let client = server.client()?;
//! let configmaps: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
//! let mut cm = ConfigMap::default();
//! cm.metadata.name = Some("settings".into());
//! configmaps.create(&PostParams::default(), &cm).await?;
//!
//! let factory = InformerFactory::builder(client).test_backoff().build();
//! let lister = factory.lister::<ConfigMap>();
//! factory.start();
//! factory.wait_for_cache_sync(Duration::from_secs(30)).await?;
//! assert_eq!(lister.get("default", "settings").unwrap().key(), "default/settings");
//! factory.shutdown().await;
//! # Ok(()) }
//! ```
//!
//! Where to go next: [`controller::Controller`] (informers, a priority workqueue and
//! workers), [`CustomResource`] (feature `derive`), `kinform_codegen::Generator` (types,
//! clients and informers from CRD YAML in `build.rs`), and, coming from kube-rs,
//! [`docs::kube_rs_migration`].

pub use kinform_client as client;
#[cfg(feature = "derive")]
pub use kinform_core::crd;
pub use kinform_core::{apply, defaulting, lean, resource, selector, shard, value};
pub use kinform_runtime::{
    admin, consistency, controller, events, fifo, informer, leader, lister, reflector, store,
    workqueue,
};
#[cfg(feature = "testing")]
pub use kinform_testserver as testing;
#[cfg(feature = "webhook")]
pub use kinform_webhook as webhook;

pub use kinform_client::{Api, Client, Config, DynamicObject, Error, PartialObjectMetadata};
pub use kinform_core::{
    ApiResource, FieldSelector, HasMetadata, LabelSelector, Lean, ListParams, Resource, Scope,
    WatchEvent, WatchParams,
};
pub use kinform_runtime::leader::CancellationToken;
pub use kinform_runtime::reflector::ListerWatcher;

/// `#[derive(CustomResource)]`: the root type, `Resource` impl, CRD, typed client, lister,
/// informer and factory accessor of a hand-written spec type.
#[cfg(feature = "derive")]
pub use kinform_macros::CustomResource;

/// `#[derive(InPlace)]`: in-place watch decoding for the status and nested structs of a
/// derived resource.
#[cfg(feature = "derive")]
pub use kinform_macros::InPlace;

/// `#[api_group(group = "...")]` on an inline module of derived types: the group accessors
/// `client.example_com_v1().foos("ns")` and `factory.example_com().v1().foos()`, as generated
/// code has them.
#[cfg(feature = "derive")]
pub use kinform_macros::api_group;

/// Re-exported so that generated and derived code can name it through `kinform`.
pub use k8s_openapi;

/// Guides. Their Rust examples are doc tests, run against `TestApiServer`.
pub mod docs {
    #[doc = include_str!("../../docs/kube-rs-migration.md")]
    pub mod kube_rs_migration {}
}
