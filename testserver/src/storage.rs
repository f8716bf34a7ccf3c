//! The object store: one global resourceVersion counter, objects kept as serialized JSON
//! beside the few parsed bits selectors need, and a bounded history of change events.
//!
//! Like etcd behind the real API server, every write takes the next value of a single
//! cluster-wide counter and stamps it into the object's `metadata.resourceVersion`; objects are
//! ordered by key (`namespace/name`) within a resource, which is the order LIST returns. The
//! history window plays the part of etcd's compaction: a WATCH or a LIST continue token whose
//! resourceVersion is older than the window is answered with 410 Expired. Snapshots at an older
//! resourceVersion (continue pages, `resourceVersionMatch=Exact`) are rebuilt from the
//! history's previous object states, so paginated lists are consistent as etcd's are.
//!
//! Objects are stored as `Bytes` so LIST and WATCH write them out without re-serializing; each
//! change event is serialized once (`{"type":..,"object":..}\n`) and fanned out to every watch
//! through a `tokio::sync::broadcast` channel sent under the store lock, so a watch that
//! subscribes under the same lock sees no gap and no duplicate.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::ops::Bound;
use std::sync::Arc;

use bytes::{BufMut, Bytes, BytesMut};
use parking_lot::Mutex;
use serde_json::Value;
use tokio::sync::broadcast;

use crate::registry::{Registry, ResourceInfo, events};
use crate::status::ApiError;

/// One stored object: its serialized form and the parsed fields selectors need.
#[derive(Clone, Debug)]
pub(crate) struct Obj {
    /// The object as JSON.
    pub bytes: Bytes,
    /// `namespace/name` or `name`.
    pub key: String,
    /// `metadata.name`.
    pub name: String,
    /// `metadata.namespace`, `""` for cluster-scoped objects.
    pub namespace: String,
    /// `metadata.resourceVersion`.
    pub rv: u64,
    /// `metadata.labels`.
    pub labels: BTreeMap<String, String>,
    /// Values of the resource's selectable fields (beyond name and namespace).
    pub fields: Vec<(String, String)>,
    /// `apiVersion` as stored.
    pub api_version: String,
    /// The object in the other versions of its resource, as a conversion webhook gave them
    /// (custom resources with `strategy: Webhook`, module `admission::conversion`): each
    /// version's whole object, whose metadata but labels and annotations is the stored
    /// object's when read.
    pub views: Arc<Vec<(String, Value)>>,
}

