//! Generation time for the whole CRD corpus (../shared/corpus/crds: 18 CRDs from 12
//! projects): reading the YAML into the model and type graph, and reading + emitting +
//! formatting every type, client, lister, informer and factory accessor.

// `criterion_group!` generates an undocumented public function.
#![allow(missing_docs)]

use std::path::PathBuf;

use criterion::{Criterion, criterion_group, criterion_main};
use kinform_codegen::read::crd::read_crds;
use kinform_codegen::{Generator, Layout};

fn corpus() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../shared/corpus/crds"
    ))
}

fn bench(c: &mut Criterion) {
    let crds = corpus();
    let mut g = c.benchmark_group("crd_corpus");
    g.sample_size(10);
    g.bench_function("read", |b| b.iter(|| read_crds([&crds]).unwrap()));
    g.bench_function("generate_tree", |b| {
        b.iter(|| {
            Generator::new()
                .crd_dir(&crds)
                .layout(Layout::Tree {
                    root_file: "mod.rs".into(),
                })
                .render()
                .unwrap()
        })
    });
    g.bench_function("generate_single_file", |b| {
        b.iter(|| Generator::new().crd_dir(&crds).render().unwrap())
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
