//! Per-type printer columns of built-in resources, for the `Table` answers of `kubectl get`.
//!
//! kube-apiserver prints built-ins with the handlers of `pkg/printers/internalversion`: each
//! type has its own columns after `NAME` (`READY UP-TO-DATE AVAILABLE AGE` for
//! Deployments, `DATA AGE` for ConfigMaps, ...) and priority-1 columns that only `-o wide`
//! shows (`CONTAINERS IMAGES SELECTOR`). This module reproduces those columns and cells for
//! the resources users list most (workloads, pods, services, config, RBAC, nodes, leases,
//! CRDs, Events of both groups, component statuses) and for the `scale` subresource,
//! computed from the stored object as the real printers compute them; other resources get
//! `NAME` and `AGE` (module `table`). Cells that depend on controllers the test server does
//! not run (ready counts, job durations) show what the stored status says.
//! Written by hand: the printers are a list of small functions over JSON, no crate does this.

use serde_json::{Value, json};

use crate::handlers::negotiation::table::age;

/// One column: its header, OpenAPI type, priority (1: `-o wide` only) and format (`name`
/// for the column that holds the object's name).
///
/// Most printers start with `NAME`, which module `table` adds before their columns; a
/// printer that places the name elsewhere lists a [`NAME_WIDE`] column itself (Events: last,
/// `-o wide` only) and gives its cell.
pub(crate) struct Column {
    pub name: &'static str,
    pub ty: &'static str,
    pub priority: u32,
    pub format: &'static str,
}

const fn col(name: &'static str, ty: &'static str, priority: u32) -> Column {
    Column {
        name,
        ty,
        priority,
        format: "",
    }
}

/// The cells of one object, in column order (after `NAME`).
pub(crate) type Cells = fn(&Value) -> Vec<Value>;

const AGE: Column = col("Age", "string", 0);
const CONTAINERS: Column = col("Containers", "string", 1);
const IMAGES: Column = col("Images", "string", 1);
const SELECTOR: Column = col("Selector", "string", 1);
/// The name column of a printer that does not start with the name.
pub(crate) const NAME_WIDE: Column = Column {
    name: "Name",
    ty: "string",
    priority: 1,
    format: "name",
};

/// The printer of a built-in resource, by group and plural.
pub(crate) fn builtin(group: &str, plural: &str) -> Option<(&'static [Column], Cells)> {
    Some(match (group, plural) {
        ("", "pods") => (POD, pod),
        ("", "configmaps") => (CONFIGMAP, configmap),
        ("", "secrets") => (SECRET, secret),
        ("", "services") => (SERVICE, service),
        ("", "serviceaccounts") => (SERVICEACCOUNT, serviceaccount),
        ("", "namespaces") => (NAMESPACE, namespace),
        ("", "nodes") => (NODE, node),
        ("", "events") => (EVENT, core_event),
        ("", "componentstatuses") => (COMPONENTSTATUS, componentstatus),
        ("events.k8s.io", "events") => (EVENT, events_event),
        ("apps", "deployments") => (DEPLOYMENT, deployment),
        ("apps", "replicasets") => (REPLICASET, replicaset),
        ("apps", "statefulsets") => (STATEFULSET, statefulset),
        ("batch", "jobs") => (JOB, job),
        ("batch", "cronjobs") => (CRONJOB, cronjob),
        ("rbac.authorization.k8s.io", "roles" | "clusterroles") => (CREATED_AT, created_at),
        ("rbac.authorization.k8s.io", "rolebindings" | "clusterrolebindings") => {
            (ROLEBINDING, rolebinding)
        }
        ("coordination.k8s.io", "leases") => (LEASE, lease),
        ("apiextensions.k8s.io", "customresourcedefinitions") => (CREATED_AT, created_at),
        _ => return None,
    })
}

const POD: &[Column] = &[
    col("Ready", "string", 0),
    col("Status", "string", 0),
    col("Restarts", "string", 0),
    AGE,
    col("IP", "string", 1),
    col("Node", "string", 1),
    col("Nominated Node", "string", 1),
    col("Readiness Gates", "string", 1),
];

