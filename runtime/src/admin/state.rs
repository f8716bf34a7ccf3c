//! What the admin endpoint reports, computed at each request from the factories' informer
//! snapshots and the controllers' status handles: the readiness checks, the JSON state page
//! and (feature `prometheus`) the metrics text.

use serde_json::{Value, json};

use super::Sources;
use crate::controller::{ControllerPhase, ControllerSnapshot};
use crate::informer::InformerSnapshot;

/// The readiness checks, each a name and its result: every started informer synced, every
/// controller ready ([`ControllerSnapshot::readiness`]). Informers not started are not
/// checked: a cold standby's are not, and its controller's check says why it is not ready.
pub(crate) fn readiness(sources: &Sources) -> Vec<(String, Result<(), String>)> {
    let mut checks = Vec::new();
    for informer in sources.factories.iter().flat_map(|f| f.informers()) {
        if !informer.started {
            continue;
        }
        let result = if informer.synced {
            Ok(())
        } else {
            Err("not synced yet".to_owned())
        };
        checks.push((format!("informer {}", describe(&informer)), result));
    }
    for controller in &sources.controllers {
        let snapshot = controller.snapshot();
        checks.push((
            format!("controller {}", snapshot.name),
            snapshot.readiness(),
        ));
    }
    checks
}

/// An informer told apart from the others of its factory: name, cached type, selectors.
fn describe(informer: &InformerSnapshot) -> String {
    let mut out = format!("{} ({})", informer.name, informer.cache_type);
    if let Some(s) = &informer.scope.label_selector {
        out.push_str(&format!(" labels {s}"));
    }
    if let Some(s) = &informer.scope.field_selector {
        out.push_str(&format!(" fields {s}"));
    }
    out
}

/// The `/debug/state` document.
pub(crate) fn state(sources: &Sources) -> Value {
    let informers: Vec<Value> = sources
        .factories
        .iter()
        .flat_map(|f| f.informers())
        .map(|i| informer(&i))
        .collect();
    let snapshots: Vec<ControllerSnapshot> =
        sources.controllers.iter().map(|c| c.snapshot()).collect();
    let leases: Vec<Value> = snapshots.iter().flat_map(leases).collect();
    json!({
        "informers": informers,
        "controllers": snapshots.iter().map(controller).collect::<Vec<_>>(),
        "leases": leases,
    })
}

fn informer(i: &InformerSnapshot) -> Value {
    let r = &i.reflector;
    json!({
        "name": i.name,
        "resource": i.resource.to_string(),
        "type": i.cache_type,
        "namespace": i.scope.namespace,
        "labelSelector": i.scope.label_selector,
        "fieldSelector": i.scope.field_selector,
        "started": i.started,
        "running": i.running,
        "synced": i.synced,
        "objects": i.objects,
        "lastResourceVersion": r.last_resource_version,
        "lists": r.lists,
        "listPages": r.list_pages,
        "listErrors": r.list_errors,
        "watches": r.watches,
        "shortWatches": r.short_watches,
        "watchErrors": r.watch_errors,
        "itemsListed": r.items_listed,
        "watchEvents": r.watch_events,
        "pendingNotifications": i.pending_notifications,
    })
}

fn controller(c: &ControllerSnapshot) -> Value {
    let readiness = c.readiness();
    let by_priority: Vec<Value> = c
        .queue
        .depth_by_priority
        .iter()
        .map(|(p, n)| json!({"priority": p.0, "depth": n}))
        .collect();
    json!({
        "name": c.name,
        "phase": c.phase.as_str(),
        "ready": readiness.is_ok(),
        "notReady": readiness.err(),
        "cachesSynced": c.caches_synced,
        "queue": {
            "depth": c.queue.depth,
            "depthByPriority": by_priority,
            "processing": c.queue.processing,
            "priorityQueue": c.queue.priority_queue,
        },
        "reconciles": {
            "total": c.stats.reconciles,
            "successes": c.stats.successes,
            "requeues": c.stats.requeues,
            "errors": c.stats.errors,
            "panics": c.stats.panics,
        },
        "election": c.election.as_ref().map(|e| json!({
            "lease": format!("{}/{}", e.lease_namespace, e.lease_name),
            "identity": e.identity,
            "warmStandby": e.warm_standby,
            "leading": e.leading,
            "holder": e.holder,
            "terms": e.terms,
        })),
        "shard": c.shard.as_ref().map(|s| json!({
            "identity": s.identity,
            "isSharder": s.stats.is_sharder,
            "cached": s.stats.cached,
            "rejoins": s.stats.rejoins,
            "released": s.stats.released,
            "members": s.stats.members,
            "assignmentFailures": s.stats.assignment_failures,
        })),
    })
}

