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
    let spec = backup_schedule::BackupScheduleSpec::default();
    assert_eq!(spec.retention_days, 7);
    assert_eq!(spec.parallelism, 1);
    assert_eq!(
        spec.storage_class,
        backup_schedule::BackupScheduleSpecStorageClass::Standard
    );
}
