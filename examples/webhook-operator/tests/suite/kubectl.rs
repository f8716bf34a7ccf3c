//! The example's own webhooks registered in a TestApiServer as `deploy/` registers them on a
//! cluster, driven by kubectl and by kinform's typed client: the example's `WebhookServer`
//! over TLS (a `TestCa` certificate for the Service's `webhook-operator.webhook-operator-system.svc`),
//! the CRD with its `strategy: Webhook` conversion stanza and both webhook configurations
//! made by `webhook_operator::manifests` and `webhooks()`, their Service reference resolved
//! with `TestApiServer::register_service_port` and their `caBundle` the test CA (what
//! cert-manager's CA injector writes on a cluster).
//!
//! Runs only when `kubectl` is on the PATH (otherwise the test passes after saying it was
//! skipped, or fails under `KINFORM_CONFORMANCE=require`), as the other kubectl tests do.

use std::time::Duration;

use kinform::Api;
use kinform::client::PostParams;
use kinform::testing::TestApiServer;
use kinform::webhook::WebhookServer;
use kinform_tests::kubectl::Kubectl;
use kinform_webhook::testing::TestCa;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use webhook_operator::api::{RETENTION_ANNOTATION, v2};
use webhook_operator::manifests::{self, CONFIGURATION, NAMESPACE, SERVICE};
use webhook_operator::webhooks::webhooks;

const NS: &str = "shop";
const VALIDATOR: &str = "vqueue.messaging.example.com";
const DEFAULTER: &str = "mqueue.messaging.example.com";

/// capacity 0: the schema allows it, the validator does not.
const EMPTY_V2: &str = "apiVersion: messaging.example.com/v2\nkind: Queue\nmetadata:\n  name: empty\n  namespace: shop\nspec:\n  capacity: 0\n";
/// Written in v1 without a retention: converted to v2 (storage) and defaulted there.
const ORDERS_V1: &str = "apiVersion: messaging.example.com/v1\nkind: Queue\nmetadata:\n  name: orders\n  namespace: shop\nspec:\n  size: 100\n";
const LATE_V2: &str = "apiVersion: messaging.example.com/v2\nkind: Queue\nmetadata:\n  name: late\n  namespace: shop\nspec:\n  capacity: 5\n";

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The example's server on loopback, its certificate for the Service's host name.
struct Hooks {
    addr: std::net::SocketAddr,
    ca_pem: String,
    stop: CancellationToken,
    task: JoinHandle<()>,
    _dir: tempfile::TempDir,
}

impl Hooks {
    async fn start() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let ca = TestCa::new().unwrap();
        let (cert, key) = (dir.path().join("tls.crt"), dir.path().join("tls.key"));
        ca.issue(&[&format!("{SERVICE}.{NAMESPACE}.svc")])
            .unwrap()
            .write(&cert, &key)
            .unwrap();
        let server = WebhookServer::builder(webhooks())
            .tls_files(&cert, &key)
            .shutdown_grace(Duration::from_millis(200))
            .bind(([127, 0, 0, 1], 0).into())
            .await
            .unwrap();
        let addr = server.local_addr();
        let stop = CancellationToken::new();
        let task = tokio::spawn(server.serve_until(stop.clone()));
        Self {
            addr,
            ca_pem: ca.ca_pem().to_owned(),
            stop,
            task,
            _dir: dir,
        }
    }

    /// Takes the server down, as a crashed webhook pod; returns once its port refuses.
    async fn stop(&mut self) {
        self.stop.cancel();
        (&mut self.task).await.unwrap();
    }
}

