//! The embedded scenario of `cargo run -p sample-controller`, and the [`Observer`] that
//! watches Foos and Deployments converge (also used by the integration test).

use std::pin::pin;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kinform::controller::is_controlled_by;
use kinform::informer::{EventHandlerFns, InformerFactory};
use kinform::lister::Lister;
use kinform::{Client, HasMetadata};
use tokio::sync::Notify;

use crate::api::samplecontroller::v1alpha1::Foo;
use crate::api::samplecontroller::v1alpha1::foo::FooSpec;

/// A Foo to create.
pub fn foo(namespace: &str, name: &str, deployment: &str, replicas: i64) -> Foo {
    Foo {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            namespace: Some(namespace.to_owned()),
            ..ObjectMeta::default()
        },
        spec: Some(FooSpec {
            deployment_name: Some(deployment.to_owned()),
            replicas: Some(replicas),
        }),
        status: None,
    }
}

/// What the cluster holds now, as seen by an observer's informers.
#[derive(Clone, Debug)]
pub struct Snapshot {
    /// Every Foo.
    pub foos: Vec<Arc<Foo>>,
    /// Every Deployment.
    pub deployments: Vec<Arc<Deployment>>,
}

impl Snapshot {
    /// The Deployment named `name` in `namespace`.
    pub fn deployment(&self, namespace: &str, name: &str) -> Option<&Arc<Deployment>> {
        self.deployments
            .iter()
            .find(|d| d.name() == name && d.namespace() == Some(namespace))
    }

    /// The Deployment a Foo names.
    pub fn deployment_of(&self, foo: &Foo) -> Option<&Arc<Deployment>> {
        let name = foo.spec.as_ref()?.deployment_name.as_deref()?;
        self.deployment(foo.namespace().unwrap_or("default"), name)
    }

    /// `(converged, managed)`: how many Foos that own their Deployment have it at
    /// `spec.replicas` with as many available, mirrored in their status.
    pub fn progress(&self) -> (usize, usize) {
        let mut managed = 0;
        let mut converged = 0;
        for foo in &self.foos {
            let Some(d) = self.deployment_of(foo) else {
                managed += 1;
                continue;
            };
            if !is_controlled_by(&**d, &**foo) {
                continue;
            }
            managed += 1;
            let want = foo.spec.as_ref().and_then(|s| s.replicas);
            let spec = d.spec.as_ref().and_then(|s| s.replicas).map(i64::from);
            let available = d
                .status
                .as_ref()
                .and_then(|s| s.available_replicas)
                .map(i64::from);
            let reported = foo.status.as_ref().and_then(|s| s.available_replicas);
            if want.is_some() && spec == want && available == want && reported == want {
                converged += 1;
            }
        }
        (converged, managed)
    }

    /// Whether every managed Foo has converged.
    pub fn converged(&self) -> bool {
        let (c, m) = self.progress();
        c == m
    }

    /// One line: `foos converged 2/3 | alpha-nginx 1/1 bravo-nginx 2/3`.
    pub fn line(&self) -> String {
        let (c, m) = self.progress();
        let mut deployments: Vec<String> = self
            .deployments
            .iter()
            .map(|d| {
                let want = d.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1);
                let got = d
                    .status
                    .as_ref()
                    .and_then(|s| s.available_replicas)
                    .unwrap_or(0);
                format!("{} {got}/{want}", d.name())
            })
            .collect();
        deployments.sort();
        format!("foos converged {c}/{m} | {}", deployments.join(" "))
    }
}

/// Watches Foos and Deployments with its own informers and wakes waiters on every change.
pub struct Observer {
    factory: InformerFactory,
    foos: Lister<Foo>,
    deployments: Lister<Deployment>,
    changed: Arc<Notify>,
}

impl Observer {
    /// Starts the informers and waits for their first list. The observer only ever watches
    /// the embedded `TestApiServer`, so its reflectors use the test-sized backoff
    /// (`InformerFactoryBuilder::test_backoff`).
    pub async fn start(client: Client) -> Result<Self, kinform::informer::CacheSyncError> {
        let factory = InformerFactory::builder(client).test_backoff().build();
        let changed = Arc::new(Notify::new());
        let n1 = changed.clone();
        let n2 = changed.clone();
        factory.informer::<Foo>().add_event_handler(
            EventHandlerFns::new()
                .on_add({
                    let n = n1.clone();
                    move |_, _| n.notify_waiters()
                })
                .on_update({
                    let n = n1.clone();
                    move |_, _| n.notify_waiters()
                })
                .on_delete(move |_| n1.notify_waiters()),
        );
        factory.informer::<Deployment>().add_event_handler(
            EventHandlerFns::new()
                .on_add({
                    let n = n2.clone();
                    move |_, _| n.notify_waiters()
                })
                .on_update({
                    let n = n2.clone();
                    move |_, _| n.notify_waiters()
                })
                .on_delete(move |_| n2.notify_waiters()),
        );
        factory.start();
        factory.wait_for_cache_sync(Duration::from_secs(60)).await?;
        Ok(Self {
            foos: factory.lister::<Foo>(),
            deployments: factory.lister::<Deployment>(),
            factory,
            changed,
        })
    }

    /// The current state.
    pub fn snapshot(&self) -> Snapshot {
        let mut foos = self.foos.list_all();
        foos.sort_by_key(|f| f.key());
        let mut deployments = self.deployments.list_all();
        deployments.sort_by_key(|d| d.key());
        Snapshot { foos, deployments }
    }

    /// Waits until `done` holds, calling `on_change` with each new state; gives up after
    /// `timeout` and returns the last state as the error.
    pub async fn wait_for(
        &self,
        timeout: Duration,
        done: impl Fn(&Snapshot) -> bool,
        mut on_change: impl FnMut(&Snapshot),
    ) -> Result<Snapshot, Box<Snapshot>> {
        let wait = async {
            loop {
                let mut notified = pin!(self.changed.notified());
                notified.as_mut().enable();
                let now = self.snapshot();
                on_change(&now);
                if done(&now) {
                    return now;
                }
                notified.await;
            }
        };
        match tokio::time::timeout(timeout, wait).await {
            Ok(s) => Ok(s),
            Err(_) => Err(Box::new(self.snapshot())),
        }
    }

    /// Stops the informers.
    pub async fn shutdown(&self) {
        self.factory.shutdown().await;
    }
}
