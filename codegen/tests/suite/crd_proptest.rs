//! Nothing panics on any input: arbitrary text and mutations of a real CRD go through the
//! CRD reader and, when it accepts them, through the type emitter.
//!
//! The decode -> encode property of the generated types (documents generated from every
//! corpus CRD schema with proptest's RNG: nulls, absent fields, unknown enum values, probes)
//! runs in `crd_roundtrip.rs`, which compiles the generated code of the whole corpus once.

use std::path::Path;

use kinform_codegen::read::crd::read_crd_str;
use kinform_codegen::{TypesConfig, emit_crd_types};
use proptest::prelude::*;

const SEED: &str = include_str!("../fixtures/widgets.yaml");

/// Cases per property: `PROPTEST_CASES` (at length:
/// `PROPTEST_CASES=100000 cargo test -p kinform-codegen --release --test suite crd_proptest::`), else 256.
fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(256)
}

fn run(text: &str) {
    if let Ok(set) = read_crd_str(Path::new("fuzz.yaml"), text) {
        emit_crd_types(&set.types, &TypesConfig::default())
            .expect("accepted input emits valid Rust");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn arbitrary_text_never_panics(text in "(?s).{0,400}") {
        run(&text);
    }

    #[test]
    fn yamlish_text_never_panics(text in "([a-z$-]{0,6}(: |:\n  |- |\n---\n|\\{|\\}|\\[|\\]|, |&a |\\*a |!!str |\"|'| )){0,60}") {
        run(&text);
    }

    #[test]
    fn mutated_crds_never_panic(
        cut in 0usize..SEED.len(),
        len in 0usize..40,
        insert in "[ -~\n]{0,12}",
    ) {
        let mut text = SEED.as_bytes().to_vec();
        let end = (cut + len).min(text.len());
        text.splice(cut..end, insert.bytes());
        let text = String::from_utf8_lossy(&text);
        run(&text);
    }
}
