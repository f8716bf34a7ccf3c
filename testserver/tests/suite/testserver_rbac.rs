//! Opt-in authentication and RBAC authorization (`TestApiServerBuilder::rbac`), checked
//! against the behaviour of kube-apiserver with `--authorization-mode=RBAC`.

use k8s_openapi::api::authorization::v1::SelfSubjectAccessReview;
use k8s_openapi::api::core::v1::ConfigMap;
use kinform_client::{Api, ListParams};
use kinform_tests::http::Raw;
use kinform_tests::kubectl::Kubectl;
use kinform_testserver::TestApiServer;
use serde_json::json;

/// A request without a known bearer token is 401 Unauthorized; the kubeconfig's token is an
/// admin (`system:masters`).
#[tokio::test]
async fn unknown_tokens_are_unauthorized() {
    let server = TestApiServer::builder().rbac().start().await.unwrap();
    let raw = Raw::new(&server.url());
    let r = raw.get("/api/v1/namespaces/default/configmaps").await;
    assert_eq!(r.status, 401);
    assert_eq!(r.body["reason"], "Unauthorized");
    let admin: Api<ConfigMap> = Api::namespaced(server.client().unwrap(), "default");
    admin.list(&ListParams::default()).await.unwrap();
    server.shutdown().await;
}

/// A service account may do exactly what its Roles and ClusterRoles grant through bindings;
/// anything else is a 403 Forbidden worded as kube-apiserver's RBAC authorizer words it, and a
/// `SelfSubjectAccessReview` answers the same question the same way.
#[tokio::test]
async fn service_accounts_get_what_rbac_grants() {
    let server = TestApiServer::builder().rbac().start().await.unwrap();
    server.create_namespace("other").unwrap();
    let sa = server.service_account_client("default", "ctl").unwrap();
    let cms: Api<ConfigMap> = Api::namespaced(sa.clone(), "default");
    let err = cms.list(&ListParams::default()).await.unwrap_err();
    assert_eq!(err.code(), Some(403), "{err}");
    assert!(
        err.to_string().contains(
            "configmaps is forbidden: User \"system:serviceaccount:default:ctl\" cannot list resource \"configmaps\" in API group \"\" in the namespace \"default\""
        ),
        "{err}"
    );

    server
        .create_object(json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
            "metadata": {"name": "reader", "namespace": "default"},
            "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list", "watch"]}],
        }))
        .unwrap();
    server
        .create_object(json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
            "metadata": {"name": "ctl-reader", "namespace": "default"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "reader"},
            "subjects": [{"kind": "ServiceAccount", "name": "ctl", "namespace": "default"}],
        }))
        .unwrap();
    cms.list(&ListParams::default()).await.unwrap();
    let elsewhere: Api<ConfigMap> = Api::namespaced(sa.clone(), "other");
    assert_eq!(
        elsewhere
            .list(&ListParams::default())
            .await
            .unwrap_err()
            .code(),
        Some(403)
    );
    let write = cms
        .create(
            &Default::default(),
            &serde_json::from_value(json!({"metadata": {"name": "x"}})).unwrap(),
        )
        .await
        .unwrap_err();
    assert_eq!(write.code(), Some(403));

    // A ClusterRole bound cluster-wide reaches every namespace.
    server
        .create_object(json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": "cm-reader"},
            "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["list"]}],
        }))
        .unwrap();
    server
        .create_object(json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": {"name": "ctl-cm-reader"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cm-reader"},
            "subjects": [{"kind": "Group", "name": "system:serviceaccounts:default"}],
        }))
        .unwrap();
    elsewhere.list(&ListParams::default()).await.unwrap();

    // The self reviews need no grant and answer with RBAC's verdict.
    let review = |verb: &str| {
        json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
               "spec": {"resourceAttributes": {"namespace": "default", "verb": verb, "resource": "configmaps"}}})
    };
    let ssar: Api<SelfSubjectAccessReview> = Api::all(sa.clone());
    for (verb, allowed) in [("list", true), ("delete", false)] {
        let answer = ssar
            .create(
                &Default::default(),
                &serde_json::from_value(review(verb)).unwrap(),
            )
            .await
            .unwrap();
        assert_eq!(answer.status.map(|s| s.allowed), Some(allowed), "{verb}");
    }
    server.shutdown().await;
}

/// `kubectl auth can-i --as` and `kubectl auth whoami` against the RBAC objects, as on a
/// cluster.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_auth_follows_rbac() {
    // kubectl sends its bearer token over HTTPS only.
    let server = TestApiServer::builder()
        .https()
        .rbac()
        .start()
        .await
        .unwrap();
    let Some(k) = Kubectl::for_server(&server, "the kubectl RBAC test") else {
        return;
    };
    let sa = "--as=system:serviceaccount:default:ctl";
    assert_eq!(can_i(&k, &["list", "pods", sa]).await, "no");
    server
        .create_object(json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
            "metadata": {"name": "ctl-view", "namespace": "default"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "pod-reader"},
            "subjects": [{"kind": "ServiceAccount", "name": "ctl", "namespace": "default"}],
        }))
        .unwrap();
    server
        .create_object(json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": "pod-reader"},
            "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}],
        }))
        .unwrap();
    assert_eq!(can_i(&k, &["list", "pods", sa]).await, "yes");
    assert_eq!(can_i(&k, &["delete", "pods", sa]).await, "no");
    let whoami = k.run(&["auth", "whoami", sa]).await;
    assert!(
        whoami.contains("system:serviceaccount:default:ctl"),
        "{whoami}"
    );
    server.shutdown().await;
}

/// `kubectl auth can-i <args>`'s answer (it exits 1 for "no").
async fn can_i(k: &Kubectl, args: &[&str]) -> String {
    let mut all = vec!["auth", "can-i"];
    all.extend_from_slice(args);
    let out = k.output(&all, None).await;
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}
