//! `metav1.Status` failures, as the real API server writes them.
//!
//! Every error the server answers is a `Status` object with `status: Failure`, the HTTP code
//! repeated in `code`, a machine-readable `reason` (`NotFound`, `AlreadyExists`, `Conflict`,
//! `Invalid`, `BadRequest`, `Expired`, `Gone`, `TooManyRequests`, `InternalError`, ...) and
//! `details` naming the object, mirroring `k8s.io/apimachinery/pkg/api/errors`.
//!
//! [`encode`] writes any `Status` (failures, and the `Success` of a delete) byte for byte as
//! kube-apiserver's JSON serializer does: the fields in the order of the Go structs
//! `metav1.Status`, `ListMeta`, `StatusDetails` and `StatusCause`, strings escaped as Go's
//! `encoding/json` escapes them (`<`, `>`, `&`, U+2028 and U+2029 included), and the newline
//! that Go's `json.Encoder` ends every value with ([`ApiError::to_bytes`] for an answer;
//! a watch `ERROR` event embeds the object without it).

use serde_json::{Value, json};

/// A failure to be answered as a `Status` object.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{code} {reason}: {message}")]
pub struct ApiError {
    /// HTTP status code, repeated in `Status.code`.
    pub code: u16,
    /// `Status.reason`.
    pub reason: &'static str,
    /// `Status.message`.
    pub message: String,
    /// `Status.details`, when the error concerns one object.
    pub details: Option<Value>,
    /// Seconds for a `Retry-After` header (429).
    pub retry_after: Option<u32>,
    /// `Status.metadata.continue` (an inconsistent continue token on 410 of a list).
    pub continue_token: Option<String>,
}

impl ApiError {
    /// A failure with no details.
    pub fn new(code: u16, reason: &'static str, message: impl Into<String>) -> Self {
        Self {
            code,
            reason,
            message: message.into(),
            details: None,
            retry_after: None,
            continue_token: None,
        }
    }

    /// `details` as `metav1.StatusDetails` marshals: `group` omitted when empty (the core
    /// group), as Go's `omitempty` does.
    fn with_details(mut self, group: &str, kind: &str, name: &str) -> Self {
        self.details = Some(details(group, kind, name, None));
        self
    }

