//! The derive macros' suite: derived resources, kube-derive parity, round trips, the server
//! and the compile-fail cases.
//!
//! The crate's one integration test target; why one, and how to run a module's tests:
//! ARCHITECTURE.md, "Integration tests".

mod api_group_server;
mod derive_basic;
mod derive_in_place;
mod derive_parity;
mod derive_roundtrip;
mod derive_server;
mod ui;
