//! # kinform
//!
//! The runtime every kinform controller links: typed clients over a hyper + rustls transport,
//! the reflector, DeltaFIFO, indexed store, shared informers, listers and the workqueue
//! family, reproducing client-go's semantics (see `DESIGN.md` in the repository).
//!
//! Objects are decoded once and shared as [`Arc<K>`](std::sync::Arc) between the FIFO, the
//! indexer, event handlers and listers. Keys are `namespace/name`, or `name` for
//! cluster-scoped objects, as client-go's `MetaNamespaceKeyFunc`.

pub mod client;
pub mod controller;
#[cfg(feature = "derive")]
pub mod crd;
pub mod events;
pub mod fifo;
pub mod informer;
pub mod leader;
pub mod lister;
pub mod reflector;
pub mod resource;
pub mod selector;
pub mod store;
pub mod workqueue;

#[cfg(feature = "testing")]
pub mod testing;

pub use client::{
    Api, Client, Config, DynamicObject, Error, ListParams, ListerWatcher, PartialObjectMetadata,
    WatchEvent, WatchParams,
};
pub use resource::{ApiResource, HasMetadata, Resource, Scope};
pub use selector::{FieldSelector, LabelSelector};

/// `#[derive(CustomResource)]`: the root type, `Resource` impl, CRD, typed client, lister,
/// informer and factory accessor of a hand-written spec type.
#[cfg(feature = "derive")]
pub use kinform_macros::CustomResource;

/// `#[api_group(group = "...")]` on an inline module of derived types: the group accessors
/// `client.example_com_v1().foos("ns")` and `factory.example_com().v1().foos()`, as generated
/// code has them.
#[cfg(feature = "derive")]
pub use kinform_macros::api_group;

/// Re-exported so that generated and derived code can name it through `kinform`.
pub use k8s_openapi;
