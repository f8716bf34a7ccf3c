//! Kubernetes protobuf request bodies, turned into the JSON the same client would have sent.
//!
//! kubectl and client-go's typed clients send built-in kinds as
//! `Content-Type: application/vnd.kubernetes.protobuf` (kubectl `create namespace|secret|
//! configmap|deployment|service|job|...`, `create token`, `auth can-i`). kube-apiserver decodes
//! them with apimachinery's protobuf serializer (`pkg/runtime/serializer/protobuf`): the four
//! bytes `k8s\0`, then a `runtime.Unknown` message whose `typeMeta` names the kind and whose
//! `raw` is the object's message as defined in the `generated.proto` files of k8s.io/api. This
//! module decodes that envelope and writes the object as the JSON Go's `encoding/json` would
//! write the decoded Go struct, which is what the server's JSON path then handles:
//!
//! - field names are the Go JSON names (the proto names, except where the Go tag says otherwise,
//!   e.g. `$ref` or `x-kubernetes-*`), and `json:",inline"` embedded structs are flattened;
//! - a scalar is written when set, except a zero value of an `omitempty` non-pointer field: the
//!   Go encoder writes every non-pointer field, so on the wire a zero there means "unset"; a
//!   pointer field's zero (`replicas: 0`, `automountServiceAccountToken: false`) is kept;
//! - int32/int64 as JSON numbers, bytes as base64 (Secret `data`), maps as objects, messages
//!   that are set as objects (`spec: {}` as Go writes it);
//! - the types with a JSON form of their own: `meta.v1.Time` (RFC 3339 seconds, `null` when
//!   zero, left out for `creationTimestamp`, which is `omitzero`), `MicroTime` (6 fractional
//!   digits), `Duration` (Go duration string), `FieldsV1`, `runtime.RawExtension` and
//!   apiextensions `JSON` (their raw JSON), `Verbs` and the `ExtraValue`s (arrays),
//!   `GroupVersion`, `util.intstr.IntOrString` (number or string), `api.resource.Quantity`
//!   (its string) and apiextensions' `JSONSchemaPropsOrBool|OrArray|OrStringArray`.
//!
//! The schema is vendored (testserver/proto, see its SOURCE.md): a `FileDescriptorSet` of the
//! v1.35 protos, read with `prost-reflect` (dynamic messages over `prost`), and a table of what
//! the Go types add for JSON (names, inline, pointers), derived from the Go sources by the same
//! generator. Considered and not used: generated Rust types for every Kubernetes message
//! (`k8s-pb`, prost-build): a build-time protoc step and a large compile for what one dynamic
//! walk does; writing the wire decoding by hand: prost-reflect is maintained and exact.
//!
//! Errors are answered as kube-apiserver's decoder does: 400 BadRequest for a body that is not
//! a protobuf envelope, lacks a kind, or does not decode; 415 for a kind with no protobuf form
//! (custom resources, which kube-apiserver only accepts as JSON, YAML or CBOR). Answers stay
//! JSON: kubectl sends `Accept: application/vnd.kubernetes.protobuf,application/json`.

use std::collections::HashMap;
use std::io::Read;
use std::sync::OnceLock;

use base64::Engine as _;
use bytes::Bytes;
use prost_reflect::{
    DescriptorPool, DynamicMessage, FieldDescriptor, Kind, MapKey, MessageDescriptor,
    ReflectMessage, Value as PbValue,
};
use serde_json::{Map, Value, json};

use super::status::ApiError;

/// The media type of Kubernetes' protobuf encoding.
pub(crate) const MEDIA_TYPE: &str = "application/vnd.kubernetes.protobuf";

/// The four bytes every Kubernetes protobuf body starts with.
const MAGIC: &[u8] = b"k8s\0";

/// Nesting of protobuf envelopes inside `RawExtension`s followed before giving up.
const MAX_ENVELOPE_DEPTH: usize = 4;

const DESCRIPTORS: &[u8] = include_bytes!("../proto/k8s-1.35.fds.gz");
const GO_JSON: &[u8] = include_bytes!("../proto/go-json.txt.gz");

const META_V1: &str = "k8s.io.apimachinery.pkg.apis.meta.v1";
const UNKNOWN: &str = "k8s.io.apimachinery.pkg.runtime.Unknown";

/// Whether a `Content-Type` is Kubernetes' protobuf encoding.
pub(crate) fn is_protobuf(content_type: &str) -> bool {
    content_type
        .split(';')
        .next()
        .is_some_and(|t| t.trim().eq_ignore_ascii_case(MEDIA_TYPE))
}

