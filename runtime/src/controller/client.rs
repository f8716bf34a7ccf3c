//! [`ReconcileClient`]: the client a reconcile writes through ([`Request::client`]), whose
//! writes the consistency guard remembers for the key being reconciled.
//!
//! [`Request::client`]: super::Request::client

use std::fmt;
use std::sync::Arc;

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::guard::{Guard, ObjectScope, WaitFor};
use kinform_client::{
    Api, Client, DeleteParams, DeleteResponse, Either, ListParams, ObjectList, Patch, PatchParams,
    PostParams, Result,
};
use kinform_core::resource::{HasMetadata, Resource, object_key};

/// The client a reconcile writes through, from [`Request::client`](super::Request::client):
/// [`namespaced`](Self::namespaced) and [`all`](Self::all) give a [`TrackedApi`], an
/// [`Api`] whose writes (create, replace, patch, server-side apply, delete, and the status
/// subresource) the controller's consistency guard remembers for the key being reconciled,
/// so that the key's next reconcile waits until the controller's caches have seen them (see
/// [the controller module](super), "Consistency").
///
/// Writes of a resource no informer of the controller's factory caches are sent and not
/// remembered (nothing would ever tell they were seen); so are writes through
/// [`inner`](Self::inner), [`TrackedApi::untracked`] and other subresources (scale,
/// eviction, ...). Without the guard ([`consistency_guard(false)`]) it is a plain client.
///
/// [`consistency_guard(false)`]: super::ControllerBuilder::consistency_guard
///
/// A controller that marks each ConfigMap once, run against the in-process `TestApiServer`
/// with late watch events: the reconcile after the patch sees the patch in its cache (no
/// second patch from a stale read).
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use std::collections::BTreeMap;
/// use std::sync::Arc;
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// use std::time::Duration;
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use kinform_client::{Patch, PatchParams};
/// use kinform_runtime::controller::{Action, Controller};
/// use kinform_runtime::informer::InformerFactory;
/// use kinform_testserver::TestApiServer;
/// use serde_json::json;
/// use tokio::sync::mpsc;
///
/// let server = TestApiServer::start().await?;
/// server.create_object(json!({
///     "apiVersion": "v1", "kind": "ConfigMap",
///     "metadata": {"name": "settings", "namespace": "default"}
/// }))?;
/// server.faults().set_watch_delay(Duration::from_millis(50), Duration::from_millis(200));
/// let factory = InformerFactory::builder(server.client()?).test_backoff().build();
/// let controller = Controller::<ConfigMap>::builder(&factory).build();
/// let (marked, mut seen) = mpsc::unbounded_channel();
/// let patches = Arc::new(AtomicUsize::new(0));
/// let counted = patches.clone();
/// let run = controller.run(
///     move |req| {
///         let (marked, patches) = (marked.clone(), counted.clone());
///         async move {
///             let cm = req.object.as_deref().expect("not deleted here");
///             if cm.data.is_none() {
///                 patches.fetch_add(1, Ordering::Relaxed);
///                 let patch = Patch::Merge(json!({"data": {"marked": "yes"}}));
///                 req.client()
///                     .namespaced::<ConfigMap>("default")
///                     .patch(req.name(), &PatchParams::default(), &patch)
///                     .await?;
///                 // Asked to run again at once: it waits until the cache holds the patch.
///                 return Ok(Action::requeue_after(Duration::ZERO));
///             }
///             let _ = marked.send(cm.data.clone());
///             Ok::<_, kinform_client::Error>(Action::done())
///         }
///     },
///     async move {
///         let data: BTreeMap<String, String> = seen.recv().await.flatten().expect("marked");
///         assert_eq!(data["marked"], "yes");
///     },
/// );
/// let stats = tokio::time::timeout(Duration::from_secs(30), run).await?;
/// assert_eq!(patches.load(Ordering::Relaxed), 1, "never patched from a stale read");
/// assert_eq!((stats.parked, stats.woken), (1, 1));
/// factory.shutdown().await;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct ReconcileClient {
    client: Client,
    tracker: Option<Tracker>,
}

/// Where a write is remembered: the guard and the key reconciled.
#[derive(Clone)]
struct Tracker {
    guard: Arc<Guard>,
    key: Arc<str>,
}

impl fmt::Debug for ReconcileClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReconcileClient")
            .field("key", &self.tracker.as_ref().map(|t| &*t.key))
            .finish_non_exhaustive()
    }
}

impl ReconcileClient {
    /// The client of a reconcile of `key` (tracking when the guard is on).
    pub(crate) fn new(guard: &Arc<Guard>, key: &str) -> Self {
        let client = guard.client().clone();
        let tracker = guard.enabled().then(|| Tracker {
            guard: Arc::clone(guard),
            key: Arc::from(key),
        });
        Self { client, tracker }
    }

    /// The objects of `C` in `namespace` (as [`Api::namespaced`]), writes remembered.
    pub fn namespaced<C: Resource>(&self, namespace: &str) -> TrackedApi<C> {
        self.track(Api::namespaced(self.client.clone(), namespace))
    }

    /// The objects of `C` in all namespaces, or of a cluster-scoped `C` (as [`Api::all`]),
    /// writes remembered. A create through it goes to the object's own namespace.
    pub fn all<C: Resource>(&self) -> TrackedApi<C> {
        self.track(Api::all(self.client.clone()))
    }

    /// Remembers the writes of an [`Api`] made otherwise (`Api::namespaced_with` for a
    /// [`DynamicObject`](kinform_client::DynamicObject), say). Writes are matched to the
    /// caches by the `Api`'s resource (group and plural).
    pub fn track<C>(&self, api: Api<C>) -> TrackedApi<C> {
        TrackedApi {
            api,
            tracker: self.tracker.clone(),
        }
    }

