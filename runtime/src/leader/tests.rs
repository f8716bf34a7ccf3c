//! The elector against an in-memory lock with optimistic concurrency, on tokio's paused
//! clock: deterministic elections, failover and step-down ordering.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use parking_lot::Mutex;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::*;

/// The "server": one record and its version, and every state written.
#[derive(Default)]
struct Store {
    record: Option<LeaderElectionRecord>,
    version: u64,
    history: Vec<(Instant, LeaderElectionRecord)>,
}

struct MemLock {
    store: Arc<Mutex<Store>>,
    identity: String,
    read_version: Mutex<Option<u64>>,
    cut: Arc<AtomicBool>,
}

impl MemLock {
    async fn reachable(&self) -> Result<(), LockError> {
        tokio::time::sleep(Duration::from_millis(5)).await;
        if self.cut.load(Ordering::SeqCst) {
            return Err(LockError::Other {
                lock: self.describe(),
                message: "connection refused".into(),
            });
        }
        Ok(())
    }

    fn write(&self, s: &mut Store, r: &LeaderElectionRecord) {
        s.version += 1;
        s.record = Some(r.clone());
        s.history.push((Instant::now(), r.clone()));
        *self.read_version.lock() = Some(s.version);
    }
}

impl ResourceLock for MemLock {
    async fn get(&self) -> Result<Option<LeaderElectionRecord>, LockError> {
        self.reachable().await?;
        let s = self.store.lock();
        *self.read_version.lock() = s.record.as_ref().map(|_| s.version);
        Ok(s.record.clone())
    }
    async fn create(&self, r: &LeaderElectionRecord) -> Result<(), LockError> {
        self.reachable().await?;
        let mut s = self.store.lock();
        if s.record.is_some() {
            return Err(LockError::Other {
                lock: self.describe(),
                message: "already exists".into(),
            });
        }
        self.write(&mut s, r);
        Ok(())
    }
    async fn update(&self, r: &LeaderElectionRecord) -> Result<(), LockError> {
        self.reachable().await?;
        let mut s = self.store.lock();
        if *self.read_version.lock() != Some(s.version) {
            return Err(LockError::Other {
                lock: self.describe(),
                message: "conflict".into(),
            });
        }
        self.write(&mut s, r);
        Ok(())
    }
    fn identity(&self) -> &str {
        &self.identity
    }
    fn describe(&self) -> String {
        "memory lock".into()
    }
}

type Log = Arc<Mutex<Vec<(String, String)>>>;

struct Candidate {
    elector: Arc<LeaderElector<MemLock>>,
    cut: Arc<AtomicBool>,
    cancel: CancellationToken,
    task: tokio::task::JoinHandle<RunOutcome>,
}

fn candidate(
    store: &Arc<Mutex<Store>>,
    id: &str,
    log: &Log,
    release: bool,
    leading: &Arc<Mutex<Vec<String>>>,
) -> Candidate {
    let cut = Arc::new(AtomicBool::new(false));
    let lock = MemLock {
        store: store.clone(),
        identity: id.into(),
        read_version: Mutex::new(None),
        cut: cut.clone(),
    };
    let (l1, l2, l3) = (log.clone(), log.clone(), log.clone());
    let (who1, who2, who3) = (id.to_owned(), id.to_owned(), id.to_owned());
    let (lead1, lead2) = (leading.clone(), leading.clone());
    let callbacks = LeaderCallbacks::new(move |token: CancellationToken| {
        l1.lock().push((who1.clone(), "started".into()));
        let mut now_leading = lead1.lock();
        assert!(
            now_leading.is_empty(),
            "two leaders: {now_leading:?} and {who1}"
        );
        now_leading.push(who1.clone());
        async move { token.cancelled().await }
    })
    .on_stopped_leading(move || {
        l2.lock().push((who2.clone(), "stopped".into()));
        lead2.lock().retain(|w| *w != who2);
    })
    .on_new_leader(move |h| l3.lock().push((who3.clone(), format!("new:{h}"))));
    let config = LeaderElectionConfig::default().release_on_cancel(release);
    let elector = Arc::new(LeaderElector::new(lock, config, callbacks).unwrap());
    let cancel = CancellationToken::new();
    let (e, c) = (elector.clone(), cancel.clone());
    let task = tokio::spawn(async move { e.run(c).await });
    Candidate {
        elector,
        cut,
        cancel,
        task,
    }
}

fn setup(release: bool) -> (Arc<Mutex<Store>>, Log, Vec<Candidate>) {
    let store = Arc::new(Mutex::new(Store::default()));
    let log: Log = Arc::default();
    let leading = Arc::default();
    let cands = ["a", "b", "c"]
        .iter()
        .map(|id| candidate(&store, id, &log, release, &leading))
        .collect();
    (store, log, cands)
}

fn leaders(c: &[Candidate]) -> Vec<usize> {
    (0..c.len()).filter(|&i| c[i].elector.is_leader()).collect()
}