fn pod(o: &Value) -> Vec<Value> {
    let total = o["spec"]["containers"].as_array().map_or(0, Vec::len);
    let statuses = o["status"]["containerStatuses"].as_array();
    let ready = statuses.map_or(0, |s| {
        s.iter()
            .filter(|c| c["ready"].as_bool() == Some(true))
            .count()
    });
    let restarts: i64 = statuses.map_or(0, |s| {
        s.iter().filter_map(|c| c["restartCount"].as_i64()).sum()
    });
    let mut phase = o["status"]["reason"]
        .as_str()
        .or(o["status"]["phase"].as_str())
        .unwrap_or("Pending")
        .to_owned();
    if !o["metadata"]["deletionTimestamp"].is_null() {
        phase = "Terminating".into();
    }
    let gates = o["spec"]["readinessGates"].as_array().map_or(0, Vec::len);
    let gates = if gates == 0 {
        "<none>".to_owned()
    } else {
        let met = o["status"]["conditions"].as_array().map_or(0, |cs| {
            cs.iter()
                .filter(|c| {
                    c["status"] == "True"
                        && o["spec"]["readinessGates"]
                            .as_array()
                            .is_some_and(|g| g.iter().any(|g| g["conditionType"] == c["type"]))
                })
                .count()
        });
        format!("{met}/{gates}")
    };
    vec![
        json!(format!("{ready}/{total}")),
        json!(phase),
        json!(restarts.to_string()),
        created(o),
        or_none(&o["status"]["podIP"]),
        or_none(&o["spec"]["nodeName"]),
        or_none(&o["status"]["nominatedNodeName"]),
        json!(gates),
    ]
}

const CONFIGMAP: &[Column] = &[col("Data", "integer", 0), AGE];

fn configmap(o: &Value) -> Vec<Value> {
    vec![json!(len(&o["data"]) + len(&o["binaryData"])), created(o)]
}

const SECRET: &[Column] = &[col("Type", "string", 0), col("Data", "integer", 0), AGE];

fn secret(o: &Value) -> Vec<Value> {
    vec![
        o["type"].clone(),
        json!(len(&o["data"]) + len(&o["stringData"])),
        created(o),
    ]
}

const SERVICE: &[Column] = &[
    col("Type", "string", 0),
    col("Cluster-IP", "string", 0),
    col("External-IP", "string", 0),
    col("Port(s)", "string", 0),
    AGE,
    SELECTOR,
];

fn service(o: &Value) -> Vec<Value> {
    let spec = &o["spec"];
    let ty = spec["type"].as_str().unwrap_or("ClusterIP");
    let external_ips = strings(&spec["externalIPs"]);
    let external = match ty {
        "ExternalName" => spec["externalName"].as_str().unwrap_or_default().to_owned(),
        "LoadBalancer" => {
            let ingress: Vec<String> = o["status"]["loadBalancer"]["ingress"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|i| i["ip"].as_str().or(i["hostname"].as_str()))
                .map(str::to_owned)
                .chain(external_ips.iter().cloned())
                .collect();
            if ingress.is_empty() {
                "<pending>".to_owned()
            } else {
                ingress.join(",")
            }
        }
        _ if !external_ips.is_empty() => external_ips.join(","),
        _ => "<none>".to_owned(),
    };
    let ports: Vec<String> = spec["ports"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| {
            let proto = p["protocol"].as_str().unwrap_or("TCP");
            match p["nodePort"].as_i64() {
                Some(n) if n != 0 => format!("{}:{n}/{proto}", p["port"]),
                _ => format!("{}/{proto}", p["port"]),
            }
        })
        .collect();
    let cluster_ip = spec["clusterIP"].as_str().unwrap_or("<none>");
    vec![
        json!(ty),
        json!(if cluster_ip.is_empty() {
            "<none>"
        } else {
            cluster_ip
        }),
        json!(external),
        json!(if ports.is_empty() {
            "<none>".to_owned()
        } else {
            ports.join(",")
        }),
        created(o),
        json!(map_selector(&spec["selector"]).unwrap_or_else(|| "<none>".into())),
    ]
}

