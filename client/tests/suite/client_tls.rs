//! The rustls path for real: an rcgen CA, server and client certificates, HTTP/2 through
//! ALPN, insecure-skip-tls-verify, tls-server-name, a CONNECT proxy, exec credential plugins
//! (token expiry and refresh on 401) and token files, all through kubeconfigs.

use std::sync::Arc;

use base64::Engine as _;
use k8s_openapi::api::core::v1::Pod;
use kinform_client::{Api, Client, Config};
use kinform_client::{KubeConfigOptions, Kubeconfig};
use kinform_tests::mock::{Pki, Reply, pod_json, serve, status_json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

fn b64(s: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(s)
}

fn ok_handler() -> kinform_tests::mock::Handler {
    Arc::new(|req| {
        let auth = req
            .headers
            .get("authorization")
            .map(|v| v.to_str().unwrap().to_owned())
            .unwrap_or_default();
        if auth.contains("stale") {
            return Reply::json(401, status_json(401, "Unauthorized", "token expired"));
        }
        Reply::json(200, pod_json("web", "1"))
    })
}

fn config_from_yaml(dir: &std::path::Path, yaml: &str) -> Config {
    let path = dir.join("config");
    std::fs::write(&path, yaml).unwrap();
    let kc = Kubeconfig::read_from(&path).unwrap();
    Config::from_custom_kubeconfig(kc, &KubeConfigOptions::default()).unwrap()
}

#[tokio::test]
async fn tls_with_ca_data_client_cert_and_http2() {
    let pki = Pki::new();
    let server = serve(Some(pki.server_config(true)), false, ok_handler()).await;
    let dir = tempfile::tempdir().unwrap();
    let yaml = format!(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\nclusters:\n- name: k\n  cluster:\n    server: {}\n    certificate-authority-data: {}\nusers:\n- name: u\n  user:\n    client-certificate-data: {}\n    client-key-data: {}\ncontexts:\n- name: c\n  context: {{cluster: k, user: u, namespace: default}}\n",
        server.url,
        b64(&pki.ca_pem),
        b64(&pki.client_cert_pem),
        b64(&pki.client_key_pem)
    );
    let config = config_from_yaml(dir.path(), &yaml);
    let debug = format!("{config:?}");
    assert!(!debug.contains("PRIVATE KEY"), "{debug}");
    let pods: Api<Pod> = Api::default_namespaced(Client::new(config).unwrap());
    pods.get("web").await.unwrap();
    pods.get("web").await.unwrap();
    let seen = server.requests();
    assert!(seen[0].client_cert);
    assert_eq!(seen[0].version, http::Version::HTTP_2);

    // Without HTTP/2 offered, HTTP/1.1 is used.
    let mut config = config_from_yaml(dir.path(), &yaml);
    config.http2 = false;
    Api::<Pod>::default_namespaced(Client::new(config).unwrap())
        .get("web")
        .await
        .unwrap();
    assert_eq!(
        server.requests().last().unwrap().version,
        http::Version::HTTP_11
    );
}

#[tokio::test]
async fn unknown_ca_fails_and_skip_verify_or_right_ca_file_succeeds() {
    let pki = Pki::new();
    let other = Pki::new();
    let server = serve(Some(pki.server_config(false)), false, ok_handler()).await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("ca.pem"), &pki.ca_pem).unwrap();
    std::fs::write(dir.path().join("other.pem"), &other.ca_pem).unwrap();

    let with = |extra: &str| {
        format!(
            "current-context: c\nclusters:\n- name: k\n  cluster:\n    server: {}\n{extra}contexts:\n- name: c\n  context: {{cluster: k}}\n",
            server.url
        )
    };
    // Wrong CA: a transport error naming the request.
    let config = config_from_yaml(dir.path(), &with("    certificate-authority: other.pem\n"));
    let err = Api::<Pod>::namespaced(Client::new(config).unwrap(), "default")
        .get("web")
        .await
        .unwrap_err();
    assert!(err.is_transport(), "{err:?}");
    assert!(
        err.to_string()
            .contains("GET /api/v1/namespaces/default/pods/web"),
        "{err}"
    );

    // The right CA as a file relative to the kubeconfig.
    let config = config_from_yaml(dir.path(), &with("    certificate-authority: ca.pem\n"));
    Api::<Pod>::namespaced(Client::new(config).unwrap(), "default")
        .get("web")
        .await
        .unwrap();
    assert!(!server.requests()[0].client_cert);

    // insecure-skip-tls-verify.
    let config = config_from_yaml(dir.path(), &with("    insecure-skip-tls-verify: true\n"));
    Api::<Pod>::namespaced(Client::new(config).unwrap(), "default")
        .get("web")
        .await
        .unwrap();

    // tls-server-name: connect to 127.0.0.1, verify as kubernetes.internal (in the SANs).
    let config = config_from_yaml(
        dir.path(),
        &with("    certificate-authority: ca.pem\n    tls-server-name: kubernetes.internal\n"),
    );
    Api::<Pod>::namespaced(Client::new(config).unwrap(), "default")
        .get("web")
        .await
        .unwrap();
    // ... and a name not in the SANs fails.
    let config = config_from_yaml(
        dir.path(),
        &with("    certificate-authority: ca.pem\n    tls-server-name: evil.example\n"),
    );
    assert!(
        Api::<Pod>::namespaced(Client::new(config).unwrap(), "default")
            .get("web")
            .await
            .unwrap_err()
            .is_transport()
    );
}

