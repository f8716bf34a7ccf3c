//! The client against `TestApiServer` over real HTTP: get/get_opt, create (generateName,
//! 409 AlreadyExists, 422 Invalid, namespaces must exist), replace (409 Conflict), the four
//! patch kinds, delete (preconditions, propagation policy) and delete_collection.

use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kinform::client::{
    DeleteParams, Either, Patch, PatchParams, PostParams, Preconditions, PropagationPolicy,
};
use kinform::{Api, HasMetadata, ListParams};
use kinform_tests::env::{cm, env, pod};
use serde_json::json;

#[tokio::test]
async fn create_get_get_opt_and_metadata_stamps() {
    let e = env().await;
    let api: Api<ConfigMap> = Api::namespaced(e.client.clone(), "default");
    let created = api
        .create(&PostParams::default(), &cm("a", &[]))
        .await
        .unwrap();
    let meta = &created.metadata;
    assert_eq!(meta.namespace.as_deref(), Some("default"));
    assert!(!meta.uid.as_deref().unwrap_or_default().is_empty());
    assert!(meta.creation_timestamp.is_some());
    let rv: u64 = created.resource_version().parse().unwrap();
    assert_eq!(rv, e.server.resource_version());

    let got = api.get("a").await.unwrap();
    assert_eq!(got, created);
    assert_eq!(api.get_opt("a").await.unwrap(), Some(created));
    assert_eq!(api.get_opt("missing").await.unwrap(), None);
    let err = api.get("missing").await.unwrap_err();
    assert!(err.is_not_found(), "{err}");
    assert_eq!(err.code(), Some(404));
    assert!(err.to_string().contains("missing"), "{err}");
}

#[tokio::test]
async fn generate_name_gives_distinct_names() {
    let e = env().await;
    let api: Api<ConfigMap> = Api::namespaced(e.client.clone(), "default");
    let mut obj = cm("", &[]);
    obj.metadata.name = None;
    obj.metadata.generate_name = Some("gen-".into());
    let a = api.create(&PostParams::default(), &obj).await.unwrap();
    let b = api.create(&PostParams::default(), &obj).await.unwrap();
    assert!(
        a.name().starts_with("gen-") && a.name().len() > 4,
        "{}",
        a.name()
    );
    assert!(b.name().starts_with("gen-"));
    assert_ne!(a.name(), b.name());
    assert_eq!(
        api.get(a.name()).await.unwrap().metadata.uid,
        a.metadata.uid
    );
}

#[tokio::test]
async fn already_exists_invalid_and_missing_namespace() {
    let e = env().await;
    let api: Api<ConfigMap> = Api::namespaced(e.client.clone(), "default");
    api.create(&PostParams::default(), &cm("dup", &[]))
        .await
        .unwrap();
    let err = api
        .create(&PostParams::default(), &cm("dup", &[]))
        .await
        .unwrap_err();
    assert!(err.is_already_exists(), "{err}");
    assert!(
        !err.is_conflict(),
        "AlreadyExists is not an update conflict"
    );
    assert_eq!(err.code(), Some(409));

    let err = api
        .create(&PostParams::default(), &cm("Not_A_Valid_Name", &[]))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some(422), "{err}");
    assert_eq!(err.status().unwrap().reason.as_deref(), Some("Invalid"));

    let nowhere: Api<ConfigMap> = Api::namespaced(e.client.clone(), "no-such-ns");
    let err = nowhere
        .create(&PostParams::default(), &cm("x", &[]))
        .await
        .unwrap_err();
    assert!(err.is_not_found(), "{err}");
    assert!(err.to_string().contains("no-such-ns"), "{err}");

    e.server.create_namespace("later").unwrap();
    let later: Api<ConfigMap> = Api::namespaced(e.client.clone(), "later");
    later
        .create(&PostParams::default(), &cm("x", &[]))
        .await
        .unwrap();
}

