//! The embedded scenarios of `cargo run -p sample-controller`: the server they run on
//! ([`Embedded`]), the sharded one ([`sharded`], `--shards`), and the [`Observer`] that
//! watches Foos and Deployments converge (also used by the integration tests).

use std::net::SocketAddr;
use std::pin::pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kinform::CancellationToken;
use kinform::client::{Patch, PatchParams, PostParams};
use kinform::controller::is_controlled_by;
use kinform::informer::{EventHandlerFns, InformerFactory};
use kinform::lister::Lister;
use kinform::testing::TestApiServer;
use kinform::{Client, HasMetadata};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::Notify;

use crate::api::prelude::*;
use crate::api::samplecontroller::v1alpha1::Foo;
use crate::runner::{self, Options};
use crate::{FOO_CRD_YAML, simulator};

/// The error of the embedded demos.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// `GET path` on the admin endpoint at `address` (HTTP/1.0, no client library): the status
/// code and the body, as `curl` would show them.
pub async fn admin_get(address: SocketAddr, path: &str) -> Result<(u16, String), BoxError> {
    let mut stream = tokio::net::TcpStream::connect(address).await?;
    stream
        .write_all(format!("GET {path} HTTP/1.0\r\nHost: {address}\r\n\r\n").as_bytes())
        .await?;
    let mut answer = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut answer)).await??;
    let answer = String::from_utf8_lossy(&answer);
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| format!("not an HTTP answer: {head:?}"))?;
    Ok((status, body.to_owned()))
}
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

/// What both embedded demos start with: a TestApiServer with the Foo CRD, a client of it, and
/// the simulated kube-controller-manager (Deployment status, garbage collection) running until
/// `cancel`.
pub struct Embedded {
    /// The server.
    pub server: TestApiServer,
    /// A client of it.
    pub client: Client,
    /// Stops the simulator (and whatever else the demo ties to it).
    pub cancel: CancellationToken,
    /// The simulator's informers.
    pub sim_factory: InformerFactory,
    /// The simulator's run.
    pub sim: tokio::task::JoinHandle<kinform::controller::ReconcileStats>,
}

impl Embedded {
    /// Starts it; `banner` ends the line that names the server.
    pub async fn start(banner: &str) -> Result<Self, BoxError> {
        let server = TestApiServer::start().await?;
        server.register_crd_yaml(FOO_CRD_YAML)?;
        println!(
            "embedded TestApiServer at {} with the Foo CRD installed{banner}",
            server.url()
        );
        let client = server.client()?;
        let cancel = CancellationToken::new();
        let sim_factory = InformerFactory::new(client.clone());
        let sim = tokio::spawn(simulator::run(
            sim_factory.clone(),
            Duration::from_millis(300),
            cancel.clone().cancelled_owned(),
        ));
        Ok(Embedded {
            server,
            client,
            cancel,
            sim_factory,
            sim,
        })
    }

    /// Stops the simulator and the server; returns the simulator's counters.
    pub async fn stop(self) -> Result<kinform::controller::ReconcileStats, BoxError> {
        self.cancel.cancel();
        let stats = self.sim.await?;
        self.sim_factory.shutdown().await;
        self.server.shutdown().await;
        Ok(stats)
    }
}

/// The shard label of the Foo controller.
pub const SHARD_LABEL: &str = "shard.kinform.io/sample-controller";

/// What the sharded demo saw.
#[derive(Clone, Debug)]
pub struct ShardedDemo {
    /// Each Foo's owning replica while both ran.
    pub shared: Vec<(String, String)>,
    /// Each Foo's owning replica after replica-b left.
    pub after_leave: Vec<(String, String)>,
    /// The state once replica-b had left and bravo was scaled to 4.
    pub last: Snapshot,
    /// Reconciles of replica-a and replica-b.
    pub reconciles: (u64, u64),
    /// How long the demo took.
    pub elapsed: Duration,
}