/// Every holder change happens after the previous holder's lease ran out (or was released).
fn assert_no_overlap(store: &Mutex<Store>) {
    let s = store.lock();
    for w in s.history.windows(2) {
        let ((_, old), (_, new)) = (&w[0], &w[1]);
        if old.holder_identity.is_empty() || old.holder_identity == new.holder_identity {
            continue;
        }
        let expiry =
            old.renew_time.unwrap() + Duration::from_secs(old.lease_duration_seconds as u64);
        assert!(
            new.acquire_time.unwrap() > expiry,
            "{new:?} took over before {old:?} expired"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn exactly_one_leader_and_everyone_sees_it() {
    let (store, log, cands) = setup(false);
    tokio::time::sleep(Duration::from_secs(60)).await;
    let l = leaders(&cands);
    assert_eq!(l.len(), 1, "{l:?}");
    let holder = store.lock().record.clone().unwrap().holder_identity;
    assert_eq!(cands[l[0]].elector.lock().identity(), holder);
    let log = log.lock();
    assert_eq!(log.iter().filter(|(_, e)| e == "started").count(), 1);
    for id in ["a", "b", "c"] {
        assert!(
            log.contains(&(id.into(), format!("new:{holder}"))),
            "{log:?}"
        );
    }
    // The leader renewed many times without transitions.
    let s = store.lock();
    assert!(s.history.len() > 10);
    assert!(s.history.iter().all(|(_, r)| r.leader_transitions == 0));
}

#[tokio::test(start_paused = true)]
async fn release_on_cancel_hands_over_before_expiry() {
    let (store, log, cands) = setup(true);
    tokio::time::sleep(Duration::from_secs(30)).await;
    let first = leaders(&cands)[0];
    let released_at = Instant::now();
    cands[first].cancel.cancel();
    tokio::time::sleep(Duration::from_secs(10)).await;
    let next = leaders(&cands);
    assert_eq!(next.len(), 1);
    assert_ne!(next[0], first);
    let history = store.lock().history.clone();
    let takeover = history
        .iter()
        .find(|(at, r)| *at >= released_at && !r.holder_identity.is_empty())
        .unwrap();
    // Released: no need to wait the 15 s lease out.
    assert!(takeover.0 < released_at + Duration::from_secs(10));
    assert_eq!(takeover.1.leader_transitions, 1);
    assert!(history.iter().any(|(_, r)| r.holder_identity.is_empty()));
    let log = log.lock().clone();
    let first_id = cands[first].elector.lock().identity().to_owned();
    let stopped = log
        .iter()
        .position(|e| *e == (first_id.clone(), "stopped".into()))
        .unwrap();
    let started: Vec<_> = log
        .iter()
        .enumerate()
        .filter(|(_, (_, e))| e == "started")
        .collect();
    assert_eq!(started.len(), 2);
    assert!(stopped < started[1].0);
    assert_eq!(
        cands.into_iter().nth(first).unwrap().task.await.unwrap(),
        RunOutcome::Cancelled
    );
}

#[tokio::test(start_paused = true)]
async fn cut_off_leader_steps_down_before_takeover() {
    let (store, log, cands) = setup(false);
    tokio::time::sleep(Duration::from_secs(30)).await;
    let first = leaders(&cands)[0];
    let first_id = cands[first].elector.lock().identity().to_owned();
    cands[first].cut.store(true, Ordering::SeqCst);
    let cut_at = Instant::now();
    tokio::time::sleep(Duration::from_secs(60)).await;
    let next = leaders(&cands);
    assert_eq!(next.len(), 1);
    assert_ne!(next[0], first);
    assert_no_overlap(&store);
    // The takeover waited for expiry.
    let history = store.lock().history.clone();
    let takeover = history
        .iter()
        .find(|(_, r)| !r.holder_identity.is_empty() && r.holder_identity != first_id)
        .unwrap();
    let last_renewal = history
        .iter()
        .rev()
        .find(|(_, r)| r.holder_identity == first_id)
        .unwrap()
        .0;
    assert!(last_renewal <= cut_at);
    assert!(takeover.0 >= last_renewal + Duration::from_secs(15));
    assert_eq!(takeover.1.leader_transitions, 1);
    let log = log.lock().clone();
    let stopped = log
        .iter()
        .position(|e| *e == (first_id.clone(), "stopped".into()))
        .expect("the cut-off leader stepped down");
    let second_start = log
        .iter()
        .enumerate()
        .filter(|(_, (_, e))| e == "started")
        .nth(1)
        .unwrap()
        .0;
    assert!(stopped < second_start, "{log:?}");
    assert_eq!(
        cands.into_iter().nth(first).unwrap().task.await.unwrap(),
        RunOutcome::Lost
    );
}

#[tokio::test(start_paused = true)]
async fn cancelled_candidate_that_never_led() {
    let (_store, _log, mut cands) = setup(false);
    tokio::time::sleep(Duration::from_secs(5)).await;
    let follower = (0..3).find(|&i| !cands[i].elector.is_leader()).unwrap();
    let c = cands.remove(follower);
    c.cancel.cancel();
    assert_eq!(c.task.await.unwrap(), RunOutcome::NeverLed);
}

#[tokio::test(start_paused = true)]
async fn expired_lease_of_a_vanished_holder_is_taken_over() {
    let store = Arc::new(Mutex::new(Store::default()));
    let start = Instant::now();
    // A holder that will never renew.
    store.lock().record = Some(LeaderElectionRecord {
        holder_identity: "ghost".into(),
        lease_duration_seconds: 15,
        leader_transitions: 4,
        ..Default::default()
    });
    let log: Log = Arc::default();
    let c = candidate(&store, "a", &log, false, &Arc::default());
    tokio::time::sleep(Duration::from_secs(30)).await;
    assert!(c.elector.is_leader());
    let s = store.lock();
    let (at, r) = &s.history[0];
    // Observed at start, honoured for 15 s on the local clock.
    assert!(*at > start + Duration::from_secs(15));
    assert_eq!(r.leader_transitions, 5);
    assert!(log.lock().contains(&("a".into(), "new:ghost".into())));
}

/// An elector seeded with an observation made earlier in the process (a fleet's Lease
/// lists) counts the unchanged record's lease from then; a record that changed since is
/// observed afresh.
#[tokio::test(start_paused = true)]
async fn an_earlier_observation_of_an_unchanged_record_counts() {
    let ghost = LeaderElectionRecord {
        holder_identity: "ghost".into(),
        lease_duration_seconds: 15,
        ..Default::default()
    };
    for changed in [false, true] {
        let store = Arc::new(Mutex::new(Store::default()));
        store.lock().record = Some(ghost.clone());
        let seen_at = Instant::now();
        tokio::time::sleep(Duration::from_secs(10)).await;
        if changed {
            store.lock().record.as_mut().unwrap().leader_transitions = 1;
        }
        let lock = MemLock {
            store: store.clone(),
            identity: "a".into(),
            read_version: Mutex::new(None),
            cut: Arc::new(AtomicBool::new(false)),
        };
        let callbacks = LeaderCallbacks::new(|token: CancellationToken| async move {
            token.cancelled().await;
        });
        let elector = LeaderElector::new(lock, LeaderElectionConfig::default(), callbacks)
            .unwrap()
            .observed_since(ghost.clone(), seen_at);
        let cancel = CancellationToken::new();
        let task = tokio::spawn({
            let cancel = cancel.clone();
            async move { elector.run(cancel).await }
        });
        tokio::time::sleep(Duration::from_secs(30)).await;
        let taken = store.lock().history[0].0;
        if changed {
            // Observed afresh at 10 s: honoured until 25 s.
            assert!(taken > seen_at + Duration::from_secs(25), "{changed}");
        } else {
            // Seen at 0 s: expired at 15 s, 5 s after this elector started, and taken at
            // the next attempt (a retry period of 2 s plus up to 1.2x of jitter).
            assert!(taken > seen_at + Duration::from_secs(15), "{changed}");
            assert!(taken < seen_at + Duration::from_millis(19_500), "{changed}");
        }
        cancel.cancel();
        let _ = task.await;
    }
}

#[tokio::test(start_paused = true)]
async fn release_waits_for_the_leading_work_to_drain() {
    let store = Arc::new(Mutex::new(Store::default()));
    let lock = MemLock {
        store: store.clone(),
        identity: "a".into(),
        read_version: Mutex::new(None),
        cut: Arc::new(AtomicBool::new(false)),
    };
    let drained_at: Arc<Mutex<Option<Instant>>> = Arc::default();
    let drained = drained_at.clone();
    let callbacks = LeaderCallbacks::new(move |token: CancellationToken| {
        let drained = drained.clone();
        async move {
            token.cancelled().await;
            // In-flight work that takes a while to finish after leadership ends.
            tokio::time::sleep(Duration::from_secs(3)).await;
            *drained.lock() = Some(Instant::now());
        }
    });
    let config = LeaderElectionConfig::default().release_on_cancel(true);
    let elector = Arc::new(LeaderElector::new(lock, config, callbacks).unwrap());
    let cancel = CancellationToken::new();
    let (e, c) = (elector.clone(), cancel.clone());
    let task = tokio::spawn(async move { e.run(c).await });
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert!(elector.is_leader());
    cancel.cancel();
    assert_eq!(task.await.unwrap(), RunOutcome::Cancelled);

    let drained = drained_at.lock().expect("the leading work finished");
    let s = store.lock();
    let (released_at, _) = s
        .history
        .iter()
        .find(|(_, r)| r.holder_identity.is_empty())
        .expect("the lease was released");
    assert!(
        *released_at >= drained,
        "released at {released_at:?} before the work drained at {drained:?}"
    );
}
