//! The consistency guard: a key's next reconcile waits, without a worker, until the caches
//! have caught up with the writes its last reconcile made (see the [module docs](super),
//! "Consistency").
//!
//! [`Guard::record`] remembers, per key, what each write needs a cache to have seen: its
//! resourceVersion ([`Wait::Version`]), or for an object the write removed, that the cache
//! no longer holds its UID ([`Wait::Gone`]). [`Guard::admit`] is asked before every
//! reconcile: with every need met (or the key unknown) the key runs; otherwise it is
//! *parked*: the worker marks it done and takes the next key, and the guard's waker task,
//! subscribed to the watermarks of the caches involved, adds it back to the queue once they
//! have caught up, or once the bound has passed (then it runs anyway, with a warning).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use futures_util::future::{FutureExt, select_all};
use parking_lot::Mutex;
use tokio::sync::Notify;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::metrics::{GuardEvent, Recorder};
use super::queue::ControllerQueue;
use crate::consistency::{Advances, Watermark, parse_resource_version};
use crate::informer::{CacheView, InformerFactory, InformerScope};
use crate::workqueue::Priority;
use kinform_core::resource::ApiResource;
use kinform_core::selector::{FieldSelector, LabelSelector};

/// The consistency guard's bound by default: a key waits at most this long for the caches
/// before it is reconciled anyway
/// ([`consistency_timeout`](super::ControllerBuilder::consistency_timeout)).
pub const DEFAULT_CONSISTENCY_TIMEOUT: Duration = Duration::from_secs(10);

/// Entries kept before the satisfied ones of keys not waiting are dropped.
const PRUNE_FROM: usize = 1024;

/// How the guard is set up ([`ControllerBuilder`](super::ControllerBuilder)).
#[derive(Clone, Copy, Debug)]
pub(crate) struct GuardConfig {
    pub(crate) enabled: bool,
    pub(crate) timeout: Duration,
}

impl Default for GuardConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            timeout: DEFAULT_CONSISTENCY_TIMEOUT,
        }
    }
}

/// What one write needs a cache to have seen.
pub(crate) enum Wait {
    /// A change at this resourceVersion.
    Version(u64),
    /// The removal of the object `uid` under `key` (known at `version` when the server said).
    Gone {
        key: String,
        uid: String,
        version: Option<u64>,
    },
}

/// A wait on one cache.
struct Need {
    cache: Arc<dyn CacheView>,
    wait: Wait,
}

impl Need {
    fn met(&self) -> bool {
        // A cache that stopped (a sharded replica's lost membership) cannot catch up.
        if !self.cache.is_live() {
            return true;
        }
        let watermark = self.cache.cache_watermark();
        match &self.wait {
            Wait::Version(rv) => watermark.has_seen_version(*rv),
            Wait::Gone { key, uid, version } => {
                version.is_some_and(|rv| watermark.has_seen_version(rv))
                    || !self.cache.holds(key, uid)
            }
        }
    }
}

impl fmt::Debug for Need {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let cache = self.cache.cache_name();
        match &self.wait {
            Wait::Version(rv) => write!(f, "{cache} at {rv}"),
            Wait::Gone { key, uid, .. } => write!(f, "{cache} without {key} (uid {uid})"),
        }
    }
}

/// A key set aside.
struct Parked {
    deadline: Instant,
    since: Instant,
    /// Where to add it back, at which priority (the queue it was popped from).
    queue: ControllerQueue,
    priority: Priority,
}

#[derive(Default)]
struct Entry {
    needs: Vec<Need>,
    parked: Option<Parked>,
}

#[derive(Default)]
struct State {
    keys: HashMap<String, Entry>,
    /// Entries with `parked` set.
    parked: usize,
    /// The parked keys not added back yet (what the waker looks at).
    waiting: HashSet<String>,
    /// `keys.len()` after the last prune.
    pruned_at: usize,
}

