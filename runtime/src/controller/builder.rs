//! [`ControllerBuilder`]: one method per concept (the watched types, the workers, the rate
//! limiter, the metrics). Related objects that are not owned go through
//! [`watches`](ControllerBuilder::watches) with a mapper; scoping (namespace, selectors)
//! belongs to the [`InformerFactory`].

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;
use std::time::Duration;

use super::election::{ElectionState, LeaderElection};
use super::filter::{Filter, all};
use super::guard::GuardConfig;
use super::metrics::{ControllerMetricsProvider, Recorder};
use super::queue::{ControllerQueue, QueueSpec};
use super::run::Controller;
use super::shard::{OwnedLabeller, ShardingConfig, Shared, owned_labeller, validate_names};
use super::watch::{EnqueueMapped, EnqueueSelf, Mapper, Registered, Watch, owner_mapper};
use crate::informer::{InformerFactory, InformerScope};
use crate::leader::ConfigError;
use crate::lister::Lister;
use crate::workqueue::{
    DEFAULT_MAX_WAIT, MetricsProvider, QueueConfig, RateLimiter, default_controller_rate_limiter,
};
use kinform_core::resource::{Resource, object_key};

/// Registers one watch; `scope` is the sharded scope for types that follow their owner's
/// shard (`None` when not sharded). Called again for each membership of a sharded replica.
type WatchFn = Arc<
    dyn Fn(
            &InformerFactory,
            &ControllerQueue,
            Option<&InformerScope>,
            &RelatedFilters,
        ) -> Box<dyn Watch>
        + Send
        + Sync,
>;

/// The [`filter_related`](ControllerBuilder::filter_related) filters: a `Filter<C>` under
/// the `TypeId` of each `C`.
#[derive(Default)]
struct RelatedFilters(HashMap<TypeId, Box<dyn Any + Send + Sync>>);

impl RelatedFilters {
    fn get<C: 'static>(&self) -> Option<Filter<C>> {
        self.0
            .get(&TypeId::of::<C>())
            .and_then(|f| f.downcast_ref::<Filter<C>>())
            .cloned()
    }

    fn add<C: 'static>(&mut self, filter: Filter<C>) {
        let filter = all(self.get::<C>(), filter);
        if let Some(filter) = filter {
            self.0.insert(TypeId::of::<C>(), Box::new(filter));
        }
    }
}

/// Registers every handler of a controller of `K` on the informers of `scope` (the sharded
/// scope, or `None`), feeding `queue`; returns the lister of `K` the workers read.
pub(crate) type Register<K> = Arc<
    dyn Fn(
            &InformerFactory,
            &ControllerQueue,
            Option<&InformerScope>,
            Option<&Arc<Shared>>,
        ) -> (Lister<K>, Vec<Box<dyn Watch>>)
        + Send
        + Sync,
>;

/// Configures a [`Controller`] of `K`; [`build`](Self::build) registers the handlers.
#[must_use]
pub struct ControllerBuilder<K> {
    factory: InformerFactory,
    name: String,
    workers: usize,
    limiter: Option<Box<dyn RateLimiter<String>>>,
    metrics: Option<Arc<dyn ControllerMetricsProvider>>,
    watches: Vec<WatchFn>,
    sharding: Option<ShardingConfig>,
    priority: Option<Option<Duration>>,
    owned: Vec<Arc<dyn OwnedLabeller>>,
    reconcile_timeout: Option<Duration>,
    filter: Option<Filter<K>>,
    related_filters: RelatedFilters,
    guard: GuardConfig,
    election: Option<LeaderElection>,
    warm_standby: bool,
    _kind: PhantomData<fn() -> K>,
}

impl<K> fmt::Debug for ControllerBuilder<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ControllerBuilder")
            .field("name", &self.name)
            .field("workers", &self.workers)
            .field("watches", &self.watches.len())
            .finish_non_exhaustive()
    }
}