impl Drop for Hooks {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// Registers the example's CRD and webhook configurations in `server`, as `deploy/` does
/// with the `caBundle` cert-manager would inject, the Service resolved to `hooks`.
fn register(server: &TestApiServer, hooks: &Hooks) {
    server.register_service_port(NAMESPACE, SERVICE, 443, hooks.addr);
    let client = manifests::client_config().ca_bundle(hooks.ca_pem.as_bytes());
    let described = webhooks();
    let objects = [
        serde_json::to_value(manifests::crd_for(&client).unwrap()).unwrap(),
        serde_json::to_value(
            described
                .validating_webhook_configuration(CONFIGURATION, &client)
                .unwrap(),
        )
        .unwrap(),
        serde_json::to_value(
            described
                .mutating_webhook_configuration(CONFIGURATION, &client)
                .unwrap(),
        )
        .unwrap(),
    ];
    for object in objects {
        server.create_object(object).expect("registered");
    }
    server.create_namespace(NS).unwrap();
}

/// kube-apiserver's dynamic admission and CRD conversion with the example's webhooks:
///
/// - a validating webhook's denial is the request's error (`admission webhook "x" denied
///   the request: <message>`, the webhook's code), as kubectl prints it;
/// - a mutating webhook's JSON Patch is applied before storage (the defaulted fields appear);
/// - `matchPolicy: Equivalent`: a v1 write is converted to v2 by the conversion webhook
///   before the v2-only admission webhooks see it;
/// - `strategy: Webhook` conversion on read: the stored v2 object read as v1 and as v2,
///   the v2 printer columns in `kubectl get`'s table;
/// - DELETE admission with `oldObject` (a protected queue cannot be deleted);
/// - kinform's typed client sees the same defaults and the same denial;
/// - with the server down, `failurePolicy: Fail` refuses (`failed calling webhook`), and
///   after the configurations are patched to `Ignore` the write is admitted undefaulted,
///   while reading another version fails (conversion has no failure policy).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_and_typed_client_see_the_queue_webhooks() {
    let server = TestApiServer::start().await.unwrap();
    let Some(k) = Kubectl::for_server(&server, "the webhook-operator kubectl test") else {
        return;
    };
    let mut hooks = Hooks::start().await;
    register(&server, &hooks);

    // The validator refuses what the schema allows; its 422 carries the reason `Invalid`,
    // which kubectl prints as "The request is invalid" (the Status has no details).
    let out = k
        .output(&["apply", "-f", "-"], Some(EMPTY_V2.as_bytes()))
        .await;
    assert!(!out.status.success());
    assert_eq!(
        text(&out.stderr),
        format!(
            "The request is invalid: error when creating \"STDIN\": admission webhook \"{VALIDATOR}\" denied the request: spec.capacity must be between 1 and 10000, not 0\n"
        )
    );

    // Written in v1, converted, defaulted in v2, read back in both versions.
    let out = k
        .output(&["apply", "-f", "-"], Some(ORDERS_V1.as_bytes()))
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v2 = k
        .run(&[
            "get",
            "-n",
            NS,
            "queues.v2.messaging.example.com",
            "orders",
            "-o",
            "jsonpath={.apiVersion} {.spec.capacity} {.spec.priority} {.spec.retentionSeconds}",
        ])
        .await;
    assert_eq!(v2, "messaging.example.com/v2 100 normal 86400");
    let v1 = k
        .run(&[
            "get", "-n", NS, "queues.v1.messaging.example.com", "orders", "-o",
            "jsonpath={.apiVersion} {.spec.size} {.spec.retentionHours} {.metadata.annotations.messaging\\.example\\.com/priority}",
        ])
        .await;
    assert_eq!(v1, "messaging.example.com/v1 100 24 normal");