/// The guard of one controller, shared by its workers, its reconciles' clients and its
/// waker task.
pub(crate) struct Guard {
    controller: String,
    config: GuardConfig,
    factory: InformerFactory,
    recorder: Arc<Recorder>,
    state: Mutex<State>,
    /// A key was parked: the waker recomputes what to wait for.
    parked: Notify,
    waker: AtomicBool,
    stop: CancellationToken,
}

impl fmt::Debug for Guard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.state.lock();
        f.debug_struct("Guard")
            .field("enabled", &self.config.enabled)
            .field("timeout", &self.config.timeout)
            .field("keys", &state.keys.len())
            .field("parked", &state.parked)
            .finish()
    }
}

/// Owns a controller's [`Guard`]: dropping it (the controller) stops the waker task.
pub(crate) struct GuardOwner(pub(crate) Arc<Guard>);

impl Drop for GuardOwner {
    fn drop(&mut self) {
        self.0.stop.cancel();
    }
}

impl GuardOwner {
    /// The guard of the controller `controller`, counting into `recorder`.
    pub(crate) fn new(
        controller: String,
        config: GuardConfig,
        factory: InformerFactory,
        recorder: Arc<Recorder>,
    ) -> Self {
        Self(Arc::new(Guard {
            controller,
            config,
            factory,
            recorder,
            state: Mutex::default(),
            parked: Notify::new(),
            waker: AtomicBool::new(false),
            stop: CancellationToken::new(),
        }))
    }
}

impl Guard {
    /// Whether writes are tracked and keys held back.
    pub(crate) fn enabled(&self) -> bool {
        self.config.enabled
    }

    /// The client the controller's reconciles write through.
    pub(crate) fn client(&self) -> &kinform_client::Client {
        self.factory.client()
    }

    /// Whether `key`, popped from `queue` at `priority`, may be reconciled now. When it may
    /// not, it is parked (the worker marks it done and goes on): it comes back through
    /// `queue` once the caches have caught up with its writes, or after the bound.
    pub(crate) fn admit(
        self: &Arc<Self>,
        key: &str,
        queue: &ControllerQueue,
        priority: Priority,
    ) -> bool {
        if !self.config.enabled {
            return true;
        }
        let mut state = self.state.lock();
        let Some(entry) = state.keys.get_mut(key) else {
            return true;
        };
        entry.needs.retain(|n| !n.met());
        let now = Instant::now();
        if entry.needs.is_empty() {
            let was_parked = entry.parked.is_some();
            state.keys.remove(key);
            if was_parked {
                state.waiting.remove(key);
                state.parked -= 1;
                let parked = state.parked;
                drop(state);
                self.recorder.consistency(GuardEvent::Woken, parked);
            }
            return true;
        }
        match &mut entry.parked {
            Some(p) if now >= p.deadline => {
                let waited = now - p.since;
                let pending = format!("{:?}", entry.needs);
                state.keys.remove(key);
                state.waiting.remove(key);
                state.parked -= 1;
                let parked = state.parked;
                drop(state);
                tracing::warn!(
                    controller = %self.controller, %key, ?waited, %pending,
                    "the caches have not caught up with the key's last writes within the bound; reconciling anyway"
                );
                self.recorder.consistency(GuardEvent::TimedOut, parked);
                return true;
            }
            Some(p) => {
                p.queue = queue.clone();
                p.priority = priority;
                state.waiting.insert(key.to_owned());
            }
            None => {
                entry.parked = Some(Parked {
                    deadline: now + self.config.timeout,
                    since: now,
                    queue: queue.clone(),
                    priority,
                });
                state.waiting.insert(key.to_owned());
                state.parked += 1;
                let parked = state.parked;
                tracing::debug!(controller = %self.controller, %key, needs = ?state.keys.get(key).map(|e| &e.needs), "the caches lag the key's last writes; set aside");
                drop(state);
                self.recorder.consistency(GuardEvent::Parked, parked);
                self.start_waker();
                self.parked.notify_one();
                return false;
            }
        }
        drop(state);
        self.parked.notify_one();
        false
    }

