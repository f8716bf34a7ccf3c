//! Decoding, pruning, defaulting and schema validation of written objects, as kube-apiserver
//! and apiextensions-apiserver do them.
//!
//! A real server never stores whatever JSON it is sent. Every create, update and patch goes
//! through the same steps, reproduced here from the embedded v1.35 OpenAPI document (built-in
//! kinds, [`super::spec::builtin_schema`]) and from the CRD version's structural
//! `openAPIV3Schema` (custom resources):
//!
//! 1. **Decoding** (`decode`, `prune`). A built-in object is decoded into its Go struct: a
//!    value of the wrong JSON type (`"replicas": "three"`) fails the request with 400
//!    BadRequest, `Deployment in version "v1" cannot be handled as a Deployment: json: cannot
//!    unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32`;
//!    fields the struct does not have are dropped. A custom resource is pruned: fields its
//!    structural schema does not declare are removed unless a parent says
//!    `x-kubernetes-preserve-unknown-fields: true`; `apiVersion`, `kind` and `metadata` of the
//!    root and of `x-kubernetes-embedded-resource` objects are kept, their `metadata` coerced
//!    to `ObjectMeta`.
//! 2. **`fieldValidation`** (`?fieldValidation=Strict|Warn|Ignore`, default `Warn` as in
//!    `k8s.io/apiserver/pkg/endpoints/handlers/rest.go` `fieldValidation()`): the unknown and
//!    duplicate fields found while decoding fail the request with 400 `strict decoding error:
//!    unknown field "spec.foo", duplicate field "spec.replicas"` (Strict), come back as
//!    `Warning: 299 - "unknown field \"spec.foo\""` headers (Warn), or are dropped silently
//!    (Ignore). Any other value is 422 `CreateOptions.meta.k8s.io "" is invalid`, as is a
//!    `fieldManager` longer than 128 bytes or with a non-printable character
//!    (`ValidateFieldManager`).
//! 3. **Defaulting** of custom resources (`defaults`, apiextensions' `structuraldefaulting`, with
//!    the rules of `kinform_core::defaulting`, which generated types share):
//!    `null`s of non-nullable fields without a default are removed, then every `default` of a
//!    property missing (or `null` and non-nullable) inside an object that is present is
//!    filled in. This runs on every write and, as the real server also defaults what it reads
//!    from etcd, again over the stored objects when their CRD changes ([`redefault_stored`]).
//! 4. **Validation** (`schema`): 422 Invalid with one `details.causes` entry per failure,
//!    worded as `k8s.io/apimachinery/pkg/util/validation/field` words them after
//!    kube-openapi's validator (`apiextensions-apiserver/pkg/apiserver/validation`
//!    `kubeOpenAPIResultToFieldErrors`): `spec.replicas: Invalid value: "string":
//!    spec.replicas in body must be of type integer: "string"` (FieldValueTypeInvalid),
//!    `Required value` (FieldValueRequired), `Unsupported value: "pink": supported values:
//!    "red", "blue"` (FieldValueNotSupported), `should match '^[a-z]+$'`, `should be greater
//!    than or equal to 1` (FieldValueInvalid), `Too long: may not be more than 5 bytes`,
//!    `Too many: 3: must have at most 2 items`, `Duplicate value` for `x-kubernetes-list-type`
//!    `set`/`map` lists. Custom resources are checked against every keyword of their
//!    structural schema (types, `format`, `nullable`, `enum`, `pattern`, bounds, lengths,
//!    item and property counts, `required`, `x-kubernetes-int-or-string`,
//!    `x-kubernetes-embedded-resource`), with validation ratcheting on update (an unchanged
//!    value that was already invalid is let through, as `CRDValidationRatcheting`, on by
//!    default since 1.30, does). Built-in kinds are checked against what the OpenAPI document
//!    says: `required` and `enum` (empty strings excepted: Go defaulting fills them). Of
//!    `ValidateObjectMeta`, every kind's annotations are held to 256 KiB in all.
//!
//! 5. **Hand-written rules** of built-in kinds (`builtin`): the Job restart policy and
//!    selector, non-negative replica counts, and on update the immutable selectors of
//!    workloads and the data of ConfigMaps and Secrets marked `immutable`.
//!
//! 6. **CEL** (`cel`): `x-kubernetes-validations` rules are evaluated with the `cel` crate
//!    (cel-rust, formerly `cel-interpreter`: maintained, pure Rust), `self` and, for
//!    transition rules on update, `oldSelf`; a rule that is false is a 422 cause with its
//!    message. Rules that need the Kubernetes CEL libraries cel-rust lacks are not enforced
//!    (see that module).
//!
//! Not reproduced: the rest of the hand-written Go validation of built-in kinds (DNS-label
//! container names, port ranges, selector/template label matching beyond Jobs, immutable
//! fields beyond those of `builtin`, ...), the Go
//! defaulting of built-ins beyond module `strategy`, the re-encoding of built-ins (zero
//! values of `omitempty` fields are kept as sent, but for `metadata`'s empty maps and lists,
//! and quantities are not canonicalised), the CEL
//! rules that need Kubernetes' CEL libraries and `messageExpression`, string formats
//! beyond `date-time`, `date`, `byte`, `uuid`, `ipv4`, `ipv6`, `cidr`, `mac`, `hostname`,
//! `email`, `uri` and `duration` (the last three checked loosely), the wording of Go's time and base64 errors beyond the common case,
//! and the CRD's own validation (a schema that is not structural is accepted).
//!
//! Written by hand over `serde_json::Value`: the Rust JSON-schema validators considered
//! (`jsonschema`, `boon`) implement draft 2019+/2020 semantics, not kube-openapi's OpenAPI v3
//! subset with its Kubernetes extensions, pruning and defaulting, and word their errors
//! differently from the causes clients parse.

