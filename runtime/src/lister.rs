//! Listers: typed, read-only views of an informer's cache (client-go's generated
//! `listers/<group>/<version>/<type>.go` over `cache.Indexer`).
//!
//! Results are `Arc<K>` shared with the cache, so client-go's rule "objects returned by a
//! lister must not be mutated" holds by type. A label-selector list is served by the store's
//! label index: its cost grows with the candidate objects, not with the cache (client-go's
//! `ListAllByNamespace` scans).

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::consistency::WaitError;
use crate::store::{NAMESPACE_INDEX, Store, StoreError};
use kinform_core::resource::HasMetadata;
use kinform_core::selector::LabelSelector;

/// Reads objects of type `K` from a cache.
///
/// Usually from [`InformerFactory::lister`](crate::informer::InformerFactory::lister):
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use std::time::Duration;
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use kinform_core::LabelSelector;
/// use kinform_runtime::informer::InformerFactory;
/// use kinform_testserver::TestApiServer;
///
/// let server = TestApiServer::start().await?;
/// server.create_namespace("prod")?;
/// for (ns, name, app) in [("default", "a", "web"), ("prod", "b", "web"), ("prod", "c", "db")] {
///     server.create_object(serde_json::json!({
///         "apiVersion": "v1", "kind": "ConfigMap",
///         "metadata": {"name": name, "namespace": ns, "labels": {"app": app}}
///     }))?;
/// }
/// let factory = InformerFactory::new(server.client()?);
/// let configmaps = factory.lister::<ConfigMap>();
/// factory.start();
/// factory.wait_for_cache_sync(Duration::from_secs(30)).await?;
///
/// assert!(configmaps.get("prod", "b").is_some());
/// assert_eq!(configmaps.get_by_key("default/a").unwrap().metadata.name.as_deref(), Some("a"));
/// assert_eq!(configmaps.list(&LabelSelector::parse("app=web")?).len(), 2);
/// assert_eq!(configmaps.namespaced("prod").list_all().len(), 2);
/// factory.shutdown().await;
/// # Ok(()) }
/// ```
pub struct Lister<K> {
    store: Store<K>,
}

impl<K> Clone for Lister<K> {
    fn clone(&self) -> Self {
        Self {
            store: self.store.clone(),
        }
    }
}

impl<K: HasMetadata> fmt::Debug for Lister<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Lister")
            .field("store", &self.store)
            .finish()
    }
}

impl<K: HasMetadata> Lister<K> {
    /// A lister over `store`.
    pub fn new(store: Store<K>) -> Self {
        Self { store }
    }

    /// The object `name` in `namespace` (`""` for cluster-scoped objects).
    pub fn get(&self, namespace: &str, name: &str) -> Option<Arc<K>> {
        self.store.get_by_name(Some(namespace), name)
    }

    /// The object under a cache key (`namespace/name` or `name`).
    pub fn get_by_key(&self, key: &str) -> Option<Arc<K>> {
        self.store.get(key)
    }

    /// The objects of all namespaces whose labels match `selector`.
    pub fn list(&self, selector: &LabelSelector) -> Vec<Arc<K>> {
        self.store.list_by_labels(None, selector)
    }

    /// Every cached object.
    pub fn list_all(&self) -> Vec<Arc<K>> {
        self.store.list()
    }

    /// A lister of one namespace.
    pub fn namespaced(&self, namespace: &str) -> NamespaceLister<K> {
        NamespaceLister {
            store: self.store.clone(),
            namespace: namespace.to_owned(),
        }
    }

    /// The objects indexed under `value` in the index `index` (client-go's `ByIndex`).
    pub fn by_index(&self, index: &str, value: &str) -> Result<Vec<Arc<K>>, StoreError> {
        self.store.by_index(index, value)
    }

    /// The underlying cache.
    pub fn store(&self) -> &Store<K> {
        &self.store
    }

    /// Waits until the cache holds every change up to `resource_version`, at most
    /// `timeout`: read-your-own-writes outside a controller. Pass the resourceVersion a
    /// write answered with; once this returns `Ok`, the lister returns that write (or
    /// something newer). An incomparable version (not an integer, KEP-5504) returns `Ok` at
    /// once: fail open, counted in [`Watermark::incomparable`](crate::consistency::Watermark::incomparable).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use std::time::Duration;
    /// use k8s_openapi::api::core::v1::ConfigMap;
    /// use kinform_client::{Api, PostParams};
    /// use kinform_core::resource::HasMetadata;
    /// use kinform_runtime::informer::InformerFactory;
    /// use kinform_testserver::TestApiServer;
    ///
    /// let server = TestApiServer::start().await?;
    /// let factory = InformerFactory::builder(server.client()?).test_backoff().build();
    /// let lister = factory.lister::<ConfigMap>();
    /// factory.start();
    /// factory.wait_for_cache_sync(Duration::from_secs(10)).await?;
    /// // Watch events arrive late (up to 300 ms each).
    /// server.faults().set_watch_delay(Duration::from_millis(100), Duration::from_millis(300));
    ///
    /// let api = Api::<ConfigMap>::namespaced(server.client()?, "default");
    /// let mut cm = ConfigMap::default();
    /// cm.metadata.name = Some("written".into());
    /// let created = api.create(&PostParams::default(), &cm).await?;
    /// lister
    ///     .wait_for_resource_version(created.resource_version(), Duration::from_secs(5))
    ///     .await?;
    /// assert!(lister.get("default", "written").is_some());
    /// factory.shutdown().await;
    /// # Ok(()) }
    /// ```
    pub async fn wait_for_resource_version(
        &self,
        resource_version: &str,
        timeout: Duration,
    ) -> Result<(), WaitError> {
        self.store
            .watermark()
            .wait_for(resource_version, timeout)
            .await
    }
}

/// Reads objects of type `K` in one namespace.
pub struct NamespaceLister<K> {
    store: Store<K>,
    namespace: String,
}

impl<K> Clone for NamespaceLister<K> {
    fn clone(&self) -> Self {
        Self {
            store: self.store.clone(),
            namespace: self.namespace.clone(),
        }
    }
}

impl<K: HasMetadata> fmt::Debug for NamespaceLister<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NamespaceLister")
            .field("namespace", &self.namespace)
            .finish()
    }
}

impl<K: HasMetadata> NamespaceLister<K> {
    /// The namespace.
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// The object `name` in this namespace.
    pub fn get(&self, name: &str) -> Option<Arc<K>> {
        self.store.get_by_name(Some(&self.namespace), name)
    }

    /// The objects of this namespace whose labels match `selector`.
    pub fn list(&self, selector: &LabelSelector) -> Vec<Arc<K>> {
        self.store.list_by_labels(Some(&self.namespace), selector)
    }

    /// Every object of this namespace.
    pub fn list_all(&self) -> Vec<Arc<K>> {
        self.store
            .by_index(NAMESPACE_INDEX, &self.namespace)
            .unwrap_or_default()
    }

    /// The objects of this namespace indexed under `value` in the index `index`.
    pub fn by_index(&self, index: &str, value: &str) -> Result<Vec<Arc<K>>, StoreError> {
        let mut objs = self.store.by_index(index, value)?;
        objs.retain(|o| o.namespace().unwrap_or("") == self.namespace);
        Ok(objs)
    }
}
