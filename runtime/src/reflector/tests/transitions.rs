//! One test per rule of the list-and-watch loop, feeding inputs to `Machine::step`.

use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use tokio::time::Instant;

use super::support::*;
use crate::reflector::{Command, Input, ListMode, Machine, ReflectorError, SinkOp, State};
use kinform_client::{ListParams, ResourceVersionMatch, WatchEvent, WatchParams};

type S = State<Pod>;

fn list_params(s: &S) -> &ListParams {
    match s.command() {
        Command::List(p) => p,
        other => panic!("expected a LIST, got {other:?} in {}", s.label()),
    }
}

fn watch_params(s: &S) -> &WatchParams {
    match s.command() {
        Command::Watch(p) => p,
        other => panic!("expected a WATCH, got {other:?} in {}", s.label()),
    }
}

fn sleep_then(s: S) -> (Duration, S) {
    match s {
        State::Backoff { delay, then } => (delay, *then),
        other => panic!("expected a backoff, got {}", other.label()),
    }
}

fn opened(now: Instant) -> Input<Pod> {
    Input::WatchOpened {
        result: Ok(()),
        sent_at: now,
    }
}

/// A paged machine that listed at "10" and is watching.
fn watching(now: Instant) -> (Machine, S) {
    let (mut m, _) = machine(ListMode::Paged);
    let s: S = m.initial_state();
    let (_, s) = m.step(
        s,
        Input::Listed(Ok(page(vec![pod("a", "5")], "10", None))),
        now,
    );
    let (_, s) = m.step(s, opened(now), now);
    assert_eq!(s.label(), "Watching");
    (m, s)
}

#[test]
fn first_list_is_at_rv_0_paged_by_500() {
    let (mut m, _) = machine(ListMode::Paged);
    let s: S = m.initial_state();
    let p = list_params(&s);
    assert_eq!(p.resource_version.as_deref(), Some("0"));
    assert_eq!(p.limit, Some(500));
    assert_eq!(p.continue_token, None);
}

#[test]
fn pages_accumulate_then_replace_then_watch_from_list_rv() {
    let (mut m, metrics) = machine(ListMode::Paged);
    let now = Instant::now();
    let s: S = m.initial_state();
    let p1 = page(vec![pod("a", "3"), pod("b", "4")], "9", Some("tok1"));
    let (out, s) = m.step(s, Input::Listed(Ok(p1)), now);
    assert!(out.op.is_none() && out.error.is_none());
    let p = list_params(&s);
    assert_eq!(p.continue_token.as_deref(), Some("tok1"));
    assert_eq!(p.resource_version, None, "a continue request carries no RV");
    assert_eq!(p.limit, Some(500));
    let (out, s) = m.step(
        s,
        Input::Listed(Ok(page(vec![pod("c", "5")], "9", None))),
        now,
    );
    match out.op {
        Some(SinkOp::Replace {
            items,
            resource_version,
        }) => {
            assert_eq!(names(&items), ["a", "b", "c"]);
            assert_eq!(resource_version, "9");
        }
        other => panic!("expected a replace, got {other:?}"),
    }
    assert_eq!(m.last_sync_resource_version(), "9");
    let w = watch_params(&s);
    assert_eq!(w.resource_version.as_deref(), Some("9"));
    assert!(w.allow_watch_bookmarks);
    assert!(!w.send_initial_events);
    let t = w.timeout_seconds.unwrap();
    assert!((300..=600).contains(&t), "timeout {t}");
    let snap = metrics.snapshot();
    assert_eq!((snap.lists, snap.list_pages, snap.items_listed), (1, 2, 3));
    assert_eq!(snap.last_resource_version, "9");
}

#[test]
fn watch_timeouts_are_random_within_5_to_10_minutes() {
    let now = Instant::now();
    let (mut m, _) = machine(ListMode::Paged);
    let mut seen = std::collections::BTreeSet::new();
    for _ in 0..50 {
        let s: S = m.initial_state();
        let (_, s) = m.step(s, Input::Listed(Ok(page(vec![], "1", None))), now);
        let t = watch_params(&s).timeout_seconds.unwrap();
        assert!((300..=600).contains(&t));
        seen.insert(t);
    }
    assert!(seen.len() > 10, "timeouts are not random: {seen:?}");
}

