//! Connect subresources through the client against TestApiServer: exec (stdout, stderr,
//! exit codes, stdin with the v5 close signal), attach, TTY resize, port-forward through a
//! loopback echo backend, proxy GET/POST through a loopback HTTP backend, and the errors
//! (missing pod 404, missing container 400, no backend).

use std::convert::Infallible;
use std::net::SocketAddr;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use k8s_openapi::api::core::v1::{Container, Pod, Service};
use kinform::Api;
use kinform::client::connect::V5_PROTOCOL;
use kinform::client::{AttachParams, ConnectError, PostParams, TerminalSize};
use kinform::testing::TestApiServer;
use kinform_tests::env::{env, pod};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

async fn with_pod(name: &str) -> (kinform_tests::env::Env, Api<Pod>) {
    let env = env().await;
    let pods: Api<Pod> = Api::namespaced(env.client.clone(), "default");
    pods.create(&PostParams::default(), &pod(name))
        .await
        .unwrap();
    (env, pods)
}

async fn read_all(r: Option<tokio::io::DuplexStream>) -> String {
    let mut s = String::new();
    r.expect("stream requested")
        .read_to_string(&mut s)
        .await
        .unwrap();
    s
}

#[tokio::test]
async fn exec_echo_reports_stdout_and_success() {
    let (_env, pods) = with_pod("web").await;
    let mut p = pods
        .exec("web", ["echo", "hi", "there"], &AttachParams::default())
        .await
        .unwrap();
    assert_eq!(p.protocol(), V5_PROTOCOL);
    let (out, err) = tokio::join!(read_all(p.stdout()), read_all(p.stderr()));
    assert_eq!(out, "hi there\n");
    assert_eq!(err, "");
    let status = p.join().await.unwrap();
    assert!(status.success());
    assert_eq!(status.exit_code(), Some(0));
}

#[tokio::test]
async fn exec_separates_stderr_and_reports_the_exit_code() {
    let (_env, pods) = with_pod("web").await;
    let mut p = pods
        .exec(
            "web",
            ["sh", "-c", "echo out; echo 'to err' >&2; exit 3"],
            &AttachParams::default().container("app"),
        )
        .await
        .unwrap();
    let (out, err) = tokio::join!(read_all(p.stdout()), read_all(p.stderr()));
    assert_eq!((out.as_str(), err.as_str()), ("out\n", "to err\n"));
    let status = p.join().await.unwrap();
    assert_eq!(status.exit_code(), Some(3));
    assert_eq!(status.status().reason.as_deref(), Some("NonZeroExitCode"));
}

#[tokio::test]
async fn exec_cat_echoes_stdin_until_it_is_closed() {
    let (_env, pods) = with_pod("web").await;
    let mut p = pods
        .exec("web", ["cat"], &AttachParams::default().stdin(true))
        .await
        .unwrap();
    let mut stdin = p.stdin().unwrap();
    let input = "line one\n".repeat(5000);
    let writer = {
        let input = input.clone();
        tokio::spawn(async move {
            stdin.write_all(input.as_bytes()).await.unwrap();
            stdin.shutdown().await.unwrap();
        })
    };
    let out = read_all(p.stdout()).await;
    writer.await.unwrap();
    assert_eq!(out.len(), input.len());
    assert_eq!(out, input);
    assert!(p.join().await.unwrap().success());
}

#[tokio::test]
async fn exec_unknown_command_is_a_failure_status() {
    let (_env, pods) = with_pod("web").await;
    let p = pods
        .exec("web", ["frobnicate"], &AttachParams::default())
        .await
        .unwrap();
    let status = p.join().await.unwrap();
    assert!(!status.success());
    assert_eq!(status.exit_code(), None);
    assert!(
        status.message().contains("frobnicate"),
        "{}",
        status.message()
    );
}

#[tokio::test]
async fn exec_env_lists_the_container_environment() {
    let env = env().await;
    let pods: Api<Pod> = Api::namespaced(env.client.clone(), "default");
    let mut p = pod("web");
    let spec = p.spec.as_mut().unwrap();
    spec.containers[0].env = Some(vec![k8s_openapi::api::core::v1::EnvVar {
        name: "GREETING".into(),
        value: Some("hello".into()),
        ..Default::default()
    }]);
    pods.create(&PostParams::default(), &p).await.unwrap();
    let mut proc = pods
        .exec("web", ["env"], &AttachParams::default())
        .await
        .unwrap();
    let out = read_all(proc.stdout()).await;
    assert!(
        out.contains("HOSTNAME=web\n") && out.contains("GREETING=hello\n"),
        "{out}"
    );
    proc.join().await.unwrap();
}

