//! Acceptance: kubectl against TestApiServer with admission and conversion webhooks
//! registered (`kinform_tests::webhook::Demo`), printing what it prints against a cluster
//! with the same webhooks. Runs only when `kubectl` is on the PATH (otherwise the test
//! passes after saying it was skipped, or fails under `KINFORM_CONFORMANCE=require`).

use kinform_tests::kubectl::Kubectl;
use kinform_tests::webhook::Demo;
use kinform_testserver::TestApiServer;

const TEAMLESS: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: teamless\n";
const OWNED: &str =
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: owned\n  labels:\n    team: payments\n";
const LATE: &str =
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: late\n  labels:\n    team: payments\n";
const BOX_V2: &str = "apiVersion: example.com/v2\nkind: Widget\nmetadata:\n  name: box\nspec:\n  width: 3\n  height: 4\n";

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A refusal prints the webhook's message (`admission webhook "x" denied the request:
/// ...`); a defaulted field appears; the same object reads in both versions of a CRD
/// converted by a webhook; with the webhooks down `failurePolicy: Fail` refuses and
/// `Ignore` admits.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_sees_webhook_decisions_conversions_and_failure_policies() {
    let server = TestApiServer::start().await.unwrap();
    let Some(k) = Kubectl::for_server(&server, "the kubectl webhook acceptance test") else {
        return;
    };
    let demo = Demo::install(&server).await;

    let out = k
        .output(&["apply", "-f", "-"], Some(TEAMLESS.as_bytes()))
        .await;
    assert!(!out.status.success());
    assert_eq!(
        text(&out.stderr),
        "Error from server (Forbidden): error when creating \"STDIN\": admission webhook \"team.example.com\" denied the request: label \"team\" is required\n"
    );

    let out = k
        .output(&["apply", "-f", "-"], Some(OWNED.as_bytes()))
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let tier = k
        .run(&[
            "get",
            "configmap",
            "owned",
            "-o",
            "jsonpath={.metadata.labels.tier}",
        ])
        .await;
    assert_eq!(tier, "standard");

    let out = k
        .output(&["apply", "-f", "-"], Some(BOX_V2.as_bytes()))
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v1 = k
        .run(&[
            "get",
            "widgets.v1.example.com",
            "box",
            "-o",
            "jsonpath={.apiVersion} {.spec.size}",
        ])
        .await;
    assert_eq!(v1, "example.com/v1 3x4");
    let v2 = k
        .run(&[
            "get",
            "widgets.v2.example.com",
            "box",
            "-o",
            "jsonpath={.apiVersion} {.spec.width}x{.spec.height}",
        ])
        .await;
    assert_eq!(v2, "example.com/v2 3x4");
    let table = k.run(&["get", "widgets.v2.example.com"]).await;
    let row: Vec<&str> = table
        .lines()
        .nth(1)
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    assert_eq!(row[..3], ["box", "3", "4"], "{table}");

    let out = k
        .output(
            &[
                "create",
                "secret",
                "generic",
                "blocked-1",
                "--from-literal=a=b",
            ],
            None,
        )
        .await;
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("admission webhook \"secrets.example.com\" denied the request: secret \"blocked-1\" is blocked"),
        "{}",
        text(&out.stderr)
    );

    demo.hooks.stop();
    let out = k.output(&["apply", "-f", "-"], Some(LATE.as_bytes())).await;
    assert!(!out.status.success());
    let url = demo.hooks.url("/validate?timeout=10s");
    assert_eq!(
        text(&out.stderr),
        format!(
            "Error from server (InternalError): error when creating \"STDIN\": Internal error occurred: failed calling webhook \"team.example.com\": failed to call webhook: Post \"{url}\": dial tcp {}: connect: connection refused\n",
            demo.hooks.addr()
        )
    );
    let out = k
        .output(
            &[
                "create",
                "secret",
                "generic",
                "blocked-2",
                "--from-literal=a=b",
            ],
            None,
        )
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = k
        .output(&["get", "widgets.v2.example.com", "box"], None)
        .await;
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).starts_with(
            "Error from server: conversion webhook for example.com/v1, Kind=Widget failed: Post"
        ),
        "{}",
        text(&out.stderr)
    );
}