#[test]
fn transient_page_failure_retries_the_same_page_and_keeps_pages_read() {
    let now = Instant::now();
    for err in [
        api_err(500, "InternalError"),
        api_err(503, "ServiceUnavailable"),
        transport_err(),
    ] {
        let (mut m, _) = machine(ListMode::Paged);
        let s: S = m.initial_state();
        let (_, s) = m.step(
            s,
            Input::Listed(Ok(page(vec![pod("a", "1")], "9", Some("t1")))),
            now,
        );
        let (out, s) = m.step(s, Input::Listed(Err(err)), now);
        assert!(matches!(out.error, Some(ReflectorError::List { .. })));
        let (delay, s) = sleep_then(s);
        assert_eq!(
            delay,
            Duration::from_millis(100),
            "page retry backoff starts at 100 ms"
        );
        let p = list_params(&s);
        assert_eq!(p.continue_token.as_deref(), Some("t1"));
        let (_, s) = m.step(s, Input::Listed(Err(api_err(500, "InternalError"))), now);
        let (delay, s) = sleep_then(s);
        assert_eq!(delay, Duration::from_millis(200), "doubles");
        let (out, s) = m.step(
            s,
            Input::Listed(Ok(page(vec![pod("b", "2")], "9", None))),
            now,
        );
        match out.op {
            Some(SinkOp::Replace { items, .. }) => assert_eq!(names(&items), ["a", "b"]),
            other => panic!("{other:?}"),
        }
        assert_eq!(s.label(), "WatchOpening");
    }
}

#[test]
fn page_retry_honours_retry_after() {
    let now = Instant::now();
    let (mut m, _) = machine(ListMode::Paged);
    let s: S = m.initial_state();
    let (_, s) = m.step(s, Input::Listed(Err(too_many(3))), now);
    let (delay, s) = sleep_then(s);
    assert_eq!(delay, Duration::from_secs(3));
    assert_eq!(list_params(&s).resource_version.as_deref(), Some("0"));
}

#[test]
fn too_many_page_failures_abandon_the_list_with_backoff() {
    let now = Instant::now();
    let (mut m, _) = machine(ListMode::Paged);
    let mut s: S = m.initial_state();
    let (_, s2) = m.step(
        s,
        Input::Listed(Ok(page(vec![pod("a", "1")], "9", Some("t1")))),
        now,
    );
    s = s2;
    for _ in 0..10 {
        let (_, s2) = m.step(s, Input::Listed(Err(api_err(500, "InternalError"))), now);
        let (_, s2) = sleep_then(s2);
        s = s2;
    }
    let (_, s) = m.step(s, Input::Listed(Err(api_err(500, "InternalError"))), now);
    let (delay, s) = sleep_then(s);
    assert_eq!(delay, Duration::from_millis(800), "the reflector backoff");
    let p = list_params(&s);
    assert_eq!(p.continue_token, None, "a fresh list");
    assert_eq!(p.resource_version.as_deref(), Some("0"));
    match s {
        State::Listing(l) => assert!(l.items.is_empty()),
        _ => unreachable!(),
    }
}

#[test]
fn expired_continue_token_falls_back_to_one_full_list() {
    let now = Instant::now();
    let (mut m, _) = machine(ListMode::Paged);
    let s: S = m.initial_state();
    let (_, s) = m.step(
        s,
        Input::Listed(Ok(page(vec![pod("a", "1")], "9", Some("t1")))),
        now,
    );
    let (out, s) = m.step(s, Input::Listed(Err(api_err(410, "Expired"))), now);
    assert!(out.error.unwrap().is_gone());
    let p = list_params(&s);
    assert_eq!(p.limit, None, "full list");
    assert_eq!(p.continue_token, None);
    assert_eq!(p.resource_version.as_deref(), Some("0"), "at the list's RV");
    let (out, _) = m.step(
        s,
        Input::Listed(Ok(page(vec![pod("b", "2")], "12", None))),
        now,
    );
    match out.op {
        Some(SinkOp::Replace { items, .. }) => {
            assert_eq!(names(&items), ["b"], "old pages dropped")
        }
        other => panic!("{other:?}"),
    }
}