impl Obj {
    /// Serializes `value` (whose metadata is already complete) for `info`.
    pub fn new(value: &Value, info: &ResourceInfo) -> Self {
        // Events are stored in the core form, whichever API wrote them.
        let core;
        let value = if events::is_event(info) && value["apiVersion"] == events::EVENTS_V1 {
            core = events::to_core(value);
            &core
        } else {
            value
        };
        let meta = &value["metadata"];
        let s = |v: &Value| v.as_str().unwrap_or_default().to_owned();
        let name = s(&meta["name"]);
        let namespace = s(&meta["namespace"]);
        let labels = meta["labels"]
            .as_object()
            .map(|m| {
                m.iter()
                    .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_owned()))
                    .collect()
            })
            .unwrap_or_default();
        let fields = if events::is_event(info) {
            events::selectable_fields(value)
        } else {
            Self::fields(value, info)
        };
        Self {
            bytes: Bytes::from(serde_json::to_vec(value).unwrap_or_default()),
            key: object_key(&namespace, &name),
            rv: meta["resourceVersion"]
                .as_str()
                .and_then(|r| r.parse().ok())
                .unwrap_or(0),
            name,
            namespace,
            labels,
            fields,
            api_version: s(&value["apiVersion"]),
            views: Arc::default(),
        }
    }

    /// The same object with its forms in other versions.
    pub fn with_views(mut self, views: Vec<(String, Value)>) -> Self {
        self.views = Arc::new(views);
        self
    }

    /// The same object keeping the other versions' forms of `previous` (a change of
    /// metadata only: deletion timestamps, finalizers, a delete's resourceVersion).
    pub fn keeping_views(mut self, previous: &Obj) -> Self {
        self.views = previous.views.clone();
        self
    }

    /// The values of `info`'s selectable fields in `value`.
    fn fields(value: &Value, info: &ResourceInfo) -> Vec<(String, String)> {
        info.selectable_fields
            .iter()
            .map(|path| {
                let v = path.split('.').fold(value, |v, seg| &v[seg]);
                let text = match v {
                    Value::String(s) => s.clone(),
                    Value::Null => String::new(),
                    other => other.to_string(),
                };
                (path.clone(), text)
            })
            .collect()
    }

    /// The object as read through `info`'s version: an Event converted to the
    /// `events.k8s.io` form, any other object with that version's `apiVersion` (the versions
    /// of a resource differ in nothing else here).
    pub fn value_for(&self, info: &ResourceInfo) -> Value {
        let api_version = info.api_version();
        let mut v = self.value();
        if self.api_version == api_version {
            return v;
        }
        if events::is_event(info) && api_version == events::EVENTS_V1 {
            return events::from_core(&v);
        }
        if let Some((_, view)) = self.views.iter().find(|(av, _)| *av == api_version) {
            let mut view = view.clone();
            let mut meta = v["metadata"].take();
            for key in ["labels", "annotations"] {
                match view["metadata"].get(key) {
                    Some(x) if !x.is_null() => meta[key] = x.clone(),
                    _ => {
                        if let Some(m) = meta.as_object_mut() {
                            m.remove(key);
                        }
                    }
                }
            }
            view["metadata"] = meta;
            return view;
        }
        v["apiVersion"] = Value::String(api_version);
        v
    }

    /// `metadata.uid`.
    pub fn uid(&self) -> String {
        self.value()["metadata"]["uid"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    /// The object parsed back into a JSON value.
    pub fn value(&self) -> Value {
        serde_json::from_slice(&self.bytes).unwrap_or(Value::Null)
    }

    /// The value of a field path for field selectors.
    pub fn field(&self, path: &str) -> Option<&str> {
        match path {
            "metadata.name" => Some(&self.name),
            "metadata.namespace" => Some(&self.namespace),
            _ => self
                .fields
                .iter()
                .find(|(p, _)| p == path)
                .map(|(_, v)| v.as_str()),
        }
    }
}

/// The store key of an object.
pub(crate) fn object_key(namespace: &str, name: &str) -> String {
    if namespace.is_empty() {
        name.to_owned()
    } else {
        format!("{namespace}/{name}")
    }
}

/// The type of a watch event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum EventType {
    /// Object created.
    Added,
    /// Object changed.
    Modified,
    /// Object removed.
    Deleted,
}

impl EventType {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Added => "ADDED",
            Self::Modified => "MODIFIED",
            Self::Deleted => "DELETED",
        }
    }
}

/// One committed change.
#[derive(Debug)]
pub(crate) struct Event {
    /// The resourceVersion of the change.
    pub rv: u64,
    /// The storage (`group/plural`) changed.
    pub storage: Arc<str>,
    /// What happened.
    pub kind: EventType,
    /// The object after the change (for deletes: the last state, stamped with the delete's RV).
    pub obj: Arc<Obj>,
    /// The object before the change.
    pub prev: Option<Arc<Obj>>,
    /// `{"type":..,"object":..}\n`, serialized once for every watcher.
    pub line: Bytes,
}

/// Builds one newline-terminated watch event line.
pub(crate) fn event_line(kind: &str, object: &[u8]) -> Bytes {
    let mut b = BytesMut::with_capacity(object.len() + 32);
    b.put_slice(b"{\"type\":\"");
    b.put_slice(kind.as_bytes());
    b.put_slice(b"\",\"object\":");
    b.put_slice(object);
    b.put_slice(b"}\n");
    b.freeze()
}

/// A predicate over stored objects (label and field selectors).
pub(crate) type Filter<'a> = &'a dyn Fn(&Obj) -> bool;

/// One page of a LIST.
#[derive(Debug)]
pub(crate) struct Page {
    /// Matching objects in key order.
    pub items: Vec<Arc<Obj>>,
    /// The key to continue after, when more objects may follow.
    pub next_key: Option<String>,
    /// How many objects follow (only computed when asked).
    pub remaining: Option<u64>,
    /// The resourceVersion the page reflects.
    pub rv: u64,
}

