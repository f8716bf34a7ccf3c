//! Secrets never leave the configuration (issue #19): a kubeconfig that does not parse is
//! reported by file, line and field path without quoting any value; `Debug` of a kubeconfig
//! and of a `Config` hides tokens, passwords, key data, auth-provider settings, exec
//! arguments and env values; a hung exec plugin is killed with its process group, and so is
//! one whose run is cancelled.

use std::path::Path;
use std::time::{Duration, Instant};

use kinform_client::config::{ExecAuth, ExecConfig, run_exec_plugin};
use kinform_client::{Config, ConfigError, KubeConfigOptions, Kubeconfig};
use proptest::prelude::*;

const SECRET: &str = "S3CR3T";

fn parse_error(text: &str) -> String {
    match Kubeconfig::parse(text, Path::new("/home/me/.kube/config")) {
        Err(e @ ConfigError::ParseKubeconfig { .. }) => e.to_string(),
        Err(other) => panic!("not a parse error: {other}"),
        Ok(k) => panic!("parsed: {k:?}"),
    }
}

#[test]
fn the_reported_token_is_not_quoted_and_the_error_names_file_line_and_path() {
    let e = parse_error("users: [{name: u, user: {token: {a: S3CR3T}}}]");
    assert!(!e.contains(SECRET), "{e}");
    assert!(e.contains("/home/me/.kube/config"), "{e}");
    assert!(e.contains("line 1"), "{e}");
    assert!(e.contains("users[0].user.token"), "{e}");
}

#[test]
fn no_credential_value_appears_in_any_parse_error() {
    let cases = [
        // Wrong shapes under every credential key.
        "users:\n- name: u\n  user:\n    token: [S3CR3T]\n",
        "users:\n- name: u\n  user:\n    password: {x: S3CR3T}\n",
        "users:\n- name: u\n  user:\n    client-key-data: {k: \"S3CR3T\"}\n",
        "users:\n- name: u\n  user:\n    auth-provider: {name: oidc, config: {refresh-token: [S3CR3T]}}\n",
        "users:\n- name: u\n  user:\n    exec: {command: c, env: [{name: T, value: {v: S3CR3T}}]}\n",
        "users:\n- name: u\n  user:\n    exec: {command: c, env: [{name: T}], args: [S3CR3T]}\n",
        "users:\n- name: u\n  user:\n    exec: {args: [S3CR3T]}\n",
        // A secret used where a boolean belongs.
        "clusters:\n- name: c\n  cluster:\n    insecure-skip-tls-verify: S3CR3T\n",
        "clusters:\n- name: c\n  cluster: {insecure-skip-tls-verify: 'S3CR3T'}\n",
        // Broken YAML around a secret.
        "users:\n- name: u\n  user:\n    token: \"S3CR3T\n",
        "users:\n- name: u\n  user:\n    token: S3CR3T\n   - x: [\n",
        "users: [{name: u, user: {token: 'S3CR3T}]\n",
        "users:\n- name: u\n  user:\n    token: &a S3CR3T\n    password: *b\n",
    ];
    for text in cases {
        let e = parse_error(text);
        eprintln!("{e}");
        assert!(!e.contains(SECRET), "{text:?} gave {e}");
        assert!(e.contains("line "), "{text:?} gave {e}");
    }
    // The path names the field without its value (`value` is required, so the path stops at
    // its variable).
    let e = parse_error(cases[4]);
    assert!(e.contains("users[0].user.exec.env[0]"), "{e}");
    let e = parse_error(cases[6]);
    assert!(e.contains("users[0].user.exec"), "{e}");
    assert!(e.contains("missing field `command`"), "{e}");
}

fn yaml_value() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("{SECRET}".to_owned()),
        Just("\"{SECRET}\"".to_owned()),
        Just("'{SECRET}'".to_owned()),
        Just("[{SECRET}]".to_owned()),
        Just("{k: {SECRET}}".to_owned()),
        Just("{SECRET}: 1".to_owned()),
        Just("\"{SECRET}".to_owned()),
        Just("[{SECRET}, {a: ]".to_owned()),
        Just("!!binary {SECRET}".to_owned()),
        Just("&x {SECRET}".to_owned()),
    ]
}