/// The Leases a controller holds or competes for.
fn leases(c: &ControllerSnapshot) -> Vec<Value> {
    let mut out = Vec::new();
    if let Some(e) = &c.election {
        out.push(json!({
            "namespace": e.lease_namespace,
            "name": e.lease_name,
            "controller": c.name,
            "purpose": "leader",
            "identity": e.identity,
            "held": e.leading,
            "holder": e.holder,
        }));
    }
    if let Some(s) = &c.shard {
        if let Some(name) = &s.member_lease {
            out.push(json!({
                "namespace": s.lease_namespace,
                "name": name,
                "controller": c.name,
                "purpose": "shard-member",
                "identity": s.identity,
                "held": c.phase == ControllerPhase::Running,
            }));
        }
        if let Some(name) = &s.sharder_lease {
            out.push(json!({
                "namespace": s.lease_namespace,
                "name": name,
                "controller": c.name,
                "purpose": "sharder",
                "identity": s.identity,
                "held": s.stats.is_sharder,
            }));
        }
    }
    out
}

/// `/metrics`: the registry's families, then the factories' informer families the registry
/// does not have, in the Prometheus text format.
#[cfg(feature = "prometheus")]
pub(crate) fn metrics(sources: &Sources) -> super::routes::Reply {
    use hyper::StatusCode;
    use prometheus::Encoder;
    use prometheus::core::Collector;

    use crate::informer::PrometheusInformerMetrics;

    let mut families = sources.registry.gather();
    let has = |families: &[prometheus::proto::MetricFamily], name: &str| {
        families.iter().any(|f| f.name() == name)
    };
    let has_informers = PrometheusInformerMetrics::names().any(|n| has(&families, n));
    if !has_informers && !sources.factories.is_empty() {
        families.extend(PrometheusInformerMetrics::of(&sources.factories).collect());
    }
    for family in controller_families(sources) {
        if !has(&families, family.name()) {
            families.push(family);
        }
    }
    let encoder = prometheus::TextEncoder::new();
    let mut body = Vec::new();
    match encoder.encode(&families, &mut body) {
        Ok(()) => super::routes::Reply {
            status: StatusCode::OK,
            content_type: prometheus::TEXT_FORMAT,
            body,
        },
        Err(error) => super::routes::Reply::text(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("500 cannot encode the metrics: {error}\n"),
        ),
    }
}

/// The controllers' families, read from their status at each scrape:
/// `kinform_controller_ready{controller}` (1 when `/readyz` would pass it) and, for
/// leader-elected ones, client-go's `leader_election_master_status{name}` (1 while this
/// replica holds the Lease `name`).
#[cfg(feature = "prometheus")]
fn controller_families(sources: &Sources) -> Vec<prometheus::proto::MetricFamily> {
    use prometheus::core::Collector;
    use prometheus::{IntGaugeVec, Opts};

    let (Ok(ready), Ok(leading)) = (
        IntGaugeVec::new(
            Opts::new(
                "kinform_controller_ready",
                "Whether the controller is ready: caches synced, and leading or a warm standby",
            ),
            &["controller"],
        ),
        IntGaugeVec::new(
            Opts::new(
                "leader_election_master_status",
                "Whether this replica holds the leader Lease (1) or not (0)",
            ),
            &["name"],
        ),
    ) else {
        return Vec::new();
    };
    let mut any_election = false;
    for controller in &sources.controllers {
        let s = controller.snapshot();
        ready
            .with_label_values(&[s.name.as_str()])
            .set(i64::from(s.readiness().is_ok()));
        if let Some(e) = &s.election {
            any_election = true;
            leading
                .with_label_values(&[e.lease_name.as_str()])
                .set(i64::from(e.leading));
        }
    }
    let mut out = Vec::new();
    if !sources.controllers.is_empty() {
        out.extend(ready.collect());
    }
    if any_election {
        out.extend(leading.collect());
    }
    out
}
