//! The driver over a scripted in-memory ListerWatcher, on tokio's paused clock.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use futures_util::{StreamExt, stream};
use k8s_openapi::api::core::v1::Pod;
use parking_lot::Mutex;
use tokio_util::sync::CancellationToken;

use super::support::*;
use crate::reflector::{
    ListHints, ListMode, ListerWatcher, Reflector, ReflectorSink, SinkClosed, WatchBatchStream,
};
use kinform_client::{Error, ListParams, ObjectList, WatchEvent, WatchParams};
use kinform_core::resource::HasMetadata;

/// One scripted answer.
enum Answer {
    List(Result<ObjectList<Arc<Pod>>, Error>),
    /// A watch that yields these items, then ends (or hangs when `hang`).
    Watch(Result<Vec<Result<WatchEvent<Pod>, Error>>, Error>, bool),
}

#[derive(Debug, Clone, PartialEq)]
enum Call {
    List(ListParams),
    Watch(WatchParams),
}

#[derive(Default)]
struct Script {
    answers: Mutex<VecDeque<Answer>>,
    calls: Mutex<Vec<Call>>,
}

impl Script {
    fn new(answers: Vec<Answer>) -> Arc<Self> {
        Arc::new(Self {
            answers: Mutex::new(answers.into()),
            calls: Mutex::default(),
        })
    }
}

struct ScriptedLw(Arc<Script>);

impl ListerWatcher<Pod> for ScriptedLw {
    async fn list(
        &self,
        params: &ListParams,
        hints: &ListHints<Pod>,
    ) -> Result<ObjectList<Arc<Pod>>, Error> {
        self.0.calls.lock().push(Call::List(params.clone()));
        let answer = self.0.answers.lock().pop_front();
        match answer {
            Some(Answer::List(r)) => r.map(|page| ObjectList {
                metadata: page.metadata,
                shard_info: page.shard_info,
                items: (page.items.into_iter())
                    .map(|o| hints.share(Arc::unwrap_or_clone(o)))
                    .collect(),
            }),
            Some(Answer::Watch(..)) => panic!("script expected a watch, got a list"),
            None => std::future::pending().await,
        }
    }

    async fn watch(
        &self,
        params: &WatchParams,
        hints: &ListHints<Pod>,
    ) -> Result<WatchBatchStream<Arc<Pod>>, Error> {
        self.0.calls.lock().push(Call::Watch(params.clone()));
        let answer = self.0.answers.lock().pop_front();
        match answer {
            Some(Answer::Watch(Ok(events), hang)) => {
                let hints = hints.clone();
                let s = stream::iter(events).map(move |e| e.map(|ev| ev.map(|o| hints.share(o))));
                // The events ready at once form one batch, as the client's watch gives them.
                Ok(if hang {
                    s.chain(stream::pending()).ready_chunks(1024).boxed()
                } else {
                    s.ready_chunks(1024).boxed()
                })
            }
            Some(Answer::Watch(Err(e), _)) => Err(e),
            Some(Answer::List(_)) => panic!("script expected a list, got a watch"),
            None => std::future::pending().await,
        }
    }
}

#[derive(Default)]
struct RecordingSink {
    ops: Mutex<Vec<String>>,
    resyncs: AtomicUsize,
    closed: AtomicBool,
}

impl RecordingSink {
    fn push(&self, op: String) -> Result<(), SinkClosed> {
        if self.closed.load(Ordering::SeqCst) {
            return Err(SinkClosed);
        }
        self.ops.lock().push(op);
        Ok(())
    }
}

impl ReflectorSink<Pod> for RecordingSink {
    fn add(&self, obj: Arc<Pod>) -> Result<(), SinkClosed> {
        self.push(format!("add {}@{}", obj.name(), obj.resource_version()))
    }
    fn update(&self, obj: Arc<Pod>) -> Result<(), SinkClosed> {
        self.push(format!("update {}@{}", obj.name(), obj.resource_version()))
    }
    fn delete(&self, obj: Arc<Pod>) -> Result<(), SinkClosed> {
        self.push(format!("delete {}@{}", obj.name(), obj.resource_version()))
    }
    fn replace(&self, list: Vec<Arc<Pod>>, rv: String) -> Result<(), SinkClosed> {
        let names: Vec<_> = list.iter().map(|p| p.name().to_owned()).collect();
        self.push(format!("replace [{}]@{rv}", names.join(",")))
    }
    fn resync(&self) -> Result<(), SinkClosed> {
        if self.closed.load(Ordering::SeqCst) {
            return Err(SinkClosed);
        }
        self.resyncs.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }
}

