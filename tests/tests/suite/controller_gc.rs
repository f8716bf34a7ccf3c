//! TestApiServer's garbage collector (runtime/src/testing/gc.rs): deleting an owner deletes
//! its dependents in the background, cascading, and spares dependents with a live owner.

use std::collections::HashSet;

use futures_util::StreamExt;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kinform::client::{DeleteParams, WatchEvent};
use kinform::testing::TestApiServer;
use kinform::{Api, HasMetadata, WatchParams};
use serde_json::{Value, json};

fn create(server: &TestApiServer, kind: &str, name: &str, owners: &[&Value]) -> Value {
    let refs: Vec<Value> = owners
        .iter()
        .map(|o| {
            json!({"apiVersion": "v1", "kind": o["kind"], "name": o["metadata"]["name"],
                   "uid": o["metadata"]["uid"], "controller": false})
        })
        .collect();
    server
        .create_object(json!({
            "apiVersion": "v1", "kind": kind,
            "metadata": {"name": name, "namespace": "default", "ownerReferences": refs}
        }))
        .unwrap()
}

fn deleted_name<K: HasMetadata>(event: WatchEvent<K>) -> Option<String> {
    match event {
        WatchEvent::Deleted(obj) => Some(obj.name().to_owned()),
        _ => None,
    }
}

#[tokio::test]
async fn deleting_an_owner_collects_its_dependents_in_cascade() {
    let server = TestApiServer::start().await.unwrap();
    let client = server.client().unwrap();
    let owner = create(&server, "ConfigMap", "owner", &[]);
    let other = create(&server, "ConfigMap", "other-owner", &[]);
    let child = create(&server, "Secret", "child", &[&owner]);
    create(&server, "ConfigMap", "grandchild", &[&child]);
    create(&server, "Secret", "shared", &[&owner, &other]);
    create(&server, "Secret", "unrelated", &[&other]);

    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let secrets: Api<Secret> = Api::namespaced(client.clone(), "default");
    let from = server.resource_version().to_string();
    let wp = WatchParams {
        resource_version: Some(from),
        ..WatchParams::default()
    };
    let mut cm_watch = cms.watch(&wp).await.unwrap().map(|e| e.map(deleted_name));
    let mut secret_watch = secrets
        .watch(&wp)
        .await
        .unwrap()
        .map(|e| e.map(deleted_name));
    cms.delete("owner", &DeleteParams::default()).await.unwrap();

    let mut deleted = HashSet::new();
    while !(deleted.contains("child") && deleted.contains("grandchild")) {
        let event = tokio::select! {
            e = cm_watch.next() => e,
            e = secret_watch.next() => e,
        };
        if let Some(name) = event.expect("watch ended").unwrap() {
            deleted.insert(name);
        }
    }
    // The dependent with a live owner and the unrelated one stay.
    assert!(secrets.get_opt("shared").await.unwrap().is_some());
    assert!(secrets.get_opt("unrelated").await.unwrap().is_some());
    assert!(cms.get_opt("other-owner").await.unwrap().is_some());
    assert!(!deleted.contains("shared"));

    // Once its last owner is gone, the shared dependent goes too.
    cms.delete("other-owner", &DeleteParams::default())
        .await
        .unwrap();
    while !(deleted.contains("shared") && deleted.contains("unrelated")) {
        if let Some(name) = secret_watch.next().await.expect("watch ended").unwrap() {
            deleted.insert(name);
        }
    }

    // A dependent written after its owner is gone (a stale cache) is collected as well.
    let late = json!({"kind": "ConfigMap", "metadata": {"name": "owner", "uid": owner["metadata"]["uid"]}});
    create(&server, "Secret", "late", &[&late]);
    loop {
        if let Some(name) = secret_watch.next().await.expect("watch ended").unwrap()
            && name == "late"
        {
            break;
        }
    }
    server.shutdown().await;
}
