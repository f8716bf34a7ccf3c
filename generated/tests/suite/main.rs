//! The generated API's suite: coverage, drift and the typed clients against TestApiServer.
//!
//! The crate's one integration test target; why one, and how to run a module's tests:
//! ARCHITECTURE.md, "Integration tests".

#[cfg(feature = "core")]
mod connect;
mod coverage;
mod drift;
kinform::k8s_openapi::k8s_if_ge_1_36! {
    /// The groups whose post-1.35 resources the TestApiServer tests exercise.
    #[cfg(all(feature = "resource", feature = "storagemigration", feature = "lifecycle"))]
    mod later_versions;
}
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