    /// 400 BadRequest.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, "BadRequest", message)
    }

    /// 404 NotFound for an object (`pods "web" not found`).
    pub fn not_found(group: &str, plural: &str, name: &str) -> Self {
        let what = qualified(group, plural);
        Self::new(404, "NotFound", format!("{what} \"{name}\" not found"))
            .with_details(group, plural, name)
    }

    /// 404 NotFound for a path that names no resource: kube-apiserver's generic
    /// "could not find the requested resource", with (empty) `details`, which clients such as
    /// `kubectl debug` read. The path goes to the server's log, not into the message.
    pub fn no_route(path: &str) -> Self {
        tracing::debug!(path, "no route");
        let mut e = Self::new(
            404,
            "NotFound",
            "the server could not find the requested resource",
        );
        e.details = Some(json!({}));
        e
    }

    /// 405 MethodNotAllowed.
    pub fn method_not_allowed(method: &str, path: &str) -> Self {
        tracing::debug!(method, path, "method not allowed");
        let mut e = Self::new(
            405,
            "MethodNotAllowed",
            "the server does not allow this method on the requested resource",
        );
        e.details = Some(json!({}));
        e
    }

    /// 403 Forbidden: a create in a namespace that is being deleted (the NamespaceLifecycle
    /// admission plugin).
    pub fn namespace_terminating(group: &str, plural: &str, name: &str, namespace: &str) -> Self {
        let what = qualified(group, plural);
        let why = format!(
            "unable to create new content in namespace {namespace} because it is being terminated"
        );
        let mut e = Self::new(
            403,
            "Forbidden",
            format!("{what} \"{name}\" is forbidden: {why}"),
        );
        let mut d = details(group, plural, name, None);
        d["causes"] = json!([{"reason": "NamespaceTerminating", "message": why, "field": "metadata.namespace"}]);
        e.details = Some(d);
        e
    }

    /// 409 AlreadyExists.
    pub fn already_exists(group: &str, plural: &str, name: &str) -> Self {
        let what = qualified(group, plural);
        Self::new(
            409,
            "AlreadyExists",
            format!("{what} \"{name}\" already exists"),
        )
        .with_details(group, plural, name)
    }

    /// 409 Conflict on a stale resourceVersion or failed precondition.
    pub fn conflict(group: &str, plural: &str, name: &str, why: &str) -> Self {
        let what = qualified(group, plural);
        Self::new(
            409,
            "Conflict",
            format!("Operation cannot be fulfilled on {what} \"{name}\": {why}"),
        )
        .with_details(group, plural, name)
    }

    /// 410 Expired: the resourceVersion was compacted ("too old resource version").
    pub fn too_old(requested: u64, oldest: u64) -> Self {
        Self::new(
            410,
            "Expired",
            format!("too old resource version: {requested} ({oldest})"),
        )
    }

    /// 422 Invalid, with the failing field as a cause.
    pub fn invalid(group: &str, kind: &str, name: &str, field: &str, message: &str) -> Self {
        let mut e = Self::new(
            422,
            "Invalid",
            format!("{kind} \"{name}\" is invalid: {field}: {message}"),
        );
        let mut d = details(group, kind, name, None);
        d["causes"] = json!([{"reason": "FieldValueInvalid", "message": message, "field": field}]);
        e.details = Some(d);
        e
    }

    /// 415 UnsupportedMediaType.
    pub fn unsupported_media_type(content_type: &str) -> Self {
        Self::new(
            415,
            "UnsupportedMediaType",
            format!(
                "the body of the request was in an unknown format ({content_type}); \
                     accepted media types include: application/json, \
                     application/merge-patch+json, application/json-patch+json, \
                     application/apply-patch+yaml, application/strategic-merge-patch+json"
            ),
        )
    }

    /// 429 TooManyRequests with `Retry-After`.
    pub fn too_many_requests(retry_after: u32) -> Self {
        let mut e = Self::new(
            429,
            "TooManyRequests",
            "too many requests, please try again later (injected fault)",
        );
        e.details = Some(json!({"retryAfterSeconds": retry_after}));
        e.retry_after = Some(retry_after);
        e
    }

    /// 500 InternalError.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(500, "InternalError", message)
    }

    /// 504 Timeout for a resourceVersion newer than the server's.
    pub fn too_large_rv(requested: u64, current: u64) -> Self {
        let mut e = Self::new(
            504,
            "Timeout",
            format!("Too large resource version: {requested}, current: {current}"),
        );
        e.details = Some(json!({
            "causes": [{"reason": "ResourceVersionTooLarge",
                        "message": "Too large resource version"}],
            "retryAfterSeconds": 1,
        }));
        e
    }

    /// The `Status` object.
    pub fn to_status(&self) -> Value {
        let mut metadata = json!({});
        if let Some(c) = &self.continue_token {
            metadata["continue"] = json!(c);
        }
        let mut s = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": metadata,
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        });
        if let Some(d) = &self.details {
            s["details"] = d.clone();
        }
        s
    }
}

/// The keys of `metav1.Status` and of the structs inside it, in the Go structs' order.
const STATUS_KEYS: &[&str] = &[
    "kind",
    "apiVersion",
    "metadata",
    "status",
    "message",
    "reason",
    "details",
    "code",
];
const LIST_META_KEYS: &[&str] = &[
    "selfLink",
    "resourceVersion",
    "continue",
    "remainingItemCount",
];
const DETAILS_KEYS: &[&str] = &[
    "name",
    "group",
    "kind",
    "uid",
    "causes",
    "retryAfterSeconds",
];
const CAUSE_KEYS: &[&str] = &["reason", "message", "field"];

impl ApiError {
    /// The `Status` answer's body, as kube-apiserver writes it (see [`encode`]).
    pub fn to_bytes(&self) -> bytes::Bytes {
        bytes::Bytes::from(encode(&self.to_status(), true))
    }
}

/// A `Status` object as Go's `encoding/json` marshals `metav1.Status`; `newline` adds the
/// `\n` that `json.Encoder.Encode` writes after a top-level value. Keys the Go structs do
/// not have (none the server writes) follow the known ones.
pub(crate) fn encode(status: &Value, newline: bool) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    write_ordered(&mut out, status, STATUS_KEYS, &|key| match key {
        "metadata" => Some(LIST_META_KEYS),
        "details" => Some(DETAILS_KEYS),
        _ => None,
    });
    if newline {
        out.push(b'\n');
    }
    out
}