#[tokio::test]
async fn registered_handler_sees_command_and_stdin() {
    let (env, pods) = with_pod("web").await;
    env.server.on_exec("default", "web", |mut ctx| async move {
        let mut input = String::new();
        ctx.stdin
            .read_to_string(&mut input)
            .await
            .map_err(|e| e.to_string())?;
        let line = format!("{} {:?} got {input:?}\n", ctx.container, ctx.command);
        ctx.stdout
            .write_all(line.as_bytes())
            .await
            .map_err(|e| e.to_string())?;
        Ok(7)
    });
    let mut p = pods
        .exec(
            "web",
            ["count", "--fast"],
            &AttachParams::default().stdin(true),
        )
        .await
        .unwrap();
    let mut stdin = p.stdin().unwrap();
    stdin.write_all(b"abc").await.unwrap();
    drop(stdin);
    let out = read_all(p.stdout()).await;
    assert_eq!(out, "app [\"count\", \"--fast\"] got \"abc\"\n");
    assert_eq!(p.join().await.unwrap().exit_code(), Some(7));
}

#[tokio::test]
async fn attach_echoes_stdin_by_default() {
    let (_env, pods) = with_pod("web").await;
    let mut p = pods
        .attach("web", &AttachParams::default().stdin(true).stderr(false))
        .await
        .unwrap();
    let mut stdin = p.stdin().unwrap();
    stdin.write_all(b"attached\n").await.unwrap();
    stdin.shutdown().await.unwrap();
    assert_eq!(read_all(p.stdout()).await, "attached\n");
    assert!(p.join().await.unwrap().success());
}

#[tokio::test]
async fn tty_resizes_reach_the_process() {
    let (env, pods) = with_pod("web").await;
    env.server.on_exec("default", "web", |mut ctx| async move {
        assert!(ctx.tty);
        let mut seen = Vec::new();
        while seen.len() < 2 {
            match ctx.resize.recv().await {
                Some(size) => seen.push(format!("{}x{}", size.width, size.height)),
                None => break,
            }
        }
        ctx.stdout
            .write_all(seen.join(",").as_bytes())
            .await
            .map_err(|e| e.to_string())?;
        Ok(0)
    });
    let mut p = pods
        .exec("web", ["bash"], &AttachParams::interactive_tty())
        .await
        .unwrap();
    let sizes = p.terminal_size().unwrap();
    sizes
        .send(TerminalSize {
            width: 80,
            height: 24,
        })
        .await
        .unwrap();
    sizes
        .send(TerminalSize {
            width: 120,
            height: 40,
        })
        .await
        .unwrap();
    assert_eq!(read_all(p.stdout()).await, "80x24,120x40");
    assert!(p.stderr().is_none());
    assert!(p.join().await.unwrap().success());
}

#[tokio::test]
async fn exec_errors_keep_the_server_status() {
    let (_env, pods) = with_pod("web").await;
    let missing = pods
        .exec("nope", ["echo"], &AttachParams::default())
        .await
        .unwrap_err();
    assert!(missing.is_not_found(), "{missing}");
    let bad = pods
        .exec(
            "web",
            ["echo"],
            &AttachParams::default().container("sidecar"),
        )
        .await
        .unwrap_err();
    assert_eq!(bad.code(), Some(400), "{bad}");
    assert!(bad.to_string().contains("sidecar"), "{bad}");
    // Invalid options are refused before anything is sent.
    let invalid = pods
        .exec("web", ["echo"], &AttachParams::default().tty(true))
        .await
        .unwrap_err();
    assert!(invalid.is_transport(), "{invalid}");
}

#[tokio::test]
async fn exec_needs_a_container_name_when_the_pod_has_several() {
    let env = env().await;
    let pods: Api<Pod> = Api::namespaced(env.client.clone(), "default");
    let mut p = pod("two");
    p.spec.as_mut().unwrap().containers.push(Container {
        name: "sidecar".into(),
        ..Container::default()
    });
    pods.create(&PostParams::default(), &p).await.unwrap();
    let err = pods
        .exec("two", ["true"], &AttachParams::default())
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some(400));
    assert!(err.to_string().contains("app sidecar"), "{err}");
    let ok = pods
        .exec(
            "two",
            ["true"],
            &AttachParams::default().container("sidecar"),
        )
        .await
        .unwrap();
    assert!(ok.join().await.unwrap().success());
}

