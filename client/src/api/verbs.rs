//! The verbs on objects and collections.

use http::Method;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Status;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::params::{DeleteParams, DeleteResponse, Either, Patch, PatchParams, PostParams};
use super::query::Query;
use super::{Api, WatchStream};
use crate::wire::list::RawList;
use crate::wire::watch::{Origin, decode_stream};
use crate::{Error, ListParams, ObjectList, Result, WatchParams};
use kinform_core::resource::HasMetadata;

#[derive(Deserialize)]
struct KindProbe {
    kind: Option<String>,
}

impl<K> Api<K>
where
    K: HasMetadata + Clone + Serialize + DeserializeOwned,
{
    /// `GET` one object.
    pub async fn get(&self, name: &str) -> Result<K> {
        let req = self.request(
            Method::GET,
            self.object_path(name, None),
            Vec::new(),
            None,
            false,
        )?;
        self.send(req, "object").await
    }

    /// `GET` one object; `None` when it does not exist.
    pub async fn get_opt(&self, name: &str) -> Result<Option<K>> {
        match self.get(name).await {
            Ok(obj) => Ok(Some(obj)),
            Err(e) if e.is_not_found() => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// `LIST` one page (or everything when `lp.limit` is `None`).
    pub async fn list(&self, lp: &ListParams) -> Result<ObjectList<K>> {
        let req = self.request(Method::GET, self.list_uri(lp), Vec::new(), None, true)?;
        let raw: RawList<K> = self.send(req, "list").await?;
        Ok(raw.into_list())
    }

    /// `WATCH`: events are decoded as their bytes arrive; the stream ends when the server
    /// closes the watch (after `timeoutSeconds`, for one).
    pub async fn watch(&self, wp: &WatchParams) -> Result<WatchStream<K>> {
        let (body, origin) = self.open_watch(wp, false).await?;
        Ok(decode_stream(body, origin))
    }

    /// `POST` a new object. With an all-namespaces `Api` of a namespaced resource the object's
    /// own namespace is used.
    pub async fn create(&self, pp: &PostParams, obj: &K) -> Result<K> {
        let mut q = Query::default();
        pp.add_to(&mut q);
        let ns = if self.namespace.is_none() {
            obj.namespace()
        } else {
            None
        };
        let uri = format!("{}{}", self.collection(ns), q.as_str());
        let body = self.encode(&Method::POST, &uri, obj)?;
        let req = self.request(Method::POST, uri, body, Some("application/json"), false)?;
        self.send(req, "object").await
    }

    /// `PUT` (update) an object; its `metadata.resourceVersion`, when set, is the optimistic
    /// concurrency precondition (409 Conflict when stale).
    pub async fn replace(&self, name: &str, pp: &PostParams, obj: &K) -> Result<K> {
        self.put(name, None, pp, obj).await
    }

    pub(super) async fn put<T: Serialize + DeserializeOwned>(
        &self,
        name: &str,
        sub: Option<&str>,
        pp: &PostParams,
        obj: &T,
    ) -> Result<T> {
        let mut q = Query::default();
        pp.add_to(&mut q);
        let uri = format!("{}{}", self.object_path(name, sub), q.as_str());
        let body = self.encode(&Method::PUT, &uri, obj)?;
        let req = self.request(Method::PUT, uri, body, Some("application/json"), false)?;
        self.send(req, "object").await
    }

    /// `PATCH` an object (merge, JSON, strategic merge or server-side apply).
    pub async fn patch<P: Serialize>(
        &self,
        name: &str,
        pp: &PatchParams,
        patch: &Patch<P>,
    ) -> Result<K> {
        self.patch_at(name, None, pp, patch).await
    }

    pub(super) async fn patch_at<P: Serialize, T: DeserializeOwned>(
        &self,
        name: &str,
        sub: Option<&str>,
        pp: &PatchParams,
        patch: &Patch<P>,
    ) -> Result<T> {
        let mut q = Query::default();
        pp.add_to(&mut q);
        let uri = format!("{}{}", self.object_path(name, sub), q.as_str());
        let body = patch.to_body().map_err(|source| Error::Encode {
            request: format!("PATCH {uri}"),
            what: format!("a {} patch", self.resource),
            source,
        })?;
        let req = self.request(Method::PATCH, uri, body, Some(patch.content_type()), false)?;
        self.send(req, "object").await
    }

    /// `DELETE` an object: `Left` with the object when the server answers with it, `Right`
    /// with the server's Status when it answers with one.
    ///
    /// The real server (and `TestApiServer`) answers most deletes with the object: its last
    /// state when it is gone at once, or the object with `deletionTimestamp` set while
    /// finalizers or graceful deletion hold it. So `Left` does not by itself mean "pending":
    /// check `metadata.deletion_timestamp`, or get the object again.
    pub async fn delete(&self, name: &str, dp: &DeleteParams) -> Result<DeleteResponse<K>> {
        let uri = self.object_path(name, None);
        let req = self.request(
            Method::DELETE,
            uri,
            dp.body(),
            Some("application/json"),
            false,
        )?;
        self.either(req, "object").await
    }

    /// `DELETE` the objects of the collection matching `lp`'s selectors: `Left` with the list
    /// of deleted objects, or `Right` with a Status.
    pub async fn delete_collection(
        &self,
        dp: &DeleteParams,
        lp: &ListParams,
    ) -> Result<DeleteResponse<ObjectList<K>>> {
        let req = self.request(
            Method::DELETE,
            self.list_uri(lp),
            dp.body(),
            Some("application/json"),
            true,
        )?;
        Ok(match self.either::<RawList<K>>(req, "list").await? {
            Either::Left(raw) => Either::Left(raw.into_list()),
            Either::Right(s) => Either::Right(s),
        })
    }

    async fn either<T: DeserializeOwned>(
        &self,
        req: http::Request<Vec<u8>>,
        what: &str,
    ) -> Result<Either<T, Status>> {
        let (request, bytes) = self.client.request_bytes(req).await?;
        let decode_err = |source| Error::Decode {
            request: request.clone(),
            what: format!("{} {what}", self.resource),
            source,
        };
        let probe: KindProbe = serde_json::from_slice(&bytes).map_err(decode_err)?;
        if probe.kind.as_deref() == Some("Status") {
            Ok(Either::Right(
                serde_json::from_slice(&bytes).map_err(decode_err)?,
            ))
        } else {
            Ok(Either::Left(
                serde_json::from_slice(&bytes).map_err(decode_err)?,
            ))
        }
    }
}

/// Requests the decoding pipeline (`crate::decode`) sends for a reflector.
impl<K> Api<K> {
    /// The collection's URI with `lp` as its query.
    pub(crate) fn list_uri(&self, lp: &ListParams) -> String {
        let mut q = Query::default();
        q.list(lp);
        format!("{}{}", self.collection(None), q.as_str())
    }

    pub(crate) async fn open_watch(
        &self,
        wp: &WatchParams,
        drop_managed_fields: bool,
    ) -> Result<(
        futures_util::stream::BoxStream<'static, Result<bytes::Bytes>>,
        Origin,
    )> {
        let mut q = Query::default();
        q.watch(wp);
        let uri = format!("{}{}", self.collection(None), q.as_str());
        let origin = Origin {
            request: format!("GET {uri}"),
            resource: self.resource.to_string(),
            max_line: self.client.max_watch_event_bytes(),
        };
        let mut req = self.request(Method::GET, uri, Vec::new(), None, false)?;
        crate::managed_fields::ask(&mut req, drop_managed_fields);
        let body = self.client.request_stream(req).await?;
        Ok((body, origin))
    }
}