/// A 504 whose Status says the resourceVersion is newer than the server has (it lost its
/// history): kube-apiserver's `ResourceVersionTooLarge`.
fn too_large_rv() -> kinform_client::Error {
    let mut e = api_err(504, "Timeout");
    if let kinform_client::Error::Api { status, .. } = &mut e {
        status.message = Some("Too large resource version: 20, current: 10".into());
    }
    e
}

#[test]
fn too_large_rv_on_a_continued_page_relists_at_once_with_a_consistent_read() {
    // client-go's pager lists in full only on Expired; a too-large RV goes up to the
    // reflector, which marks the RV unavailable and lists at "" (no second wait at it).
    let now = Instant::now();
    let (mut m, _) = machine(ListMode::Paged);
    let s: S = m.initial_state();
    let (_, s) = m.step(
        s,
        Input::Listed(Ok(page(vec![pod("a", "1")], "9", Some("t1")))),
        now,
    );
    let (out, s) = m.step(s, Input::Listed(Err(too_large_rv())), now);
    assert!(out.error.is_some());
    let p = list_params(&s);
    assert_eq!(p.continue_token, None);
    assert_eq!(p.resource_version.as_deref(), Some(""), "a consistent read");
    assert_eq!(p.limit, Some(500), "paged, as the first list");
}

#[test]
fn expired_or_too_large_rv_relists_at_once_with_a_consistent_read() {
    let now = Instant::now();
    for err in [api_err(410, "Expired"), too_large_rv()] {
        let (mut m, s) = watching(now);
        // A watch ERROR 410 relists at the last synced RV first...
        let (_, s) = m.step(s, event(WatchEvent::Error(status(410, "Expired"))), now);
        let (_, s) = sleep_then(s);
        assert_eq!(list_params(&s).resource_version.as_deref(), Some("10"));
        // ...and when that list says the RV is unavailable, a consistent list follows at once.
        let (out, s) = m.step(s, Input::Listed(Err(err)), now);
        assert!(out.error.is_some());
        let p = list_params(&s);
        assert_eq!(p.resource_version.as_deref(), Some(""));
        assert_eq!(p.limit, Some(500), "a consistent list is paged");
        let (_, s) = m.step(s, Input::Listed(Ok(page(vec![], "30", None))), now);
        assert_eq!(watch_params(&s).resource_version.as_deref(), Some("30"));
        // The RV is usable again: the next relist is at it.
        let (_, s) = m.step(
            s,
            Input::WatchOpened {
                result: Err(api_err(500, "InternalError")),
                sent_at: now,
            },
            now,
        );
        let (_, s) = sleep_then(s);
        assert_eq!(list_params(&s).resource_version.as_deref(), Some("30"));
    }
}

#[test]
fn relist_at_a_known_rv_is_not_paged_unless_the_first_list_was() {
    let now = Instant::now();
    let (mut m, s) = watching(now);
    let (_, s) = m.step(s, event(WatchEvent::Error(status(410, "Expired"))), now);
    let (_, s) = sleep_then(s);
    let p = list_params(&s);
    assert_eq!(p.resource_version.as_deref(), Some("10"));
    assert_eq!(p.limit, None);

    // A first list at "0" that came back paged keeps relists paged (client-go's
    // paginatedResult).
    let (mut m, _) = machine(ListMode::Paged);
    let s: S = m.initial_state();
    let (_, s) = m.step(s, Input::Listed(Ok(page(vec![], "9", Some("t")))), now);
    let (_, s) = m.step(s, Input::Listed(Ok(page(vec![], "9", None))), now);
    let (_, s) = m.step(s, opened(now), now);
    let (_, s) = m.step(s, event(WatchEvent::Error(status(410, "Expired"))), now);
    let (_, s) = sleep_then(s);
    assert_eq!(list_params(&s).limit, Some(500));
}

