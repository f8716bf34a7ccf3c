//! HTTPS as kube-apiserver serves it: a certificate clients verify against the CA that the
//! kubeconfig carries (`certificate-authority-data`). The server makes its CA at start
//! (`TestApiServerBuilder::https`); kinform's client and kubectl verify it, and a client that
//! does not trust that CA is refused at the handshake.

use k8s_openapi::api::core::v1::Namespace;
use kinform_client::{Api, Client, ListParams};
use kinform_tests::kubectl::Kubectl;
use kinform_testserver::TestApiServer;

#[tokio::test]
async fn kinform_client_verifies_the_server_through_its_ca() {
    let server = TestApiServer::builder().https().start().await.unwrap();
    assert!(server.url().starts_with("https://127.0.0.1:"));
    assert!(
        server
            .kubeconfig_yaml()
            .contains("certificate-authority-data: ")
    );

    let namespaces: Api<Namespace> = Api::all(server.client().unwrap());
    let names: Vec<_> = namespaces
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter_map(|n| n.metadata.name)
        .collect();
    assert!(names.contains(&"default".to_owned()), "{names:?}");

    // Without the CA the handshake fails: the client really verifies the certificate.
    let mut untrusting = server.client_config();
    untrusting.root_cert_pem = None;
    untrusting.max_retries = 0;
    let err = Api::<Namespace>::all(Client::new(untrusting).unwrap())
        .list(&ListParams::default())
        .await
        .unwrap_err();
    assert!(err.is_transport(), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_verifies_the_server_through_the_kubeconfig_ca() {
    let server = TestApiServer::builder().https().start().await.unwrap();
    let Some(k) = Kubectl::for_server(&server, "kubectl over HTTPS") else {
        return;
    };
    let out = k.run(&["get", "namespaces", "-o", "name"]).await;
    assert!(out.contains("namespace/default"), "{out}");
}
