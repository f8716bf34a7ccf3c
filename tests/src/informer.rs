//! Shared helpers of the informer integration tests: a TestApiServer, clients, a recording
//! handler and the checks of the informer contract.
//!
//! The contract holds whichever form the cache keeps objects in: the tests are written over
//! [`PodCache`] (a `Pod`, or the lean cache's `Lean<Pod>`) and instantiated for both by
//! [`for_each_cache!`](crate::for_each_cache).

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use kinform::client::{DeleteParams, Patch, PatchParams, PostParams};
use kinform::fifo::Deleted;
use kinform::informer::{
    EventHandler, InformerFactory, InformerFactoryBuilder, SharedIndexInformer,
};
use kinform::testing::TestApiServer;
use kinform::{Api, Client, HasMetadata, Lean, ListParams, Resource};
use parking_lot::Mutex;

/// What an informer of pods may cache: the `Pod` itself (the default cache) or the lean
/// cache's `Lean<Pod>`.
pub trait PodCache: Resource + std::fmt::Debug {}
impl PodCache for Pod {}
impl PodCache for Lean<Pod> {}

/// Instantiates generic test functions (`async fn name<K: PodCache>()`) as tokio tests for
/// each form of the cache: `default_cache::name` (`Pod`) and `lean_cache::name`
/// (`Lean<Pod>`), so that one test body checks the informer contract for both.
#[macro_export]
macro_rules! for_each_cache {
    ($($test:ident),* $(,)?) => {
        mod default_cache {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $test() {
                    super::$test::<k8s_openapi::api::core::v1::Pod>().await
                }
            )*
        }
        mod lean_cache {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $test() {
                    super::$test::<kinform::Lean<k8s_openapi::api::core::v1::Pod>>().await
                }
            )*
        }
    };
}

/// A client of `server` that retries a failed request `retries` times.
pub fn client(server: &TestApiServer, retries: u32) -> Client {
    server
        .client_with(|config| config.max_retries = retries)
        .expect("a client of the test server")
}

/// How every test of kinform gets an informer factory: a builder with the test-sized
/// reflector backoff ([`InformerFactoryBuilder::test_backoff`]: 20 ms to 300 ms), the
/// default of kinform's test support, so that a test whose server drops watches or fails
/// requests converges in seconds, not minutes. The library's own default stays client-go's
/// (800 ms to 30 s), the right one against a cluster.
pub fn factory_builder(client: Client) -> InformerFactoryBuilder {
    InformerFactory::builder(client).test_backoff()
}

/// A [`factory_builder`] factory that also lists in pages of 20 and retries a failed page
/// up to 50 times (the fault tests' pagination).
pub fn fast_factory(client: Client) -> InformerFactory {
    factory_builder(client)
        .tweak_reflector(|c| {
            c.max_page_retries = 50;
            c.page_size = 20;
        })
        .build()
}

/// A pod `default/name` labelled `app=test` and `gen=<generation>`.
pub fn pod(name: &str, generation: u32) -> Pod {
    serde_json::from_value(serde_json::json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": "test", "gen": generation.to_string()}},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]}
    }))
    .unwrap()
}

/// What a handler saw of one key, in order.
#[derive(Clone, Debug, PartialEq)]
pub enum Seen {
    /// `on_add(resourceVersion, in_initial_list)`.
    Add(u64, bool),
    /// `on_update(old resourceVersion, new resourceVersion)`.
    Update(u64, u64),
    /// `on_delete(last known resourceVersion, whether it was a tombstone)`.
    Delete(Option<u64>, bool),
}

fn rv<K: HasMetadata>(p: &K) -> u64 {
    p.resource_version().parse().unwrap_or(0)
}

#[derive(Default)]
/// Everything one handler saw, per key.
pub struct Recorder {
    /// Key -> what the handler was told, in order.
    pub seen: Mutex<HashMap<String, Vec<Seen>>>,
}

/// A handler recording into a shared [`Recorder`].
pub struct Rec(pub Arc<Recorder>);

impl<K: HasMetadata> EventHandler<K> for Rec {
    fn on_add(&self, obj: &Arc<K>, initial: bool) {
        self.0
            .seen
            .lock()
            .entry(obj.key())
            .or_default()
            .push(Seen::Add(rv(&**obj), initial));
    }
    fn on_update(&self, old: &Arc<K>, new: &Arc<K>) {
        self.0
            .seen
            .lock()
            .entry(new.key())
            .or_default()
            .push(Seen::Update(rv(&**old), rv(&**new)));
    }
    fn on_delete(&self, d: &Deleted<K>) {
        let key = d.key().to_key();
        let (r, tomb) = match d {
            Deleted::Object(o) => (Some(rv(&**o)), false),
            Deleted::FinalStateUnknown { last_known, .. } => (last_known.as_deref().map(rv), true),
        };
        self.0
            .seen
            .lock()
            .entry(key)
            .or_default()
            .push(Seen::Delete(r, tomb));
    }
}