#[tokio::test]
async fn replace_needs_the_current_resource_version() {
    let e = env().await;
    let api: Api<ConfigMap> = Api::namespaced(e.client.clone(), "default");
    let v1 = api
        .create(&PostParams::default(), &cm("r", &[]))
        .await
        .unwrap();
    let mut v2 = v1.clone();
    v2.data = Some([("k".to_string(), "two".to_string())].into());
    let v2 = api.replace("r", &PostParams::default(), &v2).await.unwrap();
    assert_eq!(v2.data.as_ref().unwrap()["k"], "two");
    assert_ne!(v2.resource_version(), v1.resource_version());

    // A stale resourceVersion is a Conflict.
    let mut stale = v1.clone();
    stale.data = Some([("k".to_string(), "three".to_string())].into());
    let err = api
        .replace("r", &PostParams::default(), &stale)
        .await
        .unwrap_err();
    assert!(err.is_conflict(), "{err}");
    assert_eq!(err.code(), Some(409));
    assert_eq!(api.get("r").await.unwrap().data.unwrap()["k"], "two");

    // Without a resourceVersion the update is unconditional.
    stale.metadata.resource_version = None;
    let v3 = api
        .replace("r", &PostParams::default(), &stale)
        .await
        .unwrap();
    assert_eq!(v3.data.unwrap()["k"], "three");

    // Replace of a missing object is 404.
    let err = api
        .replace("nope", &PostParams::default(), &cm("nope", &[]))
        .await
        .unwrap_err();
    assert!(err.is_not_found(), "{err}");
}

#[tokio::test]
async fn merge_json_and_strategic_patches() {
    let e = env().await;
    let api: Api<ConfigMap> = Api::namespaced(e.client.clone(), "default");
    api.create(&PostParams::default(), &cm("p", &[("a", "1")]))
        .await
        .unwrap();
    let pp = PatchParams::default();

    let merged = api
        .patch(
            "p",
            &pp,
            &Patch::Merge(
                json!({"metadata": {"labels": {"b": "2"}}, "data": {"k": null, "n": "m"}}),
            ),
        )
        .await
        .unwrap();
    let labels = merged.metadata.labels.clone().unwrap();
    assert_eq!((labels["a"].as_str(), labels["b"].as_str()), ("1", "2"));
    assert_eq!(
        merged.data.unwrap(),
        [("n".to_string(), "m".to_string())].into()
    );

    let jsoned = api
        .patch(
            "p",
            &pp,
            &Patch::<()>::Json(json!([
                {"op": "test", "path": "/data/n", "value": "m"},
                {"op": "replace", "path": "/data/n", "value": "j"},
                {"op": "remove", "path": "/metadata/labels/a"}
            ])),
        )
        .await
        .unwrap();
    assert_eq!(jsoned.data.unwrap()["n"], "j");
    assert!(!jsoned.metadata.labels.unwrap().contains_key("a"));

    // A failing `test` operation leaves the object alone and is a typed error.
    let err = api
        .patch(
            "p",
            &pp,
            &Patch::<()>::Json(json!([{"op": "test", "path": "/data/n", "value": "zzz"}])),
        )
        .await
        .unwrap_err();
    assert!(matches!(err.code(), Some(409 | 422)), "{err}");

    let strategic = api
        .patch(
            "p",
            &pp,
            &Patch::Strategic(json!({"metadata": {"annotations": {"x": "y"}}})),
        )
        .await
        .unwrap();
    assert_eq!(strategic.metadata.annotations.unwrap()["x"], "y");
    assert_eq!(strategic.data.unwrap()["n"], "j");

    let err = api
        .patch("missing", &pp, &Patch::Merge(json!({"data": {"a": "b"}})))
        .await
        .unwrap_err();
    assert!(err.is_not_found(), "{err}");
}

#[tokio::test]
async fn server_side_apply_through_the_client() {
    // kinform's `Patch::Apply` against the server's server-side apply (kube-apiserver's
    // semantics, tests in testserver/tests/suite/server_side_apply.rs): a forced apply takes the
    // fields a create wrote, and another manager's conflicting apply surfaces as a typed 409.
    let e = env().await;
    let api: Api<ConfigMap> = Api::namespaced(e.client.clone(), "default");
    api.create(&PostParams::default(), &cm("ssa", &[]))
        .await
        .unwrap();
    let applied = api
        .patch(
            "ssa",
            &PatchParams::apply("kinform-test").force(),
            &Patch::Apply(json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "ssa"}, "data": {"k": "applied"}})),
        )
        .await
        .unwrap();
    assert_eq!(applied.data.unwrap()["k"], "applied");
    let managers: Vec<(String, String)> = applied
        .metadata
        .managed_fields
        .unwrap()
        .into_iter()
        .map(|m| (m.manager.unwrap(), m.operation.unwrap()))
        .collect();
    assert!(
        managers.contains(&("kinform-test".to_owned(), "Apply".to_owned())),
        "{managers:?}"
    );
    let before = api.get("ssa").await.unwrap();
    let err = api
        .patch(
            "ssa",
            &PatchParams::apply("someone-else"),
            &Patch::Apply(json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "ssa"}, "data": {"k": "mine"}})),
        )
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some(409), "{err}");
    assert_eq!(err.status().unwrap().reason.as_deref(), Some("Conflict"));
    assert_eq!(api.get("ssa").await.unwrap(), before);
}

