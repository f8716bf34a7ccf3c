//! Generates the Foo type, its typed client, lister and informer from the CRD YAML, as
//! prost-build does for .proto files: `src/lib.rs` includes `kinform_generated.rs`.

fn main() {
    println!("cargo:rerun-if-changed=crds");
    let out_dir = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR for build scripts");
    if let Err(e) = kinform_codegen::Generator::new()
        .crd_dir("crds")
        .out_dir(out_dir)
        .generate()
    {
        // Cargo shows build-script output on failure; the error names the file and field.
        eprintln!("generating the Foo API from crds/: {e}");
        std::process::exit(1);
    }
}
