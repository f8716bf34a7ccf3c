//! What kube-apiserver's registry does to a built-in object of the common kinds before storing
//! it: the defaults its Go defaulters fill in when decoding (`pkg/apis/*/v1/defaults.go`), the
//! allocations and initial status its strategies set (`PrepareForCreate`, and for Services
//! the REST storage's allocation on create and update), and whether the kind has a
//! `metadata.generation` at all.
//!
//! Clients see these values in every answer: a Pod is `Pending` with a `qosClass`, a Service
//! has a cluster IP and `type: ClusterIP` (a NodePort or LoadBalancer one a `nodePort` per
//! port from 30000-32767, chosen at random among the free ones as the service registry's
//! port allocator does; an ExternalName one no cluster IP), a Deployment has `replicas: 1` and a rolling
//! update strategy. A controller tested against a server that does not set them passes where
//! a cluster would trip it (a reconcile that compares the stored spec with the one it wrote
//! and updates forever, a missing cluster IP read as an error), so the server sets them.
//!
//! A Secret's write-only `stringData` is merged into `data` (base64, winning a clash) as
//! decoding does; a Job gets the strategy's generated selector (the
//! `batch.kubernetes.io/controller-uid` selector and the template's uid and job-name labels)
//! unless `spec.manualSelector` is true.
//!
//! Covered: Pods (and the pod templates of Deployments, ReplicaSets, StatefulSets,
//! DaemonSets, Jobs, CronJobs and ReplicationControllers), the workloads' own spec defaults,
//! Services, Secrets, PersistentVolumeClaims. The defaults of other kinds, and the admission
//! plugins that need cluster state (ServiceAccount token volumes, LimitRanger, resource
//! quotas), are not reproduced (listed in the crate docs).
//!
//! `metadata.generation` is kept where the kind tracks it: custom resources, and the
//! built-ins whose status reports an `observedGeneration` (read from the embedded OpenAPI
//! document: Deployments, Pods, Jobs, ...); a ConfigMap, Secret, Service or Namespace has
//! none, as on a real server.

use serde_json::{Map, Value, json};

use rand::Rng;

use crate::registry::ResourceInfo;
use crate::registry::spec;
use crate::status::ApiError;

/// The service cluster IP range (`--service-cluster-ip-range`'s kubeadm default).
const SERVICE_CIDR_BASE: [u8; 2] = [10, 96];

/// The node port range (`--service-node-port-range`'s default).
const NODE_PORTS: std::ops::RangeInclusive<u64> = 30000..=32767;

/// Whether objects of `info` carry `metadata.generation`.
pub(crate) fn has_generation(info: &ResourceInfo, custom: bool) -> bool {
    // Strategies that set a generation although the status does not report it back.
    const ALSO: &[(&str, &str)] = &[
        ("apiextensions.k8s.io", "CustomResourceDefinition"),
        (
            "admissionregistration.k8s.io",
            "MutatingWebhookConfiguration",
        ),
        (
            "admissionregistration.k8s.io",
            "ValidatingWebhookConfiguration",
        ),
        ("batch", "CronJob"),
        ("networking.k8s.io", "Ingress"),
        ("networking.k8s.io", "NetworkPolicy"),
    ];
    custom
        || ALSO.contains(&(info.group.as_str(), info.kind.as_str()))
        || spec::builtin_schema(&info.group, &info.version, &info.kind)
            .and_then(|s| s.property("status"))
            .and_then(|s| s.property("observedGeneration"))
            .is_some()
}

