//! Typed server-side apply against `TestApiServer` (issue #45's acceptance): generated apply
//! configurations (`crd-codegen`'s `BackupScheduleApply`, whose `status.conditions` and
//! `spec.hooks` are list maps keyed by `type` and `name`) applied through the generated typed
//! client's `apply` and `apply_status`, and `BackupScheduleApply::extract` /
//! `extract_status` of what one field manager applied; a built-in through the generic path.
//! Each test names the kube-apiserver behaviour it checks (structured-merge-diff's field
//! ownership as `staging/src/k8s.io/apiserver/pkg/endpoints/handlers/fieldmanager` applies
//! it).

use crd_codegen::generated::ops_example_com::v1::BackupSchedule;
use crd_codegen::generated::ops_example_com::v1::BackupScheduleApply;
use crd_codegen::generated::ops_example_com::v1::backup_schedule::BackupScheduleSpec;
use crd_codegen::generated::ops_example_com::v1::backup_schedule::apply::{
    BackupScheduleSpecApply, BackupScheduleSpecHooksApply, BackupScheduleSpecTargetApply,
    BackupScheduleStatusApply,
};
use crd_codegen::generated::ops_example_com::v1::backup_schedule_client::BackupScheduleClient;
use crd_codegen::generated::prelude::*;
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kinform::Api;
use kinform::HasMetadata;
use kinform::apply::extract;
use kinform::client::ApplyParams;
use kinform::value::ConditionApply;
use kinform_tests::env::{Env, env};
use serde_json::{Value, json};

const T: &str = "2026-01-02T03:04:05Z";

async fn schedules() -> (Env, BackupScheduleClient) {
    let e = env().await;
    e.server.register_crd_yaml(crd_codegen::CRD_YAML).unwrap();
    let client = e.client.ops_example_com_v1().backupschedules("default");
    (e, client)
}

fn schedule(spec: BackupScheduleSpecApply) -> BackupScheduleApply {
    BackupScheduleApply::new("nightly").with_spec(spec)
}

fn orders(schedule: &str) -> BackupScheduleSpecApply {
    BackupScheduleSpecApply::default()
        .with_schedule(schedule)
        .with_target(BackupScheduleSpecTargetApply::default().with_database("orders"))
}

fn conditions(types: &[&str]) -> BackupScheduleApply {
    let items = types.iter().map(|t| {
        ConditionApply::new(*t)
            .with_status("True")
            .with_reason("Fine")
            .with_message("fine")
            .with_last_transition_time(T)
    });
    BackupScheduleApply::new("nightly")
        .with_status(BackupScheduleStatusApply::default().with_conditions(items))
}

fn hooks(spec: BackupScheduleSpecApply, names: &[&str]) -> BackupScheduleApply {
    let items = names
        .iter()
        .map(|n| BackupScheduleSpecHooksApply::new(*n).with_command([format!("run-{n}")]));
    schedule(spec.with_hooks(items))
}

fn spec(obj: &BackupSchedule) -> &BackupScheduleSpec {
    obj.spec.as_ref().expect("a spec")
}

fn condition_types(obj: &BackupSchedule) -> Vec<String> {
    let status = obj.status.as_ref();
    let conditions = status.and_then(|s| s.conditions.as_ref());
    conditions
        .map(|c| c.iter().map(|c| c.type_.clone()).collect())
        .unwrap_or_default()
}

fn hook_names(obj: &BackupSchedule) -> Vec<String> {
    let hooks = spec(obj).hooks.as_ref();
    hooks
        .map(|h| h.iter().map(|h| h.name.clone()).collect())
        .unwrap_or_default()
}

/// kube-apiserver: an apply sets only the fields in the intent; fields another manager owns
/// stay, and each manager's `managedFields` entry holds exactly what it applied.
#[tokio::test]
async fn disjoint_managers_keep_each_others_fields_and_extract_their_own() {
    let (_e, api) = schedules().await;
    let owner = ApplyParams::new("schedule-owner");
    let first = api
        .apply("nightly", &owner, &schedule(orders("0 1 * * *")))
        .await
        .unwrap();
    assert_eq!(spec(&first).schedule, "0 1 * * *");
    let suspend = schedule(BackupScheduleSpecApply::default().with_suspend(true));
    let second = api
        .apply("nightly", &ApplyParams::new("suspender"), &suspend)
        .await
        .unwrap();
    // The second manager's intent lacks the schedule: it stays, owned by the first.
    assert_eq!(spec(&second).schedule, "0 1 * * *");
    assert_eq!(spec(&second).target.database, "orders");
    assert_eq!(spec(&second).suspend, Some(true));

    let mine = BackupScheduleApply::extract(&second, "schedule-owner").unwrap();
    assert_eq!(
        mine,
        schedule(orders("0 1 * * *")).with_namespace("default")
    );
    let theirs = BackupScheduleApply::extract(&second, "suspender").unwrap();
    assert_eq!(theirs.spec, suspend.spec);

    // The first manager applies again without the field the other owns: nothing is lost.
    let again = api
        .apply("nightly", &owner, &schedule(orders("0 2 * * *")))
        .await
        .unwrap();
    assert_eq!(spec(&again).schedule, "0 2 * * *");
    assert_eq!(spec(&again).suspend, Some(true));
}

