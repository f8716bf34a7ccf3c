//! Server-side sharded list and watch (KEP-5866, kube-apiserver's `ShardedListAndWatch` gate)
//! over raw HTTP: each test names the kube-apiserver behaviour it checks. The expected objects
//! are computed here from the objects' UIDs (or namespaces) with FNV-1a 64 and the ranges'
//! bounds, not with the selector type the server uses.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use kinform_client::{Api, ListParams, WatchParams};
use kinform_core::shard::fnv1a64;
use kinform_tests::http::{Raw, Watch, configmap, names, rv};
use kinform_testserver::TestApiServer;
use serde_json::{Value, json};

const CMS: &str = "/api/v1/namespaces/default/configmaps";
const SPACE: u128 = 1 << 64;

/// A server with the gate on and frequent bookmarks.
async fn sharded() -> (TestApiServer, Raw) {
    let server = TestApiServer::builder()
        .sharded_list_and_watch()
        .bookmark_interval(Duration::from_millis(200))
        .start()
        .await
        .unwrap();
    let raw = Raw::new(&server.url());
    (server, raw)
}

/// `[start, end)` of shard `i` of `n`, as kube-apiserver's e2e test divides the space.
fn nth(i: u128, n: u128) -> (u128, u128) {
    let span = SPACE / n;
    (span * i, if i + 1 == n { SPACE } else { span * (i + 1) })
}

fn range(field: &str, (start, end): (u128, u128)) -> String {
    format!("shardRange(object.metadata.{field}, '0x{start:016x}', '0x{end:016x}')")
}

fn hash(value: &str) -> u128 {
    u128::from(fnv1a64(value.bytes()))
}

fn within(value: &str, (start, end): (u128, u128)) -> bool {
    (start..end).contains(&hash(value))
}

