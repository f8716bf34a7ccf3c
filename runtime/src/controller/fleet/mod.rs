//! Fleets: one controller over many clusters (sigs.k8s.io/multicluster-runtime's model).
//!
//! Platform teams run one controller against cluster fleets, kcp workspaces or Cluster API
//! management clusters. The pieces:
//!
//! - [`Cluster`]: a member cluster, its name in the fleet, a client of it and, for each
//!   engagement, an informer factory the fleet shuts down when the work ends.
//! - [`ClusterProvider`]: where clusters come from, reporting them into a [`ClusterSink`]
//!   as they come, change and go. Provided: [`KubeconfigDir`] (one kubeconfig file per
//!   cluster in a watched directory), [`KubeconfigSecrets`] (Cluster API's
//!   `<cluster>-kubeconfig` Secrets in a management cluster), [`ClusterProfiles`] (the
//!   Cluster Inventory API's `ClusterProfile`s in a hub, reached through an
//!   [`AccessConfig`]'s exec plugins) and [`StaticClusters`].
//! - [`Fleet`]: runs the user's work for each cluster this replica engages (typically an
//!   informer factory and a controller of that cluster), stops it when the cluster leaves,
//!   restarts it when the cluster reconnects, and isolates each cluster's failures.
//! - [`FleetSharding`]: clusters shared over replicas. Membership is the sharded
//!   controller's (a Lease per replica, liveness judged on the observer's clock, see
//!   [`shard`](super::shard)); a cluster is assigned by rendezvous hashing of its name and
//!   runs under a Lease of its own through the leader elector, which drains the work
//!   before releasing. Hence the invariant: **at most one replica runs a cluster's work at
//!   any time**, and a hand-over waits for the previous replica to stop.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use kinform_runtime::controller::fleet::{Fleet, KubeconfigDir};
//! use kinform_runtime::controller::{Action, Controller};
//!
//! let fleet = Fleet::new("configmap-audit", KubeconfigDir::new("/etc/fleet"))?;
//! fleet
//!     .run(
//!         |cluster, stop| async move {
//!             let controller = Controller::<ConfigMap>::builder(cluster.informers()).build();
//!             let name = cluster.name().to_owned();
//!             controller
//!                 .run(
//!                     move |req| {
//!                         let name = name.clone();
//!                         async move {
//!                             tracing::info!(cluster = %name, key = %req.key, "reconcile");
//!                             Ok::<_, std::convert::Infallible>(Action::done())
//!                         }
//!                     },
//!                     stop.cancelled_owned(),
//!                 )
//!                 .await;
//!         },
//!         kinform_runtime::controller::shutdown_signal(),
//!     )
//!     .await;
//! # Ok(()) }
//! ```
//!
//! What differs from multicluster-runtime: the work per cluster is any future (a whole
//! controller, or several sharing the cluster's factory) rather than a reconciler
//! registered on a multi-cluster manager; a request names its cluster because the
//! reconcile closure captures it.

mod cluster;
mod cluster_profiles;
mod kubeconfig_dir;
mod kubeconfig_secrets;
mod run;
mod static_list;

pub use cluster::{Cluster, ClusterProvider, ClusterSink};
pub use cluster_profiles::{
    ADDITIONAL_ARGS_EXTENSION, ADDITIONAL_ENVS_EXTENSION, AccessConfig, AccessError,
    AccessProvider, CLUSTER_MANAGER_LABEL, ClusterProfile, ClusterProfileStatus, ClusterProfiles,
    EXEC_EXTENSION,
};
pub use kubeconfig_dir::KubeconfigDir;
pub use kubeconfig_secrets::{CLUSTER_NAME_LABEL, KUBECONFIG_DATA_KEY, KubeconfigSecrets};
pub use run::{ClusterPhase, ClusterState, Fleet, FleetHandle, FleetSharding};
pub use static_list::StaticClusters;
