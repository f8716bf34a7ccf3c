//! Untyped and metadata-only access through the client: a CRD created through the API makes
//! its custom resources usable at once with `DynamicObject` + `ApiResource` (CRUD, list,
//! watch), deleting the CRD unregisters them; `PartialObjectMetadata` list and watch;
//! `Discovery` of the server's groups, including a freshly registered CRD.

use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kinform::client::{DeleteParams, Discovery, Patch, PatchParams, PostParams};
use kinform::{
    Api, ApiResource, DynamicObject, HasMetadata, ListParams, PartialObjectMetadata, Resource,
    Scope, WatchEvent, WatchParams,
};
use kinform_tests::env::{cm, env, next_event, summary};
use serde_json::json;

fn gizmo_crd(scope: &str) -> CustomResourceDefinition {
    serde_json::from_value(json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "gizmos.example.org"},
        "spec": {"group": "example.org", "scope": scope,
            "names": {"plural": "gizmos", "singular": "gizmo", "kind": "Gizmo",
                "listKind": "GizmoList", "shortNames": ["gz"]},
            "versions": [
                {"name": "v1", "served": true, "storage": true,
                 "schema": {"openAPIV3Schema": {"type": "object",
                     "x-kubernetes-preserve-unknown-fields": true}},
                 "subresources": {"status": {}}},
                {"name": "v1beta1", "served": true, "storage": false,
                 "schema": {"openAPIV3Schema": {"type": "object",
                     "x-kubernetes-preserve-unknown-fields": true}}}]}
    }))
    .unwrap()
}

fn gizmos(version: &'static str) -> ApiResource {
    ApiResource {
        group: "example.org".into(),
        version: version.into(),
        kind: "Gizmo".into(),
        plural: "gizmos".into(),
        scope: Scope::Namespaced,
    }
}

#[tokio::test]
async fn crd_registration_makes_dynamic_objects_usable_and_deletion_unregisters() {
    let e = env().await;
    let crds: Api<CustomResourceDefinition> = Api::all(e.client.clone());
    let ar = gizmos("v1");
    let api: Api<DynamicObject> = Api::namespaced_with(e.client.clone(), "default", &ar);

    // Before registration the resource does not exist, for lists and watches alike.
    let err = api.list(&ListParams::default()).await.unwrap_err();
    assert!(err.is_not_found(), "{err}");
    let Err(err) = api.watch(&WatchParams::default()).await else {
        panic!("a watch of an unknown resource must fail");
    };
    assert!(err.is_not_found(), "{err}");

    crds.create(&PostParams::default(), &gizmo_crd("Namespaced"))
        .await
        .unwrap();
    let start = e.server.resource_version().to_string();
    let mut w = api
        .watch(&WatchParams {
            resource_version: Some(start),
            ..WatchParams::default()
        })
        .await
        .unwrap();

    let g = DynamicObject::new("g1", &ar)
        .within("default")
        .data(json!({"spec": {"color": "blue"}}));
    let created = api.create(&PostParams::default(), &g).await.unwrap();
    let types = created.types.clone().unwrap();
    assert_eq!(
        (types.api_version.as_str(), types.kind.as_str()),
        ("example.org/v1", "Gizmo")
    );
    assert_eq!(created.data["spec"]["color"], "blue");
    assert!(!created.uid().is_empty());

    let patched = api
        .patch(
            "g1",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"size": 3}})),
        )
        .await
        .unwrap();
    assert_eq!(patched.data["spec"], json!({"color": "blue", "size": 3}));
    let listed = api.list(&ListParams::default()).await.unwrap();
    assert_eq!(listed.items.len(), 1);
    assert_eq!(listed.items[0].data["spec"]["size"], 3);

    // Every served version is usable.
    let beta: Api<DynamicObject> =
        Api::namespaced_with(e.client.clone(), "default", &gizmos("v1beta1"));
    // Objects read through another served version carry that version's apiVersion (the
    // real server converts; with no schema change that is the apiVersion alone).
    let via_beta = beta.get("g1").await.unwrap();
    assert_eq!(
        via_beta.types.as_ref().unwrap().api_version,
        "example.org/v1beta1"
    );
    assert_eq!(via_beta.data["spec"]["size"], 3);
    let beta_list = beta.list(&ListParams::default()).await.unwrap();
    assert_eq!(beta_list.items.len(), 1);
    // v1 declares a status subresource, v1beta1 does not.
    assert_eq!(api.get_status("g1").await.unwrap().name(), "g1");
    let err = beta.get_status("g1").await.unwrap_err();
    assert!(err.is_not_found(), "{err}");

    assert_eq!(summary(&next_event(&mut w).await), "ADDED g1");
    match next_event(&mut w).await {
        WatchEvent::Modified(o) => assert_eq!(o.data["spec"]["size"], 3),
        other => panic!("expected MODIFIED, got {}", summary(&other)),
    }

    // Deleting the CRD unregisters the resource; its custom resources go with it and open
    // watches on it end (after the DELETED of each object), as on the real server.
    crds.delete("gizmos.example.org", &DeleteParams::default())
        .await
        .unwrap();
    let rest = kinform_tests::env::drain(&mut w).await;
    let rest: Vec<String> = rest
        .iter()
        .map(|i| match i {
            Ok(ev) => summary(ev),
            Err(err) => format!("error {err}"),
        })
        .collect();
    assert_eq!(rest, ["DELETED g1"]);
    let err = api.get("g1").await.unwrap_err();
    assert!(err.is_not_found(), "{err}");
    let err = api.list(&ListParams::default()).await.unwrap_err();
    assert!(err.is_not_found(), "{err}");
}

