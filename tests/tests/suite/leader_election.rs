//! Leader election against the real `TestApiServer`: several candidates, each with its own
//! client behind a forwarding proxy that the test can switch to refusing (a leader cut off
//! from the API server). Every Lease state is recorded through a watch, and holder changes
//! are checked to happen only after the previous holder's lease ran out.
//!
//! Runs on tokio's paused clock: nothing waits in real time and every assertion is about
//! order, not speed.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use futures_util::StreamExt;
use k8s_openapi::api::coordination::v1::Lease;
use kinform::leader::{
    LeaderCallbacks, LeaderElectionConfig, LeaderElectionRecord, LeaderElector, LeaseLock,
    RunOutcome,
};
use kinform::testing::TestApiServer;
use kinform::{Api, Client, Config, WatchEvent, WatchParams};
use parking_lot::Mutex;
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;

/// A TCP forwarder on 127.0.0.1 in front of the server; `cut` closes open connections and
/// refuses new ones.
struct Proxy {
    url: String,
    blocked: Arc<AtomicBool>,
    conns: Arc<Mutex<CancellationToken>>,
}

impl Proxy {
    async fn start(upstream: std::net::SocketAddr) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let blocked = Arc::new(AtomicBool::new(false));
        let conns = Arc::new(Mutex::new(CancellationToken::new()));
        let (b, c) = (blocked.clone(), conns.clone());
        tokio::spawn(async move {
            while let Ok((mut inbound, _)) = listener.accept().await {
                if b.load(Ordering::SeqCst) {
                    drop(inbound);
                    continue;
                }
                let token = c.lock().clone();
                tokio::spawn(async move {
                    let Ok(mut outbound) = TcpStream::connect(upstream).await else {
                        return;
                    };
                    tokio::select! {
                        _ = token.cancelled() => {}
                        _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound) => {}
                    }
                });
            }
        });
        Self {
            url,
            blocked,
            conns,
        }
    }

    fn cut(&self) {
        self.blocked.store(true, Ordering::SeqCst);
        self.conns.lock().cancel();
    }
}

fn client(url: &str) -> Client {
    let mut config = Config::new(url.parse().unwrap());
    // No transport timers: on the paused clock they would fire while loopback I/O is pending.
    config.connect_timeout = None;
    config.read_timeout = None;
    config.max_retries = 0;
    Client::new(config).unwrap()
}

