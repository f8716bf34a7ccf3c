//! The client over real HTTP on loopback: every verb's request shape, errors keeping the
//! server's Status, streaming watch decode, bad input, gzip, retries (which answers are
//! retried, and which never are), rate limits and the received-bytes counter.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use bytes::Bytes;
use futures_util::StreamExt as _;
use k8s_openapi::api::core::v1::Pod;
use kinform_client::{
    ACCEPT_PARTIAL_METADATA_LIST, DeleteParams, Either, Patch, PatchParams, PostParams,
    Preconditions, PropagationPolicy,
};
use kinform_client::{
    Api, Client, Config, DynamicObject, Error, ListParams, PartialObjectMetadata, WatchEvent,
    WatchParams,
};
use kinform_core::{ApiResource, Scope};
use kinform_tests::mock::{Reply, pod_json, serve, status_json};

fn client(url: &str) -> Client {
    let mut config = Config::new(url.parse().unwrap());
    config.default_namespace = "default".into();
    Client::new(config).unwrap()
}

#[tokio::test]
async fn get_list_create_replace_patch_delete() {
    let server = serve(
        None,
        false,
        Arc::new(|req| {
            let path = req.uri.path();
            match (req.method.as_str(), path) {
                ("GET", "/api/v1/namespaces/default/pods/web") => Reply::json(200, pod_json("web", "5")),
                ("GET", "/api/v1/namespaces/default/pods/gone") => {
                    Reply::json(404, status_json(404, "NotFound", "pods \"gone\" not found"))
                }
                ("GET", "/api/v1/namespaces/default/pods") => Reply::json(
                    200,
                    serde_json::json!({"kind":"PodList","apiVersion":"v1",
                        "metadata":{"resourceVersion":"9","continue":"tok"},
                        "items":[pod_json("a","7"), pod_json("b","8")]}),
                ),
                ("POST", "/api/v1/namespaces/default/pods") => {
                    let mut obj: serde_json::Value = serde_json::from_slice(&req.body).unwrap();
                    obj["metadata"]["resourceVersion"] = "10".into();
                    Reply::json(201, obj)
                }
                ("PUT", "/api/v1/namespaces/default/pods/web") => {
                    Reply::json(409, status_json(409, "Conflict", "the object has been modified"))
                }
                ("PATCH", "/api/v1/namespaces/default/pods/web") => Reply::json(200, pod_json("web", "11")),
                ("PATCH", "/api/v1/namespaces/default/pods/web/status") => Reply::json(200, pod_json("web", "12")),
                ("DELETE", "/api/v1/namespaces/default/pods/web") => Reply::json(200, pod_json("web", "13")),
                ("DELETE", "/api/v1/namespaces/default/pods/now") => Reply::json(
                    200,
                    serde_json::json!({"kind":"Status","apiVersion":"v1","status":"Success","details":{"name":"now"}}),
                ),
                ("DELETE", "/api/v1/namespaces/default/pods") => Reply::json(
                    200,
                    serde_json::json!({"kind":"PodList","apiVersion":"v1","metadata":{},"items":[pod_json("a","7")]}),
                ),
                _ => Reply::json(404, status_json(404, "NotFound", "no route")),
            }
        }),
    )
    .await;
    let pods: Api<Pod> = Api::default_namespaced(client(&server.url));

    let web = pods.get("web").await.unwrap();
    assert_eq!(web.metadata.resource_version.as_deref(), Some("5"));
    assert!(pods.get_opt("gone").await.unwrap().is_none());
    let err = pods.get("gone").await.unwrap_err();
    assert!(err.is_not_found(), "{err}");
    assert_eq!(
        err.status().unwrap().message.as_deref(),
        Some("pods \"gone\" not found")
    );
    assert!(
        err.to_string()
            .contains("GET /api/v1/namespaces/default/pods/gone"),
        "{err}"
    );

    let lp = ListParams {
        label_selector: Some("app=web".into()),
        limit: Some(2),
        ..ListParams::default()
    };
    let list = pods.list(&lp).await.unwrap();
    assert_eq!(list.items.len(), 2);
    assert_eq!(list.metadata.continue_.as_deref(), Some("tok"));
    assert_eq!(list.metadata.resource_version.as_deref(), Some("9"));

    let created = pods
        .create(
            &PostParams {
                dry_run: false,
                field_manager: Some("me".into()),
            },
            &web,
        )
        .await
        .unwrap();
    assert_eq!(created.metadata.resource_version.as_deref(), Some("10"));

    let err = pods
        .replace("web", &PostParams::default(), &web)
        .await
        .unwrap_err();
    assert!(err.is_conflict() && !err.is_already_exists(), "{err}");

    let patched = pods
        .patch(
            "web",
            &PatchParams::apply("kinform").force(),
            &Patch::Apply(serde_json::json!({"metadata": {"labels": {"a": "b"}}})),
        )
        .await
        .unwrap();
    assert_eq!(patched.metadata.resource_version.as_deref(), Some("11"));
    pods.patch::<()>(
        "web",
        &PatchParams::default(),
        &Patch::Json(
            serde_json::json!([{"op": "add", "path": "/metadata/labels/x", "value": "y"}]),
        ),
    )
    .await
    .unwrap();
    let st = pods
        .patch_status(
            "web",
            &PatchParams::default(),
            &Patch::Merge(serde_json::json!({"status": {"phase": "Running"}})),
        )
        .await
        .unwrap();
    assert_eq!(st.metadata.resource_version.as_deref(), Some("12"));

    let dp = DeleteParams {
        propagation_policy: Some(PropagationPolicy::Foreground),
        preconditions: Some(Preconditions {
            uid: Some("uid-web".into()),
            resource_version: None,
        }),
        ..DeleteParams::default()
    };
    match pods.delete("web", &dp).await.unwrap() {
        Either::Left(p) => assert_eq!(p.metadata.resource_version.as_deref(), Some("13")),
        Either::Right(s) => panic!("{s:?}"),
    }
    assert!(
        pods.delete("now", &DeleteParams::default())
            .await
            .unwrap()
            .is_right()
    );
    let deleted = pods
        .delete_collection(&DeleteParams::background(), &ListParams::default())
        .await
        .unwrap();
    assert_eq!(deleted.left().unwrap().items.len(), 1);

    let seen = server.requests();
    let find = |m: &str, p: &str| {
        seen.iter()
            .find(|s| s.method == m && s.uri.path() == p)
            .unwrap_or_else(|| panic!("no {m} {p}"))
            .clone()
    };
    let list_req = seen
        .iter()
        .find(|s| s.method == "GET" && s.uri.path() == "/api/v1/namespaces/default/pods")
        .unwrap();
    assert_eq!(
        list_req.uri.query(),
        Some("labelSelector=app%3Dweb&limit=2")
    );
    let post = find("POST", "/api/v1/namespaces/default/pods");
    assert_eq!(post.uri.query(), Some("fieldManager=me"));
    assert_eq!(post.headers["content-type"], "application/json");
    let patches: Vec<_> = seen.iter().filter(|s| s.method == "PATCH").collect();
    assert_eq!(
        patches[0].headers["content-type"],
        "application/apply-patch+yaml"
    );
    assert_eq!(
        patches[0].uri.query(),
        Some("fieldManager=kinform&force=true")
    );
    assert_eq!(
        patches[1].headers["content-type"],
        "application/json-patch+json"
    );
    assert_eq!(
        patches[2].headers["content-type"],
        "application/merge-patch+json"
    );
    let del = find("DELETE", "/api/v1/namespaces/default/pods/web");
    let body: serde_json::Value = serde_json::from_slice(&del.body).unwrap();
    assert_eq!(body["propagationPolicy"], "Foreground");
    assert_eq!(body["preconditions"]["uid"], "uid-web");
    assert!(seen.iter().all(|s| {
        s.headers["user-agent"]
            .to_str()
            .unwrap()
            .starts_with("kinform/")
    }));
}

