//! Generates the Foo type, its typed client, lister and informer from the CRD YAML, as
//! prost-build does for .proto files: `src/lib.rs` includes `kinform_generated.rs`.

fn main() {
    println!("cargo:rerun-if-changed=crds");
    let out_dir = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    let generated = kinform_codegen::Generator::new()
        .crd_dir("crds")
        .out_dir(out_dir)
        .generate_report();
    match generated {
        // What was left out (a document that is not a CRD, an unserved version) is shown by
        // cargo as a warning.
        Ok(report) => {
            for warning in report.warnings {
                println!("cargo:warning={warning}");
            }
        }
        // A build script fails through its exit status; the error names file and schema path.
        Err(e) => {
            eprintln!("generating the Foo API from crds/: {e}");
            std::process::exit(1);
        }
    }
}
