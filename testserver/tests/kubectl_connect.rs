//! Acceptance: kubectl's exec (over `v5.channel.k8s.io` WebSockets) and `get --raw` through
//! the proxy subresource against TestApiServer. Runs only when `kubectl` is on the PATH
//! (otherwise the test passes after saying it was skipped).
//!
//! `kubectl port-forward` is not exercised: kubectl (1.31+) tunnels SPDY inside its
//! port-forward WebSocket, which TestApiServer does not speak; port-forward is tested with
//! kinform's client in `client_server_connect.rs`.

use kinform_tests::kubectl::Kubectl;
use kinform_testserver::TestApiServer;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A loopback HTTP/1.1 backend answering `backend saw <request line>` and closing.
async fn backend() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut conn, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut b = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") && conn.read(&mut b).await.unwrap_or(0) == 1 {
                    head.push(b[0]);
                }
                let line = text(&head).lines().next().unwrap_or_default().to_owned();
                let body = format!("backend saw {line}");
                let resp = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = conn.write_all(resp.as_bytes()).await;
            });
        }
    });
    format!("http://{addr}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_exec_and_proxy_work_against_the_server() {
    let server = TestApiServer::start().await.unwrap();
    let Some(k) = Kubectl::for_server(&server, "the kubectl connect acceptance test") else {
        return;
    };
    server
        .create_object(json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {"containers": [{"name": "app", "image": "busybox"}]},
        }))
        .unwrap();

    // exec with stdout
    let out = k.output(&["exec", "web", "--", "echo", "hi"], None).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "hi\n");

    // exec with stdin (-i): cat echoes it until kubectl closes stdin (v5 close signal)
    let out = k
        .output(
            &["exec", "-i", "web", "--", "cat"],
            Some(b"from stdin\nsecond line\n"),
        )
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "from stdin\nsecond line\n");

    // stderr and the exit code are propagated
    let out = k
        .output(
            &[
                "exec",
                "web",
                "-c",
                "app",
                "--",
                "sh",
                "-c",
                "echo oops >&2; exit 3",
            ],
            None,
        )
        .await;
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("oops"), "{}", text(&out.stderr));

    // a missing container is the server's 400
    let out = k
        .output(&["exec", "web", "-c", "nope", "--", "true"], None)
        .await;
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("nope"), "{}", text(&out.stderr));

    // get --raw through the pod's proxy subresource
    server.proxy_backend("pods", "default", "web", &backend().await);
    let out = k
        .output(
            &[
                "get",
                "--raw",
                "/api/v1/namespaces/default/pods/web/proxy/healthz",
            ],
            None,
        )
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "backend saw GET /healthz HTTP/1.1");
}
