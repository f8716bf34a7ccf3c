//! The `kinform-testserver` binary: started with `--pods N`, it prints its URL and a
//! kubeconfig path; a `Client` built from that kubeconfig lists the preloaded pods.

use std::io::{BufRead as _, BufReader};
use std::process::{Command, Stdio};

use k8s_openapi::api::core::v1::Pod;
use kinform_client::{Api, Client, Config, ListParams};
use kinform_client::{KubeConfigOptions, Kubeconfig};

/// Kills the child on drop, so a failing assertion does not leak the server process.
struct Child(std::process::Child);

impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test]
async fn binary_serves_preloaded_pods_through_its_kubeconfig() {
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig_path = dir.path().join("kubeconfig");
    let mut child = Child(
        Command::new(env!("CARGO_BIN_EXE_kinform-testserver"))
            .args(["--pods", "25", "--namespaces", "3", "--kubeconfig"])
            .arg(&kubeconfig_path)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("kinform-testserver starts"),
    );
    let stdout = child.0.stdout.take().unwrap();
    let (url, printed_path) = tokio::task::spawn_blocking(move || {
        let mut url = None;
        let mut path = None;
        for line in BufReader::new(stdout).lines() {
            let line = line.unwrap();
            if let Some(u) = line.strip_prefix("url: ") {
                url = Some(u.trim().to_owned());
            } else if let Some(p) = line.strip_prefix("kubeconfig: ") {
                path = Some(p.trim().to_owned());
            }
            if url.is_some() && path.is_some() {
                break;
            }
        }
        (url.expect("a url line"), path.expect("a kubeconfig line"))
    })
    .await
    .unwrap();
    // The binary serves HTTPS with its own CA, which the kubeconfig carries: the client
    // below verifies the server through it.
    assert!(url.starts_with("https://127.0.0.1:"), "{url}");
    assert_eq!(printed_path, kubeconfig_path.display().to_string());

    let kubeconfig = Kubeconfig::read_from(&printed_path).unwrap();
    let config = Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default()).unwrap();
    assert_eq!(config.cluster_url.to_string().trim_end_matches('/'), url);
    let client = Client::new(config).unwrap();

    let pods: Api<Pod> = Api::all(client.clone());
    let all = pods.list(&ListParams::default()).await.unwrap();
    assert_eq!(all.items.len(), 25);
    let mut namespaces: Vec<_> = all
        .items
        .iter()
        .filter_map(|p| p.metadata.namespace.clone())
        .collect();
    namespaces.sort();
    namespaces.dedup();
    assert_eq!(namespaces, ["ns-0", "ns-1", "ns-2"]);

    let paged = pods
        .list(&ListParams {
            limit: Some(10),
            ..ListParams::default()
        })
        .await
        .unwrap();
    assert_eq!(paged.items.len(), 10);
    assert_eq!(paged.metadata.remaining_item_count, Some(15));

    // The default namespace of the kubeconfig's context is "default": no pods there.
    let default: Api<Pod> = Api::default_namespaced(client);
    assert!(
        default
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .is_empty()
    );
}