#[test]
fn events_and_bookmarks_advance_the_rv_and_a_closed_watch_resumes_there() {
    let now = Instant::now();
    let (mut m, s) = watching(now);
    let (out, s) = m.step(s, event(WatchEvent::Added(pod("b", "11"))), now);
    assert!(matches!(out.op, Some(SinkOp::Add(ref p)) if p.metadata.name.as_deref() == Some("b")));
    let (out, s) = m.step(s, event(WatchEvent::Modified(pod("b", "12"))), now);
    assert!(matches!(out.op, Some(SinkOp::Update(_))));
    let (out, s) = m.step(s, event(WatchEvent::Deleted(pod("a", "13"))), now);
    assert!(matches!(out.op, Some(SinkOp::Delete(_))));
    assert_eq!(m.last_sync_resource_version(), "13");
    let (out, s) = m.step(s, event(WatchEvent::Bookmark(bookmark("20", false))), now);
    assert!(matches!(out.op, Some(SinkOp::Bookmark(ref rv)) if rv == "20"));
    assert_eq!(m.last_sync_resource_version(), "20");
    let (out, s) = m.step(s, Input::StreamEnded, now);
    assert!(out.error.is_none(), "a normal close is not an error");
    assert_eq!(
        watch_params(&s).resource_version.as_deref(),
        Some("20"),
        "re-watch at once"
    );
}

#[test]
fn a_short_watch_without_events_is_an_error() {
    let t0 = Instant::now();
    let (mut m, s) = watching(t0);
    let (out, s) = m.step(s, Input::StreamEnded, t0 + Duration::from_millis(500));
    assert!(matches!(out.error, Some(ReflectorError::ShortWatch { .. })));
    let (delay, s) = sleep_then(s);
    assert_eq!(delay, Duration::from_millis(800));
    assert_eq!(
        list_params(&s).resource_version.as_deref(),
        Some("10"),
        "relist at last RV"
    );

    // Long enough, or with events: not an error.
    let (mut m, s) = watching(t0);
    let (out, s) = m.step(s, Input::StreamEnded, t0 + Duration::from_secs(2));
    assert!(out.error.is_none());
    assert_eq!(s.label(), "WatchOpening");
    let (mut m2, s2) = watching(t0);
    let (_, s2) = m2.step(s2, event(WatchEvent::Bookmark(bookmark("11", false))), t0);
    let (out, s2) = m2.step(s2, Input::StreamEnded, t0 + Duration::from_millis(100));
    assert!(out.error.is_none());
    assert_eq!(s2.label(), "WatchOpening");
    let _ = (m, s);
}

#[test]
fn connection_refused_and_429_back_off_and_rewatch_from_the_same_rv() {
    let now = Instant::now();
    for (err, at_least) in [(transport_err(), 800), (too_many(5), 5000)] {
        let (mut m, s) = watching(now);
        let (_, s) = m.step(s, Input::StreamEnded, now + Duration::from_secs(5));
        let (out, s) = m.step(
            s,
            Input::WatchOpened {
                result: Err(err),
                sent_at: now,
            },
            now,
        );
        assert!(matches!(out.error, Some(ReflectorError::Watch { .. })));
        let (delay, s) = sleep_then(s);
        assert_eq!(delay, Duration::from_millis(at_least));
        assert_eq!(
            watch_params(&s).resource_version.as_deref(),
            Some("10"),
            "no relist"
        );
    }
}

#[test]
fn watch_open_410_or_500_backs_off_and_relists() {
    let now = Instant::now();
    for err in [api_err(410, "Expired"), api_err(500, "InternalError")] {
        let (mut m, s) = watching(now);
        let (_, s) = m.step(s, Input::StreamEnded, now + Duration::from_secs(5));
        let (_, s) = m.step(
            s,
            Input::WatchOpened {
                result: Err(err),
                sent_at: now,
            },
            now,
        );
        let (_, s) = sleep_then(s);
        assert_eq!(list_params(&s).resource_version.as_deref(), Some("10"));
    }
}