/// Everything behind the store lock.
pub(crate) struct Inner {
    /// The last resourceVersion handed out.
    pub rv: u64,
    /// Served resources.
    pub registry: Registry,
    tables: HashMap<Arc<str>, BTreeMap<String, Arc<Obj>>>,
    history: VecDeque<Arc<Event>>,
    /// Every change with an RV greater than this is in `history`.
    pub oldest: u64,
    history_cap: usize,
    tx: broadcast::Sender<Arc<Event>>,
    /// While set (for one request, see [`Storage::write`]), changes are computed and answered
    /// but not stored, recorded or sent to watchers: `dryRun=All`.
    pub dry_run: bool,
    /// What the last pages counted after their last keys (see [`RemainingCounts`]).
    remaining_counts: RemainingCounts,
}

/// How many objects of a list's snapshot follow a page's last key, kept for the pages that
/// continue it.
///
/// `remainingItemCount` is the number of objects after a page in the list's snapshot, as
/// etcd counts the rest of the range for kube-apiserver. Counting it anew for every page of
/// a collection of `n` objects walks `n / 2` keys per page on average: paging through
/// 100,000 pods with `limit=500` walked ten million keys, most of the test server's CPU
/// for that list. A snapshot at a resourceVersion never changes, so the count after a key
/// stays true for as long as that snapshot can be read, and the next page's count is this
/// one's minus the items it returns. The few last counts are kept, bounded, and a page whose
/// count is not among them counts as before.
#[derive(Debug, Default)]
struct RemainingCounts {
    /// Newest last.
    counts: VecDeque<RemainingCount>,
}

/// Objects of the snapshot of `storage` (within `namespace`) at `rv` after the key `after`.
#[derive(Debug)]
struct RemainingCount {
    storage: String,
    namespace: Option<String>,
    rv: u64,
    after: String,
    count: u64,
}

impl RemainingCounts {
    /// Counts kept: one per list being paged through at once.
    const CAP: usize = 32;

    fn get(&self, storage: &str, namespace: Option<&str>, rv: u64, after: &str) -> Option<u64> {
        self.counts
            .iter()
            .rev()
            .find(|c| {
                c.rv == rv
                    && c.after == after
                    && c.storage == storage
                    && c.namespace.as_deref() == namespace
            })
            .map(|c| c.count)
    }

    fn put(&mut self, count: RemainingCount) {
        if self.counts.len() == Self::CAP {
            self.counts.pop_front();
        }
        self.counts.push_back(count);
    }
}

/// The shared store.
pub(crate) struct Storage {
    inner: Mutex<Inner>,
    tx: broadcast::Sender<Arc<Event>>,
}

impl Storage {
    /// An empty store with the built-in resources.
    pub fn new(history_cap: usize, broadcast_cap: usize) -> Self {
        let (tx, _) = broadcast::channel(broadcast_cap.max(16));
        Self {
            inner: Mutex::new(Inner {
                rv: 0,
                registry: Registry::with_builtins(),
                tables: HashMap::new(),
                history: VecDeque::new(),
                oldest: 0,
                history_cap: history_cap.max(1),
                tx: tx.clone(),
                dry_run: false,
                remaining_counts: RemainingCounts::default(),
            }),
            tx,
        }
    }

    /// Locks the store.
    pub fn lock(&self) -> parking_lot::MutexGuard<'_, Inner> {
        self.inner.lock()
    }

    /// Locks the store for one write request; with `dry_run` the request's changes are not
    /// kept (kube-apiserver's `dryRun=All`: the whole request runs, admission and validation
    /// included, and nothing is persisted). The flag is cleared when the guard drops.
    pub fn write(&self, dry_run: bool) -> WriteGuard<'_> {
        let mut inner = self.inner.lock();
        inner.dry_run = dry_run;
        WriteGuard(inner)
    }

    /// A receiver of every event committed after this call (call under the lock to line up
    /// with a snapshot).
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<Event>> {
        self.tx.subscribe()
    }
}

/// The store locked for one write request (see [`Storage::write`]).
pub(crate) struct WriteGuard<'a>(parking_lot::MutexGuard<'a, Inner>);

impl std::ops::Deref for WriteGuard<'_> {
    type Target = Inner;
    fn deref(&self) -> &Inner {
        &self.0
    }
}

