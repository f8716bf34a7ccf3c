//! The example's code path, checked: generated client, informer and lister against the
//! embedded server.

use crd_codegen::generated::ops_example_com::v1::{BackupSchedule, backup_schedule};
use kinform::Resource;

#[tokio::test]
async fn the_example_runs_and_sees_every_change() {
    let mut out = Vec::new();
    let report = crd_codegen::run(&mut out).await.expect("the example runs");
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("created databases/orders-nightly"), "{text}");
    assert_eq!(
        report.created,
        ["orders-nightly", "users-hourly", "audit-weekly"]
    );
    assert_eq!(
        report.listed,
        [
            "databases/audit-weekly",
            "databases/orders-nightly",
            "databases/users-hourly"
        ]
    );
    let mut added = report.events[..3].to_vec();
    added.sort();
    assert_eq!(
        added,
        [
            "ADDED databases/audit-weekly",
            "ADDED databases/orders-nightly",
            "ADDED databases/users-hourly"
        ]
    );
    assert_eq!(report.events[3], "MODIFIED databases/orders-nightly");
    assert_eq!(report.events[4], "DELETED databases/audit-weekly");
    assert_eq!(report.phase.as_deref(), Some("Running"));
    assert_eq!(
        report.after_delete,
        ["databases/orders-nightly", "databases/users-hourly"]
    );
}

#[test]
fn generated_types_carry_the_crd() {
    assert_eq!(BackupSchedule::API_VERSION, "ops.example.com/v1");
    assert_eq!(BackupSchedule::PLURAL, "backupschedules");
    // Decoding fills in no default; `apply_schema_defaults` gives the server's view.
    let mut schedule = BackupSchedule::new("b", backup_schedule::BackupScheduleSpec::default());
    assert_eq!(schedule.spec.as_ref().unwrap().retention_days, None);
    schedule.apply_schema_defaults().unwrap();
    let spec = schedule.spec.as_ref().unwrap();
    assert_eq!(spec.retention_days, Some(7));
    assert_eq!(spec.parallelism, Some(1));
    assert_eq!(
        spec.storage_class,
        Some(backup_schedule::BackupScheduleSpecStorageClass::Standard)
    );
}
