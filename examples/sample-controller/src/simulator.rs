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
//! It also plays kube-controller-manager's garbage collector for this one relation: a
//! Deployment whose controller reference names a Foo that no longer exists (same uid) is
//! deleted, as the real garbage collector deletes dependents of a deleted owner (background
//! propagation). sample-controller itself never deletes Deployments: it relies on that.
//!
//! It is itself a [`kinform::controller::Controller`] of Deployments, which also watches
//! Foos (a deleted Foo maps to its Deployment's key) and uses `requeue_after` to pace the
//! steps. It never runs against a real cluster (`--kubeconfig`, in-cluster).

use std::time::Duration;

use k8s_openapi::api::apps::v1::{Deployment, DeploymentStatus};
use kinform::client::{DeleteParams, Patch, PatchParams};
use kinform::controller::{
    Action, Controller, ReconcileStats, Request, controller_of, key_of, owner_key,
};
use kinform::informer::InformerFactory;
use kinform::lister::Lister;
use kinform::{Api, Client, HasMetadata, Resource};

use crate::api::samplecontroller::v1alpha1::Foo;

/// The simulated controller, ready to [`run`](Controller::run) with [`reconcile`].
pub fn controller(factory: &InformerFactory) -> Controller<Deployment> {
    Controller::<Deployment>::builder(factory)
        .name("deployment-simulator")
        .workers(2)
        .watches(|foo: &Foo| {
            foo.spec
                .as_ref()
                .and_then(|s| s.deployment_name.as_deref())
                .map(|d| key_of::<Deployment>(foo.namespace(), d))
        })
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

/// One simulation step for one Deployment: write the next status, come back after `step`
/// while the rollout is not complete.
pub async fn step_once(
    client: Client,
    foos: Lister<Foo>,
    req: Request<Deployment>,
    step: Duration,
) -> Result<Action, kinform::Error> {
    let Some(d) = req.object else {
        return Ok(Action::done());
    };
    let namespace = d.namespace().unwrap_or("default");
    let api = Api::<Deployment>::namespaced(client.clone(), namespace);
    if let Some(owner) = controller_of(&*d)
        && owner.kind == Foo::KIND
        && owner_key::<Foo, _>(&*d)
            .and_then(|k| foos.get_by_key(&k))
            .is_none_or(|foo| foo.uid() != owner.uid)
        // The cache may lag: like the real garbage collector, confirm with a live read.
        && Api::<Foo>::namespaced(client, namespace)
            .get_opt(&owner.name)
            .await?
            .is_none_or(|foo| foo.uid() != owner.uid)
    {
        tracing::info!(deployment = %req.key, owner = %owner.name, "garbage collector: owner is gone, deleting");
        match api.delete(d.name(), &DeleteParams::background()).await {
            Ok(_) => return Ok(Action::done()),
            Err(e) if e.is_not_found() => return Ok(Action::done()),
            Err(e) => return Err(e),
        }
    }
    let (status, more) = next_status(&d);
    if d.status.as_ref() != Some(&status) {
        let patch = serde_json::json!({"status": status});
        api.patch_status(d.name(), &PatchParams::default(), &Patch::Merge(patch))
            .await?;
    }

    Ok(if more {
        Action::requeue_after(step)
    } else {
        Action::done()
    })
}

/// Runs the simulator until `shutdown`.
pub async fn run(
    factory: InformerFactory,
    step: Duration,
    shutdown: impl Future<Output = ()>,
) -> ReconcileStats {
    let controller = controller(&factory);
    let client = factory.client().clone();
    let foos = factory.lister::<Foo>();
    controller
        .run(
            move |req| step_once(client.clone(), foos.clone(), req, step),
            shutdown,
        )
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