/// The JSON body equivalent to a protobuf request body.
pub(crate) fn to_json_body(body: &[u8]) -> Result<Bytes, ApiError> {
    let value = decode(body)?;
    serde_json::to_vec(&value)
        .map(Bytes::from)
        .map_err(|e| ApiError::internal(format!("writing the decoded protobuf body: {e}")))
}

/// Decodes a Kubernetes protobuf body (`k8s\0` + `runtime.Unknown`) into the object's JSON.
pub(crate) fn decode(body: &[u8]) -> Result<Value, ApiError> {
    decode_envelope(schema()?, body, 0)
}

/// How Go's JSON differs from the proto field for one field.
#[derive(Debug, Default)]
struct GoField {
    /// The Go JSON name, when not the proto name.
    name: Option<String>,
    /// `json:",inline"`: the message's fields go into the parent object.
    inline: bool,
    /// A scalar whose zero value Go writes (pointer, or no `omitempty`).
    zero: bool,
    /// A message left out when zero (`omitzero`).
    omitzero: bool,
    /// `json:"-"`: never written.
    skip: bool,
}

/// The vendored descriptors and Go JSON table.
struct Schema {
    pool: DescriptorPool,
    go: HashMap<String, GoField>,
}

fn schema() -> Result<&'static Schema, ApiError> {
    static SCHEMA: OnceLock<Result<Schema, String>> = OnceLock::new();
    SCHEMA
        .get_or_init(load)
        .as_ref()
        .map_err(|e| ApiError::internal(format!("loading the protobuf descriptors: {e}")))
}

fn gunzip(data: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(data)
        .read_to_end(&mut out)
        .map_err(|e| e.to_string())?;
    Ok(out)
}

fn load() -> Result<Schema, String> {
    let pool =
        DescriptorPool::decode(gunzip(DESCRIPTORS)?.as_slice()).map_err(|e| e.to_string())?;
    let table = String::from_utf8(gunzip(GO_JSON)?).map_err(|e| e.to_string())?;
    let mut go = HashMap::new();
    for line in table.lines().filter(|l| !l.starts_with('#')) {
        let mut words = line.split_whitespace();
        let Some(field) = words.next() else { continue };
        let mut f = GoField::default();
        for w in words {
            match w {
                "inline" => f.inline = true,
                "zero" => f.zero = true,
                "omitzero" => f.omitzero = true,
                "skip" => f.skip = true,
                other => f.name = other.strip_prefix("json=").map(str::to_owned),
            }
        }
        go.insert(field.to_owned(), f);
    }
    Ok(Schema { pool, go })
}

fn bad(message: impl Into<String>) -> ApiError {
    ApiError::bad_request(message)
}

fn decode_envelope(s: &Schema, body: &[u8], depth: usize) -> Result<Value, ApiError> {
    let Some(rest) = body.strip_prefix(MAGIC) else {
        return Err(bad(
            "the body does not appear to be a Kubernetes protobuf message: it lacks the \
             prefix \"k8s\\x00\"",
        ));
    };
    let unknown_desc = s
        .pool
        .get_message_by_name(UNKNOWN)
        .ok_or_else(|| ApiError::internal("runtime.Unknown missing from the descriptors"))?;
    let unknown = DynamicMessage::decode(unknown_desc, rest).map_err(|e| {
        bad(format!(
            "the protobuf envelope (runtime.Unknown) is malformed: {e}"
        ))
    })?;
    let type_meta = message_field(&unknown, "typeMeta");
    let api_version = type_meta
        .as_ref()
        .map(|t| string_field(t, "apiVersion"))
        .unwrap_or_default();
    let kind = type_meta
        .as_ref()
        .map(|t| string_field(t, "kind"))
        .unwrap_or_default();
    if kind.is_empty() {
        return Err(bad("Object 'Kind' is missing in the protobuf body"));
    }
    if api_version.is_empty() {
        return Err(bad(format!(
            "Object 'apiVersion' is missing in the protobuf body of kind {kind}"
        )));
    }
    let encoding = string_field(&unknown, "contentEncoding");
    let inner_type = string_field(&unknown, "contentType");
    if !encoding.is_empty() || !(inner_type.is_empty() || is_protobuf(&inner_type)) {
        return Err(ApiError::new(
            415,
            "UnsupportedMediaType",
            format!(
                "the protobuf envelope carries {kind} as {inner_type:?} with encoding \
                 {encoding:?}; only the protobuf encoding is decoded"
            ),
        ));
    }
    let desc = message_for(s, &api_version, &kind).ok_or_else(|| {
        ApiError::new(
            415,
            "UnsupportedMediaType",
            format!(
                "{kind} in {api_version} has no protobuf form (custom resources are accepted \
                 as application/json, application/yaml or application/cbor)"
            ),
        )
    })?;
    let raw = bytes_field(&unknown, "raw");
    let msg = DynamicMessage::decode(desc, raw.as_slice())
        .map_err(|e| bad(format!("the protobuf body of {kind} is malformed: {e}")))?;
    let mut out = Map::new();
    out.insert("kind".into(), Value::String(kind));
    out.insert("apiVersion".into(), Value::String(api_version));
    match message(s, &msg, depth)? {
        Value::Object(fields) => out.extend(fields),
        other => return Ok(other),
    }
    Ok(Value::Object(out))
}

