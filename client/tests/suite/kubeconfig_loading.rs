//! kubeconfig loading as kubectl does it: merging several files, contexts, credentials from
//! data and files, clear typed errors for missing files, contexts, clusters and users, the
//! in-cluster config, and no secret in Debug output.

use std::path::Path;

use kinform_client::Config;
use kinform_client::config::incluster_with;
use kinform_client::{AuthConfig, ConfigError, KubeConfigOptions, Kubeconfig};

fn write(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

const FIRST: &str = r#"
apiVersion: v1
kind: Config
current-context: dev
clusters:
- name: dev
  cluster:
    server: https://dev.example:6443
    certificate-authority: ca.pem
users:
- name: dev-user
  user:
    token: super-secret-token
contexts:
- name: dev
  context: {cluster: dev, user: dev-user, namespace: team-a}
- name: shared
  context: {cluster: dev, user: dev-user}
"#;

const SECOND: &str = r#"
current-context: prod
clusters:
- name: prod
  cluster:
    server: https://prod.example
    insecure-skip-tls-verify: true
    tls-server-name: api.prod
    proxy-url: http://proxy.example:3128
    disable-compression: true
users:
- name: prod-user
  user:
    username: admin
    password: hunter2
    as: jane
    as-groups: [ops]
contexts:
- name: prod
  context: {cluster: prod, user: prod-user}
- name: shared
  context: {cluster: prod, user: prod-user}
"#;

#[test]
fn merges_files_first_definition_wins() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "ca.pem",
        "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n",
    );
    let a = write(dir.path(), "a", FIRST);
    let b = write(dir.path(), "b", SECOND);
    let missing = dir.path().join("missing");
    let joined = std::env::join_paths([&a, &missing, &b]).unwrap();
    let paths = Kubeconfig::paths_from_env_value(&joined);
    assert_eq!(paths.len(), 3);
    let kc = Kubeconfig::read_merged(&paths).unwrap();
    assert_eq!(kc.current_context.as_deref(), Some("dev"));
    assert_eq!(kc.contexts.len(), 3);
    // "shared" comes from the first file.
    assert_eq!(kc.context("shared").unwrap().cluster, "dev");
    // Relative paths are resolved against the file's directory.
    assert_eq!(
        kc.cluster("dev").unwrap().certificate_authority.as_deref(),
        Some(dir.path().join("ca.pem").to_str().unwrap())
    );

    let dev = Config::from_custom_kubeconfig(kc.clone(), &KubeConfigOptions::default()).unwrap();
    assert_eq!(dev.cluster_url, "https://dev.example:6443");
    assert_eq!(dev.default_namespace, "team-a");
    assert!(
        dev.root_cert_pem
            .as_deref()
            .unwrap()
            .starts_with(b"-----BEGIN")
    );
    assert!(matches!(&dev.auth, AuthConfig::Token(t) if t.expose() == "super-secret-token"));

    let prod = Config::from_custom_kubeconfig(
        kc,
        &KubeConfigOptions {
            context: Some("prod".into()),
            ..KubeConfigOptions::default()
        },
    )
    .unwrap();
    assert_eq!(prod.default_namespace, "default");
    assert!(prod.accept_invalid_certs);
    assert!(prod.disable_compression);
    assert_eq!(prod.tls_server_name.as_deref(), Some("api.prod"));
    assert_eq!(
        prod.proxy_url.as_ref().unwrap().to_string(),
        "http://proxy.example:3128/"
    );
    assert_eq!(prod.impersonate.as_deref(), Some("jane"));
    assert_eq!(prod.impersonate_groups, vec!["ops"]);
    assert!(
        matches!(&prod.auth, AuthConfig::Basic { username, password } if username == "admin" && password.expose() == "hunter2")
    );

    // No secret reaches Debug output.
    let debug = format!(
        "{dev:?} {prod:?} {:?}",
        Kubeconfig::read_merged(&paths).unwrap()
    );
    for secret in ["super-secret-token", "hunter2"] {
        assert!(!debug.contains(secret), "{secret} in {debug}");
    }
    assert!(debug.contains("[redacted]"));
}

#[test]
fn cluster_and_user_overrides() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "ca.pem", "x");
    let kc = Kubeconfig::read_merged(&[
        write(dir.path(), "a", FIRST),
        write(dir.path(), "b", SECOND),
    ])
    .unwrap();
    let c = Config::from_custom_kubeconfig(
        kc,
        &KubeConfigOptions {
            context: Some("dev".into()),
            cluster: Some("prod".into()),
            user: Some("prod-user".into()),
        },
    )
    .unwrap();
    assert_eq!(c.cluster_url, "https://prod.example");
    assert_eq!(c.default_namespace, "team-a");
}

#[test]
fn client_certificate_files_and_data() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "client.crt", "CERT PEM");
    write(dir.path(), "client.key", "KEY PEM SECRET");
    let yaml = r#"
current-context: c
clusters: [{name: k, cluster: {server: "http://127.0.0.1:8080"}}]
users:
- name: files
  user: {client-certificate: client.crt, client-key: client.key}
- name: data
  user: {client-certificate-data: Q0VSVA==, client-key-data: S0VZIFNFQ1JFVA==}
- name: half
  user: {client-certificate-data: Q0VSVA==}