/// Fills the defaults of a built-in object (create and update, as decoding does).
pub(crate) fn default(info: &ResourceInfo, value: &mut Value) {
    let kind = (info.group.as_str(), info.kind.as_str());
    let Some(obj) = value.as_object_mut() else {
        return;
    };
    match kind {
        ("", "Pod") => {
            if let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) {
                pod_spec(spec);
                tolerations(spec);
            }
        }
        ("", "Service") => {
            if let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) {
                service_spec(spec);
            }
        }
        ("", "Secret") => {
            set(obj, "type", json!("Opaque"));
            merge_string_data(obj);
        }
        ("", "PersistentVolumeClaim") => {
            if let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) {
                set(spec, "volumeMode", json!("Filesystem"));
            }
        }
        ("", "ReplicationController") => workload(obj, |spec| {
            set(spec, "replicas", json!(1));
        }),
        ("apps", "Deployment") => workload(obj, |spec| {
            set(spec, "replicas", json!(1));
            set(spec, "revisionHistoryLimit", json!(10));
            set(spec, "progressDeadlineSeconds", json!(600));
            let strategy = object(spec, "strategy");
            set(strategy, "type", json!("RollingUpdate"));
            if strategy.get("type") == Some(&json!("RollingUpdate")) {
                let rolling = object(strategy, "rollingUpdate");
                set(rolling, "maxUnavailable", json!("25%"));
                set(rolling, "maxSurge", json!("25%"));
            }
        }),
        ("apps", "ReplicaSet") => workload(obj, |spec| {
            set(spec, "replicas", json!(1));
        }),
        ("apps", "StatefulSet") => workload(obj, |spec| {
            set(spec, "replicas", json!(1));
            set(spec, "podManagementPolicy", json!("OrderedReady"));
            set(spec, "revisionHistoryLimit", json!(10));
            let strategy = object(spec, "updateStrategy");
            set(strategy, "type", json!("RollingUpdate"));
            if strategy.get("type") == Some(&json!("RollingUpdate")) {
                set(object(strategy, "rollingUpdate"), "partition", json!(0));
            }
            let retention = object(spec, "persistentVolumeClaimRetentionPolicy");
            set(retention, "whenDeleted", json!("Retain"));
            set(retention, "whenScaled", json!("Retain"));
        }),
        ("apps", "DaemonSet") => workload(obj, |spec| {
            set(spec, "revisionHistoryLimit", json!(10));
            let strategy = object(spec, "updateStrategy");
            set(strategy, "type", json!("RollingUpdate"));
            if strategy.get("type") == Some(&json!("RollingUpdate")) {
                let rolling = object(strategy, "rollingUpdate");
                set(rolling, "maxUnavailable", json!(1));
                set(rolling, "maxSurge", json!(0));
            }
        }),
        ("batch", "Job") => {
            job_labels(obj);
            workload(obj, job_spec);
        }
        ("batch", "CronJob") => {
            if let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) {
                set(spec, "concurrencyPolicy", json!("Allow"));
                set(spec, "suspend", json!(false));
                set(spec, "successfulJobsHistoryLimit", json!(3));
                set(spec, "failedJobsHistoryLimit", json!(1));
                if let Some(job) = spec.get_mut("jobTemplate").and_then(Value::as_object_mut) {
                    workload(job, job_spec);
                }
            }
        }
        _ => {}
    }
}

/// What a create of a built-in sets beyond the defaults: a Pod's initial status, a
/// Service's cluster IP, node ports and status, a PersistentVolumeClaim's phase, a Job's
/// generated selector (`metadata.uid` and `name` set), the zero status counters of
/// StatefulSets, ReplicaSets and DaemonSets.
/// `services` are the stored Services (their addresses and node ports are taken); a
/// requested node port that is taken or out of range is refused as the service registry
/// refuses it (422).
pub(crate) fn prepare_create(
    info: &ResourceInfo,
    value: &mut Value,
    services: &[Value],
) -> Result<(), ApiError> {
    match (info.group.as_str(), info.kind.as_str()) {
        ("", "Pod") => {
            let qos = qos_class(&value["spec"]);
            value["status"] = json!({"phase": "Pending", "qosClass": qos});
        }
        ("", "Service") => {
            let name = value["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            let Some(spec) = value.get_mut("spec").and_then(Value::as_object_mut) else {
                return Ok(());
            };
            allocate(spec, services).map_err(|(field, message)| {
                ApiError::invalid("", "Service", &name, &field, &message)
            })?;
            value["status"] = json!({"loadBalancer": {}});
        }
        ("", "PersistentVolumeClaim") => value["status"] = json!({"phase": "Pending"}),
        ("batch", "Job") => generate_job_selector(value),
        ("apps", "StatefulSet") => zero_counters(value, &["replicas", "availableReplicas"]),
        ("apps", "ReplicaSet") => zero_counters(value, &["replicas"]),
        ("apps", "DaemonSet") => zero_counters(
            value,
            &[
                "currentNumberScheduled",
                "numberMisscheduled",
                "desiredNumberScheduled",
                "numberReady",
            ],
        ),
        _ => {}
    }
    Ok(())
}

