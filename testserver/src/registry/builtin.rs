//! Serving resources beyond the ones registered at start.
//!
//! A fresh [`TestApiServer`] serves every resource of Kubernetes v1.35's GA versions (from
//! the embedded OpenAPI document, module `spec`) and the versions of every CRD created since.
//! A test that needs something else, such as a beta version a cluster enables with
//! `--runtime-config` or the resource of an aggregated API server, registers it with
//! [`TestApiServer::register_resource`]: from then on the resource is in discovery and is
//! served with the generic semantics every resource gets (CRUD with optimistic concurrency,
//! list and watch with resourceVersions, selectors, the `status` and `scale` subresources
//! when declared).
//!
//! ```no_run
//! # async fn demo() -> Result<(), kinform_testserver::TestServerError> {
//! use kinform_testserver::{ResourceInfo, TestApiServer};
//! let server = TestApiServer::start().await?;
//! server.register_resource(ResourceInfo::new("batch", "v1beta1", "CronJob", "cronjobs", true).with_status());
//! # Ok(()) }
//! ```

use crate::TestApiServer;
use crate::registry::{ResourceInfo, ScalePaths};

impl TestApiServer {
    /// Serves `info` from now on, as if it were built in (replacing an earlier registration
    /// of the same group/version/plural; objects already stored are kept). Versions of one
    /// `group/plural` share their storage, as CRD versions do.
    pub fn register_resource(&self, info: ResourceInfo) {
        self.state.storage.lock().registry.add(info);
    }
}

impl ResourceInfo {
    /// A resource without short names, categories, printer columns, extra selectable fields
    /// or subresources; the singular is the lower-cased kind.
    pub fn new(group: &str, version: &str, kind: &str, plural: &str, namespaced: bool) -> Self {
        Self {
            group: group.to_owned(),
            version: version.to_owned(),
            kind: kind.to_owned(),
            plural: plural.to_owned(),
            singular: kind.to_ascii_lowercase(),
            namespaced,
            short_names: Vec::new(),
            categories: Vec::new(),
            status_subresource: false,
            scale: None,
            printer_columns: Vec::new(),
            selectable_fields: Vec::new(),
            verbs: Self::ALL_VERBS.iter().map(|v| v.to_string()).collect(),
            subresources: Vec::new(),
            deprecation_warning: None,
        }
    }

    /// Deprecated: every answer about the resource carries `Warning: 299 - "{text}"`, as
    /// kube-apiserver answers about a deprecated version (e.g. `policy/v1beta1
    /// PodDisruptionBudget is deprecated in v1.21+, unavailable in v1.25+; use policy/v1
    /// PodDisruptionBudget`).
    pub fn with_deprecation_warning(mut self, text: &str) -> Self {
        self.deprecation_warning = Some(text.to_owned());
        self
    }

    /// With a `status` subresource: status writes go through `/status`, spec writes leave
    /// the status alone.
    pub fn with_status(mut self) -> Self {
        self.status_subresource = true;
        self
    }

    /// With a `scale` subresource over `.spec.replicas`, `.status.replicas` and the label
    /// selector at `.status.selector` (the layout of the built-in workloads, e.g.
    /// statefulsets).
    pub fn with_workload_scale(mut self) -> Self {
        self.scale = Some(ScalePaths {
            spec_replicas: ".spec.replicas".into(),
            status_replicas: ".status.replicas".into(),
            label_selector: Some(".status.selector".into()),
        });
        self
    }
}