type Log = Arc<Mutex<Vec<(String, &'static str)>>>;

struct Candidate {
    id: String,
    proxy: Proxy,
    elector: Arc<LeaderElector<LeaseLock>>,
    cancel: CancellationToken,
    task: tokio::task::JoinHandle<RunOutcome>,
}

async fn candidate(server: &TestApiServer, id: &str, log: &Log, release: bool) -> Candidate {
    let proxy = Proxy::start(server.addr()).await;
    let lock = LeaseLock::new(
        Api::namespaced(client(&proxy.url), "default"),
        "sample-controller",
        id,
    );
    let (l1, l2) = (log.clone(), log.clone());
    let (w1, w2) = (id.to_owned(), id.to_owned());
    let callbacks = LeaderCallbacks::new(move |leading: CancellationToken| {
        l1.lock().push((w1.clone(), "started"));
        async move { leading.cancelled().await }
    })
    .on_stopped_leading(move || l2.lock().push((w2.clone(), "stopped")));
    let config = LeaderElectionConfig::default().release_on_cancel(release);
    let elector = Arc::new(LeaderElector::new(lock, config, callbacks).unwrap());
    let cancel = CancellationToken::new();
    let (e, c) = (elector.clone(), cancel.clone());
    let task = tokio::spawn(async move { e.run(c).await });
    Candidate {
        id: id.into(),
        proxy,
        elector,
        cancel,
        task,
    }
}

/// Records every state of the Lease as the server reports it.
fn record_lease_states(server: &TestApiServer) -> Arc<Mutex<Vec<LeaderElectionRecord>>> {
    let states = Arc::new(Mutex::new(Vec::new()));
    let api: Api<Lease> = Api::namespaced(client(&server.url()), "default");
    let s = states.clone();
    tokio::spawn(async move {
        let wp = WatchParams {
            resource_version: Some("0".into()),
            ..WatchParams::default()
        };
        let mut stream = api.watch(&wp).await.unwrap();
        while let Some(Ok(event)) = stream.next().await {
            if let WatchEvent::Added(l) | WatchEvent::Modified(l) = event {
                s.lock().push(LeaderElectionRecord::from_lease_spec(
                    &l.spec.unwrap_or_default(),
                ));
            }
        }
    });
    states
}

/// Holder changes only after the previous holder's lease ran out, or after it released it
/// (an empty holder).
fn assert_never_two_leaders(states: &[LeaderElectionRecord]) {
    for w in states.windows(2) {
        let (old, new) = (&w[0], &w[1]);
        if old.holder_identity.is_empty()
            || new.holder_identity.is_empty()
            || old.holder_identity == new.holder_identity
        {
            continue;
        }
        let expiry = old.renew_time.unwrap()
            + Duration::from_secs(u64::try_from(old.lease_duration_seconds).unwrap());
        assert!(
            new.acquire_time.unwrap() > expiry,
            "{} took over at {:?} before {}'s lease expired at {expiry}",
            new.holder_identity,
            new.acquire_time,
            old.holder_identity
        );
    }
}

async fn three(server: &TestApiServer, log: &Log, release: bool) -> Vec<Candidate> {
    let mut c = Vec::new();
    for id in ["a", "b", "c"] {
        c.push(candidate(server, id, log, release).await);
    }
    c
}

fn leaders(c: &[Candidate]) -> Vec<usize> {
    (0..c.len()).filter(|&i| c[i].elector.is_leader()).collect()
}

fn position(log: &[(String, &'static str)], id: &str, what: &str) -> Option<usize> {
    log.iter().position(|(w, e)| w == id && *e == what)
}

async fn lease_on_server(server: &TestApiServer) -> LeaderElectionRecord {
    let api: Api<Lease> = Api::namespaced(client(&server.url()), "default");
    let lease = api.get("sample-controller").await.unwrap();
    LeaderElectionRecord::from_lease_spec(&lease.spec.unwrap())
}

/// Asserts that, once `first` has stopped, exactly one of `cands` leads, holds the lease on
/// the server after one transition, and started only after `first` stopped; answers its id.
async fn assert_taken_over(
    server: &TestApiServer,
    cands: &[Candidate],
    log: &Log,
    first: &str,
) -> String {
    let l = leaders(cands);
    assert_eq!(l.len(), 1);
    let second = &cands[l[0]];
    let record = lease_on_server(server).await;
    assert_eq!(record.holder_identity, second.id);
    assert_eq!(record.leader_transitions, 1);
    let log = log.lock().clone();
    let stopped = position(&log, first, "stopped").unwrap();
    let started = position(&log, &second.id, "started").unwrap();
    assert!(stopped < started, "{log:?}");
    second.id.clone()
}

#[tokio::test(start_paused = true)]
async fn exactly_one_of_three_leads() {
    let server = TestApiServer::start().await.unwrap();
    let states = record_lease_states(&server);
    let log: Log = Arc::default();
    let cands = three(&server, &log, false).await;
    tokio::time::sleep(Duration::from_secs(60)).await;
    let l = leaders(&cands);
    assert_eq!(l.len(), 1, "leaders: {l:?}");
    let record = lease_on_server(&server).await;
    assert_eq!(record.holder_identity, cands[l[0]].id);
    assert_eq!(record.leader_transitions, 0);
    assert_eq!(record.lease_duration_seconds, 15);
    let log = log.lock().clone();
    assert_eq!(log, vec![(cands[l[0]].id.clone(), "started")]);
    let states = states.lock().clone();
    // Renewed every retry period, never by anyone else.
    assert!(states.len() > 10, "{} lease states", states.len());
    assert!(states.iter().all(|r| r.holder_identity == cands[l[0]].id));
    server.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn cancelled_leader_releases_and_another_takes_over() {
    let server = TestApiServer::start().await.unwrap();
    let states = record_lease_states(&server);
    let log: Log = Arc::default();
    let mut cands = three(&server, &log, true).await;
    tokio::time::sleep(Duration::from_secs(30)).await;
    let first = cands.remove(leaders(&cands)[0]);
    first.cancel.cancel();
    assert_eq!(first.task.await.unwrap(), RunOutcome::Cancelled);
    assert!(!first.elector.is_leader());
    tokio::time::sleep(Duration::from_secs(30)).await;
    let second = assert_taken_over(&server, &cands, &log, &first.id).await;
    let states = states.lock().clone();
    let released = states
        .iter()
        .position(|r| r.holder_identity.is_empty())
        .expect("the lease was released");
    assert_eq!(states[released + 1].holder_identity, second);
    assert_never_two_leaders(&states);
    server.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn cut_off_leader_steps_down_before_another_takes_over() {
    let server = TestApiServer::start().await.unwrap();
    let states = record_lease_states(&server);
    let log: Log = Arc::default();
    let mut cands = three(&server, &log, false).await;
    tokio::time::sleep(Duration::from_secs(30)).await;
    let first = cands.remove(leaders(&cands)[0]);
    first.proxy.cut();
    // It cannot renew: it steps down on its own after the renew deadline.
    assert_eq!(first.task.await.unwrap(), RunOutcome::Lost);
    assert!(!first.elector.is_leader());
    tokio::time::sleep(Duration::from_secs(60)).await;
    assert_taken_over(&server, &cands, &log, &first.id).await;
    let states = states.lock().clone();
    assert!(states.iter().all(|r| !r.holder_identity.is_empty()));
    assert!(states.iter().any(|r| r.holder_identity == first.id));
    assert_never_two_leaders(&states);
    server.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn conflicting_writers_do_not_overwrite_each_other() {
    // A stale update (an old resourceVersion) is refused with 409: the lock keeps the
    // optimistic-concurrency contract the elector relies on.
    use kinform::leader::ResourceLock;
    let server = TestApiServer::start().await.unwrap();
    let api: Api<Lease> = Api::namespaced(client(&server.url()), "default");
    let a = LeaseLock::new(api.clone(), "l", "a");
    let b = LeaseLock::new(api, "l", "b");
    let rec = |h: &str| LeaderElectionRecord {
        holder_identity: h.into(),
        lease_duration_seconds: 15,
        ..LeaderElectionRecord::default()
    };
    assert!(a.get().await.unwrap().is_none());
    a.create(&rec("a")).await.unwrap();
    assert_eq!(b.get().await.unwrap().unwrap().holder_identity, "a");
    // A real change (a no-op update keeps the resourceVersion).
    a.update(&LeaderElectionRecord {
        leader_transitions: 1,
        ..rec("a")
    })
    .await
    .unwrap();
    let err = b.update(&rec("b")).await.unwrap_err();
    assert!(err.is_conflict(), "{err}");
    assert_eq!(b.get().await.unwrap().unwrap().holder_identity, "a");
    b.update(&rec("b")).await.unwrap();
    assert_eq!(a.get().await.unwrap().unwrap().holder_identity, "b");
    server.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn flaky_server_never_yields_two_leaders() {
    // Phases where most requests fail with 500 (and all are slow) alternate with calm ones:
    // renewals fail, leadership moves, but never to two candidates at once.
    let server = TestApiServer::start().await.unwrap();
    let states = record_lease_states(&server);
    let log: Log = Arc::default();
    let cands = three(&server, &log, false).await;
    server.faults().set_latency(Duration::from_millis(300));
    for share in [0.9, 0.0, 0.8, 0.0, 0.9, 0.0] {
        server.faults().set_internal_errors(share);
        for _ in 0..40 {
            tokio::time::sleep(Duration::from_secs(1)).await;
            assert!(leaders(&cands).len() <= 1, "two candidates lead at once");
        }
    }
    server.faults().clear();
    tokio::time::sleep(Duration::from_secs(60)).await;
    assert_eq!(leaders(&cands).len(), 1);
    // Started and stopped callbacks alternate across all candidates.
    let log = log.lock().clone();
    let mut current: Option<&str> = None;
    for (who, what) in &log {
        match (*what, current) {
            ("started", None) => current = Some(who),
            ("stopped", Some(c)) if c == who => current = None,
            _ => panic!("callbacks out of order: {log:?}"),
        }
    }
    let states = states.lock().clone();
    assert_never_two_leaders(&states);
    let record = lease_on_server(&server).await;
    let changes = states
        .windows(2)
        .filter(|w| w[0].holder_identity != w[1].holder_identity)
        .count();
    assert_eq!(record.leader_transitions as usize, changes);
    assert!(changes >= 1, "leadership never moved: {log:?}");
    server.shutdown().await;
}
