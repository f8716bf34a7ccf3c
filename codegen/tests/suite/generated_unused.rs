//! Generated code is warning-free where only part of it is used: a binary that includes the
//! code of two CRDs (`build.rs`-style, one `include!`d file in a private module) and uses one
//! type of one of them builds with warnings denied (the temporary crate's `[lints]`): no
//! `dead_code` for the other CRD's types, clients, listers and informers, no `unused_imports`
//! for the prelude or the short-name imports.

use std::path::Path;

use crate::temp_crate::TempCrate;
use kinform_codegen::Generator;

#[test]
fn a_binary_using_one_of_two_crds_builds_without_warnings() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let krate = TempCrate::new("kinform-gen-one-of-two");
    Generator::new()
        .crd(fixtures.join("widgets.yaml"))
        .crd(fixtures.join("dials.yaml"))
        .out_dir(krate.dir().join("src"))
        .generate()
        .expect("generates");
    krate.write(
        "src/main.rs",
        "mod generated {\n    include!(\"kinform_generated.rs\");\n}\n\n\
         fn main() {\n    \
         println!(\"{}\", std::any::type_name::<generated::example_com::v1::Widget>());\n}\n",
    );
    krate.cargo("build");
}