type Nested<'a> = &'a dyn Fn(&str) -> Option<&'static [&'static str]>;

/// An object with `order`'s keys first; `nested` names the order of a key's own object.
fn write_ordered(out: &mut Vec<u8>, v: &Value, order: &[&str], nested: Nested<'_>) {
    let Value::Object(map) = v else {
        write_go(out, v);
        return;
    };
    // Every field of these structs is `omitempty` but `metadata` (a struct, never omitted):
    // Go leaves out empty strings, zero numbers, empty slices and nil pointers.
    let omitted = |k: &str| {
        k != "metadata"
            && match &map[k] {
                Value::Null => true,
                Value::String(s) => s.is_empty(),
                Value::Number(n) => n.as_f64() == Some(0.0),
                Value::Array(a) => a.is_empty(),
                _ => false,
            }
    };
    let known = order
        .iter()
        .filter(|k| map.contains_key(**k))
        .copied()
        .filter(|k| order.is_empty() || !omitted(k));
    let rest = map
        .keys()
        .map(String::as_str)
        .filter(|k| !order.contains(k))
        .filter(|k| order.is_empty() || !omitted(k));
    out.push(b'{');
    for (i, key) in known.chain(rest).enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_go_string(out, key);
        out.push(b':');
        let value = &map[key];
        match (key, nested(key)) {
            ("causes", _) if order == DETAILS_KEYS => match value {
                Value::Array(causes) => {
                    out.push(b'[');
                    for (j, c) in causes.iter().enumerate() {
                        if j > 0 {
                            out.push(b',');
                        }
                        write_ordered(out, c, CAUSE_KEYS, &|_| None);
                    }
                    out.push(b']');
                }
                other => write_go(out, other),
            },
            (_, Some(keys)) => write_ordered(out, value, keys, &|_| None),
            (_, None) => write_go(out, value),
        }
    }
    out.push(b'}');
}

/// Any JSON value, strings escaped as Go does; object keys sorted (Go sorts map keys).
fn write_go(out: &mut Vec<u8>, v: &Value) {
    match v {
        Value::String(s) => write_go_string(out, s),
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_go(out, item);
            }
            out.push(b']');
        }
        Value::Object(_) => write_ordered(out, v, &[], &|_| None),
        other => out.extend_from_slice(other.to_string().as_bytes()),
    }
}

/// A string as Go's `encoding/json` writes it with HTML escaping on (its default).
fn write_go_string(out: &mut Vec<u8>, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push(b'"');
    for c in s.chars() {
        match c {
            '"' => out.extend_from_slice(b"\\\""),
            '\\' => out.extend_from_slice(b"\\\\"),
            '\n' => out.extend_from_slice(b"\\n"),
            '\r' => out.extend_from_slice(b"\\r"),
            '\t' => out.extend_from_slice(b"\\t"),
            '\u{8}' => out.extend_from_slice(b"\\b"),
            '\u{c}' => out.extend_from_slice(b"\\f"),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' | '\0'..='\u{1f}' => {
                let n = c as u32;
                out.extend_from_slice(b"\\u");
                for shift in [12, 8, 4, 0] {
                    out.push(HEX[((n >> shift) & 0xf) as usize]);
                }
            }
            c => {
                let mut buf = [0u8; 4];
                out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            }
        }
    }
    out.push(b'"');
}

/// `Status.details` naming an object: empty fields are left out, as the real server's JSON
/// omits them (`kind` is the resource's plural, as kube-apiserver writes it there).
pub(crate) fn details(group: &str, kind: &str, name: &str, uid: Option<&str>) -> Value {
    let mut d = serde_json::Map::new();
    for (key, value) in [("name", name), ("group", group), ("kind", kind)] {
        if !value.is_empty() {
            d.insert(key.into(), json!(value));
        }
    }
    if let Some(uid) = uid.filter(|u| !u.is_empty()) {
        d.insert("uid".into(), json!(uid));
    }
    Value::Object(d)
}