    /// The plain client: nothing sent through it is remembered.
    pub fn inner(&self) -> &Client {
        &self.client
    }
}

/// An [`Api`] whose writes the consistency guard remembers (from [`ReconcileClient`]). The
/// verbs are `Api`'s, with the same arguments and answers; reads go to the server, as
/// `Api`'s do (a reconcile reads its caches through listers).
pub struct TrackedApi<C> {
    api: Api<C>,
    tracker: Option<Tracker>,
}

impl<C> Clone for TrackedApi<C> {
    fn clone(&self) -> Self {
        Self {
            api: self.api.clone(),
            tracker: self.tracker.clone(),
        }
    }
}

impl<C> fmt::Debug for TrackedApi<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TrackedApi")
            .field("api", &self.api)
            .field("key", &self.tracker.as_ref().map(|t| &*t.key))
            .finish()
    }
}

impl<C> TrackedApi<C>
where
    C: HasMetadata + Clone + Serialize + DeserializeOwned,
{
    /// The `Api` itself: nothing sent through it is remembered.
    pub fn untracked(&self) -> &Api<C> {
        &self.api
    }

    /// [`Api::get`].
    pub async fn get(&self, name: &str) -> Result<C> {
        self.api.get(name).await
    }

    /// [`Api::get_opt`].
    pub async fn get_opt(&self, name: &str) -> Result<Option<C>> {
        self.api.get_opt(name).await
    }

    /// [`Api::list`].
    pub async fn list(&self, lp: &ListParams) -> Result<ObjectList<C>> {
        self.api.list(lp).await
    }

    /// [`Api::create`], remembered.
    pub async fn create(&self, pp: &PostParams, obj: &C) -> Result<C> {
        let out = self.api.create(pp, obj).await?;
        self.wrote(&out);
        Ok(out)
    }

    /// [`Api::replace`], remembered.
    pub async fn replace(&self, name: &str, pp: &PostParams, obj: &C) -> Result<C> {
        let out = self.api.replace(name, pp, obj).await?;
        self.wrote(&out);
        Ok(out)
    }

    /// [`Api::patch`] (merge, JSON, strategic merge or server-side apply), remembered.
    pub async fn patch<P: Serialize>(
        &self,
        name: &str,
        pp: &PatchParams,
        patch: &Patch<P>,
    ) -> Result<C> {
        let out = self.api.patch(name, pp, patch).await?;
        self.wrote(&out);
        Ok(out)
    }

    /// [`Api::replace_status`], remembered.
    pub async fn replace_status(&self, name: &str, pp: &PostParams, obj: &C) -> Result<C> {
        let out = self.api.replace_status(name, pp, obj).await?;
        self.wrote(&out);
        Ok(out)
    }

    /// [`Api::patch_status`], remembered.
    pub async fn patch_status<P: Serialize>(
        &self,
        name: &str,
        pp: &PatchParams,
        patch: &Patch<P>,
    ) -> Result<C> {
        let out = self.api.patch_status(name, pp, patch).await?;
        self.wrote(&out);
        Ok(out)
    }

    /// [`Api::delete`], remembered: an object only marked for deletion (finalizers, a grace
    /// period) as a write at the answer's resourceVersion; an object the delete removed as
    /// its removal (the caches no longer hold its UID, or have passed the version of the
    /// deletion when the answer names one). A removal answered with a Status without a UID
    /// is not remembered.
    pub async fn delete(&self, name: &str, dp: &DeleteParams) -> Result<DeleteResponse<C>> {
        let out = self.api.delete(name, dp).await?;
        match &out {
            Either::Left(obj) => self.deleted(obj),
            Either::Right(status) => {
                if let (Some(t), Some(uid)) = (
                    &self.tracker,
                    status.details.as_ref().and_then(|d| d.uid.as_deref()),
                ) {
                    let namespace = self.api.namespace();
                    let key = object_key(namespace, name);
                    let scope = ObjectScope {
                        namespace,
                        name,
                        labels: None,
                    };
                    let gone = WaitFor::Gone {
                        key: &key,
                        uid,
                        version: None,
                    };
                    t.guard.record(&t.key, self.api.resource(), scope, gone);
                }
            }
        }
        Ok(out)
    }

    /// [`Api::delete_collection`], remembered for each object the answer lists (as
    /// [`delete`](Self::delete)); an answer with a Status is not.
    pub async fn delete_collection(
        &self,
        dp: &DeleteParams,
        lp: &ListParams,
    ) -> Result<DeleteResponse<ObjectList<C>>> {
        let out = self.api.delete_collection(dp, lp).await?;
        if let Either::Left(list) = &out {
            for obj in &list.items {
                self.deleted(obj);
            }
        }
        Ok(out)
    }

    fn wrote(&self, obj: &C) {
        let Some(t) = &self.tracker else { return };
        t.guard.record(
            &t.key,
            self.api.resource(),
            scope_of(obj),
            WaitFor::Version(obj.resource_version()),
        );
    }

    fn deleted(&self, obj: &C) {
        if obj.deletion_timestamp().is_some() {
            return self.wrote(obj);
        }
        let Some(t) = &self.tracker else { return };
        let key = obj.key();
        let gone = WaitFor::Gone {
            key: &key,
            uid: obj.uid(),
            version: Some(obj.resource_version()),
        };
        t.guard
            .record(&t.key, self.api.resource(), scope_of(obj), gone);
    }
}

fn scope_of<C: HasMetadata>(obj: &C) -> ObjectScope<'_> {
    ObjectScope {
        namespace: obj.namespace(),
        name: obj.name(),
        labels: Some(obj.labels()),
    }
}
