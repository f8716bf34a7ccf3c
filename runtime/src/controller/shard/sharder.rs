//! The sharder: the one replica (elected with the leader elector) that reads the members and
//! writes the shard labels.
//!
//! While leading it runs its own informer of the controlled type over every object (and of
//! each owned type), and makes an assignment pass after every change it is notified of. A
//! full pass, at least every `retry_period` and after each membership change, refreshes the
//! [`MemberTable`] and looks at every object; in between, a pass looks only at the objects
//! changed since the last one (a full scan per watch event would cost O(objects) per event).
//! A pass computes each object's [`Step`] and writes it as a JSON merge patch of the labels
//! carrying the object's `resourceVersion` (409 Conflict on a stale decision; the next pass
//! decides again on fresher data). An object whose write is in flight, or whose cached
//! version is the one already written from, is not written again. Owned objects get their
//! owner's shard label.
//! Any other failed write (a 403 of a missing `patch` verb, say) is a warning, a count in
//! `kinform_shard_assignment_failures_total` and, once per object and sharder term, a
//! Warning Event `ShardAssignmentFailed` about the object ([`Failures`]).
//!
//! Its informers cache metadata only ([`PartialObjectMetadata`], client-go's
//! `metadatainformer`: the request's `Accept` asks for
//! `application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1`, which kube-apiserver
//! answers for every list, watch and write): labels, owner references and the
//! resourceVersion are all a decision reads, so the sharder's extra cache costs a fraction of
//! a full copy of every object, whatever the objects' spec and status hold. A transform
//! (client-go's `SetTransform`) then keeps of each object only what a decision reads
//! ([`keep_what_the_sharder_reads`]).

use std::collections::{HashMap, HashSet};
use std::marker::PhantomData;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use futures_util::{StreamExt, stream};
use parking_lot::Mutex;
use serde_json::json;
use tokio::sync::Notify;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::membership::{Change, lease_name, refresh};
use super::plan::{ShardLabels, Step, plan};
use super::{Shared, write_labels};
use crate::controller::owner_key;
use crate::events::{EventRecorder, NewEvent, RecorderConfig, object_reference_with};
use crate::fifo::Deleted;
use crate::informer::{
    EventHandler, InformerFactory, InformerScope, Registration, SharedIndexInformer,
};
use crate::reflector::Transform;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kinform_client::PartialObjectMetadata;
use kinform_core::resource::{ApiResource, HasMetadata, Resource};

/// How many label writes one pass keeps in flight.
const CONCURRENT_WRITES: usize = 32;

/// Wakes the sharder on any change of a watched object, and records the keys of the
/// changed objects of the controlled type (`dirty`), so that a pass between two full ones
/// looks at those alone.
struct Wake {
    notify: Arc<Notify>,
    dirty: Option<Arc<Mutex<HashSet<String>>>>,
}

impl Wake {
    fn changed<K: HasMetadata>(&self, obj: &K) {
        if let Some(dirty) = &self.dirty {
            dirty.lock().insert(obj.key());
        }
        self.notify.notify_one();
    }
}

impl<K: HasMetadata> EventHandler<K> for Wake {
    fn on_add(&self, obj: &Arc<K>, _: bool) {
        self.changed(&**obj);
    }
    fn on_update(&self, _: &Arc<K>, new: &Arc<K>) {
        self.changed(&**new);
    }
    fn on_delete(&self, deleted: &Deleted<K>) {
        if let (Some(dirty), key) = (&self.dirty, deleted.key()) {
            dirty.lock().insert(key.to_string());
        }
        self.notify.notify_one();
    }
}

/// Keeps of `obj` what the sharder reads: name, namespace and resourceVersion (the key and
/// the write precondition), the shard and drain labels, and the controller reference (whose
/// shard an owned object follows). Everything else (other labels, annotations, finalizers,
/// timestamps, managedFields, the type fields) is dropped before the object is cached: in a
/// cache of every object, a label or annotation map alone is a B-tree node per object.
pub(crate) fn keep_what_the_sharder_reads(obj: &mut PartialObjectMetadata, labels: &ShardLabels) {
    let meta = std::mem::take(&mut obj.metadata);
    let kept_labels = meta.labels.and_then(|mut l| {
        l.retain(|k, _| *k == labels.shard || *k == labels.drain);
        (!l.is_empty()).then_some(l)
    });
    let controller = meta
        .owner_references
        .and_then(|refs| refs.into_iter().find(|r| r.controller == Some(true)));
    obj.types = None;
    obj.metadata = ObjectMeta {
        name: meta.name,
        namespace: meta.namespace,
        resource_version: meta.resource_version,
        labels: kept_labels,
        owner_references: controller.map(|c| vec![c]),
        ..ObjectMeta::default()
    };
}