fn watch_line(kind: &str, obj: serde_json::Value) -> Bytes {
    let mut line = serde_json::json!({"type": kind, "object": obj})
        .to_string()
        .into_bytes();
    line.push(b'\n');
    Bytes::from(line)
}

#[tokio::test]
async fn watch_decodes_events_as_they_arrive_and_reports_a_cut_line() {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<Bytes>();
    let rx = Arc::new(parking_lot::Mutex::new(Some(rx)));
    let server = serve(
        None,
        true,
        Arc::new(move |_req| Reply::Stream(rx.lock().take().expect("one watch"))),
    )
    .await;
    let pods: Api<Pod> = Api::namespaced(client(&server.url), "default");
    let wp = WatchParams {
        resource_version: Some("5".into()),
        allow_watch_bookmarks: true,
        ..WatchParams::default()
    };
    let mut stream = pods.watch(&wp).await.unwrap();

    tx.send(watch_line("ADDED", pod_json("a", "6"))).unwrap();
    // The first event is decoded before the server has sent anything else.
    match stream.next().await.unwrap().unwrap() {
        WatchEvent::Added(p) => assert_eq!(p.metadata.name.as_deref(), Some("a")),
        other => panic!("{other:?}"),
    }
    // One event split over two chunks, then a bookmark, then garbage, then an ERROR.
    let modified = watch_line("MODIFIED", pod_json("a", "7"));
    tx.send(modified.slice(..20)).unwrap();
    tx.send(modified.slice(20..)).unwrap();
    tx.send(watch_line(
        "BOOKMARK",
        serde_json::json!({"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"8"}}),
    ))
    .unwrap();
    tx.send(Bytes::from_static(b"{not json}\n")).unwrap();
    tx.send(watch_line(
        "ERROR",
        status_json(410, "Expired", "too old resource version: 1 (8)"),
    ))
    .unwrap();
    tx.send(Bytes::from_static(
        b"{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"cu",
    ))
    .unwrap();
    drop(tx);

    let rest: Vec<_> = stream.collect().await;
    assert_eq!(rest.len(), 5, "{rest:?}");
    assert!(
        matches!(&rest[0], Ok(WatchEvent::Modified(p)) if p.metadata.resource_version.as_deref() == Some("7"))
    );
    assert!(matches!(&rest[1], Ok(WatchEvent::Bookmark(b)) if b.resource_version == "8"));
    match &rest[2] {
        Err(Error::Decode { request, what, .. }) => {
            assert!(
                request.starts_with("GET /api/v1/namespaces/default/pods?watch=true"),
                "{request}"
            );
            assert!(what.contains("v1/pods"), "{what}");
        }
        other => panic!("{other:?}"),
    }
    assert!(
        matches!(&rest[3], Ok(WatchEvent::Error(s)) if s.code == Some(410) && s.reason.as_deref() == Some("Expired"))
    );
    assert!(matches!(&rest[4], Err(Error::Decode { source, .. }) if source.is_eof()));

    let seen = server.requests();
    assert_eq!(
        seen[0].uri.query(),
        Some("watch=true&resourceVersion=5&allowWatchBookmarks=true")
    );
}

#[tokio::test]
async fn bad_bodies_are_typed_errors() {
    let server = serve(
        None,
        false,
        Arc::new(|req| match req.uri.path() {
            "/api/v1/namespaces/default/pods/html" => Reply::raw(200, "<html>proxy login</html>"),
            "/api/v1/namespaces/default/pods" => {
                Reply::raw(200, "{\"items\": [ {\"metadata\": 5} ]}")
            }
            _ => Reply::raw(500, "upstream exploded"),
        }),
    )
    .await;
    let pods: Api<Pod> = Api::namespaced(client(&server.url), "default");
    match pods.get("html").await.unwrap_err() {
        Error::Decode { request, what, .. } => {
            assert_eq!(request, "GET /api/v1/namespaces/default/pods/html");
            assert_eq!(what, "v1/pods object");
        }
        other => panic!("{other:?}"),
    }
    match pods.list(&ListParams::default()).await.unwrap_err() {
        Error::Decode { what, .. } => assert_eq!(what, "v1/pods list"),
        other => panic!("{other:?}"),
    }
    // A non-Status error body becomes a Status with the code's reason and the body as message.
    let err = pods.get("other").await.unwrap_err();
    let status = err.status().unwrap();
    assert_eq!(status.code, Some(500));
    assert_eq!(status.reason.as_deref(), Some("InternalError"));
    assert_eq!(status.message.as_deref(), Some("upstream exploded"));
}

#[tokio::test]
async fn retries_429_with_retry_after_and_503_only_when_idempotent() {
    let hits = Arc::new(AtomicUsize::new(0));
    let h = hits.clone();
    let server = serve(
        None,
        false,
        Arc::new(move |req| {
            let n = h.fetch_add(1, Ordering::SeqCst);
            match (req.method.as_str(), n % 2) {
                // every other request is throttled
                (_, 0) if req.uri.path().ends_with("throttled") || req.method == "POST" => {
                    Reply::json(429, status_json(429, "TooManyRequests", "slow down"))
                        .with_header("retry-after", "0")
                }
                ("GET", _) if req.uri.path().ends_with("throttled") => {
                    Reply::json(200, pod_json("throttled", "1"))
                }
                ("POST", _) => Reply::json(201, pod_json("new", "2")),
                _ => Reply::json(503, status_json(503, "ServiceUnavailable", "etcd down"))
                    .with_header("retry-after", "0"),
            }
        }),
    )
    .await;
    let mut config = Config::new(server.url.parse().unwrap());
    config.max_retries = 2;
    let pods: Api<Pod> = Api::namespaced(Client::new(config).unwrap(), "default");

    // GET: 429 then 200.
    assert_eq!(
        pods.get("throttled")
            .await
            .unwrap()
            .metadata
            .name
            .as_deref(),
        Some("throttled")
    );
    assert_eq!(hits.swap(0, Ordering::SeqCst), 2);
    // POST: a 429 is retried too (the server did not run it).
    pods.create(&PostParams::default(), &Pod::default())
        .await
        .unwrap();
    assert_eq!(hits.swap(0, Ordering::SeqCst), 2);
    // GET on a 503: retried max_retries times, then the Status comes back.
    let err = pods.get("down").await.unwrap_err();
    assert_eq!(err.code(), Some(503));
    assert_eq!(hits.swap(0, Ordering::SeqCst), 3);
    // PATCH on a 503: not idempotent, not retried.
    let err = pods
        .patch(
            "down",
            &PatchParams::default(),
            &Patch::Merge(serde_json::json!({})),
        )
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some(503));
    assert_eq!(hits.load(Ordering::SeqCst), 1);
}

/// kube-apiserver's cacher answer to a resourceVersion newer than it has, after its 3 s
/// wait: a 504 asking for a retry after 1 s, its Status naming the cause.
fn too_large_resource_version() -> Reply {
    Reply::json(
        504,
        serde_json::json!({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
            "message":"Timeout: Too large resource version: 99, current: 3","reason":"Timeout",
            "details":{"retryAfterSeconds":1,"causes":[
                {"reason":"ResourceVersionTooLarge","message":"Too large resource version"}]},
            "code":504}),
    )
    .with_header("retry-after", "1")
}

#[tokio::test]
async fn a_504_is_retried_only_with_retry_after_and_never_for_a_too_large_resource_version() {
    let hits = Arc::new(AtomicUsize::new(0));
    let h = hits.clone();
    let server = serve(
        None,
        false,
        Arc::new(move |req| {
            h.fetch_add(1, Ordering::SeqCst);
            let timeout =
                || status_json(504, "Timeout", "the server was unable to respond in time");
            match req.uri.path() {
                "/api/v1/namespaces/default/pods/asks" => {
                    Reply::json(504, timeout()).with_header("retry-after", "0")
                }
                "/api/v1/namespaces/default/pods/silent" => Reply::json(504, timeout()),
                _ => too_large_resource_version(),
            }
        }),
    )
    .await;
    let mut config = Config::new(server.url.parse().unwrap());
    config.max_retries = 3;
    let pods: Api<Pod> = Api::namespaced(Client::new(config).unwrap(), "default");

    // With Retry-After: retried max_retries times (client-go's checkWait).
    let err = pods.get("asks").await.unwrap_err();
    assert!(
        err.is_timeout() && !err.is_too_large_resource_version(),
        "{err}"
    );
    assert_eq!(hits.swap(0, Ordering::SeqCst), 4);
    // Without: the first answer is the error.
    let err = pods.get("silent").await.unwrap_err();
    assert!(err.is_timeout(), "{err}");
    assert_eq!(hits.swap(0, Ordering::SeqCst), 1);

    // Too large resource version, on a list and on a watch: one request, no wait for the
    // Retry-After, the Status kept.
    let started = std::time::Instant::now();
    let err = pods
        .list(&ListParams {
            resource_version: Some("99".into()),
            ..ListParams::default()
        })
        .await
        .unwrap_err();
    assert!(err.is_too_large_resource_version(), "{err}");
    assert_eq!(err.retry_after(), Some(std::time::Duration::from_secs(1)));
    assert_eq!(hits.swap(0, Ordering::SeqCst), 1);
    let wp = WatchParams {
        resource_version: Some("99".into()),
        ..WatchParams::default()
    };
    let err = match pods.watch(&wp).await {
        Err(e) => e,
        Ok(_) => panic!("the watch opened"),
    };
    assert!(err.is_too_large_resource_version(), "{err}");
    assert_eq!(hits.swap(0, Ordering::SeqCst), 1);
    assert!(
        started.elapsed() < std::time::Duration::from_millis(900),
        "{:?}",
        started.elapsed()
    );
}

fn pod_list_200() -> serde_json::Value {
    let items: Vec<_> = (0..200).map(|i| pod_json(&format!("p{i}"), "1")).collect();
    serde_json::json!({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"3"},"items":items})
}