/// kube-apiserver: applying a value to a field another manager owns is `409 Conflict` with
/// the message `Apply failed with 1 conflict: conflict with "<manager>": .<path>`, and
/// nothing is written; with `force=true` the field changes hands.
#[tokio::test]
async fn a_conflict_is_kube_apiservers_409_until_forced() {
    let (_e, api) = schedules().await;
    api.apply(
        "nightly",
        &ApplyParams::new("schedule-owner"),
        &schedule(orders("0 1 * * *")),
    )
    .await
    .unwrap();
    let before = api.get("nightly").await.unwrap();
    let intent = schedule(BackupScheduleSpecApply::default().with_schedule("*/5 * * * *"));
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
    let owner = BackupScheduleApply::extract(&forced, "schedule-owner").unwrap();
    assert_eq!(
        owner.spec,
        Some(
            BackupScheduleSpecApply::default()
                .with_target(BackupScheduleSpecTargetApply::default().with_database("orders"))
        )
    );
    let intruder = BackupScheduleApply::extract(&forced, "intruder").unwrap();
    assert_eq!(intruder.spec, intent.spec);
}

/// kube-apiserver: an apply that changes nothing is a no-op: no new resourceVersion (the
/// apply handler skips the write when the merged object equals the live one).
#[tokio::test]
async fn extract_then_apply_changes_nothing() {
    let (_e, api) = schedules().await;
    let params = ApplyParams::new("controller");
    let intent = schedule(
        BackupScheduleSpecApply::default()
            .with_schedule("0 1 * * *")
            .with_suspend(false)
            .with_labels([("team", "db".to_owned())])
            .with_target(
                BackupScheduleSpecTargetApply::default()
                    .with_database("orders")
                    .with_port(IntOrString::Int(5432)),
            ),
    );
    api.apply("nightly", &params, &intent).await.unwrap();
    let live = api
        .apply_status("nightly", &params, &conditions(&["Ready"]))
        .await
        .unwrap();

    let spec = BackupScheduleApply::extract(&live, "controller").unwrap();
    assert_eq!(spec, intent.clone().with_namespace("default"));
    let status = BackupScheduleApply::extract_status(&live, "controller").unwrap();
    assert!(status.spec.is_none(), "{status:?}");
    assert_eq!(status.status, conditions(&["Ready"]).status);
    let same = api.apply("nightly", &params, &spec).await.unwrap();
    assert_eq!(same.resource_version(), live.resource_version());
    let same = api.apply_status("nightly", &params, &status).await.unwrap();
    assert_eq!(same.resource_version(), live.resource_version());
    assert_eq!(same, live);
}

