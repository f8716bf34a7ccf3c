//! A port of Kubernetes' [sample-controller](https://github.com/kubernetes/sample-controller)
//! to kinform.
//!
//! - [`api`]: the `Foo` custom resource (`samplecontroller.k8s.io/v1alpha1`), its typed
//!   client, lister and informer, generated at build time from `crds/foo.yaml` by
//!   kinform-codegen (`build.rs`), as sample-controller generates its own with
//!   k8s.io/code-generator.
//! - [`foo_controller`]: the controller of `controller.go`: for every Foo, a Deployment named
//!   `spec.deploymentName`, owned by the Foo, with `spec.replicas` replicas; the Foo's
//!   `status.availableReplicas` mirrors the Deployment's; events on the Foo.
//! - [`simulator`]: only for the embedded TestApiServer, which runs no
//!   kube-controller-manager: plays the Deployment controller by moving Deployment status
//!   (TestApiServer itself garbage-collects the Deployment of a deleted Foo).
//! - [`runner`]: leader election, events and the controller, as deployed.
//! - [`demo`]: the embedded scenario `cargo run -p sample-controller` plays.

// `foo` is the resource's real name here, not a placeholder.
#![allow(clippy::disallowed_names)]

#[allow(missing_docs, clippy::all)]
pub mod api {
    //! The generated `Foo` API (types, `FooClient`, `FooLister`, `FooInformer`).
    include!(concat!(env!("OUT_DIR"), "/kinform_generated.rs"));
}

pub mod demo;
pub mod foo_controller;
pub mod runner;
pub mod simulator;

/// The Foo CRD, as installed into the embedded server.
pub const FOO_CRD_YAML: &str = include_str!("../crds/foo.yaml");
