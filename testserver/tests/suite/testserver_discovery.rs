//! Discovery, OpenAPI index and transport of TestApiServer over raw HTTP.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use kinform_tests::http::Raw;
use kinform_testserver::TestApiServer;
use serde_json::{Value, json};

#[tokio::test]
async fn legacy_and_aggregated_discovery() {
    let server = TestApiServer::start().await.unwrap();
    let raw = Raw::new(&server.url());
    assert_eq!(raw.get("/version").await.body["major"], "1");
    assert_eq!(raw.get("/api").await.body["versions"], json!(["v1"]));
    let core = raw.get("/api/v1").await.body;
    let pods = core["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "pods")
        .unwrap();
    assert_eq!(pods["kind"], "Pod");
    assert_eq!(pods["shortNames"], json!(["po"]));
    assert!(pods["verbs"].as_array().unwrap().contains(&json!("watch")));
    let apps = raw.get("/apis/apps").await.body;
    assert_eq!(apps["preferredVersion"]["groupVersion"], "apps/v1");
    assert_eq!(raw.get("/apis/nope/v1").await.status, 404);
    let accept =
        "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json";
    let agg = raw
        .request_with("GET", "/apis", None, "application/json", Some(accept))
        .await;
    assert!(
        agg.headers["content-type"]
            .to_str()
            .unwrap()
            .contains("as=APIGroupDiscoveryList")
    );
    let groups: Vec<&str> = agg.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["metadata"]["name"].as_str().unwrap())
        .collect();
    for g in [
        "apps",
        "events.k8s.io",
        "coordination.k8s.io",
        "apiextensions.k8s.io",
    ] {
        assert!(groups.contains(&g), "{groups:?}");
    }
    let core = raw
        .request_with("GET", "/api", None, "application/json", Some(accept))
        .await
        .body;
    let res = &core["items"][0]["versions"][0]["resources"];
    assert!(
        res.as_array()
            .unwrap()
            .iter()
            .any(|r| r["resource"] == "namespaces" && r["scope"] == "Cluster")
    );
    server.shutdown().await;
}

/// kube-apiserver publishes its schemas at `/openapi/v3/{api,apis/{group}}/{version}` (kubectl
/// reads them for `explain`, client-side apply patches and to learn that the server validates
/// fields: a PATCH operation listing `fieldValidation`) and `/openapi/v2`.
#[tokio::test]
async fn openapi_documents_are_the_real_ones() {
    let server = TestApiServer::start().await.unwrap();
    let raw = Raw::new(&server.url());
    let root = raw.get("/openapi/v3").await.body;
    let url = root["paths"]["api/v1"]["serverRelativeURL"]
        .as_str()
        .unwrap()
        .to_owned();
    let doc = raw.get(&url).await.body;
    let op = &doc["paths"]["/api/v1/namespaces/{namespace}/pods/{name}"]["patch"];
    assert_eq!(
        op["x-kubernetes-group-version-kind"],
        json!({"group": "", "version": "v1", "kind": "Pod"})
    );
    assert!(
        op["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["name"] == "fieldValidation")
    );
    let pod_spec = &doc["components"]["schemas"]["io.k8s.api.core.v1.PodSpec"];
    assert!(pod_spec["properties"]["containers"].is_object());
    // Only served (GA) group versions are listed.
    assert!(root["paths"].get("apis/resource.k8s.io/v1beta2").is_none());
    let v2 = raw.get("/openapi/v2").await;
    assert_eq!(v2.status, 200);
    assert_eq!(v2.body["swagger"], "2.0");
    assert!(v2.body["definitions"]["io.k8s.api.apps.v1.Deployment"].is_object());
    server.shutdown().await;
}

#[tokio::test]
async fn http2_prior_knowledge_works() {
    let server = TestApiServer::start().await.unwrap();
    let client = Client::builder(TokioExecutor::new())
        .http2_only(true)
        .build_http::<Full<Bytes>>();
    let resp = client
        .get(
            format!("{}/api/v1/namespaces", server.url())
                .parse()
                .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(resp.version(), http::Version::HTTP_2);
    let body = resp.into_body().collect().await.unwrap().to_bytes();
    let list: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(list["kind"], "NamespaceList");
    server.shutdown().await;
}
