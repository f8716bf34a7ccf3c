//! The webhook operator's suite: its webhooks called over real TLS with reviews as
//! kube-apiserver sends them, the same webhooks registered in a TestApiServer and driven
//! with kubectl and kinform's typed client, and `deploy/` against what the code produces.
//!
//! The crate's one integration test target (ARCHITECTURE.md, "Integration tests").

mod kubectl;
mod manifests;
mod served;
