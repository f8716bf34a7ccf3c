//! The event recorder against the real `TestApiServer` (events.k8s.io/v1), on tokio's paused
//! clock: creation, series aggregation by PATCH, the per-object spam filter, the bounded
//! queue's drop counter, series expiry and error accounting.

use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::api::events::v1::Event;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kinform::client::{DeleteParams, PostParams};
use kinform::events::{EventRecorder, NewEvent, Recorded, RecorderConfig, RecorderStats};
use kinform::testing::TestApiServer;
use kinform::{Api, Client, Config, ListParams};

fn client(server: &TestApiServer) -> Client {
    // No transport timers: on the paused clock they would fire while loopback I/O is pending.
    server
        .client_with(|config| {
            config.connect_timeout = None;
            config.read_timeout = None;
            config.max_retries = 0;
        })
        .unwrap()
}

async fn configmap(server: &TestApiServer, name: &str) -> ConfigMap {
    let api: Api<ConfigMap> = Api::namespaced(client(server), "default");
    let cm = ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    };
    api.create(&PostParams::default(), &cm).await.unwrap()
}

async fn events(server: &TestApiServer) -> Vec<Event> {
    let api: Api<Event> = Api::namespaced(client(server), "default");
    api.list(&ListParams::default()).await.unwrap().items
}

fn recorder(server: &TestApiServer, config: RecorderConfig) -> EventRecorder {
    EventRecorder::new(client(server), config)
}

fn config() -> RecorderConfig {
    RecorderConfig::new("example.com/foo-controller", "foo-0")
}