impl std::ops::DerefMut for WriteGuard<'_> {
    fn deref_mut(&mut self) -> &mut Inner {
        &mut self.0
    }
}

impl Drop for WriteGuard<'_> {
    fn drop(&mut self) {
        self.0.dry_run = false;
    }
}

impl Inner {
    /// Takes the next resourceVersion (under dry run: the one a real write would take,
    /// without taking it).
    pub fn next_rv(&mut self) -> u64 {
        if self.dry_run {
            return self.rv + 1;
        }
        self.rv += 1;
        self.rv
    }

    /// The object under `key`, if any.
    pub fn get(&self, storage: &str, key: &str) -> Option<Arc<Obj>> {
        self.tables.get(storage)?.get(key).cloned()
    }

    /// All current objects of a storage, optionally in one namespace.
    pub fn objects(&self, storage: &str, namespace: Option<&str>) -> Vec<Arc<Obj>> {
        let Some(table) = self.tables.get(storage) else {
            return Vec::new();
        };
        match namespace {
            None => table.values().cloned().collect(),
            Some(ns) => {
                let prefix = format!("{ns}/");
                table
                    .range::<str, _>((Bound::Included(prefix.as_str()), Bound::Unbounded))
                    .take_while(|(k, _)| k.starts_with(&prefix))
                    .map(|(_, o)| o.clone())
                    .collect()
            }
        }
    }

    /// Commits a change, records it in the history and fans it out.
    pub fn commit(
        &mut self,
        storage: &str,
        kind: EventType,
        obj: Obj,
        prev: Option<Arc<Obj>>,
    ) -> Arc<Obj> {
        if self.dry_run {
            return self.dry_run_answer(storage, kind, obj, prev.as_ref());
        }
        let obj = Arc::new(obj);
        let storage: Arc<str> = match self.tables.get_key_value(storage) {
            Some((k, _)) => k.clone(),
            None => Arc::from(storage),
        };
        let table = self.tables.entry(storage.clone()).or_default();
        if kind == EventType::Deleted {
            table.remove(&obj.key);
        } else {
            table.insert(obj.key.clone(), obj.clone());
        }
        let event = Arc::new(Event {
            rv: obj.rv,
            storage,
            kind,
            line: event_line(kind.as_str(), &obj.bytes),
            obj: obj.clone(),
            prev,
        });
        self.history.push_back(event.clone());
        while self.history.len() > self.history_cap {
            if let Some(old) = self.history.pop_front() {
                self.oldest = old.rv;
            }
        }
        let _ = self.tx.send(event);
        obj
    }

    /// What a dry-run write answers: the object as it would be stored, with the
    /// resourceVersion a dry run shows (none for a create, as kube-apiserver's dry-run storage
    /// never reaches etcd; the unchanged one otherwise).
    fn dry_run_answer(
        &self,
        storage: &str,
        kind: EventType,
        obj: Obj,
        prev: Option<&Arc<Obj>>,
    ) -> Arc<Obj> {
        let Some(info) = self.info_for_storage(storage, &obj.api_version) else {
            return Arc::new(obj);
        };
        let mut value = obj.value();
        let meta = &mut value["metadata"];
        match (kind, prev, meta.as_object_mut()) {
            (EventType::Added, _, Some(m)) => {
                m.remove("resourceVersion");
            }
            (_, Some(prev), Some(m)) => {
                m.insert("resourceVersion".into(), Value::String(prev.rv.to_string()));
            }
            _ => {}
        }
        Arc::new(Obj::new(&value, &info))
    }

    /// Inserts an object without recording an event (preloading); the history is compacted
    /// to the current resourceVersion afterwards by the caller.
    pub fn insert_silently(&mut self, storage: &str, obj: Obj) {
        self.tables
            .entry(Arc::from(storage))
            .or_default()
            .insert(obj.key.clone(), Arc::new(obj));
    }

