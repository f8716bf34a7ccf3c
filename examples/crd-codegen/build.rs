//! Generates the types, clients, listers and informers of every CRD in `crds/` into OUT_DIR,
//! as a user's build script would (prost-build style). The README's build.rs snippet is this
//! file, and `src/lib.rs` its `include!`: keep them the same.

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
            eprintln!("kinform-gen: {e}");
            std::process::exit(1);
        }
    }
}
