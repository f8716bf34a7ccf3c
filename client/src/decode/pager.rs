//! The next page of a paged LIST, requested while the current page decodes.
//!
//! client-go's pager asks for page N+1 after it has handled page N, so the API server and the
//! client take turns: the server serializes and sends a page while the client waits, then the
//! client decodes while the server idles. A page's continue token is known as soon as its
//! bytes are scanned, before its items are decoded, so [`list`](super::list) sends
//! the request the reflector will make next right then, and hands its response over when the
//! reflector asks for exactly that request (same URI). The task that fetches a page also
//! scans it (finds its items), so that this pass over the page runs while the page before
//! it decodes, not in between.
//!
//! 1. The server sees the same requests in the same order, only earlier.
//! 2. A response nobody asks for (the list ended in an error, the informer stopped) is
//!    dropped, and its request aborted, when the next list asks for something else or the
//!    reflector's hints are dropped.
//! 3. At most one page is held ahead, and of it at most `Config::read_ahead_bytes` (4 MiB by
//!    default, more than a 500-pod page) before the reflector asks for it: a larger page
//!    stops being read there (the server's writes wait on flow control) and is read on when
//!    it is asked for.

use std::sync::Arc;

use http::Method;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ListMeta;
use kinform_core::ListParams;
use parking_lot::Mutex;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use super::page::ScannedList;
use crate::transport::Pause;
use crate::{Api, Client, Result};

/// The response of a request sent ahead: the request's description and the scanned body.
type Fetched = Result<(String, ScannedList)>;

/// Sends a LIST request and scans its response's body (read up to `pause`, if given).
pub(crate) async fn fetch(
    client: &Client,
    req: http::Request<Vec<u8>>,
    pause: Option<Pause>,
) -> Fetched {
    let (request, bytes) = client.request_bytes_paused(req, pause).await?;
    Ok((request, ScannedList::new(bytes)))
}

struct Ahead {
    uri: String,
    task: JoinHandle<Fetched>,
    /// Lets the reading go on past the read-ahead budget (sent, or dropped with `self`).
    wanted: Option<oneshot::Sender<()>>,
}

impl Drop for Ahead {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// At most one LIST request sent ahead of its caller.
#[derive(Default)]
struct NextPage(Mutex<Option<Ahead>>);

/// The page of a paged LIST that one reflector's next request will ask for, requested while
/// the current page decodes ([`ListHints::page_ahead`](super::ListHints::page_ahead)). Clones share the page: a reflector
/// builds its hints once and hands clones to each list call. A new one holds nothing, which
/// only makes the next page wait for its request.
#[derive(Clone, Default)]
pub struct PageAhead(Arc<NextPage>);

impl std::fmt::Debug for PageAhead {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let uri = self.0.0.lock().as_ref().map(|a| a.uri.clone());
        f.debug_struct("PageAhead").field("uri", &uri).finish()
    }
}

impl PageAhead {
    /// Sends the request for the page after the one `meta` describes, if it has a continue
    /// token: the parameters the reflector asks for next, with the token and without a
    /// resourceVersion (a token carries its snapshot).
    pub(crate) fn send_next<K>(
        &self,
        api: &Api<K>,
        lp: &ListParams,
        meta: &ListMeta,
        drop_managed_fields: bool,
    ) {
        let Some(token) = meta.continue_.as_deref().filter(|t| !t.is_empty()) else {
            return;
        };
        if lp.limit.is_none() {
            return;
        }
        let next = ListParams {
            continue_token: Some(token.to_owned()),
            resource_version: None,
            resource_version_match: None,
            ..lp.clone()
        };
        let uri = api.list_uri(&next);
        // A request that cannot be built now fails the same way when the reflector asks.
        if let Ok(mut req) = api.request(Method::GET, uri.clone(), Vec::new(), None, true) {
            crate::managed_fields::ask(&mut req, drop_managed_fields);
            self.0.send_ahead(api.client(), uri, req);
        }
    }

    /// The response of the request sent ahead for `uri` (see [`NextPage::take`]).
    pub(crate) async fn take(&self, uri: &str) -> Option<Fetched> {
        self.0.take(uri).await
    }
}

impl NextPage {
    /// Sends `req` (a GET of `uri`) now, replacing any request sent ahead before.
    fn send_ahead(&self, client: &Client, uri: String, req: http::Request<Vec<u8>>) {
        let client = client.clone();
        let (wanted, until) = oneshot::channel();
        let pause = Pause {
            after: client.read_ahead_bytes(),
            until,
        };
        let task = tokio::spawn(async move { fetch(&client, req, Some(pause)).await });
        *self.0.lock() = Some(Ahead {
            uri,
            task,
            wanted: Some(wanted),
        });
    }

    /// The response of the request sent ahead for `uri`, if there is one (a request sent
    /// ahead for another URI is dropped). `None` also when that request's task did not
    /// finish (the runtime is shutting down): the caller sends the request itself.
    async fn take(&self, uri: &str) -> Option<Fetched> {
        let mut ahead = self.0.lock().take().filter(|a| a.uri == uri)?;
        if let Some(wanted) = ahead.wanted.take() {
            let _ = wanted.send(());
        }
        (&mut ahead.task).await.ok()
    }
}
