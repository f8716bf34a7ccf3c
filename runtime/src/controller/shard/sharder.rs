//! The sharder: the one replica (elected with the leader elector) that reads the members and
//! writes the shard labels.
//!
//! While leading it runs its own informer of the controlled type over every object (and of
//! each owned type), and makes an assignment pass after every change it is notified of and
//! at least every `retry_period`: it refreshes the [`MemberTable`], computes each object's
//! [`Step`] and writes it as a JSON merge patch of the labels carrying the object's
//! `resourceVersion` (409 Conflict on a stale decision; the next pass decides again on
//! fresher data). An object whose write is in flight, or whose cached version is the one
//! already written from, is not written again. Owned objects get their owner's shard label.
//!
//! Its informers cache metadata only ([`PartialObjectMetadata`], client-go's
//! `metadatainformer`: the request's `Accept` asks for
//! `application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1`, which kube-apiserver
//! answers for every list, watch and write): labels, owner references and the
//! resourceVersion are all a decision reads, so the sharder's extra cache costs a fraction of
//! a full copy of every object, whatever the objects' spec and status hold.

use std::collections::{HashMap, HashSet};
use std::marker::PhantomData;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use futures_util::{StreamExt, stream};
use serde_json::json;
use tokio::sync::Notify;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::membership::{Change, lease_name, refresh};
use super::plan::{Step, plan};
use super::{Shared, write_labels};
use crate::controller::owner_key;
use crate::events::{EventRecorder, NewEvent, RecorderConfig};
use crate::fifo::Deleted;
use crate::informer::{EventHandler, InformerFactory, InformerScope, Registration};
use kinform_client::PartialObjectMetadata;
use kinform_core::resource::{ApiResource, HasMetadata, Resource};

/// How many label writes one pass keeps in flight.
const CONCURRENT_WRITES: usize = 32;

/// Wakes the sharder on any change of a watched object.
struct Wake(Arc<Notify>);

impl<K: HasMetadata> EventHandler<K> for Wake {
    fn on_add(&self, _: &Arc<K>, _: bool) {
        self.0.notify_one();
    }
    fn on_update(&self, _: &Arc<K>, _: &Arc<K>) {
        self.0.notify_one();
    }
    fn on_delete(&self, _: &Deleted<K>) {
        self.0.notify_one();
    }
}

/// Labels the objects of one owned type with their owner's shard.
pub(crate) trait OwnedLabeller: Send + Sync {
    /// Starts watching the type in the sharder's factory; changes wake `notify`.
    fn register(&self, factory: &InformerFactory, notify: Arc<Notify>) -> Box<dyn Send + Sync>;
    /// Whether the type's informer has its initial list.
    fn has_synced(&self, factory: &InformerFactory) -> bool;
    /// Copies each owner's shard label (`owners`: owner key to label) onto its objects.
    fn pass<'a>(
        &'a self,
        factory: &'a InformerFactory,
        owners: &'a HashMap<String, String>,
        shared: &'a Shared,
    ) -> BoxFuture<'a, ()>;
}

struct Owned<K, C>(PhantomData<fn() -> (K, C)>);

/// The labeller of the `C`s controlled by a `K`.
pub(crate) fn owned_labeller<K: Resource, C: Resource>() -> Arc<dyn OwnedLabeller> {
    Arc::new(Owned::<K, C>(PhantomData))
}

impl<K: Resource, C: Resource> OwnedLabeller for Owned<K, C> {
    fn register(&self, factory: &InformerFactory, notify: Arc<Notify>) -> Box<dyn Send + Sync> {
        Box::new(
            factory
                .metadata_informer(&C::api_resource())
                .add_event_handler(Wake(notify)),
        )
    }

    fn has_synced(&self, factory: &InformerFactory) -> bool {
        factory.metadata_informer(&C::api_resource()).has_synced()
    }

