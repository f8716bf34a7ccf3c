//! Helpers of the controller tests: a server, a factory, and a log of reconcile calls that
//! tests wait on (no sleeps: every wait is for a condition, bounded by a generous timeout).

#![allow(dead_code)]

use std::pin::pin;
use std::sync::Arc;
use std::time::Duration;

use kinform::informer::InformerFactory;
use kinform::testing::TestApiServer;
use kinform::{Client, Config};
use parking_lot::Mutex;
use serde_json::json;
use tokio::sync::Notify;
use tokio::time::Instant;

/// Bounds every wait; on the paused clock it is reached only when the test is stuck.
pub const LONG: Duration = Duration::from_secs(3600);

pub fn client(server: &TestApiServer) -> Client {
    let mut config = Config::new(server.url().parse().unwrap());
    config.default_namespace = "default".into();
    Client::new(config).unwrap()
}

pub fn factory(client: Client) -> InformerFactory {
    InformerFactory::builder(client)
        .tweak_reflector(|c| {
            c.backoff.initial = Duration::from_millis(20);
            c.backoff.max = Duration::from_millis(300);
        })
        .build()
}

pub fn configmap(server: &TestApiServer, name: &str) -> serde_json::Value {
    server
        .create_object(json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": "default"},
            "data": {"k": "v"}
        }))
        .unwrap()
}

/// One reconcile call.
#[derive(Clone, Debug)]
pub struct Call {
    pub key: String,
    pub present: bool,
    pub retries: usize,
    pub at: Instant,
}

/// The calls a reconcile made, with a notification on every change.
#[derive(Default)]
pub struct Log {
    pub calls: Mutex<Vec<Call>>,
    changed: Notify,
}

impl Log {
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    pub fn record(&self, key: &str, present: bool, retries: usize) {
        self.calls.lock().push(Call {
            key: key.to_owned(),
            present,
            retries,
            at: Instant::now(),
        });
        self.changed.notify_waiters();
    }

    pub fn of(&self, key: &str) -> Vec<Call> {
        self.calls
            .lock()
            .iter()
            .filter(|c| c.key == key)
            .cloned()
            .collect()
    }

    /// Waits until `pred` holds for the calls.
    pub async fn wait_for(&self, what: &str, pred: impl Fn(&[Call]) -> bool) {
        let wait = async {
            loop {
                let mut notified = pin!(self.changed.notified());
                notified.as_mut().enable();
                if pred(&self.calls.lock()) {
                    return;
                }
                notified.await;
            }
        };
        if tokio::time::timeout(LONG, wait).await.is_err() {
            panic!(
                "timed out waiting for {what}; calls: {:?}",
                self.calls.lock()
            );
        }
    }
}