proptest! {

    /// Secrets placed under any credential key, in any shape: whether the file parses or
    /// not, neither its error nor its `Debug` carries the secret.
    #[test]
    fn secrets_never_leave(
        secret in "[A-Za-z][A-Za-z0-9]{11,24}",
        key in prop_oneof![
            Just("token"), Just("password"), Just("client-key-data"),
            Just("auth-provider.config.client-secret"), Just("exec.env.value"),
            Just("exec.args"),
        ],
        shape in yaml_value(),
        flow in any::<bool>(),
    ) {
        let value = shape.replace("{SECRET}", &secret);
        let user = match key {
            "auth-provider.config.client-secret" => {
                format!("{{auth-provider: {{name: oidc, config: {{client-secret: {value}}}}}}}")
            }
            "exec.env.value" => format!("{{exec: {{command: c, env: [{{name: T, value: {value}}}]}}}}"),
            "exec.args" => format!("{{exec: {{command: c, args: [{value}]}}}}"),
            other => format!("{{{other}: {value}}}"),
        };
        let text = if flow {
            format!("users: [{{name: u, user: {user}}}]\n")
        } else {
            format!("users:\n- name: u\n  user: {user}\n")
        };
        match Kubeconfig::parse(&text, Path::new("kubeconfig")) {
            Err(e) => prop_assert!(!e.to_string().contains(&secret), "{text:?}: {e}"),
            Ok(k) => prop_assert!(!format!("{k:?}").contains(&secret), "{text:?}: {k:?}"),
        }
    }
}

const FULL: &str = r#"
current-context: oidc
clusters:
- name: c
  cluster: {server: "https://c.example"}
users:
- name: oidc
  user:
    auth-provider:
      name: oidc
      config: {client-secret: S3CR3T-client, id-token: S3CR3T-id, refresh-token: S3CR3T-refresh}
- name: plugin
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: get-token
      args: [--client-secret=S3CR3T-arg]
      env: [{name: TOKEN, value: S3CR3T-env}]
- name: basic
  user: {username: admin, password: S3CR3T-password, token: S3CR3T-token, client-key-data: UzNDUjNU}
contexts:
- name: oidc
  context: {cluster: c, user: oidc}
- name: plugin
  context: {cluster: c, user: plugin}
"#;

#[test]
fn debug_hides_auth_provider_config_exec_args_and_env() {
    let k = Kubeconfig::parse(FULL, Path::new("kubeconfig")).unwrap();
    let debug = format!("{k:?}");
    assert!(!debug.contains(SECRET), "{debug}");
    assert!(!debug.contains("UzNDUjNU"), "{debug}");
    assert!(
        debug.contains("get-token") && debug.contains("oidc"),
        "{debug}"
    );
    // The settings are still there for whoever needs them.
    let provider = k.auth_info("oidc").unwrap().auth_provider.as_ref().unwrap();
    assert_eq!(
        provider.config.as_ref().unwrap().expose()["id-token"],
        "S3CR3T-id"
    );
    let opts = KubeConfigOptions {
        context: Some("plugin".into()),
        ..KubeConfigOptions::default()
    };
    let config = Config::from_custom_kubeconfig(k, &opts).unwrap();
    let debug = format!("{config:?}");
    assert!(!debug.contains(SECRET), "{debug}");
    assert!(debug.contains("get-token"), "{debug}");
}

