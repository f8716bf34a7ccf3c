//! The generated API's suite: coverage, drift and the typed clients against TestApiServer.
//!
//! The crate's one integration test target; why one, and how to run a module's tests:
//! ARCHITECTURE.md, "Integration tests".

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
