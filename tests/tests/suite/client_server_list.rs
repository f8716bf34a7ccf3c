//! LIST through the client: label selectors (=, ==, !=, in, notin, exists, !exists), field
//! selectors (metadata.name, metadata.namespace, =, !=), pagination with limit/continue and
//! remainingItemCount, an expired continue token as 410, and the resourceVersion rules
//! ("", "0", exact with resourceVersionMatch NotOlderThan/Exact).

use k8s_openapi::api::core::v1::ConfigMap;
use kinform::client::{PostParams, ResourceVersionMatch};
use kinform::testing::TestApiServer;
use kinform::{Api, HasMetadata, ListParams};
use kinform_tests::env::{cm, env, env_with};

async fn names(api: &Api<ConfigMap>, lp: ListParams) -> Vec<String> {
    let mut n: Vec<String> = api
        .list(&lp)
        .await
        .unwrap()
        .items
        .iter()
        .map(|o| o.name().to_owned())
        .collect();
    n.sort();
    n
}

fn labels(sel: &str) -> ListParams {
    ListParams {
        label_selector: Some(sel.into()),
        ..ListParams::default()
    }
}

fn fields(sel: &str) -> ListParams {
    ListParams {
        field_selector: Some(sel.into()),
        ..ListParams::default()
    }
}

#[tokio::test]
async fn label_selectors() {
    let e = env().await;
    let api: Api<ConfigMap> = Api::namespaced(e.client.clone(), "default");
    for (n, l) in [
        ("a", &[("tier", "web"), ("env", "prod")][..]),
        ("b", &[("tier", "db"), ("env", "prod")][..]),
        ("c", &[("tier", "cache")][..]),
        ("d", &[][..]),
    ] {
        api.create(&PostParams::default(), &cm(n, l)).await.unwrap();
    }
    assert_eq!(names(&api, labels("tier=web")).await, ["a"]);
    assert_eq!(names(&api, labels("tier==db")).await, ["b"]);
    assert_eq!(names(&api, labels("tier!=web")).await, ["b", "c", "d"]);
    assert_eq!(names(&api, labels("tier in (web,cache)")).await, ["a", "c"]);
    assert_eq!(
        names(&api, labels("tier notin (web,cache)")).await,
        ["b", "d"]
    );
    assert_eq!(names(&api, labels("env")).await, ["a", "b"]);
    assert_eq!(names(&api, labels("!env")).await, ["c", "d"]);
    assert_eq!(names(&api, labels("env=prod,tier!=db")).await, ["a"]);
    // Pages of a selected list: no remainingItemCount (the server cannot count cheaply).
    let page = api
        .list(&ListParams {
            limit: Some(1),
            ..labels("env=prod")
        })
        .await
        .unwrap();
    assert_eq!(page.items.len(), 1);
    assert_eq!(page.metadata.remaining_item_count, None);
    let rest = api
        .list(&ListParams {
            limit: Some(1),
            continue_token: page.metadata.continue_.clone(),
            ..labels("env=prod")
        })
        .await
        .unwrap();
    assert_eq!(rest.items.len(), 1);
    assert_ne!(rest.items[0].name(), page.items[0].name());
    let err = api.list(&labels("tier in web")).await.unwrap_err();
    assert_eq!(err.code(), Some(400), "{err}");
}

#[tokio::test]
async fn field_selectors() {
    let e = env().await;
    e.server.create_namespace("other").unwrap();
    let default: Api<ConfigMap> = Api::namespaced(e.client.clone(), "default");
    let other: Api<ConfigMap> = Api::namespaced(e.client.clone(), "other");
    let all: Api<ConfigMap> = Api::all(e.client.clone());
    for n in ["x", "y"] {
        default
            .create(&PostParams::default(), &cm(n, &[]))
            .await
            .unwrap();
    }
    other
        .create(&PostParams::default(), &cm("x", &[]))
        .await
        .unwrap();

    assert_eq!(names(&default, fields("metadata.name=x")).await, ["x"]);
    assert_eq!(names(&default, fields("metadata.name==y")).await, ["y"]);
    assert_eq!(names(&default, fields("metadata.name!=x")).await, ["y"]);
    assert_eq!(names(&all, fields("metadata.name=x")).await, ["x", "x"]);
    assert_eq!(names(&all, fields("metadata.namespace=other")).await, ["x"]);
    assert_eq!(
        names(&all, fields("metadata.namespace!=other")).await,
        ["x", "y"]
    );
    assert_eq!(
        names(&all, fields("metadata.namespace=default,metadata.name!=x")).await,
        ["y"]
    );
    // An unsupported field is a 400, as on the real server.
    let err = all.list(&fields("data.k=v")).await.unwrap_err();
    assert_eq!(err.code(), Some(400), "{err}");
}