#[cfg(unix)]
#[tokio::test]
async fn a_hung_plugin_is_killed_with_its_process_group() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("helper.pid");
    let plugin = dir.path().join("hang.sh");
    // The plugin starts a helper that keeps stdout open, then hangs itself.
    std::fs::write(
        &plugin,
        format!(
            "#!/bin/sh\nsleep 300 &\necho $! > {}\necho 'plugin: waiting for a browser' >&2\nwait\n",
            pid_file.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&plugin, std::fs::Permissions::from_mode(0o755)).unwrap();
    let auth = ExecAuth {
        config: ExecConfig {
            api_version: Some("client.authentication.k8s.io/v1".into()),
            command: plugin.display().to_string(),
            ..ExecConfig::default()
        },
        cluster_info: None,
        timeout: Some(Duration::from_millis(800)),
    };
    let started = Instant::now();
    let err = run_exec_plugin(&auth).await.unwrap_err().to_string();
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(err.contains("did not finish within"), "{err}");
    assert!(err.contains("killed"), "{err}");
    let helper: u32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let state = std::fs::read_to_string(format!("/proc/{helper}/stat")).unwrap_or_default();
        // Gone, or a zombie waiting for init to reap it.
        if state.is_empty() || state.split_whitespace().nth(2) == Some("Z") {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "helper {helper} still runs: {state}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Waits until `pid` is gone, or a zombie waiting for its new parent to reap it.
#[cfg(unix)]
async fn assert_exits(pid: u32, within: Duration) {
    let deadline = Instant::now() + within;
    let raw = rustix::process::Pid::from_raw(i32::try_from(pid).unwrap()).unwrap();
    loop {
        let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        if rustix::process::test_kill_process(raw).is_err()
            || state.split_whitespace().nth(2) == Some("Z")
        {
            return;
        }
        assert!(Instant::now() < deadline, "{pid} still runs: {state}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[cfg(unix)]
#[tokio::test]
async fn a_cancelled_plugin_run_kills_the_plugins_children() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("child.pid");
    let plugin = dir.path().join("slow.sh");
    std::fs::write(
        &plugin,
        format!(
            "#!/bin/sh\nsleep 30 &\necho $! > {}\nwait\n",
            pid_file.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&plugin, std::fs::Permissions::from_mode(0o755)).unwrap();
    let auth = ExecAuth {
        config: ExecConfig {
            api_version: Some("client.authentication.k8s.io/v1".into()),
            command: plugin.display().to_string(),
            ..ExecConfig::default()
        },
        cluster_info: None,
        // Far longer than the test: only the cancellation can end the run.
        timeout: Some(Duration::from_secs(120)),
    };
    let mut fetch = Box::pin(run_exec_plugin(&auth));
    // Run the fetch until the plugin has started its child.
    let child = tokio::select! {
        done = &mut fetch => panic!("the plugin finished: {done:?}"),
        pid = async {
            loop {
                if let Ok(text) = std::fs::read_to_string(&pid_file)
                    && let Ok(pid) = text.trim().parse::<u32>()
                {
                    break pid;
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        } => pid,
    };
    // The caller gives up (a request deadline), which drops the fetch.
    let gave_up = tokio::time::timeout(Duration::from_millis(200), &mut fetch).await;
    assert!(gave_up.is_err(), "{gave_up:?}");
    drop(fetch);
    assert_exits(child, Duration::from_secs(3)).await;
}

#[test]
fn a_huge_broken_file_is_reported_in_bounded_time() {
    let mut text = String::from("users:\n");
    for i in 0..20_000 {
        // 800 KiB: past the size the field path is searched in, so only the line is given.
        text.push_str(&format!("- name: u{i}\n  user: {{token: t{i}}}\n"));
    }
    text.push_str("- name: bad\n  user: {token: [S3CR3T]}\n");
    let started = Instant::now();
    let e = parse_error(&text);
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "{:?}",
        started.elapsed()
    );
    assert!(!e.contains(SECRET), "{e}");
    assert!(e.contains("line 40003"), "{e}");
}

const PROXIED: &str = r#"
current-context: p
clusters:
- name: k
  cluster:
    server: https://k.example
    proxy-url: http://me:S3CR3T-proxy@proxy.example:3128
users:
- name: plugin
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: get-token
      provideClusterInfo: true
contexts:
- name: p
  context: {cluster: k, user: plugin}
"#;

#[test]
fn debug_hides_the_password_of_a_proxy_url_and_connecting_keeps_it() {
    let k = Kubeconfig::parse(PROXIED, Path::new("kubeconfig")).unwrap();
    let cluster = k.cluster("k").unwrap();
    for debug in [format!("{k:?}"), format!("{cluster:?}")] {
        assert!(!debug.contains(SECRET), "{debug}");
        assert!(debug.contains("http://***@proxy.example:3128"), "{debug}");
    }
    let config = Config::from_custom_kubeconfig(k, &KubeConfigOptions::default()).unwrap();
    // The Config's own field, and the cluster info an exec plugin is given.
    let debug = format!("{config:?}");
    assert!(!debug.contains(SECRET), "{debug}");
    assert!(debug.contains("***@proxy.example:3128"), "{debug}");
    assert!(debug.contains("get-token"), "{debug}");
    // What is connected with is whole.
    let proxy = config.proxy_url.as_ref().unwrap();
    assert_eq!(
        proxy.authority().unwrap().as_str(),
        "me:S3CR3T-proxy@proxy.example:3128"
    );
    let kinform_client::config::AuthConfig::Exec(exec) = &config.auth else {
        panic!("not exec: {config:?}")
    };
    assert_eq!(
        exec.cluster_info.as_ref().unwrap()["proxy-url"],
        "http://me:S3CR3T-proxy@proxy.example:3128"
    );
}

#[test]
fn a_bad_proxy_url_is_reported_without_its_password() {
    for url in [
        // Not a URL (a space), not http(s), and a password with characters a URL forbids.
        "http://me:S3CR3T pw@proxy.example:3128",
        "socks5://me:S3CR3T@proxy.example:1080",
        "http://me:S3CR3T/?#@proxy.example:3128",
        "http://me:S3CR3T/",
        "me:S3CR3T@proxy.example:3128",
    ] {
        let text = PROXIED.replace(
            "http://me:S3CR3T-proxy@proxy.example:3128",
            &format!("'{url}'"),
        );
        let k = Kubeconfig::parse(&text, Path::new("kubeconfig")).unwrap();
        let err = Config::from_custom_kubeconfig(k, &KubeConfigOptions::default()).unwrap_err();
        let shown = err.to_string();
        assert!(matches!(err, ConfigError::InvalidField { .. }), "{shown}");
        assert!(!shown.contains(SECRET), "{url}: {shown}");
        assert!(!format!("{err:?}").contains(SECRET), "{url}: {err:?}");
        assert!(shown.contains("clusters[k].proxy-url"), "{shown}");
        assert!(
            shown.contains("***@proxy.example") || shown.contains("port"),
            "{shown}"
        );
    }
}