    /// Remembers that a reconcile of `key` wrote an object of `resource`: the caches of
    /// `resource` whose scope holds the object (its `namespace` and `labels`) must see
    /// `wait` before `key` runs again. An incomparable resourceVersion is counted and not
    /// waited for.
    pub(crate) fn record(
        &self,
        key: &str,
        resource: &ApiResource,
        object: ObjectScope<'_>,
        wait: WaitFor<'_>,
    ) {
        if !self.config.enabled {
            return;
        }
        let wait = match wait {
            WaitFor::Version(rv) => match parse_resource_version(rv) {
                Some(rv) => Wait::Version(rv),
                None => {
                    let parked = self.state.lock().parked;
                    self.recorder.consistency(GuardEvent::Incomparable, parked);
                    return;
                }
            },
            WaitFor::Gone { key, uid, version } => Wait::Gone {
                key: key.to_owned(),
                uid: uid.to_owned(),
                version: version.and_then(parse_resource_version),
            },
        };
        let caches: Vec<_> = self
            .factory
            .caches_of(resource)
            .into_iter()
            .filter(|(scope, cache)| cache.is_live() && object.within(scope))
            .map(|(_, cache)| cache)
            .collect();
        if caches.is_empty() {
            return;
        }
        let mut state = self.state.lock();
        state.prune();
        let entry = state.keys.entry(key.to_owned()).or_default();
        for cache in caches {
            merge(&mut entry.needs, cache, &wait);
        }
    }

    fn start_waker(self: &Arc<Self>) {
        if !self.waker.swap(true, Ordering::AcqRel) {
            tokio::spawn(wake(Arc::clone(self)));
        }
    }

    /// Parked keys that may run now (caught up, or past their bound), taken off the waiting
    /// list, and the earliest deadline of the others.
    fn due(&self, now: Instant) -> (Vec<(ControllerQueue, String, Priority)>, Option<Instant>) {
        let mut guard = self.state.lock();
        let state = &mut *guard;
        let mut ready = Vec::new();
        let mut next: Option<Instant> = None;
        state.waiting.retain(|key| {
            let Some(entry) = state.keys.get_mut(key) else {
                return false;
            };
            let Some(p) = &entry.parked else {
                return false;
            };
            entry.needs.retain(|n| !n.met());
            if entry.needs.is_empty() || now >= p.deadline {
                ready.push((p.queue.clone(), key.clone(), p.priority));
                return false;
            }
            next = Some(next.map_or(p.deadline, |n| n.min(p.deadline)));
            true
        });
        (ready, next)
    }
}

/// Adds `wait` on `cache` to `needs`: one version per cache (the highest), one removal per
/// object.
fn merge(needs: &mut Vec<Need>, cache: Arc<dyn CacheView>, wait: &Wait) {
    let same = |n: &Need| n.cache.cache_watermark().same(cache.cache_watermark());
    match wait {
        Wait::Version(rv) => {
            if let Some(n) = needs
                .iter_mut()
                .find(|n| same(n) && matches!(n.wait, Wait::Version(_)))
            {
                if let Wait::Version(have) = &mut n.wait {
                    *have = (*have).max(*rv);
                }
                return;
            }
            needs.push(Need {
                cache,
                wait: Wait::Version(*rv),
            });
        }
        Wait::Gone { key, uid, version } => {
            let known = needs
                .iter()
                .any(|n| same(n) && matches!(&n.wait, Wait::Gone { uid: u, .. } if u == uid));
            if !known {
                needs.push(Need {
                    cache,
                    wait: Wait::Gone {
                        key: key.clone(),
                        uid: uid.clone(),
                        version: *version,
                    },
                });
            }
        }
    }
}

impl State {
    /// Drops the entries of keys not parked whose writes every cache has seen, once the map
    /// has doubled since the last time (keys whose writes never bring them back).
    fn prune(&mut self) {
        if self.keys.len() < PRUNE_FROM.max(2 * self.pruned_at) {
            return;
        }
        self.keys.retain(|_, e| {
            e.parked.is_some() || {
                e.needs.retain(|n| !n.met());
                !e.needs.is_empty()
            }
        });
        self.pruned_at = self.keys.len();
    }
}

