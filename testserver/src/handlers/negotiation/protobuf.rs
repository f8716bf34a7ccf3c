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

use crate::status::ApiError;

/// The media type of Kubernetes' protobuf encoding.
pub(crate) const MEDIA_TYPE: &str = "application/vnd.kubernetes.protobuf";

/// The four bytes every Kubernetes protobuf body starts with.
const MAGIC: &[u8] = b"k8s\0";

/// Nesting of protobuf envelopes inside `RawExtension`s followed before giving up.
const MAX_ENVELOPE_DEPTH: usize = 4;

const DESCRIPTORS: &[u8] = include_bytes!("../../../proto/k8s-1.35.fds.gz");
const GO_JSON: &[u8] = include_bytes!("../../../proto/go-json.txt.gz");

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

#[cfg(test)]
mod tests {
    use prost::Message as _;
    use prost_reflect::Kind;

    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    /// Bodies kubectl v1.32 sent with `Content-Type: application/vnd.kubernetes.protobuf`,
    /// captured from the wire.
    const KUBECTL_DEPLOYMENT: &str = "6b3873000a150a07617070732f7631120a4465706c6f796d656e7412a8010a1b0a016412001a0022002a003200380042005a080a03617070120164127b0802120a0a080a036170701201641a630a1a0a0012001a0022002a003200380042005a080a03617070120164124512270a056e67696e78120a6e67696e783a312e32372a0042006a007200800100880100900100a201001a00320042004a0052005800600068008201008a01009a0100c2010022020a00280038001a0c0800100018002000280038001a002200";
    const KUBECTL_DEPLOYMENT_ZERO: &str = "6b3873000a150a07617070732f7631120a4465706c6f796d656e7412b5010a210a047a65726f12001a0022002a003200380042005a0b0a0361707012047a65726f1281010800120d0a0b0a0361707012047a65726f1a660a1d0a0012001a0022002a003200380042005a0b0a0361707012047a65726f124512270a056e67696e78120a6e67696e783a312e32372a0042006a007200800100880100900100a201001a00320042004a0052005800600068008201008a01009a0100c2010022020a00280038001a0c0800100018002000280038001a002200";
    const KUBECTL_SECRET_BINARY: &str = "6b3873000a0c0a027631120653656372657412250a110a016212001a0022002a00320038004200120e0a0362696e12070001feff6b38731a001a002200";
    const KUBECTL_SERVICE: &str = "6b3873000a0d0a02763112075365727669636512690a1f0a0373766312001a0022002a003200380042005a0a0a03617070120373766312420a1b0a0738302d38303830120354435018502207080010903f1a002800120a0a0361707012037376631a002209436c757374657249503a00420052005a00600068001a020a001a002200";
    const KUBECTL_JOB: &str = "6b3873000a0f0a0862617463682f763112034a6f6212780a110a016a12001a0022002a00320038004200125932570a100a0012001a0022002a00320038004200124312200a016a120762757379626f782a0042006a007200800100880100900100a201001a054e65766572320042004a0052005800600068008201008a01009a0100c201001a082000280030003a001a002200";

    /// A message from its proto-shaped JSON (proto field names, nested special types as their
    /// messages), as a client-go typed client would encode it.
    fn build(desc: &MessageDescriptor, v: &Value) -> DynamicMessage {
        let mut m = DynamicMessage::new(desc.clone());
        for (k, v) in v.as_object().unwrap() {
            let f = desc
                .get_field_by_name(k)
                .unwrap_or_else(|| panic!("no field {k} in {}", desc.full_name()));
            let value = if f.is_map() {
                let vf = f.kind().as_message().unwrap().map_entry_value_field();
                PbValue::Map(
                    v.as_object()
                        .unwrap()
                        .iter()
                        .map(|(k, v)| (MapKey::String(k.clone()), single(&vf, v)))
                        .collect(),
                )
            } else if f.is_list() {
                PbValue::List(
                    v.as_array()
                        .unwrap()
                        .iter()
                        .map(|i| single(&f, i))
                        .collect(),
                )
            } else {
                single(&f, v)
            };
            m.set_field(&f, value);
        }
        m
    }