/// Lets the reflector task run until it blocks, advancing the paused clock by `d`.
async fn run_for(d: Duration) {
    tokio::time::sleep(d).await;
}

#[tokio::test(start_paused = true)]
async fn lists_with_page_retry_watches_and_resumes() {
    let script = Script::new(vec![
        Answer::List(Ok(page(vec![pod("a", "1")], "5", Some("t1")))),
        Answer::List(Err(api_err(503, "ServiceUnavailable"))),
        Answer::List(Ok(page(vec![pod("b", "2")], "5", None))),
        Answer::Watch(
            Ok(vec![
                Ok(WatchEvent::Added(pod("c", "6"))),
                Ok(WatchEvent::Modified(pod("a", "7"))),
                Ok(WatchEvent::Bookmark(bookmark("9", false))),
            ]),
            false,
        ),
        Answer::Watch(Ok(vec![Ok(WatchEvent::Deleted(pod("b", "10")))]), true),
    ]);
    let sink = Arc::new(RecordingSink::default());
    let errors = Arc::new(Mutex::new(Vec::new()));
    let errors2 = errors.clone();
    let mut config = config(ListMode::Paged);
    config.page_retry_backoff = config.page_retry_backoff.without_jitter();
    let reflector = Reflector::new(ScriptedLw(script.clone()), sink.clone(), config)
        .with_seed(1)
        .with_error_hook(Arc::new(move |e| errors2.lock().push(e.to_string())));
    let metrics = reflector.metrics();
    let cancel = CancellationToken::new();
    let task = tokio::spawn(reflector.run(cancel.clone()));
    run_for(Duration::from_secs(3)).await;

    assert_eq!(
        *sink.ops.lock(),
        ["replace [a,b]@5", "add c@6", "update a@7", "delete b@10"]
    );
    let calls = script.calls.lock().clone();
    assert_eq!(calls.len(), 5);
    let Call::List(retry) = &calls[2] else {
        panic!("{calls:?}")
    };
    assert_eq!(
        retry.continue_token.as_deref(),
        Some("t1"),
        "same page retried"
    );
    let Call::Watch(rewatch) = &calls[4] else {
        panic!("{calls:?}")
    };
    assert_eq!(rewatch.resource_version.as_deref(), Some("9"));
    assert_eq!(errors.lock().len(), 1, "{:?}", errors.lock());
    let snap = metrics.snapshot();
    assert_eq!((snap.lists, snap.watches, snap.list_errors), (1, 2, 1));
    assert_eq!(snap.last_resource_version, "10");

    cancel.cancel();
    assert_eq!(task.await.unwrap(), Ok(()));
}

#[tokio::test(start_paused = true)]
async fn backoff_sleeps_on_the_clock_before_relisting() {
    let script = Script::new(vec![
        Answer::List(Ok(page(vec![], "5", None))),
        // Drops at once with no events: a short watch.
        Answer::Watch(Ok(vec![]), false),
        Answer::List(Ok(page(vec![pod("a", "6")], "6", None))),
        Answer::Watch(Ok(vec![]), true),
    ]);
    let sink = Arc::new(RecordingSink::default());
    let reflector = Reflector::new(
        ScriptedLw(script.clone()),
        sink.clone(),
        config(ListMode::Paged),
    )
    .with_seed(1);
    let metrics = reflector.metrics();
    let cancel = CancellationToken::new();
    let task = tokio::spawn(reflector.run(cancel.clone()));
    run_for(Duration::from_millis(700)).await;
    assert_eq!(*sink.ops.lock(), ["replace []@5"], "still backing off");
    run_for(Duration::from_millis(200)).await;
    assert_eq!(*sink.ops.lock(), ["replace []@5", "replace [a]@6"]);
    let third = script.calls.lock()[2].clone();
    let Call::List(relist) = &third else {
        panic!("{third:?}")
    };
    assert_eq!(relist.resource_version.as_deref(), Some("5"));
    assert_eq!(relist.limit, None);
    assert_eq!(metrics.snapshot().short_watches, 1);
    cancel.cancel();
    task.await.unwrap().unwrap();
}