impl<K: Resource> ControllerBuilder<K> {
    pub(crate) fn new(factory: &InformerFactory) -> Self {
        Self {
            factory: factory.clone(),
            name: K::PLURAL.to_owned(),
            workers: 2,
            limiter: None,
            metrics: None,
            watches: Vec::new(),
            sharding: None,
            priority: Some(Some(DEFAULT_MAX_WAIT)),
            owned: Vec::new(),
            reconcile_timeout: None,
            filter: None,
            related_filters: RelatedFilters::default(),
            guard: GuardConfig::default(),
            election: None,
            warm_standby: false,
            _kind: PhantomData,
        }
    }

    /// The controller's name: it names its workqueue (the `name` label of the workqueue
    /// metrics) and its reconcile metrics (default: the plural of `K`, e.g. `foos`).
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// How many keys are reconciled concurrently (default 2, as sample-controller; at least
    /// 1). A key is never reconciled by two workers at once.
    pub fn workers(mut self, workers: usize) -> Self {
        self.workers = workers.max(1);
        self
    }

    /// How failed keys are retried (default:
    /// [`default_controller_rate_limiter`], 5 ms doubling up to 1000 s per key, under an
    /// overall 10 qps / 100 burst bucket).
    pub fn rate_limiter(mut self, limiter: impl RateLimiter<String> + 'static) -> Self {
        self.limiter = Some(Box::new(limiter));
        self
    }

    /// Whether the workqueue is the [`PriorityQueue`](crate::workqueue::PriorityQueue)
    /// (default: on; `false` gives client-go's plain rate-limiting queue). With it, keys of
    /// the initial list and of resyncs are queued at
    /// [`Priority::LOW`](crate::workqueue::Priority::LOW) and every other watch event at
    /// `NORMAL`, so changes are reconciled ahead of a startup or resync backlog; a key never
    /// waits behind younger keys for longer than [`DEFAULT_MAX_WAIT`] (see
    /// [`priority_queue_max_wait`](Self::priority_queue_max_wait)). Errors requeue at the
    /// priority the key was handed out at, and a reconcile may pick the priority of its
    /// requeue ([`Action::with_priority`](super::Action::with_priority)). The rules:
    /// [`ControllerQueue`].
    pub fn priority_queue(mut self, enabled: bool) -> Self {
        self.priority = enabled.then_some(Some(DEFAULT_MAX_WAIT));
        self
    }

    /// Uses the priority queue with `max_wait` as its aging bound (`None`: strict
    /// priorities, which can starve the listed keys under a steady stream of events).
    pub fn priority_queue_max_wait(mut self, max_wait: Option<Duration>) -> Self {
        self.priority = Some(max_wait);
        self
    }

    /// Queues the key of an update of `K` only when `filter` passes it (adds and deletes
    /// always queue); called again, every filter must pass. E.g.
    /// [`Filter::generation_changed`] to reconcile spec changes and not the controller's own
    /// status writes. See [`Filter`].
    pub fn filter(mut self, filter: Filter<K>) -> Self {
        self.filter = all(self.filter.take(), filter);
        self
    }

    /// As [`filter`](Self::filter), for the update events of `C`, a type given to
    /// [`owns`](Self::owns) or [`watches`](Self::watches) (before or after this call).
    pub fn filter_related<C: Resource>(mut self, filter: Filter<C>) -> Self {
        self.related_filters.add(filter);
        self
    }

    /// Cancels a reconcile that runs longer than `timeout` (default: none): its future is
    /// dropped at its next `.await`, a warning is logged, it counts as an error
    /// (`ReconcileStats::timeouts`, `kinform_reconcile_timeouts_total`, `result="error"`)
    /// and the key is retried with its backoff. Cancellation is cooperative, as any future's:
    /// a reconcile that blocks its thread without awaiting is not interrupted, and tasks it
    /// spawned keep running. controller-runtime's `ReconciliationTimeout` cancels the
    /// reconcile's context the same way.
    pub fn reconcile_timeout(mut self, timeout: Duration) -> Self {
        self.reconcile_timeout = Some(timeout);
        self
    }

    /// Whether the consistency guard holds a key's next reconcile back until the caches have
    /// seen the writes its last reconcile made through
    /// [`Request::client`](super::Request::client) (default: on). Off, the client writes
    /// without remembering anything. See [the module docs](super), "Consistency".
    pub fn consistency_guard(mut self, enabled: bool) -> Self {
        self.guard.enabled = enabled;
        self
    }

