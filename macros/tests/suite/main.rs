//! The derive macros' suite: derived resources, kube-derive parity, round trips, the server and the compile-fail cases.
//!
//! One test binary per crate: every file here was its own integration test target, each
//! linking the whole dependency graph again (some 80 MB apiece in a debug build). As modules
//! of one target they link once, which keeps CI's disk use and link time small. Run one
//! file's tests by its module path: `cargo test -p <crate> --test suite <module>::`.

mod api_group_server;
mod derive_basic;
mod derive_parity;
mod derive_roundtrip;
mod derive_server;
mod ui;
