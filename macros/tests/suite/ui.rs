//! Compile errors with spans for missing, unknown and conflicting attributes.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
