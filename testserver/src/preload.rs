//! Objects at start: the `default/kubernetes` Service every cluster has
//! ([`kubernetes_service`]), and realistic preloaded pods for benchmarks and the standalone
//! binary ([`preload`]).
//!
//! Each pod looks like one a Deployment creates on a real cluster: owner reference, labels,
//! annotations, two `managedFields` entries, two containers with probes, resources, env and
//! mounts, tolerations, and a Running status with conditions: about 5 KB of JSON. They are
//! inserted without change events, then the history is compacted to the resulting
//! resourceVersion, as if the server had just started on an existing etcd.

use serde_json::{Value, json};

use crate::handlers::write::{create, now_rfc3339};
use crate::status::ApiError;
use crate::storage::{Inner, Obj};

/// The `default/kubernetes` Service, its Endpoints and EndpointSlice, as kube-apiserver's
/// bootstrap controller and endpoint reconciler keep them: the first address of the service
/// range, port 443 `https` to the server's own port.
pub(crate) fn kubernetes_service(inner: &mut Inner, port: u16) -> Result<(), ApiError> {
    let labels = json!({"component": "apiserver", "provider": "kubernetes"});
    let objects = [
        json!({"apiVersion": "v1", "kind": "Service",
               "metadata": {"name": "kubernetes", "namespace": "default", "labels": labels},
               "spec": {"type": "ClusterIP", "clusterIP": "10.96.0.1",
                        "ports": [{"name": "https", "port": 443, "protocol": "TCP",
                                   "targetPort": port}],
                        "sessionAffinity": "None"}}),
        json!({"apiVersion": "v1", "kind": "Endpoints",
               "metadata": {"name": "kubernetes", "namespace": "default",
                            "labels": {"endpointslice.kubernetes.io/skip-mirror": "true"}},
               "subsets": [{"addresses": [{"ip": "127.0.0.1"}],
                            "ports": [{"name": "https", "port": port, "protocol": "TCP"}]}]}),
        json!({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
               "metadata": {"name": "kubernetes", "namespace": "default",
                            "labels": {"kubernetes.io/service-name": "kubernetes"}},
               "addressType": "IPv4",
               "endpoints": [{"addresses": ["127.0.0.1"], "conditions": {"ready": true}}],
               "ports": [{"name": "https", "port": port, "protocol": "TCP"}]}),
    ];
    for object in objects {
        let api_version = object["apiVersion"].as_str().unwrap_or_default();
        let kind = object["kind"].as_str().unwrap_or_default();
        // A registry without the kind (none today) starts without the object.
        let Some(info) = inner.registry.by_kind(api_version, kind) else {
            continue;
        };
        create(
            inner,
            &info,
            Some("default"),
            object,
            &mut crate::handlers::validate::Check::default(),
        )?;
    }
    Ok(())
}

/// Creates `namespaces` namespaces `ns-{i}` and `pods` pods spread over them.
pub(crate) fn preload(inner: &mut Inner, pods: usize, namespaces: usize) -> Result<(), ApiError> {
    let ns_info = inner
        .registry
        .get("", "v1", "namespaces")
        .ok_or_else(|| ApiError::internal("namespaces are not registered"))?;
    let pod_info = inner
        .registry
        .get("", "v1", "pods")
        .ok_or_else(|| ApiError::internal("pods are not registered"))?;
    for i in 0..namespaces {
        let name = format!("ns-{i}");
        if inner.get("/namespaces", &name).is_none() {
            create(
                inner,
                &ns_info,
                None,
                json!({"metadata": {"name": name}}),
                &mut crate::handlers::validate::Check::default(),
            )?;
        }
    }
    let now = now_rfc3339();
    let storage = pod_info.storage_key();
    for i in 0..pods {
        let ns = format!("ns-{}", i % namespaces);
        let rv = inner.next_rv();
        let pod = pod(i, &ns, rv, &now);
        inner.insert_silently(&storage, Obj::new(&pod, &pod_info));
    }
    inner.compact();
    Ok(())
}

