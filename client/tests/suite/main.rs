//! The client's suite: transport, TLS, bounds and kubeconfig loading.
//!
//! The crate's one integration test target; why one, and how to run a module's tests:
//! ARCHITECTURE.md, "Integration tests".

mod client_bounds;
mod client_tls;
mod client_transport;
mod kubeconfig_loading;
mod kubeconfig_secrets;