#[tokio::test]
async fn a_watch_s_bytes_are_counted_as_they_arrive() {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<Bytes>();
    let rx = Arc::new(parking_lot::Mutex::new(Some(rx)));
    let server = serve(
        None,
        false,
        Arc::new(move |_req| Reply::Stream(rx.lock().take().expect("one watch"))),
    )
    .await;
    let client = client(&server.url);
    assert_eq!(client.received_body_bytes(), 0, "no request yet");
    let pods: Api<Pod> = Api::namespaced(client.clone(), "default");
    let mut stream = pods.watch(&WatchParams::default()).await.unwrap();
    let first = watch_line("ADDED", pod_json("a", "6"));
    tx.send(first.clone()).unwrap();
    assert!(stream.next().await.unwrap().is_ok());
    assert_eq!(client.received_body_bytes(), first.len() as u64);
    let second = watch_line("MODIFIED", pod_json("a", "7"));
    tx.send(second.clone()).unwrap();
    drop(tx);
    assert_eq!(stream.collect::<Vec<_>>().await.len(), 1);
    assert_eq!(
        client.received_body_bytes(),
        (first.len() + second.len()) as u64,
        "clones share one counter"
    );
}

#[tokio::test]
async fn gzip_bodies_are_decoded_and_compression_can_be_disabled() {
    let server = serve(None, true, Arc::new(|_| Reply::json(200, pod_list_200()))).await;
    let gzipped = client(&server.url);
    let pods: Api<Pod> = Api::all(gzipped.clone());
    assert_eq!(
        pods.list(&ListParams::default()).await.unwrap().items.len(),
        200
    );
    let mut config = Config::new(server.url.parse().unwrap());
    config.disable_compression = true;
    let plain = Client::new(config).unwrap();
    let pods: Api<Pod> = Api::all(plain.clone());
    assert_eq!(
        pods.list(&ListParams::default()).await.unwrap().items.len(),
        200
    );
    // The byte counters count the body as it came over the wire: the JSON text itself
    // without compression, far less with it.
    let json_len = pod_list_200().to_string().len() as u64;
    assert_eq!(plain.received_body_bytes(), json_len);
    let compressed = gzipped.received_body_bytes();
    assert!(
        compressed > 0 && compressed < json_len / 4,
        "{compressed} of {json_len}"
    );
    let seen = server.requests();
    assert_eq!(seen[0].headers["accept-encoding"], "gzip");
    assert!(!seen[1].headers.contains_key("accept-encoding"));
    assert_eq!(seen[0].uri.path(), "/api/v1/pods");
}