/// A loopback TCP server echoing every connection's bytes back.
async fn echo_backend() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut conn, _)) = listener.accept().await {
            tokio::spawn(async move {
                let (mut r, mut w) = conn.split();
                let _ = tokio::io::copy(&mut r, &mut w).await;
            });
        }
    });
    addr
}

#[tokio::test]
async fn portforward_round_trips_through_the_backend() {
    let (env, pods) = with_pod("web").await;
    let echo = echo_backend().await;
    env.server
        .port_forward_backend("default", "web", 8080, echo);
    env.server
        .port_forward_backend("default", "web", 9090, echo);
    let mut pf = pods.portforward("web", &[8080, 9090]).await.unwrap();
    assert_eq!(pf.ports(), &[8080, 9090]);
    for (port, msg) in [(8080u16, &b"ping 8080"[..]), (9090, &b"ping 9090"[..])] {
        let mut s = pf.take_stream(port).unwrap();
        s.write_all(msg).await.unwrap();
        let mut back = vec![0u8; msg.len()];
        s.read_exact(&mut back).await.unwrap();
        assert_eq!(back, msg);
    }
    assert!(pf.take_stream(8080).is_none());
    pf.abort();
}

#[tokio::test]
async fn portforward_reports_a_missing_backend_on_the_error_channel() {
    let (_env, pods) = with_pod("web").await;
    let mut pf = pods.portforward("web", &[5432]).await.unwrap();
    let error = pf
        .take_error(5432)
        .unwrap()
        .await
        .expect("an error message");
    assert!(
        error.contains("5432") && error.contains("no backend"),
        "{error}"
    );
    let mut s = pf.take_stream(5432).unwrap();
    let mut rest = Vec::new();
    s.read_to_end(&mut rest).await.unwrap();
    assert!(rest.is_empty());
    pf.join().await.unwrap();
}

#[tokio::test]
async fn portforward_to_a_missing_pod_is_not_found() {
    let (_env, pods) = with_pod("web").await;
    let err = pods.portforward("ghost", &[80]).await.unwrap_err();
    assert!(err.is_not_found(), "{err}");
    let err = pods.portforward("web", &[]).await.unwrap_err();
    assert!(err.is_transport(), "{err}");
}

/// A loopback HTTP server answering `METHOD path?query body` as text (201 for POST).
async fn http_backend() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((conn, _)) = listener.accept().await {
            tokio::spawn(async move {
                let svc = hyper::service::service_fn(
                    |req: http::Request<hyper::body::Incoming>| async move {
                        let method = req.method().clone();
                        let pq = req
                            .uri()
                            .path_and_query()
                            .map(|p| p.to_string())
                            .unwrap_or_default();
                        let body = req.into_body().collect().await.unwrap().to_bytes();
                        let text = format!("{method} {pq} {}", String::from_utf8_lossy(&body));
                        let mut resp = http::Response::new(Full::new(Bytes::from(text)));
                        if method == http::Method::POST {
                            *resp.status_mut() = http::StatusCode::CREATED;
                        }
                        resp.headers_mut()
                            .insert("x-backend", "yes".parse().unwrap());
                        Ok::<_, Infallible>(resp)
                    },
                );
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(conn), svc)
                    .await;
            });
        }
    });
    format!("http://{addr}")
}

#[tokio::test]
async fn proxy_get_and_post_reach_the_backend() {
    let (env, pods) = with_pod("web").await;
    env.server
        .proxy_backend("pods", "default", "web", &http_backend().await);
    let body = pods
        .proxy_get("web:8080", "/healthz?verbose=1")
        .await
        .unwrap();
    assert_eq!(body, b"GET /healthz?verbose=1 ");
    let req = http::Request::post("/items")
        .body(b"{\"a\":1}".to_vec())
        .unwrap();
    let resp = pods.proxy("web", req).await.unwrap();
    assert_eq!(resp.status(), http::StatusCode::CREATED);
    assert_eq!(resp.headers()["x-backend"], "yes");
    assert_eq!(resp.text().await.unwrap(), "POST /items {\"a\":1}");
}