/// The status counters Go writes even at zero (no `omitempty`): a new StatefulSet,
/// ReplicaSet or DaemonSet, whose `PrepareForCreate` resets the status to the zero struct,
/// shows them as 0. Counters the body already has are kept.
fn zero_counters(value: &mut Value, counters: &[&str]) {
    if !value["status"].is_object() {
        value["status"] = json!({});
    }
    if let Some(status) = value["status"].as_object_mut() {
        for counter in counters {
            status.entry(*counter).or_insert(json!(0));
        }
    }
}

/// What an update of a built-in keeps or allocates: a Service keeps the cluster IPs, node
/// ports (by port name) and health check node port the client left out while its type still
/// needs them (`patchAllocatedValues` of the service REST storage), and gets new ones where
/// its new type needs them (an ExternalName Service made ClusterIP, a ClusterIP one made
/// NodePort). `services` are the other stored Services.
pub(crate) fn prepare_update(
    info: &ResourceInfo,
    old: &Value,
    new: &mut Value,
    services: &[Value],
) -> Result<(), ApiError> {
    if (info.group.as_str(), info.kind.as_str()) != ("", "Service") {
        return Ok(());
    }
    let name = old["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let old_spec = &old["spec"];
    let Some(spec) = new.get_mut("spec").and_then(Value::as_object_mut) else {
        return Ok(());
    };
    let ty = |s: &Value| s["type"].as_str().unwrap_or("ClusterIP").to_owned();
    let (old_ty, new_ty) = (ty(old_spec), ty(&Value::Object(spec.clone())));
    let needs_node_ports = |ty: &str, s: &Value| {
        ty == "NodePort"
            || (ty == "LoadBalancer" && s["allocateLoadBalancerNodePorts"] != json!(false))
    };
    let needs_health_check =
        |ty: &str, s: &Value| ty == "LoadBalancer" && s["externalTrafficPolicy"] == "Local";
    if old_ty != "ExternalName" && new_ty != "ExternalName" {
        if spec
            .get("clusterIP")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty)
            && let Some(ip) = old_spec.get("clusterIP").filter(|ip| ip.is_string())
        {
            spec.insert("clusterIP".into(), ip.clone());
        }
        if spec
            .get("clusterIPs")
            .and_then(Value::as_array)
            .is_none_or(Vec::is_empty)
            && let Some(ips) = old_spec.get("clusterIPs").filter(|ips| ips.is_array())
        {
            spec.insert("clusterIPs".into(), ips.clone());
        }
    }
    let new_view = Value::Object(spec.clone());
    if needs_node_ports(&old_ty, old_spec) && needs_node_ports(&new_ty, &new_view) {
        let node_ports = |s: &Value| -> Vec<u64> {
            s["ports"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|p| p["nodePort"].as_u64())
                .collect()
        };
        let new_ports = node_ports(&new_view);
        let used: Vec<u64> = node_ports(old_spec)
            .into_iter()
            .filter(|p| new_ports.contains(p))
            .collect();
        let by_name: Vec<(String, u64)> = old_spec["ports"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|p| {
                let name = p["name"].as_str().unwrap_or_default().to_owned();
                Some((name, p["nodePort"].as_u64()?))
            })
            .collect();
        for p in spec
            .get_mut("ports")
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
            .filter_map(Value::as_object_mut)
        {
            if p.get("nodePort").is_some_and(|n| !n.is_null()) {
                continue;
            }
            let port_name = p.get("name").and_then(Value::as_str).unwrap_or_default();
            if let Some((_, n)) = by_name.iter().find(|(name, _)| name == port_name)
                && !used.contains(n)
            {
                p.insert("nodePort".into(), json!(n));
            }
        }
    }
    if needs_health_check(&old_ty, old_spec)
        && needs_health_check(&new_ty, &new_view)
        && spec.get("healthCheckNodePort").is_none_or(Value::is_null)
        && let Some(port) = old_spec.get("healthCheckNodePort").filter(|p| p.is_u64())
    {
        spec.insert("healthCheckNodePort".into(), port.clone());
    }
    allocate(spec, services)
        .map_err(|(field, message)| ApiError::invalid("", "Service", &name, &field, &message))
}

