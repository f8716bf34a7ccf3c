//! The two libraries under test, each behind [`scenario::Client`], and the decode floors.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use futures_util::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kinform::client::PartialObjectMetadata;
use kinform::informer::{EventHandlerFns, InformerFactory, SharedIndexInformer};
use kinform::reflector::ListMode;
use kube::runtime::reflector::{self, Store};
use kube::runtime::watcher::{self, Event};
use kube::runtime::{WatchStreamExt, watcher as watch_fn};
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::scenario::{Client, Counter, Figures};

fn kinform_client(url: &str) -> kinform::Client {
    kinform::Client::new(kinform::Config::new(url.parse().expect("url"))).expect("client")
}

/// A client that reads a whole list of 100,000 pods (620 MB) in one response, beyond
/// `Config::max_body_bytes`' default, for the floor and the server's own key listing.
pub fn whole_list_client(mut config: kinform::Config) -> kinform::Client {
    config.max_body_bytes = usize::MAX;
    kinform::Client::new(config).expect("client")
}

fn kube_client(url: &str) -> kube::Client {
    let config = kube::Config::new(url.parse::<http::Uri>().expect("url"));
    kube::Client::try_from(config).expect("kube client")
}

/// kinform's informer with one counting handler (adds and updates counted apart).
pub struct Kinform<K: kinform::HasMetadata> {
    factory: InformerFactory,
    informer: Arc<SharedIndexInformer<K>>,
    pub counter: Arc<Counter>,
    updates: Arc<Counter>,
}

/// A factory for `url` with the given scope, list mode and managedFields option.
fn kinform_factory(
    url: &str,
    namespace: Option<&str>,
    mode: ListMode,
    keep_mf: bool,
) -> InformerFactory {
    let mut b = InformerFactory::builder(kinform_client(url)).list_mode(mode);
    if keep_mf {
        b = b.keep_managed_fields();
    }
    if let Some(ns) = namespace {
        b = b.namespace(ns);
    }
    b.build()
}

impl<K: kinform::Resource> Kinform<K> {
    /// The typed informer of `K` (the full objects).
    pub fn new(url: &str, namespace: Option<&str>, mode: ListMode, keep_mf: bool) -> Self {
        let factory = kinform_factory(url, namespace, mode, keep_mf);
        let informer = factory.informer::<K>();
        Self::with(factory, informer)
    }
}

impl Kinform<PartialObjectMetadata> {
    /// The metadata-only informer of `K` (`PartialObjectMetadata`, the cache holds
    /// `metadata` alone).
    pub fn metadata<K: kinform::Resource>(url: &str, mode: ListMode, keep_mf: bool) -> Self {
        let factory = kinform_factory(url, None, mode, keep_mf);
        let informer = factory.metadata_informer(&K::api_resource());
        Self::with(factory, informer)
    }
}

impl<K: kinform::HasMetadata> Kinform<K> {
    fn with(factory: InformerFactory, informer: Arc<SharedIndexInformer<K>>) -> Self {
        let counter = Arc::new(Counter::default());
        let updates = Arc::new(Counter::default());
        let (c, u) = (counter.clone(), updates.clone());
        informer.add_event_handler(
            EventHandlerFns::new()
                .on_add(move |_: &Arc<K>, _| c.hit())
                .on_update(move |_: &Arc<K>, _: &Arc<K>| u.hit()),
        );
        Self {
            factory,
            informer,
            counter,
            updates,
        }
    }

    pub fn metrics(&self) -> kinform::reflector::MetricsSnapshot {
        self.informer.metrics()
    }
}

impl<K: kinform::HasMetadata> Client for Kinform<K> {
    async fn synced(&self) -> u64 {
        self.factory.start();
        self.informer.wait_for_sync().await;
        self.informer.store().len() as u64
    }
    fn lists(&self) -> u64 {
        self.informer.metrics().lists
    }
    fn idle(&self) -> bool {
        self.informer.pending_notifications() == 0
    }
    fn updates(&self) -> &Counter {
        &self.updates
    }
    fn queued(&self) -> Option<(u64, u64)> {
        Some((
            self.informer.metrics().watch_events,
            self.informer.pending_notifications() as u64,
        ))
    }
}

/// kube-rs's watcher + reflector store, its stream consumed by one counting "handler".
pub struct Kube<K: kube::Resource<DynamicType = ()> + Clone + 'static> {
    reader: Store<K>,
    inits: Arc<AtomicU64>,
    pub counter: Arc<Counter>,
    updates: Arc<Counter>,
}

