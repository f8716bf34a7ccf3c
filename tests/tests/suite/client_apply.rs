//! Typed server-side apply against `TestApiServer` (issue #45's acceptance): `Api::apply` and
//! `Api::apply_status` answering the typed object, and `kinform::apply::extract` of what one
//! field manager applied. A generated CRD type (`crd-codegen`'s `BackupSchedule`, whose
//! `status.conditions` is a list map keyed by `type`) and a built-in through the generic path.

use crd_codegen::generated::ops_example_com::v1::BackupSchedule;
use crd_codegen::generated::ops_example_com::v1::backup_schedule::BackupScheduleSpec;
use k8s_openapi::api::core::v1::ConfigMap;
use kinform::Api;
use kinform::HasMetadata;
use kinform::apply::{extract, extract_as};
use kinform::client::ApplyParams;
use kinform_tests::env::{Env, env};
use serde_json::{Value, json};

const T: &str = "2026-01-02T03:04:05Z";

async fn schedules() -> (Env, Api<BackupSchedule>) {
    let e = env().await;
    e.server.register_crd_yaml(crd_codegen::CRD_YAML).unwrap();
    let api = Api::namespaced(e.client.clone(), "default");
    (e, api)
}

fn schedule(spec: Value) -> Value {
    json!({"apiVersion": "ops.example.com/v1", "kind": "BackupSchedule",
           "metadata": {"name": "nightly"}, "spec": spec})
}

fn conditions(types: &[&str]) -> Value {
    let items: Vec<Value> = types
        .iter()
        .map(|t| {
            json!({"type": t, "status": "True", "reason": "Fine", "message": "fine",
                   "lastTransitionTime": T})
        })
        .collect();
    json!({"apiVersion": "ops.example.com/v1", "kind": "BackupSchedule",
           "metadata": {"name": "nightly"}, "status": {"conditions": items}})
}

fn spec(obj: &BackupSchedule) -> &BackupScheduleSpec {
    obj.spec.as_ref().expect("a spec")
}