    // kinform's typed client: a v2 create defaulted by the webhook, a v2 create refused.
    let queues: Api<v2::Queue> = Api::namespaced(server.client().unwrap(), NS);
    let spec = |capacity, retention_seconds| v2::QueueSpec {
        capacity,
        retention_seconds,
        priority: None,
    };
    let created = queues
        .create(
            &PostParams::default(),
            &v2::Queue::new("billing", spec(10, Some(5400))),
        )
        .await
        .unwrap();
    assert_eq!(created.spec.priority, Some(v2::Priority::Normal));
    assert_eq!(created.spec.retention_seconds, Some(5400));
    let refused = queues
        .create(
            &PostParams::default(),
            &v2::Queue::new("huge", spec(20_000, None)),
        )
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Some(422), "{refused}");
    assert_eq!(
        refused.status().and_then(|s| s.message.as_deref()),
        Some(format!("admission webhook \"{VALIDATOR}\" denied the request: spec.capacity must be between 1 and 10000, not 20000").as_str())
    );
    // What v1 cannot hold travels in an annotation.
    let v1 = k
        .run(&[
            "get",
            "-n",
            NS,
            "queues.v1.messaging.example.com",
            "billing",
            "-o",
            &format!(
                "jsonpath={{.spec.retentionHours}} {{.metadata.annotations.{}}}",
                RETENTION_ANNOTATION.replace('.', "\\.")
            ),
        ])
        .await;
    assert_eq!(v1, "1 5400");
    let table = k
        .run(&["get", "-n", NS, "queues.v2.messaging.example.com"])
        .await;
    let rows: Vec<Vec<&str>> = table
        .lines()
        .skip(1)
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(rows.len(), 2, "{table}");
    assert_eq!(rows[0][..3], ["billing", "10", "normal"], "{table}");
    assert_eq!(rows[1][..3], ["orders", "100", "normal"], "{table}");

    // DELETE is admitted with the stored object as oldObject.
    k.run(&[
        "label",
        "-n",
        NS,
        "queues.v2.messaging.example.com",
        "orders",
        "messaging.example.com/protected=true",
    ])
    .await;
    let out = k
        .output(
            &[
                "delete",
                "-n",
                NS,
                "queues.v2.messaging.example.com",
                "orders",
            ],
            None,
        )
        .await;
    assert!(!out.status.success());
    assert_eq!(
        text(&out.stderr),
        format!(
            "Error from server (Forbidden): admission webhook \"{VALIDATOR}\" denied the request: queue orders is protected: remove the label messaging.example.com/protected first\n"
        )
    );

    // The server down: failurePolicy Fail refuses, at the first webhook called (mutating).
    hooks.stop().await;
    let out = k
        .output(&["apply", "-f", "-"], Some(LATE_V2.as_bytes()))
        .await;
    assert!(!out.status.success());
    assert_eq!(
        text(&out.stderr),
        format!(
            "Error from server (InternalError): error when creating \"STDIN\": Internal error occurred: failed calling webhook \"{DEFAULTER}\": failed to call webhook: Post \"https://{SERVICE}.{NAMESPACE}.svc:443/mutate-messaging-example-com-v2-queue?timeout=10s\": dial tcp {}: connect: connection refused\n",
            hooks.addr
        )
    );
    // Patched to Ignore, both configurations admit past the dead server, undefaulted.
    for kind in [
        "mutatingwebhookconfiguration",
        "validatingwebhookconfiguration",
    ] {
        k.run(&[
            "patch",
            kind,
            CONFIGURATION,
            "--type=json",
            "-p",
            r#"[{"op":"replace","path":"/webhooks/0/failurePolicy","value":"Ignore"}]"#,
        ])
        .await;
    }
    let out = k
        .output(&["apply", "-f", "-"], Some(LATE_V2.as_bytes()))
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let late = k
        .run(&[
            "get",
            "-n",
            NS,
            "queues.v2.messaging.example.com",
            "late",
            "-o",
            "jsonpath={.spec.capacity}/{.spec.priority}/{.spec.retentionSeconds}",
        ])
        .await;
    assert_eq!(late, "5//");
    // Conversion has no failure policy: another version cannot be read.
    let out = k
        .output(
            &["get", "-n", NS, "queues.v1.messaging.example.com", "late"],
            None,
        )
        .await;
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).starts_with(
            "Error from server: conversion webhook for messaging.example.com/v2, Kind=Queue failed: Post"
        ),
        "{}",
        text(&out.stderr)
    );
}