#[tokio::test(start_paused = true)]
async fn an_event_is_created_about_the_object() {
    let server = TestApiServer::start().await.unwrap();
    let cm = configmap(&server, "cfg").await;
    let rec = recorder(&server, config());
    let out = rec.record(
        &cm,
        NewEvent::warning("FailedSync", "Reconcile").note("could not sync cfg"),
    );
    assert_eq!(out, Recorded::Queued);
    rec.flush().await;
    let evs = events(&server).await;
    assert_eq!(evs.len(), 1);
    let e = &evs[0];
    let r = e.regarding.as_ref().unwrap();
    assert_eq!(r.kind.as_deref(), Some("ConfigMap"));
    assert_eq!(r.api_version.as_deref(), Some("v1"));
    assert_eq!(r.name.as_deref(), Some("cfg"));
    assert_eq!(r.namespace.as_deref(), Some("default"));
    assert_eq!(r.uid, cm.metadata.uid);
    assert_eq!(r.resource_version, cm.metadata.resource_version);
    assert_eq!(e.type_.as_deref(), Some("Warning"));
    assert_eq!(e.reason.as_deref(), Some("FailedSync"));
    assert_eq!(e.action.as_deref(), Some("Reconcile"));
    assert_eq!(e.note.as_deref(), Some("could not sync cfg"));
    assert_eq!(
        e.reporting_controller.as_deref(),
        Some("example.com/foo-controller")
    );
    assert_eq!(e.reporting_instance.as_deref(), Some("foo-0"));
    assert!(e.event_time.is_some());
    assert!(e.series.is_none());
    assert!(e.metadata.name.as_deref().unwrap().starts_with("cfg."));
    assert_eq!(rec.stats().created, 1);
    rec.shutdown().await;
    assert_eq!(
        rec.record(&cm, NewEvent::normal("Late", "Reconcile")),
        Recorded::Closed
    );
    server.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn repeated_events_become_a_series() {
    let server = TestApiServer::start().await.unwrap();
    let cm = configmap(&server, "cfg").await;
    let rec = recorder(&server, config());
    let ev = || NewEvent::normal("Synced", "Reconcile").note("synced");
    let outcomes: Vec<_> = (0..5).map(|_| rec.record(&cm, ev())).collect();
    assert_eq!(
        outcomes,
        vec![
            Recorded::Queued,
            Recorded::Aggregated { count: 2 },
            Recorded::Aggregated { count: 3 },
            Recorded::Aggregated { count: 4 },
            Recorded::Aggregated { count: 5 },
        ]
    );
    // A different note is a different event.
    assert_eq!(
        rec.record(&cm, NewEvent::normal("Synced", "Reconcile").note("other")),
        Recorded::Queued
    );
    rec.flush().await;
    let evs = events(&server).await;
    assert_eq!(evs.len(), 2);
    let series = evs
        .iter()
        .find(|e| e.note.as_deref() == Some("synced"))
        .unwrap();
    assert_eq!(series.series.as_ref().unwrap().count, 5);
    // The queued PATCH carried the latest count: one update for four repeats.
    let stats = rec.stats();
    assert_eq!(stats.created, 2);
    assert_eq!(stats.series_updated, 1);
    assert_eq!(stats.aggregated, 4);

    tokio::time::sleep(Duration::from_secs(10)).await;
    assert_eq!(rec.record(&cm, ev()), Recorded::Aggregated { count: 6 });
    rec.flush().await;
    let evs = events(&server).await;
    let s = evs
        .iter()
        .find(|e| e.note.as_deref() == Some("synced"))
        .unwrap()
        .series
        .clone()
        .unwrap();
    assert_eq!(s.count, 6);
    assert!(s.last_observed_time.0 > series.series.as_ref().unwrap().last_observed_time.0);
    assert_eq!(events(&server).await.len(), 2);

    // A series deleted on the server is re-created with its count.
    let api: Api<Event> = Api::namespaced(client(&server), "default");
    let name = series.metadata.name.clone().unwrap();
    api.delete(&name, &DeleteParams::default()).await.unwrap();
    assert_eq!(rec.record(&cm, ev()), Recorded::Aggregated { count: 7 });
    rec.flush().await;
    let again = api.get(&name).await.unwrap();
    assert_eq!(again.series.unwrap().count, 7);
    server.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn a_finished_series_starts_a_new_event() {
    let server = TestApiServer::start().await.unwrap();
    let cm = configmap(&server, "cfg").await;
    let rec = recorder(&server, config());
    let ev = || NewEvent::normal("Synced", "Reconcile");
    assert_eq!(rec.record(&cm, ev()), Recorded::Queued);
    assert_eq!(rec.record(&cm, ev()), Recorded::Aggregated { count: 2 });
    rec.flush().await;
    // Six minutes of silence finish the series.
    tokio::time::sleep(Duration::from_secs(361)).await;
    assert_eq!(rec.record(&cm, ev()), Recorded::Queued);
    rec.flush().await;
    assert_eq!(events(&server).await.len(), 2);
    server.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn the_spam_filter_limits_events_per_object() {
    let server = TestApiServer::start().await.unwrap();
    let noisy = configmap(&server, "noisy").await;
    let quiet = configmap(&server, "quiet").await;
    let rec = recorder(&server, config());
    let outcomes: Vec<_> = (0..30)
        .map(|i| rec.record(&noisy, NewEvent::normal(format!("Reason{i}"), "Act")))
        .collect();
    assert!(outcomes[..25].iter().all(|o| *o == Recorded::Queued));
    assert!(outcomes[25..].iter().all(|o| *o == Recorded::SpamFiltered));
    // Repeats of an allowed event also spend tokens.
    assert_eq!(
        rec.record(&noisy, NewEvent::normal("Reason0", "Act")),
        Recorded::SpamFiltered
    );
    // Other objects have their own budget.
    assert_eq!(
        rec.record(&quiet, NewEvent::normal("Reason0", "Act")),
        Recorded::Queued
    );
    // One token comes back every five minutes.
    tokio::time::sleep(Duration::from_secs(300)).await;
    assert_eq!(
        rec.record(&noisy, NewEvent::normal("Later", "Act")),
        Recorded::Queued
    );
    assert_eq!(
        rec.record(&noisy, NewEvent::normal("Later2", "Act")),
        Recorded::SpamFiltered
    );
    rec.flush().await;
    assert_eq!(events(&server).await.len(), 27);
    assert_eq!(
        rec.stats(),
        RecorderStats {
            created: 27,
            spam_filtered: 7,
            ..RecorderStats::default()
        }
    );
    server.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn a_full_queue_drops_and_counts_without_blocking() {
    let server = TestApiServer::start().await.unwrap();
    let cm = configmap(&server, "cfg").await;
    let rec = recorder(&server, config().queue_capacity(4));
    // The sender task cannot run between these synchronous calls: the queue fills up.
    let outcomes: Vec<_> = (0..10)
        .map(|i| rec.record(&cm, NewEvent::normal(format!("Reason{i}"), "Act")))
        .collect();
    assert_eq!(
        outcomes.iter().filter(|o| **o == Recorded::Queued).count(),
        4
    );
    assert_eq!(
        outcomes
            .iter()
            .filter(|o| **o == Recorded::QueueFull)
            .count(),
        6
    );
    assert_eq!(rec.stats().dropped_queue_full, 6);
    rec.flush().await;
    assert_eq!(events(&server).await.len(), 4);
    // A dropped event was not remembered: recording it again creates it.
    assert_eq!(
        rec.record(&cm, NewEvent::normal("Reason9", "Act")),
        Recorded::Queued
    );
    rec.shutdown().await;
    assert_eq!(events(&server).await.len(), 5);
    assert_eq!(rec.stats().created, 5);
    server.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn server_errors_are_counted_not_retried() {
    let server = TestApiServer::start().await.unwrap();
    let cm = configmap(&server, "cfg").await;
    let rec = recorder(&server, config());
    server.faults().set_internal_errors(1.0);
    assert_eq!(
        rec.record(&cm, NewEvent::normal("Synced", "Act")),
        Recorded::Queued
    );
    rec.flush().await;
    server.faults().clear();
    assert_eq!(rec.stats().failed, 1);
    assert_eq!(rec.stats().created, 0);
    assert!(events(&server).await.is_empty());
    server.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn an_unreachable_server_is_retried() {
    let server = TestApiServer::start().await.unwrap();
    let cm = configmap(&server, "cfg").await;
    // A port nobody listens on yet.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut config = Config::new(format!("http://127.0.0.1:{port}").parse().unwrap());
    config.connect_timeout = None;
    config.read_timeout = None;
    config.max_retries = 0;
    let rec = EventRecorder::new(Client::new(config).unwrap(), self::config());
    assert_eq!(
        rec.record(&cm, NewEvent::normal("Synced", "Act")),
        Recorded::Queued
    );
    // The first attempt is refused; the sender waits to retry.
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(rec.stats().created, 0);
    // The server becomes reachable on that port.
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
        .await
        .unwrap();
    let upstream = server.addr();
    tokio::spawn(async move {
        while let Ok((mut inbound, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut outbound = tokio::net::TcpStream::connect(upstream).await.unwrap();
                let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
            });
        }
    });
    rec.flush().await;
    assert_eq!(rec.stats().created, 1);
    assert_eq!(rec.stats().failed, 0);
    assert_eq!(events(&server).await.len(), 1);
    server.shutdown().await;
}