/// A Service's allocations: a cluster IP unless headless or ExternalName (with its
/// `clusterIPs` and IP family fields), and its node ports ([`node_ports`]).
fn allocate(spec: &mut Map<String, Value>, services: &[Value]) -> Result<(), (String, String)> {
    let headless = spec.get("clusterIP") == Some(&json!("None"));
    let external = spec.get("type") == Some(&json!("ExternalName"));
    if !headless
        && !external
        && spec
            .get("clusterIP")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty)
    {
        let taken: Vec<&str> = services
            .iter()
            .filter_map(|s| s["spec"]["clusterIP"].as_str())
            .collect();
        let ip = free_cluster_ip(&taken);
        spec.insert("clusterIP".into(), json!(ip));
    }
    if !external && let Some(ip) = spec.get("clusterIP").cloned() {
        set(spec, "clusterIPs", json!([ip]));
        set(spec, "ipFamilies", json!(["IPv4"]));
        set(spec, "ipFamilyPolicy", json!("SingleStack"));
    }
    node_ports(spec, services)
}

/// The node ports of every stored Service (`spec.ports[].nodePort`, `healthCheckNodePort`).
fn taken_node_ports(services: &[Value]) -> Vec<u64> {
    services
        .iter()
        .flat_map(|s| {
            let spec = &s["spec"];
            spec["ports"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|p| p["nodePort"].as_u64())
                .chain(spec["healthCheckNodePort"].as_u64())
        })
        .collect()
}

/// The service registry's node port allocation: a NodePort Service, and a LoadBalancer one
/// unless `allocateLoadBalancerNodePorts` is false, gets a free port of the range for each
/// port without one; a LoadBalancer with `externalTrafficPolicy: Local` gets a
/// `healthCheckNodePort`. A port given by the client must be in the range and free. The
/// error is (field, message) of the 422 cause.
fn node_ports(spec: &mut Map<String, Value>, services: &[Value]) -> Result<(), (String, String)> {
    let ty = spec.get("type").and_then(Value::as_str).unwrap_or_default();
    let load_balancer = ty == "LoadBalancer";
    let allocate = ty == "NodePort"
        || (load_balancer && spec.get("allocateLoadBalancerNodePorts") != Some(&json!(false)));
    let health_check = load_balancer && spec.get("externalTrafficPolicy") == Some(&json!("Local"));
    let mut taken = taken_node_ports(services);
    let mut claim = |field: String, requested: Option<&Value>| -> Result<Value, (String, String)> {
        match requested {
            Some(v) if !v.is_null() => {
                let n = v.as_u64().unwrap_or(0);
                if !NODE_PORTS.contains(&n) {
                    return Err((
                        field,
                        format!(
                            "Invalid value: {v}: provided port is not in the valid range. The range of valid ports is {}-{}",
                            NODE_PORTS.start(),
                            NODE_PORTS.end()
                        ),
                    ));
                }
                if taken.contains(&n) {
                    return Err((
                        field,
                        format!("Invalid value: {v}: provided port is already allocated"),
                    ));
                }
                taken.push(n);
                Ok(v.clone())
            }
            _ => {
                let free: Vec<u64> = NODE_PORTS.filter(|p| !taken.contains(p)).collect();
                let Some(&n) = free.get(rand::rng().random_range(0..free.len().max(1))) else {
                    return Err((field, "Internal error: range is full".to_owned()));
                };
                taken.push(n);
                Ok(json!(n))
            }
        }
    };
    if allocate {
        for (i, p) in spec
            .get_mut("ports")
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
            .enumerate()
        {
            let Some(p) = p.as_object_mut() else { continue };
            let port = claim(format!("spec.ports[{i}].nodePort"), p.get("nodePort"))?;
            p.insert("nodePort".into(), port);
        }
    }
    if health_check {
        let port = claim(
            "spec.healthCheckNodePort".to_owned(),
            spec.get("healthCheckNodePort"),
        )?;
        spec.insert("healthCheckNodePort".into(), port);
    }
    Ok(())
}

