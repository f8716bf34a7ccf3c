//! The server's managedFields opt-out (KEP-5958) for informers that drop managedFields anyway.
//!
//! # What upstream specifies
//!
//! - [KEP-5958](https://github.com/kubernetes/enhancements/tree/master/keps/sig-api-machinery/5958-client-opt-out-managedfields)
//!   ("Client Opt-out for managedFields in API Response"): a client adds the media-type
//!   parameter `drop=metadata.managedFields` to its `Accept` header, e.g.
//!   `Accept: application/json;drop=metadata.managedFields`, and the server encodes the
//!   objects of its answer without `metadata.managedFields`: GET, LIST, WATCH and the answers
//!   of PUT, POST and PATCH, built-in and custom resources, JSON, protobuf and CBOR. The value
//!   is a `+`-separated set of fields; unknown targets are ignored.
//! - The server side is the `ManagedFieldsOptOut` feature gate of kube-apiserver, alpha and
//!   off by default. It landed in kubernetes/kubernetes#139561, released in v1.38.0-alpha.1
//!   (the CHANGELOG lists it "since v1.37.0"), not in 1.37. With the gate off the parameter
//!   is "silently ignored" (the negotiation tests of that pull request).
//! - The answer does not say whether the request was honoured: the `Content-Type` is the
//!   serializer's media type (`application/json`), no parameter is echoed, and discovery
//!   carries no marker. The KEP's own answer to "how can someone know that it is working" is
//!   that `metadata.managedFields` is absent from the objects.
//! - A server that predates the KEP: apiserver's content negotiation
//!   (`k8s.io/apiserver/pkg/endpoints/handlers/negotiation`, `acceptMediaTypeOptions`)
//!   knows `as`, `g`, `v`, `stream`, `sv`, `export`, `pretty` (and `profile` in newer
//!   versions) and records any other parameter in `MediaTypeOptions.Unrecognized`, which
//!   no caller refuses: the clause is accepted and the full objects come back, never a
//!   406. The KEP's version-skew section says the same ("the API server will ignore the
//!   unknown parameter and return the full object with managedFields").
//! - client-go's plan (the KEP's "Client-side Stripping (Defensive)") keeps cutting
//!   managedFields on the client when a server sent them despite the request.
//!
//! # What kinform does
//!
//! A reflector whose hints say the transform drops managedFields anyway
//! (`ListHints::skip_managed_fields`, set by the informer factory unless it keeps them)
//! sends [`ACCEPT_DROP_MANAGED_FIELDS`] on its LIST pages and its WATCH. The plain
//! `application/json` clause after the one with `drop` keeps the request acceptable to a
//! server that would refuse the first clause (a later revision of the upstream pull request
//! makes a `drop` value it does not support unacceptable; `metadata.managedFields` itself
//! is never refused, but the fallback costs nothing).
//!
//! Detection is per server: each `Client` (one base URL, shared by its
//! clones) remembers what the LIST pages it asked for said ([`ManagedFieldsOptOut`]): a
//! page whose items carry the member name `"managedFields"` marks the server as ignoring
//! the request, a page with items and no such name as honouring it. The page's bytes are
//! searched with `memchr::memmem` once, while the page is scanned; a string value that
//! happens to be `"managedFields"` reads as "ignored", the safe side. Since no server says
//! that it honoured the request, the client-side cut is never skipped on trust: the decoder
//! still cuts `metadata.managedFields` off the tape and the transform still drops it, both
//! free when the field is absent, so an object that still carries managedFields (a server
//! with the gate off, one replica of an HA control plane not yet upgraded) is still cut.
//! The state is for users and operators (`Client::managed_fields_opt_out`);
//! the change to "ignored" is logged once per change at info level (nothing to act on:
//! the cache is the same either way, only the bytes on the wire differ).
//!
//! Hand-written: the state is one atomic byte, and `memchr` (already used for watch lines)
//! does the search; no crate does media-type parameters of Kubernetes.

use std::sync::atomic::{AtomicU8, Ordering};

use http::HeaderValue;
use http::header::ACCEPT;

/// `Accept` of a reflector's LIST and WATCH requests when its transform drops managedFields:
/// JSON without `metadata.managedFields` (KEP-5958), else plain JSON.
pub const ACCEPT_DROP_MANAGED_FIELDS: &str =
    "application/json;drop=metadata.managedFields,application/json";