/// kube-apiserver: an associative list item a manager leaves out of its next apply is
/// removed only when no other manager owns it (structured-merge-diff removes the fields a
/// manager stopped applying, minus those others still own).
#[tokio::test]
async fn a_list_map_item_left_out_goes_only_when_nobody_else_owns_it() {
    let (_e, api) = schedules().await;
    api.apply(
        "nightly",
        &ApplyParams::new("controller"),
        &schedule(orders("0 1 * * *")),
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
    let b_owns = BackupScheduleApply::extract_status(&shared, "b").unwrap();
    assert_eq!(b_owns.status, conditions(&["Synced"]).status);

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

/// The same rule on the main resource, for items whose apply configuration starts from its
/// key (`BackupScheduleSpecHooksApply::new(name)`): extract keeps each item's key, so the
/// extract applies back to the same items.
#[tokio::test]
async fn keyed_items_of_the_spec_merge_by_their_key() {
    let (_e, api) = schedules().await;
    let (a, b) = (ApplyParams::new("a"), ApplyParams::new("b"));
    let none = BackupScheduleSpecApply::default;
    api.apply(
        "nightly",
        &a,
        &hooks(orders("0 1 * * *"), &["dump", "vacuum"]),
    )
    .await
    .unwrap();
    let both = api
        .apply("nightly", &b, &hooks(none(), &["notify", "vacuum"]))
        .await
        .unwrap();
    assert_eq!(hook_names(&both), ["dump", "notify", "vacuum"]);
    // Items keep the live object's order.
    let b_owns = BackupScheduleApply::extract(&both, "b").unwrap();
    assert_eq!(
        b_owns,
        hooks(none(), &["notify", "vacuum"]).with_namespace("default")
    );

    // `a` drops both of its hooks: `dump` was only `a`'s, `vacuum` is still `b`'s.
    let after = api
        .apply("nightly", &a, &schedule(orders("0 1 * * *")))
        .await
        .unwrap();
    assert_eq!(hook_names(&after), ["notify", "vacuum"]);
    let same = api.apply("nightly", &b, &b_owns).await.unwrap();
    assert_eq!(same.resource_version(), after.resource_version());
}

/// `From<&BackupSchedule>`: a whole typed object as an intent, applied to an empty server,
/// gives that object back (what the server adds aside).
#[tokio::test]
async fn a_full_object_converts_into_its_apply_configuration() {
    let (_e, api) = schedules().await;
    let mut object = BackupSchedule::new(
        "nightly",
        serde_json::from_value(
            json!({"schedule": "0 3 * * *", "target": {"database": "users"},
            "hooks": [{"name": "dump", "command": ["pg_dump"]}], "retentionDays": 7}),
        )
        .unwrap(),
    );
    object.metadata.labels = Some([("team".to_owned(), "db".to_owned())].into());
    let config = BackupScheduleApply::from(&object);
    assert_eq!(
        serde_json::to_value(&config).unwrap(),
        serde_json::to_value(&object).unwrap()
    );
    let applied = api
        .apply("nightly", &ApplyParams::new("converter"), &config)
        .await
        .unwrap();
    // The server fills in the schema's defaults, with the rules of `apply_schema_defaults`.
    object.apply_schema_defaults().unwrap();
    assert_eq!(applied.spec, object.spec);
    assert_eq!(applied.metadata.labels, object.metadata.labels);
}

/// A built-in kind through `Api<K>::apply` with a JSON intent, and the untyped extract.
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

/// The official Python client applying the same scenario with hand-written JSON intents
/// (`tests/python/test_apply_scenario.py`) to a twin object: kube-apiserver records each
/// manager's `managedFields` from its intents alone, so the typed configurations (which
/// serialize exactly what was set) leave the same entries (manager, operation, subresource,
/// fieldsV1) and the same object.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_client_applying_the_same_scenario_agrees_on_managed_fields() {
    let Some(py) = kinform_tests::python::interpreter_or_skip(
        &["kubernetes", "pytest"],
        "the Python apply scenario",
    ) else {
        return;
    };
    let (e, api) = schedules().await;
    let (a, b) = (ApplyParams::new("a"), ApplyParams::new("b"));
    let none = BackupScheduleSpecApply::default;
    let name = "nightly";
    api.apply(name, &a, &hooks(orders("0 1 * * *"), &["dump", "vacuum"]))
        .await
        .unwrap();
    api.apply(name, &b, &hooks(none(), &["notify", "vacuum"]))
        .await
        .unwrap();
    api.apply_status(name, &a, &conditions(&["Ready", "Synced"]))
        .await
        .unwrap();
    api.apply_status(name, &b, &conditions(&["Synced"]))
        .await
        .unwrap();
    let ours = api
        .apply(name, &a, &schedule(orders("0 2 * * *")))
        .await
        .unwrap();

    let suite =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("python/test_apply_scenario.py");
    let out = kinform_tests::python::pytest(
        py,
        &e.server,
        &suite,
        &[("KINFORM_APPLY_OBJECT", "nightly-py".to_owned())],
    )
    .await;
    assert!(
        out.status.success(),
        "pytest failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let theirs = api.get("nightly-py").await.unwrap();
    let entries = |o: &BackupSchedule| -> Vec<Value> {
        let fields = o.metadata.managed_fields.clone().unwrap_or_default();
        fields
            .into_iter()
            .map(|m| {
                json!([
                    m.manager,
                    m.operation,
                    m.subresource,
                    m.fields_type,
                    m.fields_v1.map(|f| f.0)
                ])
            })
            .collect()
    };
    assert_eq!(entries(&ours), entries(&theirs));
    assert_eq!(entries(&ours).len(), 4, "{:?}", entries(&ours));
    assert_eq!(ours.spec, theirs.spec);
    assert_eq!(ours.status, theirs.status);
}