mod builtin;
mod cel;
mod decode;
mod defaults;
mod prune;
mod schema;

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::{Arc, OnceLock};

use parking_lot::Mutex;

use serde_json::{Value, json};

use crate::handlers::negotiation::body::Body;
use crate::handlers::params::Query;
use crate::registry::ResourceInfo;
use crate::registry::spec::{Schema, builtin_schema};
use crate::status::ApiError;
use crate::storage::{Inner, Obj};

pub(crate) use builtin::check as builtin;

/// The `fieldValidation` directive of a write.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum FieldValidation {
    /// Unknown and duplicate fields fail the request (400).
    Strict,
    /// They are dropped and reported in `Warning` headers (the default).
    #[default]
    Warn,
    /// They are dropped silently.
    Ignore,
}

/// The validation state of one write request: its directive, what the body's raw JSON showed
/// (duplicate fields) and the warnings to answer.
#[derive(Clone, Debug, Default)]
pub(crate) struct Check {
    /// `fieldValidation`.
    pub directive: FieldValidation,
    /// Paths of fields that appear twice in one JSON object of the request body.
    pub duplicates: Vec<String>,
    /// Texts of the `Warning: 299` headers to answer.
    pub warnings: Vec<String>,
    /// Whether the request is a PATCH (its strict errors are not prefixed with the kind).
    pub patch: bool,
    /// The request's admission, when webhooks may select it (module `admission`).
    pub admission: Option<crate::admission::Gate>,
}

impl Check {
    /// Reads `fieldValidation` from the query, checks `fieldManager`, and scans the body for
    /// duplicate fields.
    /// `options_kind` names the options type in the 422 for a bad directive (`CreateOptions`,
    /// `UpdateOptions`, `PatchOptions`).
    pub fn from_request(q: &Query, body: &[u8], options_kind: &str) -> Result<Self, ApiError> {
        let directive = match q.get("fieldValidation").unwrap_or_default() {
            "" | "Warn" => FieldValidation::Warn,
            "Strict" => FieldValidation::Strict,
            "Ignore" => FieldValidation::Ignore,
            other => {
                let cause = Cause::not_supported(
                    "fieldValidation",
                    &json!(other),
                    &["", "Ignore", "Strict", "Warn"],
                );
                let mut causes = field_manager_causes(q.get("fieldManager").unwrap_or_default());
                causes.push(cause);
                return Err(invalid_error("meta.k8s.io", options_kind, "", causes));
            }
        };
        let causes = field_manager_causes(q.get("fieldManager").unwrap_or_default());
        if !causes.is_empty() {
            return Err(invalid_error("meta.k8s.io", options_kind, "", causes));
        }
        Ok(Self {
            directive,
            duplicates: decode::duplicate_fields(body),
            warnings: Vec::new(),
            patch: options_kind == "PatchOptions",
            admission: None,
        })
    }