/// The lowest free address of the service range after the first (the `kubernetes` service's).
fn free_cluster_ip(taken: &[&str]) -> String {
    (2u32..(1 << 20))
        .map(|n| {
            let [a, b] = SERVICE_CIDR_BASE;
            format!(
                "{a}.{}.{}.{}",
                u32::from(b) + (n >> 16),
                (n >> 8) & 0xff,
                n & 0xff
            )
        })
        .find(|ip| !taken.contains(&ip.as_str()))
        .unwrap_or_else(|| "10.96.0.2".to_owned())
}

/// `spec.template.spec` defaults and the spec's own, for a workload or a job template.
fn workload(obj: &mut Map<String, Value>, own: impl FnOnce(&mut Map<String, Value>)) {
    let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    own(spec);
    if let Some(pod) = spec
        .get_mut("template")
        .and_then(|t| t.get_mut("spec"))
        .and_then(Value::as_object_mut)
    {
        pod_spec(pod);
    }
}

/// A Job without labels of its own takes its pod template's (`SetDefaults_Job`).
fn job_labels(obj: &mut Map<String, Value>) {
    let template = obj
        .get("spec")
        .map(|s| &s["template"]["metadata"]["labels"])
        .filter(|l| l.is_object())
        .cloned();
    let meta = object(obj, "metadata");
    let own_empty = meta
        .get("labels")
        .and_then(Value::as_object)
        .is_none_or(Map::is_empty);
    if let Some(labels) = template
        && own_empty
    {
        meta.insert("labels".into(), labels);
    }
}

fn job_spec(spec: &mut Map<String, Value>) {
    // Completions default to 1 only with parallelism: a work-queue Job (parallelism set,
    // completions unset) keeps no completion count.
    let unset = |spec: &Map<String, Value>, key: &str| spec.get(key).is_none_or(Value::is_null);
    if unset(spec, "completions") && unset(spec, "parallelism") {
        spec.insert("completions".into(), json!(1));
    }
    set(spec, "parallelism", json!(1));
    let per_index = !unset(spec, "backoffLimitPerIndex");
    set(
        spec,
        "backoffLimit",
        json!(if per_index { i32::MAX } else { 6 }),
    );
    set(spec, "manualSelector", json!(false));
    set(spec, "completionMode", json!("NonIndexed"));
    set(spec, "suspend", json!(false));
    let failed_policy = spec.contains_key("podFailurePolicy");
    set(
        spec,
        "podReplacementPolicy",
        json!(if failed_policy {
            "Failed"
        } else {
            "TerminatingOrFailed"
        }),
    );
}

fn pod_spec(spec: &mut Map<String, Value>) {
    set(spec, "restartPolicy", json!("Always"));
    set(spec, "dnsPolicy", json!("ClusterFirst"));
    set(spec, "terminationGracePeriodSeconds", json!(30));
    set(spec, "securityContext", json!({}));
    set(spec, "schedulerName", json!("default-scheduler"));
    set(spec, "enableServiceLinks", json!(true));
    set(spec, "preemptionPolicy", json!("PreemptLowerPriority"));
    if !spec.contains_key("priorityClassName") {
        set(spec, "priority", json!(0));
    }
    for list in ["containers", "initContainers"] {
        for c in spec
            .get_mut(list)
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
            .filter_map(Value::as_object_mut)
        {
            container(c);
        }
    }
    for v in spec
        .get_mut("volumes")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object_mut)
    {
        for source in ["secret", "configMap", "downwardAPI", "projected"] {
            if let Some(s) = v.get_mut(source).and_then(Value::as_object_mut) {
                set(s, "defaultMode", json!(420));
            }
        }
    }
}