    fn single(f: &FieldDescriptor, v: &Value) -> PbValue {
        match f.kind() {
            Kind::String => PbValue::String(v.as_str().unwrap().to_owned()),
            Kind::Bytes => PbValue::Bytes(
                base64::engine::general_purpose::STANDARD
                    .decode(v.as_str().unwrap())
                    .unwrap()
                    .into(),
            ),
            Kind::Int32 => PbValue::I32(v.as_i64().unwrap() as i32),
            Kind::Int64 => PbValue::I64(v.as_i64().unwrap()),
            Kind::Bool => PbValue::Bool(v.as_bool().unwrap()),
            Kind::Double => PbValue::F64(v.as_f64().unwrap()),
            Kind::Message(d) => PbValue::Message(build(&d, v)),
            k => panic!("kind {k:?}"),
        }
    }

    /// `k8s\0` + `runtime.Unknown{typeMeta, raw}` around the message built from `proto`.
    fn envelope(api_version: &str, kind: &str, proto: &Value) -> Vec<u8> {
        let s = schema().unwrap();
        let desc = message_for(s, api_version, kind).unwrap();
        let raw = build(&desc, proto).encode_to_vec();
        let unknown = s.pool.get_message_by_name(UNKNOWN).unwrap();
        let mut env = build(
            &unknown,
            &json!({"typeMeta": {"apiVersion": api_version, "kind": kind}}),
        );
        env.set_field_by_name("raw", PbValue::Bytes(raw.into()));
        let mut body = MAGIC.to_vec();
        body.extend(env.encode_to_vec());
        body
    }

    /// kubectl's JSON form of the same object, less the `creationTimestamp: null` a v1.32
    /// kubectl writes (v1.35's `omitzero` leaves it out).
    fn without_null_creation(mut v: Value) -> Value {
        fn strip(v: &mut Value) {
            match v {
                Value::Object(m) => {
                    if m.get("creationTimestamp") == Some(&Value::Null) {
                        m.remove("creationTimestamp");
                    }
                    m.values_mut().for_each(strip);
                }
                Value::Array(a) => a.iter_mut().for_each(strip),
                _ => {}
            }
        }
        strip(&mut v);
        v
    }

    /// kube-apiserver decodes kubectl's protobuf Deployment into the object kubectl would
    /// have sent as JSON (`kubectl create deployment d --image=nginx:1.27 --replicas=2
    /// --dry-run=client -o json`): Go's non-pointer zeros on the wire are not fields.
    #[test]
    fn kubectl_deployment_with_a_pod_template_is_its_json() {
        let got = decode(&hex(KUBECTL_DEPLOYMENT)).unwrap();
        let want = without_null_creation(json!({
            "kind": "Deployment", "apiVersion": "apps/v1",
            "metadata": {"name": "d", "creationTimestamp": null, "labels": {"app": "d"}},
            "spec": {
                "replicas": 2,
                "selector": {"matchLabels": {"app": "d"}},
                "template": {
                    "metadata": {"creationTimestamp": null, "labels": {"app": "d"}},
                    "spec": {"containers": [
                        {"name": "nginx", "image": "nginx:1.27", "resources": {}}
                    ]}
                },
                "strategy": {}
            },
            "status": {}
        }));
        assert_eq!(got, want);
        assert_eq!(
            got["spec"]["template"]["spec"]["containers"][0]["image"],
            "nginx:1.27"
        );
    }

    /// A pointer field set to zero is a value (`replicas: 0` is not "unset", which the
    /// Deployment defaulting would turn into 1).
    #[test]
    fn a_pointer_zero_is_kept() {
        let got = decode(&hex(KUBECTL_DEPLOYMENT_ZERO)).unwrap();
        assert_eq!(got["spec"]["replicas"], json!(0));
        assert!(got["spec"].get("minReadySeconds").is_none(), "{got}");
        assert!(got["spec"].get("paused").is_none(), "{got}");
    }

    /// Secret `data` is `map<string, bytes>`: binary values are written in base64, as the JSON
    /// form of `[]byte` is.
    #[test]
    fn kubectl_secret_with_binary_data_is_base64() {
        let got = decode(&hex(KUBECTL_SECRET_BINARY)).unwrap();
        assert_eq!(
            got,
            json!({"kind": "Secret", "apiVersion": "v1", "metadata": {"name": "b"},
                   "data": {"bin": "AAH+/2s4cw=="}})
        );
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(got["data"]["bin"].as_str().unwrap())
            .unwrap();
        assert_eq!(bytes, b"\x00\x01\xfe\xffk8s");
    }