/// What a server did with the managedFields opt-out (KEP-5958), as the objects it sent
/// show (see the module docs: the server says nothing).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ManagedFieldsOptOut {
    /// No LIST page with items was asked for with the opt-out yet.
    Unknown,
    /// The latest such page had items and none carried managedFields.
    Honoured,
    /// The latest such page had an item carrying managedFields: a server without the
    /// `ManagedFieldsOptOut` gate (or older than it) ignored the parameter.
    Ignored,
}

// 0, the default: unknown.
const HONOURED: u8 = 1;
const IGNORED: u8 = 2;

/// A client's record of what its server did with the opt-out (shared by the client's
/// clones).
#[derive(Debug, Default)]
pub(crate) struct OptOutRecord(AtomicU8);

impl OptOutRecord {
    /// The latest observation.
    pub(crate) fn get(&self) -> ManagedFieldsOptOut {
        match self.0.load(Ordering::Relaxed) {
            HONOURED => ManagedFieldsOptOut::Honoured,
            IGNORED => ManagedFieldsOptOut::Ignored,
            _ => ManagedFieldsOptOut::Unknown,
        }
    }

    /// Records a page asked for with the opt-out: `carried` is whether one of its items
    /// carried managedFields (`None`: the page had no items, which tells nothing).
    pub(crate) fn observe(&self, carried: Option<bool>, server: &str) {
        let Some(carried) = carried else {
            return;
        };
        let new = if carried { IGNORED } else { HONOURED };
        let old = self.0.swap(new, Ordering::Relaxed);
        if old != new && new == IGNORED {
            tracing::info!(
                server,
                "the server ignores Accept drop=metadata.managedFields (KEP-5958: its \
                 ManagedFieldsOptOut feature gate is off, or it predates it); managedFields \
                 is cut on the client instead"
            );
        }
    }
}

/// Asks for the opt-out on `req` when `drop` (the reflector drops managedFields anyway)
/// and the request asks for plain JSON (a metadata-only request keeps its own `Accept`).
pub(crate) fn ask<B>(req: &mut http::Request<B>, drop: bool) {
    if !drop {
        return;
    }
    let headers = req.headers_mut();
    if headers
        .get(ACCEPT)
        .is_some_and(|v| v.as_bytes() == b"application/json")
    {
        headers.insert(ACCEPT, HeaderValue::from_static(ACCEPT_DROP_MANAGED_FIELDS));
    }
}

/// Whether `items` (the bytes of a LIST page's items) carry `metadata.managedFields`,
/// searched as the JSON member name.
pub(crate) fn carries_managed_fields(items: &[u8]) -> bool {
    memchr::memmem::find(items, b"\"managedFields\"").is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn asks_only_for_plain_json_requests_that_drop_anyway() {
        let plain = || {
            http::Request::builder()
                .header(ACCEPT, "application/json")
                .body(())
                .unwrap()
        };
        let mut req = plain();
        ask(&mut req, true);
        assert_eq!(req.headers()[ACCEPT], ACCEPT_DROP_MANAGED_FIELDS);
        let mut req = plain();
        ask(&mut req, false);
        assert_eq!(req.headers()[ACCEPT], "application/json");
        let metadata = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1";
        let mut req = http::Request::builder()
            .header(ACCEPT, metadata)
            .body(())
            .unwrap();
        ask(&mut req, true);
        assert_eq!(req.headers()[ACCEPT], metadata);
    }

    #[test]
    fn records_the_latest_page_with_items() {
        let record = OptOutRecord::default();
        assert_eq!(record.get(), ManagedFieldsOptOut::Unknown);
        record.observe(None, "s");
        assert_eq!(record.get(), ManagedFieldsOptOut::Unknown);
        record.observe(Some(false), "s");
        assert_eq!(record.get(), ManagedFieldsOptOut::Honoured);
        record.observe(Some(true), "s");
        assert_eq!(record.get(), ManagedFieldsOptOut::Ignored);
        record.observe(None, "s");
        assert_eq!(record.get(), ManagedFieldsOptOut::Ignored);
    }

    #[test]
    fn finds_the_member_name_not_escaped_strings() {
        assert!(carries_managed_fields(
            br#"{"metadata":{"name":"a","managedFields":[]}}"#
        ));
        assert!(!carries_managed_fields(
            br#"{"metadata":{"name":"a"},"data":{"k":"x\"managedFields\\\"y"}}"#
        ));
        assert!(!carries_managed_fields(br#"{"metadata":{"name":"a"}}"#));
    }
}
