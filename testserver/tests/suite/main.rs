//! TestApiServer's suite: the server over HTTP, judged by kinform's client, kubectl and the Python client.
//!
//! One test binary per crate: every file here was its own integration test target, each
//! linking the whole dependency graph again (some 80 MB apiece in a debug build). As modules
//! of one target they link once, which keeps CI's disk use and link time small. Run one
//! file's tests by its module path: `cargo test -p <crate> --test suite <module>::`.

mod conformance_python;
mod https;
mod kubectl;
mod kubectl_conformance;
mod kubectl_connect;
mod kubectl_patch;
mod kubectl_protobuf;
mod server_side_apply;
mod testserver_delete;
mod testserver_discovery;
mod testserver_faults;
mod testserver_list;
mod testserver_rbac;
mod testserver_watch;
mod testserver_write;
mod validation;