fn condition_types(obj: &BackupSchedule) -> Vec<String> {
    let v = serde_json::to_value(obj).unwrap();
    v["status"]["conditions"]
        .as_array()
        .map(|c| {
            c.iter()
                .map(|c| c["type"].as_str().unwrap().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn disjoint_managers_keep_each_others_fields_and_extract_their_own() {
    let (_e, api) = schedules().await;
    let owner = ApplyParams::new("schedule-owner");
    let first = api
        .apply(
            "nightly",
            &owner,
            &schedule(json!({"schedule": "0 1 * * *", "target": {"database": "orders"}})),
        )
        .await
        .unwrap();
    assert_eq!(spec(&first).schedule, "0 1 * * *");
    let second = api
        .apply(
            "nightly",
            &ApplyParams::new("suspender"),
            &schedule(json!({"suspend": true})),
        )
        .await
        .unwrap();
    // The second manager's intent lacks the schedule: it stays, owned by the first.
    assert_eq!(spec(&second).schedule, "0 1 * * *");
    assert_eq!(spec(&second).target.database, "orders");
    assert_eq!(spec(&second).suspend, Some(true));

    let mine: Value = extract_as(&second, "schedule-owner", "").unwrap();
    assert_eq!(
        mine,
        schedule(json!({"schedule": "0 1 * * *", "target": {"database": "orders"}}))
            .as_object()
            .map(|m| {
                let mut m = m.clone();
                m["metadata"]["namespace"] = json!("default");
                Value::Object(m)
            })
            .unwrap()
    );
    let theirs: Value = extract_as(&second, "suspender", "").unwrap();
    assert_eq!(theirs["spec"], json!({"suspend": true}));

    // The first manager applies again without the field the other owns: nothing is lost.
    let again = api
        .apply(
            "nightly",
            &owner,
            &schedule(json!({"schedule": "0 2 * * *", "target": {"database": "orders"}})),
        )
        .await
        .unwrap();
    assert_eq!(spec(&again).schedule, "0 2 * * *");
    assert_eq!(spec(&again).suspend, Some(true));
}

#[tokio::test]
async fn a_conflict_is_kube_apiservers_409_until_forced() {
    let (_e, api) = schedules().await;
    api.apply(
        "nightly",
        &ApplyParams::new("schedule-owner"),
        &schedule(json!({"schedule": "0 1 * * *", "target": {"database": "orders"}})),
    )
    .await
    .unwrap();
    let before = api.get("nightly").await.unwrap();
    let intent = schedule(json!({"schedule": "*/5 * * * *"}));
    let err = api
        .apply("nightly", &ApplyParams::new("intruder"), &intent)
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some(409), "{err}");
    let status = err.status().unwrap();
    assert_eq!(status.reason.as_deref(), Some("Conflict"));
    assert_eq!(
        status.message.as_deref(),
        Some("Apply failed with 1 conflict: conflict with \"schedule-owner\": .spec.schedule")
    );
    assert_eq!(api.get("nightly").await.unwrap(), before);

    let forced = api
        .apply("nightly", &ApplyParams::new("intruder").force(), &intent)
        .await
        .unwrap();
    assert_eq!(spec(&forced).schedule, "*/5 * * * *");
    // The field changed hands: the first manager keeps only the target.
    let owner: Value = extract_as(&forced, "schedule-owner", "").unwrap();
    assert_eq!(owner["spec"], json!({"target": {"database": "orders"}}));
    let intruder: Value = extract_as(&forced, "intruder", "").unwrap();
    assert_eq!(intruder["spec"], json!({"schedule": "*/5 * * * *"}));
}

#[tokio::test]
async fn extract_then_apply_changes_nothing() {
    let (_e, api) = schedules().await;
    let params = ApplyParams::new("controller");
    api.apply(
        "nightly",
        &params,
        &schedule(json!({"schedule": "0 1 * * *", "suspend": false,
            "labels": {"team": "db"}, "target": {"database": "orders", "port": 5432}})),
    )
    .await
    .unwrap();
    let live = api
        .apply_status("nightly", &params, &conditions(&["Ready"]))
        .await
        .unwrap();

    let spec: Value = extract_as(&live, "controller", "").unwrap();
    let status: Value = extract_as(&live, "controller", "status").unwrap();
    assert!(status.get("spec").is_none(), "{status}");
    assert_eq!(status["status"]["conditions"][0]["type"], "Ready");
    let same = api.apply("nightly", &params, &spec).await.unwrap();
    assert_eq!(same.resource_version(), live.resource_version());
    let same = api.apply_status("nightly", &params, &status).await.unwrap();
    assert_eq!(same.resource_version(), live.resource_version());
    assert_eq!(same, live);
}

#[tokio::test]
async fn a_list_map_item_left_out_goes_only_when_nobody_else_owns_it() {
    let (_e, api) = schedules().await;
    api.apply(
        "nightly",
        &ApplyParams::new("controller"),
        &schedule(json!({"schedule": "0 1 * * *", "target": {"database": "orders"}})),
    )
    .await
    .unwrap();
    let (a, b) = (ApplyParams::new("a"), ApplyParams::new("b"));
    api.apply_status("nightly", &a, &conditions(&["Ready", "Synced", "Stale"]))
        .await
        .unwrap();
    // `b` applies the same Synced item: both own it.
    let shared = api
        .apply_status("nightly", &b, &conditions(&["Synced"]))
        .await
        .unwrap();
    assert_eq!(condition_types(&shared), ["Ready", "Synced", "Stale"]);
    let b_owns: Value = extract_as(&shared, "b", "status").unwrap();
    assert_eq!(b_owns["status"]["conditions"].as_array().unwrap().len(), 1);

    // `a` leaves out Synced (still `b`'s) and Stale (only `a`'s).
    let after = api
        .apply_status("nightly", &a, &conditions(&["Ready"]))
        .await
        .unwrap();
    assert_eq!(condition_types(&after), ["Ready", "Synced"]);
    // Now `b` leaves Synced out too: nobody owns it, it goes.
    let gone = api
        .apply_status("nightly", &b, &conditions(&[]))
        .await
        .unwrap();
    assert_eq!(condition_types(&gone), ["Ready"]);
}

#[tokio::test]
async fn a_built_in_through_the_generic_path() {
    let e = env().await;
    let api: Api<ConfigMap> = Api::namespaced(e.client.clone(), "default");
    let intent = |data: Value| {
        json!({"apiVersion": "v1", "kind": "ConfigMap",
               "metadata": {"name": "cfg", "labels": {"app": "x"}}, "data": data})
    };
    api.apply("cfg", &ApplyParams::new("one"), &intent(json!({"a": "1"})))
        .await
        .unwrap();
    let live = api
        .apply(
            "cfg",
            &ApplyParams::new("two"),
            &json!({"apiVersion": "v1",
            "kind": "ConfigMap", "metadata": {"name": "cfg"}, "data": {"b": "2"}}),
        )
        .await
        .unwrap();
    let live_json = serde_json::to_value(&live).unwrap();
    let one = extract(&live_json, "one", "").unwrap();
    assert_eq!(
        one,
        json!({"apiVersion": "v1", "kind": "ConfigMap",
               "metadata": {"name": "cfg", "namespace": "default", "labels": {"app": "x"}},
               "data": {"a": "1"}})
    );
    let again = api
        .apply("cfg", &ApplyParams::new("one"), &one)
        .await
        .unwrap();
    assert_eq!(again.resource_version(), live.resource_version());
    assert_eq!(
        again.data.unwrap().into_iter().collect::<Vec<_>>(),
        [("a".into(), "1".into()), ("b".into(), "2".into())]
    );

    // An intent without apiVersion and kind is refused before any request.
    let err = api
        .apply("cfg", &ApplyParams::new("one"), &json!({"data": {}}))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("apiVersion and kind"), "{err}");
    assert_eq!(
        e.server.resource_version().to_string(),
        live.resource_version()
    );
}
