//! Fleets: one controller over many `TestApiServer`s, the clusters coming from a directory of
//! kubeconfig files or a static list, shared over replicas by Leases on a management server.
//!
//! The work per cluster is a ConfigMap controller; [`FleetWitness`] records which replica
//! runs which cluster and every reconcile, and catches two replicas running one cluster at
//! once. Real time (the kubeconfig directory is polled through the file system), bounded
//! waits on conditions.

use std::time::Duration;

use k8s_openapi::api::core::v1::Secret;
use kinform::CancellationToken;
use kinform::controller::fleet::{
    CLUSTER_NAME_LABEL, Cluster, Fleet, FleetHandle, FleetSharding, KUBECONFIG_DATA_KEY,
    KubeconfigDir, KubeconfigSecrets, StaticClusters,
};
use kinform::controller::shard::owner_of;
use kinform::testing::TestApiServer;
use kinform::{Api, Client};
use kinform_tests::controller::{configmap, factory};
use kinform_tests::election::timing;
use kinform_tests::fleet::{FleetWitness, configmap_work};

const LIMIT: Duration = Duration::from_secs(30);

async fn servers(n: usize) -> Vec<TestApiServer> {
    let mut out = Vec::new();
    for _ in 0..n {
        out.push(TestApiServer::start().await.expect("a test server starts"));
    }
    out
}

fn all_reconciled(w: &FleetWitness, cluster: &str, names: &[&str]) -> bool {
    names
        .iter()
        .all(|n| w.reconciles(cluster, &format!("default/{n}")) > 0)
}

/// A directory provider engages a cluster per file, follows files added, rewritten and
/// removed, and one stopped server does not hold up the others.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fleet_follows_its_kubeconfig_directory() {
    let mut servers = servers(5).await;
    let dir = tempfile::tempdir().unwrap();
    let file = |i: usize| dir.path().join(format!("c{i}.yaml"));
    for (i, s) in servers.iter().enumerate() {
        for n in ["a", "b", "c"] {
            configmap(s, n);
        }
        if i < 4 {
            s.write_kubeconfig(file(i)).unwrap();
        }
    }
    // Not a kubeconfig: warned about, never engaged; hidden files are not read.
    std::fs::write(dir.path().join("broken.yaml"), "clusters: [").unwrap();
    std::fs::write(dir.path().join(".hidden.yaml"), "x").unwrap();

    let witness = FleetWitness::new();
    let provider = KubeconfigDir::new(dir.path()).poll(Duration::from_millis(100));
    let fleet = Fleet::new("fleet-test", provider)
        .unwrap()
        .informer_factory(factory);
    let handle = fleet.handle();
    let stop = CancellationToken::new();
    let run = tokio::spawn(fleet.run(
        configmap_work(witness.clone(), "r"),
        stop.clone().cancelled_owned(),
    ));

    witness
        .wait_for("the four clusters' ConfigMaps reconciled", LIMIT, |w| {
            (0..4).all(|i| all_reconciled(w, &format!("c{i}"), &["a", "b", "c"]))
        })
        .await;
    let mut engaged = handle.engaged();
    engaged.sort();
    assert_eq!(engaged, ["c0", "c1", "c2", "c3"]);
    for i in 0..4 {
        for n in ["a", "b", "c"] {
            assert_eq!(
                witness.reconciles(&format!("c{i}"), &format!("default/{n}")),
                1,
                "each object once per change"
            );
        }
    }

    // A file added engages its cluster.
    servers[4].write_kubeconfig(file(4)).unwrap();
    witness
        .wait_for("the added cluster reconciled", LIMIT, |w| {
            all_reconciled(w, "c4", &["a", "b", "c"])
        })
        .await;

    // A file removed disengages its cluster: its work stops and sees no more changes.
    std::fs::remove_file(file(1)).unwrap();
    witness
        .wait_for("c1's work stopped", LIMIT, |w| {
            !w.runners().contains_key("c1")
        })
        .await;
    assert!(!handle.engaged().contains(&"c1".to_owned()));
    // Its informers were stopped with the work (the fleet shuts the engagement's factory
    // down): with its watches ended, nothing lists or watches the cluster again.
    let seen = servers[1].requests().len();
    servers[1].faults().drop_watches();
    tokio::time::sleep(Duration::from_secs(2)).await;
    let after: Vec<String> = servers[1].requests().split_off(seen);
    assert!(
        after.is_empty(),
        "a disengaged cluster's informers still run: {after:?}"
    );
    configmap(&servers[1], "late");

    // A stopped server: the others still follow their changes.
    let stopped = servers.remove(3);
    stopped.shutdown().await;
    for i in [0, 2, 3] {
        configmap(&servers[i], "after");
    }
    let names = ["c0", "c2", "c4"];
    witness
        .wait_for("the live clusters' new ConfigMaps reconciled", LIMIT, |w| {
            names.iter().all(|c| all_reconciled(w, c, &["after"]))
        })
        .await;
    assert_eq!(
        witness.reconciles("c1", "default/late"),
        0,
        "c1 was disengaged"
    );
    assert!(
        handle.engaged().contains(&"c3".to_owned()),
        "an unreachable cluster stays engaged, retrying on its own"
    );

    // A file rewritten reconnects its cluster (its work starts again).
    let mut text = std::fs::read_to_string(file(2)).unwrap();
    text.push_str("# rotated\n");
    std::fs::write(file(2), text).unwrap();
    witness
        .wait_for("c2 reconnected", LIMIT, |w| w.engagements("c2") == 2)
        .await;
    assert!(!handle.engaged().contains(&"broken".to_owned()));

    stop.cancel();
    run.await.unwrap();
    assert!(witness.runners().is_empty(), "{:?}", witness.runners());
    assert!(witness.overlaps().is_empty(), "{:?}", witness.overlaps());
}

