//! The acceptance suite: kinform's client, informers and controllers against TestApiServer.
//!
//! The crate's one integration test target; why one, and how to run a module's tests:
//! ARCHITECTURE.md, "Integration tests".

mod admin_endpoint;
mod client_apply;
mod client_next_page;
mod client_read_ahead;
mod client_server_connect;
mod client_server_crud;
mod client_server_dynamic;
mod client_server_faults;
mod client_server_list;
mod client_server_subresources;
mod client_server_watch;
mod controller_consistency;
mod controller_errors;
mod controller_filter;
mod controller_finalizer;
mod controller_gc;
mod controller_leader;
mod controller_owns;
mod controller_priority;
mod controller_run;
mod controller_sharded;
mod controller_starvation;
mod custom_resource_impl;
mod events_recorder;
mod fleet_clusters;
mod hostile_server;
mod informer_api;
mod informer_faults;
mod informer_lean;
mod informer_managed_fields;
mod informer_reclaim;
mod informer_relist_reuse;
mod informer_server_restart;
mod informer_shard_selector;
mod informer_watermark;
mod leader_election;