#[tokio::test]
async fn dynamic_and_metadata_only_requests() {
    let server = serve(
        None,
        false,
        Arc::new(|req| {
            if req.headers["accept"].to_str().unwrap().contains("PartialObjectMetadataList") {
                Reply::json(200, serde_json::json!({"kind":"PartialObjectMetadataList","apiVersion":"meta.k8s.io/v1",
                    "metadata":{"resourceVersion":"4"},
                    "items":[{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"f1","namespace":"ns1"}}]}))
            } else {
                Reply::json(200, serde_json::json!({"apiVersion":"example.com/v1","kind":"Foo",
                    "metadata":{"name":"f1","namespace":"ns1"},"spec":{"size":3}}))
            }
        }),
    )
    .await;
    let ar = ApiResource {
        group: "example.com".into(),
        version: "v1".into(),
        kind: "Foo".into(),
        plural: "foos".into(),
        scope: Scope::Namespaced,
    };
    let c = client(&server.url);
    let foos: Api<DynamicObject> = Api::namespaced_with(c.clone(), "ns1", &ar);
    let f = foos.get("f1").await.unwrap();
    assert_eq!(f.data["spec"]["size"], 3);
    let meta: Api<PartialObjectMetadata> = Api::metadata_all(c, &ar);
    let list = meta.list(&ListParams::default()).await.unwrap();
    assert_eq!(list.items[0].metadata.name.as_deref(), Some("f1"));
    let seen = server.requests();
    assert_eq!(
        seen[0].uri.path(),
        "/apis/example.com/v1/namespaces/ns1/foos/f1"
    );
    assert_eq!(seen[1].uri.path(), "/apis/example.com/v1/foos");
    assert_eq!(seen[1].headers["accept"], ACCEPT_PARTIAL_METADATA_LIST);
}

