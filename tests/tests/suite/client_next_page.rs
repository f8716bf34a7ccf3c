//! A paged `decode::list` (the reflector's list) requests the next page while the current one decodes: every page
//! is still requested exactly once and in order, the answer is the same list, a page
//! requested ahead is used only for exactly that request, and an `Api` clone starts
//! without one. The server's request log says what the client sent.

use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use kinform::client::PostParams;
use kinform::client::decode::{self, ListHints};
use kinform::{Api, HasMetadata, ListParams};
use kinform_tests::env::{Env, cm, env};

const NS: &str = "default";

/// The LIST requests of configmaps in [`NS`] the server has received so far.
fn lists(server: &kinform::testing::TestApiServer) -> Vec<String> {
    let path = format!("GET /api/v1/namespaces/{NS}/configmaps");
    server
        .requests()
        .into_iter()
        .filter(|r| {
            r.strip_prefix(&path)
                .is_some_and(|q| q.is_empty() || q.starts_with('?'))
                && !r.contains("watch=")
        })
        .collect()
}

/// Waits (a hang guard, not a timing assertion) until the server has seen `n` lists.
async fn wait_for_lists(server: &kinform::testing::TestApiServer, n: usize) {
    for _ in 0..1000 {
        if lists(server).len() >= n {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the server saw {:?}, wanted {n} lists", lists(server));
}

fn page(limit: u32, token: Option<&str>) -> ListParams {
    ListParams {
        limit: Some(limit),
        continue_token: token.map(str::to_owned),
        ..ListParams::default()
    }
}

/// A server holding `n` ConfigMaps `cm-0000`, `cm-0001`, ... in [`NS`], and an `Api` on them.
async fn with_configmaps(n: usize) -> (Env, Api<ConfigMap>) {
    let e = env().await;
    let api: Api<ConfigMap> = Api::namespaced(e.client.clone(), NS);
    for i in 0..n {
        api.create(&PostParams::default(), &cm(&format!("cm-{i:04}"), &[]))
            .await
            .unwrap();
    }
    (e, api)
}

#[tokio::test]
async fn every_page_is_requested_once_and_in_order() {
    let (e, api) = with_configmaps(25).await;
    let hints = ListHints::default();

    let mut names = Vec::new();
    let mut token: Option<String> = None;
    let mut pages = 0;
    loop {
        let list = decode::list(&api, &page(10, token.as_deref()), &hints)
            .await
            .unwrap();
        pages += 1;
        names.extend(list.items.iter().map(|o| o.name().to_owned()));
        token = list.metadata.continue_.filter(|t| !t.is_empty());
        if token.is_none() {
            break;
        }
        // The next page was asked for before this call returned.
        wait_for_lists(&e.server, pages + 1).await;
    }
    assert_eq!(pages, 3);
    let expected: Vec<String> = (0..25).map(|i| format!("cm-{i:04}")).collect();
    assert_eq!(names, expected);

    // One request per page, each continue token once, in order: the pages requested ahead
    // were the ones used.
    let sent = lists(&e.server);
    assert_eq!(sent.len(), 3, "{sent:#?}");
    assert!(!sent[0].contains("continue="), "{sent:#?}");
    assert!(sent[1].contains("continue=") && sent[2].contains("continue="));
    assert_ne!(sent[1], sent[2]);
    assert!(
        sent[1..].iter().all(|r| !r.contains("resourceVersion")),
        "a continue token carries its snapshot: {sent:#?}"
    );
}

#[tokio::test]
async fn a_page_requested_ahead_serves_only_that_request() {
    let (e, api) = with_configmaps(12).await;
    let hints = ListHints::default();

    let first = decode::list(&api, &page(5, None), &hints).await.unwrap();
    let token = first.metadata.continue_.clone().expect("a second page");
    wait_for_lists(&e.server, 2).await;

    // Another request: the page requested ahead is dropped, this one is sent.
    let other = decode::list(&api, &page(20, None), &hints).await.unwrap();
    assert_eq!(other.items.len(), 12);
    assert_eq!(lists(&e.server).len(), 3);

    // The continued page is now requested again, by this call itself (and the third page
    // ahead of it).
    let second = decode::list(&api, &page(5, Some(&token)), &hints)
        .await
        .unwrap();
    let names: Vec<&str> = second.items.iter().map(|o| o.name()).collect();
    assert_eq!(
        names,
        ["cm-0005", "cm-0006", "cm-0007", "cm-0008", "cm-0009"]
    );
    wait_for_lists(&e.server, 5).await;
    let sent = lists(&e.server);
    assert_eq!(sent.len(), 5, "{sent:#?}");
    assert_eq!(sent[1], sent[3], "the second page, asked for twice");
    assert!(sent[4].contains("continue=") && sent[4] != sent[3]);

    // The page ahead belongs to one reflector's hints: fresh hints (another reflector, with
    // the same or a cloned Api) start with nothing requested ahead and send their own request.
    let third_token = second.metadata.continue_.clone().expect("a third page");
    let third = decode::list(
        &api.clone(),
        &page(5, Some(&third_token)),
        &ListHints::default(),
    )
    .await
    .unwrap();
    assert_eq!(third.items.len(), 2);
    let sent = lists(&e.server);
    assert_eq!(sent.len(), 6, "{sent:#?}");
    assert_eq!(sent[4], sent[5]);
}

#[tokio::test]
async fn an_unpaged_list_requests_nothing_ahead() {
    let (e, api) = with_configmaps(3).await;
    let list = decode::list(&api, &ListParams::default(), &ListHints::default())
        .await
        .unwrap();
    assert_eq!(list.items.len(), 3);
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(lists(&e.server).len(), 1);
}
