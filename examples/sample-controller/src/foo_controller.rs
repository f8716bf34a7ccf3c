//! The Foo controller: `controller.go` of sample-controller, on [`kinform::controller`].
//!
//! The behaviour reproduced, step by step (`syncHandler`):
//!
//! 1. The Foo is read from the lister; if it is gone there is nothing to do (its Deployment
//!    is deleted by the garbage collector through the owner reference).
//! 2. A Foo without `spec.deploymentName` is logged and dropped until it changes (not
//!    retried).
//! 3. The Deployment `spec.deploymentName` is read from the lister and created if missing,
//!    with an owner reference to the Foo marked `controller: true`.
//! 4. A Deployment of that name not controlled by this Foo is not adopted: a Warning event
//!    `ErrResourceExists` is recorded on the Foo and the sync fails (and is retried with
//!    backoff, as in the original).
//! 5. If `spec.replicas` differs from the Deployment's, the Deployment is updated.
//! 6. The Foo's `status.availableReplicas` is set from the Deployment's through the status
//!    subresource, and a Normal event `Synced` is recorded.
//!
//! Changes to Deployments reach their Foo through [`ControllerBuilder::owns`]
//! (`handleObject`).
//!
//! Two deliberate differences: the Deployment is scaled by updating the cached object's
//! `spec.replicas` at its resourceVersion (optimistic concurrency) instead of replacing it
//! blindly with a fresh one, and the Foo status is written only when it changes (the
//! original writes it on every sync; unchanged writes are no-ops on a real API server), as a
//! server-side apply of the status subresource rather than an update of a cached copy (which
//! conflicts whenever the cache has not yet seen the previous status write): the generated
//! `FooApply`, as field manager `sample-controller`.
//!
//! [`ControllerBuilder::owns`]: kinform::controller::ControllerBuilder::owns

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use k8s_openapi::api::core::v1::{Container, PodSpec, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use kinform::client::{ApplyParams, PostParams};
use kinform::controller::shard::{ShardHandle, ShardLabels, ShardingConfig};
use kinform::controller::{
    Action, Controller, ControllerMetricsProvider, LeaderElection, Request, controller_reference,
    is_controlled_by,
};
use kinform::events::{EventRecorder, NewEvent};
use kinform::informer::InformerFactory;
use kinform::leader::ConfigError;
use kinform::lister::Lister;
use kinform::{Api, Client, HasMetadata};

use crate::api::samplecontroller::v1alpha1::Foo;
use crate::api::samplecontroller::v1alpha1::FooApply;
use crate::api::samplecontroller::v1alpha1::foo::FooStatus;
use crate::api::samplecontroller::v1alpha1::foo::apply::FooStatusApply;

/// The controller's name: the workqueue's name, the events' reporting controller.
pub const CONTROLLER_NAME: &str = "sample-controller";
/// Event reason of a successful sync.
pub const SUCCESS_SYNCED: &str = "Synced";
/// Event reason of a Deployment that exists and is not owned by the Foo.
pub const ERR_RESOURCE_EXISTS: &str = "ErrResourceExists";
/// Event message of a successful sync.
pub const MESSAGE_RESOURCE_SYNCED: &str = "Foo synced successfully";

/// Why a sync failed (the key is then retried with backoff).
#[derive(Debug, thiserror::Error)]
pub enum SyncError {
    /// A request to the API server failed.
    #[error("{action} {namespace}/{name}: {source}")]
    Api {
        /// What was being done (`creating deployment`, ...).
        action: &'static str,
        /// The namespace of the object.
        namespace: String,
        /// The name of the object.
        name: String,
        /// The client error, with the server's Status.
        source: kinform::Error,
    },
    /// The Deployment exists and is not controlled by this Foo (`MessageResourceExists`).
    #[error("Resource {0:?} already exists and is not managed by Foo")]
    ResourceExists(String),
    /// `spec.replicas` does not fit a Deployment's replica count.
    #[error("spec.replicas {0} is out of range")]
    Replicas(i64),
}

/// Where the reconcile reads Deployments.
enum Deployments {
    /// The factory's cache of every Deployment.
    All(Lister<Deployment>),
    /// A sharded replica's cache of its membership's Deployments.
    Sharded(InformerFactory, ShardHandle),
}

impl Deployments {
    fn get(&self, namespace: &str, name: &str) -> Option<Arc<Deployment>> {
        match self {
            Self::All(lister) => lister.get(namespace, name),
            Self::Sharded(factory, shard) => factory
                .informer_in::<Deployment>(shard.scope())
                .lister()
                .get(namespace, name),
        }
    }
}

/// What the reconcile needs: listers, clients, the event recorder.
pub struct FooController {
    client: Client,
    deployments: Deployments,
    recorder: Option<EventRecorder>,
}

impl FooController {
    /// Builds the controller on `factory`: Foos are the primary type, Deployments are owned.
    /// Events go to `recorder` when given.
    pub fn new(
        factory: &InformerFactory,
        workers: usize,
        recorder: Option<EventRecorder>,
    ) -> (Arc<Self>, Controller<Foo>) {
        let controller = Controller::<Foo>::builder(factory)
            .name(CONTROLLER_NAME)
            .workers(workers)
            .owns::<Deployment>()
            .build();
        (Self::around(factory, recorder), controller)
    }

    /// [`new`](Self::new), as one replica of a leader-elected controller: it reconciles
    /// only while it holds the Lease `election` names, and with `warm_standby` keeps its
    /// caches synced meanwhile; reconcile and workqueue metrics go to `metrics`.
    pub fn elected(
        factory: &InformerFactory,
        workers: usize,
        recorder: Option<EventRecorder>,
        election: LeaderElection,
        warm_standby: bool,
        metrics: Option<Arc<dyn ControllerMetricsProvider>>,
    ) -> Result<(Arc<Self>, Controller<Foo>), ConfigError> {
        let mut builder = Controller::<Foo>::builder(factory)
            .name(CONTROLLER_NAME)
            .workers(workers)
            .owns::<Deployment>()
            .leader_election(election)?
            .warm_standby(warm_standby);
        if let Some(metrics) = metrics {
            builder = builder.metrics(metrics);
        }
        Ok((Self::around(factory, recorder), builder.build()))
    }

    /// [`new`](Self::new), as one replica of a sharded controller when `sharding` is given
    /// (the Foos and their Deployments are shared among the replicas; see
    /// `kinform::controller::shard`). The Deployments are read from the replica's sharded
    /// cache of its current membership — the informer whose events reach the reconcile, so
    /// it is never behind them, and a fresh one after a rejoin — and the reconcile puts its
    /// Foo's shard label on the Deployments it creates, so they are in that cache at once.
    pub fn with_sharding(
        factory: &InformerFactory,
        workers: usize,
        recorder: Option<EventRecorder>,
        sharding: Option<ShardingConfig>,
    ) -> Result<(Arc<Self>, Controller<Foo>), ConfigError> {
        let mut builder = Controller::<Foo>::builder(factory)
            .name(CONTROLLER_NAME)
            .workers(workers)
            .owns::<Deployment>();
        if let Some(config) = sharding {
            builder = builder.sharded(config)?;
        }
        let controller = builder.build();
        let deployments = match controller.shard() {
            Some(shard) => Deployments::Sharded(factory.clone(), shard),
            None => Deployments::All(factory.lister::<Deployment>()),
        };
        Ok((
            Arc::new(Self {
                client: factory.client().clone(),
                deployments,
                recorder,
            }),
            controller,
        ))
    }

    fn around(factory: &InformerFactory, recorder: Option<EventRecorder>) -> Arc<Self> {
        Arc::new(Self {
            client: factory.client().clone(),
            deployments: Deployments::All(factory.lister::<Deployment>()),
            recorder,
        })
    }

    fn event(&self, foo: &Foo, event: NewEvent) {
        if let Some(r) = &self.recorder {
            r.record(foo, event);
        }
    }

    /// One sync of one Foo key (`syncHandler`).
    pub async fn reconcile(self: Arc<Self>, req: Request<Foo>) -> Result<Action, SyncError> {
        let Some(foo) = req.object else {
            tracing::info!(key = %req.key, "foo in work queue no longer exists");
            return Ok(Action::done());
        };
        let namespace = foo.namespace().unwrap_or("default").to_owned();
        let spec = foo.spec.clone().unwrap_or_default();
        let Some(deployment_name) = spec.deployment_name.filter(|n| !n.is_empty()) else {
            tracing::error!(key = %req.key, "deployment name must be specified");
            return Ok(Action::done());
        };
        let replicas = match spec.replicas {
            Some(r) => Some(i32::try_from(r).map_err(|_| SyncError::Replicas(r))?),
            None => None,
        };
        let api: Api<Deployment> = Api::namespaced(self.client.clone(), &namespace);
        let api_error = |action, source| SyncError::Api {
            action,
            namespace: namespace.clone(),
            name: deployment_name.clone(),
            source,
        };

        let mut deployment = match self.deployments.get(&namespace, &deployment_name) {
            Some(d) => d,
            None => {
                tracing::info!(key = %req.key, deployment = %deployment_name, "creating deployment");
                let created = api
                    .create(
                        &PostParams::default(),
                        &new_deployment(&foo, &deployment_name, replicas),
                    )
                    .await
                    .map_err(|e| api_error("creating deployment", e))?;
                Arc::new(created)
            }
        };

        if !is_controlled_by(&*deployment, &*foo) {
            let err = SyncError::ResourceExists(deployment_name.clone());
            self.event(
                &foo,
                NewEvent::warning(ERR_RESOURCE_EXISTS, "Sync").note(err.to_string()),
            );
            return Err(err);
        }

        let current = deployment.spec.as_ref().and_then(|s| s.replicas);
        if let Some(want) = replicas
            && Some(want) != current
        {
            tracing::info!(key = %req.key, deployment = %deployment_name, from = ?current, to = want, "scaling deployment");
            let mut scaled = (*deployment).clone();
            scaled.spec.get_or_insert_with(Default::default).replicas = Some(want);
            let updated = api
                .replace(&deployment_name, &PostParams::default(), &scaled)
                .await
                .map_err(|e| api_error("updating deployment", e))?;
            deployment = Arc::new(updated);
        }

        self.update_foo_status(&foo, &deployment).await?;
        self.event(
            &foo,
            NewEvent::normal(SUCCESS_SYNCED, "Sync").note(MESSAGE_RESOURCE_SYNCED),
        );
        Ok(Action::done())
    }

    async fn update_foo_status(&self, foo: &Foo, deployment: &Deployment) -> Result<(), SyncError> {
        let available = deployment
            .status
            .as_ref()
            .and_then(|s| s.available_replicas)
            .unwrap_or(0);
        let available = i64::from(available);
        let status = FooStatus {
            available_replicas: Some(available),
        };
        if foo.status.as_ref() == Some(&status) {
            return Ok(());
        }
        // A server-side apply of the status subresource, with the generated apply
        // configuration: it carries no resourceVersion, so a cache that lags behind our own
        // previous write does not cause a 409 Conflict, and the controller owns exactly
        // `status.availableReplicas` (forced: the status is this controller's to write).
        let namespace = foo.namespace().unwrap_or("default");
        let config = FooApply::new(foo.name())
            .with_namespace(namespace)
            .with_status(FooStatusApply::default().with_available_replicas(available));
        Api::<Foo>::namespaced(self.client.clone(), namespace)
            .apply_status(
                foo.name(),
                &ApplyParams::new(CONTROLLER_NAME).force(),
                &config,
            )
            .await
            .map_err(|source| SyncError::Api {
                action: "updating foo status",
                namespace: namespace.to_owned(),
                name: foo.name().to_owned(),
                source,
            })?;
        Ok(())
    }
}

/// The Foo's shard label, when a sharded controller labelled it.
fn shard_label(foo: &Foo) -> Option<BTreeMap<String, String>> {
    let key = ShardLabels::for_controller(CONTROLLER_NAME).shard;
    let value = foo.labels().get(&key)?.clone();
    Some(BTreeMap::from([(key, value)]))
}

/// The Deployment of a Foo (`newDeployment`): nginx pods labelled `app=nginx,controller=<foo>`,
/// owned by the Foo.
pub fn new_deployment(foo: &Foo, name: &str, replicas: Option<i32>) -> Deployment {
    let labels = BTreeMap::from([
        ("app".to_owned(), "nginx".to_owned()),
        ("controller".to_owned(), foo.name().to_owned()),
    ]);
    Deployment {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            namespace: foo.namespace().map(str::to_owned),
            owner_references: Some(vec![controller_reference(foo)]),
            // A sharded replica's Deployments carry their Foo's shard label from the start.
            labels: shard_label(foo),
            ..ObjectMeta::default()
        },
        spec: Some(DeploymentSpec {
            replicas,
            selector: LabelSelector {
                match_labels: Some(labels.clone()),
                ..LabelSelector::default()
            },
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels),
                    ..ObjectMeta::default()
                }),
                spec: Some(PodSpec {
                    containers: vec![Container {
                        name: "nginx".to_owned(),
                        image: Some("nginx:latest".to_owned()),
                        ..Container::default()
                    }],
                    ..PodSpec::default()
                }),
            },
            ..DeploymentSpec::default()
        }),
        status: None,
    }
}
