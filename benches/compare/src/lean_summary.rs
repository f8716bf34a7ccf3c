//! The lean cache's figures beside the default cache's, per list size, as ratios to kube-rs
//! measured in the same run (issue #20: RSS per cached object <= 0.3x kube-rs's at 10k and
//! 100k pods, CPU no worse than the default cache).

use crate::report::{Row, heap_per_obj, rss_per_obj};
use crate::scenario::Figures;

/// Prints one row per (size, kinform scenario) with its ratios to the `kube` row of the same
/// size; sizes without a `kube` row are skipped.
pub fn print(per_size: &[(usize, Vec<Row>)]) {
    const ROWS: &[&str] = &[
        "kinform-streaming",
        "kinform-lean",
        "kinform-paged",
        "kinform-lean-paged",
        "kinform-keep-mf",
        "kinform-lean-keep-mf",
    ];
    if per_size.is_empty() {
        return;
    }
    println!(
        "\n| {} | scenario | steady RSS/obj | x kube | live heap/obj | x kube | sync s x kube | sync CPU µs/obj | x kube |",
        crate::kind().noun()
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    for (pods, results) in per_size {
        let find = |name: &str| results.iter().find(|r| r.name == name).map(|r| &r.figures);
        let Some(kube) = find("kube") else { continue };
        let (kube_rss, kube_heap) = (rss_per_obj(kube), heap_per_obj(kube));
        let cpu_per_obj = |f: &Figures| f.sync_cpu_secs * 1e6 / f.objects.max(1) as f64;
        for name in ROWS {
            let Some(f) = find(name) else { continue };
            let (rss, heap) = (rss_per_obj(f), heap_per_obj(f));
            println!(
                "| {pods} | {name} | {rss:.0} B | {:.2} | {heap:.0} B | {:.2} | {:.2} | {:.1} | {:.2} |",
                rss / kube_rss,
                heap / kube_heap,
                f.sync_secs / kube.sync_secs,
                cpu_per_obj(f),
                cpu_per_obj(f) / cpu_per_obj(kube),
            );
        }
    }
}