    /// The check of an object that is not the request body (a webhook's answer): unknown
    /// fields are dropped without a word.
    pub fn ignoring_unknown() -> Self {
        Self {
            directive: FieldValidation::Ignore,
            ..Self::default()
        }
    }

    /// Adds the `Warning` headers to a response.
    pub fn with_warnings(&self, mut response: http::Response<Body>) -> http::Response<Body> {
        for w in &self.warnings {
            let text = format!("299 - {}", go_quote(w));
            if let Ok(v) = http::HeaderValue::from_str(&text) {
                response.headers_mut().append(http::header::WARNING, v);
            }
        }
        response
    }

    /// Applies the directive to the unknown fields (and the body's duplicate fields) found
    /// while decoding; under Strict, the `strict decoding error` text.
    fn report(&mut self, unknown: Vec<String>) -> Result<(), String> {
        let mut problems: Vec<String> = std::mem::take(&mut self.duplicates)
            .into_iter()
            .map(|p| format!("duplicate field {}", go_quote(&p)))
            .collect();
        problems.extend(
            unknown
                .into_iter()
                .map(|p| format!("unknown field {}", go_quote(&p))),
        );
        if problems.is_empty() {
            return Ok(());
        }
        match self.directive {
            FieldValidation::Strict => {
                Err(format!("strict decoding error: {}", problems.join(", ")))
            }
            FieldValidation::Warn => {
                self.warnings.extend(problems);
                Ok(())
            }
            FieldValidation::Ignore => Ok(()),
        }
    }
}

