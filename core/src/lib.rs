//! # kinform-core
//!
//! The vocabulary every other kinform crate speaks, with no I/O: what a Kubernetes resource
//! is ([`Resource`], [`HasMetadata`], [`ApiResource`]), label and field selectors, shard
//! selectors of server-side sharded list and watch (`shard`), the `namespace/name` cache keys ([`ObjectKey`]), the parameters of list and watch requests,
//! decoded list pages and watch events, object transforms, the structural defaulting of custom
//! resources (`defaulting`: the explicit operation; decoding never defaults), the value types
//! that keep what was sent (`value`: quantities, timestamps, conditions), server-side apply's
//! field sets and the extract of what one field manager applied (`apply`), and (feature
//! `derive`) the CRD building that `#[derive(CustomResource)]` types call at run time.
//!
//! It is the bottom layer of the map in the repository's `ARCHITECTURE.md`: it depends on
//! k8s-openapi and serde only, and every other kinform crate may import it. Users normally
//! reach these items through the `kinform` facade (`kinform::resource`, `kinform::selector`,
//! `kinform::client::ListParams`, ...).

pub mod apply;
#[cfg(feature = "derive")]
pub mod crd;
pub mod defaulting;
pub mod key;
pub mod lean;
pub mod params;
pub mod resource;
pub mod selector;
pub mod shard;
pub mod transform;
pub mod value;
pub mod watch_event;

pub use key::ObjectKey;
pub use lean::{Lean, LeanError};
pub use params::{ListParams, ResourceVersionMatch, WatchParams};
pub use resource::{ApiResource, HasMetadata, Resource, Scope};
pub use selector::{FieldSelector, LabelSelector};
pub use shard::{ShardField, ShardInfo, ShardRange, ShardSelector, ShardSelectorError};
pub use transform::Transform;
pub use watch_event::{Bookmark, INITIAL_EVENTS_END_ANNOTATION, ObjectList, WatchEvent};

/// Re-exported so that generated and derived code can name it through kinform.
pub use k8s_openapi;