/// The message of `kind` in `api_version`: the group's proto package, then meta/v1 (options
/// such as `DeleteOptions` travel under every group version).
fn message_for(s: &Schema, api_version: &str, kind: &str) -> Option<MessageDescriptor> {
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    let package = match group {
        "" => format!("k8s.io.api.core.{version}"),
        "apiextensions.k8s.io" => {
            format!("k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.{version}")
        }
        "meta.k8s.io" => format!("k8s.io.apimachinery.pkg.apis.meta.{version}"),
        "internal.apiserver.k8s.io" => format!("k8s.io.api.apiserverinternal.{version}"),
        g => format!("k8s.io.api.{}.{version}", g.split('.').next().unwrap_or(g)),
    };
    s.pool
        .get_message_by_name(&format!("{package}.{kind}"))
        .or_else(|| {
            s.pool
                .get_message_by_name(&format!("{META_V1}.{kind}"))
                .filter(|_| group.ends_with("k8s.io") || !group.contains('.'))
        })
}

fn field(msg: &DynamicMessage, name: &str) -> Option<FieldDescriptor> {
    msg.descriptor()
        .get_field_by_name(name)
        .filter(|f| msg.has_field(f))
}

fn string_field(msg: &DynamicMessage, name: &str) -> String {
    field(msg, name)
        .and_then(|f| msg.get_field(&f).as_str().map(str::to_owned))
        .unwrap_or_default()
}

fn bytes_field(msg: &DynamicMessage, name: &str) -> Vec<u8> {
    field(msg, name)
        .and_then(|f| msg.get_field(&f).as_bytes().map(|b| b.to_vec()))
        .unwrap_or_default()
}

fn int_field(msg: &DynamicMessage, name: &str) -> i64 {
    field(msg, name)
        .map(|f| match msg.get_field(&f).as_ref() {
            PbValue::I32(v) => i64::from(*v),
            PbValue::I64(v) => *v,
            _ => 0,
        })
        .unwrap_or_default()
}

fn message_field(msg: &DynamicMessage, name: &str) -> Option<DynamicMessage> {
    field(msg, name).and_then(|f| msg.get_field(&f).as_message().cloned())
}

fn is_empty_message(msg: &DynamicMessage) -> bool {
    msg.fields().next().is_none()
}

/// Raw JSON bytes (`RawExtension`, `FieldsV1`, apiextensions `JSON`); `null` when unset.
fn raw_json(s: &Schema, raw: Option<Vec<u8>>, what: &str, depth: usize) -> Result<Value, ApiError> {
    let Some(raw) = raw else {
        return Ok(Value::Null);
    };
    if raw.starts_with(MAGIC) && depth < MAX_ENVELOPE_DEPTH {
        return decode_envelope(s, &raw, depth + 1);
    }
    serde_json::from_slice(&raw).map_err(|e| bad(format!("{what} does not hold JSON: {e}")))
}