#[tokio::test]
async fn delete_with_preconditions_and_propagation() {
    let e = env().await;
    let api: Api<ConfigMap> = Api::namespaced(e.client.clone(), "default");
    let obj = api
        .create(&PostParams::default(), &cm("d", &[]))
        .await
        .unwrap();

    let wrong_uid = DeleteParams {
        preconditions: Some(Preconditions {
            uid: Some("00000000-0000-0000-0000-000000000000".into()),
            resource_version: None,
        }),
        ..DeleteParams::default()
    };
    let err = api.delete("d", &wrong_uid).await.unwrap_err();
    assert!(err.is_conflict(), "{err}");

    let stale_rv = DeleteParams {
        preconditions: Some(Preconditions {
            uid: None,
            resource_version: Some("1".into()),
        }),
        ..DeleteParams::default()
    };
    let err = api.delete("d", &stale_rv).await.unwrap_err();
    assert!(err.is_conflict(), "{err}");
    assert!(api.get_opt("d").await.unwrap().is_some());

    let exact = DeleteParams {
        propagation_policy: Some(PropagationPolicy::Foreground),
        preconditions: Some(Preconditions {
            uid: obj.metadata.uid.clone(),
            resource_version: obj.metadata.resource_version.clone(),
        }),
        ..DeleteParams::default()
    };
    let answer = api.delete("d", &exact).await.unwrap();
    // No finalizers: either the last state or a Success Status, and the object is gone.
    if let Either::Left(last) = &answer {
        assert_eq!(last.name(), "d");
    }
    assert!(api.get_opt("d").await.unwrap().is_none());

    for (name, dp) in [
        ("bg", DeleteParams::background()),
        ("orph", DeleteParams::orphan()),
    ] {
        api.create(&PostParams::default(), &cm(name, &[]))
            .await
            .unwrap();
        api.delete(name, &dp).await.unwrap();
        assert!(api.get_opt(name).await.unwrap().is_none(), "{name}");
    }

    let err = api.delete("d", &DeleteParams::default()).await.unwrap_err();
    assert!(err.is_not_found(), "{err}");
}

#[tokio::test]
async fn delete_collection_by_selector() {
    let e = env().await;
    let api: Api<ConfigMap> = Api::namespaced(e.client.clone(), "default");
    for (n, tier) in [("c1", "web"), ("c2", "web"), ("c3", "db")] {
        api.create(&PostParams::default(), &cm(n, &[("tier", tier)]))
            .await
            .unwrap();
    }
    let lp = ListParams {
        label_selector: Some("tier=web".into()),
        ..ListParams::default()
    };
    let gone = api
        .delete_collection(&DeleteParams::default(), &lp)
        .await
        .unwrap();
    match gone {
        Either::Left(list) => {
            let mut names: Vec<_> = list.items.iter().map(|o| o.name().to_owned()).collect();
            names.sort();
            assert_eq!(names, ["c1", "c2"]);
        }
        Either::Right(status) => panic!("expected the deleted list, got {status:?}"),
    }
    let left: Vec<_> = api
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .iter()
        .map(|o| o.name().to_owned())
        .collect();
    assert_eq!(left, ["c3"]);

    // An object held by a finalizer is only marked for deletion by a collection delete.
    let mut held = cm("held", &[("tier", "db")]);
    held.metadata.finalizers = Some(vec!["example.com/hold".into()]);
    api.create(&PostParams::default(), &held).await.unwrap();
    let lp = ListParams {
        label_selector: Some("tier=db".into()),
        ..ListParams::default()
    };
    api.delete_collection(&DeleteParams::default(), &lp)
        .await
        .unwrap();
    assert!(api.get_opt("c3").await.unwrap().is_none());
    let pending = api.get("held").await.unwrap();
    assert!(pending.metadata.deletion_timestamp.is_some());
}

