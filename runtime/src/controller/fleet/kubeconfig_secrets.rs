//! [`KubeconfigSecrets`]: the clusters whose kubeconfig Secrets a management cluster holds,
//! by Cluster API's convention.

use std::path::Path;
use std::sync::Arc;

use k8s_openapi::api::core::v1::Secret;
use tokio_util::sync::CancellationToken;

use super::cluster::{Cluster, ClusterProvider, ClusterSink};
use crate::fifo::Deleted;
use crate::informer::{EventHandlerFns, InformerFactory};
use kinform_client::{Client, Config, KubeConfigOptions, Kubeconfig};
use kinform_core::HasMetadata;

/// The label Cluster API puts on a cluster's Secrets, naming the cluster.
pub const CLUSTER_NAME_LABEL: &str = "cluster.x-k8s.io/cluster-name";
/// The data key of the kubeconfig in a Cluster API kubeconfig Secret.
pub const KUBECONFIG_DATA_KEY: &str = "value";

/// A provider of the clusters a management cluster holds kubeconfigs for, as Cluster API
/// stores them (its `util/secret` package, and multicluster-runtime's `cluster-api`
/// provider): for the Cluster `c` in namespace `ns`, the Secret `ns/c-kubeconfig` labelled
/// `cluster.x-k8s.io/cluster-name=c`, whose data key `value` is the kubeconfig.
///
/// - The cluster's name in the fleet is `ns/c`.
/// - A Secret appearing engages its cluster; its data changing reconnects it; its deletion
///   disengages it. Other Secrets of the cluster (`c-ca`, `c-user-kubeconfig`, ...) carry
///   the same label and are ignored: only `<label value>-kubeconfig` counts.
/// - A kubeconfig that does not parse, or has no usable current context, is a warning naming
///   the Secret, and the cluster's last good connection (if any) is kept. File paths in it
///   are not resolved against anything: a Secret's kubeconfig embeds its data.
///
/// It watches Secrets with an informer of its own (one namespace, or all). **RBAC** in the
/// management cluster: `get`, `list` and `watch` on `secrets` there.
#[derive(Clone, Debug)]
pub struct KubeconfigSecrets {
    client: Client,
    namespace: Option<String>,
    options: KubeConfigOptions,
}

impl KubeconfigSecrets {
    /// The kubeconfig Secrets of every namespace of the management cluster `client` reaches.
    pub fn new(client: Client) -> Self {
        Self {
            client,
            namespace: None,
            options: KubeConfigOptions::default(),
        }
    }

    /// Only the Secrets of `namespace`.
    pub fn namespace(mut self, namespace: impl Into<String>) -> Self {
        self.namespace = Some(namespace.into());
        self
    }
}

impl ClusterProvider for KubeconfigSecrets {
    async fn run(self, sink: ClusterSink, stop: CancellationToken) {
        let mut builder = InformerFactory::builder(self.client).label_selector(CLUSTER_NAME_LABEL);
        if let Some(ns) = &self.namespace {
            builder = builder.namespace(ns.clone());
        }
        let factory = builder.build();
        let informer = factory.informer::<Secret>();
        let options = Arc::new(self.options);
        let (on_add, on_update, on_delete) = (sink.clone(), sink.clone(), sink);
        let (add_options, update_options) = (options.clone(), options);
        let _registration = informer.add_event_handler(
            EventHandlerFns::new()
                .on_add(move |secret: &Arc<Secret>, _| {
                    engage(&on_add, secret, &add_options);
                })
                .on_update(move |old: &Arc<Secret>, new: &Arc<Secret>| {
                    if old.data != new.data {
                        engage(&on_update, new, &update_options);
                    }
                })
                .on_delete(move |deleted: &Deleted<Secret>| {
                    let last = match deleted {
                        Deleted::Object(s) => Some(s),
                        Deleted::FinalStateUnknown { last_known, .. } => last_known.as_ref(),
                    };
                    if let Some(name) = last.and_then(|s| cluster_of(s)) {
                        tracing::info!(cluster = %name, "kubeconfig Secret deleted: disengaging its cluster");
                        on_delete.disengage(&name);
                    }
                }),
        );
        factory.start();
        stop.cancelled().await;
        factory.shutdown().await;
    }
}

/// The fleet name (`ns/c`) of a Secret that is a cluster's kubeconfig Secret.
fn cluster_of(secret: &Secret) -> Option<String> {
    let cluster = secret.labels().get(CLUSTER_NAME_LABEL)?;
    let name = secret.metadata.name.as_deref()?;
    (name.strip_suffix("-kubeconfig")? == cluster).then(|| {
        let ns = secret.metadata.namespace.as_deref().unwrap_or_default();
        format!("{ns}/{cluster}")
    })
}

fn engage(sink: &ClusterSink, secret: &Secret, options: &KubeConfigOptions) {
    let Some(name) = cluster_of(secret) else {
        return;
    };
    match client_of(secret, options) {
        Ok(client) => {
            tracing::info!(cluster = %name, "engaging the cluster of a kubeconfig Secret");
            sink.engage(Cluster::new(name, client));
        }
        Err(error) => {
            tracing::warn!(secret = %format!("{name}-kubeconfig"), %error, "cannot use the kubeconfig Secret; the cluster keeps its last good connection, if any");
        }
    }
}

fn client_of(secret: &Secret, options: &KubeConfigOptions) -> Result<Client, String> {
    let bytes = secret
        .data
        .as_ref()
        .and_then(|d| d.get(KUBECONFIG_DATA_KEY))
        .ok_or_else(|| format!("no data key {KUBECONFIG_DATA_KEY:?}"))?;
    let text = std::str::from_utf8(&bytes.0).map_err(|e| format!("not UTF-8: {e}"))?;
    let label = format!(
        "Secret {}/{}",
        secret.metadata.namespace.as_deref().unwrap_or_default(),
        secret.metadata.name.as_deref().unwrap_or_default()
    );
    let kubeconfig = Kubeconfig::parse(text, Path::new(&label)).map_err(|e| e.to_string())?;
    let config = Config::from_custom_kubeconfig(kubeconfig, options).map_err(|e| e.to_string())?;
    Client::new(config).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secret(name: &str, cluster: Option<&str>) -> Secret {
        let mut s = Secret::default();
        s.metadata.name = Some(name.to_owned());
        s.metadata.namespace = Some("fleet".to_owned());
        if let Some(c) = cluster {
            s.metadata.labels = Some([(CLUSTER_NAME_LABEL.to_owned(), c.to_owned())].into());
        }
        s
    }

    #[test]
    fn only_the_kubeconfig_secret_of_the_labelled_cluster_counts() {
        assert_eq!(
            cluster_of(&secret("prod-kubeconfig", Some("prod"))).as_deref(),
            Some("fleet/prod")
        );
        assert_eq!(
            cluster_of(&secret("prod-user-kubeconfig", Some("prod"))),
            None
        );
        assert_eq!(cluster_of(&secret("prod-ca", Some("prod"))), None);
        assert_eq!(cluster_of(&secret("prod-kubeconfig", None)), None);
        assert_eq!(cluster_of(&secret("other-kubeconfig", Some("prod"))), None);
    }
}