/// Gives `informer` (one of the sharder's, not started yet) the sharder's transform.
fn project(informer: &SharedIndexInformer<PartialObjectMetadata>, labels: &ShardLabels) {
    let labels = labels.clone();
    let transform: Transform<PartialObjectMetadata> =
        Arc::new(move |obj| keep_what_the_sharder_reads(obj, &labels));
    // The sharder's own factory starts its informers after this: it cannot fail.
    let _ = informer.set_transform(Some(transform));
    // The transform drops managedFields: list decoding need not read it.
    let _ = informer.configure(|c| c.skip_managed_fields = true);
}

/// Labels the objects of one owned type with their owner's shard.
pub(crate) trait OwnedLabeller: Send + Sync {
    /// Starts watching the type in the sharder's factory (caching what
    /// [`keep_what_the_sharder_reads`] keeps); changes wake `notify`.
    fn register(
        &self,
        factory: &InformerFactory,
        labels: &ShardLabels,
        notify: Arc<Notify>,
    ) -> Box<dyn Send + Sync>;
    /// Whether the type's informer has its initial list.
    fn has_synced(&self, factory: &InformerFactory) -> bool;
    /// Copies each owner's shard label (`owners`: owner key to label) onto its objects.
    fn pass<'a>(
        &'a self,
        factory: &'a InformerFactory,
        owners: &'a HashMap<String, String>,
        shared: &'a Shared,
        failures: &'a Failures,
    ) -> BoxFuture<'a, ()>;
}

/// Reports the sharder's failed label writes: each one through
/// [`Shared::label_write_failed`] (a warning and the failure counter), and the first one of
/// each object in a sharder term as a Warning Event about the object. The sharder retries
/// a failed write at every pass; one Event per object keeps a missing verb from costing an
/// Event request per object and pass.
pub(crate) struct Failures {
    events: EventRecorder,
    recorded: Mutex<HashSet<String>>,
}

impl Failures {
    fn new(events: EventRecorder) -> Self {
        Self {
            events,
            recorded: Mutex::new(HashSet::new()),
        }
    }

    /// Reports a failed write of `obj`, an object of `resource`.
    fn report(
        &self,
        shared: &Shared,
        resource: &ApiResource,
        obj: &PartialObjectMetadata,
        error: &kinform_client::Error,
    ) {
        let Some(message) = shared.label_write_failed(resource, obj, error) else {
            return;
        };
        if !self
            .recorded
            .lock()
            .insert(format!("{resource} {}", obj.key()))
        {
            return;
        }
        self.events.publish(
            &object_reference_with(obj, resource),
            NewEvent::warning("ShardAssignmentFailed", "Shard").note(format!(
                "controller {}: cannot {} the shard labels of this object ({} {}): {message}",
                shared.controller,
                super::LABEL_WRITE_VERB,
                error
                    .code()
                    .map_or_else(|| "no answer".to_owned(), |c| c.to_string()),
                error
                    .status()
                    .and_then(|s| s.reason.as_deref())
                    .unwrap_or("error"),
            )),
        );
    }
}

struct Owned<K, C>(PhantomData<fn() -> (K, C)>);

/// The labeller of the `C`s controlled by a `K`.
pub(crate) fn owned_labeller<K: Resource, C: Resource>() -> Arc<dyn OwnedLabeller> {
    Arc::new(Owned::<K, C>(PhantomData))
}

impl<K: Resource, C: Resource> OwnedLabeller for Owned<K, C> {
    fn register(
        &self,
        factory: &InformerFactory,
        labels: &ShardLabels,
        notify: Arc<Notify>,
    ) -> Box<dyn Send + Sync> {
        let informer = factory.metadata_informer(&C::api_resource());
        project(&informer, labels);
        Box::new(informer.add_event_handler(Wake {
            notify,
            dirty: None,
        }))
    }

    fn has_synced(&self, factory: &InformerFactory) -> bool {
        factory.metadata_informer(&C::api_resource()).has_synced()
    }