#[tokio::test]
async fn log_stream_and_subresources() {
    let server = serve(
        None,
        false,
        Arc::new(|req| match req.uri.path() {
            "/api/v1/namespaces/default/pods/web/log" => Reply::raw(200, "line 1\nline 2\n"),
            _ => Reply::json(200, serde_json::json!({"kind":"Scale","apiVersion":"autoscaling/v1","metadata":{"name":"web"},"spec":{"replicas":3}})),
        }),
    )
    .await;
    let pods: Api<Pod> = Api::namespaced(client(&server.url), "default");
    let chunks: Vec<_> = pods
        .get_subresource_stream("log", "web", &[("follow", "true"), ("container", "c")])
        .await
        .unwrap()
        .collect()
        .await;
    let text: Vec<u8> = chunks
        .into_iter()
        .flat_map(|c| c.unwrap().to_vec())
        .collect();
    assert_eq!(text, b"line 1\nline 2\n");
    let scale: k8s_openapi::api::autoscaling::v1::Scale =
        pods.get_subresource("scale", "web").await.unwrap();
    assert_eq!(scale.spec.unwrap().replicas, Some(3));
    let seen = server.requests();
    assert_eq!(seen[0].uri.query(), Some("follow=true&container=c"));
}

#[tokio::test]
async fn discovery_reads_api_and_apis() {
    let server = serve(
        None,
        false,
        Arc::new(|req| match req.uri.path() {
            "/api" => Reply::json(200, serde_json::json!({"kind":"APIVersions","versions":["v1"],"serverAddressByClientCIDRs":[]})),
            "/api/v1" => Reply::json(200, serde_json::json!({"kind":"APIResourceList","groupVersion":"v1","resources":[
                {"name":"pods","singularName":"pod","namespaced":true,"kind":"Pod","verbs":["get","list","watch"],"shortNames":["po"]},
                {"name":"pods/status","singularName":"","namespaced":true,"kind":"Pod","verbs":["get","patch"]},
                {"name":"namespaces","singularName":"namespace","namespaced":false,"kind":"Namespace","verbs":["get"]}]})),
            "/apis" => Reply::json(200, serde_json::json!({"kind":"APIGroupList","apiVersion":"v1","groups":[
                {"name":"apps","versions":[{"groupVersion":"apps/v1","version":"v1"}],"preferredVersion":{"groupVersion":"apps/v1","version":"v1"}}]})),
            "/apis/apps/v1" => Reply::json(200, serde_json::json!({"kind":"APIResourceList","groupVersion":"apps/v1","resources":[
                {"name":"deployments","singularName":"deployment","namespaced":true,"kind":"Deployment","verbs":["get"]}]})),
            _ => Reply::json(404, status_json(404, "NotFound", "")),
        }),
    )
    .await;
    let d = kinform_client::Discovery::run(&client(&server.url))
        .await
        .unwrap();
    let pods = d.resolve_gvk("", "v1", "Pod").unwrap();
    assert_eq!(pods.subresources, vec!["status"]);
    assert_eq!(pods.resource.scope, Scope::Namespaced);
    assert_eq!(
        d.resolve_preferred("", "po").unwrap().resource.plural,
        "pods"
    );
    assert_eq!(
        d.resolve_gvk("", "v1", "Namespace").unwrap().resource.scope,
        Scope::Cluster
    );
    assert_eq!(
        d.resolve_preferred("apps", "deployments")
            .unwrap()
            .resource
            .kind,
        "Deployment"
    );
}

#[tokio::test]
async fn connection_refused_is_a_transport_error() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let mut config = Config::new(format!("http://127.0.0.1:{port}").parse().unwrap());
    config.max_retries = 0;
    let pods: Api<Pod> = Api::all(Client::new(config).unwrap());
    let err = pods.list(&ListParams::default()).await.unwrap_err();
    assert!(err.is_transport(), "{err:?}");
    assert!(err.to_string().contains("GET /api/v1/pods"), "{err}");
}
