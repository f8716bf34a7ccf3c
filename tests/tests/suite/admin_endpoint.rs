//! The admin endpoint (`kinform::admin`) over real HTTP: probes, Prometheus metrics and the
//! JSON state page of a controller running against TestApiServer; readiness of leader-elected
//! replicas (a leader and a warm standby are ready, a cold standby is not); bad requests
//! (unknown paths, wrong methods, bytes that are not HTTP, a collector that panics) answered
//! without taking the server down; graceful shutdown with a keep-alive connection open.

use std::collections::HashMap;
use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use kinform::CancellationToken;
use kinform::admin::{AdminError, AdminServer};
use kinform::controller::{Controller, PrometheusControllerMetrics};
use kinform::testing::TestApiServer;
use kinform_tests::controller::{Log, client, configmap, factory, run_recording};
use kinform_tests::election::{Activity, Replica, ReplicaOptions, create_configmaps};
use kinform_tests::http::Raw;
use prometheus::Registry;
use prometheus::core::{Collector, Desc};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

fn raw(admin: &AdminServer) -> Raw {
    Raw::new(&format!("http://{}", admin.local_addr()))
}

async fn state(http: &Raw) -> Value {
    let r = http.get("/debug/state").await;
    assert_eq!(r.status, 200);
    r.body
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn probes_metrics_and_state_of_a_running_controller() {
    let server = TestApiServer::start().await.unwrap();
    for i in 0..3 {
        configmap(&server, &format!("cm-{i}"));
    }
    let factory = factory(client(&server));
    let registry = Registry::new();
    let metrics = std::sync::Arc::new(PrometheusControllerMetrics::new(&registry).unwrap());
    let controller = Controller::<ConfigMap>::builder(&factory)
        .metrics(metrics)
        .priority_queue(true)
        .build();
    let stop = CancellationToken::new();
    let admin = AdminServer::builder()
        .informers(&factory)
        .controller(controller.status())
        .registry(registry)
        .serve("127.0.0.1:0".parse().unwrap(), stop.clone())
        .await
        .unwrap();
    assert_ne!(
        admin.local_addr().port(),
        0,
        "the ephemeral port is returned"
    );
    let http = raw(&admin);

    // Before the run: alive, not ready.
    assert_eq!(http.text("GET", "/healthz").await.body, "ok\n");
    let ready = http.text("GET", "/readyz").await;
    assert_eq!(ready.status, 503, "{}", ready.body);
    assert!(
        ready
            .body
            .contains("[-]controller configmaps failed: controller configmaps: not started"),
        "{}",
        ready.body
    );

    let log = Log::new();
    let cancel = CancellationToken::new();
    let run = run_recording(controller, &log, &cancel);
    log.wait_for("three reconciles", |c| c.len() >= 3).await;

    let ready = http.text("GET", "/readyz").await;
    assert_eq!((ready.status, ready.body.as_str()), (200, "ok\n"));
    let verbose = http.text("GET", "/readyz?verbose").await;
    assert_eq!(verbose.status, 200);
    assert!(
        verbose
            .body
            .contains("[+]informer v1/configmaps (ConfigMap) ok"),
        "{}",
        verbose.body
    );
    assert!(
        verbose.body.contains("[+]controller configmaps ok"),
        "{}",
        verbose.body
    );
    assert!(verbose.body.ends_with("readyz check passed\n"));

    let m = http.text("GET", "/metrics").await;
    assert_eq!(m.status, 200);
    assert_eq!(m.headers["content-type"], "text/plain; version=0.0.4");
    let samples = samples(&m.body);
    assert_eq!(
        samples
            .get(r#"controller_runtime_reconcile_total{controller="configmaps",result="success"}"#),
        Some(&3.0),
        "{}",
        m.body
    );
    assert_eq!(
        samples.get(r#"workqueue_adds_total{name="configmaps"}"#),
        Some(&3.0)
    );
    let informer = r#"informer="v1/configmaps",label_selector="",type="ConfigMap""#;
    assert_eq!(
        samples.get(&format!(
            "kinform_informer_objects{{field_selector=\"\",{informer}}}"
        )),
        Some(&3.0),
        "{}",
        m.body
    );
    assert_eq!(
        samples.get(&format!(
            "kinform_reflector_lists_total{{field_selector=\"\",{informer}}}"
        )),
        Some(&1.0)
    );
    assert_eq!(
        samples.get(&format!(
            "kinform_informer_synced{{field_selector=\"\",{informer}}}"
        )),
        Some(&1.0)
    );
    assert_eq!(
        samples.get(r#"kinform_controller_ready{controller="configmaps"}"#),
        Some(&1.0)
    );

    let s = state(&http).await;
    let i = &s["informers"][0];
    assert_eq!(i["name"], "v1/configmaps");
    assert_eq!(i["synced"], true);
    assert_eq!(i["objects"], 3);
    assert_eq!(i["lists"], 1);
    assert_eq!(i["watchErrors"], 0);
    assert_eq!(i["pendingNotifications"], 0);
    assert!(
        i["lastResourceVersion"]
            .as_str()
            .is_some_and(|rv| !rv.is_empty())
    );
    let c = &s["controllers"][0];
    assert_eq!(c["name"], "configmaps");
    assert_eq!(c["phase"], "running");
    assert_eq!(c["ready"], true);
    assert_eq!(c["queue"]["priorityQueue"], true);
    assert_eq!(c["reconciles"]["total"], 3);
    assert_eq!(c["election"], Value::Null);
    assert_eq!(s["leases"], serde_json::json!([]));

    cancel.cancel();
    run.await.unwrap();
    let stopped = http.text("GET", "/readyz").await;
    assert_eq!(stopped.status, 503);
    assert!(
        stopped.body.contains("controller configmaps: stopped"),
        "{}",
        stopped.body
    );
    assert_eq!(state(&http).await["controllers"][0]["phase"], "stopped");

    // Graceful shutdown, with the client's keep-alive connection still open.
    stop.cancel();
    tokio::time::timeout(Duration::from_secs(3), admin.wait())
        .await
        .expect("the server stops without waiting for idle connections");
    factory.shutdown().await;
    server.shutdown().await;
}

/// `name{labels} value` lines of a Prometheus text body.
fn samples(body: &str) -> HashMap<String, f64> {
    body.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let (k, v) = l.rsplit_once(' ')?;
            Some((k.to_owned(), v.parse().ok()?))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readiness_and_leases_of_leader_elected_replicas() {
    let server = TestApiServer::start().await.unwrap();
    create_configmaps(&server, 5);
    let activity = Activity::new();
    let leader = Replica::start(client(&server), "a", &ReplicaOptions::new(true), &activity);
    leader
        .wait_until("a leads", |s| {
            s.election.as_ref().is_some_and(|e| e.leading) && s.stats.reconciles >= 5
        })
        .await;
    let cold = Replica::start(client(&server), "b", &ReplicaOptions::new(false), &activity);
    let warm = Replica::start(client(&server), "c", &ReplicaOptions::new(true), &activity);
    for r in [&cold, &warm] {
        r.wait_until("it sees a hold the Lease", |s| {
            s.election.as_ref().and_then(|e| e.holder.as_deref()) == Some("a")
        })
        .await;
    }
    warm.wait_until("c's caches synced", |s| s.caches_synced)
        .await;

    let stop = CancellationToken::new();
    let mut admins = Vec::new();
    for r in [&leader, &cold, &warm] {
        let admin = AdminServer::builder()
            .informers(&r.factory)
            .controller(r.status.clone())
            .registry(Registry::new())
            .serve("127.0.0.1:0".parse().unwrap(), stop.clone())
            .await
            .unwrap();
        admins.push(admin);
    }
    let http: Vec<Raw> = admins.iter().map(raw).collect();

    assert_eq!(http[0].text("GET", "/readyz").await.status, 200);
    for (h, leading) in [(&http[0], "1"), (&http[1], "0"), (&http[2], "0")] {
        let m = h.text("GET", "/metrics").await.body;
        assert!(
            m.contains(&format!(
                "leader_election_master_status{{name=\"configmaps-leader\"}} {leading}\n"
            )),
            "{m}"
        );
    }
    let cold_ready = http[1].text("GET", "/readyz").await;
    assert_eq!(cold_ready.status, 503);
    assert!(
        cold_ready
            .body
            .contains("cold standby (its caches start when it leads)"),
        "{}",
        cold_ready.body
    );
    assert_eq!(
        http[2].text("GET", "/readyz").await.status,
        200,
        "a warm standby is ready"
    );

    let lease = |s: &Value| s["leases"][0].clone();
    let a = state(&http[0]).await;
    assert_eq!(lease(&a)["name"], "configmaps-leader");
    assert_eq!(lease(&a)["purpose"], "leader");
    assert_eq!(lease(&a)["held"], true);
    assert_eq!(a["controllers"][0]["election"]["terms"], 1);
    let b = state(&http[1]).await;
    assert_eq!(lease(&b)["held"], false);
    assert_eq!(lease(&b)["holder"], "a");
    assert_eq!(b["controllers"][0]["phase"], "standby");
    assert_eq!(b["informers"][0]["started"], false);
    let c = state(&http[2]).await;
    assert_eq!(c["controllers"][0]["phase"], "standby");
    assert_eq!(
        c["controllers"][0]["queue"]["depth"], 5,
        "a warm standby queues its keys"
    );
    assert_eq!(c["informers"][0]["synced"], true);
    assert_eq!(c["controllers"][0]["reconciles"]["total"], 0);

    stop.cancel();
    for admin in admins {
        admin.wait().await;
    }
    for r in [leader, cold, warm] {
        r.stop().await;
    }
    activity.assert_exclusive();
    server.shutdown().await;
}

/// A collector of the registry that panics at every scrape.
struct Panics(Desc);

impl Collector for Panics {
    fn desc(&self) -> Vec<&Desc> {
        vec![&self.0]
    }
    fn collect(&self) -> Vec<prometheus::proto::MetricFamily> {
        panic!("a broken collector")
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_requests_are_answered_and_never_take_the_server_down() {
    let registry = Registry::new();
    let desc = Desc::new("broken".into(), "panics".into(), vec![], HashMap::new()).unwrap();
    registry.register(Box::new(Panics(desc))).unwrap();
    let stop = CancellationToken::new();
    let admin = AdminServer::builder()
        .registry(registry)
        .serve("127.0.0.1:0".parse().unwrap(), stop.clone())
        .await
        .unwrap();
    let http = raw(&admin);

    let r = http.text("GET", "/nope").await;
    assert_eq!(r.status, 404, "{}", r.body);
    assert_eq!(http.text("GET", "/").await.status, 404);
    assert_eq!(http.text("GET", "/healthz/extra").await.status, 404);
    for method in ["POST", "PUT", "DELETE", "PATCH"] {
        let r = http.text(method, "/healthz").await;
        assert_eq!(r.status, 405, "{method}");
        assert_eq!(r.headers["allow"], "GET, HEAD");
    }
    let head = http.text("HEAD", "/readyz").await;
    assert_eq!((head.status, head.body.as_str()), (200, ""));
    // Nothing registered: ready.
    assert_eq!(http.text("GET", "/readyz").await.body, "ok\n");
    let s = state(&http).await;
    assert_eq!(s["informers"], serde_json::json!([]));

    // A collector's panic is a 500, and the server goes on.
    let m = http.text("GET", "/metrics").await;
    assert_eq!(m.status, 500, "{}", m.body);
    assert_eq!(http.text("GET", "/healthz").await.status, 200);
    assert_eq!(
        http.text("GET", "/metrics").await.status,
        500,
        "again, not stuck"
    );

    // Bytes that are not HTTP get a 400 or a closed connection, never a dead server.
    let mut socket = tokio::net::TcpStream::connect(admin.local_addr())
        .await
        .unwrap();
    socket.write_all(b"\x00\x01garbage\r\n\r\n").await.unwrap();
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), socket.read_to_end(&mut answer)).await;
    let answer = String::from_utf8_lossy(&answer);
    assert!(
        answer.is_empty() || answer.starts_with("HTTP/1.1 400"),
        "{answer}"
    );
    assert_eq!(http.text("GET", "/healthz").await.status, 200);

    // The address is taken: a second server on it fails with the address.
    let taken = AdminServer::builder()
        .serve(admin.local_addr(), stop.clone())
        .await
        .expect_err("the port is in use");
    assert!(matches!(taken, AdminError::Bind { addr, .. } if addr == admin.local_addr()));

    let addr = admin.local_addr();
    stop.cancel();
    admin.wait().await;
    assert!(
        tokio::net::TcpStream::connect(addr).await.is_err(),
        "nothing listens after the shutdown"
    );
}