#[tokio::test(start_paused = true)]
async fn streaming_list_falls_back_when_unsupported() {
    let script = Script::new(vec![
        Answer::Watch(Err(api_err(400, "BadRequest")), false),
        Answer::List(Ok(page(vec![pod("a", "1")], "5", None))),
        Answer::Watch(Ok(vec![Ok(WatchEvent::Added(pod("b", "6")))]), true),
    ]);
    let sink = Arc::new(RecordingSink::default());
    let reflector = Reflector::new(
        ScriptedLw(script.clone()),
        sink.clone(),
        config(ListMode::Auto),
    );
    let cancel = CancellationToken::new();
    let task = tokio::spawn(reflector.run(cancel.clone()));
    run_for(Duration::from_secs(1)).await;
    assert_eq!(*sink.ops.lock(), ["replace [a]@5", "add b@6"]);
    let calls = script.calls.lock().clone();
    assert!(matches!(&calls[0], Call::Watch(w) if w.send_initial_events));
    assert!(matches!(&calls[2], Call::Watch(w) if !w.send_initial_events));
    cancel.cancel();
    task.await.unwrap().unwrap();
}

#[tokio::test(start_paused = true)]
async fn streaming_list_replaces_then_watches_on_the_same_stream() {
    let script = Script::new(vec![Answer::Watch(
        Ok(vec![
            Ok(WatchEvent::Added(pod("a", "1"))),
            Ok(WatchEvent::Added(pod("b", "2"))),
            Ok(WatchEvent::Bookmark(bookmark("4", true))),
            Ok(WatchEvent::Modified(pod("b", "5"))),
        ]),
        true,
    )]);
    let sink = Arc::new(RecordingSink::default());
    let reflector = Reflector::new(
        ScriptedLw(script.clone()),
        sink.clone(),
        config(ListMode::Auto),
    );
    let cancel = CancellationToken::new();
    let task = tokio::spawn(reflector.run(cancel.clone()));
    run_for(Duration::from_secs(1)).await;
    assert_eq!(*sink.ops.lock(), ["replace [a,b]@4", "update b@5"]);
    assert_eq!(script.calls.lock().len(), 1);
    cancel.cancel();
    task.await.unwrap().unwrap();
}

#[tokio::test(start_paused = true)]
async fn resyncs_when_asked_and_stops_when_the_sink_closes() {
    let script = Script::new(vec![
        Answer::List(Ok(page(vec![], "5", None))),
        Answer::Watch(Ok(vec![Ok(WatchEvent::Added(pod("a", "6")))]), true),
    ]);
    let sink = Arc::new(RecordingSink::default());
    let due = Arc::new(AtomicBool::new(false));
    let due2 = due.clone();
    let reflector = Reflector::new(
        ScriptedLw(script.clone()),
        sink.clone(),
        config(ListMode::Paged),
    )
    .with_resync(
        Duration::from_secs(10),
        Arc::new(move || due2.load(Ordering::SeqCst)),
    );
    let task = tokio::spawn(reflector.run(CancellationToken::new()));
    run_for(Duration::from_secs(25)).await;
    assert_eq!(sink.resyncs.load(Ordering::SeqCst), 0, "not due");
    due.store(true, Ordering::SeqCst);
    run_for(Duration::from_secs(10)).await;
    assert_eq!(sink.resyncs.load(Ordering::SeqCst), 1);

    // Closing the sink ends the reflector at its next write.
    sink.closed.store(true, Ordering::SeqCst);
    let ended = tokio::time::timeout(Duration::from_secs(60), task).await;
    assert_eq!(
        ended.expect("the reflector stops").unwrap(),
        Err(SinkClosed)
    );
}
