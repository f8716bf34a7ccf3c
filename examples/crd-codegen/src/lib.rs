//! `crd-codegen`: Rust types, a typed client, a lister and an informer generated from CRD YAML
//! by `build.rs` (with `kinform_codegen::Generator`, as prost-build does for protobuf), used
//! against an embedded `TestApiServer`.
//!
//! [`run`] is the whole demonstration: the binary prints what it does, the integration test
//! runs the same code path and checks its [`Report`].

use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use kinform::HasMetadata;
use kinform::client::{DeleteParams, Patch, PatchParams, PostParams};
use kinform::fifo::Deleted;
use kinform::informer::{EventHandlerFns, InformerFactory};
use kinform::testing::TestApiServer;
use tokio::sync::mpsc;

/// The code `build.rs` generated from `crds/` (types, clients, listers, informers, factory
/// accessors), included from OUT_DIR.
pub mod generated {
    include!(concat!(env!("OUT_DIR"), "/kinform_generated.rs"));
}

use generated::ops_example_com::v1::BackupSchedule;
use generated::ops_example_com::v1::backup_schedule::{
    BackupScheduleSpec, BackupScheduleSpecStorageClass, BackupScheduleSpecTarget,
    BackupScheduleStatusPhase,
};
use generated::prelude::*;

/// The CRD the types were generated from, registered with the embedded server.
pub const CRD_YAML: &str = include_str!("../crds/backupschedules.yaml");

/// What one run saw.
#[derive(Debug, Default)]
pub struct Report {
    /// Names created through the typed client.
    pub created: Vec<String>,
    /// Keys in the informer's lister once synced, sorted.
    pub listed: Vec<String>,
    /// Events the informer delivered, in order (`ADDED ns/name`, `MODIFIED ..`, `DELETED ..`).
    pub events: Vec<String>,
    /// The phase the lister showed after the status update.
    pub phase: Option<String>,
    /// Keys left in the lister after the delete, sorted.
    pub after_delete: Vec<String>,
}

/// Errors of a run.
pub type Error = Box<dyn std::error::Error + Send + Sync>;

fn event(events: &mpsc::UnboundedSender<String>, what: &str, key: String) {
    // The receiver lives until the end of `run`; a send after that has nobody to tell.
    let _ = events.send(format!("{what} {key}"));
}

/// Waits for the next informer event (bounded, so a broken informer fails instead of hanging).
async fn next(events: &mut mpsc::UnboundedReceiver<String>) -> Result<String, Error> {
    tokio::time::timeout(Duration::from_secs(30), events.recv())
        .await
        .map_err(|_| "no informer event within 30 s")?
        .ok_or_else(|| "the informer's handler is gone".into())
}

/// Starts a `TestApiServer`, registers the CRD, creates three `BackupSchedule`s through the
/// generated typed client, watches them through the generated informer, updates one's status
/// and deletes another; writes a line per step to `out`.
pub async fn run(out: &mut (dyn Write + Send)) -> Result<Report, Error> {
    let server = TestApiServer::start().await?;
    server.register_crd_yaml(CRD_YAML)?;
    server.create_namespace("databases")?;
    writeln!(out, "embedded TestApiServer at {}", server.url())?;
    let client = server.client()?;
    let schedules = client.ops_example_com_v1().backupschedules("databases");

    // The server is the embedded test server: test-sized reflector backoff.
    let factory = InformerFactory::builder(client.clone())
        .test_backoff()
        .build();
    let informer = factory.ops_example_com().v1().backupschedules();
    let (tx, mut rx) = mpsc::unbounded_channel();
    let (on_add, on_update, on_delete) = (tx.clone(), tx.clone(), tx);
    informer.informer().add_event_handler(
        EventHandlerFns::new()
            .on_add(move |s: &Arc<BackupSchedule>, _| event(&on_add, "ADDED", s.key()))
            .on_update(move |_, s: &Arc<BackupSchedule>| event(&on_update, "MODIFIED", s.key()))
            .on_delete(move |d: &Deleted<BackupSchedule>| {
                let key = match d {
                    Deleted::Object(s) => s.key(),
                    Deleted::FinalStateUnknown { key, .. } => key.clone(),
                };
                event(&on_delete, "DELETED", key)
            }),
    );
    factory.start();
    factory.wait_for_cache_sync(Duration::from_secs(30)).await?;
    writeln!(out, "informer synced (empty)")?;

    let mut report = Report::default();
    for (name, database, class) in [
        (
            "orders-nightly",
            "orders",
            BackupScheduleSpecStorageClass::Standard,
        ),
        (
            "users-hourly",
            "users",
            BackupScheduleSpecStorageClass::Archive,
        ),
        (
            "audit-weekly",
            "audit",
            BackupScheduleSpecStorageClass::ColdLine,
        ),
    ] {
        let spec = BackupScheduleSpec {
            schedule: "0 2 * * *".to_owned(),
            storage_class: Some(class),
            target: BackupScheduleSpecTarget {
                database: database.to_owned(),
                ..Default::default()
            },
            ..Default::default()
        };
        let created = schedules
            .create(&PostParams::default(), &BackupSchedule::new(name, spec))
            .await?;
        // The server filled in the schema defaults the object left out.
        let spec = created.spec.as_ref().ok_or("created without a spec")?;
        writeln!(
            out,
            "created {} (storageClass {}, retentionDays {} by default, resourceVersion {})",
            created.key(),
            spec.storage_class.as_ref().ok_or("no storageClass")?,
            spec.retention_days.ok_or("no retentionDays default")?,
            created.resource_version()
        )?;
        report.created.push(created.name().to_owned());
    }
    for _ in 0..3 {
        report.events.push(next(&mut rx).await?);
    }
    let lister = informer.lister();
    let mut listed: Vec<String> = lister.list_all().iter().map(|s| s.key()).collect();
    listed.sort();
    writeln!(out, "lister: {}", listed.join(", "))?;
    report.listed = listed;

    let patch = Patch::Merge(serde_status("Running", 1));
    let patched = schedules
        .patch_status("orders-nightly", &PatchParams::default(), &patch)
        .await?;
    writeln!(
        out,
        "status of {} set to {}",
        patched.key(),
        phase(&patched).unwrap_or_default()
    )?;
    report.events.push(next(&mut rx).await?);
    report.phase = lister
        .get("databases", "orders-nightly")
        .and_then(|s| phase(&s));
    writeln!(
        out,
        "lister sees orders-nightly {}",
        report.phase.as_deref().unwrap_or("-")
    )?;

    schedules
        .delete("audit-weekly", &DeleteParams::default())
        .await?;
    report.events.push(next(&mut rx).await?);
    let mut left: Vec<String> = lister.list_all().iter().map(|s| s.key()).collect();
    left.sort();
    writeln!(
        out,
        "deleted databases/audit-weekly; lister: {}",
        left.join(", ")
    )?;
    report.after_delete = left;
    for e in &report.events {
        writeln!(out, "event: {e}")?;
    }

    factory.shutdown().await;
    server.shutdown().await;
    Ok(report)
}

fn phase(s: &BackupSchedule) -> Option<String> {
    let phase: &BackupScheduleStatusPhase = s.status.as_ref()?.phase.as_ref()?;
    Some(phase.to_string())
}

/// The merge patch of a status: `{"status": {"phase": .., "running": ..}}`.
fn serde_status(phase: &str, running: i32) -> kinform::k8s_openapi::serde_json::Value {
    kinform::k8s_openapi::serde_json::json!({"status": {"phase": phase, "running": running}})
}
