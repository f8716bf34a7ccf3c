//! The server over real TLS: HTTP/2 and HTTP/1.1, health, limits, timeouts, panics,
//! certificate rotation without restart, and graceful shutdown.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use http::{Method, StatusCode, Version};
use kinform_core::HasMetadata;
use kinform_webhook::admission::validator_fn;
use kinform_webhook::testing::{HttpVersion, IssuedCert, TestCa, TestClient};
use kinform_webhook::{
    MetricsSnapshot, Request, ServerBuilder, ServerError, Validator, Verdict, WebhookServer,
    Webhooks,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;

use crate::support::{Widget, admission_review, widget};

const VALIDATE: &str = "/validate-example-com-v1-widget";

struct Fixture {
    _dir: tempfile::TempDir,
    ca: TestCa,
    cert: PathBuf,
    key: PathBuf,
    first: IssuedCert,
    addr: std::net::SocketAddr,
    metrics: std::sync::Arc<kinform_webhook::ServerMetrics>,
    stop: CancellationToken,
    task: tokio::task::JoinHandle<()>,
}

impl Fixture {
    fn client(&self, version: HttpVersion) -> TestClient {
        TestClient::new(self.addr, "localhost", self.ca.ca_pem(), version).unwrap()
    }
    fn metrics(&self) -> MetricsSnapshot {
        self.metrics.snapshot()
    }
}

/// Denies widgets named `slow` after a long pause and panics on `boom`.
struct Behaviour;

impl Validator<Widget> for Behaviour {
    async fn validate(&self, request: &Request<Widget>) -> Verdict {
        match request.object.as_ref().map(|w| w.name()) {
            Some("slow") => {
                tokio::time::sleep(Duration::from_secs(30)).await;
                Verdict::deny("too late")
            }
            Some("boom") => panic!("the handler fails"),
            _ => Verdict::allow(),
        }
    }
}

async fn start(tweak: impl FnOnce(ServerBuilder) -> ServerBuilder) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let ca = TestCa::new().unwrap();
    let first = ca.issue(&["localhost", "127.0.0.1"]).unwrap();
    let (cert, key) = (dir.path().join("tls.crt"), dir.path().join("tls.key"));
    first.write(&cert, &key).unwrap();
    let builder = WebhookServer::builder(Webhooks::new().validate::<Widget, _>(Behaviour))
        .tls_files(&cert, &key)
        .cert_reload_interval(Duration::from_millis(50));
    let server = tweak(builder)
        .bind(([127, 0, 0, 1], 0).into())
        .await
        .unwrap();
    let addr = server.local_addr();
    assert_ne!(addr.port(), 0);
    let metrics = server.metrics();
    let stop = CancellationToken::new();
    let task = tokio::spawn(server.serve_until(stop.clone()));
    Fixture {
        _dir: dir,
        ca,
        cert,
        key,
        first,
        addr,
        metrics,
        stop,
        task,
    }
}

fn review_named(name: &str) -> Vec<u8> {
    let mut object = widget(1);
    object["metadata"]["name"] = name.into();
    serde_json::to_vec(&admission_review("CREATE", Some(object), None)).unwrap()
}

#[tokio::test]
async fn serves_reviews_over_http2_and_http1() {
    let f = start(|b| b).await;
    for (version, wire) in [
        (HttpVersion::Http2, Version::HTTP_2),
        (HttpVersion::Http1, Version::HTTP_11),
    ] {
        let client = f.client(version);
        let health = client.get("/healthz").await.unwrap();
        assert_eq!((health.status, health.version), (StatusCode::OK, wire));
        assert_eq!(&health.body[..], b"ok\n");
        let mut conn = client.connect().await.unwrap();
        assert_eq!(conn.peer_certificate(), &f.first.cert_der[..]);
        // Two reviews on one connection.
        for _ in 0..2 {
            let answer = conn.post(VALIDATE, review_named("w")).await.unwrap();
            assert_eq!((answer.status, answer.version), (StatusCode::OK, wire));
            assert_eq!(answer.json()["response"]["allowed"], true);
        }
    }
    assert_eq!(f.metrics().requests, 6);
}

/// A client that does not trust the server's CA fails its handshake; the server counts it
/// and goes on.
#[tokio::test]
async fn an_untrusting_client_fails_the_handshake() {
    let f = start(|b| b).await;
    let other = TestCa::new().unwrap();
    let client = TestClient::new(f.addr, "localhost", other.ca_pem(), HttpVersion::Http2).unwrap();
    assert!(client.get("/healthz").await.is_err());
    assert_eq!(
        f.client(HttpVersion::Http2)
            .get("/healthz")
            .await
            .unwrap()
            .status,
        StatusCode::OK
    );
    wait_for(|| f.metrics().tls_handshake_failures == 1).await;
}