fn container(c: &mut Map<String, Value>) {
    set(c, "terminationMessagePath", json!("/dev/termination-log"));
    set(c, "terminationMessagePolicy", json!("File"));
    set(c, "resources", json!({}));
    let image = c.get("image").and_then(Value::as_str).unwrap_or_default();
    let pull = if image_tag(image).is_none_or(|t| t == "latest") {
        "Always"
    } else {
        "IfNotPresent"
    };
    set(c, "imagePullPolicy", json!(pull));
    for p in c
        .get_mut("ports")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object_mut)
    {
        set(p, "protocol", json!("TCP"));
    }
}

/// The tag of an image reference (`nginx:1.27` -> `1.27`); `None` without a tag. A digest
/// (`@sha256:...`) counts as a tag, as the defaulter treats it.
fn image_tag(image: &str) -> Option<&str> {
    if image.contains('@') {
        return Some("digest");
    }
    let last = image.rsplit('/').next().unwrap_or(image);
    last.split_once(':').map(|(_, t)| t)
}

/// A Secret's `stringData` merged into `data`, base64-encoded, a key of both taking the
/// `stringData` value; `stringData` itself is write-only and goes (the v1 to internal
/// conversion, `Convert_v1_Secret_To_core_Secret`).
fn merge_string_data(obj: &mut Map<String, Value>) {
    use base64::Engine as _;
    let Some(string_data) = obj.remove("stringData") else {
        return;
    };
    let Value::Object(entries) = string_data else {
        return;
    };
    if entries.is_empty() {
        return;
    }
    let data = object(obj, "data");
    for (key, value) in entries {
        let text = match value {
            Value::String(s) => s,
            Value::Null => String::new(),
            other => other.to_string(),
        };
        let encoded = base64::engine::general_purpose::STANDARD.encode(text.as_bytes());
        data.insert(key, json!(encoded));
    }
}

/// The Job strategy's generated selector: unless `spec.manualSelector` is true, the pod
/// template gets the labels `batch.kubernetes.io/controller-uid`, `controller-uid` (the
/// Job's uid), `batch.kubernetes.io/job-name` and `job-name` (its name), each only where the
/// client did not set it, and `spec.selector.matchLabels` selects the prefixed uid label
/// (`generateSelector`). Needs `metadata.uid` set.
fn generate_job_selector(value: &mut Value) {
    let uid = value["metadata"]["uid"].clone();
    let name = value["metadata"]["name"].clone();
    let Some(spec) = value.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    if spec.get("manualSelector") == Some(&json!(true)) {
        return;
    }
    let template = object(spec, "template");
    let labels = object(object(template, "metadata"), "labels");
    for key in ["job-name", "batch.kubernetes.io/job-name"] {
        set(labels, key, name.clone());
    }
    for key in ["controller-uid", "batch.kubernetes.io/controller-uid"] {
        set(labels, key, uid.clone());
    }
    let match_labels = object(object(spec, "selector"), "matchLabels");
    set(match_labels, "batch.kubernetes.io/controller-uid", uid);
    // A Job without labels shows its template's once read back (defaulting runs on
    // every decode, the storage's included), the generated ones with them.
    if let Some(obj) = value.as_object_mut() {
        job_labels(obj);
    }
}

