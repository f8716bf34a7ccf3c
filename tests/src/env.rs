//! Shared set-up of the client-against-server tests: a `TestApiServer` on loopback and a
//! kinform `Client` talking real HTTP to it, plus small object builders.

use std::collections::BTreeMap;
use std::time::Duration;

use futures_util::StreamExt as _;
use k8s_openapi::api::core::v1::{ConfigMap, Container, Pod, PodSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kinform::client::WatchStream;
use kinform::testing::TestApiServer;
use kinform::{Client, Config, WatchEvent};

/// A started server and a client bound to it.
pub struct Env {
    /// The running server.
    pub server: TestApiServer,
    /// A kinform client bound to it.
    pub client: Client,
}

/// A server with default settings and a client with default retries.
pub async fn env() -> Env {
    env_with(TestApiServer::builder(), |_| {}).await
}

/// A server from `builder` and a client whose config `tweak` adjusts.
pub async fn env_with(
    builder: kinform::testing::TestApiServerBuilder,
    tweak: impl FnOnce(&mut Config),
) -> Env {
    let server = builder.start().await.expect("server starts");
    let client = server.client_with(tweak).expect("client builds");
    Env { server, client }
}

/// A config map `name` with `labels` and one data entry.
pub fn cm(name: &str, labels: &[(&str, &str)]) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            labels: (!labels.is_empty()).then(|| {
                labels
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect::<BTreeMap<_, _>>()
            }),
            ..ObjectMeta::default()
        },
        data: Some([("k".to_string(), "v".to_string())].into()),
        ..ConfigMap::default()
    }
}

/// A pod `name` with one container.
pub fn pod(name: &str) -> Pod {
    Pod {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..ObjectMeta::default()
        },
        spec: Some(PodSpec {
            containers: vec![Container {
                name: "app".into(),
                image: Some("nginx:1".into()),
                ..Container::default()
            }],
            ..PodSpec::default()
        }),
        ..Pod::default()
    }
}

/// The next item of a watch, failing the test after 10 s of silence (a hang guard, not a
/// timing assertion).
pub async fn next<K>(
    stream: &mut WatchStream<K>,
) -> Option<kinform::client::Result<WatchEvent<K>>> {
    tokio::time::timeout(Duration::from_secs(10), stream.next())
        .await
        .expect("watch went silent for 10 s")
}

/// The next event, which must be a decoded event (not a transport error).
pub async fn next_event<K>(stream: &mut WatchStream<K>) -> WatchEvent<K> {
    next(stream)
        .await
        .expect("watch ended early")
        .expect("watch item is an event")
}

/// Reads events until the stream ends (with the hang guard).
pub async fn drain<K>(stream: &mut WatchStream<K>) -> Vec<kinform::client::Result<WatchEvent<K>>> {
    let mut out = Vec::new();
    while let Some(item) = next(stream).await {
        out.push(item);
    }
    out
}

/// The name of an event's object (`BOOKMARK`/`ERROR` give `""`).
pub fn event_name<K: kinform::HasMetadata>(ev: &WatchEvent<K>) -> String {
    match ev {
        WatchEvent::Added(o) | WatchEvent::Modified(o) | WatchEvent::Deleted(o) => {
            o.name().to_owned()
        }
        _ => String::new(),
    }
}

/// `"ADDED a"`-style summary of an event.
pub fn summary<K: kinform::HasMetadata>(ev: &WatchEvent<K>) -> String {
    match ev {
        WatchEvent::Added(o) => format!("ADDED {}", o.name()),
        WatchEvent::Modified(o) => format!("MODIFIED {}", o.name()),
        WatchEvent::Deleted(o) => format!("DELETED {}", o.name()),
        WatchEvent::Bookmark(_) => "BOOKMARK".into(),
        WatchEvent::Error(s) => format!("ERROR {}", s.code.unwrap_or_default()),
    }
}
