//! The webhook operator's suite: its webhooks called over real TLS with reviews as
//! kube-apiserver sends them, and `deploy/` against what the code produces.
//!
//! The crate's one integration test target (ARCHITECTURE.md, "Integration tests").

mod manifests;
mod served;
