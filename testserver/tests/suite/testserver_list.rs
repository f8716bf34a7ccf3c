//! LIST semantics of TestApiServer over raw HTTP: resourceVersion rules, pagination with
//! consistent snapshots, 410 on compacted continue tokens, selectors, response forms.

use kinform_tests::http::{Raw, configmap, names, pod, rv};
use kinform_testserver::TestApiServer;
use serde_json::json;

async fn server_with_pods(n: usize) -> (TestApiServer, Raw) {
    let server = TestApiServer::start().await.unwrap();
    let raw = Raw::new(&server.url());
    for i in 0..n {
        let labels = json!({"app": if i % 2 == 0 { "web" } else { "db" }, "idx": i.to_string()});
        let r = raw
            .post(
                "/api/v1/namespaces/default/pods",
                &pod("default", &format!("p{i:02}"), labels),
            )
            .await;
        assert_eq!(r.status, 201, "{}", r.body);
    }
    (server, raw)
}

#[tokio::test]
async fn pagination_is_a_consistent_snapshot() {
    let (server, raw) = server_with_pods(5).await;
    let first = raw.get("/api/v1/namespaces/default/pods?limit=2").await;
    assert_eq!(first.status, 200);
    assert_eq!(first.body["kind"], "PodList");
    assert_eq!(names(&first.body), ["p00", "p01"]);
    assert_eq!(first.body["metadata"]["remainingItemCount"], 3);
    let list_rv = rv(&first.body);
    // Changes after the first page must not show in later pages.
    raw.delete("/api/v1/namespaces/default/pods/p03").await;
    raw.post(
        "/api/v1/namespaces/default/pods",
        &pod("default", "p02a", json!({})),
    )
    .await;
    raw.patch(
        "/api/v1/namespaces/default/pods/p04",
        "application/merge-patch+json",
        &json!({"metadata": {"labels": {"changed": "yes"}}}),
    )
    .await;
    let mut seen = names(&first.body);
    let mut token = first.body["metadata"]["continue"]
        .as_str()
        .unwrap()
        .to_owned();
    loop {
        let page = raw
            .get(&format!(
                "/api/v1/namespaces/default/pods?limit=2&continue={token}"
            ))
            .await;
        assert_eq!(page.status, 200, "{}", page.body);
        assert_eq!(rv(&page.body), list_rv);
        for item in page.body["items"].as_array().unwrap() {
            assert!(
                item["metadata"]["labels"]["changed"].is_null(),
                "page shows a later state"
            );
        }
        seen.extend(names(&page.body));
        match page.body["metadata"]["continue"].as_str() {
            Some(t) => {
                // The snapshot's count, not the changed collection's.
                assert_eq!(page.body["metadata"]["remainingItemCount"], 1);
                token = t.to_owned();
            }
            None => {
                assert!(page.body["metadata"]["remainingItemCount"].is_null());
                break;
            }
        }
    }
    assert_eq!(seen, ["p00", "p01", "p02", "p03", "p04"]);
    // A fresh list sees the changes.
    let now = raw.get("/api/v1/namespaces/default/pods").await;
    assert_eq!(names(&now.body), ["p00", "p01", "p02", "p02a", "p04"]);
    assert!(rv(&now.body) > list_rv);
    server.shutdown().await;
}

#[tokio::test]
async fn compacted_continue_token_is_410_with_a_fresh_token() {
    let (server, raw) = server_with_pods(3).await;
    let first = raw.get("/api/v1/pods?limit=1").await;
    let token = first.body["metadata"]["continue"]
        .as_str()
        .unwrap()
        .to_owned();
    raw.post(
        "/api/v1/namespaces/default/pods",
        &pod("default", "q-later", json!({})),
    )
    .await;
    server.faults().compact();
    let r = raw
        .get(&format!("/api/v1/pods?limit=1&continue={token}"))
        .await;
    assert_eq!(r.status, 410);
    assert_eq!(r.body["kind"], "Status");
    assert_eq!(r.body["reason"], "Expired");
    let fresh = r.body["metadata"]["continue"]
        .as_str()
        .expect("inconsistent continue token");
    let rest = raw.get(&format!("/api/v1/pods?continue={fresh}")).await;
    assert_eq!(names(&rest.body), ["p01", "p02", "q-later"]);
    let bad = raw.get("/api/v1/pods?continue=not-a-token").await;
    assert_eq!(bad.status, 400);
    let with_rv = raw
        .get(&format!("/api/v1/pods?continue={token}&resourceVersion=5"))
        .await;
    assert_eq!(with_rv.status, 400);
    server.shutdown().await;
}