/// Where a written object lives, to find the caches that hold it.
pub(crate) struct ObjectScope<'a> {
    pub(crate) namespace: Option<&'a str>,
    pub(crate) name: &'a str,
    /// `None` when the answer did not say (a delete answered with a Status).
    pub(crate) labels: Option<&'a BTreeMap<String, String>>,
}

impl ObjectScope<'_> {
    /// Whether a cache of `scope` holds the object. A field selector is evaluated when it
    /// names only `metadata.name` and `metadata.namespace`; a cache selecting on other fields
    /// is left out (the answer's fields are not read here).
    fn within(&self, scope: &InformerScope) -> bool {
        if let Some(ns) = &scope.namespace
            && self.namespace != Some(ns.as_str())
        {
            return false;
        }
        if let Some(selector) = &scope.field_selector {
            let Ok(selector) = FieldSelector::parse(selector) else {
                return false;
            };
            let metadata_only = selector
                .requirements()
                .iter()
                .all(|r| matches!(r.field.as_str(), "metadata.name" | "metadata.namespace"));
            let field = |f: &str| match f {
                "metadata.name" => Some(self.name),
                _ => self.namespace,
            };
            if !metadata_only || !selector.matches(field) {
                return false;
            }
        }
        match (&scope.label_selector, self.labels) {
            (None, _) | (Some(_), None) => true,
            (Some(selector), Some(labels)) => {
                LabelSelector::parse(selector).is_ok_and(|s| s.matches(Some(labels)))
            }
        }
    }
}

/// What a write asks the caches to see ([`Guard::record`]).
pub(crate) enum WaitFor<'a> {
    /// The resourceVersion the write answered with.
    Version(&'a str),
    /// The removal of an object.
    Gone {
        key: &'a str,
        uid: &'a str,
        version: Option<&'a str>,
    },
}

/// The waker: adds parked keys back once their caches have caught up, or at their bound.
/// Subscribes to a watermark before it checks against it, so no advance is missed.
async fn wake(guard: Arc<Guard>) {
    let mut subscribed: Vec<(Watermark, Advances)> = Vec::new();
    loop {
        // Subscriptions first: an advance after `due` looks wakes the loop again.
        let needed = guard.due_watermarks();
        subscribed.retain(|(w, _)| needed.iter().any(|n| n.same(w)));
        for w in needed {
            if !subscribed.iter().any(|(s, _)| s.same(&w)) {
                let advances = w.subscribe();
                subscribed.push((w, advances));
            }
        }
        let (ready, next) = guard.due(Instant::now());
        for (queue, key, priority) in ready {
            queue.add_with_priority(key, priority);
        }
        let deadline = async {
            match next {
                Some(at) => tokio::time::sleep_until(at).await,
                None => std::future::pending().await,
            }
        };
        let advanced = async {
            if subscribed.is_empty() {
                return std::future::pending::<Option<usize>>().await;
            }
            let (out, index, _) =
                select_all(subscribed.iter_mut().map(|(_, a)| a.changed().boxed())).await;
            out.is_none().then_some(index)
        };
        tokio::select! {
            () = guard.stop.cancelled() => return,
            () = guard.parked.notified() => {}
            () = deadline => {}
            gone = advanced => {
                // A watermark whose cache is gone never advances again.
                if let Some(index) = gone {
                    subscribed.swap_remove(index);
                }
            }
        }
    }
}

