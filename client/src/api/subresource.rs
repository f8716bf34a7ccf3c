//! Subresources: status, scale, eviction, log and any other `{object}/{sub}` endpoint.

use http::Method;
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::Api;
use super::params::{Patch, PatchParams, PostParams};
use super::query::Query;
use crate::{ByteStream, Result};
use kinform_core::resource::HasMetadata;

impl<K> Api<K>
where
    K: HasMetadata + Clone + Serialize + DeserializeOwned,
{
    /// `GET {name}/status`.
    pub async fn get_status(&self, name: &str) -> Result<K> {
        self.get_subresource("status", name).await
    }

    /// `PUT {name}/status`: only the status of `obj` is taken by the server.
    pub async fn replace_status(&self, name: &str, pp: &PostParams, obj: &K) -> Result<K> {
        self.put(name, Some("status"), pp, obj).await
    }

    /// `PATCH {name}/status`.
    pub async fn patch_status<P: Serialize>(
        &self,
        name: &str,
        pp: &PatchParams,
        patch: &Patch<P>,
    ) -> Result<K> {
        self.patch_at(name, Some("status"), pp, patch).await
    }

    /// `GET {name}/{sub}` decoded as `T` (e.g. `scale` as `autoscaling/v1` Scale).
    pub async fn get_subresource<T: DeserializeOwned>(&self, sub: &str, name: &str) -> Result<T> {
        let req = self.request(
            Method::GET,
            self.object_path(name, Some(sub)),
            Vec::new(),
            None,
            false,
        )?;
        self.send(req, sub).await
    }

    /// `PUT {name}/{sub}`.
    pub async fn replace_subresource<T: Serialize + DeserializeOwned>(
        &self,
        sub: &str,
        name: &str,
        pp: &PostParams,
        data: &T,
    ) -> Result<T> {
        self.put(name, Some(sub), pp, data).await
    }

    /// `PATCH {name}/{sub}`.
    pub async fn patch_subresource<P: Serialize, T: DeserializeOwned>(
        &self,
        sub: &str,
        name: &str,
        pp: &PatchParams,
        patch: &Patch<P>,
    ) -> Result<T> {
        self.patch_at(name, Some(sub), pp, patch).await
    }

    /// `POST {name}/{sub}` (e.g. `eviction`, `token`).
    pub async fn create_subresource<Req: Serialize, Resp: DeserializeOwned>(
        &self,
        sub: &str,
        name: &str,
        pp: &PostParams,
        data: &Req,
    ) -> Result<Resp> {
        let mut q = Query::default();
        pp.add_to(&mut q);
        let uri = format!("{}{}", self.object_path(name, Some(sub)), q.as_str());
        let body = self.encode(&Method::POST, &uri, data)?;
        let req = self.request(Method::POST, uri, body, Some("application/json"), false)?;
        self.send(req, sub).await
    }

    /// `GET {name}/{sub}?{query}` streamed as it arrives (e.g. `log` with `follow=true`).
    pub async fn get_subresource_stream(
        &self,
        sub: &str,
        name: &str,
        query: &[(&str, &str)],
    ) -> Result<ByteStream> {
        let mut q = Query::default();
        for (k, v) in query {
            q.push(k, v);
        }
        let uri = format!("{}{}", self.object_path(name, Some(sub)), q.as_str());
        let mut req = self.request(Method::GET, uri, Vec::new(), None, false)?;
        req.headers_mut()
            .insert(http::header::ACCEPT, http::HeaderValue::from_static("*/*"));
        self.client.request_stream(req).await
    }
}