    /// kubectl's Service: an int `targetPort` (IntOrString type 0) is a JSON number, the
    /// non-pointer `status.loadBalancer` an empty object, as Go writes them.
    #[test]
    fn kubectl_service_int_target_port_is_a_number() {
        let got = decode(&hex(KUBECTL_SERVICE)).unwrap();
        assert_eq!(
            got,
            json!({
                "kind": "Service", "apiVersion": "v1",
                "metadata": {"name": "svc", "labels": {"app": "svc"}},
                "spec": {
                    "ports": [{"name": "80-8080", "protocol": "TCP", "port": 80, "targetPort": 8080}],
                    "selector": {"app": "svc"},
                    "type": "ClusterIP"
                },
                "status": {"loadBalancer": {}}
            })
        );
    }

    /// A named `targetPort` (IntOrString type 1) is a JSON string.
    #[test]
    fn a_string_target_port_is_a_string() {
        let body = envelope(
            "v1",
            "Service",
            &json!({
                "metadata": {"name": "web", "namespace": "default"},
                "spec": {"ports": [
                    {"port": 80, "targetPort": {"type": 1, "strVal": "http"}},
                    {"port": 443, "targetPort": {"type": 0, "intVal": 8443}}
                ]}
            }),
        );
        let got = decode(&body).unwrap();
        assert_eq!(got["spec"]["ports"][0]["targetPort"], json!("http"));
        assert_eq!(got["spec"]["ports"][1]["targetPort"], json!(8443));
        assert_eq!(got["metadata"]["namespace"], "default");
    }

    /// kubectl's Job decodes to the JSON kubectl writes for it (`kubectl create job j
    /// --image=busybox --dry-run=client -o json`), pod template included.
    #[test]
    fn kubectl_job_is_its_json() {
        let got = decode(&hex(KUBECTL_JOB)).unwrap();
        assert_eq!(
            got,
            json!({
                "kind": "Job", "apiVersion": "batch/v1",
                "metadata": {"name": "j"},
                "spec": {"template": {
                    "metadata": {},
                    "spec": {
                        "containers": [{"name": "j", "image": "busybox", "resources": {}}],
                        "restartPolicy": "Never"
                    }
                }},
                "status": {}
            })
        );
    }

    /// A Pod with resource quantities (their strings), timestamps (`meta.v1.Time` as RFC 3339
    /// seconds, nanoseconds dropped as Go's `Time.Unmarshal` drops them), an int64 as a number,
    /// an inline `VolumeSource`, a pointer `false` and a `MicroTime`-free status.
    #[test]
    fn pod_quantities_timestamps_and_inline_structs() {
        let body = envelope(
            "v1",
            "Pod",
            &json!({
                "metadata": {
                    "name": "p", "generateName": "", "resourceVersion": "",
                    "creationTimestamp": {"seconds": 1_700_000_000i64, "nanos": 5},
                    "deletionTimestamp": {"seconds": 0i64},
                    "deletionGracePeriodSeconds": 0i64,
                    "managedFields": [{
                        "manager": "kubectl", "operation": "Update",
                        "fieldsType": "FieldsV1",
                        "fieldsV1": {"Raw": base64::engine::general_purpose::STANDARD.encode(b"{\"f:spec\":{}}")},
                        "time": {"seconds": 1_700_000_001i64}
                    }]
                },
                "spec": {
                    "containers": [{
                        "name": "c", "image": "busybox",
                        "resources": {
                            "limits": {"cpu": {"string": "500m"}, "memory": {"string": "128Mi"}},
                            "requests": {"cpu": {"string": "250m"}}
                        },
                        "securityContext": {"allowPrivilegeEscalation": false, "runAsUser": 0i64}
                    }],
                    "volumes": [{"name": "data", "volumeSource": {"emptyDir": {"sizeLimit": {"string": "1Gi"}}}}],
                    "automountServiceAccountToken": false,
                    "activeDeadlineSeconds": 3_000_000_000i64,
                    "hostNetwork": false
                },
                "status": {"startTime": {"seconds": 1_700_000_002i64}, "conditions": [
                    {"type": "Ready", "status": "True", "lastTransitionTime": {}}
                ]}
            }),
        );
        let got = decode(&body).unwrap();
        let meta = &got["metadata"];
        assert_eq!(meta["creationTimestamp"], "2023-11-14T22:13:20Z");
        assert_eq!(meta["deletionTimestamp"], "1970-01-01T00:00:00Z");
        assert_eq!(meta["deletionGracePeriodSeconds"], 0);
        assert!(meta.get("generateName").is_none() && meta.get("resourceVersion").is_none());
        assert_eq!(meta["managedFields"][0]["fieldsV1"], json!({"f:spec": {}}));
        assert_eq!(meta["managedFields"][0]["time"], "2023-11-14T22:13:21Z");
        let c = &got["spec"]["containers"][0];
        assert_eq!(
            c["resources"]["limits"],
            json!({"cpu": "500m", "memory": "128Mi"})
        );
        assert_eq!(c["resources"]["requests"], json!({"cpu": "250m"}));
        assert_eq!(
            c["securityContext"],
            json!({"allowPrivilegeEscalation": false, "runAsUser": 0})
        );
        assert_eq!(
            got["spec"]["volumes"][0],
            json!({"name": "data", "emptyDir": {"sizeLimit": "1Gi"}})
        );
        assert_eq!(got["spec"]["automountServiceAccountToken"], false);
        assert_eq!(got["spec"]["activeDeadlineSeconds"], 3_000_000_000i64);
        assert!(got["spec"].get("hostNetwork").is_none());
        assert_eq!(got["status"]["startTime"], "2023-11-14T22:13:22Z");
        assert_eq!(
            got["status"]["conditions"][0]["lastTransitionTime"],
            Value::Null
        );
    }

