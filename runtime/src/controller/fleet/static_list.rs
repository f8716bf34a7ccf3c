//! [`StaticClusters`]: a fixed list of clusters.

use tokio_util::sync::CancellationToken;

use super::cluster::{Cluster, ClusterProvider, ClusterSink};

/// A provider of a fixed list of clusters, engaged at start and kept until the fleet stops
/// (multicluster-runtime's `clusters` provider). For clusters known at build time, and for
/// tests.
#[derive(Clone, Debug, Default)]
pub struct StaticClusters {
    clusters: Vec<Cluster>,
}

impl StaticClusters {
    /// The fleet of `clusters` (their names must be distinct: a later one replaces an
    /// earlier one of the same name).
    pub fn new(clusters: impl IntoIterator<Item = Cluster>) -> Self {
        Self {
            clusters: clusters.into_iter().collect(),
        }
    }
}

impl ClusterProvider for StaticClusters {
    async fn run(self, sink: ClusterSink, stop: CancellationToken) {
        for cluster in self.clusters {
            sink.engage(cluster);
        }
        stop.cancelled().await;
    }
}