    /// How long a key waits at most for the caches to catch up with its writes (default
    /// [`DEFAULT_CONSISTENCY_TIMEOUT`](super::DEFAULT_CONSISTENCY_TIMEOUT), 10 s): after it,
    /// the key is reconciled anyway, with a warning and
    /// `kinform_consistency_timeouts_total` counting it.
    pub fn consistency_timeout(mut self, timeout: Duration) -> Self {
        self.guard.timeout = timeout;
        self
    }

    /// Where the reconcile and workqueue metrics go (default: only the queue's process-wide
    /// default provider, see
    /// [`set_default_metrics_provider`](crate::workqueue::set_default_metrics_provider)).
    pub fn metrics(mut self, provider: Arc<dyn ControllerMetricsProvider>) -> Self {
        self.metrics = Some(provider);
        self
    }

    /// Reconciles the owner of every `C` whose controller reference (`ownerReferences` entry
    /// with `controller: true`) names a `K` (sample-controller's `handleObject`): a change to
    /// an owned Deployment reconciles its Foo. Resyncs of `C` are not forwarded.
    ///
    /// In a [sharded](Self::sharded) controller the owned objects follow their owner's shard:
    /// the sharder labels them with it and this replica watches only those of its shard.
    pub fn owns<C: Resource>(mut self) -> Self {
        self.owned.push(owned_labeller::<K, C>());
        self.watch_with::<C>(owner_mapper::<K, C>(), true, true)
    }

    /// Runs this controller as one replica of several that share the objects of `K` (see
    /// [`shard`](super::shard)): by default it keeps a member Lease, competes to be the
    /// sharder, and caches and reconciles only the objects labelled for it (the config's
    /// [`role`](ShardingConfig::role) can keep it to one of the two). Fails if the timing or
    /// identity is invalid (as [`ShardingConfig::validate`]), if the controller's
    /// [`name`](Self::name) cannot name the shard labels and Leases
    /// ([`ConfigError::InvalidControllerName`], the rules of
    /// [`validate_controller_name`](super::shard::validate_controller_name)), or if a
    /// member's identity cannot end its Lease name. Set the name before.
    pub fn sharded(mut self, config: ShardingConfig) -> Result<Self, ConfigError> {
        if self.election.is_some() {
            return Err(ConfigError::ShardedAndLeaderElected);
        }
        config.validate()?;
        validate_names(&self.name, &config)?;
        self.sharding = Some(config);
        Ok(self)
    }

    /// Runs this controller under leader election (see [`election`](super::election)): the
    /// replicas compete for the Lease `election` names and only the holder reconciles; a
    /// replica that loses the Lease stops reconciling at once and stands by, competing
    /// again, instead of ending its run. Its informers start when it first wins, unless
    /// [`warm_standby`](Self::warm_standby). Fails if the timing is invalid (as
    /// [`LeaderElectionConfig::validate`](crate::leader::LeaderElectionConfig::validate)),
    /// the identity or Lease name is empty, or the controller is already
    /// [sharded](Self::sharded) ([`ConfigError::ShardedAndLeaderElected`]).
    pub fn leader_election(mut self, election: LeaderElection) -> Result<Self, ConfigError> {
        if self.sharding.is_some() {
            return Err(ConfigError::ShardedAndLeaderElected);
        }
        election.validate()?;
        self.election = Some(election);
        Ok(self)
    }

    /// Whether a [leader-elected](Self::leader_election) replica keeps warm caches while it
    /// stands by (default: off, a cold standby). A warm standby starts the factory's
    /// informers and syncs them before it holds the Lease, and its handlers queue every key
    /// meanwhile, so it reconciles the moment it wins (controller-runtime's `EnableWarmup`);
    /// the price is a standby's memory and its own list and watch traffic on the API server.
    /// A cold standby starts them after winning and reconciles once they have synced. No
    /// effect without leader election.
    pub fn warm_standby(mut self, warm: bool) -> Self {
        self.warm_standby = warm;
        self
    }

