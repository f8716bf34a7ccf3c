//! `InformerFactory`: one shared informer per (type, namespace, label selector, field
//! selector) for a whole process (client-go's `informers.SharedInformerFactory`, its dynamic
//! variant `dynamicinformer`, and `metadatainformer`).

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use futures_util::future::{BoxFuture, join_all};
use parking_lot::Mutex;

use super::shared::{CacheView, SharedIndexInformer};
use super::snapshot::{InformerSnapshot, short_type_name};
use crate::lister::Lister;
use crate::reflector::ListerWatcher;
use crate::reflector::{ListMode, ReflectorConfig};
use kinform_client::{Api, Client, DynamicObject, PartialObjectMetadata};
use kinform_core::resource::{ApiResource, HasMetadata, Resource};
use kinform_core::{Lean, ShardSelector};
use serde::de::DeserializeOwned;

/// The factory's default transform: drops `metadata.managedFields`, which controllers
/// rarely read and which is often the largest part of an object (kube-controller-manager
/// does the same).
pub fn drop_managed_fields<K: HasMetadata>(obj: &mut K) {
    obj.metadata_mut().managed_fields = None;
}

/// Which objects of a type an informer caches: a namespace (all when `None`) and selectors.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
#[must_use]
pub struct InformerScope {
    /// The namespace, or all namespaces.
    pub namespace: Option<String>,
    /// A label selector.
    pub label_selector: Option<String>,
    /// A field selector.
    pub field_selector: Option<String>,
    /// A shard selector (KEP-5866): only the objects whose `metadata.uid` or
    /// `metadata.namespace` hashes into its ranges, sent by a server that honours it and
    /// filtered by the reflector otherwise (see [`ReflectorConfig::shard_selector`]).
    pub shard_selector: Option<ShardSelector>,
}

impl InformerScope {
    /// Every object.
    pub fn all() -> Self {
        Self::default()
    }
    /// Only objects in `namespace`.
    pub fn namespace(mut self, namespace: impl Into<String>) -> Self {
        self.namespace = Some(namespace.into());
        self
    }
    /// Only objects matching this label selector.
    pub fn labels(mut self, selector: impl Into<String>) -> Self {
        self.label_selector = Some(selector.into());
        self
    }
    /// Only objects matching this field selector.
    pub fn fields(mut self, selector: impl Into<String>) -> Self {
        self.field_selector = Some(selector.into());
        self
    }
    /// Only the objects of this shard (see [`InformerScope::shard_selector`]).
    pub fn shard(mut self, selector: ShardSelector) -> Self {
        self.shard_selector = Some(selector);
        self
    }
}

/// Informers that did not sync in time.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("caches not synced after {timeout:?}: {}", unsynced.join(", "))]
pub struct CacheSyncError {
    /// How long was waited.
    pub timeout: Duration,
    /// The names of the informers not synced (`group/version/plural`, with the namespace).
    pub unsynced: Vec<String>,
}

pub(crate) type Tweak = Arc<dyn Fn(&mut ReflectorConfig) + Send + Sync>;

/// Options of an [`InformerFactory`].
#[must_use]
pub struct InformerFactoryBuilder {
    client: Client,
    scope: InformerScope,
    default_resync: Option<Duration>,
    keep_managed_fields: bool,
    tweak: Option<Tweak>,
}

impl fmt::Debug for InformerFactoryBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InformerFactoryBuilder")
            .field("scope", &self.scope)
            .field("default_resync", &self.default_resync)
            .field("keep_managed_fields", &self.keep_managed_fields)
            .finish_non_exhaustive()
    }
}

