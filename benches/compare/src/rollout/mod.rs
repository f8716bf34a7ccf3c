//! The custom resource scenarios (`KINFORM_COMPARE_RESOURCE=rollouts`): Argo Rollouts'
//! `Rollout` (argoproj.io/v1alpha1, the corpus's CRD), a Deployment-sized custom resource
//! (a pod template, a canary strategy and a status with conditions), typed on each side as
//! its users type it: kinform-gen's generated type (build.rs) for kinform, kopium's
//! (`kopium.rs`, from `kopium.sh`) for kube-rs. The server builds each object from its one
//! preloaded realistic pod (its spec becomes the template's) and writes its status through
//! the status subresource, as the Rollout controller would.

use serde_json::{Value, json};

/// kinform-gen's output for the CRD (types, clients, listers, informers).
#[allow(dead_code, unused_imports)]
pub mod generated {
    include!(concat!(env!("OUT_DIR"), "/kinform_generated.rs"));
}

/// kopium's output for the CRD, as kopium writes it.
#[allow(dead_code, clippy::all)]
#[rustfmt::skip]
mod kopium;

/// kinform's Rollout.
pub use generated::argoproj_io::v1alpha1::Rollout;
/// kube-rs's Rollout.
pub type KubeRollout = kopium::Rollout;

/// The CRD's YAML, read by the server process.
pub const CRD: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/corpus/crds/argo-rollouts/argoproj.io_rollouts.yaml"
);

/// The `i`th Rollout in `namespace`, its pod template built from `pod` (a realistic pod's
/// `metadata.labels` and `spec`), without status.
pub fn object(i: usize, namespace: &str, pod: &Value) -> Value {
    let app = format!("app-{}", i % 50);
    json!({
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Rollout",
        "metadata": {
            "name": format!("{app}-{i:05}"),
            "namespace": namespace,
            "labels": {"app": app, "team": format!("team-{}", i % 7), "tier": "backend"},
            "annotations": {
                "rollout.argoproj.io/revision": (i % 9 + 1).to_string(),
                "notifications.argoproj.io/subscribe.on-rollout-completed.slack": "deploys",
            },
        },
        "spec": {
            "replicas": 3,
            "revisionHistoryLimit": 2,
            "selector": {"matchLabels": {"app": app}},
            "template": {
                "metadata": {"labels": pod["metadata"]["labels"].clone()},
                "spec": pod["spec"].clone(),
            },
            "strategy": {"canary": {
                "canaryService": format!("{app}-canary"),
                "stableService": format!("{app}-stable"),
                "trafficRouting": {"nginx": {"stableIngress": format!("{app}-ingress")}},
                "steps": [
                    {"setWeight": 20}, {"pause": {}}, {"setWeight": 40},
                    {"pause": {"duration": "40s"}}, {"setWeight": 80},
                    {"pause": {"duration": "20s"}},
                ],
            }},
        },
    })
}

/// The status the Rollout controller would have written for a healthy, fully promoted
/// `i`th Rollout.
pub fn status(i: usize, now: &str) -> Value {
    let hash = format!("{:010x}", (i as u64 / 10).wrapping_mul(0x9e37_79b9));
    let condition = |t: &str, reason: &str, message: &str| {
        json!({"type": t, "status": "True", "reason": reason, "message": message,
               "lastTransitionTime": now, "lastUpdateTime": now})
    };
    json!({"status": {
        "HPAReplicas": 3, "availableReplicas": 3, "readyReplicas": 3, "replicas": 3,
        "updatedReplicas": 3, "currentPodHash": hash, "stableRS": hash,
        "currentStepHash": format!("{:08x}", i as u32 ^ 0x5f3759df), "currentStepIndex": 6,
        "observedGeneration": "1", "phase": "Healthy",
        "selector": format!("app=app-{},rollouts-pod-template-hash={hash}", i % 50),
        "canary": {"weights": {
            "canary": {"podTemplateHash": hash, "serviceName": format!("app-{}-canary", i % 50), "weight": 0},
            "stable": {"podTemplateHash": hash, "serviceName": format!("app-{}-stable", i % 50), "weight": 100},
        }},
        "conditions": [
            condition("Available", "AvailableReason", "Rollout has minimum availability"),
            condition("Completed", "RolloutCompleted", "Rollout completed update to revision 1"),
            condition("Progressing", "NewReplicaSetAvailable", "Rollout has successfully progressed"),
            condition("Healthy", "RolloutHealthy", "Rollout is healthy"),
        ],
    }})
}