/// One realistic pod.
pub(crate) fn pod(i: usize, namespace: &str, rv: u64, now: &str) -> Value {
    let app = format!("app-{}", i % 50);
    let hash = format!("{:010x}", (i as u64 / 10).wrapping_mul(0x9e37_79b9));
    let rs = format!("{app}-{hash}");
    let name = format!("{rs}-{:05}", i);
    let uid = format!("{:08x}-0000-4000-8000-{:012x}", i as u32, i as u64 * 7919);
    let node = format!("node-{}", i % 100);
    let ip = format!("10.{}.{}.{}", (i >> 16) & 0xff, (i >> 8) & 0xff, i & 0xff);
    let container = |cname: &str, image: &str, port: u16| {
        json!({
            "name": cname,
            "image": image,
            "imagePullPolicy": "IfNotPresent",
            "ports": [{"containerPort": port, "name": "http", "protocol": "TCP"}],
            "env": [
                {"name": "POD_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}},
                {"name": "POD_NAMESPACE", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}},
                {"name": "LOG_LEVEL", "value": "info"}
            ],
            "resources": {"limits": {"cpu": "500m", "memory": "256Mi"}, "requests": {"cpu": "100m", "memory": "128Mi"}},
            "livenessProbe": {"httpGet": {"path": "/healthz", "port": port, "scheme": "HTTP"}, "initialDelaySeconds": 10, "periodSeconds": 10, "timeoutSeconds": 1, "successThreshold": 1, "failureThreshold": 3},
            "readinessProbe": {"httpGet": {"path": "/ready", "port": port, "scheme": "HTTP"}, "periodSeconds": 5, "timeoutSeconds": 1, "successThreshold": 1, "failureThreshold": 3},
            "volumeMounts": [
                {"name": "config", "mountPath": "/etc/config", "readOnly": true},
                {"name": "kube-api-access", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "readOnly": true}
            ],
            "terminationMessagePath": "/dev/termination-log",
            "terminationMessagePolicy": "File"
        })
    };
    let status = |cname: &str, image: &str| {
        json!({
            "name": cname, "image": image, "imageID": format!("docker.io/library/{image}@sha256:{:064x}", i),
            "containerID": format!("containerd://{:064x}", i as u128 * 31),
            "ready": true, "restartCount": 0, "started": true,
            "state": {"running": {"startedAt": now}}, "lastState": {}
        })
    };
    let condition = |t: &str| json!({"type": t, "status": "True", "lastProbeTime": null, "lastTransitionTime": now});
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "generateName": format!("{rs}-"),
            "namespace": namespace,
            "uid": uid,
            "resourceVersion": rv.to_string(),
            "generation": 1,
            "creationTimestamp": now,
            "labels": {"app": app, "pod-template-hash": hash, "tier": if i.is_multiple_of(3) { "frontend" } else { "backend" }},
            "annotations": {"kubectl.kubernetes.io/restartedAt": now, "prometheus.io/scrape": "true", "prometheus.io/port": "8080"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": rs, "uid": format!("{:08x}-1111-4000-8000-000000000000", i / 10), "controller": true, "blockOwnerDeletion": true}],
            "managedFields": [
                {"manager": "kube-controller-manager", "operation": "Update", "apiVersion": "v1", "time": now, "fieldsType": "FieldsV1",
                 "fieldsV1": {"f:metadata": {"f:generateName": {}, "f:labels": {".": {}, "f:app": {}, "f:pod-template-hash": {}, "f:tier": {}}, "f:ownerReferences": {".": {}, format!("k:{{\"uid\":\"{i}\"}}"): {}}},
                              "f:spec": {"f:containers": {"k:{\"name\":\"app\"}": {".": {}, "f:image": {}, "f:imagePullPolicy": {}, "f:name": {}, "f:ports": {}, "f:resources": {}}, "k:{\"name\":\"sidecar\"}": {".": {}, "f:image": {}, "f:name": {}}}, "f:dnsPolicy": {}, "f:restartPolicy": {}, "f:schedulerName": {}, "f:terminationGracePeriodSeconds": {}, "f:volumes": {}}}},
                {"manager": "kubelet", "operation": "Update", "apiVersion": "v1", "time": now, "fieldsType": "FieldsV1", "subresource": "status",
                 "fieldsV1": {"f:status": {"f:conditions": {"k:{\"type\":\"Ready\"}": {".": {}, "f:lastProbeTime": {}, "f:lastTransitionTime": {}, "f:status": {}, "f:type": {}}}, "f:containerStatuses": {}, "f:hostIP": {}, "f:phase": {}, "f:podIP": {}, "f:podIPs": {".": {}, format!("k:{{\"ip\":\"{ip}\"}}"): {".": {}, "f:ip": {}}}, "f:startTime": {}}}}
            ]
        },
        "spec": {
            "containers": [container("app", "registry.example.com/team/app:v1.2.3", 8080), container("sidecar", "envoyproxy/envoy:v1.29.1", 9901)],
            "volumes": [
                {"name": "config", "configMap": {"name": format!("{app}-config"), "defaultMode": 420}},
                {"name": "kube-api-access", "projected": {"defaultMode": 420, "sources": [
                    {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                    {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}}]}}
            ],
            "restartPolicy": "Always",
            "terminationGracePeriodSeconds": 30,
            "dnsPolicy": "ClusterFirst",
            "serviceAccountName": "default",
            "serviceAccount": "default",
            "nodeName": node,
            "securityContext": {"runAsNonRoot": true, "runAsUser": 1000, "fsGroup": 2000},
            "schedulerName": "default-scheduler",
            "tolerations": [
                {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
                {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}
            ],
            "priority": 0,
            "enableServiceLinks": true,
            "preemptionPolicy": "PreemptLowerPriority"
        },
        "status": {
            "phase": "Running",
            "conditions": [condition("Initialized"), condition("Ready"), condition("ContainersReady"), condition("PodScheduled")],
            "hostIP": format!("192.168.{}.{}", (i / 100) % 256, i % 100),
            "podIP": ip,
            "podIPs": [{"ip": ip}],
            "startTime": now,
            "containerStatuses": [status("app", "registry.example.com/team/app:v1.2.3"), status("sidecar", "envoyproxy/envoy:v1.29.1")],
            "qosClass": "Burstable"
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pods_are_about_five_kilobytes() {
        let p = pod(12345, "ns-1", 7, "2025-01-01T00:00:00Z");
        let n = serde_json::to_vec(&p).unwrap().len();
        assert!((4000..7000).contains(&n), "{n} bytes");
    }
}