/// One replica of a sharded fleet, on its own tokio runtime so that it can be killed as a
/// crashed process is: every task dropped, no Lease released.
struct Replica {
    id: String,
    handle: FleetHandle,
    stop: CancellationToken,
    thread: Option<std::thread::JoinHandle<()>>,
    kill: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Replica {
    fn start(
        id: &str,
        mgmt: &TestApiServer,
        members: &[TestApiServer],
        w: &std::sync::Arc<FleetWitness>,
    ) -> Self {
        let (mgmt, members) = (
            mgmt.client_config(),
            members
                .iter()
                .map(TestApiServer::client_config)
                .collect::<Vec<_>>(),
        );
        let (stop, witness, replica) = (CancellationToken::new(), w.clone(), id.to_owned());
        let (kill, killed) = tokio::sync::oneshot::channel::<()>();
        let (handle_tx, handle_rx) = std::sync::mpsc::channel();
        let run_stop = stop.clone();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                let clusters = members
                    .into_iter()
                    .enumerate()
                    .map(|(i, c)| Cluster::new(format!("m{i}"), Client::new(c).unwrap()));
                let leases = Api::namespaced(Client::new(mgmt).unwrap(), "default");
                let sharding = FleetSharding::new(leases, replica.clone()).timing(timing());
                let fleet = Fleet::new("fleet-test", StaticClusters::new(clusters))
                    .unwrap()
                    .sharded(sharding)
                    .unwrap()
                    .informer_factory(factory);
                handle_tx.send(fleet.handle()).unwrap();
                tokio::select! {
                    () = fleet.run(configmap_work(witness, &replica), run_stop.cancelled_owned()) => {}
                    _ = killed => {}
                }
            });
            // A crash: the runtime's tasks are dropped where they stand.
            rt.shutdown_timeout(Duration::from_secs(1));
        });
        Self {
            id: id.to_owned(),
            handle: handle_rx.recv().unwrap(),
            stop,
            thread: Some(thread),
            kill: Some(kill),
        }
    }

    fn stop(mut self) {
        self.stop.cancel();
        self.thread.take().unwrap().join().unwrap();
    }

    fn kill(mut self, witness: &FleetWitness) {
        let _ = self.kill.take().unwrap().send(());
        self.thread.take().unwrap().join().unwrap();
        witness.crashed(&self.id);
    }
}

fn expected(clusters: usize, members: &[&str]) -> std::collections::BTreeMap<String, String> {
    (0..clusters)
        .map(|i| {
            let c = format!("m{i}");
            let owner = owner_of(&c, members.iter().copied()).unwrap().to_owned();
            (c, owner)
        })
        .collect()
}