impl<K> Kube<K>
where
    K: kube::Resource<DynamicType = (), Scope = k8s_openapi::NamespaceResourceScope>
        + Clone
        + serde::de::DeserializeOwned
        + std::fmt::Debug
        + Send
        + Sync
        + 'static,
{
    pub fn new(url: &str, namespace: Option<&str>, streaming: bool, drop_mf: bool) -> Self {
        let client = kube_client(url);
        let api: kube::Api<K> = match namespace {
            Some(ns) => kube::Api::namespaced(client, ns),
            None => kube::Api::all(client),
        };
        let mut config = watcher::Config::default();
        if streaming {
            config = config.streaming_lists();
        }
        let (reader, writer) = reflector::store();
        let counter = Arc::new(Counter::default());
        let inits = Arc::new(AtomicU64::new(0));
        let stream = watch_fn(api, config)
            .default_backoff()
            .modify(move |o: &mut K| {
                if drop_mf {
                    o.meta_mut().managed_fields = None;
                }
            });
        let updates = Arc::new(Counter::default());
        let (c, i, u) = (counter.clone(), inits.clone(), updates.clone());
        tokio::spawn(reflector::reflector(writer, stream).for_each(move |ev| {
            match ev {
                Ok(Event::InitApply(_)) => c.hit(),
                // kube-rs does not tell adds from updates after the initial list: an object
                // applied after it counts as both (the watch bursts add ConfigMaps, the
                // update bursts change cached pods).
                Ok(Event::Apply(_)) => {
                    c.hit();
                    u.hit();
                }
                Ok(Event::InitDone) => {
                    i.fetch_add(1, Ordering::SeqCst);
                }
                _ => {}
            }
            std::future::ready(())
        }));
        Self {
            reader,
            inits,
            counter,
            updates,
        }
    }
}

impl<K> Client for Kube<K>
where
    K: kube::Resource<DynamicType = ()> + Clone + 'static,
{
    async fn synced(&self) -> u64 {
        self.reader.wait_until_ready().await.expect("writer alive");
        self.reader.len() as u64
    }
    fn lists(&self) -> u64 {
        self.inits.load(Ordering::SeqCst)
    }
    fn idle(&self) -> bool {
        true
    }
    fn updates(&self) -> &Counter {
        &self.updates
    }
}

#[derive(Deserialize)]
struct List<T> {
    items: Vec<T>,
}

/// The floor of a sync: one GET of the whole list at `path`, then one
/// `serde_json::from_slice` of those bytes into `K`s on one thread (only the decode is
/// timed).
pub async fn floor_sync<K: serde::de::DeserializeOwned>(url: &str, path: &str) -> Figures {
    let client = whole_list_client(kinform::Config::new(url.parse().expect("url")));
    let req = http::Request::get(path).body(Vec::new()).unwrap();
    let bytes = client.request_text(req).await.expect("list").into_bytes();
    let start = Instant::now();
    let list: List<K> = serde_json::from_slice(&bytes).expect("decode");
    let secs = start.elapsed().as_secs_f64();
    eprintln!(
        "floor: {} bytes of list JSON, {} B/object",
        bytes.len(),
        bytes.len() / list.items.len().max(1)
    );
    Figures {
        objects: list.items.len() as u64,
        sync_secs: secs,
        sync_cpu_secs: secs,
        ..Figures::default()
    }
}

#[derive(Deserialize)]
struct WatchLine {
    #[serde(rename = "type")]
    _kind: String,
    object: ConfigMap,
}

/// The floor of a watch: the burst's ConfigMaps, as stored by the server, wrapped into the
/// server's watch lines and decoded one line at a time on one thread.
pub async fn floor_watch(url: &str, n: usize) -> Figures {
    let client = kinform_client(url);
    let req = http::Request::get("/api/v1/namespaces/kinform-watch/configmaps")
        .body(Vec::new())
        .unwrap();
    let text = client.request_text(req).await.expect("list");
    let list: List<Box<RawValue>> = serde_json::from_str(&text).expect("raw list");
    let lines: Vec<String> = list
        .items
        .iter()
        .take(n)
        .map(|o| format!("{{\"type\":\"ADDED\",\"object\":{}}}\n", o.get()))
        .collect();
    let start = Instant::now();
    let usage = crate::rss::usage();
    for l in &lines {
        let e: WatchLine = serde_json::from_str(l).expect("line");
        std::hint::black_box(e.object);
    }
    Figures::burst(lines.len() as u64, start.elapsed().as_secs_f64(), &usage)
}