#[test]
fn watch_error_events_429_rewatch_and_410_relist() {
    let now = Instant::now();
    let (mut m, s) = watching(now);
    let (_, s) = m.step(
        s,
        event(WatchEvent::Error(status(429, "TooManyRequests"))),
        now,
    );
    let (_, s) = sleep_then(s);
    assert_eq!(watch_params(&s).resource_version.as_deref(), Some("10"));

    let (mut m, s) = watching(now);
    let (out, s) = m.step(s, event(WatchEvent::Error(status(410, "Expired"))), now);
    assert!(out.error.unwrap().is_gone());
    let (_, s) = sleep_then(s);
    assert_eq!(s.label(), "Listing");
}

#[test]
fn stream_errors_transport_rewatches_decode_relists() {
    let now = Instant::now();
    let (mut m, s) = watching(now);
    let (_, s) = m.step(s, event(WatchEvent::Added(pod("x", "11"))), now);
    let (out, s) = m.step(s, Input::StreamError(transport_err()), now);
    assert!(out.error.is_some(), "reported to the hook");
    assert_eq!(watch_params(&s).resource_version.as_deref(), Some("11"));

    let (mut m, s) = watching(now);
    let decode = kinform_client::Error::Decode {
        request: "WATCH pods".into(),
        what: "a watch event".into(),
        source: serde_json::from_str::<u8>("x").unwrap_err(),
    };
    let (_, s) = m.step(s, Input::StreamError(decode), now);
    let (_, s) = sleep_then(s);
    assert_eq!(s.label(), "Listing");
}

#[test]
fn backoff_grows_across_errors_and_resets_after_two_healthy_minutes() {
    let t0 = Instant::now();
    let (mut m, _) = machine(ListMode::Paged);
    let mut s: S = m.initial_state();
    let mut delays = Vec::new();
    for i in 0..3 {
        let (_, s2) = m.step(
            s,
            Input::Listed(Err(api_err(403, "Forbidden"))),
            t0 + Duration::from_secs(i),
        );
        let (d, s2) = sleep_then(s2);
        delays.push(d.as_millis());
        s = s2;
    }
    assert_eq!(delays, [800, 1600, 3200]);
    let later = t0 + Duration::from_secs(200);
    let (_, s2) = m.step(s, Input::Listed(Err(api_err(403, "Forbidden"))), later);
    assert_eq!(sleep_then(s2).0, Duration::from_millis(800));
}

