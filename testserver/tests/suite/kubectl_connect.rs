//! Acceptance: kubectl's exec (over `v5.channel.k8s.io` WebSockets), `get --raw` through
//! the proxy subresource, and `port-forward` (SPDY/3.1 tunneled in a WebSocket, kubectl's
//! default since 1.31, and the direct `Upgrade: SPDY/3.1` it falls back to) against
//! TestApiServer. Runs only when `kubectl` is on the PATH (otherwise each test passes after
//! saying it was skipped). kinform's own client's port-forward (the WebSocket channel
//! protocol) is tested in `client_server_connect.rs`.

use std::net::SocketAddr;
use std::time::Duration;

use kinform_tests::kubectl::Kubectl;
use kinform_testserver::TestApiServer;
use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::process::Child;

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
    let out = k.exec_output(&["web", "--", "echo", "hi"], None).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "hi\n");

    // exec with stdin (-i): cat echoes it until kubectl closes stdin (v5 close signal)
    let out = k
        .exec_output(
            &["-i", "web", "--", "cat"],
            Some(b"from stdin\nsecond line\n"),
        )
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "from stdin\nsecond line\n");

    // stderr and the exit code are propagated
    let out = k
        .exec_output(
            &[
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
        .exec_output(&["web", "-c", "nope", "--", "true"], None)
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

/// A loopback backend standing in for a pod's port: echoes each connection's bytes until the
/// client half-closes, then closes.
async fn echo_backend() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((conn, _)) = listener.accept().await {
            tokio::spawn(async move {
                let (mut rd, mut wr) = conn.into_split();
                let _ = tokio::io::copy(&mut rd, &mut wr).await;
                let _ = wr.shutdown().await;
            });
        }
    });
    addr
}

/// A pod `web` that kubectl agrees to forward to: kubectl refuses a pod whose phase is not
/// Running, and a new pod is Pending (no kubelet runs), so the test sets the status as the
/// kubelet would, through the status subresource.
async fn running_pod(server: &TestApiServer, k: &Kubectl) {
    server
        .create_object(json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {"containers": [{"name": "app", "image": "busybox",
                                     "ports": [{"containerPort": 80}]}]},
        }))
        .unwrap();
    k.run(&[
        "patch",
        "pod",
        "web",
        "--subresource=status",
        "--type=merge",
        "-p",
        r#"{"status":{"phase":"Running"}}"#,
    ])
    .await;
}

/// `kubectl port-forward pod/web :<remote>` on 127.0.0.1 (with `websockets` false, kubectl
/// is told to skip the WebSocket tunnel and upgrade to SPDY directly); returns the running
/// kubectl and the local port it printed.
async fn port_forward(k: &Kubectl, remote: u16, websockets: bool) -> (Child, u16) {
    let spec = format!(":{remote}");
    let mut cmd = k.command(&["port-forward", "pod/web", &spec, "--address", "127.0.0.1"]);
    cmd.env(
        "KUBECTL_PORT_FORWARD_WEBSOCKETS",
        if websockets { "true" } else { "false" },
    )
    .stdout(std::process::Stdio::piped())
    .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().expect("run kubectl port-forward");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let local = tokio::time::timeout(Duration::from_secs(30), async {
        while let Some(line) = lines.next_line().await.unwrap() {
            // "Forwarding from 127.0.0.1:PORT -> REMOTE"
            if let Some(rest) = line.strip_prefix("Forwarding from 127.0.0.1:") {
                let port = rest.split(' ').next().unwrap_or_default();
                return port.parse::<u16>().unwrap();
            }
        }
        panic!("kubectl port-forward ended before forwarding");
    })
    .await
    .expect("kubectl port-forward printed no Forwarding line in 30s");
    // Keep draining stdout ("Handling connection for ...") so kubectl never blocks on it.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    (child, local)
}