impl InformerFactoryBuilder {
    /// Informers only of `namespace` (client-go's `WithNamespace`).
    pub fn namespace(mut self, namespace: impl Into<String>) -> Self {
        self.scope.namespace = Some(namespace.into());
        self
    }
    /// Informers only of objects matching this label selector (`WithTweakListOptions`).
    pub fn label_selector(mut self, selector: impl Into<String>) -> Self {
        self.scope.label_selector = Some(selector.into());
        self
    }
    /// Informers only of objects matching this field selector (`WithTweakListOptions`).
    pub fn field_selector(mut self, selector: impl Into<String>) -> Self {
        self.scope.field_selector = Some(selector.into());
        self
    }
    /// Informers only of the objects of this shard (`shardSelector`, KEP-5866; see
    /// [`InformerScope::shard_selector`]).
    pub fn shard_selector(mut self, selector: ShardSelector) -> Self {
        self.scope.shard_selector = Some(selector);
        self
    }
    /// The resync period of handlers added without one (client-go's `defaultResync`).
    pub fn default_resync(mut self, period: Duration) -> Self {
        self.default_resync = Some(period);
        self
    }
    /// Keeps `metadata.managedFields` in the caches (dropped by default).
    pub fn keep_managed_fields(mut self) -> Self {
        self.keep_managed_fields = true;
        self
    }
    /// How the reflectors list (streaming with fallback by default).
    pub fn list_mode(self, mode: ListMode) -> Self {
        self.tweak_reflector(move |c| c.list_mode = mode)
    }
    /// Test-sized reflector backoffs for tests against a `TestApiServer`
    /// ([`ReflectorConfig::test_backoff`]: 20 ms to 300 ms instead of client-go's 800 ms to
    /// 30 s). client-go's rules stay, among them the one that makes tests slow: a watch that
    /// ends in under a second without events counts as an error, so a test whose server
    /// drops watches (`server.faults().drop_watches()`) would otherwise wait seconds, up to
    /// 30 s, for its informers to watch again. Never for a real cluster.
    ///
    /// Opt-in, by decision: a factory cannot tell a test from production, and client-go's
    /// backoff is the one that protects an API server in trouble from every replica's
    /// reflectors at once, so the library default stays client-go's. Tests choose it
    /// where they build their factories: kinform's own test support builds every factory
    /// with it (`kinform_tests::informer::factory_builder`); build yours the same way, as
    /// below. The informers a [sharded](crate::controller::ControllerBuilder::sharded)
    /// controller's sharder runs take the factory's reflector options too.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use std::time::Duration;
    /// use k8s_openapi::api::core::v1::ConfigMap;
    /// use kinform_runtime::informer::InformerFactory;
    /// use kinform_testserver::TestApiServer;
    ///
    /// let server = TestApiServer::start().await?;
    /// let factory = InformerFactory::builder(server.client()?).test_backoff().build();
    /// let lister = factory.lister::<ConfigMap>();
    /// factory.start();
    /// factory.wait_for_cache_sync(Duration::from_secs(10)).await?;
    /// // An API server restarting over and over: each drop ends a watch opened moments ago,
    /// // a short watch, which backs off before the next one.
    /// for _ in 0..40 {
    ///     server.faults().drop_watches();
    ///     tokio::time::sleep(Duration::from_millis(50)).await;
    /// }
    /// server.create_object(serde_json::json!({
    ///     "apiVersion": "v1", "kind": "ConfigMap",
    ///     "metadata": {"name": "late", "namespace": "default"}
    /// }))?;
    /// // Seen with the next watch, at most 300 ms away; after client-go's backoff (800 ms,
    /// // 1.6 s, 3.2 s, ... after each short watch) it could be seconds.
    /// tokio::time::timeout(Duration::from_millis(1500), async {
    ///     while lister.get("default", "late").is_none() {
    ///         tokio::time::sleep(Duration::from_millis(10)).await;
    ///     }
    /// })
    /// .await?;
    /// factory.shutdown().await;
    /// # Ok(()) }
    /// ```
    pub fn test_backoff(self) -> Self {
        self.tweak_reflector(|c| *c = std::mem::take(c).test_backoff())
    }
    /// Changes every informer's reflector options (page size, backoff, ...).
    pub fn tweak_reflector(
        mut self,
        tweak: impl Fn(&mut ReflectorConfig) + Send + Sync + 'static,
    ) -> Self {
        let previous = self.tweak.take();
        self.tweak = Some(Arc::new(move |c| {
            if let Some(p) = &previous {
                p(c);
            }
            tweak(c);
        }));
        self
    }
    /// The factory.
    pub fn build(self) -> InformerFactory {
        InformerFactory {
            inner: Arc::new(FactoryInner {
                options: self,
                informers: Mutex::new(HashMap::new()),
            }),
        }
    }
}

/// What the factory needs from an informer whatever its type.
trait Control: CacheView {
    fn start(&self);
    fn name(&self) -> String;
    fn has_synced(&self) -> bool;
    fn wait_for_sync(&self) -> BoxFuture<'static, ()>;
    fn shutdown(&self) -> BoxFuture<'static, ()>;
    /// The informer now (`started`, `resource`, `scope` are the factory's to fill in).
    fn snapshot(&self, key: &Key, started: bool) -> InformerSnapshot;
}