    /// Reconciles the keys of `K` that `mapper` returns for every change of a `C` (for an
    /// update, those of the old and of the new state; for a delete, those of the last known
    /// state). Use [`object_key`](kinform_core::resource::object_key) to build keys.
    pub fn watches<C: Resource, I>(self, mapper: impl Fn(&C) -> I + Send + Sync + 'static) -> Self
    where
        I: IntoIterator<Item = String>,
    {
        let mapper: Mapper<C> = Arc::new(move |c: &C| mapper(c).into_iter().collect());
        self.watch_with::<C>(mapper, false, false)
    }

    fn watch_with<C: Resource>(
        mut self,
        mapper: Mapper<C>,
        skip_resync: bool,
        follows_owner: bool,
    ) -> Self {
        self.watches
            .push(Arc::new(move |factory, queue, sharded, filters| {
                let informer = match sharded {
                    Some(scope) if follows_owner => factory.informer_in::<C>(scope.clone()),
                    _ => factory.informer::<C>(),
                };
                let registration = informer.add_event_handler(EnqueueMapped {
                    queue: queue.clone(),
                    mapper: mapper.clone(),
                    skip_resync,
                    filter: filters.get::<C>(),
                });
                Box::new(Registered {
                    what: C::api_resource().to_string(),
                    registration,
                })
            }));
        self
    }

    /// Creates the workqueue and registers the handlers on the factory's informers (creating
    /// them if needed). Nothing runs until [`Controller::run`].
    ///
    /// # Panics
    ///
    /// Outside a Tokio runtime (the delaying queue spawns its timer task); and when the
    /// controller is [sharded](Self::sharded) and its name, changed after `sharded`, cannot
    /// name the shard labels and Leases (the error `sharded` returns for such a name).
    pub fn build(self) -> Controller<K> {
        if let Some(config) = &self.sharding
            && let Err(error) = validate_names(&self.name, config)
        {
            panic!("ControllerBuilder::name after sharded: {error}");
        }
        let mut config = QueueConfig::named(self.name.clone());
        if let Some(p) = &self.metrics {
            let queue_metrics: Arc<dyn MetricsProvider> = p.clone();
            config = config.with_metrics_provider(queue_metrics);
        }
        let limiter: Arc<dyn RateLimiter<String>> = match self.limiter {
            Some(limiter) => Arc::from(limiter),
            None => Arc::new(default_controller_rate_limiter()),
        };
        let spec = QueueSpec {
            config,
            limiter,
            priority: self.priority,
        };
        let queue = spec.build();
        let factory_scope = self.factory.scope();
        let shared = self.sharding.map(|config| {
            Arc::new(Shared::new(
                self.name.clone(),
                config,
                self.factory.client().clone(),
                factory_scope.clone(),
                self.factory.reflector_tweak(),
                self.metrics.clone(),
            ))
        });
        let sharded_scope = shared.as_ref().map(|shared| shared.scope());
        let watch_fns = self.watches;
        let (filter, related_filters) = (self.filter, self.related_filters);
        let register: Register<K> = Arc::new(move |factory, queue, scope, shared| {
            let primary = match scope {
                Some(scope) => factory.informer_in::<K>(scope.clone()),
                None => factory.informer::<K>(),
            };
            let mut watches: Vec<Box<dyn Watch>> = vec![Box::new(Registered {
                what: K::api_resource().to_string(),
                registration: primary.add_event_handler(EnqueueSelf {
                    queue: queue.clone(),
                    shard: shared.cloned(),
                    filter: filter.clone(),
                }),
            })];
            for watch in &watch_fns {
                watches.push(watch(factory, queue, scope, &related_filters));
            }
            (primary.lister(), watches)
        });
        let (lister, watches) = register(
            &self.factory,
            &queue,
            sharded_scope.as_ref(),
            shared.as_ref(),
        );
        let recorder = Recorder::new(&self.name, self.metrics.as_deref());
        let election = self.election.map(|config| super::run::Election {
            state: Arc::new(ElectionState::new(config, self.warm_standby)),
            register: register.clone(),
            queue: spec.clone(),
        });
        let sharding = shared.map(|shared| super::run::Sharding {
            shared,
            scope: factory_scope,
            owned: self.owned,
            register,
            queue: spec,
        });
        Controller::assemble(
            self.name,
            self.workers,
            self.factory,
            queue,
            lister,
            watches,
            recorder,
            sharding,
            self.reconcile_timeout,
            self.guard,
            election,
        )
    }
}

/// The key of a `K` named `name` in `namespace` (a convenience for
/// [`watches`](ControllerBuilder::watches) mappers).
pub fn key_of<K: Resource>(namespace: Option<&str>, name: &str) -> String {
    match K::SCOPE {
        kinform_core::resource::Scope::Namespaced => object_key(namespace, name),
        kinform_core::resource::Scope::Cluster => object_key(None, name),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;
    use kinform_client::{Client, Config};

    fn factory() -> InformerFactory {
        let config = Config::new("http://127.0.0.1:9".parse().expect("a URL"));
        InformerFactory::new(Client::new(config).expect("a client"))
    }

    #[tokio::test]
    async fn sharded_rejects_a_name_that_cannot_name_the_shard_labels() {
        let factory = factory();
        let sharded = |name: &str| {
            ControllerBuilder::<ConfigMap>::new(&factory)
                .name(name)
                .sharded(ShardingConfig::new("ns", "r0"))
        };
        assert!(sharded("configmaps-controller").is_ok());
        for bad in ["example.com/ctl", "Ctl", ""] {
            match sharded(bad) {
                Err(ConfigError::InvalidControllerName { name, .. }) => assert_eq!(name, bad),
                other => panic!("{bad:?}: {other:?}"),
            }
        }
    }

    #[tokio::test]
    async fn leader_election_is_validated_and_excludes_sharding() {
        use crate::controller::LeaderElection;
        use crate::leader::LeaderElectionConfig;
        let factory = factory();
        let bad_timing = LeaderElection::new("ns", "lease", "r0").timing(
            LeaderElectionConfig::default().with_durations(
                Duration::from_secs(1),
                Duration::from_secs(2),
                Duration::from_millis(100),
            ),
        );
        assert!(matches!(
            ControllerBuilder::<ConfigMap>::new(&factory).leader_election(bad_timing),
            Err(ConfigError::LeaseNotAboveDeadline { .. })
        ));
        assert!(matches!(
            ControllerBuilder::<ConfigMap>::new(&factory)
                .leader_election(LeaderElection::new("ns", "lease", "")),
            Err(ConfigError::EmptyIdentity)
        ));
        assert!(matches!(
            ControllerBuilder::<ConfigMap>::new(&factory)
                .leader_election(LeaderElection::new("ns", "", "r0")),
            Err(ConfigError::EmptyLeaseName)
        ));
        let elected = ControllerBuilder::<ConfigMap>::new(&factory)
            .leader_election(LeaderElection::new("ns", "lease", "r0"))
            .expect("a valid election");
        assert!(matches!(
            elected.sharded(ShardingConfig::new("ns", "r0")),
            Err(ConfigError::ShardedAndLeaderElected)
        ));
        let sharded = ControllerBuilder::<ConfigMap>::new(&factory)
            .sharded(ShardingConfig::new("ns", "r0"))
            .expect("a valid sharding");
        assert!(matches!(
            sharded.leader_election(LeaderElection::new("ns", "lease", "r0")),
            Err(ConfigError::ShardedAndLeaderElected)
        ));
        let controller = ControllerBuilder::<ConfigMap>::new(&factory)
            .leader_election(LeaderElection::new("ns", "lease", "r0"))
            .expect("a valid election")
            .warm_standby(true)
            .build();
        let election = controller.status().snapshot().election.expect("elected");
        assert!(election.warm_standby && !election.leading);
        assert_eq!(
            controller.status().snapshot().phase,
            crate::controller::ControllerPhase::Idle
        );
    }

    #[tokio::test]
    #[should_panic(expected = "cannot name a sharded controller")]
    async fn a_name_changed_after_sharded_is_checked_at_build() {
        let factory = factory();
        let _ = ControllerBuilder::<ConfigMap>::new(&factory)
            .sharded(ShardingConfig::new("ns", "r0"))
            .expect("the default name is the plural")
            .name("a/b")
            .build();
    }
}