#[tokio::test]
async fn resource_version_rules() {
    let (server, raw) = server_with_pods(2).await;
    let before = rv(&raw.get("/api/v1/pods").await.body);
    raw.delete("/api/v1/namespaces/default/pods/p00").await;
    let current = raw.get("/api/v1/pods").await;
    assert_eq!(names(&current.body), ["p01"]);
    // Exact reads the past.
    let exact = raw
        .get(&format!(
            "/api/v1/pods?resourceVersion={before}&resourceVersionMatch=Exact"
        ))
        .await;
    assert_eq!(exact.status, 200);
    assert_eq!(names(&exact.body), ["p00", "p01"]);
    assert_eq!(rv(&exact.body), before);
    // NotOlderThan and "0" serve the latest state.
    for q in [
        format!("resourceVersion={before}&resourceVersionMatch=NotOlderThan"),
        format!("resourceVersion={before}"),
        "resourceVersion=0".to_owned(),
        "resourceVersion=0&resourceVersionMatch=NotOlderThan".to_owned(),
    ] {
        let r = raw.get(&format!("/api/v1/pods?{q}")).await;
        assert_eq!(names(&r.body), ["p01"], "{q}");
    }
    // Too new: 504 Timeout "Too large resource version".
    let future = raw.get("/api/v1/pods?resourceVersion=999999").await;
    assert_eq!(future.status, 504);
    assert_eq!(
        future.body["details"]["causes"][0]["reason"],
        "ResourceVersionTooLarge"
    );
    // Invalid combinations: 422 / 400.
    assert_eq!(
        raw.get("/api/v1/pods?resourceVersionMatch=Exact")
            .await
            .status,
        422
    );
    assert_eq!(
        raw.get("/api/v1/pods?resourceVersion=0&resourceVersionMatch=Exact")
            .await
            .status,
        422
    );
    assert_eq!(
        raw.get("/api/v1/pods?resourceVersion=abc").await.status,
        400
    );
    // Exact beyond the history window: 410.
    server.faults().compact();
    let gone = raw
        .get(&format!(
            "/api/v1/pods?resourceVersion={before}&resourceVersionMatch=Exact"
        ))
        .await;
    assert_eq!(gone.status, 410);
    assert_eq!(gone.body["reason"], "Expired");
    server.shutdown().await;
}

#[tokio::test]
async fn label_and_field_selectors() {
    let (server, raw) = server_with_pods(6).await;
    server.create_namespace("other").unwrap();
    raw.post(
        "/api/v1/namespaces/other/pods",
        &pod("other", "x", json!({"app": "web"})),
    )
    .await;
    let q = |s: &str| format!("/api/v1/pods?labelSelector={}", percent(s));
    let cases: &[(&str, &[&str])] = &[
        ("app=web", &["p00", "p02", "p04", "x"]),
        ("app==db", &["p01", "p03", "p05"]),
        ("app!=web", &["p01", "p03", "p05"]),
        ("idx in (1,2)", &["p01", "p02"]),
        ("idx notin (0,1,2,3,4)", &["p05", "x"]),
        ("idx", &["p00", "p01", "p02", "p03", "p04", "p05"]),
        ("!idx", &["x"]),
        ("app=web,idx", &["p00", "p02", "p04"]),
    ];
    for (sel, want) in cases {
        let r = raw.get(&q(sel)).await;
        assert_eq!(r.status, 200, "{sel}: {}", r.body);
        assert_eq!(names(&r.body), *want, "{sel}");
    }
    let f = raw
        .get(&format!(
            "/api/v1/pods?fieldSelector={}",
            percent("metadata.namespace=other")
        ))
        .await;
    assert_eq!(names(&f.body), ["x"]);
    let f = raw
        .get(&format!(
            "/api/v1/namespaces/default/pods?fieldSelector={}",
            percent("metadata.name!=p00,status.phase!=Running")
        ))
        .await;
    assert_eq!(names(&f.body).len(), 5);
    assert_eq!(
        raw.get(&format!(
            "/api/v1/pods?fieldSelector={}",
            percent("spec.bogus=1")
        ))
        .await
        .status,
        400
    );
    assert_eq!(
        raw.get(&format!("/api/v1/pods?labelSelector={}", percent("a in b")))
            .await
            .status,
        400
    );
    // Paging with a selector: no remainingItemCount, all matches reached.
    let p = raw.get(&format!("{}&limit=1", q("app=db"))).await;
    assert!(p.body["metadata"]["remainingItemCount"].is_null());
    assert!(p.body["metadata"]["continue"].is_string());
    server.shutdown().await;
}