    /// Events carry `MicroTime` (six fractional digits) and Leases both `MicroTime` and
    /// pointers; `Duration` is Go's duration string.
    #[test]
    fn micro_time_and_duration() {
        let body = envelope(
            "events.k8s.io/v1",
            "Event",
            &json!({
                "metadata": {"name": "e"},
                "eventTime": {"seconds": 1_700_000_000i64, "nanos": 123_456_789},
                "series": {"count": 2, "lastObservedTime": {"seconds": 1_700_000_000i64}}
            }),
        );
        let got = decode(&body).unwrap();
        assert_eq!(got["eventTime"], "2023-11-14T22:13:20.123456Z");
        assert_eq!(
            got["series"]["lastObservedTime"],
            "2023-11-14T22:13:20.000000Z"
        );
        for (nanos, want) in [
            (0, "0s"),
            (1, "1ns"),
            (1_500, "1.5µs"),
            (300_000_000, "300ms"),
            (1_500_000_000, "1.5s"),
            (90_000_000_000, "1m30s"),
            (3_600_000_000_000, "1h0m0s"),
            (3_600_500_000_000, "1h0m0.5s"),
            (-2_000_000_000, "-2s"),
        ] {
            assert_eq!(go_duration(nanos), want, "{nanos}");
        }
    }