/// The JSON of one message.
fn message(s: &Schema, msg: &DynamicMessage, depth: usize) -> Result<Value, ApiError> {
    let desc = msg.descriptor();
    let full = desc.full_name();
    let short = desc.name();
    let package = desc.package_name();
    let raw = |name: &str| field(msg, name).map(|_| bytes_field(msg, name));
    let schema_of = |name: &str| -> Result<Option<Value>, ApiError> {
        message_field(msg, name)
            .map(|m| message(s, &m, depth))
            .transpose()
    };
    let list = |name: &str| -> Result<Vec<Value>, ApiError> {
        match field(msg, name) {
            Some(f) => match value(s, &f, &msg.get_field(&f), depth)? {
                Value::Array(items) => Ok(items),
                _ => Ok(Vec::new()),
            },
            None => Ok(Vec::new()),
        }
    };
    if package == META_V1 {
        match short {
            "Time" => return time(msg, false),
            "MicroTime" => return time(msg, true),
            "Duration" => return Ok(Value::String(go_duration(int_field(msg, "duration")))),
            "FieldsV1" => return raw_json(s, raw("Raw"), "metadata.managedFields.fieldsV1", depth),
            "Verbs" => return Ok(Value::Array(list("items")?)),
            "GroupVersion" => {
                let (g, v) = (string_field(msg, "group"), string_field(msg, "version"));
                return Ok(Value::String(if g.is_empty() {
                    v
                } else {
                    format!("{g}/{v}")
                }));
            }
            _ => {}
        }
    }
    match full {
        "k8s.io.apimachinery.pkg.runtime.RawExtension" => {
            return raw_json(s, raw("raw"), "an embedded object (RawExtension)", depth);
        }
        "k8s.io.apimachinery.pkg.api.resource.Quantity"
        | "k8s.io.apimachinery.pkg.api.resource.QuantityValue" => {
            let q = string_field(msg, "string");
            return Ok(Value::String(if q.is_empty() { "0".into() } else { q }));
        }
        "k8s.io.apimachinery.pkg.util.intstr.IntOrString" => {
            return match int_field(msg, "type") {
                0 => Ok(json!(int_field(msg, "intVal"))),
                1 => Ok(Value::String(string_field(msg, "strVal"))),
                t => Err(bad(format!("an IntOrString has the impossible type {t}"))),
            };
        }
        _ => {}
    }
    if short == "ExtraValue" && package.starts_with("k8s.io.api.") {
        return Ok(Value::Array(list("items")?));
    }
    if package.starts_with("k8s.io.apiextensions_apiserver.") {
        match short {
            "JSON" => return raw_json(s, raw("raw"), "a JSON value", depth),
            "JSONSchemaPropsOrBool" => {
                return Ok(match schema_of("schema")? {
                    Some(v) => v,
                    None => Value::Bool(
                        msg.get_field_by_name("allows")
                            .is_some_and(|v| v.as_bool().unwrap_or(false)),
                    ),
                });
            }
            "JSONSchemaPropsOrStringArray" => {
                let property = list("property")?;
                if !property.is_empty() {
                    return Ok(Value::Array(property));
                }
                return Ok(schema_of("schema")?.unwrap_or(Value::Null));
            }
            "JSONSchemaPropsOrArray" => {
                let schemas = list("jSONSchemas")?;
                if !schemas.is_empty() {
                    return Ok(Value::Array(schemas));
                }
                return Ok(schema_of("schema")?.unwrap_or(Value::Null));
            }
            _ => {}
        }
    }
    let mut out = Map::new();
    for (f, v) in msg.fields() {
        let go = s.go.get(f.full_name());
        if go.is_some_and(|g| g.skip) {
            continue;
        }
        let scalar = !f.is_list() && !f.is_map() && !matches!(f.kind(), Kind::Message(_));
        if scalar && is_zero(v) && !go.is_some_and(|g| g.zero) {
            continue; // Go's non-pointer field, unset: omitempty leaves it out
        }
        if let PbValue::Message(m) = v
            && is_empty_message(m)
            && go.is_some_and(|g| g.omitzero)
        {
            continue;
        }
        let json = value(s, &f, v, depth)?;
        if go.is_some_and(|g| g.inline) {
            if let Value::Object(inner) = json {
                out.extend(inner);
            }
            continue;
        }
        let name = go
            .and_then(|g| g.name.clone())
            .unwrap_or_else(|| f.name().to_owned());
        out.insert(name, json);
    }
    Ok(Value::Object(out))
}

fn is_zero(v: &PbValue) -> bool {
    match v {
        PbValue::Bool(b) => !b,
        PbValue::I32(n) | PbValue::EnumNumber(n) => *n == 0,
        PbValue::I64(n) => *n == 0,
        PbValue::U32(n) => *n == 0,
        PbValue::U64(n) => *n == 0,
        PbValue::F32(n) => *n == 0.0,
        PbValue::F64(n) => *n == 0.0,
        PbValue::String(t) => t.is_empty(),
        PbValue::Bytes(b) => b.is_empty(),
        PbValue::Message(_) | PbValue::List(_) | PbValue::Map(_) => false,
    }
}