#[tokio::test]
async fn table_and_metadata_forms() {
    let (server, raw) = server_with_pods(2).await;
    raw.post(
        "/api/v1/namespaces/default/configmaps",
        &configmap("default", "cm", json!({})),
    )
    .await;
    let t = raw
        .request_with(
            "GET",
            "/api/v1/pods?limit=1",
            None,
            "application/json",
            Some("application/json;as=Table;v=v1;g=meta.k8s.io,application/json"),
        )
        .await;
    assert_eq!(t.body["kind"], "Table");
    assert_eq!(t.body["columnDefinitions"][0]["name"], "Name");
    assert_eq!(t.body["rows"][0]["cells"][0], "p00");
    assert_eq!(t.body["rows"][0]["object"]["kind"], "PartialObjectMetadata");
    assert!(t.body["metadata"]["continue"].is_string());
    let m = raw
        .request_with(
            "GET",
            "/api/v1/namespaces/default/configmaps",
            None,
            "application/json",
            Some("application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"),
        )
        .await;
    assert_eq!(m.body["kind"], "PartialObjectMetadataList");
    assert_eq!(m.body["items"][0]["metadata"]["name"], "cm");
    assert!(m.body["items"][0]["data"].is_null());
    let one = raw
        .request_with(
            "GET",
            "/api/v1/namespaces/default/configmaps/cm",
            None,
            "application/json",
            Some("application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"),
        )
        .await;
    assert_eq!(one.body["kind"], "PartialObjectMetadata");
    server.shutdown().await;
}

#[tokio::test]
async fn preloaded_pods_list_in_pages() {
    let server = TestApiServer::builder()
        .pods(250)
        .namespaces(3)
        .start()
        .await
        .unwrap();
    let raw = Raw::new(&server.url());
    let mut total = 0;
    let mut token = String::new();
    loop {
        let r = raw
            .get(&format!("/api/v1/pods?limit=100&continue={token}"))
            .await;
        assert_eq!(r.status, 200);
        total += names(&r.body).len();
        let item = &r.body["items"][0];
        assert!(item["metadata"]["managedFields"].is_array());
        match r.body["metadata"]["continue"].as_str() {
            Some(t) => token = t.to_owned(),
            None => break,
        }
    }
    assert_eq!(total, 250);
    let ns1 = raw.get("/api/v1/namespaces/ns-1/pods").await;
    assert_eq!(names(&ns1.body).len(), 83);
    server.shutdown().await;
}

fn percent(s: &str) -> String {
    percent_encoding::utf8_percent_encode(s, percent_encoding::NON_ALPHANUMERIC).to_string()
}

/// kube-apiserver's `remainingItemCount` on every page of an unchanged collection: the
/// objects after the page within the list's scope (a namespace, or all of them), whatever
/// lies in namespaces before or after it.
#[tokio::test]
async fn remaining_item_count_counts_the_rest_of_the_scope_on_every_page() {
    let (_server, raw) = server_with_pods(5).await;
    for ns in ["a-first", "other"] {
        let namespace = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}});
        assert_eq!(raw.post("/api/v1/namespaces", &namespace).await.status, 201);
    }
    for (ns, name) in [("a-first", "x0"), ("a-first", "x1"), ("other", "y0")] {
        let r = raw
            .post(
                &format!("/api/v1/namespaces/{ns}/pods"),
                &pod(ns, name, json!({})),
            )
            .await;
        assert_eq!(r.status, 201, "{}", r.body);
    }
    for (path, remaining) in [
        ("/api/v1/namespaces/default/pods?limit=2", vec![3, 1]),
        ("/api/v1/pods?limit=3", vec![5, 2]),
    ] {
        let mut page = raw.get(path).await;
        let mut counts = Vec::new();
        while let Some(token) = page.body["metadata"]["continue"].as_str() {
            counts.push(
                page.body["metadata"]["remainingItemCount"]
                    .as_u64()
                    .unwrap(),
            );
            page = raw.get(&format!("{path}&continue={token}")).await;
            assert_eq!(page.status, 200, "{}", page.body);
        }
        assert!(page.body["metadata"]["remainingItemCount"].is_null());
        assert_eq!(counts, remaining, "{path}");
    }
    // Two lists paged at once whose pages end at the same key: each page counts the rest of
    // its own scope (the server keeps each list's count from page to page).
    let remaining =
        |page: &kinform_tests::http::Resp| page.body["metadata"]["remainingItemCount"].as_u64();
    let token = |page: &kinform_tests::http::Resp| {
        page.body["metadata"]["continue"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let in_ns = raw.get("/api/v1/namespaces/default/pods?limit=2").await;
    let all = raw.get("/api/v1/pods?limit=4").await;
    assert_eq!(names(&in_ns.body).last(), names(&all.body).last());
    assert_eq!((remaining(&in_ns), remaining(&all)), (Some(3), Some(4)));
    let in_ns = raw
        .get(&format!(
            "/api/v1/namespaces/default/pods?limit=2&continue={}",
            token(&in_ns)
        ))
        .await;
    let all = raw
        .get(&format!("/api/v1/pods?limit=2&continue={}", token(&all)))
        .await;
    assert_eq!(names(&in_ns.body), ["p02", "p03"]);
    assert_eq!(names(&all.body), ["p02", "p03"]);
    assert_eq!((remaining(&in_ns), remaining(&all)), (Some(1), Some(2)));
}