impl Guard {
    /// The watermarks the waiting keys wait on (without taking any key off the list).
    fn due_watermarks(&self) -> Vec<Watermark> {
        let state = self.state.lock();
        let mut out: Vec<Watermark> = Vec::new();
        for entry in state.waiting.iter().filter_map(|k| state.keys.get(k)) {
            for need in &entry.needs {
                let w = need.cache.cache_watermark();
                if !out.iter().any(|o| o.same(w)) {
                    out.push(w.clone());
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controller::ReconcileClient;
    use crate::workqueue::{RateLimitingQueue, default_controller_rate_limiter};
    use k8s_openapi::api::core::v1::{ConfigMap, Secret};
    use kinform_client::{DeleteParams, PostParams};
    use kinform_core::resource::{HasMetadata, Resource};
    use kinform_testserver::TestApiServer;

    const KEY: &str = "default/owner";

    struct Setup {
        server: TestApiServer,
        factory: InformerFactory,
        guard: GuardOwner,
        recorder: Arc<Recorder>,
        queue: ControllerQueue,
    }

    /// A server, a started ConfigMap informer, and a guard with `config`.
    async fn setup(config: GuardConfig) -> Setup {
        let server = TestApiServer::start().await.unwrap();
        let factory = InformerFactory::builder(server.client().unwrap())
            .test_backoff()
            .build();
        factory.informer::<ConfigMap>();
        factory.start();
        factory
            .wait_for_cache_sync(Duration::from_secs(10))
            .await
            .unwrap();
        let recorder = Arc::new(Recorder::new("test", None));
        let guard = GuardOwner::new("test".into(), config, factory.clone(), recorder.clone());
        let queue = ControllerQueue::RateLimiting(RateLimitingQueue::new(
            default_controller_rate_limiter(),
        ));
        Setup {
            server,
            factory,
            guard,
            recorder,
            queue,
        }
    }

    impl Setup {
        fn client(&self) -> ReconcileClient {
            ReconcileClient::new(&self.guard.0, KEY)
        }
        fn admit(&self) -> bool {
            self.guard.0.admit(KEY, &self.queue, Priority::NORMAL)
        }
        /// The next key the guard adds back, within `limit`.
        async fn woken(&self, limit: Duration) -> String {
            let key = tokio::time::timeout(limit, self.queue.get_with_priority())
                .await
                .expect("the key comes back")
                .expect("the queue runs")
                .0;
            self.queue.done(&key);
            key
        }
        async fn end(self) {
            self.factory.shutdown().await;
            self.server.shutdown().await;
        }
    }

    fn configmap(name: &str) -> ConfigMap {
        let mut cm = ConfigMap::default();
        cm.metadata.name = Some(name.into());
        cm
    }

    #[tokio::test]
    async fn a_key_waits_for_its_write_without_a_worker_and_comes_back_when_seen() {
        let s = setup(GuardConfig::default()).await;
        s.server
            .faults()
            .set_watch_delay(Duration::from_millis(300), Duration::from_millis(300));
        let created = s
            .client()
            .namespaced::<ConfigMap>("default")
            .create(&PostParams::default(), &configmap("child"))
            .await
            .unwrap();
        assert!(!s.admit(), "the cache has not seen the create yet");
        assert!(
            !s.admit(),
            "popped again meanwhile: still set aside, counted once"
        );
        assert_eq!(s.recorder.counters.snapshot().parked, 1);
        assert_eq!(s.woken(Duration::from_secs(5)).await, KEY);
        let lister = s.factory.lister::<ConfigMap>();
        let cached = lister
            .get("default", "child")
            .expect("seen when the key is back");
        assert_eq!(cached.resource_version(), created.resource_version());
        assert!(s.admit());
        let stats = s.recorder.counters.snapshot();
        assert_eq!(
            (stats.parked, stats.woken, stats.parked_timeouts),
            (1, 1, 0)
        );
        assert!(s.admit(), "nothing left to wait for");
        s.end().await;
    }

    #[tokio::test]
    async fn after_the_bound_a_key_runs_anyway_and_is_counted() {
        let s = setup(GuardConfig {
            enabled: true,
            timeout: Duration::from_millis(200),
        })
        .await;
        s.server
            .faults()
            .set_watch_delay(Duration::from_secs(5), Duration::from_secs(5));
        s.client()
            .namespaced::<ConfigMap>("default")
            .create(&PostParams::default(), &configmap("slow"))
            .await
            .unwrap();
        assert!(!s.admit());
        assert_eq!(
            s.woken(Duration::from_secs(2)).await,
            KEY,
            "back at the bound"
        );
        assert!(s.admit(), "runs anyway");
        assert!(
            s.factory
                .lister::<ConfigMap>()
                .get("default", "slow")
                .is_none()
        );
        let stats = s.recorder.counters.snapshot();
        assert_eq!(
            (stats.parked, stats.woken, stats.parked_timeouts),
            (1, 0, 1)
        );
        s.end().await;
    }

    #[tokio::test]
    async fn a_removal_is_caught_up_when_the_cache_no_longer_holds_the_object() {
        let s = setup(GuardConfig::default()).await;
        let lister = s.factory.lister::<ConfigMap>();
        let created = s
            .client()
            .namespaced::<ConfigMap>("default")
            .create(&PostParams::default(), &configmap("doomed"))
            .await
            .unwrap();
        lister
            .wait_for_resource_version(created.resource_version(), Duration::from_secs(5))
            .await
            .unwrap();
        assert!(s.admit());
        s.server
            .faults()
            .set_watch_delay(Duration::from_millis(300), Duration::from_millis(300));
        let deleted = s
            .client()
            .namespaced::<ConfigMap>("default")
            .delete("doomed", &DeleteParams::default())
            .await
            .unwrap();
        assert!(
            deleted.is_right(),
            "a ConfigMap's removal is answered with a Status"
        );
        assert!(!s.admit(), "the cache still holds it");
        s.woken(Duration::from_secs(5)).await;
        assert!(lister.get("default", "doomed").is_none());
        assert!(s.admit());
        s.end().await;
    }

    #[tokio::test]
    async fn what_is_not_cached_or_not_comparable_is_not_waited_for() {
        let s = setup(GuardConfig::default()).await;
        s.server
            .faults()
            .set_watch_delay(Duration::from_secs(5), Duration::from_secs(5));
        let mut secret = Secret::default();
        secret.metadata.name = Some("uncached".into());
        s.client()
            .namespaced::<Secret>("default")
            .create(&PostParams::default(), &secret)
            .await
            .unwrap();
        assert!(s.admit(), "no informer of Secrets: nothing to wait for");
        let scope = ObjectScope {
            namespace: Some("default"),
            name: "x",
            labels: None,
        };
        s.guard.0.record(
            KEY,
            &ConfigMap::api_resource(),
            scope,
            WaitFor::Version("not-a-number"),
        );
        assert!(s.admit(), "fail open");
        assert_eq!(s.recorder.counters.snapshot().incomparable_versions, 1);
        s.end().await;
    }

    #[tokio::test]
    async fn off_it_remembers_nothing() {
        let s = setup(GuardConfig {
            enabled: false,
            timeout: DEFAULT_CONSISTENCY_TIMEOUT,
        })
        .await;
        s.server
            .faults()
            .set_watch_delay(Duration::from_secs(5), Duration::from_secs(5));
        s.client()
            .namespaced::<ConfigMap>("default")
            .create(&PostParams::default(), &configmap("untracked"))
            .await
            .unwrap();
        assert!(s.admit());
        assert!(s.guard.0.state.lock().keys.is_empty());
        s.end().await;
    }

    #[test]
    fn a_cache_holds_an_object_when_its_scope_selects_it() {
        let labels = BTreeMap::from([("app".to_owned(), "web".to_owned())]);
        let obj = ObjectScope {
            namespace: Some("prod"),
            name: "a",
            labels: Some(&labels),
        };
        let within = |scope: InformerScope| obj.within(&scope);
        assert!(within(InformerScope::all()));
        assert!(within(InformerScope::all().namespace("prod")));
        assert!(!within(InformerScope::all().namespace("dev")));
        assert!(within(InformerScope::all().labels("app=web")));
        assert!(!within(InformerScope::all().labels("app=db")));
        assert!(within(InformerScope::all().fields("metadata.name=a")));
        assert!(!within(InformerScope::all().fields("metadata.name=b")));
        assert!(within(
            InformerScope::all().fields("metadata.namespace!=dev")
        ));
        assert!(
            !within(InformerScope::all().fields("status.phase=Running")),
            "other fields are not read"
        );
        let unknown_labels = ObjectScope {
            labels: None,
            ..obj
        };
        assert!(unknown_labels.within(&InformerScope::all().labels("app=db")));
    }
}