/// A minimal CONNECT proxy counting its tunnels.
async fn connect_proxy() -> (String, Arc<std::sync::atomic::AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let count = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let c = count.clone();
    tokio::spawn(async move {
        loop {
            let Ok((mut inbound, _)) = listener.accept().await else {
                return;
            };
            let c = c.clone();
            tokio::spawn(async move {
                let mut head = Vec::new();
                while !head.ends_with(b"\r\n\r\n") {
                    head.push(inbound.read_u8().await.unwrap());
                }
                let head = String::from_utf8(head).unwrap();
                let target = head.split_whitespace().nth(1).unwrap().to_owned();
                assert!(head.starts_with("CONNECT "));
                assert!(head.contains("Proxy-Authorization: Basic "), "{head}");
                let mut outbound = tokio::net::TcpStream::connect(target).await.unwrap();
                c.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                inbound
                    .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
                    .await
                    .unwrap();
                let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
            });
        }
    });
    (format!("http://user:pass@{addr}"), count)
}

#[tokio::test]
async fn proxy_url_tunnels_with_connect() {
    let pki = Pki::new();
    let server = serve(Some(pki.server_config(false)), false, ok_handler()).await;
    let (proxy, tunnels) = connect_proxy().await;
    let dir = tempfile::tempdir().unwrap();
    let yaml = format!(
        "current-context: c\nclusters:\n- name: k\n  cluster:\n    server: {}\n    certificate-authority-data: {}\n    proxy-url: {proxy}\nusers:\n- name: u\n  user: {{token: abc}}\ncontexts:\n- name: c\n  context: {{cluster: k, user: u}}\n",
        server.url,
        b64(&pki.ca_pem)
    );
    let config = config_from_yaml(dir.path(), &yaml);
    Api::<Pod>::namespaced(Client::new(config).unwrap(), "default")
        .get("web")
        .await
        .unwrap();
    assert_eq!(tunnels.load(std::sync::atomic::Ordering::SeqCst), 1);
    assert_eq!(server.requests()[0].headers["authorization"], "Bearer abc");
}

const PLUGIN: &str = r#"
n=$(cat "$COUNT_FILE" 2>/dev/null || echo 0)
n=$((n+1))
echo $n > "$COUNT_FILE"
printf '%s' "$KUBERNETES_EXEC_INFO" > "$INFO_FILE"
token="fresh-$n"
if [ "$n" = 1 ] && [ "$FIRST_STALE" = 1 ]; then token="stale-$n"; fi
printf '{"apiVersion":"%s","kind":"ExecCredential","status":{"token":"%s","expirationTimestamp":"%s"}}' "$API_VERSION" "$token" "$EXPIRY"
"#;

fn exec_kubeconfig(
    server: &str,
    dir: &std::path::Path,
    api_version: &str,
    expiry: &str,
    first_stale: bool,
) -> String {
    std::fs::write(dir.join("plugin.sh"), PLUGIN).unwrap();
    format!(
        r#"current-context: c
clusters:
- name: k
  cluster: {{server: "{server}"}}
users:
- name: u
  user:
    exec:
      apiVersion: {api_version}
      command: sh
      args: ["{dir}/plugin.sh"]
      provideClusterInfo: true
      env:
      - {{name: COUNT_FILE, value: "{dir}/count"}}
      - {{name: INFO_FILE, value: "{dir}/info"}}
      - {{name: API_VERSION, value: "{api_version}"}}
      - {{name: EXPIRY, value: "{expiry}"}}
      - {{name: FIRST_STALE, value: "{stale}"}}
contexts:
- name: c
  context: {{cluster: k, user: u}}
"#,
        dir = dir.display(),
        stale = u8::from(first_stale),
    )
}

