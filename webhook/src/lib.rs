//! # kinform-webhook
//!
//! Admission and CRD conversion webhooks for Kubernetes, controller-runtime's webhook server
//! for Rust (`kinform::webhook` with the facade's feature `webhook`): a TLS server
//! kube-apiserver calls, typed handlers, and the configuration objects that register them.
//!
//! One [`Webhooks`] value describes everything served, and everything registered is made
//! from it, so paths, rules and versions cannot drift apart:
//!
//! - [`admission`]: per kind `K`, a [`Validator<K>`] (allow, or deny with a message and
//!   code, with warnings) and a [`Mutator<K>`] that changes the object, from which the JSON
//!   Patch is computed; `dryRun`, `userInfo`, the sub-resource and the operation reach the
//!   handler (`admission.k8s.io/v1`);
//! - [`conversion`]: a [`Converter`] from a hub version through the user's `From` impls
//!   (`apiextensions.k8s.io/v1` `ConversionReview`), every object or none converted, metadata
//!   kept as kube-apiserver requires;
//! - [`registration`]: the `ValidatingWebhookConfiguration`, `MutatingWebhookConfiguration`
//!   and CRD `spec.conversion` of the description, for a Service or a URL, with the CA bundle;
//! - [`server`]: [`WebhookServer`], hyper 1 + rustls with HTTP/2 and HTTP/1.1, the
//!   certificate read from PEM files and re-read when cert-manager renews them, `/healthz`,
//!   bounded bodies, a request timeout and graceful shutdown;
//! - [`review`]: the wire types (`AdmissionReview`, `ConversionReview`), which k8s-openapi
//!   does not ship;
//! - `testing` (feature `testing`): test certificates and a TLS client that posts reviews.
//!
//! ```no_run
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use kinform_webhook::admission::{mutator_fn, validator_fn};
//! use kinform_webhook::{ClientConfig, Request, Verdict, WebhookServer, Webhooks};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let webhooks = Webhooks::new()
//!     .validate(validator_fn(|request: &Request<ConfigMap>| match &request.object {
//!         Some(cm) if cm.data.is_none() => Verdict::deny("data must not be empty"),
//!         _ => Verdict::allow(),
//!     }))
//!     .mutate(mutator_fn(|_request: &Request<ConfigMap>, cm: &mut ConfigMap| {
//!         cm.labels_mut().entry("owner".into()).or_insert_with(|| "team-a".into());
//!         Verdict::allow()
//!     }));
//! let client = ClientConfig::service("webhooks", "my-webhook").ca_bundle_from_file("ca.crt")?;
//! let validating = webhooks.validating_webhook_configuration("my-webhook", &client)?;
//! # let _ = validating;
//! let server = WebhookServer::builder(webhooks)
//!     .tls_files("tls.crt", "tls.key")
//!     .bind(([0, 0, 0, 0], 9443).into())
//!     .await?;
//! server.serve(std::future::pending()).await;
//! # Ok(()) }
//! # use kinform_core::HasMetadata;
//! ```
//!
//! ## What of controller-runtime's webhook server is not reproduced
//!
//! - Only `admission.k8s.io/v1` and `apiextensions.k8s.io/v1` reviews are served (the
//!   configurations made here ask for those); `v1beta1` reviews are answered 400.
//! - No scheme-wide dispatch: each route decodes one kind `K` (controller-runtime's
//!   `CustomValidator`/`CustomDefaulter` shape). A request for another kind on a route,
//!   such as a `scale` sub-resource's `Scale`, is denied with a message saying so.
//! - Handlers get no `context.Context` with the request: the typed [`Request`] carries
//!   everything the review does; a handler's deadline is the server's request timeout.
//! - No client certificate authentication of kube-apiserver (`--client-ca-file` style mTLS),
//!   no TLS options hook (rustls' safe defaults, TLS 1.2 and 1.3), no metrics endpoint of its
//!   own ([`WebhookServer::metrics`] gives the counters to export).
//! - No user-registered raw HTTP handlers beside the webhook routes and `/healthz`, `/readyz`.
//! - A mutating route is not called for requests without an object (DELETE, CONNECT); they
//!   are admitted unchanged.
//! - No `+kubebuilder:webhook` markers: the configuration comes from the Rust description.
//!
//! Objects are never panicked on: a review that is not one is answered 400, an object the
//! handler's type cannot read is denied naming the member and the decoding error, and a
//! handler that panics answers 500 (the `hostile` tests feed random bodies).

pub mod admission;
pub mod conversion;
mod error;
pub mod registration;
pub mod review;
pub mod server;
mod settings;
#[cfg(feature = "testing")]
pub mod testing;
mod webhooks;

pub use admission::{Denial, Mutator, Request, Validator, Verdict};
pub use conversion::Converter;
pub use error::{ConfigError, ServerError};
pub use registration::{ClientConfig, Endpoint};
pub use review::{GroupVersionKind, GroupVersionResource, Operation};
pub use server::{MetricsSnapshot, ServerBuilder, ServerMetrics, WebhookServer};
pub use settings::{
    AdmissionSettings, FailurePolicy, MatchPolicy, ReinvocationPolicy, SideEffects,
};
pub use webhooks::{AdmissionType, Reply, Target, Webhooks};