#[test]
fn streaming_list_collects_until_the_end_bookmark_then_keeps_watching() {
    let now = Instant::now();
    let (mut m, metrics) = machine(ListMode::Auto);
    let s: S = m.initial_state();
    let w = watch_params(&s);
    assert!(w.send_initial_events && w.allow_watch_bookmarks);
    assert_eq!(
        w.resource_version_match,
        Some(ResourceVersionMatch::NotOlderThan)
    );
    assert_eq!(
        w.resource_version.as_deref(),
        Some(""),
        "first streaming list is consistent"
    );
    let (_, s) = m.step(s, opened(now), now);
    let (_, s) = m.step(s, event(WatchEvent::Added(pod("a", "3"))), now);
    let (_, s) = m.step(s, event(WatchEvent::Added(pod("b", "4"))), now);
    let (out, s) = m.step(s, event(WatchEvent::Bookmark(bookmark("7", false))), now);
    assert!(out.op.is_none());
    assert_eq!(
        s.label(),
        "Streaming",
        "a plain bookmark does not end the initial events"
    );
    let (out, s) = m.step(s, event(WatchEvent::Bookmark(bookmark("20", true))), now);
    match out.op {
        Some(SinkOp::Replace {
            items,
            resource_version,
        }) => {
            assert_eq!(names(&items), ["a", "b"]);
            assert_eq!(resource_version, "20");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(s.label(), "Watching", "the same watch goes on");
    let (out, _) = m.step(s, event(WatchEvent::Modified(pod("a", "21"))), now);
    assert!(matches!(out.op, Some(SinkOp::Update(_))));
    assert_eq!(m.last_sync_resource_version(), "21");
    assert_eq!(metrics.snapshot().items_listed, 2);
}

#[test]
fn streaming_list_applies_unexpected_modify_and_delete() {
    let now = Instant::now();
    let (mut m, _) = machine(ListMode::Streaming);
    let s: S = m.initial_state();
    let (_, s) = m.step(s, opened(now), now);
    let (_, s) = m.step(s, event(WatchEvent::Added(pod("a", "3"))), now);
    let (_, s) = m.step(s, event(WatchEvent::Added(pod("b", "4"))), now);
    let (_, s) = m.step(s, event(WatchEvent::Modified(pod("a", "5"))), now);
    let (_, s) = m.step(s, event(WatchEvent::Deleted(pod("b", "6"))), now);
    let (out, _) = m.step(s, event(WatchEvent::Bookmark(bookmark("6", true))), now);
    match out.op {
        Some(SinkOp::Replace { items, .. }) => {
            assert_eq!(names(&items), ["a"]);
            assert_eq!(items[0].metadata.resource_version.as_deref(), Some("5"));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn unsupported_streaming_falls_back_to_paged_lists_for_good() {
    let now = Instant::now();
    let (mut m, _) = machine(ListMode::Auto);
    let s: S = m.initial_state();
    let (out, s) = m.step(
        s,
        Input::WatchOpened {
            result: Err(api_err(400, "BadRequest")),
            sent_at: now,
        },
        now,
    );
    assert!(matches!(
        out.error,
        Some(ReflectorError::StreamingList { .. })
    ));
    assert_eq!(
        list_params(&s).resource_version.as_deref(),
        Some("0"),
        "at once, no backoff"
    );
    let (_, s) = m.step(s, Input::Listed(Ok(page(vec![], "5", None))), now);
    let (_, s) = m.step(s, opened(now), now);
    let (_, s) = m.step(s, event(WatchEvent::Error(status(410, "Expired"))), now);
    let (_, s) = sleep_then(s);
    assert_eq!(s.label(), "Listing", "streaming is not tried again");
}

#[test]
fn failed_streaming_round_falls_back_once_then_streams_again() {
    let now = Instant::now();
    let (mut m, _) = machine(ListMode::Auto);
    let s: S = m.initial_state();
    let (_, s) = m.step(s, opened(now), now);
    let (_, s) = m.step(s, event(WatchEvent::Added(pod("a", "3"))), now);
    let (out, s) = m.step(s, Input::StreamEnded, now);
    assert!(matches!(
        out.error,
        Some(ReflectorError::StreamingList { .. })
    ));
    assert_eq!(s.label(), "Listing");
    let (_, s) = m.step(s, Input::Listed(Ok(page(vec![], "5", None))), now);
    let (_, s) = m.step(s, opened(now), now);
    let (_, s) = m.step(s, event(WatchEvent::Error(status(410, "Expired"))), now);
    let (_, s) = sleep_then(s);
    let w = watch_params(&s);
    assert!(w.send_initial_events);
    assert_eq!(
        w.resource_version.as_deref(),
        Some("5"),
        "streams from the last RV"
    );
}

#[test]
fn streaming_410_falls_back_to_a_consistent_list() {
    let now = Instant::now();
    let (mut m, _) = machine(ListMode::Auto);
    let s: S = m.initial_state();
    let (_, s) = m.step(s, opened(now), now);
    let (_, s) = m.step(s, event(WatchEvent::Error(status(410, "Expired"))), now);
    assert_eq!(list_params(&s).resource_version.as_deref(), Some(""));
}

#[test]
fn streaming_only_mode_backs_off_and_streams_again() {
    let now = Instant::now();
    let (mut m, _) = machine(ListMode::Streaming);
    let s: S = m.initial_state();
    let (_, s) = m.step(
        s,
        Input::WatchOpened {
            result: Err(api_err(400, "BadRequest")),
            sent_at: now,
        },
        now,
    );
    let (delay, s) = sleep_then(s);
    assert_eq!(delay, Duration::from_millis(800));
    assert!(watch_params(&s).send_initial_events);
}

#[test]
fn backoff_wakes_into_its_state_and_unfit_inputs_are_ignored() {
    let now = Instant::now();
    let (mut m, s) = watching(now);
    let (out, s) = m.step(s, Input::Woke, now);
    assert!(out.op.is_none() && out.error.is_none());
    assert_eq!(s.label(), "Watching");
    let (_, s) = m.step(
        s,
        event(WatchEvent::Error(status(500, "InternalError"))),
        now,
    );
    assert_eq!(s.command(), Command::Sleep(Duration::from_millis(800)));
    let (_, s) = m.step(s, Input::Woke, now);
    assert_eq!(s.label(), "Listing");
}

/// A pod in namespace `ns` (the shard field of the test's selector).
fn pod_in(ns: &str, name: &str, rv: &str) -> Pod {
    let mut p = pod(name, rv);
    p.metadata.namespace = Some(ns.into());
    p
}

#[test]
fn a_shard_selector_is_sent_and_only_its_objects_reach_the_sink() {
    use kinform_core::shard::{ShardField, ShardRange, ShardSelector, fnv1a64};
    // Two namespaces on either side of the middle of the hash space (they differ in their
    // first byte: FNV-1a's high bits hardly move with the last bytes of a name).
    let (inside, outside) = {
        let low = |ns: &String| fnv1a64(ns.bytes()) < 1 << 63;
        let names: Vec<String> = (0..64).map(|i| format!("{i}-ns")).collect();
        let inside = names.iter().find(|n| low(n)).unwrap().clone();
        let outside = names.iter().find(|n| !low(n)).unwrap().clone();
        (inside, outside)
    };
    let (inside, outside) = (inside.as_str(), outside.as_str());
    let range = ShardRange::nth(ShardField::Namespace, 0, 2).unwrap();
    let selector = ShardSelector::from(range);
    for mode in [ListMode::Paged, ListMode::Streaming] {
        let metrics = std::sync::Arc::new(crate::reflector::ReflectorMetrics::default());
        let config = config(mode).shard_selector(selector.clone());
        let mut m = Machine::seeded(config, metrics, 42);
        let now = Instant::now();
        let s: S = m.initial_state();
        // A server that ignores the selector sends both namespaces.
        let (out, s) = match mode {
            ListMode::Paged => {
                let p = list_params(&s);
                assert_eq!(p.shard_selector, Some(selector.to_string()));
                let items = vec![pod_in(inside, "x", "3"), pod_in(outside, "y", "4")];
                m.step(s, Input::Listed(Ok(page(items, "9", None))), now)
            }
            _ => {
                let w = watch_params(&s);
                assert_eq!(w.shard_selector, Some(selector.to_string()));
                let (_, s) = m.step(s, opened(now), now);
                let (_, s) = m.step(s, event(WatchEvent::Added(pod_in(inside, "x", "3"))), now);
                let (_, s) = m.step(s, event(WatchEvent::Added(pod_in(outside, "y", "4"))), now);
                m.step(s, event(WatchEvent::Bookmark(bookmark("9", true))), now)
            }
        };
        match out.op {
            Some(SinkOp::Replace { items, .. }) => assert_eq!(names(&items), ["x"], "{mode:?}"),
            other => panic!("expected a replace, got {other:?}"),
        }
        let s = if mode == ListMode::Paged {
            let w = watch_params(&s);
            assert_eq!(w.shard_selector, Some(selector.to_string()));
            m.step(s, opened(now), now).1
        } else {
            s
        };
        assert_eq!(s.label(), "Watching", "{mode:?}");
        // Out of the shard: no op, the RV still advances.
        let (out, s) = m.step(
            s,
            event(WatchEvent::Modified(pod_in(outside, "y", "11"))),
            now,
        );
        assert!(out.op.is_none(), "{mode:?}");
        assert_eq!(m.last_sync_resource_version(), "11");
        let (out, _) = m.step(
            s,
            event(WatchEvent::Modified(pod_in(inside, "x", "12"))),
            now,
        );
        assert!(matches!(out.op, Some(SinkOp::Update(_))), "{mode:?}");
    }
}
