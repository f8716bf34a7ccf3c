//! kinform-client's in-place decoders (`client/src/decode/in_place/k8s_1_35.rs`) are exactly
//! `kinform-gen in-place`'s output for the corpus spec, so they never drift from the
//! generator; the field names it derives are k8s-openapi's.

use kinform_codegen::emit_in_place_decoders;

const SPEC: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../shared/corpus/openapi/swagger.json"
);
const FILE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../client/src/decode/in_place/k8s_1_35.rs"
);
const REGENERATE: &str = "cargo run -p kinform-codegen --features cli --bin kinform-gen -- \
    in-place ../shared/corpus/openapi/swagger.json --out client/src/decode/in_place/k8s_1_35.rs";

#[test]
fn the_committed_in_place_decoders_are_the_generators_output() {
    let emitted = emit_in_place_decoders(SPEC.as_ref()).expect("the spec is read");
    let committed = std::fs::read_to_string(FILE).expect("the committed file");
    assert!(
        emitted == committed,
        "{FILE} is out of date; regenerate with `{REGENERATE}`"
    );
    // Deterministic, and about what the client needs: pods and their parts among them.
    assert_eq!(
        emit_in_place_decoders(SPEC.as_ref()).expect("again"),
        emitted
    );
    for needed in [
        "\n    k8s_openapi::api::core::v1::Pod,\n",
        "in_place_struct!(resource k8s_openapi::api::core::v1::Pod {",
        "in_place_struct!(k8s_openapi::api::core::v1::Container {",
        "in_place_struct!(no_default k8s_openapi::api::events::v1::EventSeries {",
        "    \"$ref\" => ref_path,",
        "    \"hostIPC\" => host_ipc,",
        "    \"openAPIV3Schema\" => open_api_v3_schema,",
        "    k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime,",
    ] {
        assert!(emitted.contains(needed), "missing `{needed}`");
    }
    // The types whose decoders the client writes by hand are not emitted.
    for hand_written in ["Quantity,", "FieldsV1", "meta::v1::Time,"] {
        assert!(
            !emitted.contains(hand_written),
            "`{hand_written}` emitted, but the client writes its decoder"
        );
    }
}

#[test]
fn a_spec_that_is_not_there_is_an_error_naming_it() {
    let err = emit_in_place_decoders("/nonexistent/swagger.json".as_ref()).unwrap_err();
    assert!(
        err.to_string().contains("/nonexistent/swagger.json"),
        "{err}"
    );
}
