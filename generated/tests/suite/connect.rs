//! The generated connect methods (`exec`, `attach`, `portforward`, `proxy`, `proxy_get`)
//! against TestApiServer, through `client.core_v1()`.

use kinform::client::{AttachParams, PostParams};
use kinform::k8s_openapi::api::core::v1::Pod;
use kinform::testing::TestApiServer;
use kinform::{Client, Config};
use kinform_api::prelude::*;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

#[tokio::test]
async fn generated_pod_client_execs_attaches_forwards_and_proxies() {
    let server = TestApiServer::start().await.expect("server starts");
    let client = Client::new(Config::new(server.url().parse().expect("url"))).expect("client");
    let pods = client.core_v1().pods("default");
    let pod: Pod = serde_json::from_value(json!({
        "metadata": {"name": "web"},
        "spec": {"containers": [{"name": "app", "image": "busybox"}]},
    }))
    .expect("pod");
    pods.create(&PostParams::default(), &pod)
        .await
        .expect("create");

    let mut p = pods
        .exec(
            "web",
            ["sh", "-c", "echo hi; exit 4"],
            &AttachParams::default(),
        )
        .await
        .expect("exec");
    let mut out = String::new();
    p.stdout()
        .expect("stdout")
        .read_to_string(&mut out)
        .await
        .expect("read");
    assert_eq!(out, "hi\n");
    assert_eq!(p.join().await.expect("status").exit_code(), Some(4));

    let mut a = pods
        .attach("web", &AttachParams::default().stdin(true).stderr(false))
        .await
        .expect("attach");
    let mut stdin = a.stdin().expect("stdin");
    stdin.write_all(b"x").await.expect("write");
    drop(stdin);
    let mut out = String::new();
    a.stdout()
        .expect("stdout")
        .read_to_string(&mut out)
        .await
        .expect("read");
    assert_eq!(out, "x");

    let mut pf = pods.portforward("web", &[80]).await.expect("portforward");
    let err = pf.take_error(80).expect("error future").await;
    assert!(err.is_some_and(|e| e.contains("no backend")));

    let err = pods.proxy_get("web", "/").await.expect_err("no backend");
    assert_eq!(err.code(), Some(503));
    let err = client
        .core_v1()
        .services("default")
        .proxy_get("missing", "/")
        .await
        .expect_err("no service");
    assert!(err.is_not_found());
}