impl<K: HasMetadata> Control for SharedIndexInformer<K> {
    fn start(&self) {
        SharedIndexInformer::start(self);
    }
    fn name(&self) -> String {
        SharedIndexInformer::name(self).to_owned()
    }
    fn has_synced(&self) -> bool {
        SharedIndexInformer::has_synced(self)
    }
    fn wait_for_sync(&self) -> BoxFuture<'static, ()> {
        let me = self.clone();
        Box::pin(async move { me.wait_for_sync().await })
    }
    fn shutdown(&self) -> BoxFuture<'static, ()> {
        let me = self.clone();
        Box::pin(async move { me.shutdown().await })
    }
    fn snapshot(&self, key: &Key, started: bool) -> InformerSnapshot {
        InformerSnapshot {
            name: SharedIndexInformer::name(self).to_owned(),
            resource: key.resource.clone(),
            cache_type: short_type_name(std::any::type_name::<K>()),
            scope: key.scope.clone(),
            started,
            running: self.is_running(),
            synced: SharedIndexInformer::has_synced(self),
            objects: self.store().len(),
            pending_notifications: self.pending_notifications(),
            reflector: self.metrics(),
        }
    }
}

#[derive(Clone, PartialEq, Eq, Hash)]
struct Key {
    object: TypeId,
    resource: ApiResource,
    scope: InformerScope,
}

struct Entry {
    informer: Arc<dyn Any + Send + Sync>,
    control: Arc<dyn Control>,
    started: AtomicBool,
}

struct FactoryInner {
    options: InformerFactoryBuilder,
    informers: Mutex<HashMap<Key, Arc<Entry>>>,
}

/// Shares one informer per (type, namespace, label selector, field selector). Cheap to clone.
///
/// Against the in-process `TestApiServer` here; with a cluster the client comes from
/// `Client::try_default()`:
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use std::sync::Arc;
/// use std::time::Duration;
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use kinform_runtime::informer::{EventHandlerFns, InformerFactory};
/// use kinform_testserver::TestApiServer;
/// use tokio::sync::mpsc;
///
/// let server = TestApiServer::start().await?;
/// let factory = InformerFactory::new(server.client()?);
/// let (added, mut seen) = mpsc::unbounded_channel();
/// factory.informer::<ConfigMap>().add_event_handler(EventHandlerFns::new().on_add(
///     move |cm: &Arc<ConfigMap>, _in_initial_list| {
///         let _ = added.send(cm.metadata.name.clone());
///     },
/// ));
/// factory.start();
/// factory.wait_for_cache_sync(Duration::from_secs(30)).await?;
///
/// server.create_object(serde_json::json!({
///     "apiVersion": "v1", "kind": "ConfigMap",
///     "metadata": {"name": "settings", "namespace": "default"}
/// }))?;
/// let name = tokio::time::timeout(Duration::from_secs(10), seen.recv()).await?;
/// assert_eq!(name.flatten().as_deref(), Some("settings"));
/// // The same informer (one list-and-watch) serves every lister of the type.
/// assert_eq!(factory.lister::<ConfigMap>().list_all().len(), 1);
/// factory.shutdown().await;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct InformerFactory {
    inner: Arc<FactoryInner>,
}

impl fmt::Debug for InformerFactory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InformerFactory")
            .field("options", &self.inner.options)
            .field("informers", &self.inner.informers.lock().len())
            .finish()
    }
}

impl InformerFactory {
    /// A factory with default options: all namespaces, no resync, managedFields dropped.
    pub fn new(client: Client) -> Self {
        Self::builder(client).build()
    }

    /// A factory with options.
    pub fn builder(client: Client) -> InformerFactoryBuilder {
        InformerFactoryBuilder {
            client,
            scope: InformerScope::default(),
            default_resync: None,
            keep_managed_fields: false,
            tweak: None,
        }
    }

    /// The client the informers use.
    pub fn client(&self) -> &Client {
        &self.inner.options.client
    }

    /// The factory's changes of every reflector's options
    /// ([`InformerFactoryBuilder::tweak_reflector`], [`InformerFactoryBuilder::test_backoff`]).
    pub(crate) fn reflector_tweak(&self) -> Option<Tweak> {
        self.inner.options.tweak.clone()
    }

    /// The factory's namespace and selectors (those of [`informer`](Self::informer)).
    pub fn scope(&self) -> InformerScope {
        self.inner.options.scope.clone()
    }

    /// The shared informer of `K` in the factory's namespace and selectors.
    pub fn informer<K: Resource>(&self) -> Arc<SharedIndexInformer<K>> {
        self.informer_in::<K>(self.inner.options.scope.clone())
    }

    /// The shared informer of `K` for another scope.
    pub fn informer_in<K: Resource>(&self, scope: InformerScope) -> Arc<SharedIndexInformer<K>> {
        let client = self.client().clone();
        self.get_or_create(K::api_resource(), scope, move |ns| match ns {
            Some(ns) => Api::<K>::namespaced(client, ns),
            None => Api::<K>::all(client),
        })
    }