/// Clusters shared by replicas: each runs on the member rendezvous hashing picks, never on
/// two at once; a killed replica's clusters move when their Leases expire, a joining
/// replica takes its share after the previous one drained, a stopping one hands over.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sharded_fleet_runs_each_cluster_on_exactly_one_replica() {
    let mgmt = TestApiServer::start().await.unwrap();
    let members = servers(6).await;
    for s in &members {
        configmap(s, "a");
    }
    let witness = FleetWitness::new();
    let a = Replica::start("replica-a", &mgmt, &members, &witness);
    let b = Replica::start("replica-b", &mgmt, &members, &witness);
    let both = expected(6, &["replica-a", "replica-b"]);
    // A runner is recorded when its work starts, before its informer syncs: the reconciles
    // follow.
    witness
        .wait_for(
            "the clusters split over a and b, each reconciled",
            LIMIT,
            |w| {
                w.runners() == both
                    && (0..6).all(|i| w.reconciles(&format!("m{i}"), "default/a") > 0)
            },
        )
        .await;
    assert_eq!(a.handle.members(), ["replica-a", "replica-b"]);

    b.kill(&witness);
    let alone = expected(6, &["replica-a"]);
    witness
        .wait_for("a killed replica's clusters moved to a", LIMIT, |w| {
            w.runners() == alone
        })
        .await;

    let c = Replica::start("replica-c", &mgmt, &members, &witness);
    let with_c = expected(6, &["replica-a", "replica-c"]);
    witness
        .wait_for("c took its share", LIMIT, |w| w.runners() == with_c)
        .await;

    c.stop();
    witness
        .wait_for("a stopped replica handed its clusters back", LIMIT, |w| {
            w.runners() == alone
        })
        .await;
    a.stop();
    assert!(witness.overlaps().is_empty(), "{:?}", witness.overlaps());
    assert!(witness.runners().is_empty());
}

/// A Secret of Cluster API's kubeconfig convention in the management server.
fn kubeconfig_secret(mgmt: &TestApiServer, cluster: &str, member: &TestApiServer) {
    use base64::Engine as _;
    let value = base64::engine::general_purpose::STANDARD.encode(member.kubeconfig_yaml());
    mgmt.create_object(serde_json::json!({
        "apiVersion": "v1", "kind": "Secret", "type": "cluster.x-k8s.io/secret",
        "metadata": {
            "name": format!("{cluster}-kubeconfig"), "namespace": "default",
            "labels": {(CLUSTER_NAME_LABEL): cluster},
        },
        "data": {(KUBECONFIG_DATA_KEY): value},
    }))
    .unwrap();
}

/// The Secrets provider engages the cluster of each Cluster API kubeconfig Secret, ignores
/// the cluster's other Secrets, and disengages a cluster whose Secret is deleted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fleet_follows_cluster_api_kubeconfig_secrets() {
    let mgmt = TestApiServer::start().await.unwrap();
    let members = servers(2).await;
    for s in &members {
        configmap(s, "a");
    }
    kubeconfig_secret(&mgmt, "east", &members[0]);
    // Another Secret of the same cluster (Cluster API writes `<cluster>-ca` and others).
    mgmt.create_object(serde_json::json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "east-ca", "namespace": "default",
                     "labels": {(CLUSTER_NAME_LABEL): "east"}},
        "data": {"tls.crt": "AA=="},
    }))
    .unwrap();
    let witness = FleetWitness::new();
    let provider = KubeconfigSecrets::new(mgmt.client().unwrap()).namespace("default");
    let fleet = Fleet::new("fleet-test", provider)
        .unwrap()
        .informer_factory(factory);
    let handle = fleet.handle();
    let stop = CancellationToken::new();
    let run = tokio::spawn(fleet.run(
        configmap_work(witness.clone(), "r"),
        stop.clone().cancelled_owned(),
    ));
    witness
        .wait_for("east reconciled", LIMIT, |w| {
            all_reconciled(w, "default/east", &["a"])
        })
        .await;
    kubeconfig_secret(&mgmt, "west", &members[1]);
    witness
        .wait_for("west reconciled", LIMIT, |w| {
            all_reconciled(w, "default/west", &["a"])
        })
        .await;
    assert_eq!(handle.engaged(), ["default/east", "default/west"]);

    let secrets: Api<Secret> = Api::namespaced(mgmt.client().unwrap(), "default");
    secrets
        .delete("east-kubeconfig", &Default::default())
        .await
        .unwrap();
    witness
        .wait_for("east disengaged", LIMIT, |w| {
            !w.runners().contains_key("default/east")
        })
        .await;
    assert_eq!(handle.engaged(), ["default/west"]);
    stop.cancel();
    run.await.unwrap();
    assert!(witness.overlaps().is_empty());
}

/// A ClusterProfile CRD for the hub: the Cluster Inventory API's group, kind and status
/// subresource, its status preserved as sent.
fn cluster_profile_crd() -> serde_json::Value {
    serde_json::json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "clusterprofiles.multicluster.x-k8s.io"},
        "spec": {"group": "multicluster.x-k8s.io", "scope": "Namespaced",
            "names": {"kind": "ClusterProfile", "plural": "clusterprofiles",
                      "singular": "clusterprofile", "listKind": "ClusterProfileList"},
            "versions": [{"name": "v1alpha1", "served": true, "storage": true,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                    "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}}}]}
    })
}