/// The DefaultTolerationSeconds admission plugin's tolerations.
fn tolerations(spec: &mut Map<String, Value>) {
    let list = spec.entry("tolerations").or_insert_with(|| json!([]));
    let Some(list) = list.as_array_mut() else {
        return;
    };
    for key in [
        "node.kubernetes.io/not-ready",
        "node.kubernetes.io/unreachable",
    ] {
        let present = list
            .iter()
            .any(|t| t["key"] == key && (t["effect"] == "NoExecute" || t["effect"].is_null()));
        if !present {
            list.push(json!({"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}));
        }
    }
}

/// The pod's quality-of-service class, as kubelet and the API server compute it.
fn qos_class(spec: &Value) -> &'static str {
    let containers: Vec<&Value> = ["containers", "initContainers"]
        .iter()
        .flat_map(|l| spec[*l].as_array().into_iter().flatten())
        .collect();
    let mut any = false;
    let mut guaranteed = true;
    for c in &containers {
        let requests = &c["resources"]["requests"];
        let limits = &c["resources"]["limits"];
        for res in ["cpu", "memory"] {
            let (r, l) = (&requests[res], &limits[res]);
            if !r.is_null() || !l.is_null() {
                any = true;
            }
            // A missing request defaults to the limit.
            if l.is_null() || (!r.is_null() && r != l) {
                guaranteed = false;
            }
        }
    }
    match (any, guaranteed) {
        (false, _) => "BestEffort",
        (true, true) => "Guaranteed",
        (true, false) => "Burstable",
    }
}

fn set(map: &mut Map<String, Value>, key: &str, value: Value) {
    if map.get(key).is_none_or(Value::is_null) {
        map.insert(key.to_owned(), value);
    }
}

fn object<'a>(map: &'a mut Map<String, Value>, key: &str) -> &'a mut Map<String, Value> {
    if !map.get(key).is_some_and(Value::is_object) {
        map.insert(key.to_owned(), json!({}));
    }
    match map.get_mut(key) {
        Some(Value::Object(m)) => m,
        _ => unreachable!("inserted an object just above"),
    }
}