    /// A lister over the cache of [`informer::<K>()`](Self::informer).
    pub fn lister<K: Resource>(&self) -> Lister<K> {
        self.informer::<K>().lister()
    }

    /// The shared informer of a resource known at run time, caching [`DynamicObject`]s
    /// (client-go's `dynamicinformer`).
    pub fn dynamic_informer(
        &self,
        resource: &ApiResource,
    ) -> Arc<SharedIndexInformer<DynamicObject>> {
        self.run_time_informer(resource)
    }

    /// The shared informer of `resource` caching `K`s decoded from its objects.
    fn run_time_informer<K>(&self, resource: &ApiResource) -> Arc<SharedIndexInformer<K>>
    where
        K: HasMetadata + Clone + DeserializeOwned,
    {
        let client = self.client().clone();
        let r = resource.clone();
        self.get_or_create(
            resource.clone(),
            self.inner.options.scope.clone(),
            move |ns| match ns {
                Some(ns) => Api::namespaced_with(client, ns, &r),
                None => Api::all_with(client, &r),
            },
        )
    }

    /// A lister over the cache of [`dynamic_informer`](Self::dynamic_informer).
    pub fn dynamic_lister(&self, resource: &ApiResource) -> Lister<DynamicObject> {
        self.dynamic_informer(resource).lister()
    }

    /// The shared informer of a resource known at run time, caching lean objects
    /// ([`Lean<DynamicObject>`](kinform_core::Lean): decoded metadata, the rest as JSON
    /// text, decoded on demand): the lean cache of [`dynamic_informer`](Self::dynamic_informer).
    pub fn dynamic_lean_informer(
        &self,
        resource: &ApiResource,
    ) -> Arc<SharedIndexInformer<Lean<DynamicObject>>> {
        self.run_time_informer(resource)
    }

    /// The shared informer of a resource caching only metadata
    /// ([`PartialObjectMetadata`], client-go's `metadatainformer`): the cheap way to watch
    /// many objects whose bodies a controller never reads.
    pub fn metadata_informer(
        &self,
        resource: &ApiResource,
    ) -> Arc<SharedIndexInformer<PartialObjectMetadata>> {
        let client = self.client().clone();
        let r = resource.clone();
        self.get_or_create(
            resource.clone(),
            self.inner.options.scope.clone(),
            move |ns| match ns {
                Some(ns) => Api::metadata_namespaced(client, ns, &r),
                None => Api::metadata_all(client, &r),
            },
        )
    }

    /// A lister over the cache of [`metadata_informer`](Self::metadata_informer).
    pub fn metadata_lister(&self, resource: &ApiResource) -> Lister<PartialObjectMetadata> {
        self.metadata_informer(resource).lister()
    }

    fn get_or_create<K, L>(
        &self,
        resource: ApiResource,
        scope: InformerScope,
        make_lw: impl FnOnce(Option<&str>) -> L,
    ) -> Arc<SharedIndexInformer<K>>
    where
        K: HasMetadata,
        L: ListerWatcher<K>,
    {
        let key = Key {
            object: TypeId::of::<K>(),
            resource,
            scope,
        };
        let mut informers = self.inner.informers.lock();
        if let Some(entry) = informers.get(&key)
            && let Ok(informer) = Arc::clone(&entry.informer).downcast::<SharedIndexInformer<K>>()
        {
            return informer;
        }
        let opts = &self.inner.options;
        let scope = &key.scope;
        let mut name = key.resource.to_string();
        if let Some(ns) = &scope.namespace {
            name = format!("{name} in {ns}");
        }
        let mut config = ReflectorConfig::new(name);
        if let Some(s) = &scope.label_selector {
            config = config.label_selector(s.as_str());
        }
        if let Some(s) = &scope.field_selector {
            config = config.field_selector(s.as_str());
        }
        if let Some(s) = &scope.shard_selector {
            config = config.shard_selector(s.clone());
        }
        if let Some(tweak) = &opts.tweak {
            tweak(&mut config);
        }
        let lw = make_lw(scope.namespace.as_deref());
        let informer = SharedIndexInformer::new(lw, config, opts.default_resync);
        if !opts.keep_managed_fields {
            let drop_mf: crate::reflector::Transform<K> = Arc::new(drop_managed_fields::<K>);
            // A fresh informer has not started: this cannot fail.
            let _ = informer.set_transform(Some(drop_mf));
            // The transform drops managedFields: list decoding need not read it.
            let _ = informer.configure(|c| c.skip_managed_fields = true);
        }
        let informer = Arc::new(informer);
        let control: Arc<dyn Control> = Arc::new((*informer).clone());
        informers.insert(
            key,
            Arc::new(Entry {
                informer: informer.clone(),
                control,
                started: AtomicBool::new(false),
            }),
        );
        informer
    }

