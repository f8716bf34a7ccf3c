//! The fleet's vocabulary: a [`Cluster`] (a name, a client and its informers), the [`ClusterSink`] a
//! provider reports into, and the [`ClusterProvider`] trait.

use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::Mutex;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use kinform_client::Client;

use crate::informer::InformerFactory;

/// One member cluster of a fleet: its name (unique in the fleet, the key that assigns it to
/// a replica), a client of it and an informer factory of that client. Cheap to clone.
///
/// The cluster the fleet hands to the work of one engagement carries a factory made for
/// that engagement (by [`Fleet::informer_factory`](super::Fleet::informer_factory)'s
/// maker), which the fleet shuts down once the work ended: a disengaged cluster's
/// informers stop and their caches are freed with the work's last handle, without the work
/// doing anything.
///
/// Every [`Cluster::new`] gets a new generation: a provider that reports a cluster again
/// under the same name (a kubeconfig file rewritten with a new server or token) makes the
/// fleet disengage the old connection and engage the new one.
#[derive(Clone)]
pub struct Cluster {
    name: Arc<str>,
    client: Client,
    informers: InformerFactory,
    generation: u64,
}

impl Cluster {
    /// A cluster named `name`, reached through `client`.
    pub fn new(name: impl Into<String>, client: Client) -> Self {
        static GENERATIONS: AtomicU64 = AtomicU64::new(1);
        Self {
            name: name.into().into(),
            informers: InformerFactory::new(client.clone()),
            client,
            generation: GENERATIONS.fetch_add(1, Ordering::Relaxed),
        }
    }

    /// The cluster's name in the fleet.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// A client of the cluster.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// The informer factory of the cluster: in the work of an engagement, the one made for
    /// it, which the fleet shuts down when the work ends (see [`Cluster`]).
    pub fn informers(&self) -> &InformerFactory {
        &self.informers
    }

    /// The same cluster with the informer factory of one engagement.
    pub(crate) fn with_informers(mut self, informers: InformerFactory) -> Self {
        self.informers = informers;
        self
    }

    /// Which report of the cluster this is (grows with every [`Cluster::new`]).
    pub(crate) fn generation(&self) -> u64 {
        self.generation
    }
}

impl fmt::Debug for Cluster {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Cluster")
            .field("name", &self.name)
            .field("generation", &self.generation)
            .finish_non_exhaustive()
    }
}

/// Where a [`ClusterProvider`] reports the clusters it knows. It keeps only the latest
/// report per cluster name (engaged with a client, or gone), so a provider that reports
/// faster than the fleet acts never queues without bound: memory is one entry per cluster.
/// Its methods do not block and may be called from informer handlers.
#[derive(Clone, Default)]
pub struct ClusterSink {
    shared: Arc<SinkShared>,
}

#[derive(Default)]
struct SinkShared {
    pending: Mutex<BTreeMap<String, Option<Cluster>>>,
    changed: Notify,
}

impl ClusterSink {
    /// Creates an empty sink (the fleet makes one per run; tests may drive one directly).
    pub fn new() -> Self {
        Self::default()
    }

    /// The cluster is part of the fleet, reached through its client (again: reconnect).
    pub fn engage(&self, cluster: Cluster) {
        self.report(cluster.name().to_owned(), Some(cluster));
    }

    /// The cluster `name` left the fleet: the replica that engaged it stops its work and
    /// frees its caches.
    pub fn disengage(&self, name: &str) {
        self.report(name.to_owned(), None);
    }

    fn report(&self, name: String, cluster: Option<Cluster>) {
        self.shared.pending.lock().insert(name, cluster);
        self.shared.changed.notify_one();
    }

    /// The reports since the last call, latest per name (waits for at least one).
    pub(crate) async fn changes(&self) -> BTreeMap<String, Option<Cluster>> {
        loop {
            let taken = std::mem::take(&mut *self.shared.pending.lock());
            if !taken.is_empty() {
                return taken;
            }
            self.shared.changed.notified().await;
        }
    }
}

impl fmt::Debug for ClusterSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClusterSink")
            .field("pending", &self.shared.pending.lock().len())
            .finish()
    }
}

/// A source of member clusters: a directory of kubeconfig files
/// ([`KubeconfigDir`](super::KubeconfigDir)), kubeconfig Secrets in a management cluster
/// ([`KubeconfigSecrets`](super::KubeconfigSecrets)), a fixed list
/// ([`StaticClusters`](super::StaticClusters)), or a user's own (a kcp workspace index, a
/// ClusterProfile inventory).
///
/// `run` reports every cluster it knows into the sink, then keeps reporting changes until
/// `stop` fires. It must not give up on errors it can recover from (an unreadable file, a
/// failed watch): it warns, naming the cluster or file, and tries again. A cluster that
/// cannot be reached is still reported: reaching it is the engaged work's job, so one
/// unreachable cluster never holds up the others.
pub trait ClusterProvider: Send + 'static {
    /// Reports clusters into `sink` until `stop` fires.
    fn run(self, sink: ClusterSink, stop: CancellationToken) -> impl Future<Output = ()> + Send;
}