    fn pass<'a>(
        &'a self,
        factory: &'a InformerFactory,
        owners: &'a HashMap<String, String>,
        shared: &'a Shared,
        failures: &'a Failures,
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
                        failures.report(shared, resource, &c, &error);
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
    if let Some(tweak) = shared.reflector.clone() {
        builder = builder.tweak_reflector(move |c| tweak(c));
    }
    let factory = builder.build();
    let notify = Arc::new(Notify::new());
    let resource = K::api_resource();
    let informer = factory.metadata_informer(&resource);
    project(&informer, &shared.labels);
    let dirty = Arc::new(Mutex::new(HashSet::new()));
    let _registration: Registration<PartialObjectMetadata> = informer.add_event_handler(Wake {
        notify: notify.clone(),
        dirty: Some(dirty.clone()),
    });
    let _owned_registrations: Vec<Box<dyn Send + Sync>> = owned
        .iter()
        .map(|o| o.register(&factory, &shared.labels, notify.clone()))
        .collect();
    factory.start();
    let events = EventRecorder::new(
        shared.client.clone(),
        RecorderConfig::new("kinform.io/sharder", &shared.config.identity),
    );
    let failures = Failures::new(events.clone());
    let lease_api = shared.lease_api();
    let mut reported: Vec<String> = Vec::new();
    let mut draining: HashMap<String, Draining> = HashMap::new();
    // Objects written from a given resourceVersion: not written again from the same one.
    let mut written: HashMap<String, String> = HashMap::new();
    let period = shared.config.timing.retry_period;
    let mut live: Vec<String> = Vec::new();
    // The last full pass: one at least every `period`, and after each membership change.
    let mut last_full: Option<Instant> = None;
    loop {
        let synced = informer.has_synced() && owned.iter().all(|o| o.has_synced(&factory));
        if synced {
            let due = last_full.is_none_or(|t| t.elapsed() >= period);
            if due {
                live = refresh(&lease_api, &shared.members).await;
            }
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
            let full = due || change != Change::default();
            report(&shared, &events, &change);
            reported.clone_from(&live);
            let lister = informer.lister();
            let objects = if full {
                dirty.lock().clear();
                last_full = Some(Instant::now());
                lister.list_all()
            } else {
                let keys = std::mem::take(&mut *dirty.lock());
                keys.iter().filter_map(|k| lister.get_by_key(k)).collect()
            };
            pass(
                &shared,
                &resource,
                &objects,
                full,
                &live,
                &mut draining,
                &mut written,
                &failures,
            )
            .await;
            if !owned.is_empty() {
                let owners: HashMap<String, String> = lister
                    .list_all()
                    .iter()
                    .filter_map(|o| Some((o.key(), o.labels().get(&shared.labels.shard)?.clone())))
                    .collect();
                for o in &owned {
                    o.pass(&factory, &owners, &shared, &failures).await;
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

/// One assignment pass over `objects` (of `resource`): every object when `full` (which also
/// counts the objects per shard and forgets what it remembers of deleted objects), else the
/// objects changed since the last pass.
#[allow(clippy::too_many_arguments)] // one private step of the sharder loop, called once
async fn pass(
    shared: &Shared,
    resource: &ApiResource,
    objects: &[Arc<PartialObjectMetadata>],
    full: bool,
    live: &[String],
    draining: &mut HashMap<String, Draining>,
    written: &mut HashMap<String, String>,
    failures: &Failures,
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
    if full {
        draining.retain(|k, _| present.contains(k));
        written.retain(|k, _| present.contains(k));
        shared.set_view(live, counts);
    }
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
                    failures.report(shared, resource, &obj, &error);
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

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
    use std::collections::BTreeMap;

    fn owner(name: &str, controller: Option<bool>) -> OwnerReference {
        OwnerReference {
            api_version: "example.com/v1".into(),
            kind: "Widget".into(),
            name: name.into(),
            uid: format!("uid-{name}"),
            controller,
            block_owner_deletion: None,
        }
    }

    #[test]
    fn the_sharders_cache_keeps_only_what_a_decision_reads() {
        let labels = ShardLabels::for_controller("widgets");
        let map = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
            pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect()
        };
        let mut obj: PartialObjectMetadata = serde_json::from_value(serde_json::json!({
            "apiVersion": "meta.k8s.io/v1",
            "kind": "PartialObjectMetadata",
            "metadata": {
                "name": "w", "namespace": "ns", "resourceVersion": "42", "uid": "u",
                "generation": 3, "creationTimestamp": "2026-01-01T00:00:00Z",
                "finalizers": ["f"], "annotations": {"observed": "1"},
                "labels": {"app": "x", &labels.shard: "r0", &labels.drain: "r1"},
                "managedFields": [{"manager": "m", "operation": "Update"}],
            }
        }))
        .unwrap();
        obj.metadata.owner_references =
            Some(vec![owner("other", None), owner("parent", Some(true))]);
        keep_what_the_sharder_reads(&mut obj, &labels);
        assert_eq!(obj.types, None);
        assert_eq!(
            obj.metadata,
            ObjectMeta {
                name: Some("w".into()),
                namespace: Some("ns".into()),
                resource_version: Some("42".into()),
                labels: Some(map(&[
                    (labels.shard.as_str(), "r0"),
                    (labels.drain.as_str(), "r1")
                ])),
                owner_references: Some(vec![owner("parent", Some(true))]),
                ..ObjectMeta::default()
            }
        );
        // No shard label and no controller: no map, no list.
        let mut bare = PartialObjectMetadata::default();
        bare.metadata.labels = Some(map(&[("app", "x")]));
        bare.metadata.owner_references = Some(vec![owner("other", Some(false))]);
        keep_what_the_sharder_reads(&mut bare, &labels);
        assert_eq!(bare.metadata, ObjectMeta::default());
    }
}
