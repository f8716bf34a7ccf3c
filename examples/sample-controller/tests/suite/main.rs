//! The sample controller's suite: it converges, alone and sharded.
//!
//! The crate's one integration test target; why one, and how to run a module's tests:
//! ARCHITECTURE.md, "Integration tests".

mod converge;
mod sharded;