const SERVICEACCOUNT: &[Column] = &[col("Secrets", "integer", 0), AGE];

fn serviceaccount(o: &Value) -> Vec<Value> {
    vec![
        json!(o["secrets"].as_array().map_or(0, Vec::len)),
        created(o),
    ]
}

const NAMESPACE: &[Column] = &[col("Status", "string", 0), AGE];

fn namespace(o: &Value) -> Vec<Value> {
    vec![o["status"]["phase"].clone(), created(o)]
}

const NODE: &[Column] = &[
    col("Status", "string", 0),
    col("Roles", "string", 0),
    AGE,
    col("Version", "string", 0),
    col("Internal-IP", "string", 1),
    col("External-IP", "string", 1),
    col("OS-Image", "string", 1),
    col("Kernel-Version", "string", 1),
    col("Container-Runtime", "string", 1),
];

fn node(o: &Value) -> Vec<Value> {
    let ready = o["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["type"] == "Ready");
    let mut status = match ready.and_then(|c| c["status"].as_str()) {
        Some("True") => "Ready",
        Some("False") => "NotReady",
        _ => "Unknown",
    }
    .to_owned();
    if o["spec"]["unschedulable"] == true {
        status.push_str(",SchedulingDisabled");
    }
    let mut roles: Vec<&str> = o["metadata"]["labels"]
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(|(k, _)| k.strip_prefix("node-role.kubernetes.io/"))
        .filter(|r| !r.is_empty())
        .collect();
    roles.sort_unstable();
    let address = |ty: &str| {
        o["status"]["addresses"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|a| a["type"] == ty)
            .and_then(|a| a["address"].as_str())
            .unwrap_or("<none>")
            .to_owned()
    };
    let info = &o["status"]["nodeInfo"];
    let text = |v: &Value| json!(v.as_str().unwrap_or_default());
    vec![
        json!(status),
        json!(if roles.is_empty() {
            "<none>".to_owned()
        } else {
            roles.join(",")
        }),
        created(o),
        text(&info["kubeletVersion"]),
        json!(address("InternalIP")),
        json!(address("ExternalIP")),
        text(&info["osImage"]),
        text(&info["kernelVersion"]),
        text(&info["containerRuntimeVersion"]),
    ]
}

const DEPLOYMENT: &[Column] = &[
    col("Ready", "string", 0),
    col("Up-to-date", "integer", 0),
    col("Available", "integer", 0),
    AGE,
    CONTAINERS,
    IMAGES,
    SELECTOR,
];

fn deployment(o: &Value) -> Vec<Value> {
    let (containers, images) = template_containers(o);
    vec![
        json!(format!(
            "{}/{}",
            int(&o["status"]["readyReplicas"]),
            int(&o["spec"]["replicas"])
        )),
        json!(int(&o["status"]["updatedReplicas"])),
        json!(int(&o["status"]["availableReplicas"])),
        created(o),
        json!(containers),
        json!(images),
        json!(label_selector(&o["spec"]["selector"])),
    ]
}

const REPLICASET: &[Column] = &[
    col("Desired", "integer", 0),
    col("Current", "integer", 0),
    col("Ready", "integer", 0),
    AGE,
    CONTAINERS,
    IMAGES,
    SELECTOR,
];

fn replicaset(o: &Value) -> Vec<Value> {
    let (containers, images) = template_containers(o);
    vec![
        json!(int(&o["spec"]["replicas"])),
        json!(int(&o["status"]["replicas"])),
        json!(int(&o["status"]["readyReplicas"])),
        created(o),
        json!(containers),
        json!(images),
        json!(label_selector(&o["spec"]["selector"])),
    ]
}

const STATEFULSET: &[Column] = &[col("Ready", "string", 0), AGE, CONTAINERS, IMAGES];

fn statefulset(o: &Value) -> Vec<Value> {
    let (containers, images) = template_containers(o);
    vec![
        json!(format!(
            "{}/{}",
            int(&o["status"]["readyReplicas"]),
            int(&o["spec"]["replicas"])
        )),
        created(o),
        json!(containers),
        json!(images),
    ]
}

const JOB: &[Column] = &[
    col("Status", "string", 0),
    col("Completions", "string", 0),
    col("Duration", "string", 0),
    AGE,
    CONTAINERS,
    IMAGES,
    SELECTOR,
];

fn job(o: &Value) -> Vec<Value> {
    let (containers, images) = template_containers(o);
    let holds = |ty: &str| {
        o["status"]["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|c| c["type"] == ty && c["status"] == "True")
    };
    let status = if holds("Failed") {
        "Failed"
    } else if holds("Complete") {
        "Complete"
    } else if holds("Suspended") {
        "Suspended"
    } else if holds("FailureTarget") {
        "FailureTarget"
    } else if holds("SuccessCriteriaMet") {
        "SuccessCriteriaMet"
    } else {
        "Running"
    };
    let succeeded = int(&o["status"]["succeeded"]);
    let completions = match o["spec"]["completions"].as_i64() {
        Some(c) => format!("{succeeded}/{c}"),
        None => match o["spec"]["parallelism"].as_i64() {
            Some(p) if p > 1 => format!("{succeeded}/1 of {p}"),
            _ => format!("{succeeded}/1"),
        },
    };
    let duration = match (
        timestamp(&o["status"]["startTime"]),
        timestamp(&o["status"]["completionTime"]),
    ) {
        (Some(start), Some(end)) => short_duration(end - start),
        (Some(start), None) => short_duration(jiff::Timestamp::now().as_second() - start),
        _ => String::new(),
    };
    vec![
        json!(status),
        json!(completions),
        json!(duration),
        created(o),
        json!(containers),
        json!(images),
        json!(label_selector(&o["spec"]["selector"])),
    ]
}

const CRONJOB: &[Column] = &[
    col("Schedule", "string", 0),
    col("Timezone", "string", 0),
    col("Suspend", "boolean", 0),
    col("Active", "integer", 0),
    col("Last Schedule", "string", 0),
    AGE,
    CONTAINERS,
    IMAGES,
    SELECTOR,
];

fn cronjob(o: &Value) -> Vec<Value> {
    let spec = &o["spec"]["jobTemplate"]["spec"];
    let (containers, images) = containers_of(&spec["template"]["spec"]["containers"]);
    let last = &o["status"]["lastScheduleTime"];
    vec![
        o["spec"]["schedule"].clone(),
        json!(o["spec"]["timeZone"].as_str().unwrap_or("<none>")),
        json!(o["spec"]["suspend"].as_bool().unwrap_or(false)),
        json!(o["status"]["active"].as_array().map_or(0, Vec::len)),
        json!(if last.is_null() {
            "<none>".to_owned()
        } else {
            age(last)
        }),
        created(o),
        json!(containers),
        json!(images),
        json!(label_selector(&spec["selector"])),
    ]
}

const CREATED_AT: &[Column] = &[col("Created At", "date", 0)];

fn created_at(o: &Value) -> Vec<Value> {
    vec![o["metadata"]["creationTimestamp"].clone()]
}

const ROLEBINDING: &[Column] = &[
    col("Role", "string", 0),
    AGE,
    col("Users", "string", 1),
    col("Groups", "string", 1),
    col("ServiceAccounts", "string", 1),
];

fn rolebinding(o: &Value) -> Vec<Value> {
    let subjects = o["subjects"].as_array().cloned().unwrap_or_default();
    let of = |kind: &str| {
        subjects
            .iter()
            .filter(|s| s["kind"] == kind)
            .map(|s| match (kind, s["namespace"].as_str()) {
                ("ServiceAccount", Some(ns)) => {
                    format!("{ns}/{}", s["name"].as_str().unwrap_or_default())
                }
                _ => s["name"].as_str().unwrap_or_default().to_owned(),
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    vec![
        json!(format!(
            "{}/{}",
            o["roleRef"]["kind"].as_str().unwrap_or_default(),
            o["roleRef"]["name"].as_str().unwrap_or_default()
        )),
        created(o),
        json!(of("User")),
        json!(of("Group")),
        json!(of("ServiceAccount")),
    ]
}

/// Core and `events.k8s.io` Events print alike: kube-apiserver converts both to its
/// internal Event, whose printer has no leading `NAME` (`LAST SEEN TYPE REASON OBJECT
/// MESSAGE`, and for `-o wide` `SUBOBJECT SOURCE FIRST SEEN COUNT NAME`).
const EVENT: &[Column] = &[
    col("Last Seen", "string", 0),
    col("Type", "string", 0),
    col("Reason", "string", 0),
    col("Object", "string", 0),
    col("Subobject", "string", 1),
    col("Source", "string", 1),
    col("Message", "string", 0),
    col("First Seen", "string", 1),
    col("Count", "string", 1),
    NAME_WIDE,
];

/// The fields of the internal Event the printer reads, by their names in one API version.
struct EventFields<'a> {
    involved: &'a Value,
    message: &'a Value,
    first: &'a Value,
    last: &'a Value,
    count: &'a Value,
    source: &'a Value,
    reporting_controller: &'a Value,
}

fn core_event(o: &Value) -> Vec<Value> {
    event(
        o,
        &EventFields {
            involved: &o["involvedObject"],
            message: &o["message"],
            first: &o["firstTimestamp"],
            last: &o["lastTimestamp"],
            count: &o["count"],
            source: &o["source"],
            reporting_controller: &o["reportingComponent"],
        },
    )
}

/// An `events.k8s.io/v1` Event, read through the conversion to the internal Event
/// (`regarding`, `note`, the `deprecated*` fields).
fn events_event(o: &Value) -> Vec<Value> {
    event(
        o,
        &EventFields {
            involved: &o["regarding"],
            message: &o["note"],
            first: &o["deprecatedFirstTimestamp"],
            last: &o["deprecatedLastTimestamp"],
            count: &o["deprecatedCount"],
            source: &o["deprecatedSource"],
            reporting_controller: &o["reportingController"],
        },
    )
}

/// The cells of kube-apiserver's Event printer (`printEvent`, wide: the server prints every
/// column): the first time falls back on `eventTime`, the last on the first, a series gives
/// both the last time and the count, a singleton counts 1; the object is `kind/name` in
/// lower case; the source is the component (or reporting controller) and the host (or
/// reporting instance), comma-joined.
fn event(o: &Value, f: &EventFields<'_>) -> Vec<Value> {
    let set = |v: &Value| v.as_str().is_some_and(|s| !s.is_empty());
    let first = if set(f.first) {
        age(f.first)
    } else {
        age(&o["eventTime"])
    };
    let mut last = if set(f.last) {
        age(f.last)
    } else {
        first.clone()
    };
    let series = &o["series"];
    let count = if series.is_object() {
        last = age(&series["lastObservedTime"]);
        int(&series["count"])
    } else {
        match int(f.count) {
            0 => 1,
            n => n,
        }
    };
    let kind = f.involved["kind"]
        .as_str()
        .unwrap_or_default()
        .to_lowercase();
    let target = match f.involved["name"].as_str() {
        Some(name) if !name.is_empty() => format!("{kind}/{name}"),
        _ => kind,
    };
    let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    let non_empty = |a: String, b: String| if a.is_empty() { b } else { a };
    let component = non_empty(text(&f.source["component"]), text(f.reporting_controller));
    let instance = non_empty(text(&f.source["host"]), text(&o["reportingInstance"]));
    let source = if instance.is_empty() {
        component
    } else {
        format!("{component}, {instance}")
    };
    vec![
        json!(last),
        json!(text(&o["type"])),
        json!(text(&o["reason"])),
        json!(target),
        json!(text(&f.involved["fieldPath"])),
        json!(source),
        json!(text(f.message).trim()),
        json!(first),
        json!(count),
        o["metadata"]["name"].clone(),
    ]
}

const COMPONENTSTATUS: &[Column] = &[
    col("Status", "string", 0),
    col("Message", "string", 0),
    col("Error", "string", 0),
];

/// The `Healthy` condition: `Healthy` or `Unhealthy` with its message and error, else
/// `Unknown`.
fn componentstatus(o: &Value) -> Vec<Value> {
    let healthy = o["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["type"] == "Healthy");
    match healthy {
        Some(c) => vec![
            json!(if c["status"] == "True" {
                "Healthy"
            } else {
                "Unhealthy"
            }),
            json!(c["message"].as_str().unwrap_or_default()),
            json!(c["error"].as_str().unwrap_or_default()),
        ],
        None => vec![json!("Unknown"), json!(""), json!("")],
    }
}

/// The `scale` subresource's printer (`printScale`): `NAME DESIRED AVAILABLE AGE`, the
/// name column without the `name` format.
pub(crate) const SCALE: &[Column] = &[
    col("Name", "string", 0),
    col("Desired", "integer", 0),
    col("Available", "integer", 0),
    AGE,
];

/// The cells of an `autoscaling/v1` Scale, in [`SCALE`]'s order.
pub(crate) fn scale(o: &Value) -> Vec<Value> {
    vec![
        o["metadata"]["name"].clone(),
        json!(int(&o["spec"]["replicas"])),
        json!(int(&o["status"]["replicas"])),
        created(o),
    ]
}

const LEASE: &[Column] = &[col("Holder", "string", 0), AGE];

fn lease(o: &Value) -> Vec<Value> {
    vec![
        json!(o["spec"]["holderIdentity"].as_str().unwrap_or_default()),
        created(o),
    ]
}

fn created(o: &Value) -> Value {
    json!(age(&o["metadata"]["creationTimestamp"]))
}

fn or_none(v: &Value) -> Value {
    match v.as_str() {
        Some(s) if !s.is_empty() => json!(s),
        _ => json!("<none>"),
    }
}

fn int(v: &Value) -> i64 {
    v.as_i64().unwrap_or(0)
}

fn len(v: &Value) -> usize {
    v.as_object().map_or(0, serde_json::Map::len)
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s.as_str().map(str::to_owned))
        .collect()
}

fn timestamp(v: &Value) -> Option<i64> {
    v.as_str()
        .and_then(|s| s.parse::<jiff::Timestamp>().ok())
        .map(|t| t.as_second())
}

/// `5s`, `3m20s`, `2h5m`, as the job printer shows durations.
fn short_duration(secs: i64) -> String {
    let s = secs.max(0);
    match s {
        s if s < 60 => format!("{s}s"),
        s if s < 3600 => format!("{}m{}s", s / 60, s % 60),
        s => format!("{}h{}m", s / 3600, (s % 3600) / 60),
    }
}

/// The names and images of a pod template's containers, comma-joined.
fn template_containers(o: &Value) -> (String, String) {
    containers_of(&o["spec"]["template"]["spec"]["containers"])
}

fn containers_of(list: &Value) -> (String, String) {
    let list = list.as_array().cloned().unwrap_or_default();
    let field = |f: &str| {
        list.iter()
            .map(|c| c[f].as_str().unwrap_or_default())
            .collect::<Vec<_>>()
            .join(",")
    };
    (field("name"), field("image"))
}

/// A `map[string]string` selector (a Service's) as `k=v,...` sorted by key.
fn map_selector(v: &Value) -> Option<String> {
    let m = v.as_object().filter(|m| !m.is_empty())?;
    let mut pairs: Vec<String> = m
        .iter()
        .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
        .collect();
    pairs.sort();
    Some(pairs.join(","))
}

/// A `metav1.LabelSelector` as `labels.Selector.String()` prints it: requirements sorted by
/// key, `k=v`, `k in (a,b)`, `k notin (a)`, `k`, `!k`.
fn label_selector(sel: &Value) -> String {
    let mut reqs: Vec<(String, String)> = sel["matchLabels"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| (k.clone(), format!("{k}={}", v.as_str().unwrap_or_default())))
        .collect();
    for e in sel["matchExpressions"].as_array().into_iter().flatten() {
        let key = e["key"].as_str().unwrap_or_default();
        let mut values = strings(&e["values"]);
        values.sort();
        let text = match e["operator"].as_str().unwrap_or_default() {
            "In" => format!("{key} in ({})", values.join(",")),
            "NotIn" => format!("{key} notin ({})", values.join(",")),
            "Exists" => key.to_owned(),
            "DoesNotExist" => format!("!{key}"),
            _ => continue,
        };
        reqs.push((key.to_owned(), text));
    }
    reqs.sort();
    reqs.into_iter()
        .map(|(_, t)| t)
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(cols: &[Column]) -> Vec<&str> {
        cols.iter().map(|c| c.name).collect()
    }

    #[test]
    fn deployment_columns_and_cells_follow_the_real_printer() {
        let (cols, cells) = builtin("apps", "deployments").unwrap();
        assert_eq!(
            names(cols),
            [
                "Ready",
                "Up-to-date",
                "Available",
                "Age",
                "Containers",
                "Images",
                "Selector"
            ]
        );
        assert_eq!(
            cols.iter().filter(|c| c.priority == 1).count(),
            3,
            "CONTAINERS IMAGES SELECTOR are -o wide only"
        );
        let d = json!({
            "metadata": {"creationTimestamp": "2020-01-01T00:00:00Z"},
            "spec": {"replicas": 3,
                     "selector": {"matchLabels": {"app": "web"},
                                  "matchExpressions": [{"key": "tier", "operator": "In", "values": ["b", "a"]}]},
                     "template": {"spec": {"containers": [
                         {"name": "app", "image": "nginx:1"}, {"name": "side", "image": "envoy:1"}]}}},
            "status": {"readyReplicas": 2, "updatedReplicas": 3, "availableReplicas": 2},
        });
        let c = cells(&d);
        assert_eq!(c[0], "2/3");
        assert_eq!((c[1].clone(), c[2].clone()), (json!(3), json!(2)));
        assert!(c[3].as_str().unwrap().ends_with('d'));
        assert_eq!(c[4], "app,side");
        assert_eq!(c[5], "nginx:1,envoy:1");
        assert_eq!(c[6], "app=web,tier in (a,b)");
    }

    #[test]
    fn config_service_and_rbac_cells() {
        let (cols, cells) = builtin("", "configmaps").unwrap();
        assert_eq!(names(cols), ["Data", "Age"]);
        assert_eq!(
            cells(&json!({"data": {"a": "1", "b": "2"}, "binaryData": {"c": ""}}))[0],
            3
        );
        let (cols, cells) = builtin("", "services").unwrap();
        assert_eq!(
            names(cols),
            [
                "Type",
                "Cluster-IP",
                "External-IP",
                "Port(s)",
                "Age",
                "Selector"
            ]
        );
        let svc = json!({"spec": {"type": "NodePort", "clusterIP": "10.0.0.7",
            "ports": [{"port": 80, "nodePort": 30080, "protocol": "TCP"}, {"port": 53, "protocol": "UDP"}],
            "selector": {"b": "2", "a": "1"}}});
        let c = cells(&svc);
        assert_eq!(
            (&c[0], &c[1], &c[2], &c[3], &c[5]),
            (
                &json!("NodePort"),
                &json!("10.0.0.7"),
                &json!("<none>"),
                &json!("80:30080/TCP,53/UDP"),
                &json!("a=1,b=2")
            )
        );
        let (_, cells) = builtin("rbac.authorization.k8s.io", "rolebindings").unwrap();
        let rb = json!({"roleRef": {"kind": "Role", "name": "reader"},
            "subjects": [{"kind": "ServiceAccount", "name": "robot", "namespace": "ns"},
                         {"kind": "User", "name": "jane"}]});
        let c = cells(&rb);
        assert_eq!(
            (&c[0], &c[2], &c[4]),
            (&json!("Role/reader"), &json!("jane"), &json!("ns/robot"))
        );
        assert!(builtin("example.com", "widgets").is_none());
    }

    #[test]
    fn events_of_both_groups_print_as_the_internal_event() {
        let (cols, cells) = builtin("", "events").unwrap();
        assert_eq!(
            names(cols),
            [
                "Last Seen",
                "Type",
                "Reason",
                "Object",
                "Subobject",
                "Source",
                "Message",
                "First Seen",
                "Count",
                "Name"
            ]
        );
        let wide: Vec<_> = cols
            .iter()
            .filter(|c| c.priority == 1)
            .map(|c| c.name)
            .collect();
        assert_eq!(wide, ["Subobject", "Source", "First Seen", "Count", "Name"]);
        assert_eq!(cols[9].format, "name");
        let core = json!({"metadata": {"name": "web.1"}, "type": "Warning", "reason": "BackOff",
            "involvedObject": {"kind": "Pod", "name": "web", "fieldPath": "spec.containers{app}"},
            "message": "  back-off restarting \n", "source": {"component": "kubelet", "host": "node-1"},
            "firstTimestamp": "2020-01-01T00:00:00Z", "lastTimestamp": "2020-01-02T00:00:00Z",
            "count": 4});
        let c = cells(&core);
        assert!(c[0].as_str().unwrap().ends_with('d') && c[7].as_str().unwrap().ends_with('d'));
        assert_eq!(
            c[1..7],
            [
                json!("Warning"),
                json!("BackOff"),
                json!("pod/web"),
                json!("spec.containers{app}"),
                json!("kubelet, node-1"),
                json!("back-off restarting")
            ]
        );
        assert_eq!((&c[8], &c[9]), (&json!(4), &json!("web.1")));
        // A singleton of the new API: no count, eventTime only, the reporting controller.
        let (_, cells) = builtin("events.k8s.io", "events").unwrap();
        let new = json!({"metadata": {"name": "n"}, "type": "Normal", "reason": "Synced",
            "regarding": {"kind": "Deployment"}, "note": "done",
            "eventTime": "2020-01-01T00:00:00.000000Z", "reportingController": "ctl"});
        let c = cells(&new);
        assert_eq!((&c[0], &c[7]), (&c[7], &c[7]));
        assert!(c[0].as_str().unwrap().ends_with('d'));
        assert_eq!(
            (&c[3], &c[5], &c[6], &c[8]),
            (
                &json!("deployment"),
                &json!("ctl"),
                &json!("done"),
                &json!(1)
            )
        );
        // A series: its count and last observed time.
        let series = json!({"metadata": {"name": "s"}, "regarding": {"kind": "Pod", "name": "p"},
            "eventTime": "2020-01-01T00:00:00.000000Z",
            "series": {"count": 7, "lastObservedTime": "2999-01-01T00:00:00.000000Z"}});
        let c = cells(&series);
        assert_eq!((&c[0], &c[8]), (&json!("0s"), &json!(7)));
    }

    #[test]
    fn scale_and_component_status_cells() {
        assert_eq!(names(SCALE), ["Name", "Desired", "Available", "Age"]);
        let c = scale(
            &json!({"metadata": {"name": "web"}, "spec": {"replicas": 3},
            "status": {"replicas": 1}}),
        );
        assert_eq!(c[..3], [json!("web"), json!(3), json!(1)]);
        let (cols, cells) = builtin("", "componentstatuses").unwrap();
        assert_eq!(names(cols), ["Status", "Message", "Error"]);
        let c =
            cells(&json!({"conditions": [{"type": "Healthy", "status": "True", "message": "ok"}]}));
        assert_eq!(c, [json!("Healthy"), json!("ok"), json!("")]);
        assert_eq!(cells(&json!({}))[0], "Unknown");
    }

    #[test]
    fn job_and_cronjob_status_cells() {
        let (_, cells) = builtin("batch", "jobs").unwrap();
        let job = json!({"spec": {"completions": 2}, "status": {"succeeded": 2,
            "startTime": "2020-01-01T00:00:00Z", "completionTime": "2020-01-01T00:01:05Z",
            "conditions": [{"type": "Complete", "status": "True"}]}});
        let c = cells(&job);
        assert_eq!(
            (&c[0], &c[1], &c[2]),
            (&json!("Complete"), &json!("2/2"), &json!("1m5s"))
        );
        let (_, cells) = builtin("batch", "cronjobs").unwrap();
        let c = cells(&json!({"spec": {"schedule": "0 3 * * *"}}));
        assert_eq!(
            (&c[0], &c[1], &c[2], &c[3], &c[4]),
            (
                &json!("0 3 * * *"),
                &json!("<none>"),
                &json!(false),
                &json!(0),
                &json!("<none>")
            )
        );
    }
}