    /// Go JSON names that differ from the proto names, and apiextensions' custom JSON forms.
    #[test]
    fn go_json_names_and_schema_unions() {
        let body = envelope(
            "apiextensions.k8s.io/v1",
            "CustomResourceDefinition",
            &json!({
                "metadata": {"name": "widgets.example.com"},
                "spec": {"group": "example.com", "scope": "Namespaced",
                    "names": {"plural": "widgets", "kind": "Widget"},
                    "versions": [{"name": "v1", "served": true, "storage": true, "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "xKubernetesPreserveUnknownFields": true,
                            "properties": {
                                "spec": {"type": "object", "additionalProperties": {"allows": true}},
                                "list": {"type": "array", "items": {"schema": {"type": "string"}}},
                                "d": {"default": {"raw": base64::engine::general_purpose::STANDARD.encode(b"{\"a\":1}")}}
                            }
                        }
                    }}]
                }
            }),
        );
        let got = decode(&body).unwrap();
        let schema = &got["spec"]["versions"][0]["schema"]["openAPIV3Schema"];
        assert_eq!(schema["x-kubernetes-preserve-unknown-fields"], true);
        assert_eq!(schema["properties"]["spec"]["additionalProperties"], true);
        assert_eq!(
            schema["properties"]["list"]["items"],
            json!({"type": "string"})
        );
        assert_eq!(schema["properties"]["d"]["default"], json!({"a": 1}));
        assert_eq!(got["spec"]["versions"][0]["served"], true);
    }

    /// `DeleteOptions` travels under the group version of the resource (meta/v1 kind).
    #[test]
    fn delete_options_under_any_group() {
        let body = envelope(
            "apps/v1",
            "DeleteOptions",
            &json!({"propagationPolicy": "Foreground", "gracePeriodSeconds": 0i64}),
        );
        let got = decode(&body).unwrap();
        assert_eq!(got["propagationPolicy"], "Foreground");
        assert_eq!(got["gracePeriodSeconds"], 0);
    }

    /// kube-apiserver's decoder: no prefix, no kind, an unknown kind, truncated bytes — each a
    /// Status error, never a panic.
    #[test]
    fn malformed_bodies_are_errors() {
        let e = decode(b"{\"kind\":\"Pod\"}").unwrap_err();
        assert_eq!((e.code, e.reason), (400, "BadRequest"));
        assert!(e.message.contains("k8s"), "{}", e.message);

        let s = schema().unwrap();
        let unknown = s.pool.get_message_by_name(UNKNOWN).unwrap();
        let mut no_kind = MAGIC.to_vec();
        no_kind.extend(build(&unknown, &json!({"typeMeta": {"apiVersion": "v1"}})).encode_to_vec());
        let e = decode(&no_kind).unwrap_err();
        assert_eq!(e.code, 400);
        assert!(e.message.contains("Kind"), "{}", e.message);

        let mut custom = MAGIC.to_vec();
        custom.extend(
            build(
                &unknown,
                &json!({"typeMeta": {"apiVersion": "example.com/v1", "kind": "Widget"}}),
            )
            .encode_to_vec(),
        );
        let e = decode(&custom).unwrap_err();
        assert_eq!((e.code, e.reason), (415, "UnsupportedMediaType"));

        let full = hex(KUBECTL_DEPLOYMENT);
        for cut in [5, 10, 20, 40, full.len() - 3] {
            let e = decode(&full[..cut]).unwrap_err();
            assert_eq!(e.code, 400, "cut at {cut}: {}", e.message);
        }
        let mut garbage = full.clone();
        garbage.extend([0xff; 7]);
        assert!(decode(&garbage).is_err());
        assert!(decode(b"").is_err());
    }

    /// Every message of the descriptors decodes from an empty `raw` (an object with nothing
    /// set) into a JSON object or one of the special values, never a panic.
    #[test]
    fn every_kind_decodes_from_an_empty_message() {
        let s = schema().unwrap();
        let mut kinds = 0;
        for m in s.pool.all_messages() {
            let has_metadata = m.get_field_by_name("metadata").is_some();
            let package = m.package_name();
            let api_version = match package.strip_prefix("k8s.io.api.") {
                Some(p) => {
                    let (group, version) = p.rsplit_once('.').unwrap();
                    match group {
                        "core" => version.to_owned(),
                        "apiserverinternal" => format!("internal.apiserver.k8s.io/{version}"),
                        "apps" | "batch" | "autoscaling" | "policy" | "extensions" => {
                            format!("{group}/{version}")
                        }
                        g => format!("{g}.k8s.io/{version}"),
                    }
                }
                None => continue,
            };
            if !has_metadata || message_for(s, &api_version, m.name()).is_none() {
                continue;
            }
            let unknown = s.pool.get_message_by_name(UNKNOWN).unwrap();
            let env = build(
                &unknown,
                &json!({"typeMeta": {"apiVersion": api_version, "kind": m.name()}}),
            );
            let mut body = MAGIC.to_vec();
            body.extend(env.encode_to_vec());
            let got = decode(&body).unwrap_or_else(|e| panic!("{}: {}", m.full_name(), e.message));
            assert_eq!(got["kind"], m.name());
            kinds += 1;
        }
        assert!(kinds > 300, "{kinds} kinds");
    }

    /// Corrupted bodies (every byte of kubectl's Deployment changed in turn) answer an error or
    /// some object, never a panic.
    #[test]
    fn corrupted_bodies_never_panic() {
        for body in [KUBECTL_DEPLOYMENT, KUBECTL_SERVICE, KUBECTL_SECRET_BINARY] {
            let body = hex(body);
            for i in 0..body.len() {
                for b in [0x00, 0x01, 0x7f, 0x80, 0xff] {
                    let mut bad = body.clone();
                    bad[i] = b;
                    let _ = decode(&bad);
                }
            }
        }
    }

    /// Media types compare case-insensitively and without their parameters, as
    /// apimachinery's negotiation does.
    #[test]
    fn content_type_matching() {
        assert!(is_protobuf("application/vnd.kubernetes.protobuf"));
        assert!(is_protobuf(
            "application/vnd.kubernetes.protobuf; charset=utf-8"
        ));
        assert!(is_protobuf("Application/Vnd.Kubernetes.Protobuf"));
        assert!(!is_protobuf(""));
        assert!(!is_protobuf("application/vnd.kubernetes.protobuffer"));
        assert!(!is_protobuf("application/json"));
    }
}
