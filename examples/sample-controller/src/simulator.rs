//! **Embedded mode only.** A stand-in for kube-controller-manager's Deployment controller.
//!
//! The embedded TestApiServer stores Deployments but runs no controllers, so nothing would
//! ever create pods or move `status.availableReplicas`, and the Foos' status would stay at 0.
//! This simulator plays that part, and only that: for every Deployment it moves
//! `status.availableReplicas` (and `replicas`, `readyReplicas`, `updatedReplicas`,
//! `observedGeneration`) towards `spec.replicas`, one replica per `step` when scaling up (as
//! pods would become ready one by one) and at once when scaling down. It writes through the
//! status subresource, like the real controller.
//!
//! (Garbage collection, the other part of kube-controller-manager sample-controller relies
//! on, is done by TestApiServer itself: deleting a Foo deletes the Deployments whose
//! `ownerReferences` name it.)
//!
//! It is itself a [`kinform::controller::Controller`] of Deployments: each status write is a
//! change that queues the Deployment again, so a reconcile waits `step` before a scale-up
//! step ("a pod becomes ready"). It never runs against a real cluster (`--kubeconfig`, in-cluster).

use std::time::Duration;

use k8s_openapi::api::apps::v1::{Deployment, DeploymentStatus};
use kinform::client::{Patch, PatchParams};
use kinform::controller::{Action, Controller, ReconcileStats, Request};
use kinform::informer::InformerFactory;
use kinform::{Api, Client, HasMetadata};

/// The simulated controller, ready to [`run`](Controller::run) with [`step_once`].
pub fn controller(factory: &InformerFactory) -> Controller<Deployment> {
    Controller::<Deployment>::builder(factory)
        .name("deployment-simulator")
        .workers(2)
        .build()
}

/// The next status of `d` and whether more steps follow.
pub fn next_status(d: &Deployment) -> (DeploymentStatus, bool) {
    let desired = d.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1).max(0);
    let mut status = d.status.clone().unwrap_or_default();
    let available = status.available_replicas.unwrap_or(0);
    let next = if available < desired {
        available + 1
    } else {
        desired
    };
    status.replicas = Some(desired);
    status.updated_replicas = Some(desired);
    status.ready_replicas = Some(next);
    status.available_replicas = Some(next);
    status.observed_generation = d.metadata.generation;
    (status, next != desired)
}

/// One simulation step for one Deployment: after `step` when scaling up, write the next
/// status; the write queues the Deployment again until the rollout is complete.
pub async fn step_once(
    client: Client,
    req: Request<Deployment>,
    step: Duration,
) -> Result<Action, kinform::Error> {
    let Some(d) = req.object else {
        return Ok(Action::done());
    };
    let (status, _) = next_status(&d);
    if d.status.as_ref() != Some(&status) {
        if status.available_replicas > d.status.as_ref().and_then(|s| s.available_replicas) {
            tokio::time::sleep(step).await;
        }
        let patch = serde_json::json!({"status": status});
        Api::<Deployment>::namespaced(client, d.namespace().unwrap_or("default"))
            .patch_status(d.name(), &PatchParams::default(), &Patch::Merge(patch))
            .await?;
    }
    Ok(Action::done())
}

/// Runs the simulator until `shutdown`.
pub async fn run(
    factory: InformerFactory,
    step: Duration,
    shutdown: impl Future<Output = ()>,
) -> ReconcileStats {
    let controller = controller(&factory);
    let client = factory.client().clone();
    controller
        .run(move |req| step_once(client.clone(), req, step), shutdown)
        .await
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::apps::v1::{DeploymentSpec, DeploymentStatus};

    use super::*;

    fn deployment(replicas: i32, available: Option<i32>) -> Deployment {
        Deployment {
            spec: Some(DeploymentSpec {
                replicas: Some(replicas),
                ..DeploymentSpec::default()
            }),
            status: available.map(|a| DeploymentStatus {
                available_replicas: Some(a),
                ..DeploymentStatus::default()
            }),
            ..Deployment::default()
        }
    }

    #[test]
    fn scales_up_one_replica_per_step_and_down_at_once() {
        let (s, more) = next_status(&deployment(3, None));
        assert_eq!(
            (s.available_replicas, s.replicas, more),
            (Some(1), Some(3), true)
        );
        let (s, more) = next_status(&deployment(3, Some(2)));
        assert_eq!((s.available_replicas, more), (Some(3), false));
        let (s, more) = next_status(&deployment(1, Some(5)));
        assert_eq!(
            (s.available_replicas, s.ready_replicas, more),
            (Some(1), Some(1), false)
        );
        let (s, more) = next_status(&deployment(2, Some(2)));
        assert_eq!((s.available_replicas, more), (Some(2), false));
    }
}