/// The JSON of one field value.
fn value(s: &Schema, f: &FieldDescriptor, v: &PbValue, depth: usize) -> Result<Value, ApiError> {
    Ok(match v {
        PbValue::Bool(b) => Value::Bool(*b),
        PbValue::I32(n) | PbValue::EnumNumber(n) => json!(n),
        PbValue::I64(n) => json!(n),
        PbValue::U32(n) => json!(n),
        PbValue::U64(n) => json!(n),
        PbValue::F32(n) => float(f64::from(*n), f)?,
        PbValue::F64(n) => float(*n, f)?,
        PbValue::String(t) => Value::String(t.clone()),
        PbValue::Bytes(b) => Value::String(base64::engine::general_purpose::STANDARD.encode(b)),
        PbValue::Message(m) => message(s, m, depth)?,
        PbValue::List(items) => Value::Array(
            items
                .iter()
                .map(|i| value(s, f, i, depth))
                .collect::<Result<_, _>>()?,
        ),
        PbValue::Map(entries) => {
            let value_field = f.kind().as_message().map(|m| m.map_entry_value_field());
            let mut out = Map::new();
            for (k, v) in entries {
                let key = match k {
                    MapKey::String(k) => k.clone(),
                    MapKey::Bool(b) => b.to_string(),
                    MapKey::I32(n) => n.to_string(),
                    MapKey::I64(n) => n.to_string(),
                    MapKey::U32(n) => n.to_string(),
                    MapKey::U64(n) => n.to_string(),
                };
                out.insert(key, value(s, value_field.as_ref().unwrap_or(f), v, depth)?);
            }
            Value::Object(out)
        }
    })
}

fn float(n: f64, f: &FieldDescriptor) -> Result<Value, ApiError> {
    serde_json::Number::from_f64(n)
        .map(Value::Number)
        .ok_or_else(|| bad(format!("{} is not a finite number", f.name())))
}

/// `meta.v1.Time` (RFC 3339, whole seconds) or `MicroTime` (6 fractional digits): `null` for
/// the zero time, which the Go encoder writes as an empty message.
fn time(msg: &DynamicMessage, micro: bool) -> Result<Value, ApiError> {
    if is_empty_message(msg) {
        return Ok(Value::Null);
    }
    let mut secs = int_field(msg, "seconds");
    let mut nanos = if micro { int_field(msg, "nanos") } else { 0 };
    secs += nanos.div_euclid(1_000_000_000);
    nanos = nanos.rem_euclid(1_000_000_000);
    let ts = jiff::Timestamp::from_second(secs)
        .map_err(|e| bad(format!("a timestamp is out of range: {e}")))?;
    let base = ts.strftime("%Y-%m-%dT%H:%M:%S").to_string();
    Ok(Value::String(if micro {
        format!("{base}.{:06}Z", nanos / 1_000)
    } else {
        format!("{base}Z")
    }))
}

/// A duration as Go's `time.Duration.String` writes it (`1h0m0s`, `1.5s`, `300ms`, `0s`).
fn go_duration(nanos: i64) -> String {
    if nanos == 0 {
        return "0s".into();
    }
    let sign = if nanos < 0 { "-" } else { "" };
    let u = nanos.unsigned_abs();
    let with_fraction = |v: u64, unit: u64, digits: usize| {
        let frac = format!("{:0digits$}", v % unit);
        let frac = frac.trim_end_matches('0');
        if frac.is_empty() {
            (v / unit).to_string()
        } else {
            format!("{}.{frac}", v / unit)
        }
    };
    if u < 1_000 {
        return format!("{sign}{u}ns");
    }
    if u < 1_000_000 {
        return format!("{sign}{}µs", with_fraction(u, 1_000, 3));
    }
    if u < 1_000_000_000 {
        return format!("{sign}{}ms", with_fraction(u, 1_000_000, 6));
    }
    let total = u / 1_000_000_000;
    let (h, m) = (total / 3600, (total / 60) % 60);
    let secs = with_fraction(u % 60_000_000_000, 1_000_000_000, 9);
    match (h, m) {
        (0, 0) => format!("{sign}{secs}s"),
        (0, m) => format!("{sign}{m}m{secs}s"),
        (h, m) => format!("{sign}{h}h{m}m{secs}s"),
    }
}