#[tokio::test]
async fn proxy_to_services_and_nodes() {
    let env = env().await;
    let backend = http_backend().await;
    let services: Api<Service> = Api::namespaced(env.client.clone(), "default");
    let svc: Service =
        serde_json::from_value(serde_json::json!({"metadata": {"name": "api"}})).unwrap();
    services.create(&PostParams::default(), &svc).await.unwrap();
    env.server
        .proxy_backend("services", "default", "api", &backend);
    let body = services.proxy_get("api:http", "/v1/things").await.unwrap();
    assert_eq!(body, b"GET /v1/things ");

    env.server
        .register_resource(kinform::testing::ResourceInfo::new(
            "", "v1", "Node", "nodes", false,
        ));
    let nodes: Api<k8s_openapi::api::core::v1::Node> = Api::all(env.client.clone());
    let node = serde_json::from_value(serde_json::json!({"metadata": {"name": "n1"}})).unwrap();
    nodes.create(&PostParams::default(), &node).await.unwrap();
    env.server.proxy_backend("nodes", "", "n1", &backend);
    let body = nodes.proxy_get("n1", "/metrics").await.unwrap();
    assert_eq!(body, b"GET /metrics ");
}

#[tokio::test]
async fn proxy_errors_keep_the_server_status() {
    let (_env, pods) = with_pod("web").await;
    let absent = pods.proxy_get("web", "/").await.unwrap_err();
    assert_eq!(absent.code(), Some(503), "{absent}");
    assert!(absent.to_string().contains("no proxy backend"), "{absent}");
    let missing = pods.proxy_get("ghost", "/").await.unwrap_err();
    assert!(missing.is_not_found(), "{missing}");
    // The raw answer is available too.
    let resp = pods
        .proxy("web", http::Request::get("/").body(Vec::new()).unwrap())
        .await
        .unwrap();
    assert_eq!(resp.status(), http::StatusCode::SERVICE_UNAVAILABLE);
}

/// A server that accepts the upgrade and then sends a frame on a channel the protocol does
/// not have, or cuts the connection: typed errors, no panic.
#[tokio::test]
async fn a_cut_connection_is_a_typed_error() {
    let server = TestApiServer::start().await.unwrap();
    let client = server.client().unwrap();
    let pods: Api<Pod> = Api::namespaced(client, "default");
    pods.create(&PostParams::default(), &pod("web"))
        .await
        .unwrap();
    server.on_exec("default", "web", |_ctx| async move {
        // Never ends: the server is shut down under it.
        std::future::pending::<kinform::testing::ExecResult>().await
    });
    let p = pods
        .exec("web", ["hang"], &AttachParams::default())
        .await
        .unwrap();
    server.shutdown().await;
    match p.join().await {
        Err(ConnectError::WebSocket { request, .. })
        | Err(ConnectError::Closed { request, .. }) => {
            assert!(request.contains("/pods/web/exec"), "{request}");
        }
        other => panic!("expected a connection error, got {other:?}"),
    }
}

/// kube-apiserver reads text WebSocket messages as data, as binary ones (apimachinery's
/// wsstream receives every message as bytes); the Python `kubernetes` client writes stdin as
/// text messages. A raw WebSocket client writes `cat`'s stdin as text and reads it back.
#[tokio::test]
async fn exec_accepts_text_messages_as_stdin() {
    use futures_util::{SinkExt as _, StreamExt as _};
    use tokio_tungstenite::tungstenite::Message;
    use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;

    let (env, _pods) = with_pod("web").await;
    let url = format!(
        "ws://{}/api/v1/namespaces/default/pods/web/exec?command=cat&stdin=true&stdout=true",
        env.server.addr()
    );
    let mut req = url.into_client_request().unwrap();
    req.headers_mut()
        .insert("Sec-WebSocket-Protocol", V5_PROTOCOL.parse().unwrap());
    let tcp = tokio::net::TcpStream::connect(env.server.addr())
        .await
        .unwrap();
    let (mut ws, resp) = tokio_tungstenite::client_async(req, tcp).await.unwrap();
    assert_eq!(
        resp.headers()["Sec-WebSocket-Protocol"],
        V5_PROTOCOL,
        "the server picks the v5 protocol"
    );
    ws.send(Message::Text("\u{0}hello from text".into()))
        .await
        .unwrap();
    // v5's close signal for stdin: `cat` sees the end of its input and exits.
    ws.send(Message::Binary(Bytes::from_static(&[255, 0])))
        .await
        .unwrap();
    let mut stdout = Vec::new();
    while let Some(Ok(msg)) = ws.next().await {
        match msg {
            Message::Binary(b) if b.first() == Some(&1) => stdout.extend_from_slice(&b[1..]),
            Message::Close(_) => break,
            _ => {}
        }
    }
    assert_eq!(String::from_utf8(stdout).unwrap(), "hello from text");
}