    fn pass<'a>(
        &'a self,
        factory: &'a InformerFactory,
        owners: &'a HashMap<String, String>,
        shared: &'a Shared,
    ) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let label = &shared.labels.shard;
            let resource = C::api_resource();
            let todo: Vec<(Arc<PartialObjectMetadata>, &String)> = factory
                .metadata_lister(&resource)
                .list_all()
                .into_iter()
                .filter_map(|c| {
                    let owner = owners.get(&owner_key::<K, _>(&*c)?)?;
                    (c.labels().get(label) != Some(owner)).then_some((c, owner))
                })
                .collect();
            let resource = &resource;
            stream::iter(todo)
                .for_each_concurrent(CONCURRENT_WRITES, |(c, owner)| async move {
                    if let Err(error) =
                        write_labels(shared, resource, &*c, json!({ label: owner })).await
                    {
                        tracing::debug!(key = %c.key(), %error, "cannot label an owned object");
                    }
                })
                .await;
        })
    }
}

/// A drain mark the sharder wrote: to whom, and when.
struct Draining {
    to: String,
    since: Instant,
}

/// Runs the assignment until `leading` is cancelled.
pub(crate) async fn run_sharder<K: Resource>(
    shared: Arc<Shared>,
    scope: InformerScope,
    owned: Vec<Arc<dyn OwnedLabeller>>,
    leading: CancellationToken,
) {
    tracing::info!(controller = %shared.controller, identity = %shared.config.identity, "became the sharder");
    shared.set_sharder(true);
    let mut builder = InformerFactory::builder(shared.client.clone());
    if let Some(ns) = &scope.namespace {
        builder = builder.namespace(ns.clone());
    }
    if let Some(sel) = &scope.label_selector {
        builder = builder.label_selector(sel.clone());
    }
    if let Some(sel) = &scope.field_selector {
        builder = builder.field_selector(sel.clone());
    }
    let factory = builder.build();
    let notify = Arc::new(Notify::new());
    let resource = K::api_resource();
    let informer = factory.metadata_informer(&resource);
    let _registration: Registration<PartialObjectMetadata> =
        informer.add_event_handler(Wake(notify.clone()));
    let _owned_registrations: Vec<Box<dyn Send + Sync>> = owned
        .iter()
        .map(|o| o.register(&factory, notify.clone()))
        .collect();
    factory.start();
    let events = EventRecorder::new(
        shared.client.clone(),
        RecorderConfig::new("kinform.io/sharder", &shared.config.identity),
    );
    let lease_api = shared.lease_api();
    let mut reported: Vec<String> = Vec::new();
    let mut draining: HashMap<String, Draining> = HashMap::new();
    // Objects written from a given resourceVersion: not written again from the same one.
    let mut written: HashMap<String, String> = HashMap::new();
    let period = shared.config.timing.retry_period;
    loop {
        let synced = informer.has_synced() && owned.iter().all(|o| o.has_synced(&factory));
        if synced {
            let live = refresh(&lease_api, &shared.members).await;
            let change = Change {
                joined: live
                    .iter()
                    .filter(|m| !reported.contains(m))
                    .cloned()
                    .collect(),
                left: reported
                    .iter()
                    .filter(|m| !live.contains(m))
                    .cloned()
                    .collect(),
            };
            report(&shared, &events, &change);
            reported.clone_from(&live);
            pass(
                &shared,
                &resource,
                &informer.lister().list_all(),
                &live,
                &mut draining,
                &mut written,
            )
            .await;
            if !owned.is_empty() {
                let owners: HashMap<String, String> = informer
                    .lister()
                    .list_all()
                    .iter()
                    .filter_map(|o| Some((o.key(), o.labels().get(&shared.labels.shard)?.clone())))
                    .collect();
                for o in &owned {
                    o.pass(&factory, &owners, &shared).await;
                }
            }
        }
        tokio::select! {
            biased;
            _ = leading.cancelled() => break,
            _ = notify.notified() => {}
            _ = tokio::time::sleep(period) => {}
        }
    }
    shared.set_sharder(false);
    events.shutdown().await;
    factory.shutdown().await;
    tracing::info!(controller = %shared.controller, identity = %shared.config.identity, "stopped being the sharder");
}

