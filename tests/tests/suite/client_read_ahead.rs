//! What the reflector's decoding reads ahead of a slow consumer is bounded by
//! `Config::read_ahead_bytes`, over real HTTP: a watch body (`decode::watch`) and the next
//! page of a paged list (`decode::list`) stop being read at the budget, so the server's
//! writes wait instead of the client's memory growing, and nothing is lost once the consumer
//! reads on. A byte-counting proxy between client and server says how much the client has
//! read; each test runs once with a budget larger than the data (the client reads it all
//! ahead: the proxy sees it) and once with a small one.

use std::time::Duration;

use futures_util::StreamExt as _;
use k8s_openapi::api::core::v1::ConfigMap;
use kinform::client::decode::{self, ListHints};
use kinform::testing::TestApiServer;
use kinform::{Api, Client, HasMetadata, ListParams, WatchEvent, WatchParams};
use kinform_tests::proxy::Proxy;
use serde_json::json;

const NS: &str = "default";
/// Each ConfigMap carries this much data, so a few of them are megabytes of JSON.
const OBJECT_BYTES: usize = 256 * 1024;
const MIB: u64 = 1 << 20;
/// The small budget.
const SMALL: usize = 64 * 1024;
/// How long the proxy must deliver nothing for the client to count as stopped.
const QUIET: Duration = Duration::from_millis(300);
/// What the sockets between proxy and client hold beyond what the client has read: the
/// proxy's send buffer and the client's receive buffer, which Linux grows only as fast as
/// the client reads (so a client that stopped early keeps a small one).
const SOCKET_SLACK: u64 = 6 * MIB;

/// Creates `n` ConfigMaps of [`OBJECT_BYTES`] each in [`NS`], in process.
fn create_big(server: &TestApiServer, prefix: &str, n: usize) {
    let data = "x".repeat(OBJECT_BYTES);
    for i in 0..n {
        server
            .create_object(json!({
                "apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": format!("{prefix}-{i:04}"), "namespace": NS},
                "data": {"d": data},
            }))
            .expect("create");
    }
}

/// A client through `proxy` reading ahead at most `budget` bytes.
fn client_through(server: &TestApiServer, proxy: &Proxy, budget: usize) -> Client {
    let mut config = server.client_config();
    config.cluster_url = proxy.url().parse().unwrap();
    config.read_ahead_bytes = budget;
    Client::new(config).expect("client")
}

/// Opens a watch from before `n` big ConfigMaps, does not read it until the proxy has
/// delivered nothing for [`QUIET`], then reads every event: the bytes delivered while the
/// consumer did not read, and the names received.
async fn watch_without_reading(budget: usize, n: usize) -> (u64, Vec<String>) {
    let server = TestApiServer::start().await.expect("server");
    let proxy = Proxy::start(server.addr()).await;
    let api: Api<ConfigMap> = Api::namespaced(client_through(&server, &proxy, budget), NS);
    let from = server.resource_version().to_string();
    create_big(&server, "w", n);
    let params = WatchParams {
        resource_version: Some(from),
        ..WatchParams::default()
    };
    let mut batches = decode::watch(&api, &params, &ListHints::default())
        .await
        .expect("watch");
    let delivered = proxy.settled(QUIET).await;
    let mut names = Vec::new();
    while names.len() < n {
        let batch = tokio::time::timeout(Duration::from_secs(30), batches.next())
            .await
            .expect("the events come once read")
            .expect("the watch goes on");
        for event in batch {
            match event.expect("an event") {
                WatchEvent::Added(o) => names.push(o.name().to_owned()),
                other => panic!("unexpected event {other:?}"),
            }
        }
    }
    (delivered, names)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watch_is_read_at_most_the_budget_ahead_of_a_slow_consumer() {
    let n = 96; // 24 MiB of events
    let total = (n * OBJECT_BYTES) as u64;

    // A budget above the data: the client reads every event ahead of its consumer.
    let (delivered, names) = watch_without_reading(64 << 20, n).await;
    assert!(
        delivered > total * 9 / 10,
        "with a large budget the client reads ahead: {delivered} of {total} bytes"
    );
    assert_eq!(names.len(), n);

    // A small budget: reading stops, the rest waits in the server until it is consumed.
    let (delivered, names) = watch_without_reading(SMALL, n).await;
    assert!(
        delivered < SOCKET_SLACK + 2 * MIB,
        "with a {SMALL}-byte budget the client read {delivered} of {total} bytes ahead"
    );
    let expected: Vec<String> = (0..n).map(|i| format!("w-{i:04}")).collect();
    assert_eq!(names, expected, "every event, in order, once consumed");
}

/// Lists the first page of `per_page` big ConfigMaps (of `2 * per_page`), then waits until
/// the proxy delivers nothing for [`QUIET`] before asking for the second page (requested
/// ahead meanwhile): the bytes delivered beyond the first page, and the names of both pages.
async fn second_page_without_asking(budget: usize, per_page: usize) -> (u64, Vec<String>) {
    let server = TestApiServer::start().await.expect("server");
    create_big(&server, "p", 2 * per_page);
    let proxy = Proxy::start(server.addr()).await;
    let api: Api<ConfigMap> = Api::namespaced(client_through(&server, &proxy, budget), NS);
    let page = |token: Option<String>| ListParams {
        limit: Some(per_page as u32),
        continue_token: token,
        ..ListParams::default()
    };
    // The first page's size on the wire, read by the user verb (nothing is read ahead).
    let first_alone = api.list(&page(None)).await.expect("list").items.len();
    assert_eq!(first_alone, per_page);
    let first_bytes = proxy.delivered();

    let hints = ListHints::default();
    let first = decode::list(&api, &page(None), &hints)
        .await
        .expect("page 1");
    // The user verb's page, this page, and what was read of the next one.
    let ahead = proxy.settled(QUIET).await.saturating_sub(2 * first_bytes);
    let second = decode::list(&api, &page(first.metadata.continue_.clone()), &hints)
        .await
        .expect("page 2");
    let names = first
        .items
        .iter()
        .chain(&second.items)
        .map(|o| o.name().to_owned())
        .collect();
    (ahead, names)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_next_page_is_read_at_most_the_budget_ahead() {
    let per_page = 48; // 12 MiB pages
    let page_bytes = (per_page * OBJECT_BYTES) as u64;
    let expected: Vec<String> = (0..2 * per_page).map(|i| format!("p-{i:04}")).collect();

    let (ahead, names) = second_page_without_asking(64 << 20, per_page).await;
    assert!(
        ahead > page_bytes * 9 / 10,
        "with a large budget the second page is read ahead: {ahead} of {page_bytes} bytes"
    );
    assert_eq!(names, expected);

    let (ahead, names) = second_page_without_asking(SMALL, per_page).await;
    assert!(
        ahead < SOCKET_SLACK + 2 * MIB,
        "with a {SMALL}-byte budget {ahead} bytes of the second page were read ahead"
    );
    assert_eq!(names, expected, "both pages whole once asked for");
}