#[tokio::test]
async fn all_namespaces_api_creates_in_the_objects_namespace() {
    let e = env().await;
    e.server.create_namespace("other").unwrap();
    let all: Api<Pod> = Api::all(e.client.clone());
    let mut p = pod("wide");
    p.metadata = ObjectMeta {
        namespace: Some("other".into()),
        ..p.metadata
    };
    let created = all.create(&PostParams::default(), &p).await.unwrap();
    assert_eq!(created.metadata.namespace.as_deref(), Some("other"));
    let listed = all.list(&ListParams::default()).await.unwrap();
    assert_eq!(listed.items.len(), 1);
    let ns: Api<Pod> = Api::namespaced(e.client.clone(), "other");
    assert_eq!(
        ns.get("wide").await.unwrap().metadata.uid,
        created.metadata.uid
    );
}

#[tokio::test]
async fn write_preconditions_the_real_server_checks() {
    let e = env().await;
    let api: Api<ConfigMap> = Api::namespaced(e.client.clone(), "default");
    let created = api
        .create(&PostParams::default(), &cm("w", &[]))
        .await
        .unwrap();

    // Errors name the request.
    let err = api.get("missing").await.unwrap_err();
    assert!(
        err.to_string()
            .contains("GET /api/v1/namespaces/default/configmaps/missing"),
        "{err}"
    );

    // A resourceVersion in a patch is a precondition: stale is a Conflict.
    let err = api
        .patch(
            "w",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"resourceVersion": "1"}, "data": {"k": "x"}})),
        )
        .await
        .unwrap_err();
    assert!(err.is_conflict(), "{err}");
    let ok = api
        .patch(
            "w",
            &PatchParams::default(),
            &Patch::Merge(
                json!({"metadata": {"resourceVersion": created.resource_version()},
                "data": {"k": "x"}}),
            ),
        )
        .await
        .unwrap();
    assert_eq!(ok.data.unwrap()["k"], "x");

    // Creating an object that carries a resourceVersion is refused, as the real server does.
    let mut again = api.get("w").await.unwrap();
    again.metadata.name = Some("w2".into());
    again.metadata.uid = None;
    let err = api
        .create(&PostParams::default(), &again)
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some(400), "{err}");

    // The name in the body must match the URL.
    let mut renamed = api.get("w").await.unwrap();
    renamed.metadata.name = Some("other".into());
    let err = api
        .replace("w", &PostParams::default(), &renamed)
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some(400), "{err}");

    // dryRun runs the create and persists nothing; the answer has no resourceVersion.
    let dry = api
        .create(
            &PostParams {
                dry_run: true,
                field_manager: None,
            },
            &cm("dry", &[]),
        )
        .await
        .unwrap();
    assert!(dry.metadata.uid.is_some() && dry.metadata.resource_version.is_none());
    assert!(api.get_opt("dry").await.unwrap().is_none());
}

#[tokio::test]
async fn deleting_a_namespace_deletes_its_objects() {
    use k8s_openapi::api::core::v1::Namespace;
    let e = env().await;
    let namespaces: Api<Namespace> = Api::all(e.client.clone());
    let ns = Namespace {
        metadata: ObjectMeta {
            name: Some("doomed".into()),
            ..ObjectMeta::default()
        },
        ..Namespace::default()
    };
    let created = namespaces
        .create(&PostParams::default(), &ns)
        .await
        .unwrap();
    assert_eq!(
        created.status.and_then(|s| s.phase).as_deref(),
        Some("Active")
    );
    let api: Api<ConfigMap> = Api::namespaced(e.client.clone(), "doomed");
    api.create(&PostParams::default(), &cm("a", &[]))
        .await
        .unwrap();
    let all: Api<ConfigMap> = Api::all(e.client.clone());
    let mut w = all
        .watch(&kinform::WatchParams {
            resource_version: Some(e.server.resource_version().to_string()),
            ..kinform::WatchParams::default()
        })
        .await
        .unwrap();
    namespaces
        .delete("doomed", &DeleteParams::default())
        .await
        .unwrap();
    assert_eq!(
        kinform_tests::env::summary(&kinform_tests::env::next_event(&mut w).await),
        "DELETED a"
    );
    assert!(namespaces.get_opt("doomed").await.unwrap().is_none());
    assert!(
        api.list(&ListParams::default())
            .await
            .unwrap()
            .items
            .is_empty()
    );
    let err = api
        .create(&PostParams::default(), &cm("b", &[]))
        .await
        .unwrap_err();
    assert!(err.is_not_found(), "{err}");
}
