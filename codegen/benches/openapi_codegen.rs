//! Generation time for the Kubernetes v1.35 OpenAPI spec: reading (v2 file, v3 directory)
//! and reading + emitting + formatting every client, lister and informer.

// `criterion_group!` generates an undocumented public function.
#![allow(missing_docs)]

use std::path::PathBuf;

use criterion::{Criterion, criterion_group, criterion_main};
use kinform_codegen::read::openapi::read_openapi;
use kinform_codegen::{Generator, Layout};

fn corpus() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../shared/corpus/openapi"
    ))
}

fn bench(c: &mut Criterion) {
    let v2 = corpus().join("swagger.json");
    let v3 = corpus().join("v3");
    let mut g = c.benchmark_group("openapi_v1_35");
    g.sample_size(10);
    g.bench_function("read_v2", |b| b.iter(|| read_openapi(&v2).unwrap()));
    g.bench_function("read_v3_dir", |b| b.iter(|| read_openapi(&v3).unwrap()));
    g.bench_function("generate_tree_v2", |b| {
        b.iter(|| {
            Generator::new()
                .openapi(&v2)
                .layout(Layout::Tree {
                    root_file: "mod.rs".into(),
                })
                .render()
                .unwrap()
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