    /// Replaces the form in `api_version` of the object stored as `current` (when it still
    /// is: same key, same state), without an event: nothing was written, a conversion
    /// webhook was asked again (module `admission::conversion`).
    pub fn refresh_view(
        &mut self,
        storage: &str,
        current: &Arc<Obj>,
        api_version: &str,
        view: Value,
    ) {
        if self.dry_run {
            return;
        }
        let Some(table) = self.tables.get_mut(storage) else {
            return;
        };
        let Some(stored) = table.get_mut(&current.key) else {
            return;
        };
        if !Arc::ptr_eq(stored, current) {
            return;
        }
        let mut views: Vec<(String, Value)> = current
            .views
            .iter()
            .filter(|(v, _)| v != api_version)
            .cloned()
            .collect();
        views.push((api_version.to_owned(), view));
        *stored = Arc::new((**current).clone().with_views(views));
    }

    /// Drops the history: resumes from any earlier resourceVersion now get 410.
    pub fn compact(&mut self) {
        self.history.clear();
        self.oldest = self.rv;
    }

    /// Removes a whole storage (a deleted CRD's objects), emitting DELETED events.
    pub fn drop_storage(&mut self, storage: &str) {
        for obj in self.objects(storage, None) {
            self.delete_now(storage, &obj);
        }
        if !self.dry_run {
            self.tables.remove(storage);
        }
    }

    /// Deletes `obj` immediately, stamping the delete's resourceVersion into the last state.
    pub fn delete_now(&mut self, storage: &str, obj: &Arc<Obj>) -> Arc<Obj> {
        let rv = self.next_rv();
        let mut value = obj.value();
        value["metadata"]["resourceVersion"] = Value::String(rv.to_string());
        let info = self.info_for_storage(storage, &obj.api_version);
        let dead = match info {
            Some(info) => Obj::new(&value, &info),
            None => Obj {
                bytes: Bytes::from(serde_json::to_vec(&value).unwrap_or_default()),
                key: obj.key.clone(),
                name: obj.name.clone(),
                namespace: obj.namespace.clone(),
                rv,
                labels: obj.labels.clone(),
                fields: obj.fields.clone(),
                api_version: obj.api_version.clone(),
                views: Arc::default(),
            },
        };
        let dead = dead.keeping_views(obj);
        self.commit(storage, EventType::Deleted, dead, Some(obj.clone()))
    }

    /// The CRD that serves `info`, `None` for a built-in (or a resource a test registered).
    pub fn crd_of(&self, info: &ResourceInfo) -> Option<Arc<Obj>> {
        if crate::registry::is_builtin_resource(&info.group, &info.plural) {
            return None;
        }
        self.get(
            "apiextensions.k8s.io/customresourcedefinitions",
            &format!("{}.{}", info.plural, info.group),
        )
    }

    /// The names of every storage holding objects.
    pub fn storages(&self) -> Vec<Arc<str>> {
        self.tables.keys().cloned().collect()
    }

    /// The resource serving objects of `storage` written as `api_version`.
    pub fn info_for(&self, storage: &str, api_version: &str) -> Option<Arc<ResourceInfo>> {
        self.info_for_storage(storage, api_version)
    }

    fn info_for_storage(&self, storage: &str, api_version: &str) -> Option<Arc<ResourceInfo>> {
        let (group, plural) = storage.split_once('/')?;
        let (g, v) = crate::registry::split_api_version(api_version);
        if g != group {
            return None;
        }
        self.registry.get(group, v, plural)
    }

    /// Events of one storage with resourceVersion greater than `after`, or 410 when the
    /// window no longer reaches back that far.
    pub fn events_since(&self, storage: &str, after: u64) -> Result<Vec<Arc<Event>>, ApiError> {
        if after < self.oldest {
            return Err(ApiError::too_old(after, self.oldest));
        }
        let start = self.history.partition_point(|e| e.rv <= after);
        Ok(self
            .history
            .range(start..)
            .filter(|e| &*e.storage == storage)
            .cloned()
            .collect())
    }