#[tokio::test]
async fn pagination_with_continue_and_remaining_item_count() {
    let e = env().await;
    let api: Api<ConfigMap> = Api::namespaced(e.client.clone(), "default");
    for i in 0..7 {
        api.create(&PostParams::default(), &cm(&format!("cm-{i}"), &[]))
            .await
            .unwrap();
    }
    let mut lp = ListParams {
        limit: Some(3),
        ..ListParams::default()
    };
    let mut seen = Vec::new();
    let mut remaining = Vec::new();
    let mut rvs = Vec::new();
    loop {
        let page = api.list(&lp).await.unwrap();
        assert!(page.items.len() <= 3);
        seen.extend(page.items.iter().map(|o| o.name().to_owned()));
        remaining.push(page.metadata.remaining_item_count);
        rvs.push(page.metadata.resource_version.clone());
        // A write between pages does not show up: pages are one snapshot.
        api.create(
            &PostParams::default(),
            &cm(&format!("late-{}", seen.len()), &[]),
        )
        .await
        .unwrap();
        match page.metadata.continue_.filter(|c| !c.is_empty()) {
            Some(c) => lp.continue_token = Some(c),
            None => break,
        }
    }
    let want: Vec<String> = (0..7).map(|i| format!("cm-{i}")).collect();
    assert_eq!(seen, want);
    assert_eq!(remaining, [Some(4), Some(1), None]);
    assert!(rvs.windows(2).all(|w| w[0] == w[1]), "{rvs:?}");
}

#[tokio::test]
async fn expired_continue_token_is_gone() {
    let e = env().await;
    let api: Api<ConfigMap> = Api::namespaced(e.client.clone(), "default");
    for i in 0..4 {
        api.create(&PostParams::default(), &cm(&format!("cm-{i}"), &[]))
            .await
            .unwrap();
    }
    let first = api
        .list(&ListParams {
            limit: Some(2),
            ..ListParams::default()
        })
        .await
        .unwrap();
    let token = first.metadata.continue_.clone().unwrap();
    api.create(&PostParams::default(), &cm("after", &[]))
        .await
        .unwrap();
    e.server.faults().compact();
    let err = api
        .list(&ListParams {
            limit: Some(2),
            continue_token: Some(token),
            ..ListParams::default()
        })
        .await
        .unwrap_err();
    assert!(err.is_gone(), "{err}");
    assert_eq!(err.code(), Some(410));
    // The Status carries a fresh (inconsistent) continue token, as the real server's does.
    let fresh = err.status().and_then(|s| s.metadata.continue_.clone());
    assert!(fresh.is_some(), "{:?}", err.status());
    // A new list works.
    assert_eq!(
        api.list(&ListParams::default()).await.unwrap().items.len(),
        5
    );
}

