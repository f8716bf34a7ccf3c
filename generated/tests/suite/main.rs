//! The generated API's suite: coverage, drift and the typed clients against TestApiServer.
//!
//! One test binary per crate: every file here was its own integration test target, each
//! linking the whole dependency graph again (some 80 MB apiece in a debug build). As modules
//! of one target they link once, which keeps CI's disk use and link time small. Run one
//! file's tests by its module path: `cargo test -p <crate> --test suite <module>::`.

#[cfg(feature = "core")]
mod connect;
mod coverage;
mod drift;
/// The groups whose typed clients the TestApiServer tests exercise.
#[cfg(all(
    feature = "core",
    feature = "apps",
    feature = "batch",
    feature = "coordination",
    feature = "rbac",
    feature = "networking",
    feature = "apiextensions"
))]
mod server;
