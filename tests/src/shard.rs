//! Helpers of the sharding tests: a `Widget` custom resource, a witness that catches two
//! replicas reconciling one object at once, and replicas of a sharded controller, each with
//! its own client identity, run in one process.

use std::collections::{BTreeMap, HashMap};
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use futures_util::{StreamExt as _, stream};
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kinform::Client;
use kinform::client::{AuthConfig, Secret};
use kinform::client::{Patch, PatchParams, PostParams};
use kinform::controller::shard::{ShardHandle, ShardRole, ShardingConfig};
use kinform::controller::{Action, Controller, ReconcileStats, Request, controller_reference};
use kinform::informer::InformerFactory;
use kinform::leader::LeaderElectionConfig;
use kinform::testing::TestApiServer;
use kinform::{Api, HasMetadata, Resource, Scope};
use parking_lot::Mutex;
use serde::{Deserialize, Serialize};
use serde_json::json;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::proxy::Proxy;

/// `shard.example.com/v1` `Widget`: a `spec.value` that the controller copies into the
/// `observed` annotation.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Widget {
    /// Standard metadata.
    pub metadata: ObjectMeta,
    /// The spec.
    #[serde(default)]
    pub spec: WidgetSpec,
}

/// A Widget's spec.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct WidgetSpec {
    /// The value to observe.
    #[serde(default)]
    pub value: i64,
    /// Bytes that only make the object bigger (the benchmark's object size).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub payload: String,
}

impl HasMetadata for Widget {
    fn metadata(&self) -> &ObjectMeta {
        &self.metadata
    }
    fn metadata_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

impl Resource for Widget {
    const GROUP: &'static str = "shard.example.com";
    const VERSION: &'static str = "v1";
    const API_VERSION: &'static str = "shard.example.com/v1";
    const KIND: &'static str = "Widget";
    const PLURAL: &'static str = "widgets";
    const SCOPE: Scope = Scope::Namespaced;
}

/// A fresh `TestApiServer` with the Widget CRD, and the admin's Widgets in `default`.
pub async fn widget_server() -> (TestApiServer, Api<Widget>) {
    let server = TestApiServer::start().await.expect("the server starts");
    register_widgets(&server);
    let api = Api::namespaced(server.client().expect("a client"), "default");
    (server, api)
}

/// Registers the Widget CRD on `server` (one built with other options than
/// [`widget_server`]'s, e.g. RBAC on).
pub fn register_widgets(server: &TestApiServer) {
    server
        .register_crd(json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.shard.example.com"},
            "spec": {
                "group": "shard.example.com", "scope": "Namespaced",
                "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
                "versions": [{"name": "v1", "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                        "spec": {"type": "object", "properties": {
                            "value": {"type": "integer"}, "payload": {"type": "string"}}}}}}}]
            }
        }))
        .expect("the Widget CRD registers");
}

/// The name of the `i`th Widget of a test or benchmark (`w-00042`).
pub fn widget_name(i: usize) -> String {
    format!("w-{i:05}")
}

/// Creates Widgets `0..n` (value 0, `spec.payload` = `payload`), 32 at a time.
pub async fn create_widgets(api: &Api<Widget>, n: usize, payload: &str) {
    stream::iter(0..n)
        .for_each_concurrent(32, |i| async move {
            let mut w = widget(&widget_name(i), 0);
            w.spec.payload = payload.to_owned();
            api.create(&PostParams::default(), &w)
                .await
                .expect("create a widget");
        })
        .await;
}

/// Sets `spec.value` of the named Widgets with merge patches, 32 at a time.
pub async fn set_widget_values(
    api: &Api<Widget>,
    names: impl IntoIterator<Item = String>,
    value: i64,
) {
    stream::iter(names)
        .for_each_concurrent(32, |n| async move {
            api.patch(
                &n,
                &PatchParams::default(),
                &Patch::Merge(json!({"spec": {"value": value}})),
            )
            .await
            .expect("update a widget");
        })
        .await;
}

/// The Widget `default/name` with `spec.value = value`.
pub fn widget(name: &str, value: i64) -> Widget {
    Widget {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            namespace: Some("default".to_owned()),
            ..ObjectMeta::default()
        },
        spec: WidgetSpec {
            value,
            payload: String::new(),
        },
    }
}

/// Records which replica reconciles which key right now, and every overlap.
#[derive(Default)]
pub struct Witness {
    in_flight: Mutex<HashMap<String, String>>,
    /// Every violation seen: two replicas at once, or a reconcile of an object not labelled
    /// for the replica.
    pub violations: Mutex<Vec<String>>,
    /// Reconciles per replica.
    pub reconciles: Mutex<BTreeMap<String, u64>>,
}

