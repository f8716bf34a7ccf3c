//! Server-side apply with typed answers: [`Api::apply`] and [`Api::apply_status`].
//!
//! An apply sends the caller's *intent*, an apply configuration (every field optional,
//! only what was set serialized: generated `...Apply` types, or a `serde_json::Value`), as
//! `application/apply-patch+yaml` with a field manager, and kube-apiserver merges it with the
//! live object by field ownership (structured-merge-diff): fields the manager applied before
//! and leaves out now are removed unless another manager owns them, and setting a field another
//! manager owns fails with `409 Conflict` unless forced. This is client-go's
//! `Apply(ctx, applyConfiguration, metav1.ApplyOptions)` on its typed clients.
//! [`kinform_core::apply::extract_as`] reads back what one manager applied.

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::Api;
use super::params::{ApplyParams, Patch};
use crate::{Error, Result};
use kinform_core::resource::HasMetadata;

impl<K> Api<K>
where
    K: HasMetadata + Clone + Serialize + DeserializeOwned,
{
    /// Server-side apply of `config` to the object `name` (created if it does not exist),
    /// answering the object as the server stored it.
    ///
    /// `config` must serialize to a JSON object with `apiVersion` and `kind` (the server
    /// needs them to read the intent); it is refused before any request otherwise.
    pub async fn apply<A: Serialize>(
        &self,
        name: &str,
        params: &ApplyParams,
        config: &A,
    ) -> Result<K> {
        let body = self.apply_body(name, None, config)?;
        self.patch_at(name, None, &params.to_patch_params(), &Patch::Apply(body))
            .await
    }

    /// Server-side apply of `config` to the `status` subresource of `name`: only the
    /// status of the intent is taken, and ownership is recorded for subresource `status`
    /// (extract it with subresource `"status"`).
    pub async fn apply_status<A: Serialize>(
        &self,
        name: &str,
        params: &ApplyParams,
        config: &A,
    ) -> Result<K> {
        let body = self.apply_body(name, Some("status"), config)?;
        self.patch_at(
            name,
            Some("status"),
            &params.to_patch_params(),
            &Patch::Apply(body),
        )
        .await
    }

    fn apply_body<A: Serialize>(
        &self,
        name: &str,
        sub: Option<&str>,
        config: &A,
    ) -> Result<serde_json::Value> {
        let request = format!("PATCH {}", self.object_path(name, sub));
        let encode = |source| Error::Encode {
            request: request.clone(),
            what: format!("an apply configuration of {}", self.resource),
            source,
        };
        let body = serde_json::to_value(config).map_err(encode)?;
        let has = |member: &str| body.get(member).is_some_and(serde_json::Value::is_string);
        if !has("apiVersion") || !has("kind") {
            return Err(encode(<serde_json::Error as serde::ser::Error>::custom(
                "an apply configuration is a JSON object with apiVersion and kind",
            )));
        }
        Ok(body)
    }
}