    /// The caches of `resource` the factory holds, whatever their object type (typed, lean,
    /// dynamic, metadata-only), with their scopes: where a write to `resource` shows up.
    pub(crate) fn caches_of(
        &self,
        resource: &ApiResource,
    ) -> Vec<(InformerScope, Arc<dyn CacheView>)> {
        self.inner
            .informers
            .lock()
            .iter()
            .filter(|(k, _)| {
                k.resource.group == resource.group && k.resource.plural == resource.plural
            })
            .map(|(k, e)| {
                let view: Arc<dyn CacheView> = e.control.clone();
                (k.scope.clone(), view)
            })
            .collect()
    }

    fn entries(&self) -> Vec<Arc<Entry>> {
        self.inner.informers.lock().values().cloned().collect()
    }

    /// Every informer of the factory as it is now, whatever its type, sorted by name,
    /// cached type and scope: a read-only view for status pages and metrics (the admin
    /// endpoint's `/debug/state` and the informer metrics of `/metrics`). Takes each
    /// informer's locks briefly, one after the other; the snapshots of two informers are not
    /// taken at one instant.
    pub fn informers(&self) -> Vec<InformerSnapshot> {
        let entries: Vec<(Key, Arc<Entry>)> = self
            .inner
            .informers
            .lock()
            .iter()
            .map(|(k, e)| (k.clone(), e.clone()))
            .collect();
        let mut out: Vec<InformerSnapshot> = entries
            .iter()
            .map(|(k, e)| e.control.snapshot(k, e.started.load(Ordering::SeqCst)))
            .collect();
        out.sort_by(|a, b| {
            (
                &a.name,
                &a.cache_type,
                &a.scope.label_selector,
                &a.scope.field_selector,
            )
                .cmp(&(
                    &b.name,
                    &b.cache_type,
                    &b.scope.label_selector,
                    &b.scope.field_selector,
                ))
        });
        out
    }

    /// Starts every informer not started yet (client-go's `Start`): idempotent, and a later
    /// call starts the informers created since. Needs a tokio runtime.
    pub fn start(&self) {
        for entry in self.entries() {
            if !entry.started.swap(true, Ordering::SeqCst) {
                entry.control.start();
            }
        }
    }

    /// Waits until every started informer has synced, at most `timeout`; the error names the
    /// informers that did not.
    pub async fn wait_for_cache_sync(&self, timeout: Duration) -> Result<(), CacheSyncError> {
        let started: Vec<_> = self
            .entries()
            .into_iter()
            .filter(|e| e.started.load(Ordering::SeqCst))
            .collect();
        let waits = started
            .iter()
            .map(|e| tokio::time::timeout(timeout, e.control.wait_for_sync()));
        join_all(waits).await;
        let mut unsynced: Vec<String> = started
            .iter()
            .filter(|e| !e.control.has_synced())
            .map(|e| e.control.name())
            .collect();
        if unsynced.is_empty() {
            return Ok(());
        }
        unsynced.sort();
        Err(CacheSyncError { timeout, unsynced })
    }

    /// Stops and forgets every informer of `scope`, whatever its type, and waits until
    /// their tasks have ended: their caches are dropped, and a later
    /// [`informer_in`](Self::informer_in) of that scope builds a fresh informer
    /// (controller-runtime's `Cache.RemoveInformer`, by scope rather than by type). A
    /// sharded controller drops the caches of a lost membership this way.
    pub async fn shutdown_scope(&self, scope: &InformerScope) {
        let removed: Vec<Arc<Entry>> = {
            let mut informers = self.inner.informers.lock();
            let keys: Vec<Key> = informers
                .keys()
                .filter(|k| k.scope == *scope)
                .cloned()
                .collect();
            keys.iter().filter_map(|k| informers.remove(k)).collect()
        };
        join_all(removed.iter().map(|e| e.control.shutdown())).await;
    }

    /// Stops every informer and waits until all their tasks have ended (client-go's
    /// `Shutdown`).
    pub async fn shutdown(&self) {
        let entries = self.entries();
        join_all(entries.iter().map(|e| {
            e.started.store(false, Ordering::SeqCst);
            e.control.shutdown()
        }))
        .await;
    }
}