async fn wait_for(mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn bodies_over_the_limit_get_413() {
    let f = start(|b| b.max_body_bytes(2048)).await;
    let big = serde_json::to_vec(&admission_review(
        "CREATE",
        Some(serde_json::json!({"padding": "x".repeat(4096)})),
        None,
    ))
    .unwrap();
    for version in [HttpVersion::Http2, HttpVersion::Http1] {
        let answer = f.client(version).post(VALIDATE, big.clone()).await.unwrap();
        assert_eq!(answer.status, StatusCode::PAYLOAD_TOO_LARGE);
        // Under the limit: answered.
        let answer = f
            .client(version)
            .post(VALIDATE, review_named("w"))
            .await
            .unwrap();
        assert_eq!(answer.status, StatusCode::OK);
    }
    // Without a Content-Length (chunked), the limit holds while reading.
    let status = raw_chunked_post(&f, &big).await;
    assert_eq!(status, 413);
    assert_eq!(f.metrics().too_large, 3);
}

/// An HTTP/1.1 POST with a chunked body over a raw TLS stream; the response's status code.
async fn raw_chunked_post(f: &Fixture, body: &[u8]) -> u16 {
    use rustls::pki_types::{CertificateDer, ServerName, pem::PemObject};
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(CertificateDer::from_pem_slice(f.ca.ca_pem().as_bytes()).unwrap())
        .unwrap();
    let config = rustls::ClientConfig::builder_with_provider(std::sync::Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    let tcp = tokio::net::TcpStream::connect(f.addr).await.unwrap();
    let mut tls = tokio_rustls::TlsConnector::from(std::sync::Arc::new(config))
        .connect(ServerName::try_from("localhost").unwrap(), tcp)
        .await
        .unwrap();
    let mut request = format!(
        "POST {VALIDATE} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
    )
    .into_bytes();
    for chunk in body.chunks(500) {
        request.extend(format!("{:x}\r\n", chunk.len()).as_bytes());
        request.extend(chunk);
        request.extend(b"\r\n");
    }
    request.extend(b"0\r\n\r\n");
    // The server may answer (and close) before the whole body is written.
    let _ = tls.write_all(&request).await;
    let mut head = [0u8; 12];
    tls.read_exact(&mut head).await.unwrap();
    std::str::from_utf8(&head[9..12]).unwrap().parse().unwrap()
}

#[tokio::test]
async fn malformed_requests_get_4xx() {
    let f = start(|b| b).await;
    let client = f.client(HttpVersion::Http2);
    let mut conn = client.connect().await.unwrap();
    let cases: Vec<(Method, &str, &[u8], StatusCode)> = vec![
        (
            Method::POST,
            VALIDATE,
            b"{not json",
            StatusCode::BAD_REQUEST,
        ),
        (Method::POST, VALIDATE, b"{}", StatusCode::BAD_REQUEST),
        (Method::POST, "/missing", b"{}", StatusCode::NOT_FOUND),
        (Method::GET, VALIDATE, b"", StatusCode::METHOD_NOT_ALLOWED),
        (
            Method::POST,
            "/healthz",
            b"",
            StatusCode::METHOD_NOT_ALLOWED,
        ),
    ];
    for (method, path, body, status) in cases {
        let answer = conn
            .send(method.clone(), path, bytes::Bytes::from_static(body))
            .await
            .unwrap();
        assert_eq!(answer.status, status, "{method} {path}");
    }
    assert_eq!(f.metrics().bad_requests, 5);
}

#[tokio::test]
async fn slow_handlers_time_out_and_panics_answer_500() {
    let f = start(|b| b.request_timeout(Duration::from_millis(300))).await;
    let mut conn = f.client(HttpVersion::Http2).connect().await.unwrap();
    let started = Instant::now();
    let answer = conn.post(VALIDATE, review_named("slow")).await.unwrap();
    assert_eq!(answer.status, StatusCode::GATEWAY_TIMEOUT);
    assert!(started.elapsed() < Duration::from_secs(5));
    let answer = conn.post(VALIDATE, review_named("boom")).await.unwrap();
    assert_eq!(answer.status, StatusCode::INTERNAL_SERVER_ERROR);
    // The connection and the server live on.
    let answer = conn.post(VALIDATE, review_named("w")).await.unwrap();
    assert_eq!(answer.status, StatusCode::OK);
    let m = f.metrics();
    assert_eq!((m.timeouts, m.handler_panics), (1, 1));
}

/// New files are served from the next handshake on, without a restart; connections already
/// open keep working; unusable files keep the previous certificate.
#[tokio::test]
async fn certificate_rotation_without_restart() {
    let f = start(|b| b).await;
    let client = f.client(HttpVersion::Http2);
    let mut before = client.connect().await.unwrap();
    assert_eq!(before.peer_certificate(), &f.first.cert_der[..]);

    let second = f.ca.issue(&["localhost"]).unwrap();
    second.write(&f.cert, &f.key).unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let conn = client.connect().await.unwrap();
        if conn.peer_certificate() == &second.cert_der[..] {
            break;
        }
        assert_eq!(conn.peer_certificate(), &f.first.cert_der[..]);
        assert!(
            Instant::now() < deadline,
            "the renewed certificate was never served"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(f.metrics().cert_reloads, 1);
    let answer = before.post(VALIDATE, review_named("w")).await.unwrap();
    assert_eq!(
        answer.status,
        StatusCode::OK,
        "an open connection keeps working"
    );

    // A half-written rotation: a certificate without its key.
    let third = f.ca.issue(&["localhost"]).unwrap();
    std::fs::write(&f.cert, &third.cert_pem).unwrap();
    wait_for(|| f.metrics().cert_reload_failures >= 1).await;
    let conn = client.connect().await.unwrap();
    assert_eq!(conn.peer_certificate(), &second.cert_der[..]);
    // The key arrives: the third is served.
    std::fs::write(&f.key, &third.key_pem).unwrap();
    wait_for(|| f.metrics().cert_reloads == 2).await;
    let conn = client.connect().await.unwrap();
    assert_eq!(conn.peer_certificate(), &third.cert_der[..]);
}

#[tokio::test]
async fn graceful_shutdown() {
    let f = start(|b| b.shutdown_grace(Duration::from_secs(2))).await;
    let mut open = f.client(HttpVersion::Http1).connect().await.unwrap();
    assert_eq!(
        open.post(VALIDATE, review_named("w")).await.unwrap().status,
        StatusCode::OK
    );
    f.stop.cancel();
    tokio::time::timeout(Duration::from_secs(5), f.task)
        .await
        .expect("serve returns after the shutdown")
        .unwrap();
    assert!(
        tokio::net::TcpStream::connect(f.addr).await.is_err(),
        "the listener is closed"
    );
}

#[tokio::test]
async fn unusable_tls_settings_fail_at_bind() {
    let hooks = || Webhooks::new().validate(validator_fn(|_: &Request<Widget>| Verdict::allow()));
    let any = ([127, 0, 0, 1], 0).into();
    assert!(matches!(
        WebhookServer::builder(hooks()).bind(any).await,
        Err(ServerError::NoTls)
    ));
    let dir = tempfile::tempdir().unwrap();
    let ca = TestCa::new().unwrap();
    let (a, b) = (
        ca.issue(&["localhost"]).unwrap(),
        ca.issue(&["localhost"]).unwrap(),
    );
    let (cert, key) = (dir.path().join("c"), dir.path().join("k"));
    std::fs::write(&cert, &a.cert_pem).unwrap();
    std::fs::write(&key, &b.key_pem).unwrap();
    let err = WebhookServer::builder(hooks())
        .tls_files(&cert, &key)
        .bind(any)
        .await
        .unwrap_err();
    assert!(matches!(err, ServerError::Tls { .. }), "{err}");
    assert!(err.to_string().contains("key"), "{err}");
    let err = WebhookServer::builder(hooks())
        .tls_files(dir.path().join("none"), &key)
        .bind(any)
        .await
        .unwrap_err();
    assert!(matches!(err, ServerError::Tls { .. }), "{err}");
}

/// Plain HTTP, for a server behind a TLS-terminating proxy, is a choice.
#[tokio::test]
async fn plain_http_when_asked() {
    let hooks = Webhooks::new().validate(validator_fn(|_: &Request<Widget>| Verdict::allow()));
    let server = WebhookServer::builder(hooks)
        .plain_http()
        .bind(([127, 0, 0, 1], 0).into())
        .await
        .unwrap();
    let addr = server.local_addr();
    let stop = CancellationToken::new();
    tokio::spawn(server.serve_until(stop.clone()));
    let mut tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    tcp.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut answer = String::new();
    tcp.read_to_string(&mut answer).await.unwrap();
    assert!(answer.starts_with("HTTP/1.1 200 OK"), "{answer}");
    assert!(answer.ends_with("ok\n"), "{answer}");
    stop.cancel();
}
