//! GET of one object and LIST of a collection.
//!
//! LIST follows "Resource versions" and "Retrieving large results sets in chunks" of the API
//! concepts page: `resourceVersion` unset means a consistent read of the latest state; `"0"` or
//! `N` with `NotOlderThan` (or no match rule) serve the latest state (this server is always
//! up to date), answering 504 for a version newer than the server's; `N` with `Exact` serves
//! the snapshot at `N`, or 410 Expired once `N` has left the history window. `limit` pages
//! through a snapshot: every page of a list reflects the first page's resourceVersion, the
//! opaque continue token carries it, and a token whose version was compacted gets 410 with an
//! inconsistent continue token in the Status, as the real server does. `remainingItemCount` is
//! set on pages without selectors.
//!
//! With the `ShardedListAndWatch` gate on ([`crate::TestApiServerBuilder::sharded_list_and_watch`],
//! KEP-5866), `shardSelector` keeps the objects whose hashed UID or namespace falls in its
//! ranges (`kinform_core::shard`), on every page of a paged list, and the answer's
//! `metadata.shardInfo.selector` echoes the selector as the request wrote it.

use std::sync::Arc;

use bytes::Bytes;
use http::Response;
use serde_json::{Value, json};

use crate::handlers::negotiation::body::{Body, ListBody};
use crate::handlers::negotiation::render::{
    Form, IncludeObject, metadata_object, object_bytes, object_bytes_without_managed_fields,
    render_object, to_bytes,
};
use crate::handlers::params::{ContinueToken, ListOptions, Query, RvMatch};
use crate::registry::ResourceInfo;
use crate::status::ApiError;
use crate::storage::{Inner, Page, object_key};
use crate::{State, json_response};

/// GET of one object (also the `status` subresource, which reads the whole object).
pub(crate) fn get(
    state: &State,
    info: &ResourceInfo,
    namespace: &str,
    name: &str,
    form: Form,
    q: &Query,
) -> Result<Response<Body>, ApiError> {
    let inner = state.storage.lock();
    let obj = inner
        .get(&info.storage_key(), &object_key(namespace, name))
        .ok_or_else(|| ApiError::not_found(&info.group, &info.plural, name))?;
    drop(inner);
    let include = IncludeObject::parse(q.get("includeObject"));
    Ok(json_response(200, render_object(info, &obj, form, include)))
}

/// LIST of a collection.
pub(crate) fn list(
    state: &State,
    info: &Arc<ResourceInfo>,
    namespace: Option<&str>,
    q: &Query,
    form: Form,
) -> Result<Response<Body>, ApiError> {
    let opts = ListOptions::parse(q, info, false, state.config.sharded_list_and_watch)?;
    let mut inner = state.storage.lock();
    let page = read_page(&mut inner, info, namespace, &opts)?;
    drop(inner);
    let next = page
        .next_key
        .as_ref()
        .map(|k| ContinueToken::new(page.rv, k.clone()).encode());
    let mut meta = json!({ "resourceVersion": page.rv.to_string() });
    if let Some(c) = &next {
        meta["continue"] = json!(c);
    }
    if let Some(n) = page.remaining {
        meta["remainingItemCount"] = json!(n);
    }
    if let Some(shard) = &opts.shard {
        meta["shardInfo"] = json!({ "selector": shard.text });
    }
    match form {
        Form::Json | Form::JsonWithoutManagedFields => {
            let head = format!(
                "{{\"kind\":\"{}List\",\"apiVersion\":\"{}\",\"metadata\":{},\"items\":[",
                info.kind,
                info.api_version(),
                meta
            );
            let items = page
                .items
                .iter()
                .map(|o| match form {
                    Form::JsonWithoutManagedFields => object_bytes_without_managed_fields(info, o),
                    _ => object_bytes(info, o),
                })
                .collect();
            let body = ListBody::new(Bytes::from(head), items, Bytes::from_static(b"]}"));
            Ok(crate::response(
                200,
                "application/json",
                http_body_util::BodyExt::boxed(body),
            ))
        }
        Form::Metadata => {
            let items: Vec<Value> = page
                .items
                .iter()
                .map(|o| metadata_object(&o.value()))
                .collect();
            let list = json!({
                "kind": "PartialObjectMetadataList",
                "apiVersion": "meta.k8s.io/v1",
                "metadata": meta,
                "items": items,
            });
            Ok(json_response(200, to_bytes(&list)))
        }
        Form::Table => {
            let values: Vec<Value> = page.items.iter().map(|o| o.value_for(info)).collect();
            let include = IncludeObject::parse(q.get("includeObject"));
            let t = crate::handlers::negotiation::table::table(info, &values, include, Some(meta));
            Ok(json_response(200, to_bytes(&t)))
        }
    }
}

/// Reads one page under the store lock, applying the resourceVersion rules.
pub(crate) fn read_page(
    inner: &mut Inner,
    info: &ResourceInfo,
    namespace: Option<&str>,
    opts: &ListOptions,
) -> Result<Page, ApiError> {
    let filter = |o: &crate::storage::Obj| opts.matches(o);
    // A sharded page has no remainingItemCount either (kube-apiserver's
    // `PrepareContinueToken` leaves it out when a shard selector is given).
    let count_remaining =
        opts.labels.is_everything() && opts.fields.is_everything() && opts.shard.is_none();
    let storage = info.storage_key();
    if let Some(token) = &opts.continue_token {
        return inner
            .page(
                &storage,
                namespace,
                Some(token.rv),
                Some(&token.start),
                opts.limit,
                &filter,
                count_remaining,
            )
            .map_err(|e| {
                if e.code != 410 {
                    return e;
                }
                let mut e = ApiError::new(
                    410,
                    "Expired",
                    "The provided continue parameter is too old to display a consistent list \
                     result. You can start a new list without the continue parameter, or use \
                     the continue token in this response to retrieve the remainder of the \
                     results. Continuing with the provided token results in an inconsistent \
                     list - objects that were created, modified, or deleted between the time \
                     the first chunk was returned and now may show up in the list.",
                );
                e.continue_token = Some(ContinueToken::new(inner.rv, token.start.clone()).encode());
                e
            });
    }
    let at = match (opts.rv_number(), opts.rv_match) {
        (Some(rv), RvMatch::Exact) => Some(rv),
        (Some(rv), _) if rv > inner.rv => return Err(ApiError::too_large_rv(rv, inner.rv)),
        _ => None,
    };
    inner.page(
        &storage,
        namespace,
        at,
        None,
        opts.limit,
        &filter,
        count_remaining,
    )
}