/// Where the schema of a resource comes from.
enum Source {
    /// A built-in kind's v2 definition.
    Builtin(Schema<'static>),
    /// A custom resource's `openAPIV3Schema`.
    Custom(Arc<Value>),
    /// A resource without a known schema (registered by a test): nothing is checked.
    None,
}

fn source(inner: &Inner, info: &ResourceInfo) -> Source {
    if let Some(crd) = inner.crd_of(info) {
        return custom_schema(crd, &info.version).map_or(Source::None, Source::Custom);
    }
    builtin_schema(&info.group, &info.version, &info.kind).map_or(Source::None, Source::Builtin)
}

/// The `openAPIV3Schema` of a custom resource's version (parsed once per stored state of its
/// CRD), `None` for a built-in or a version without a schema. The one place the apply,
/// OpenAPI and validation code read a CRD's schema from.
pub(crate) fn crd_version_schema(inner: &Inner, info: &ResourceInfo) -> Option<Arc<Value>> {
    custom_schema(inner.crd_of(info)?, &info.version)
}

/// The `openAPIV3Schema` of one version of a stored CRD, parsed once per stored state of the
/// CRD (a large CRD is a megabyte of JSON: parsing it on every write of its objects would
/// dominate the write).
fn custom_schema(crd: Arc<Obj>, version: &str) -> Option<Arc<Value>> {
    type Cache = HashMap<(String, String), (Arc<Obj>, Option<Arc<Value>>)>;
    static CACHE: OnceLock<Mutex<Cache>> = OnceLock::new();
    let key = (crd.key.clone(), version.to_owned());
    let mut cache = CACHE.get_or_init(Default::default).lock();
    if let Some((stored, schema)) = cache.get(&key)
        && Arc::ptr_eq(stored, &crd)
    {
        return schema.clone();
    }
    let value = crd.value();
    let schema = value["spec"]["versions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|v| v["name"].as_str() == Some(version))
        .map(|v| &v["schema"]["openAPIV3Schema"])
        .filter(|s| s.is_object())
        .map(|s| Arc::new(s.clone()));
    if cache.len() > 256 {
        cache.clear();
    }
    // Keeping the stored object keeps its address from being reused by another.
    cache.insert(key, (crd, schema.clone()));
    schema
}

/// Step 1 to 3 on a request body (or a patched object): decodes a built-in object or prunes
/// and defaults a custom resource, applying the request's `fieldValidation` to the unknown
/// and duplicate fields. Fails with 400 on a value the Go types cannot hold and, under
/// Strict, on unknown or duplicate fields: `Deployment in version "v1" cannot be handled as
/// a Deployment: strict decoding error: unknown field "spec.foo"` as the create and update
/// handlers' `transformDecodeError` words it, the bare `strict decoding error: ...` for a
/// patch.
pub(crate) fn decode(
    inner: &Inner,
    info: &ResourceInfo,
    value: &mut Value,
    check: &mut Check,
) -> Result<(), ApiError> {
    let cannot_handle = |e: String| {
        ApiError::bad_request(format!(
            "{kind} in version {version:?} cannot be handled as a {kind}: {e}",
            kind = info.kind,
            version = info.version
        ))
    };
    let unknown = match source(inner, info) {
        Source::Builtin(s) => decode::decode(s, value).map_err(cannot_handle)?,
        Source::Custom(node) => {
            let s = Schema::standalone(&node);
            let mut unknown = prune::prune(value, s).map_err(cannot_handle)?;
            defaults::default(value, s);
            // Defaults are pruned too (the CRD's defaults are pruned when it is accepted).
            unknown.extend(prune::prune(value, s).unwrap_or_default());
            unknown.sort();
            unknown.dedup();
            unknown
        }
        Source::None => Vec::new(),
    };
    match check.report(unknown) {
        Ok(()) => Ok(()),
        Err(strict) if check.patch => Err(ApiError::bad_request(strict)),
        Err(strict) => Err(cannot_handle(strict)),
    }
}

/// Step 4: validates the object about to be stored (`old`: the stored object, on update).
/// Fails with 422 Invalid listing every failure. A custom resource is defaulted once more
/// first: the status kept from the stored object or dropped on create is what a read shows,
/// and the real server defaults what it reads.
pub(crate) fn validate(
    inner: &Inner,
    info: &ResourceInfo,
    name: &str,
    value: &mut Value,
    old: Option<&Value>,
) -> Result<(), ApiError> {
    omit_empty_object_meta(value);
    let mut causes = object_meta_causes(value);
    causes.extend(match source(inner, info) {
        Source::Builtin(s) => schema::validate(s, value, None, schema::Mode::Builtin),
        Source::Custom(node) => {
            let s = Schema::standalone(&node);
            defaults::default(value, s);
            schema::validate(s, value, old, schema::Mode::Custom)
        }
        Source::None => Vec::new(),
    });
    if causes.is_empty() {
        return Ok(());
    }
    Err(invalid_error(&info.group, &info.kind, name, causes))
}

/// All annotations of an object together, keys and values, in bytes
/// (apimachinery's `TotalAnnotationSizeLimitB`).
pub(crate) const TOTAL_ANNOTATION_SIZE_LIMIT: usize = 256 * 1024;

/// The checks of apimachinery's `ValidateObjectMeta` reproduced here, first in the list as
/// every strategy validates metadata first: the total size of the annotations
/// (`ValidateAnnotationsSize`: `metadata.annotations: Too long: may not be more than 262144
/// bytes`).
fn object_meta_causes(value: &Value) -> Vec<Cause> {
    let Some(annotations) = value["metadata"]["annotations"].as_object() else {
        return Vec::new();
    };
    let total: usize = annotations
        .iter()
        .map(|(k, v)| k.len() + v.as_str().map_or(0, str::len))
        .sum();
    if total > TOTAL_ANNOTATION_SIZE_LIMIT {
        vec![Cause::too_long(
            "metadata.annotations",
            TOTAL_ANNOTATION_SIZE_LIMIT as i64,
        )]
    } else {
        Vec::new()
    }
}

/// Drops the `metadata` maps and lists that are empty or null (`labels`, `annotations`,
/// `ownerReferences`, `finalizers`): every object's metadata goes through Go's typed
/// `ObjectMeta` (built-ins when decoded, custom resources in `objectmeta.Coerce`), whose
/// `omitempty` leaves them out when it is encoded again. `kubectl diff` relies on it: its
/// patch adds `annotations: {}` (kubectl's `GetModifiedConfiguration` removes the
/// last-applied annotation by setting an empty map), and the dry-run answer of a real server
/// has no `annotations` for it. `managedFields` is left alone: `[]` asks for them to be reset
/// (module `apply`).
fn omit_empty_object_meta(value: &mut Value) {
    let Some(meta) = value.get_mut("metadata").and_then(Value::as_object_mut) else {
        return;
    };
    for key in ["labels", "annotations", "ownerReferences", "finalizers"] {
        let empty = match meta.get(key) {
            Some(Value::Null) => true,
            Some(Value::Object(m)) => m.is_empty(),
            Some(Value::Array(a)) => a.is_empty(),
            _ => false,
        };
        if empty {
            meta.remove(key);
        }
    }
}

/// Applies the defaults of a CRD's schemas to its stored objects, as apiextensions-apiserver
/// defaults objects it reads from etcd: after a CRD update adds a default, GET and LIST show
/// it on objects written before. The objects keep their resourceVersion and no watch event is
/// sent (nothing was written).
pub(crate) fn redefault_stored(inner: &mut Inner, crd: &Value) {
    if inner.dry_run {
        return;
    }
    let group = crd["spec"]["group"].as_str().unwrap_or_default();
    let plural = crd["spec"]["names"]["plural"].as_str().unwrap_or_default();
    let storage = format!("{group}/{plural}");
    let versions = crd["spec"]["versions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let Some(info) = versions
        .iter()
        .filter_map(|v| v["name"].as_str())
        .find_map(|v| inner.registry.get(group, v, plural))
    else {
        return;
    };
    for obj in inner.objects(&storage, None) {
        let mut v = obj.value();
        let (_, version) = crate::registry::split_api_version(&obj.api_version);
        let schema = versions
            .iter()
            .find(|ver| ver["name"].as_str() == Some(version))
            .map(|ver| &ver["schema"]["openAPIV3Schema"])
            .filter(|s| s.is_object());
        let Some(schema) = schema else { continue };
        let s = Schema::standalone(schema);
        let before = v.clone();
        defaults::default(&mut v, s);
        let _ = prune::prune(&mut v, s);
        if v != before {
            inner.insert_silently(&storage, Obj::new(&v, &info));
        }
    }
}

/// One failure, as a `metav1.StatusCause`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Cause {
    /// `reason` (`FieldValueInvalid`, ...).
    pub reason: &'static str,
    /// `field` (`spec.replicas`).
    pub field: String,
    /// `message`: the error without its field (`Invalid value: "x": ...`).
    pub message: String,
}

impl Cause {
    fn new(reason: &'static str, field: &str, message: String) -> Self {
        Self {
            reason,
            field: field.to_owned(),
            message,
        }
    }

    /// `field.Required`.
    pub fn required(field: &str) -> Self {
        Self::new("FieldValueRequired", field, "Required value".into())
    }

    /// `field.Required` with a detail.
    pub fn required_because(field: &str, detail: &str) -> Self {
        Self::new(
            "FieldValueRequired",
            field,
            format!("Required value: {detail}"),
        )
    }

    /// `field.Forbidden`.
    pub fn forbidden(field: &str, detail: &str) -> Self {
        Self::new("FieldValueForbidden", field, format!("Forbidden: {detail}"))
    }

    /// `field.Invalid`.
    pub fn invalid(field: &str, value: &Value, detail: &str) -> Self {
        let mut m = format!("Invalid value: {}", bad_value(value));
        if !detail.is_empty() {
            let _ = write!(m, ": {detail}");
        }
        Self::new("FieldValueInvalid", field, m)
    }

    /// `field.TypeInvalid`.
    pub fn type_invalid(field: &str, value: &Value, detail: &str) -> Self {
        let mut c = Self::invalid(field, value, detail);
        c.reason = "FieldValueTypeInvalid";
        c
    }

    /// `field.NotSupported`.
    pub fn not_supported(field: &str, value: &Value, supported: &[&str]) -> Self {
        let mut m = format!("Unsupported value: {}", bad_value(value));
        if !supported.is_empty() {
            let quoted: Vec<String> = supported.iter().map(|s| go_quote(s)).collect();
            let _ = write!(m, ": supported values: {}", quoted.join(", "));
        }
        Self::new("FieldValueNotSupported", field, m)
    }

    /// `field.TooLong` (string length).
    pub fn too_long(field: &str, max: i64) -> Self {
        let unit = if max == 1 { "byte" } else { "bytes" };
        Self::new(
            "FieldValueTooLong",
            field,
            format!("Too long: may not be more than {max} {unit}"),
        )
    }

    /// `field.TooMany` (items or properties).
    pub fn too_many(field: &str, actual: usize, max: i64) -> Self {
        let unit = if max == 1 { "item" } else { "items" };
        Self::new(
            "FieldValueTooMany",
            field,
            format!("Too many: {actual}: must have at most {max} {unit}"),
        )
    }

    /// `field.Duplicate`.
    pub fn duplicate(field: &str, value: &Value) -> Self {
        Self::new(
            "FieldValueDuplicate",
            field,
            format!("Duplicate value: {}", bad_value(value)),
        )
    }

    /// The error as `field: message`.
    fn text(&self) -> String {
        if self.field.is_empty() {
            self.message.clone()
        } else {
            format!("{}: {}", self.field, self.message)
        }
    }
}

/// Longest field manager name (`validation.FieldManagerMaxLength`).
pub(crate) const MAX_MANAGER_LEN: usize = 128;

/// `ValidateFieldManager` of the write options: at most 128 bytes, and only characters Go's
/// `unicode.IsPrint` accepts (letters, marks, numbers, punctuation, symbols and the ASCII
/// space). Rust's standard library has no Unicode general categories, so "printable" is
/// approximated: no control, whitespace other than the space, or format character.
fn field_manager_causes(manager: &str) -> Vec<Cause> {
    let mut causes = Vec::new();
    let max = MAX_MANAGER_LEN;
    if manager.len() > max {
        causes.push(Cause::too_long("fieldManager", max as i64));
    }
    for (at, c) in manager.char_indices() {
        if !printable(c) {
            causes.push(Cause::invalid(
                "fieldManager",
                &json!(manager),
                &format!(
                    "invalid character U+{:04X} (at position {at})",
                    u32::from(c)
                ),
            ));
        }
    }
    causes
}

/// Go's `unicode.IsPrint`, approximated (see [`field_manager_causes`]).
fn printable(c: char) -> bool {
    let format = matches!(
        u32::from(c),
        0xAD | 0x600..=0x605
            | 0x61C
            | 0x6DD
            | 0x70F
            | 0x180E
            | 0x200B..=0x200F
            | 0x202A..=0x202E
            | 0x2060..=0x206F
            | 0xFEFF
            | 0xFFF9..=0xFFFB
            | 0xE000..=0xF8FF
            | 0xF0000..
    );
    c == ' ' || !(c.is_control() || c.is_whitespace() || format)
}

/// 422 Invalid as `errors.NewInvalid` builds it: `Kind.group "name" is invalid: <error>` for
/// one failure, `[<error>, <error>]` for several (identical messages once).
pub(crate) fn invalid_error(group: &str, kind: &str, name: &str, causes: Vec<Cause>) -> ApiError {
    let qualified = if group.is_empty() {
        kind.to_owned()
    } else {
        format!("{kind}.{group}")
    };
    let mut texts: Vec<String> = Vec::new();
    for c in &causes {
        let t = c.text();
        if !texts.contains(&t) {
            texts.push(t);
        }
    }
    let summary = match texts.as_slice() {
        [one] => one.clone(),
        many => format!("[{}]", many.join(", ")),
    };
    let mut e = ApiError::new(
        422,
        "Invalid",
        format!("{qualified} {} is invalid: {summary}", go_quote(name)),
    );
    let causes: Vec<Value> = causes
        .iter()
        .map(|c| json!({"reason": c.reason, "message": c.message, "field": c.field}))
        .collect();
    e.details = Some(json!({"name": name, "group": group, "kind": kind, "causes": causes}));
    e
}

/// A value as `field.Error` prints it: strings quoted, numbers and booleans bare, anything
/// else as JSON.
pub(crate) fn bad_value(v: &Value) -> String {
    match v {
        Value::String(s) => go_quote(s),
        Value::Number(n) => go_number(n),
        Value::Bool(b) => b.to_string(),
        other => other.to_string(),
    }
}

/// A number as Go's `%v` prints an `int64` or a `float64`.
pub(crate) fn go_number(n: &serde_json::Number) -> String {
    if n.is_i64() || n.is_u64() {
        return n.to_string();
    }
    let f = n.as_f64().unwrap_or_default();
    if f.fract() == 0.0 && f.abs() < 1e21 {
        format!("{f:.0}")
    } else {
        format!("{f}")
    }
}

/// A string quoted as Go's `%q` quotes it (JSON escaping is the same for printable text).
pub(crate) fn go_quote(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| format!("\"{s}\""))
}

/// Appends `.key` (or `key` at the root) to a field path.
pub(crate) fn child(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_validation_directive_parses_like_the_api_server() {
        let q = |s: &str| Query::parse(Some(s));
        assert_eq!(
            Check::from_request(&q(""), b"{}", "CreateOptions")
                .unwrap()
                .directive,
            FieldValidation::Warn
        );
        assert_eq!(
            Check::from_request(&q("fieldValidation=Strict"), b"{}", "CreateOptions")
                .unwrap()
                .directive,
            FieldValidation::Strict
        );
        let e =
            Check::from_request(&q("fieldValidation=strict"), b"{}", "CreateOptions").unwrap_err();
        assert_eq!(e.code, 422);
        assert_eq!(
            e.message,
            "CreateOptions.meta.k8s.io \"\" is invalid: fieldValidation: Unsupported value: \"strict\": supported values: \"\", \"Ignore\", \"Strict\", \"Warn\""
        );
    }

    #[test]
    fn strict_lists_duplicates_then_unknown_fields() {
        let mut c = Check {
            directive: FieldValidation::Strict,
            duplicates: vec!["spec.replicas".into()],
            ..Check::default()
        };
        let e = c.report(vec!["spec.foo".into()]).unwrap_err();
        assert_eq!(
            e,
            "strict decoding error: duplicate field \"spec.replicas\", unknown field \"spec.foo\""
        );
        let mut c = Check::default();
        c.report(vec!["spec.foo".into()]).unwrap();
        assert_eq!(c.warnings, ["unknown field \"spec.foo\""]);
        let mut c = Check {
            directive: FieldValidation::Ignore,
            ..Check::default()
        };
        c.report(vec!["spec.foo".into()]).unwrap();
        assert!(c.warnings.is_empty());
    }

    #[test]
    fn invalid_errors_are_worded_like_new_invalid() {
        let one = invalid_error(
            "apps",
            "Deployment",
            "web",
            vec![Cause::required("spec.selector")],
        );
        assert_eq!(
            one.message,
            "Deployment.apps \"web\" is invalid: spec.selector: Required value"
        );
        let d = one.details.unwrap();
        assert_eq!(d["causes"][0]["reason"], "FieldValueRequired");
        assert_eq!(d["causes"][0]["field"], "spec.selector");
        assert_eq!(d["causes"][0]["message"], "Required value");
        let two = invalid_error(
            "",
            "Pod",
            "p",
            vec![
                Cause::invalid("spec.a", &json!(0), "x"),
                Cause::not_supported("spec.b", &json!("z"), &["a", "b"]),
            ],
        );
        assert_eq!(
            two.message,
            "Pod \"p\" is invalid: [spec.a: Invalid value: 0: x, spec.b: Unsupported value: \"z\": supported values: \"a\", \"b\"]"
        );
        assert_eq!(
            go_number(&serde_json::Number::from_f64(1.5).unwrap()),
            "1.5"
        );
        assert_eq!(go_number(&serde_json::Number::from_f64(2.0).unwrap()), "2");
    }
}
