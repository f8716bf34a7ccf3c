//! The server's managedFields opt-out (KEP-5958) for informers, against TestApiServer with
//! its `ManagedFieldsOptOut` gate on and off.
//!
//! kube-apiserver behaviours checked: with the gate on, `Accept:
//! application/json;drop=metadata.managedFields` answers GET, LIST and WATCH objects without
//! `metadata.managedFields` and a `Content-Type` of plain `application/json` (nothing says
//! the request was honoured); with the gate off (or on a server older than the KEP) the
//! parameter is an unrecognized media-type parameter, ignored by apiserver's content
//! negotiation: 200 and the full objects, never 406. An informer that drops managedFields
//! asks for the opt-out, reads fewer bytes when the server honours it, records per client
//! what the server did, and caches the same objects either way (the client-side cut is the
//! fallback).

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use kinform::client::{ACCEPT_DROP_MANAGED_FIELDS, ManagedFieldsOptOut};
use kinform::reflector::ListMode;
use kinform::{Api, HasMetadata, ListParams};
use serde_json::{Value, json};

use kinform_tests::http::Raw;
use kinform_tests::informer::{factory_builder, opt_out_server, until};

const PODS: usize = 60;
/// Pods changed once the cache is synced, so the watch carries events too.
const CHANGED: usize = 10;

/// The items of a list, or the object of an event / a GET.
fn carries_managed_fields(obj: &Value) -> bool {
    obj["metadata"].get("managedFields").is_some()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gate_drops_managed_fields_from_get_list_and_watch() {
    for gate in [true, false] {
        let (server, _proxy, _client) = opt_out_server(gate, 3).await;
        let raw = Raw::new(&server.url());
        let path = "/api/v1/namespaces/ns-0/pods";
        let list = raw
            .request_with(
                "GET",
                path,
                None,
                "application/json",
                Some(ACCEPT_DROP_MANAGED_FIELDS),
            )
            .await;
        assert_eq!(list.status, 200, "gate {gate}: never 406");
        assert_eq!(
            list.headers["content-type"], "application/json",
            "nothing echoed"
        );
        let items = list.body["items"].as_array().unwrap();
        assert_eq!(items.len(), 3);
        assert!(
            items.iter().all(|i| carries_managed_fields(i) != gate),
            "gate {gate}"
        );
        // Without the parameter the objects keep them, gate or not.
        let plain = raw.get(path).await;
        assert!(
            plain.body["items"]
                .as_array()
                .unwrap()
                .iter()
                .all(carries_managed_fields)
        );

        let name = items[0]["metadata"]["name"].as_str().unwrap();
        let one = raw
            .request_with(
                "GET",
                &format!("{path}/{name}"),
                None,
                "application/json",
                Some("application/json;drop=metadata.managedFields"),
            )
            .await;
        assert_eq!(carries_managed_fields(&one.body), !gate, "GET, gate {gate}");
        // A drop set naming fields the server does not know is read for the ones it knows.
        let several = raw
            .request_with(
                "GET",
                &format!("{path}/{name}"),
                None,
                "application/json",
                Some("application/json;drop=spec.future+metadata.managedFields"),
            )
            .await;
        assert_eq!(carries_managed_fields(&several.body), !gate);

        let mut watch = raw
            .watch_with(
                &format!("{path}?watch=1&resourceVersion=0"),
                Some(ACCEPT_DROP_MANAGED_FIELDS),
            )
            .await;
        let event = watch.next_change().await.expect("an initial event");
        assert_eq!(event["type"], "ADDED");
        assert_eq!(
            carries_managed_fields(&event["object"]),
            !gate,
            "WATCH, gate {gate}"
        );
        server.shutdown().await;
    }
}

/// One informer run: bytes the client read through the proxy, and what the client
/// recorded of the server's answer.
async fn informer_run(gate: bool, mode: ListMode) -> (u64, ManagedFieldsOptOut) {
    let (server, proxy, client) = opt_out_server(gate, PODS).await;
    let factory = factory_builder(client.clone())
        .list_mode(mode)
        .tweak_reflector(|c| c.page_size = 25)
        .build();
    let pods = factory.lister::<Pod>();
    factory.start();
    factory
        .wait_for_cache_sync(Duration::from_secs(30))
        .await
        .unwrap();
    let names: Vec<String> = pods
        .list_all()
        .iter()
        .map(|p| p.metadata.name.clone().unwrap())
        .collect();
    assert_eq!(names.len(), PODS);
    for name in &names[..CHANGED] {
        server
            .merge_patch_object(
                "v1",
                "Pod",
                Some("ns-0"),
                name,
                &json!({"metadata": {"labels": {"changed": "yes"}}}),
            )
            .unwrap();
    }
    until(|| {
        pods.list_all()
            .iter()
            .filter(|p| {
                p.metadata
                    .labels
                    .as_ref()
                    .is_some_and(|l| l.contains_key("changed"))
            })
            .count()
            == CHANGED
    })
    .await;
    let bytes = proxy.settled(Duration::from_millis(100)).await;

    // The cache is the server's objects without managedFields, whatever the server sent.
    let full = Api::<Pod>::all(client.clone())
        .list(&ListParams::default())
        .await
        .unwrap();
    assert!(
        full.items
            .iter()
            .all(|p| p.metadata.managed_fields.is_some())
    );
    let expected: BTreeMap<String, Pod> = full
        .items
        .into_iter()
        .map(|mut p| {
            p.metadata.managed_fields = None;
            (p.key(), p)
        })
        .collect();
    let cached: BTreeMap<String, Pod> = pods
        .list_all()
        .iter()
        .map(|p| (p.key(), (**p).clone()))
        .collect();
    assert!(
        cached == expected,
        "gate {gate}, {mode:?}: the cache differs"
    );
    factory.shutdown().await;
    server.shutdown().await;
    (bytes, client.managed_fields_opt_out())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn informers_read_fewer_bytes_when_the_server_drops_managed_fields() {
    let (honoured, on) = informer_run(true, ListMode::Paged).await;
    let (ignored, off) = informer_run(false, ListMode::Paged).await;
    assert_eq!(on, ManagedFieldsOptOut::Honoured);
    assert_eq!(off, ManagedFieldsOptOut::Ignored);
    assert!(
        honoured * 10 < ignored * 9,
        "with the gate on the client read {honoured} bytes, off {ignored}"
    );
    // A streaming list is a watch: it asks too (no LIST page: the client records nothing).
    let (streamed, state) = informer_run(true, ListMode::Auto).await;
    assert_eq!(state, ManagedFieldsOptOut::Unknown);
    assert!(
        streamed * 10 < ignored * 9,
        "streamed {streamed}, paged without the gate {ignored}"
    );
}
