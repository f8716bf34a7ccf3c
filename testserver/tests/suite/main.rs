//! TestApiServer's suite: the server over HTTP, judged by kinform's client, kubectl and the
//! Python client.
//!
//! The crate's one integration test target; why one, and how to run a module's tests:
//! ARCHITECTURE.md, "Integration tests".

mod admission_policies;
mod admission_webhooks;
mod conformance_python;
mod conversion_webhooks;
mod https;
mod kubectl;
mod kubectl_conformance;
mod kubectl_connect;
mod kubectl_patch;
mod kubectl_pods;
mod kubectl_protobuf;
mod kubectl_webhooks;
mod server_side_apply;
mod testserver_delete;
mod testserver_discovery;
mod testserver_faults;
mod testserver_list;
mod testserver_rbac;
mod testserver_registry_rules;
mod testserver_shard;
mod testserver_watch;
mod testserver_write;
mod validation;