/// Logs and records Events for a membership change.
fn report(shared: &Shared, events: &EventRecorder, change: &Change) {
    let namespace = &shared.config.lease_namespace;
    for (members, reason, note) in [
        (&change.joined, "ShardMemberJoined", "joined"),
        (&change.left, "ShardMemberLeft", "left"),
    ] {
        for member in members {
            tracing::info!(controller = %shared.controller, %member, "shard member {note}");
            let lease = k8s_openapi::api::coordination::v1::Lease {
                metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                    name: Some(lease_name(&shared.controller, member)),
                    namespace: Some(namespace.clone()),
                    ..Default::default()
                },
                spec: None,
            };
            events.record(
                &lease,
                NewEvent::normal(reason, "Shard").note(format!(
                    "member {member} {note} the shards of controller {}",
                    shared.controller
                )),
            );
        }
    }
}

/// One assignment pass over `objects` (of `resource`).
async fn pass(
    shared: &Shared,
    resource: &ApiResource,
    objects: &[Arc<PartialObjectMetadata>],
    live: &[String],
    draining: &mut HashMap<String, Draining>,
    written: &mut HashMap<String, String>,
) {
    let labels = &shared.labels;
    let mut counts = std::collections::BTreeMap::new();
    for m in live {
        counts.insert(m.clone(), 0usize);
    }
    let mut present = HashSet::with_capacity(objects.len());
    let mut todo: Vec<(Arc<PartialObjectMetadata>, Step)> = Vec::new();
    for obj in objects {
        let key = obj.key();
        let shard = obj.labels().get(&labels.shard).map(String::as_str);
        let drain = obj.labels().get(&labels.drain).map(String::as_str);
        if let Some(s) = shard
            && let Some(n) = counts.get_mut(s)
        {
            *n += 1;
        }
        if let Some(d) = draining.get(&key)
            && shard == Some(d.to.as_str())
            && drain.is_none()
        {
            shared.count_move();
            shared.count_handover(d.since.elapsed().as_secs_f64());
            draining.remove(&key);
        }
        let step = plan(&key, shard, drain, live);
        if step != Step::Keep
            && written.get(&key).map(String::as_str) != Some(obj.resource_version())
        {
            if let Step::Assign(_) = step
                && shard.is_some_and(|s| !s.is_empty())
            {
                shared.count_move();
                draining.remove(&key);
            }
            todo.push((obj.clone(), step));
        }
        present.insert(key);
    }
    draining.retain(|k, _| present.contains(k));
    written.retain(|k, _| present.contains(k));
    shared.set_view(live, counts);
    let results: Vec<(String, String, Step, bool)> = stream::iter(todo)
        .map(|(obj, step)| async move {
            let body = match &step {
                Step::Assign(to) => json!({ &labels.shard: to, &labels.drain: null }),
                Step::Drain(to) => json!({ &labels.drain: to }),
                Step::CancelDrain | Step::Keep => json!({ &labels.drain: null }),
            };
            let ok = match write_labels(shared, resource, &*obj, body).await {
                Ok(()) => true,
                Err(error) => {
                    tracing::debug!(key = %obj.key(), %error, "cannot write the shard labels");
                    false
                }
            };
            (obj.key(), obj.resource_version().to_owned(), step, ok)
        })
        .buffer_unordered(CONCURRENT_WRITES)
        .collect()
        .await;
    for (key, rv, step, ok) in results {
        if !ok {
            continue;
        }
        written.insert(key.clone(), rv);
        match step {
            Step::Drain(to) => {
                if draining.get(&key).is_none_or(|d| d.to != to) {
                    draining.insert(
                        key,
                        Draining {
                            to,
                            since: Instant::now(),
                        },
                    );
                }
            }
            Step::CancelDrain => {
                draining.remove(&key);
            }
            Step::Assign(_) | Step::Keep => {}
        }
    }
}