/// `pods` or `deployments.apps`, as the real messages print a resource.
fn qualified(group: &str, plural: &str) -> String {
    if group.is_empty() {
        plural.to_owned()
    } else {
        format!("{plural}.{group}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_carry_code_reason_and_details() {
        let s = ApiError::not_found("apps", "deployments", "web").to_status();
        assert_eq!(s["code"], 404);
        assert_eq!(s["reason"], "NotFound");
        assert_eq!(s["message"], "deployments.apps \"web\" not found");
        assert_eq!(
            s["details"],
            json!({"name": "web", "group": "apps", "kind": "deployments"})
        );
        let s = ApiError::not_found("", "pods", "web").to_status();
        assert_eq!(s["details"], json!({"name": "web", "kind": "pods"}));
        let s = ApiError::no_route("/apis/apps/v1/widgets").to_status();
        assert_eq!(
            s["message"],
            "the server could not find the requested resource"
        );
        assert_eq!(s["details"], json!({}));
        let s = ApiError::too_old(3, 9).to_status();
        assert_eq!(s["message"], "too old resource version: 3 (9)");
        assert_eq!(ApiError::too_many_requests(2).retry_after, Some(2));
    }

    /// kube-apiserver's JSON serializer writes `metav1.Status` with `encoding/json`: fields in
    /// the Go struct order, `metadata` always (a struct is never omitted), HTML characters
    /// escaped, and a final newline from `json.Encoder`. The expected bytes are written from
    /// the structs' declarations (`Status`, `StatusDetails`, `StatusCause`).
    #[test]
    fn status_bytes_match_kube_apiserver_encoding() {
        let e = ApiError::invalid(
            "apps",
            "Deployment",
            "web",
            "spec.replicas",
            "must be <= 10 & \"x\"",
        );
        let expected = concat!(
            r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","#,
            r#""message":"Deployment \"web\" is invalid: spec.replicas: must be \u003c= 10 \u0026 \"x\"","#,
            r#""reason":"Invalid","details":{"name":"web","group":"apps","kind":"Deployment","#,
            r#""causes":[{"reason":"FieldValueInvalid","message":"must be \u003c= 10 \u0026 \"x\"","#,
            r#""field":"spec.replicas"}]},"code":422}"#,
            "\n"
        );
        assert_eq!(std::str::from_utf8(&e.to_bytes()).unwrap(), expected);
        let e = ApiError::not_found("", "pods", "web");
        let expected = concat!(
            r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","#,
            r#""message":"pods \"web\" not found","reason":"NotFound","#,
            r#""details":{"name":"web","kind":"pods"},"code":404}"#,
            "\n"
        );
        assert_eq!(std::str::from_utf8(&e.to_bytes()).unwrap(), expected);
        let mut e = ApiError::too_old(3, 9);
        e.continue_token = Some("tok".into());
        let expected = concat!(
            r#"{"kind":"Status","apiVersion":"v1","metadata":{"continue":"tok"},"#,
            r#""status":"Failure","message":"too old resource version: 3 (9)","#,
            r#""reason":"Expired","code":410}"#,
            "\n"
        );
        assert_eq!(std::str::from_utf8(&e.to_bytes()).unwrap(), expected);
        let e = ApiError::too_large_rv(9, 3);
        let got = String::from_utf8(e.to_bytes().to_vec()).unwrap();
        assert!(
            got.contains(r#""details":{"causes":[{"reason":"ResourceVersionTooLarge","message":"Too large resource version"}],"retryAfterSeconds":1},"code":504}"#),
            "{got}"
        );
        // Control characters as Go escapes them.
        let mut out = Vec::new();
        write_go_string(&mut out, "a\u{1}\u{8}\u{c}\u{2028}é");
        assert_eq!(String::from_utf8(out).unwrap(), r#""a\u0001\b\f\u2028é""#);
        // `omitempty`: the empty group of a core kind is left out.
        let mut e = ApiError::new(422, "Invalid", "x");
        e.details = Some(json!({"name": "c", "group": "", "kind": "ConfigMap",
            "causes": [{"reason": "FieldValueRequired", "message": "Required value", "field": "data"}]}));
        let got = String::from_utf8(e.to_bytes().to_vec()).unwrap();
        assert!(
            got.contains(r#""details":{"name":"c","kind":"ConfigMap","causes""#),
            "{got}"
        );
    }
}
