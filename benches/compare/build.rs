//! kinform's side of the Rollout scenarios: kinform-gen's types, clients and informers for
//! the corpus's Argo Rollouts CRD (argoproj.io/v1alpha1), generated as a user's build script
//! generates them (examples/crd-codegen/build.rs); `src/rollout/mod.rs` includes them.

const CRD: &str = "../../../shared/corpus/crds/argo-rollouts/argoproj.io_rollouts.yaml";

fn main() {
    println!("cargo:rerun-if-changed={CRD}");
    let out_dir = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    if let Err(e) = kinform_codegen::Generator::new()
        .crd(CRD)
        .out_dir(out_dir)
        .generate()
    {
        eprintln!("generating the Rollout API from {CRD}: {e}");
        std::process::exit(1);
    }
}