/// The embedded demo with `--shards`: two replicas share six Foos; replica-b leaves (drains
/// and releases its Lease), replica-a takes all of them over while bravo is scaled, and
/// every Foo converges. Fails if a wait times out.
pub async fn sharded(options: Options) -> Result<ShardedDemo, BoxError> {
    let started = Instant::now();
    let embedded = Embedded::start("; two sharded replicas").await?;
    let client = embedded.client.clone();
    let ns = "default";
    // Short Leases so the demo is quick: 4 s, renewed every 500 ms.
    let timing = kinform::leader::LeaderElectionConfig {
        lease_duration: Duration::from_secs(4),
        renew_deadline: Duration::from_secs(3),
        retry_period: Duration::from_millis(500),
        release_on_cancel: true,
    };
    let mut replicas = Vec::new();
    for id in ["replica-a", "replica-b"] {
        let mut o = options.clone();
        o.identity = id.to_owned();
        o.election = timing.clone();
        let stop = CancellationToken::new();
        let c = embedded.server.client()?;
        replicas.push((
            id,
            stop.clone(),
            tokio::spawn(runner::run_sharded(c, o, stop)),
        ));
    }
    let observer = Observer::start(client.clone()).await?;
    let foos = client.samplecontroller_v1alpha1().foos(ns);
    let names = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot"];
    println!("\n== creating six Foos");
    for (i, name) in names.iter().enumerate() {
        let replicas = i64::try_from(i % 3 + 1).unwrap_or(1);
        foos.create(
            &PostParams::default(),
            &foo(ns, name, &format!("{name}-nginx"), replicas),
        )
        .await?;
    }
    let owners = |s: &Snapshot| -> Vec<(String, String)> {
        s.foos
            .iter()
            .map(|f| {
                let owner = f.labels().get(SHARD_LABEL).cloned().unwrap_or_default();
                (f.name().to_owned(), owner)
            })
            .collect()
    };
    let last = wait(
        &observer,
        "all Foos converge, shared by the two replicas",
        |s| {
            s.converged()
                && s.foos.len() == names.len()
                && s.foos.iter().all(|f| f.labels().contains_key(SHARD_LABEL))
        },
    )
    .await?;
    let shared = owners(&last);
    for (foo, owner) in &shared {
        println!("  {foo:<8} reconciled by {owner}");
    }

    println!("\n== replica-b leaves (drains, releases its Lease); its Foos move to replica-a");
    let (_, stop_b, task_b) = replicas.pop().ok_or("two replicas")?;
    stop_b.cancel();
    let report_b = task_b.await??;
    println!(
        "  replica-b stopped after {} reconciles",
        report_b.stats.reconciles
    );
    foos.patch(
        "bravo",
        &PatchParams::default(),
        &Patch::Merge(serde_json::json!({"spec": {"replicas": 4}})),
    )
    .await?;
    let last = wait(
        &observer,
        "every Foo is replica-a's and bravo reaches 4",
        |s| {
            s.converged()
                && s.foos
                    .iter()
                    .all(|f| f.labels().get(SHARD_LABEL).map(String::as_str) == Some("replica-a"))
                && s.deployment(ns, "bravo-nginx")
                    .and_then(|d| d.spec.as_ref()?.replicas)
                    == Some(4)
        },
    )
    .await?;
    let after_leave = owners(&last);
    for (foo, owner) in &after_leave {
        println!("  {foo:<8} reconciled by {owner}");
    }
    let (_, stop_a, task_a) = replicas.pop().ok_or("two replicas")?;
    stop_a.cancel();
    let report_a = task_a.await??;
    observer.shutdown().await;
    embedded.stop().await?;
    Ok(ShardedDemo {
        shared,
        after_leave,
        last,
        reconciles: (report_a.stats.reconciles, report_b.stats.reconciles),
        elapsed: started.elapsed(),
    })
}

/// Waits until `done` holds (60 s at most), printing each new state as a progress line.
pub async fn wait(
    observer: &Observer,
    what: &str,
    done: impl Fn(&Snapshot) -> bool,
) -> Result<Snapshot, BoxError> {
    let t = Instant::now();
    let mut last = String::new();
    let result = observer
        .wait_for(Duration::from_secs(60), done, |s| {
            let line = s.line();
            if line != last {
                println!("  [{:>5.2}s] {line}", t.elapsed().as_secs_f64());
                last = line;
            }
        })
        .await;
    match result {
        Ok(s) => {
            println!("  done: {what} in {:.2}s", t.elapsed().as_secs_f64());
            Ok(s)
        }
        Err(s) => Err(format!("timed out waiting until {what}; last state: {}", s.line()).into()),
    }
}