    /// One page of the state of a storage at resourceVersion `at` (the current state when
    /// `None`): objects after `start_after` (in `namespace` if given) matching `filter`.
    /// With `count_remaining` (`filter` takes every object) the page says how many objects
    /// follow it, counted once per list (see [`RemainingCounts`]).
    #[allow(clippy::too_many_arguments)]
    pub fn page(
        &mut self,
        storage: &str,
        namespace: Option<&str>,
        at: Option<u64>,
        start_after: Option<&str>,
        limit: Option<usize>,
        filter: Filter<'_>,
        count_remaining: bool,
    ) -> Result<Page, ApiError> {
        let rv = at.unwrap_or(self.rv);
        if rv > self.rv {
            return Err(ApiError::too_large_rv(rv, self.rv));
        }
        // Keys changed since `rv`, with their state at `rv` (None: absent then).
        let mut overrides: BTreeMap<&str, Option<&Arc<Obj>>> = BTreeMap::new();
        if rv < self.rv {
            if rv < self.oldest {
                return Err(ApiError::too_old(rv, self.oldest));
            }
            for e in self.history.iter().rev().take_while(|e| e.rv > rv) {
                if &*e.storage == storage {
                    overrides.insert(e.obj.key.as_str(), e.prev.as_ref());
                }
            }
        }
        let empty = BTreeMap::new();
        let table = self.tables.get(storage).unwrap_or(&empty);
        let prefix = namespace.map(|ns| format!("{ns}/"));
        let lower: Bound<&str> = match (start_after, prefix.as_deref()) {
            (Some(s), Some(p)) if s < p => Bound::Included(p),
            (Some(s), _) => Bound::Excluded(s),
            (None, Some(p)) => Bound::Included(p),
            (None, None) => Bound::Unbounded,
        };
        let in_ns = |k: &str| prefix.as_deref().is_none_or(|p| k.starts_with(p));
        let mut current = table
            .range::<str, _>((lower, Bound::Unbounded))
            .map(|(k, o)| (k.as_str(), Some(o)))
            .take_while(|(k, _)| in_ns(k))
            .peekable();
        let mut changed = overrides
            .range::<&str, _>((lower.map(|s| s), Bound::Unbounded))
            .map(|(k, o)| (*k, *o))
            .take_while(|(k, _)| in_ns(k))
            .peekable();
        // Merge the two key-ordered sequences; a changed key takes its state at `rv`.
        let mut snapshot = std::iter::from_fn(move || {
            loop {
                let next = match (current.peek(), changed.peek()) {
                    (None, None) => return None,
                    (Some(_), None) => current.next().map(|(_, o)| o),
                    (None, Some(_)) => changed.next().map(|(_, o)| o),
                    (Some((a, _)), Some((b, _))) => {
                        if a < b {
                            current.next().map(|(_, o)| o)
                        } else if a > b {
                            changed.next().map(|(_, o)| o)
                        } else {
                            current.next();
                            changed.next().map(|(_, o)| o)
                        }
                    }
                };
                if let Some(Some(o)) = next {
                    return Some(o);
                }
            }
        })
        .filter(|o| filter(o));
        let mut items = Vec::new();
        let limit = limit.unwrap_or(usize::MAX);
        while items.len() < limit {
            match snapshot.next() {
                Some(o) => items.push(o.clone()),
                None => break,
            }
        }
        let (next_key, remaining) = if items.len() == limit {
            if count_remaining {
                let known = start_after.and_then(|s| {
                    self.remaining_counts
                        .get(storage, namespace, rv, s)
                        .map(|n| n.saturating_sub(items.len() as u64))
                });
                let n = match known {
                    Some(n) => n,
                    // Every object matches (no selector): with no change since `rv`, the rest
                    // of the snapshot is the rest of the table's range, counted without
                    // building the merged snapshot.
                    None if overrides.is_empty() => {
                        let after = items
                            .last()
                            .map_or(lower, |o| Bound::Excluded(o.key.as_str()));
                        table
                            .range::<str, _>((after, Bound::Unbounded))
                            .take_while(|(k, _)| in_ns(k))
                            .count() as u64
                    }
                    None => snapshot.count() as u64,
                };
                let key = (n > 0)
                    .then(|| items.last().map(|o| o.key.clone()))
                    .flatten();
                (key, Some(n))
            } else if snapshot.next().is_some() {
                (items.last().map(|o| o.key.clone()), None)
            } else {
                (None, None)
            }
        } else {
            (None, None)
        };
        if let (Some(after), Some(count)) = (&next_key, remaining) {
            self.remaining_counts.put(RemainingCount {
                storage: storage.to_owned(),
                namespace: namespace.map(str::to_owned),
                rv,
                after: after.clone(),
                count,
            });
        }
        Ok(Page {
            items,
            remaining: remaining.filter(|_| next_key.is_some()),
            next_key,
            rv,
        })
    }
}