/// The exec plugin of the access config: answers with the token the profile's
/// `client.authentication.k8s.io/exec` extension carries (`spec.cluster.config.token` of
/// `KUBERNETES_EXEC_INFO`), and fails without it.
const PLUGIN: &str = r#"#!/usr/bin/env python3
import json, os, sys
info = json.loads(os.environ["KUBERNETES_EXEC_INFO"])
token = ((info.get("spec") or {}).get("cluster") or {}).get("config", {}).get("token")
if not token or "--fleet" not in sys.argv:
    sys.exit("no token in spec.cluster.config, or no --fleet argument")
print(json.dumps({"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential",
                  "status": {"token": token}}))
"#;

/// The ClusterProfile provider (KEP-4322's Cluster Inventory API, reached as
/// cluster-inventory-api's `pkg/access` does) engages each profile's cluster over HTTPS with
/// the profile's CA and the access config's exec plugin, told the profile's extension config
/// and given its profile-sourced arguments, and disengages a cluster whose profile goes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fleet_follows_cluster_profiles() {
    use base64::Engine as _;
    use kinform::controller::fleet::{
        ADDITIONAL_ARGS_EXTENSION, AccessConfig, ClusterProfile, ClusterProfiles, EXEC_EXTENSION,
    };
    use std::os::unix::fs::PermissionsExt as _;

    let hub = TestApiServer::start().await.unwrap();
    hub.register_crd(cluster_profile_crd()).unwrap();
    let mut members = Vec::new();
    for _ in 0..2 {
        let s = TestApiServer::builder().https().start().await.unwrap();
        configmap(&s, "a");
        members.push(s);
    }
    let dir = tempfile::tempdir().unwrap();
    let plugin = dir.path().join("plugin");
    std::fs::write(&plugin, PLUGIN).unwrap();
    std::fs::set_permissions(&plugin, std::fs::Permissions::from_mode(0o755)).unwrap();
    let access = AccessConfig::from_json(
        &serde_json::json!({"providers": [{"name": "token", "profileSourcedCLIArgsPolicy": "Append",
            "execConfig": {"apiVersion": "client.authentication.k8s.io/v1",
                           "command": plugin, "provideClusterInfo": true}}]})
        .to_string(),
        "the test's access config",
    )
    .unwrap();
    let profiles: Api<ClusterProfile> = Api::namespaced(hub.client().unwrap(), "default");
    let publish = |name: &'static str, member: &TestApiServer| {
        let profiles = profiles.clone();
        let ca = base64::engine::general_purpose::STANDARD.encode(member.ca_pem().unwrap());
        let (server, token) = (member.url(), member.token_for("fleet", &["system:masters"]));
        async move {
            let body = serde_json::json!({
                "apiVersion": "multicluster.x-k8s.io/v1alpha1", "kind": "ClusterProfile",
                "metadata": {"name": name},
                "status": {"accessProviders": [{"name": "token", "cluster": {
                    "server": server, "certificate-authority-data": ca,
                    "extensions": [
                        {"name": EXEC_EXTENSION, "extension": {"token": token}},
                        {"name": ADDITIONAL_ARGS_EXTENSION, "extension": ["--fleet"]}]}}]}});
            let manager = kinform::client::ApplyParams::new("cluster-manager");
            profiles.apply(name, &manager, &body).await.unwrap();
            profiles.apply_status(name, &manager, &body).await.unwrap();
        }
    };
    publish("east", &members[0]).await;
    let witness = FleetWitness::new();
    let provider = ClusterProfiles::new(hub.client().unwrap(), access).namespace("default");
    let fleet = Fleet::new("fleet-test", provider)
        .unwrap()
        .informer_factory(factory);
    let handle = fleet.handle();
    let stop = CancellationToken::new();
    let run = tokio::spawn(fleet.run(
        configmap_work(witness.clone(), "r"),
        stop.clone().cancelled_owned(),
    ));
    witness
        .wait_for("east reconciled", LIMIT, |w| {
            all_reconciled(w, "default/east", &["a"])
        })
        .await;
    publish("west", &members[1]).await;
    witness
        .wait_for("west reconciled", LIMIT, |w| {
            all_reconciled(w, "default/west", &["a"])
        })
        .await;
    assert_eq!(handle.engaged(), ["default/east", "default/west"]);

    profiles.delete("east", &Default::default()).await.unwrap();
    witness
        .wait_for("east disengaged", LIMIT, |w| {
            !w.runners().contains_key("default/east")
        })
        .await;
    assert_eq!(handle.engaged(), ["default/west"]);
    stop.cancel();
    run.await.unwrap();
    assert!(witness.overlaps().is_empty());
}