/// Held while one reconcile runs.
pub struct Entered<'a> {
    witness: &'a Witness,
    key: String,
    owned: bool,
}

impl Drop for Entered<'_> {
    fn drop(&mut self) {
        if self.owned {
            self.witness.in_flight.lock().remove(&self.key);
        }
    }
}

impl Witness {
    /// A shared, empty witness.
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// Asserts that no violation was seen.
    ///
    /// # Panics
    ///
    /// With every violation, when there was one.
    pub fn assert_none(&self) {
        let violations = self.violations.lock().clone();
        assert!(violations.is_empty(), "violations: {violations:#?}");
    }

    /// Marks `key` as being reconciled by `replica` until the guard drops.
    pub fn enter(&self, key: &str, replica: &str) -> Entered<'_> {
        *self
            .reconciles
            .lock()
            .entry(replica.to_owned())
            .or_default() += 1;
        let mut in_flight = self.in_flight.lock();
        let owned = match in_flight.get(key) {
            Some(other) => {
                self.violations
                    .lock()
                    .push(format!("{key}: reconciled by {replica} while {other} was"));
                false
            }
            None => {
                in_flight.insert(key.to_owned(), replica.to_owned());
                true
            }
        };
        Entered {
            witness: self,
            key: key.to_owned(),
            owned,
        }
    }
}

/// Lease timing sized for tests: 4 s leases, 3 s renew deadline, 500 ms retry period (a
/// renew deadline shorter than a few seconds loses members to CPU starvation when the
/// server and every replica share two cores in a debug build).
pub fn test_timing() -> LeaderElectionConfig {
    LeaderElectionConfig {
        lease_duration: Duration::from_secs(4),
        renew_deadline: Duration::from_secs(3),
        retry_period: Duration::from_millis(500),
        release_on_cancel: false,
    }
}

/// How a replica of the Widget controller runs.
#[derive(Clone, Debug)]
pub struct ReplicaOptions {
    /// Sharded ([`test_timing`]); otherwise one plain controller that caches and reconciles
    /// every Widget (the benchmark's baseline).
    pub sharded: bool,
    /// The controller also owns ConfigMaps: the reconcile creates `cm-<widget>` controlled
    /// by the Widget.
    pub owns_configmaps: bool,
    /// A pause before the reconcile's write, widening the window in which a second replica
    /// would overlap (the tests' 2 ms; none when measuring throughput).
    pub overlap_window: Duration,
    /// Reconcile workers.
    pub workers: usize,
    /// What a sharded replica does (member and sharder candidate by default).
    pub role: ShardRole,
}

impl Default for ReplicaOptions {
    /// The tests' replica: sharded, 4 workers, a 2 ms overlap window, no owned type.
    fn default() -> Self {
        Self {
            sharded: true,
            owns_configmaps: false,
            overlap_window: Duration::from_millis(2),
            workers: 4,
            role: ShardRole::default(),
        }
    }
}

/// One running replica.
pub struct Replica {
    /// Its configured identity.
    pub identity: String,
    /// Its sharding handle (`None` for a plain controller).
    pub shard: Option<ShardHandle>,
    /// Its informer factory (scoped caches).
    pub factory: InformerFactory,
    /// Cancels it gracefully.
    pub stop: CancellationToken,
    /// Its run, returning the final counters.
    pub task: JoinHandle<ReconcileStats>,
}

impl Replica {
    /// Its sharding handle.
    ///
    /// # Panics
    ///
    /// When it is a plain controller.
    pub fn shard(&self) -> &ShardHandle {
        self.shard.as_ref().expect("a sharded replica")
    }

    /// How many Widgets its cache holds: those of its shard (the informer selecting its
    /// current shard label, [`ShardStats::cached`](kinform::controller::shard::ShardStats)),
    /// or all of them for a plain controller.
    pub fn cached(&self) -> usize {
        match &self.shard {
            Some(shard) => shard.stats().cached,
            None => self.factory.lister::<Widget>().store().len(),
        }
    }

    /// Stops it gracefully and waits.
    pub async fn shutdown(self) -> ReconcileStats {
        self.stop.cancel();
        let stats = self.task.await.expect("the replica's run does not panic");
        self.factory.shutdown().await;
        stats
    }
}

/// Starts replica `identity` of the sharded Widget controller on `server`, with a client
/// of its own identity (user `identity`). The reconcile copies `spec.value` into the
/// `observed` annotation (and `observed-by` names the replica), under the witness.
pub fn start_replica(server: &TestApiServer, identity: &str, witness: &Arc<Witness>) -> Replica {
    start_replica_with(server, identity, witness, &ReplicaOptions::default())
}