/// Percent-encodes a query value.
fn enc(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// `name -> uid` of a list's items.
fn uids(list: &Value) -> BTreeMap<String, String> {
    list["items"]
        .as_array()
        .unwrap_or_else(|| panic!("not a list: {list}"))
        .iter()
        .map(|i| {
            (
                i["metadata"]["name"].as_str().unwrap().to_owned(),
                i["metadata"]["uid"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

async fn create_configmaps(raw: &Raw, n: usize) -> BTreeMap<String, String> {
    for i in 0..n {
        let r = raw
            .post(
                CMS,
                &configmap("default", &format!("cm-{i:02}"), json!({"app": "shard"})),
            )
            .await;
        assert_eq!(r.status, 201, "{}", r.body);
    }
    let all = raw.get(&format!("{CMS}?labelSelector=app%3Dshard")).await;
    let all = uids(&all.body);
    assert_eq!(all.len(), n);
    all
}

fn in_range(all: &BTreeMap<String, String>, r: (u128, u128)) -> BTreeSet<String> {
    all.iter()
        .filter(|(_, uid)| within(uid, r))
        .map(|(name, _)| name.clone())
        .collect()
}

/// kube-apiserver's sharded LIST (`SelectionPredicate` with a shard selector): exactly the
/// objects whose FNV-1a 64 of `metadata.uid` falls in `[start, end)`, `metadata.shardInfo`
/// echoing the selector, no `remainingItemCount`; disjoint shards covering the space add up
/// to the whole list; a paged sharded list carries `shardInfo` on every page.
#[tokio::test]
async fn list_answers_exactly_the_shard_and_shards_cover_the_list() {
    let (_server, raw) = sharded().await;
    let all = create_configmaps(&raw, 24).await;
    for n in [2, 4] {
        let mut union = BTreeSet::new();
        for i in 0..n {
            let r = nth(i, n);
            let sel = range("uid", r);
            let page = raw
                .get(&format!(
                    "{CMS}?labelSelector=app%3Dshard&shardSelector={}",
                    enc(&sel)
                ))
                .await;
            assert_eq!(page.status, 200, "{}", page.body);
            assert_eq!(page.body["metadata"]["shardInfo"], json!({"selector": sel}));
            let got: BTreeSet<String> = names(&page.body).into_iter().collect();
            assert_eq!(got, in_range(&all, r), "shard {i} of {n}");
            assert!(union.is_disjoint(&got), "shard {i} of {n} overlaps");
            union.extend(got);
        }
        assert_eq!(
            union,
            all.keys().cloned().collect::<BTreeSet<_>>(),
            "{n} shards"
        );
    }

    let r = nth(0, 2);
    let sel = range("uid", r);
    let mut paged = BTreeSet::new();
    let mut path = format!(
        "{CMS}?labelSelector=app%3Dshard&limit=2&shardSelector={}",
        enc(&sel)
    );
    loop {
        let page = raw.get(&path).await;
        assert_eq!(page.status, 200, "{}", page.body);
        assert_eq!(page.body["metadata"]["shardInfo"]["selector"], sel.as_str());
        assert!(
            page.body["metadata"].get("remainingItemCount").is_none(),
            "{}",
            page.body
        );
        assert!(names(&page.body).len() <= 2);
        paged.extend(names(&page.body));
        match page.body["metadata"]["continue"].as_str() {
            Some(c) => path = format!("{CMS}?limit=2&continue={c}&shardSelector={}", enc(&sel)),
            None => break,
        }
    }
    assert_eq!(paged, in_range(&all, r));
}

/// kube-apiserver's shard selector grammar: ranges joined by `||` select their union, the
/// selector echoed as the request wrote it (here without spaces); `object.metadata.namespace`
/// hashes the namespace, so a cluster-wide list keeps whole namespaces.
#[tokio::test]
async fn or_joins_ranges_and_namespace_shards_keep_whole_namespaces() {
    let (server, raw) = sharded().await;
    let all = create_configmaps(&raw, 16).await;
    let (a, c) = (nth(0, 4), nth(2, 4));
    let sel = format!("{}||{}", range("uid", a), range("uid", c)).replace(", ", ",");
    let page = raw
        .get(&format!(
            "{CMS}?labelSelector=app%3Dshard&shardSelector={}",
            enc(&sel)
        ))
        .await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert_eq!(page.body["metadata"]["shardInfo"]["selector"], sel.as_str());
    let mut want = in_range(&all, a);
    want.extend(in_range(&all, c));
    assert_eq!(names(&page.body).into_iter().collect::<BTreeSet<_>>(), want);

    for ns in ["team-a", "team-b", "team-c", "team-d"] {
        server.create_namespace(ns).unwrap();
        for i in 0..2 {
            let r = raw
                .post(
                    &format!("/api/v1/namespaces/{ns}/configmaps"),
                    &configmap(ns, &format!("cm-{i}"), json!({"app": "ns"})),
                )
                .await;
            assert_eq!(r.status, 201, "{}", r.body);
        }
    }
    let mut seen = BTreeSet::new();
    for i in 0..2 {
        let r = nth(i, 2);
        let page = raw
            .get(&format!(
                "/api/v1/configmaps?labelSelector=app%3Dns&shardSelector={}",
                enc(&range("namespace", r))
            ))
            .await;
        assert_eq!(page.status, 200, "{}", page.body);
        for item in page.body["items"].as_array().unwrap() {
            let ns = item["metadata"]["namespace"].as_str().unwrap();
            assert!(within(ns, r), "{ns} is not in namespace shard {i}");
            assert!(seen.insert(format!("{ns}/{}", item["metadata"]["name"])));
        }
    }
    assert_eq!(
        seen.len(),
        8,
        "the two namespace shards hold every object once"
    );
}

/// Reads events of `w` until `done` says so, or fails after 10 s.
async fn collect(w: &mut Watch, mut done: impl FnMut(&Value) -> bool) {
    tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            let ev = w.next().await.expect("the watch ended early");
            if done(&ev) {
                return;
            }
        }
    })
    .await
    .expect("timed out waiting for watch events");
}

/// kube-apiserver's sharded WATCH (the cacher's per-watcher filter): ADDED, MODIFIED and
/// DELETED events of exactly the objects in the shard reach the watcher; bookmarks are not
/// filtered (a watcher whose range selects nothing still gets them).
#[tokio::test]
async fn watch_sends_the_events_of_the_shard_and_every_bookmark() {
    let (_server, raw) = sharded().await;
    let start = rv(&raw.get(CMS).await.body);
    let shards = [nth(0, 2), nth(1, 2)];
    let mut watches = Vec::new();
    for r in shards {
        watches.push(
            raw.watch(&format!(
                "{CMS}?watch=true&resourceVersion={start}&labelSelector=app%3Dshard&shardSelector={}",
                enc(&range("uid", r))
            ))
            .await,
        );
    }
    let nothing = (0, 1);
    let mut empty = raw
        .watch(&format!(
            "{CMS}?watch=true&resourceVersion={start}&allowWatchBookmarks=true&shardSelector={}",
            enc(&range("uid", nothing))
        ))
        .await;

    let all = create_configmaps(&raw, 12).await;
    for name in all.keys() {
        let r = raw
            .patch(
                &format!("{CMS}/{name}"),
                "application/merge-patch+json",
                &json!({"data": {"k": "changed"}}),
            )
            .await;
        assert_eq!(r.status, 200, "{}", r.body);
        assert_eq!(raw.delete(&format!("{CMS}/{name}")).await.status, 200);
    }
    let last = rv(&raw.get(CMS).await.body);

    for (w, r) in watches.iter_mut().zip(shards) {
        let want = in_range(&all, r);
        let mut got: BTreeMap<&str, Vec<String>> = BTreeMap::new();
        let mut left = 3 * want.len();
        if left > 0 {
            collect(w, |ev| {
                let name = ev["object"]["metadata"]["name"]
                    .as_str()
                    .unwrap()
                    .to_owned();
                let uid = ev["object"]["metadata"]["uid"].as_str().unwrap();
                assert!(within(uid, r), "{ev} is outside the shard");
                let ty = ev["type"].as_str().unwrap();
                got.entry(match ty {
                    "ADDED" => "ADDED",
                    "MODIFIED" => "MODIFIED",
                    "DELETED" => "DELETED",
                    other => panic!("unexpected {other}"),
                })
                .or_default()
                .push(name);
                left -= 1;
                left == 0
            })
            .await;
        }
        for ty in ["ADDED", "MODIFIED", "DELETED"] {
            let names: BTreeSet<String> = got.remove(ty).unwrap_or_default().into_iter().collect();
            assert_eq!(names, want, "{ty} events of shard {r:?}");
        }
    }

    assert!(all.values().all(|uid| !within(uid, nothing)));
    collect(&mut empty, |ev| {
        assert_eq!(ev["type"], "BOOKMARK", "an event outside the range: {ev}");
        rv(&ev["object"]) >= last
    })
    .await;
}

/// kube-apiserver's streaming list (`sendInitialEvents=true`) with a shard selector: the
/// initial ADDED events are the objects in the shard, then the initial-events-end bookmark.
#[tokio::test]
async fn streaming_list_sends_the_shard_then_its_end_bookmark() {
    let (_server, raw) = sharded().await;
    let all = create_configmaps(&raw, 10).await;
    let r = nth(1, 2);
    let mut w = raw
        .watch(&format!(
            "{CMS}?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&labelSelector=app%3Dshard&shardSelector={}",
            enc(&range("uid", r))
        ))
        .await;
    let mut got = BTreeSet::new();
    collect(&mut w, |ev| {
        if ev["type"] == "BOOKMARK" {
            return ev["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"] == "true";
        }
        assert_eq!(ev["type"], "ADDED", "{ev}");
        got.insert(
            ev["object"]["metadata"]["name"]
                .as_str()
                .unwrap()
                .to_owned(),
        );
        false
    })
    .await;
    assert_eq!(got, in_range(&all, r));
}

/// kube-apiserver's DELETECOLLECTION lists with the same options, shard selector included:
/// only the shard's objects are deleted.
#[tokio::test]
async fn deletecollection_deletes_only_the_shard() {
    let (_server, raw) = sharded().await;
    let all = create_configmaps(&raw, 16).await;
    let (gone, kept) = (nth(0, 2), nth(1, 2));
    let r = raw
        .delete(&format!(
            "{CMS}?labelSelector=app%3Dshard&shardSelector={}",
            enc(&range("uid", gone))
        ))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(
        names(&r.body).into_iter().collect::<BTreeSet<_>>(),
        in_range(&all, gone)
    );
    let left = raw.get(&format!("{CMS}?labelSelector=app%3Dshard")).await;
    assert_eq!(
        names(&left.body).into_iter().collect::<BTreeSet<_>>(),
        in_range(&all, kept)
    );
}

/// kube-apiserver refuses a selector that does not parse while decoding the request's
/// `ListOptions`: 400 BadRequest, `invalid shard selector: ...`, on LIST, WATCH and
/// DELETECOLLECTION alike, before anything is read or deleted.
#[tokio::test]
async fn bad_selectors_are_refused_with_bad_request() {
    let (_server, raw) = sharded().await;
    create_configmaps(&raw, 2).await;
    let full = "'0x0000000000000000', '0x10000000000000000'";
    for bad in [
        String::new(),
        "   ".into(),
        "shardRange(object.metadata.name, '0x0000000000000000', '0x8000000000000000')".into(),
        "shardRange(object.metadata.uid, '0000000000000000', '0x8000000000000000')".into(),
        "shardRange(object.metadata.uid, '0x0', '0x8000000000000000')".into(),
        "shardRange(object.metadata.uid, '0x8000000000000000', '0x8000000000000000')".into(),
        "shardRange(object.metadata.uid, 0, 8)".into(),
        "shardRange(object.metadata.uid, '0x0000000000000000')".into(),
        format!(
            "shardRange(object.metadata.uid, {full}) && shardRange(object.metadata.uid, {full})"
        ),
        format!(
            "shardRange(object.metadata.uid, {full}) || shardRange(object.metadata.namespace, {full})"
        ),
        format!("otherRange(object.metadata.uid, {full})"),
    ] {
        let q = format!("shardSelector={}", enc(&bad));
        for (method, path) in [
            ("GET", format!("{CMS}?{q}")),
            ("GET", format!("{CMS}?watch=true&{q}")),
            ("DELETE", format!("{CMS}?{q}")),
        ] {
            let r = raw.request(method, &path, None).await;
            assert_eq!(r.status, 400, "{method} {bad:?}: {}", r.body);
            assert_eq!(r.body["kind"], "Status");
            assert_eq!(r.body["reason"], "BadRequest");
            let message = r.body["message"].as_str().unwrap();
            assert!(
                message.starts_with("invalid shard selector: "),
                "{method} {bad:?}: {message}"
            );
        }
    }
    let r = raw
        .get(&format!(
            "{CMS}?shardSelector={}",
            enc("shardRange(object.metadata.uid, '0x0000000000000000', '0xff')")
        ))
        .await;
    assert_eq!(
        r.body["message"],
        "invalid shard selector: the end \"0xff\" must have exactly 16 hex digits after 0x (or \
         be 0x10000000000000000); did you mean \"0x00000000000000ff\"?"
    );
    assert_eq!(
        names(&raw.get(CMS).await.body).len(),
        2,
        "nothing was deleted"
    );
}

/// kube-apiserver with `ShardedListAndWatch` off (its default) ignores `shardSelector` as it
/// ignores any unknown query parameter: the whole collection, no `shardInfo`, a
/// `remainingItemCount` on a page, a malformed selector accepted, every watch event sent.
#[tokio::test]
async fn with_the_gate_off_the_parameter_is_ignored() {
    let server = TestApiServer::start().await.unwrap();
    let raw = Raw::new(&server.url());
    let start = rv(&raw.get(CMS).await.body);
    let all = create_configmaps(&raw, 8).await;
    let half = enc(&range("uid", nth(0, 2)));
    let page = raw
        .get(&format!(
            "{CMS}?labelSelector=app%3Dshard&shardSelector={half}"
        ))
        .await;
    assert_eq!(page.status, 200);
    assert!(
        page.body["metadata"].get("shardInfo").is_none(),
        "{}",
        page.body
    );
    assert_eq!(names(&page.body).len(), all.len());
    let page = raw
        .get(&format!("{CMS}?limit=2&shardSelector={half}"))
        .await;
    assert!(
        page.body["metadata"]["remainingItemCount"].is_number(),
        "{}",
        page.body
    );
    let r = raw.get(&format!("{CMS}?shardSelector=nonsense")).await;
    assert_eq!(r.status, 200, "{}", r.body);

    let mut w = raw
        .watch(&format!(
            "{CMS}?watch=true&resourceVersion={start}&labelSelector=app%3Dshard&shardSelector={half}"
        ))
        .await;
    let mut added = BTreeSet::new();
    collect(&mut w, |ev| {
        added.insert(
            ev["object"]["metadata"]["name"]
                .as_str()
                .unwrap()
                .to_owned(),
        );
        added.len() == all.len()
    })
    .await;
}

/// The same for custom resources: kube-apiserver shards every resource's LIST, built-in or
/// custom (the selector works on metadata only).
#[tokio::test]
async fn custom_resources_are_sharded() {
    let (server, raw) = sharded().await;
    server
        .register_crd(json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced",
                     "names": {"plural": "widgets", "kind": "Widget"},
                     "versions": [{"name": "v1", "served": true, "storage": true,
                                   "schema": {"openAPIV3Schema": {"type": "object"}}}]}
        }))
        .unwrap();
    let widgets = "/apis/example.com/v1/namespaces/default/widgets";
    for i in 0..12 {
        let r = raw
            .post(
                widgets,
                &json!({"apiVersion": "example.com/v1", "kind": "Widget",
                        "metadata": {"name": format!("w-{i:02}")}}),
            )
            .await;
        assert_eq!(r.status, 201, "{}", r.body);
    }
    let all = uids(&raw.get(widgets).await.body);
    let mut union = BTreeSet::new();
    for i in 0..3 {
        let r = nth(i, 3);
        let sel = range("uid", r);
        let page = raw
            .get(&format!("{widgets}?shardSelector={}", enc(&sel)))
            .await;
        assert_eq!(page.status, 200, "{}", page.body);
        assert_eq!(page.body["kind"], "WidgetList");
        assert_eq!(page.body["metadata"]["shardInfo"]["selector"], sel.as_str());
        let got: BTreeSet<String> = names(&page.body).into_iter().collect();
        assert_eq!(got, in_range(&all, r));
        union.extend(got);
    }
    assert_eq!(union.len(), all.len());
}