/// Sends `payload` through the forward, half-closes, and returns all that comes back.
async fn round_trip(local: u16, payload: &[u8]) -> Vec<u8> {
    let conn = TcpStream::connect(("127.0.0.1", local)).await.unwrap();
    let (mut rd, mut wr) = conn.into_split();
    let send = async {
        wr.write_all(payload).await.unwrap();
        wr.shutdown().await.unwrap();
    };
    let recv = async {
        let mut got = Vec::new();
        rd.read_to_end(&mut got).await.unwrap();
        got
    };
    let (_, got) =
        tokio::time::timeout(Duration::from_secs(60), async { tokio::join!(send, recv) })
            .await
            .expect("port-forwarded round trip did not finish in 60s");
    got
}

/// Distinct, non-repeating bytes (every value 0..=255, NULs and high bytes included).
fn payload(seed: u32, len: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(2_654_435_761).max(1);
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as u8
        })
        .collect()
}

/// kubelet behaviour checked: each local connection is a pair of SPDY streams (error and
/// data, paired by `requestID`) whose data stream is connected to the pod's port; bytes go
/// both ways unchanged; the client's half-close reaches the pod's socket (the echo ends) and
/// the pod's close ends the local connection; one forward serves many connections, at the
/// same time and one after another. Run over both of kubectl's transports.
async fn forwards_connections(websockets: bool) {
    let server = TestApiServer::start().await.unwrap();
    let Some(k) = Kubectl::for_server(&server, "the kubectl port-forward test") else {
        return;
    };
    running_pod(&server, &k).await;
    server.port_forward_backend("default", "web", 80, echo_backend().await);
    let (mut child, local) = port_forward(&k, 80, websockets).await;

    // several connections at once, each larger than one SPDY data frame and one WebSocket
    // message
    let payloads: Vec<Vec<u8>> = (0..4)
        .map(|i| payload(i + 1, 300_000 + i as usize))
        .collect();
    let results =
        futures_util::future::join_all(payloads.iter().map(|p| round_trip(local, p))).await;
    for (sent, got) in payloads.iter().zip(&results) {
        assert_eq!(got.len(), sent.len());
        assert!(got == sent, "the echoed bytes differ from those sent");
    }
    // then more, one after another, through the same forward
    for i in 0..3 {
        let p = payload(100 + i, 1 + 7_000 * i as usize);
        assert_eq!(round_trip(local, &p).await, p);
    }
    // an empty connection: the half-close alone goes through and the pod's close comes back
    assert_eq!(round_trip(local, b"").await, b"");

    // Which transport kubectl used: the tunnel is a WebSocket GET, the fallback a SPDY POST.
    let method = if websockets { "GET " } else { "POST " };
    let upgrades: Vec<String> = server
        .requests()
        .into_iter()
        .filter(|r| r.contains("/pods/web/portforward"))
        .collect();
    assert!(
        !upgrades.is_empty() && upgrades.iter().all(|r| r.starts_with(method)),
        "{upgrades:?}"
    );
    child.start_kill().unwrap();
    let _ = child.wait().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_port_forward_through_the_websocket_tunnel() {
    forwards_connections(true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_port_forward_through_the_spdy_upgrade() {
    forwards_connections(false).await;
}

/// kubelet behaviour checked: when the pod's port cannot be reached, the kubelet writes
/// `error forwarding port P to pod ...` on the pair's error stream and closes both streams;
/// kubectl prints that message, the local connection ends with no data, and kubectl (1.30+)
/// stops forwarding ("lost connection to pod") and exits non-zero.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_port_forward_reports_a_missing_backend() {
    let server = TestApiServer::start().await.unwrap();
    let Some(k) = Kubectl::for_server(&server, "the kubectl port-forward error test") else {
        return;
    };
    running_pod(&server, &k).await;
    // port 80 has a backend, 81 has none
    server.port_forward_backend("default", "web", 80, echo_backend().await);
    let (mut child, local) = port_forward(&k, 81, true).await;
    assert_eq!(round_trip(local, b"hello?").await, b"");
    let status = tokio::time::timeout(Duration::from_secs(30), child.wait())
        .await
        .expect("kubectl kept forwarding after the error")
        .unwrap();
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .await
        .unwrap();
    assert!(!status.success(), "{stderr}");
    assert!(
        stderr.contains("error forwarding port 81 to pod default/web")
            && stderr.contains("no backend is registered"),
        "{stderr}"
    );
    assert!(stderr.contains("lost connection to pod"), "{stderr}");
}