/// [`start_replica`] as `options` say (an owned type, a role).
pub fn start_replica_with(
    server: &TestApiServer,
    identity: &str,
    witness: &Arc<Witness>,
    options: &ReplicaOptions,
) -> Replica {
    let client = server
        .client_for(identity, &["system:authenticated"])
        .expect("a client of the test server");
    start_replica_on(client, identity, witness, options)
}

/// [`start_replica`] with a client that reaches `server` through `partition`, so the test
/// can cut this replica alone off the API server.
pub fn start_replica_behind(
    server: &TestApiServer,
    partition: &Proxy,
    identity: &str,
    witness: &Arc<Witness>,
) -> Replica {
    let mut config = server.client_config();
    config.cluster_url = partition.url().parse().expect("a proxy URL");
    config.auth = AuthConfig::Token(Secret::new(server.token_for(identity, &[])));
    let client = Client::new(config).expect("a client through the proxy");
    start_replica_on(client, identity, witness, &ReplicaOptions::default())
}

/// Starts replica `identity` of the Widget controller with `client` (its own identity),
/// as `options` say. The reconcile copies `spec.value` into the `observed` annotation (and
/// `observed-by` names the replica), under the witness, and records a violation when a
/// sharded replica reconciles a Widget not labelled for it.
pub fn start_replica_on(
    client: Client,
    identity: &str,
    witness: &Arc<Witness>,
    options: &ReplicaOptions,
) -> Replica {
    let factory = crate::controller::factory(client.clone());
    let mut builder = Controller::<Widget>::builder(&factory).workers(options.workers);
    if options.owns_configmaps {
        builder = builder.owns::<ConfigMap>();
    }
    if options.sharded {
        builder = builder
            .sharded(
                ShardingConfig::new("default", identity)
                    .timing(test_timing())
                    .role(options.role),
            )
            .expect("valid sharding config");
    }
    let controller = builder.build();
    let configmaps: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let shard = controller.shard();
    let stop = CancellationToken::new();
    let (me, w, handle) = (identity.to_owned(), witness.clone(), shard.clone());
    let configmaps = options.owns_configmaps.then_some(configmaps);
    let window = options.overlap_window;
    let api: Api<Widget> = Api::namespaced(client, "default");
    let task = tokio::spawn(controller.run(
        move |req: Request<Widget>| {
            let (me, w, api, handle) = (me.clone(), w.clone(), api.clone(), handle.clone());
            let configmaps = configmaps.clone();
            async move {
                let _entered = w.enter(&req.key, &me);
                let Some(obj) = req.object else {
                    return Ok::<_, Infallible>(Action::done());
                };
                if let Some(handle) = &handle {
                    let label = obj.labels().get(&handle.labels().shard);
                    if label.map(String::as_str) != Some(&*handle.identity()) {
                        w.violations.lock().push(format!(
                            "{}: {me} ({}) reconciled it labelled {label:?}",
                            req.key,
                            handle.identity()
                        ));
                    }
                }
                let want = obj.spec.value.to_string();
                if obj.annotations().get("observed") != Some(&want) {
                    if !window.is_zero() {
                        tokio::time::sleep(window).await;
                    }
                    let patch =
                        json!({"metadata": {"annotations": {"observed": want, "observed-by": me}}});
                    if let Err(e) = api
                        .patch(obj.name(), &PatchParams::default(), &Patch::Merge(patch))
                        .await
                        && !e.is_not_found()
                    {
                        tracing::warn!(error = %e, "reconcile write failed");
                        return Ok(Action::requeue_after(Duration::from_millis(50)));
                    }
                }
                if let Some(cms) = configmaps {
                    let cm = ConfigMap {
                        metadata: ObjectMeta {
                            name: Some(format!("cm-{}", obj.name())),
                            namespace: Some("default".to_owned()),
                            owner_references: Some(vec![controller_reference(&*obj)]),
                            ..ObjectMeta::default()
                        },
                        ..ConfigMap::default()
                    };
                    if let Err(e) = cms.create(&PostParams::default(), &cm).await
                        && !e.is_already_exists()
                    {
                        tracing::warn!(error = %e, "cannot create the owned ConfigMap");
                        return Ok(Action::requeue_after(Duration::from_millis(50)));
                    }
                }
                Ok(Action::done())
            }
        },
        stop.clone().cancelled_owned(),
    ));
    Replica {
        identity: identity.to_owned(),
        shard,
        factory,
        stop,
        task,
    }
}