/// kinform's client over the wire: `ListParams::shard_selector` and
/// `WatchParams::shard_selector` are sent, and the answer's `shardInfo` is decoded onto
/// `ObjectList::shard_info` (the 1.35 `ListMeta` has no such field).
#[tokio::test]
async fn the_client_sends_the_selector_and_reads_shard_info() {
    let (server, raw) = sharded().await;
    let all = create_configmaps(&raw, 10).await;
    let api: Api<ConfigMap> = Api::namespaced(server.client().unwrap(), "default");
    let r = nth(0, 2);
    let sel = kinform_core::ShardSelector::nth(kinform_core::ShardField::Uid, 0, 2)
        .unwrap()
        .to_string();
    assert_eq!(sel, range("uid", r));
    let lp = ListParams {
        label_selector: Some("app=shard".into()),
        shard_selector: Some(sel.clone()),
        ..ListParams::default()
    };
    let list = api.list(&lp).await.unwrap();
    assert_eq!(
        list.shard_info.as_ref().map(|s| s.selector.as_str()),
        Some(sel.as_str())
    );
    let got: BTreeSet<String> = list
        .items
        .iter()
        .map(|cm| cm.metadata.name.clone().unwrap())
        .collect();
    assert_eq!(got, in_range(&all, r));
    let unsharded = api
        .list(&ListParams {
            label_selector: Some("app=shard".into()),
            ..ListParams::default()
        })
        .await
        .unwrap();
    assert_eq!(unsharded.shard_info, None);
    assert_eq!(unsharded.items.len(), all.len());

    use futures_util::StreamExt;
    let mut events = api
        .watch(&WatchParams {
            resource_version: unsharded.metadata.resource_version.clone(),
            shard_selector: Some(sel),
            ..WatchParams::default()
        })
        .await
        .unwrap();
    let more = create_configmaps_after(&raw, 10, 6).await;
    let want = in_range(&more, r);
    let mut seen = BTreeSet::new();
    tokio::time::timeout(Duration::from_secs(10), async {
        while seen.len() < want.len() {
            match events.next().await.expect("watch ended").unwrap() {
                kinform_core::WatchEvent::Added(cm) => {
                    seen.insert(cm.metadata.name.unwrap());
                }
                other => panic!("unexpected {other:?}"),
            }
        }
    })
    .await
    .expect("timed out");
    assert_eq!(seen, want);
}

/// Creates `n` more ConfigMaps from index `from`; `name -> uid` of those.
async fn create_configmaps_after(raw: &Raw, from: usize, n: usize) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for i in from..from + n {
        let r = raw
            .post(
                CMS,
                &configmap("default", &format!("cm-{i:02}"), json!({"app": "shard"})),
            )
            .await;
        assert_eq!(r.status, 201, "{}", r.body);
        out.insert(
            r.body["metadata"]["name"].as_str().unwrap().to_owned(),
            r.body["metadata"]["uid"].as_str().unwrap().to_owned(),
        );
    }
    out
}