fn service_spec(spec: &mut Map<String, Value>) {
    set(spec, "type", json!("ClusterIP"));
    set(spec, "sessionAffinity", json!("None"));
    let ty = spec
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("ClusterIP")
        .to_owned();
    if ty != "ExternalName" {
        set(spec, "internalTrafficPolicy", json!("Cluster"));
    }
    if ty == "NodePort" || ty == "LoadBalancer" {
        set(spec, "externalTrafficPolicy", json!("Cluster"));
    }
    if ty == "LoadBalancer" {
        set(spec, "allocateLoadBalancerNodePorts", json!(true));
    }
    for p in spec
        .get_mut("ports")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object_mut)
    {
        set(p, "protocol", json!("TCP"));
        if let Some(port) = p.get("port").cloned() {
            set(p, "targetPort", port);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::Registry;

    fn info(group: &str, plural: &str) -> std::sync::Arc<ResourceInfo> {
        Registry::with_builtins()
            .get(group, "v1", plural)
            .expect("served")
    }

    #[test]
    fn pods_are_defaulted_and_pending() {
        let pods = info("", "pods");
        let mut pod = json!({"spec": {"containers": [
            {"name": "a", "image": "nginx", "ports": [{"containerPort": 80}]},
            {"name": "b", "image": "registry.example.com:5000/app:1.2",
             "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}},
        ]}});
        default(&pods, &mut pod);
        prepare_create(&pods, &mut pod, &[]).unwrap();
        let c = &pod["spec"]["containers"];
        assert_eq!(c[0]["imagePullPolicy"], "Always");
        assert_eq!(c[1]["imagePullPolicy"], "IfNotPresent");
        assert_eq!(c[0]["ports"][0]["protocol"], "TCP");
        assert_eq!(pod["spec"]["restartPolicy"], "Always");
        assert_eq!(pod["spec"]["tolerations"].as_array().unwrap().len(), 2);
        assert_eq!(
            pod["status"],
            json!({"phase": "Pending", "qosClass": "Burstable"})
        );
        let guaranteed =
            json!({"containers": [{"resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}]});
        assert_eq!(qos_class(&guaranteed), "Guaranteed");
        assert_eq!(qos_class(&json!({"containers": [{}]})), "BestEffort");
    }

    #[test]
    fn services_get_an_address() {
        let svc = info("", "services");
        let mut s = json!({"spec": {"ports": [{"port": 80}]}});
        default(&svc, &mut s);
        let other = json!({"spec": {"clusterIP": "10.96.0.2", "ports": [{"nodePort": 30000}]}});
        prepare_create(&svc, &mut s, std::slice::from_ref(&other)).unwrap();
        assert_eq!(s["spec"]["type"], "ClusterIP");
        assert_eq!(s["spec"]["clusterIP"], "10.96.0.3");
        assert_eq!(s["spec"]["ports"][0]["targetPort"], 80);
        let mut headless = json!({"spec": {"clusterIP": "None"}});
        default(&svc, &mut headless);
        prepare_create(&svc, &mut headless, &[]).unwrap();
        assert_eq!(headless["spec"]["clusterIP"], "None");
        assert!(s["spec"]["ports"][0].get("nodePort").is_none());

        let mut np = json!({"spec": {"type": "NodePort", "ports": [{"port": 80}, {"port": 81, "nodePort": 30001}]}});
        default(&svc, &mut np);
        prepare_create(&svc, &mut np, std::slice::from_ref(&other)).unwrap();
        let first = np["spec"]["ports"][0]["nodePort"].as_u64().unwrap();
        assert!(NODE_PORTS.contains(&first) && first != 30000 && first != 30001);
        assert_eq!(np["spec"]["ports"][1]["nodePort"], 30001);
        let mut taken =
            json!({"spec": {"type": "NodePort", "ports": [{"port": 80, "nodePort": 30000}]}});
        let e = prepare_create(&svc, &mut taken, std::slice::from_ref(&other)).unwrap_err();
        assert_eq!(e.code, 422);
        let mut lb = json!({"spec": {"type": "LoadBalancer", "externalTrafficPolicy": "Local",
                                      "allocateLoadBalancerNodePorts": false, "ports": [{"port": 80}]}});
        default(&svc, &mut lb);
        prepare_create(&svc, &mut lb, &[]).unwrap();
        assert!(lb["spec"]["ports"][0].get("nodePort").is_none());
        assert!(NODE_PORTS.contains(&lb["spec"]["healthCheckNodePort"].as_u64().unwrap()));
    }

    #[test]
    fn service_updates_keep_and_allocate() {
        let svc = info("", "services");
        let old = json!({"metadata": {"name": "s"}, "spec": {"type": "NodePort",
            "clusterIP": "10.96.0.9", "clusterIPs": ["10.96.0.9"],
            "ports": [{"name": "http", "port": 80, "nodePort": 30080}]}});
        let mut new = json!({"spec": {"type": "NodePort",
            "ports": [{"name": "http", "port": 80}, {"name": "extra", "port": 81}]}});
        default(&svc, &mut new);
        prepare_update(&svc, &old, &mut new, &[]).unwrap();
        assert_eq!(new["spec"]["clusterIP"], "10.96.0.9");
        assert_eq!(new["spec"]["ports"][0]["nodePort"], 30080);
        let extra = new["spec"]["ports"][1]["nodePort"].as_u64().unwrap();
        assert!(NODE_PORTS.contains(&extra) && extra != 30080);

        let external = json!({"metadata": {"name": "e"},
            "spec": {"type": "ExternalName", "externalName": "example.com"}});
        let mut made_cluster_ip = json!({"spec": {"type": "ClusterIP", "ports": [{"port": 80}]}});
        default(&svc, &mut made_cluster_ip);
        prepare_update(&svc, &external, &mut made_cluster_ip, &[]).unwrap();
        assert!(made_cluster_ip["spec"]["clusterIP"].is_string());
        assert!(
            made_cluster_ip["spec"]["ports"][0]
                .get("nodePort")
                .is_none()
        );
    }

    #[test]
    fn generation_where_status_observes_it() {
        assert!(has_generation(&info("apps", "deployments"), false));
        assert!(has_generation(&info("", "pods"), false));
        assert!(!has_generation(&info("", "configmaps"), false));
        assert!(!has_generation(&info("", "namespaces"), false));
        assert!(has_generation(&info("", "configmaps"), true));
    }

    #[test]
    fn deployments_get_their_defaults() {
        let d = info("apps", "deployments");
        let mut dep = json!({"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "nginx:1"}]}}}});
        default(&d, &mut dep);
        assert_eq!(dep["spec"]["replicas"], 1);
        assert_eq!(dep["spec"]["strategy"]["rollingUpdate"]["maxSurge"], "25%");
        assert_eq!(dep["spec"]["template"]["spec"]["dnsPolicy"], "ClusterFirst");
    }
}