#[tokio::test]
async fn cluster_scoped_custom_resources() {
    let e = env().await;
    let crds: Api<CustomResourceDefinition> = Api::all(e.client.clone());
    crds.create(&PostParams::default(), &gizmo_crd("Cluster"))
        .await
        .unwrap();
    let ar = ApiResource {
        scope: Scope::Cluster,
        ..gizmos("v1")
    };
    // A namespace given to a cluster-scoped Api is ignored.
    let api: Api<DynamicObject> = Api::namespaced_with(e.client.clone(), "default", &ar);
    let created = api
        .create(&PostParams::default(), &DynamicObject::new("top", &ar))
        .await
        .unwrap();
    assert_eq!(created.namespace(), None);
    assert_eq!(created.key(), "top");
    assert_eq!(api.get("top").await.unwrap().uid(), created.uid());
}

#[tokio::test]
async fn metadata_only_list_and_watch() {
    let e = env().await;
    let typed: Api<ConfigMap> = Api::namespaced(e.client.clone(), "default");
    for n in ["m1", "m2"] {
        typed
            .create(&PostParams::default(), &cm(n, &[("app", n)]))
            .await
            .unwrap();
    }
    let ar = ConfigMap::api_resource();
    let meta = Api::<PartialObjectMetadata>::metadata_namespaced(e.client.clone(), "default", &ar);
    let list = meta.list(&ListParams::default()).await.unwrap();
    let mut names: Vec<_> = list.items.iter().map(|o| o.name().to_owned()).collect();
    names.sort();
    assert_eq!(names, ["m1", "m2"]);
    assert_eq!(
        list.items[0].metadata.labels.as_ref().unwrap()["app"],
        list.items[0].name()
    );
    assert!(list.metadata.resource_version.is_some());
    // The server answered in the metadata form.
    for item in &list.items {
        let t = item.types.as_ref().expect("list items carry their type");
        assert_eq!(
            (t.api_version.as_str(), t.kind.as_str()),
            ("meta.k8s.io/v1", "PartialObjectMetadata")
        );
    }
    // The same request by hand: the list kind, and no `data` in the items.
    let raw: serde_json::Value = e
        .client
        .request(
            http::Request::get("/api/v1/namespaces/default/configmaps")
                .header(
                    http::header::ACCEPT,
                    kinform::client::ACCEPT_PARTIAL_METADATA_LIST,
                )
                .body(Vec::new())
                .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(raw["kind"], "PartialObjectMetadataList");
    assert!(raw["items"][0].get("data").is_none(), "{raw}");
    let one = meta.get("m1").await.unwrap();
    assert_eq!(
        one.types.as_ref().map(|t| t.kind.as_str()),
        Some("PartialObjectMetadata")
    );

    let mut w = meta
        .watch(&WatchParams {
            resource_version: list.metadata.resource_version.clone(),
            ..WatchParams::default()
        })
        .await
        .unwrap();
    typed
        .create(&PostParams::default(), &cm("m3", &[]))
        .await
        .unwrap();
    match next_event(&mut w).await {
        WatchEvent::Added(o) => {
            assert_eq!(o.name(), "m3");
            assert_eq!(
                o.types.as_ref().map(|t| t.kind.as_str()),
                Some("PartialObjectMetadata")
            );
        }
        other => panic!("expected ADDED m3, got {}", summary(&other)),
    }

    let all = Api::<PartialObjectMetadata>::metadata_all(e.client.clone(), &ar);
    assert_eq!(
        all.list(&ListParams::default()).await.unwrap().items.len(),
        3
    );
}

#[tokio::test]
async fn discovery_against_the_server() {
    let e = env().await;
    let d = Discovery::run(&e.client).await.unwrap();
    assert_eq!(d.groups[0].name, "");
    let pods = d.resolve_gvk("", "v1", "Pod").unwrap();
    assert_eq!(pods.resource.plural, "pods");
    assert_eq!(pods.resource.scope, Scope::Namespaced);
    assert!(pods.verbs.iter().any(|v| v == "watch"), "{:?}", pods.verbs);
    assert!(pods.subresources.iter().any(|s| s == "status"));
    assert_eq!(d.resolve_preferred("", "po").unwrap().resource.kind, "Pod");
    let ns = d.resolve_gvk("", "v1", "Namespace").unwrap();
    assert_eq!(ns.resource.scope, Scope::Cluster);
    let deploy = d.resolve_gvk("apps", "v1", "Deployment").unwrap();
    assert!(
        deploy.subresources.iter().any(|s| s == "scale"),
        "{deploy:?}"
    );
    for (g, k) in [
        ("coordination.k8s.io", "Lease"),
        ("events.k8s.io", "Event"),
        ("apiextensions.k8s.io", "CustomResourceDefinition"),
    ] {
        assert!(d.resolve_gvk(g, "v1", k).is_some(), "{g} {k}");
    }
    assert!(d.group("example.org").is_none());

    let crds: Api<CustomResourceDefinition> = Api::all(e.client.clone());
    crds.create(&PostParams::default(), &gizmo_crd("Namespaced"))
        .await
        .unwrap();
    let d = Discovery::run(&e.client).await.unwrap();
    let g = d.resolve_preferred("example.org", "gz").unwrap();
    assert_eq!(g.resource, gizmos("v1"));
    assert_eq!(g.subresources, ["status"]);
    assert_eq!(d.group("example.org").unwrap().versions.len(), 2);

    // The discovered ApiResource works as is.
    let api: Api<DynamicObject> = Api::namespaced_with(e.client.clone(), "default", &g.resource);
    assert!(
        api.list(&ListParams::default())
            .await
            .unwrap()
            .items
            .is_empty()
    );

    let v = e.client.apiserver_version().await.unwrap();
    assert!(!v.git_version.is_empty());
}