contexts:
- {name: c, context: {cluster: k, user: files}}
- {name: d, context: {cluster: k, user: data}}
- {name: h, context: {cluster: k, user: half}}
"#;
    let kc = Kubeconfig::read_from(write(dir.path(), "config", yaml)).unwrap();
    let opts = |c: &str| KubeConfigOptions {
        context: Some(c.into()),
        ..KubeConfigOptions::default()
    };
    let files = Config::from_custom_kubeconfig(kc.clone(), &opts("c")).unwrap();
    let id = files.identity.as_ref().unwrap();
    assert_eq!(id.cert_pem, b"CERT PEM");
    assert_eq!(id.key_pem.expose(), b"KEY PEM SECRET");
    assert!(!format!("{files:?}").contains("SECRET"));
    let data = Config::from_custom_kubeconfig(kc.clone(), &opts("d")).unwrap();
    assert_eq!(data.identity.unwrap().key_pem.expose(), b"KEY SECRET");
    let err = Config::from_custom_kubeconfig(kc, &opts("h")).unwrap_err();
    assert!(matches!(err, ConfigError::InvalidField { .. }), "{err}");
}

#[test]
fn missing_things_are_clear_typed_errors() {
    let dir = tempfile::tempdir().unwrap();
    // Missing kubeconfig files.
    let err = Kubeconfig::read_merged(&[dir.path().join("nope")]).unwrap_err();
    assert!(matches!(err, ConfigError::NoKubeconfig(_)), "{err}");
    let err = Kubeconfig::read_from(dir.path().join("nope")).unwrap_err();
    assert!(
        matches!(
            err,
            ConfigError::ReadFile {
                what: "kubeconfig",
                ..
            }
        ),
        "{err}"
    );
    // Not YAML of the right shape.
    let err = Kubeconfig::read_from(write(dir.path(), "bad", "clusters: 5\n")).unwrap_err();
    assert!(
        matches!(&err, ConfigError::ParseKubeconfig { path, .. } if path.ends_with("bad")),
        "{err}"
    );

    let yaml = r#"
clusters: [{name: k, cluster: {server: "https://x", certificate-authority: missing-ca.pem}}, {name: noserver, cluster: {}}, {name: ok, cluster: {server: "http://127.0.0.1:1"}}]
users: [{name: u, user: {tokenFile: missing-token}}, {name: ap, user: {auth-provider: {name: gcp}}}]
contexts:
- {name: ca, context: {cluster: k}}
- {name: tok, context: {cluster: ok, user: u}}
- {name: ghost-cluster, context: {cluster: ghost}}
- {name: ghost-user, context: {cluster: k, user: ghost}}
- {name: ns, context: {cluster: noserver}}
- {name: ap, context: {cluster: ok, user: ap}}
"#;
    let kc = Kubeconfig::read_from(write(dir.path(), "config", yaml)).unwrap();
    let load = |c: Option<&str>| {
        Config::from_custom_kubeconfig(
            kc.clone(),
            &KubeConfigOptions {
                context: c.map(str::to_owned),
                ..KubeConfigOptions::default()
            },
        )
        .unwrap_err()
    };
    assert!(matches!(load(None), ConfigError::NoCurrentContext));
    assert!(matches!(load(Some("nope")), ConfigError::ContextNotFound(c) if c == "nope"));
    assert!(matches!(load(Some("ghost-cluster")), ConfigError::ClusterNotFound(c) if c == "ghost"));
    assert!(matches!(load(Some("ghost-user")), ConfigError::UserNotFound(u) if u == "ghost"));
    assert!(
        matches!(load(Some("ns")), ConfigError::InvalidField { field, .. } if field == "clusters[noserver].server")
    );
    assert!(matches!(load(Some("ap")), ConfigError::Unsupported(_)));
    match load(Some("ca")) {
        ConfigError::ReadFile { what, path, .. } => {
            assert_eq!(what, "certificate-authority");
            assert!(path.ends_with("missing-ca.pem"));
        }
        other => panic!("{other}"),
    }
    assert!(matches!(
        load(Some("tok")),
        ConfigError::ReadFile {
            what: "tokenFile",
            ..
        }
    ));
}

#[test]
fn in_cluster_config() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "token", "sa-token");
    write(dir.path(), "ca.crt", "CA");
    write(dir.path(), "namespace", "kube-system\n");
    let c = incluster_with("10.0.0.1", "443", dir.path()).unwrap();
    assert_eq!(c.cluster_url, "https://10.0.0.1:443");
    assert_eq!(c.default_namespace, "kube-system");
    assert_eq!(c.root_cert_pem.as_deref(), Some(&b"CA"[..]));
    assert!(matches!(&c.auth, AuthConfig::TokenFile(p) if p.ends_with("token")));
    let v6 = incluster_with("fd00::1", "6443", dir.path()).unwrap();
    assert_eq!(v6.cluster_url, "https://[fd00::1]:6443");
    assert!(matches!(
        incluster_with("", "", dir.path()),
        Err(ConfigError::NotInCluster(_))
    ));
    std::fs::remove_file(dir.path().join("token")).unwrap();
    assert!(matches!(
        incluster_with("10.0.0.1", "443", dir.path()),
        Err(ConfigError::ReadFile { .. })
    ));
}

#[test]
fn plain_http_url_config() {
    let c = Config::new("http://127.0.0.1:8080".parse().unwrap());
    assert_eq!(c.default_namespace, "default");
    assert!(kinform_client::Client::new(c).is_ok());
}