/// The pods of namespace `default`, through a client of the kubeconfig `yaml` whose files
/// are in `dir`.
fn pods_of(dir: &std::path::Path, yaml: &str) -> Api<Pod> {
    Api::namespaced(Client::new(config_from_yaml(dir, yaml)).unwrap(), "default")
}

fn runs(dir: &std::path::Path) -> u32 {
    std::fs::read_to_string(dir.join("count"))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

#[tokio::test]
async fn exec_plugin_token_is_cached_until_expiry() {
    let server = serve(None, false, ok_handler()).await;
    let dir = tempfile::tempdir().unwrap();
    let yaml = exec_kubeconfig(
        &server.url,
        dir.path(),
        "client.authentication.k8s.io/v1",
        "2999-01-01T00:00:00Z",
        false,
    );
    let pods = pods_of(dir.path(), &yaml);
    pods.get("web").await.unwrap();
    pods.get("web").await.unwrap();
    assert_eq!(runs(dir.path()), 1);
    assert_eq!(
        server.requests()[1].headers["authorization"],
        "Bearer fresh-1"
    );
    let info: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("info")).unwrap()).unwrap();
    assert_eq!(info["kind"], "ExecCredential");
    assert_eq!(info["spec"]["interactive"], false);
    assert_eq!(
        info["spec"]["cluster"]["server"]
            .as_str()
            .unwrap()
            .trim_end_matches('/'),
        server.url
    );
}

#[tokio::test]
async fn exec_plugin_runs_again_after_expiry_and_after_401() {
    let server = serve(None, false, ok_handler()).await;
    // v1beta1 with an expired credential: each request runs the plugin again.
    let dir = tempfile::tempdir().unwrap();
    let yaml = exec_kubeconfig(
        &server.url,
        dir.path(),
        "client.authentication.k8s.io/v1beta1",
        "2000-01-01T00:00:00Z",
        false,
    );
    let pods = pods_of(dir.path(), &yaml);
    pods.get("web").await.unwrap();
    pods.get("web").await.unwrap();
    assert_eq!(runs(dir.path()), 2);

    // A 401 makes the client fetch a new credential and retry once.
    let dir = tempfile::tempdir().unwrap();
    let yaml = exec_kubeconfig(
        &server.url,
        dir.path(),
        "client.authentication.k8s.io/v1",
        "2999-01-01T00:00:00Z",
        true,
    );
    let pods = pods_of(dir.path(), &yaml);
    pods.get("web").await.unwrap();
    assert_eq!(runs(dir.path()), 2);
}

#[tokio::test]
async fn exec_plugin_failures_are_typed() {
    let server = serve(None, false, ok_handler()).await;
    let dir = tempfile::tempdir().unwrap();
    let yaml = format!(
        "current-context: c\nclusters:\n- name: k\n  cluster: {{server: \"{}\"}}\nusers:\n- name: u\n  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: /nonexistent/kubelogin\n      installHint: install kubelogin\ncontexts:\n- name: c\n  context: {{cluster: k, user: u}}\n",
        server.url
    );
    let pods = pods_of(dir.path(), &yaml);
    let err = pods.get("web").await.unwrap_err();
    assert!(
        matches!(
            err,
            kinform_client::Error::Config(kinform_client::ConfigError::Exec { .. })
        ),
        "{err:?}"
    );
    assert!(err.to_string().contains("install kubelogin"), "{err}");
    assert!(server.requests().is_empty());
}

#[tokio::test]
async fn token_file_is_sent() {
    let server = serve(None, false, ok_handler()).await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("token"), "file-token\n").unwrap();
    let yaml = format!(
        "current-context: c\nclusters:\n- name: k\n  cluster: {{server: \"{}\"}}\nusers:\n- name: u\n  user: {{tokenFile: token}}\ncontexts:\n- name: c\n  context: {{cluster: k, user: u}}\n",
        server.url
    );
    let pods = pods_of(dir.path(), &yaml);
    pods.get("web").await.unwrap();
    assert_eq!(
        server.requests()[0].headers["authorization"],
        "Bearer file-token"
    );
}