/// A test server holding pods `p0`..`p{n-1}` in `default` (from [`pod`]), and an `Api` on them.
pub async fn server_with_pods(n: u32) -> (TestApiServer, Api<Pod>) {
    let server = TestApiServer::start().await.unwrap();
    let api: Api<Pod> = Api::namespaced(client(&server, 3), "default");
    for i in 0..n {
        api.create(&PostParams::default(), &pod(&format!("p{i}"), i))
            .await
            .unwrap();
    }
    (server, api)
}

/// Waits until `f` holds ([`crate::eventually`] for a plain condition); panics after 10 s.
pub async fn until(mut f: impl FnMut() -> bool) {
    assert!(
        crate::eventually(Duration::from_secs(10), async || f()).await,
        "condition not reached"
    );
}

/// The server's pods, key -> resourceVersion.
pub async fn server_state(api: &Api<Pod>) -> BTreeMap<String, u64> {
    loop {
        match api.list(&ListParams::default()).await {
            Ok(list) => return list.items.iter().map(|p| (p.key(), rv(p))).collect(),
            Err(e) => tracing::debug!(%e, "retrying the reference list"),
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The informer's cached pods, key -> resourceVersion.
pub fn cache_state<K: HasMetadata>(informer: &SharedIndexInformer<K>) -> BTreeMap<String, u64> {
    informer
        .store()
        .list()
        .iter()
        .map(|p| (p.key(), rv(&**p)))
        .collect()
}

/// Creates, updates and deletes pods for `rounds` rounds; tolerates failed requests (the
/// server decides what happened). Returns the keys ever created.
pub async fn churn(api: &Api<Pod>, rounds: u32, mut fault: impl FnMut(u32)) -> Vec<String> {
    let mut keys = Vec::new();
    for round in 0..rounds {
        fault(round);
        // 23 is prime to 5: every name meets every operation.
        let name = format!("p{}", (round * 7) % 23);
        match round % 5 {
            0 | 1 => {
                if api
                    .create(&PostParams::default(), &pod(&name, round))
                    .await
                    .is_ok()
                {
                    keys.push(format!("default/{name}"));
                }
            }
            2 | 3 => {
                let patch = serde_json::json!({"metadata": {"labels": {"gen": round.to_string()}}});
                let _ = api
                    .patch(&name, &PatchParams::default(), &Patch::Merge(patch))
                    .await;
            }
            _ => {
                let _ = api.delete(&name, &DeleteParams::default()).await;
            }
        }
        tokio::time::sleep(Duration::from_millis(3)).await;
    }
    keys
}

/// The informer contract for one handler, per key: updates chain (each update starts from
/// the state the handler saw last), resourceVersions never go back, and the history ends in
/// the server's final state (present with its RV, or deleted).
pub fn check_history(
    name: &str,
    seen: &HashMap<String, Vec<Seen>>,
    server: &BTreeMap<String, u64>,
) -> Result<(), String> {
    for (key, events) in seen {
        let fail = |what: &str| Err(format!("{name} {key}: {what}: {events:?}"));
        let mut last: Option<u64> = None;
        let mut live = false;
        for e in events {
            match *e {
                Seen::Add(r, _) => {
                    if live {
                        return fail("add while live");
                    }
                    if last.is_some_and(|l| r <= l) {
                        return fail("RV went back");
                    }
                    last = Some(r);
                    live = true;
                }
                Seen::Update(old, new) => {
                    if !live {
                        return fail("update while deleted");
                    }
                    if Some(old) != last {
                        return fail("update from a state not seen");
                    }
                    if new < old {
                        return fail("RV went back");
                    }
                    last = Some(new);
                }
                Seen::Delete(r, tomb) => {
                    if !live {
                        return fail("delete while deleted");
                    }
                    if !tomb && r.zip(last).is_some_and(|(r, l)| r < l) {
                        return fail("RV went back");
                    }
                    live = false;
                }
            }
        }
        match server.get(key) {
            Some(&want) if !live || last != Some(want) => {
                return fail(&format!("does not end in the server's state {want}"));
            }
            None if live => return fail("deleted on the server but no on_delete"),
            _ => {}
        }
    }
    match server.keys().find(|k| !seen.contains_key(*k)) {
        Some(k) => Err(format!("{name}: never told about {k}")),
        None => Ok(()),
    }
}

/// A test server preloaded with `pods` realistic pods (managedFields included, in
/// namespace `ns-0`) whose `ManagedFieldsOptOut` feature gate (KEP-5958) is on or off, a
/// [`Proxy`](crate::proxy::Proxy) in front of it counting the bytes its clients read, and
/// a client that goes through the proxy.
pub async fn opt_out_server(
    gate: bool,
    pods: usize,
) -> (TestApiServer, crate::proxy::Proxy, Client) {
    let mut builder = TestApiServer::builder().pods(pods);
    if gate {
        builder = builder.managed_fields_opt_out();
    }
    let server = builder.start().await.expect("server");
    let proxy = crate::proxy::Proxy::start(server.addr()).await;
    let mut config = server.client_config();
    config.cluster_url = proxy.url().parse().expect("the proxy's URL");
    let client = Client::new(config).expect("a client through the proxy");
    (server, proxy, client)
}
