//! The client's suite: transport, TLS, bounds and kubeconfig loading.
//!
//! One test binary per crate: every file here was its own integration test target, each
//! linking the whole dependency graph again (some 80 MB apiece in a debug build). As modules
//! of one target they link once, which keeps CI's disk use and link time small. Run one
//! file's tests by its module path: `cargo test -p <crate> --test suite <module>::`.

mod client_bounds;
mod client_tls;
mod client_transport;
mod kubeconfig_loading;
mod kubeconfig_secrets;