#[tokio::test]
async fn resource_version_rules() {
    let e = env_with(TestApiServer::builder(), |c| c.max_retries = 0).await;
    let api: Api<ConfigMap> = Api::namespaced(e.client.clone(), "default");
    let a = api
        .create(&PostParams::default(), &cm("a", &[]))
        .await
        .unwrap();
    let rv_a = a.resource_version().to_owned();
    api.create(&PostParams::default(), &cm("b", &[]))
        .await
        .unwrap();
    let now = e.server.resource_version().to_string();

    // "" (unset): a consistent read at the latest version.
    let list = api.list(&ListParams::default()).await.unwrap();
    assert_eq!(
        list.metadata.resource_version.as_deref(),
        Some(now.as_str())
    );
    assert_eq!(list.items.len(), 2);

    // "0": any cached state; this server's cache is always current.
    let lp0 = ListParams {
        resource_version: Some("0".into()),
        ..ListParams::default()
    };
    assert_eq!(api.list(&lp0).await.unwrap().items.len(), 2);

    // Exact: the state at that version, which did not have `b` yet.
    let exact = api
        .list(&ListParams {
            resource_version: Some(rv_a.clone()),
            resource_version_match: Some(ResourceVersionMatch::Exact),
            ..ListParams::default()
        })
        .await
        .unwrap();
    assert_eq!(
        exact.metadata.resource_version.as_deref(),
        Some(rv_a.as_str())
    );
    let exact_names: Vec<_> = exact.items.iter().map(|o| o.name().to_owned()).collect();
    assert_eq!(exact_names, ["a"]);

    // NotOlderThan an older version: at least as new, so both objects.
    let not_older = api
        .list(&ListParams {
            resource_version: Some(rv_a.clone()),
            resource_version_match: Some(ResourceVersionMatch::NotOlderThan),
            ..ListParams::default()
        })
        .await
        .unwrap();
    assert_eq!(not_older.items.len(), 2);
    let got: u64 = not_older
        .metadata
        .resource_version
        .unwrap()
        .parse()
        .unwrap();
    assert!(got >= rv_a.parse::<u64>().unwrap());

    // NotOlderThan a future version: "Too large resource version", typed.
    let future = (e.server.resource_version() + 100).to_string();
    let err = api
        .list(&ListParams {
            resource_version: Some(future),
            resource_version_match: Some(ResourceVersionMatch::NotOlderThan),
            ..ListParams::default()
        })
        .await
        .unwrap_err();
    assert!(err.is_too_large_resource_version(), "{err}");

    // Exact at a compacted version: 410.
    api.create(&PostParams::default(), &cm("c", &[]))
        .await
        .unwrap();
    e.server.faults().compact();
    let err = api
        .list(&ListParams {
            resource_version: Some(rv_a),
            resource_version_match: Some(ResourceVersionMatch::Exact),
            ..ListParams::default()
        })
        .await
        .unwrap_err();
    assert!(err.is_gone(), "{err}");
}

#[tokio::test]
async fn forbidden_option_combinations_are_typed_422s() {
    let e = env().await;
    let api: Api<ConfigMap> = Api::namespaced(e.client.clone(), "default");
    let cases = [
        ListParams {
            resource_version_match: Some(ResourceVersionMatch::Exact),
            ..ListParams::default()
        },
        ListParams {
            resource_version: Some("0".into()),
            resource_version_match: Some(ResourceVersionMatch::Exact),
            ..ListParams::default()
        },
    ];
    for lp in cases {
        let err = api.list(&lp).await.unwrap_err();
        assert_eq!(err.code(), Some(422), "{lp:?}: {err}");
        assert!(err.to_string().contains("resourceVersionMatch"), "{err}");
    }
    let watches = [
        kinform::WatchParams {
            resource_version: Some("1".into()),
            resource_version_match: Some(ResourceVersionMatch::NotOlderThan),
            ..kinform::WatchParams::default()
        },
        kinform::WatchParams {
            send_initial_events: true,
            resource_version_match: Some(ResourceVersionMatch::NotOlderThan),
            allow_watch_bookmarks: false,
            ..kinform::WatchParams::default()
        },
    ];
    for wp in watches {
        let Err(err) = api.watch(&wp).await else {
            panic!("{wp:?} must be refused");
        };
        assert_eq!(err.code(), Some(422), "{wp:?}: {err}");
    }
}

#[tokio::test]
async fn realistic_preloaded_pods_decode_page_by_page() {
    let e = env_with(TestApiServer::builder().pods(300).namespaces(3), |_| {}).await;
    let all: Api<k8s_openapi::api::core::v1::Pod> = Api::all(e.client.clone());
    let mut lp = ListParams {
        limit: Some(120),
        ..ListParams::default()
    };
    let mut total = 0;
    let mut pages = 0;
    loop {
        let page = all.list(&lp).await.unwrap();
        pages += 1;
        for p in &page.items {
            // The ~5 KB realistic pods decode fully, managedFields included.
            assert!(p.spec.as_ref().is_some_and(|s| !s.containers.is_empty()));
            assert!(
                p.metadata
                    .managed_fields
                    .as_ref()
                    .is_some_and(|m| !m.is_empty())
            );
        }
        total += page.items.len();
        match page.metadata.continue_ {
            Some(c) if !c.is_empty() => lp.continue_token = Some(c),
            _ => break,
        }
    }
    assert_eq!((total, pages), (300, 3));
    let one_ns: Api<k8s_openapi::api::core::v1::Pod> = Api::namespaced(e.client.clone(), "ns-1");
    assert_eq!(
        one_ns
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .len(),
        100
    );
}
