//! Decoding a built-in object as kube-apiserver decodes it into its Go struct
//! (`sigs.k8s.io/json`, case-sensitive, with strict-mode field tracking).
//!
//! What the Go decoder does, and this walk reproduces over the v2 definitions:
//! - a JSON value of the wrong type for its field fails the whole request; Go's message names
//!   the innermost struct, the dotted field path (without list indices: Go's error context
//!   does not track them) and the Go type: `json: cannot unmarshal string into Go struct field
//!   DeploymentSpec.spec.replicas of type int32`;
//! - numbers must fit the integer type (`int32`/`int64`) and have no fraction;
//! - `resource.Quantity`, `intstr.IntOrString`, `metav1.Time`/`MicroTime`, `metav1.Duration`
//!   and `[]byte` have their own unmarshalling: a quantity is a string or a number matching
//!   the quantity syntax, an int-or-string an `int32` or a string, a time an RFC 3339 string
//!   (stored back in UTC, to the second for `Time` and the microsecond for `MicroTime`), a
//!   `[]byte` standard base64;
//! - `null` leaves a field unset (it is not stored), except as a value of a string map, where
//!   Go stores the empty string;
//! - fields the struct does not have are dropped and reported with their full path, list
//!   indices included (`spec.template.spec.containers[0].foo`), for `fieldValidation`.
//!
//! Duplicate fields are found on the raw body ([`duplicate_fields`]): `serde_json` keeps the
//! last value of a repeated key, as Go does, and no longer shows the repetition.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::OnceLock;

use base64::Engine as _;
use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use crate::handlers::validate::child;
use crate::registry::spec::{Schema, v2};

/// Decodes `value` as the Go struct of `schema`; returns the paths of the unknown fields it
/// dropped, or Go's error message.
pub(super) fn decode(schema: Schema<'static>, value: &mut Value) -> Result<Vec<String>, String> {
    let mut d = Decoder::default();
    let root = definition_name(schema.node()).map_or("", short_name);
    let root = root.rsplit('.').next().unwrap_or(root);
    d.decode_struct(schema, value, root, "", "")?;
    Ok(d.unknown)
}

/// The Go types with their own unmarshalling, and the JSON shapes of the others.
enum Go {
    Any,
    Quantity,
    IntOrString,
    Time { micro: bool },
    Duration,
    Str { bytes: bool },
    Int { bits32: bool },
    Float,
    Bool,
    Array,
    Map,
    Struct,
}

fn classify(s: Schema<'static>) -> Go {
    match definition_name(s.node()) {
        Some("io.k8s.apimachinery.pkg.api.resource.Quantity") => return Go::Quantity,
        Some("io.k8s.apimachinery.pkg.util.intstr.IntOrString") => return Go::IntOrString,
        Some("io.k8s.apimachinery.pkg.apis.meta.v1.Time") => return Go::Time { micro: false },
        Some("io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime") => return Go::Time { micro: true },
        Some("io.k8s.apimachinery.pkg.apis.meta.v1.Duration") => return Go::Duration,
        _ => {}
    }
    let has_props = s.get("properties").is_some_and(Value::is_object);
    match s.str("type") {
        Some("string") => Go::Str {
            bytes: s.str("format") == Some("byte"),
        },
        Some("integer") => Go::Int {
            bits32: s.str("format") == Some("int32"),
        },
        Some("number") => Go::Float,
        Some("boolean") => Go::Bool,
        Some("array") => Go::Array,
        Some("object") if has_props => Go::Struct,
        Some("object") if s.additional_properties().is_some() => Go::Map,
        None if has_props => Go::Struct,
        _ => Go::Any,
    }
}

/// The Go type as `reflect.Type.String()` prints it (`int32`, `[]v1.Container`,
/// `map[string]string`, `v1.PodSpec`).
fn go_type(s: Schema<'static>) -> String {
    match classify(s) {
        Go::Quantity => "resource.Quantity".into(),
        Go::IntOrString => "intstr.IntOrString".into(),
        Go::Time { micro: false } => "v1.Time".into(),
        Go::Time { micro: true } => "v1.MicroTime".into(),
        Go::Duration => "v1.Duration".into(),
        Go::Str { bytes: true } => "[]uint8".into(),
        Go::Str { bytes: false } => "string".into(),
        Go::Int { bits32: true } => "int32".into(),
        Go::Int { bits32: false } => "int64".into(),
        Go::Float => "float64".into(),
        Go::Bool => "bool".into(),
        Go::Array => format!("[]{}", s.items().map_or("interface {}".into(), go_type)),
        Go::Map => format!(
            "map[string]{}",
            s.additional_properties()
                .map_or("interface {}".into(), go_type)
        ),
        Go::Struct | Go::Any => definition_name(s.node())
            .map(short_name)
            .unwrap_or("interface {}")
            .to_owned(),
    }
}

/// `io.k8s.api.core.v1.PodSpec` -> `v1.PodSpec`.
fn short_name(def: &'static str) -> &'static str {
    let mut dots = def.rmatch_indices('.');
    dots.next();
    match dots.next() {
        Some((i, _)) => &def[i + 1..],
        None => def,
    }
}

/// The v2 definition a resolved schema node is, by identity.
fn definition_name(node: &Value) -> Option<&'static str> {
    static NAMES: OnceLock<HashMap<usize, &'static str>> = OnceLock::new();
    let names = NAMES.get_or_init(|| {
        v2()["definitions"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, v)| (v as *const Value as usize, k.as_str()))
            .collect()
    });
    names.get(&(node as *const Value as usize)).copied()
}

/// Go's name of a JSON value's kind in an `UnmarshalTypeError`.
fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::String(_) => "string",
        Value::Number(_) => "number",
        Value::Bool(_) => "bool",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
        Value::Null => "null",
    }
}

const QUANTITY_ERROR: &str =
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

/// Whether `s` parses as a `resource.Quantity` (`ParseQuantity`).
pub(super) fn parse_quantity(s: &str) -> Result<(), &'static str> {
    let s = s.trim();
    let body = s.strip_prefix(['+', '-']).unwrap_or(s);
    let digits_end = body
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(body.len());
    let (number, suffix) = body.split_at(digits_end);
    if number.is_empty()
        || number.matches('.').count() > 1
        || !number.bytes().any(|b| b.is_ascii_digit())
    {
        return Err(QUANTITY_ERROR);
    }
    const SUFFIXES: &[&str] = &[
        "", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "n", "u", "m", "k", "M", "G", "T", "P", "E",
    ];
    if SUFFIXES.contains(&suffix) {
        return Ok(());
    }
    if let Some(exp) = suffix.strip_prefix(['e', 'E']) {
        let exp = exp.strip_prefix(['+', '-']).unwrap_or(exp);
        if !exp.is_empty() && exp.bytes().all(|b| b.is_ascii_digit()) {
            return Ok(());
        }
    }
    if !suffix
        .bytes()
        .all(|b| b"eEinumkKMGTP+-0123456789".contains(&b))
    {
        return Err(QUANTITY_ERROR);
    }
    Err("unable to parse quantity's suffix")
}

/// Whether `s` is a Go duration (`time.ParseDuration`): `300ms`, `-1.5h`, `2h45m`, `0`.
pub(super) fn is_go_duration(s: &str) -> bool {
    let s = s.strip_prefix(['+', '-']).unwrap_or(s);
    if s == "0" {
        return true;
    }
    let mut rest = s;
    if rest.is_empty() {
        return false;
    }
    while !rest.is_empty() {
        let n = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let number = &rest[..n];
        if number.is_empty() || number == "." || number.matches('.').count() > 1 {
            return false;
        }
        rest = &rest[n..];
        let unit = ["ns", "us", "µs", "μs", "ms", "s", "m", "h"]
            .into_iter()
            .find(|u| rest.starts_with(u) && !(*u == "m" && rest.starts_with("ms")));
        match unit {
            Some(u) => rest = &rest[u.len()..],
            None => return false,
        }
    }
    true
}

/// Parses an RFC 3339 time as Go's `time.Parse(time.RFC3339, s)` accepts it.
pub(super) fn parse_rfc3339(s: &str) -> Option<jiff::Timestamp> {
    let b = s.as_bytes();
    if b.len() < 20 || b[10] != b'T' {
        return None;
    }
    s.parse().ok()
}

#[derive(Default)]
struct Decoder {
    unknown: Vec<String>,
}

impl Decoder {
    fn type_error(what: &str, owner: &str, go_path: &str, s: Schema<'static>) -> String {
        Self::type_error_named(what, owner, go_path, &go_type(s))
    }

    fn type_error_named(what: &str, owner: &str, go_path: &str, ty: &str) -> String {
        if owner.is_empty() || go_path.is_empty() {
            format!("json: cannot unmarshal {what} into Go value of type {ty}")
        } else {
            format!(
                "json: cannot unmarshal {what} into Go struct field {owner}.{go_path} of type {ty}"
            )
        }
    }

    /// Decodes one value; `Ok(false)` when the field is left unset (and is removed).
    fn decode_value(
        &mut self,
        s: Schema<'static>,
        v: &mut Value,
        owner: &str,
        go_path: &str,
        path: &str,
    ) -> Result<bool, String> {
        let fail = |what: &str| Err(Self::type_error(what, owner, go_path, s));
        match (classify(s), &*v) {
            (Go::Any, _) => Ok(true),
            (_, Value::Null) => Ok(false),
            (Go::Quantity, Value::String(q)) => parse_quantity(q).map(|_| true).map_err(Into::into),
            (Go::Quantity, Value::Number(_)) => Ok(true),
            (Go::Quantity, _) => Err(QUANTITY_ERROR.into()),
            (Go::IntOrString, Value::String(_)) => Ok(true),
            (Go::IntOrString, Value::Number(n)) => match n.as_i64() {
                Some(i) if i32::try_from(i).is_ok() => Ok(true),
                _ => Err(Self::type_error_named(
                    &format!("number {}", crate::handlers::validate::go_number(n)),
                    owner,
                    go_path,
                    "int32",
                )),
            },
            (Go::IntOrString, other) => Err(Self::type_error_named(
                json_kind(other),
                owner,
                go_path,
                "int32",
            )),
            (Go::Time { micro }, Value::String(t)) => {
                let Some(ts) = parse_rfc3339(t) else {
                    return Err(format!(
                        "parsing time {} as \"2006-01-02T15:04:05Z07:00\": cannot parse {} as \"2006\"",
                        crate::handlers::validate::go_quote(t),
                        crate::handlers::validate::go_quote(t)
                    ));
                };
                let format = if micro {
                    "%Y-%m-%dT%H:%M:%S%.6fZ"
                } else {
                    "%Y-%m-%dT%H:%M:%SZ"
                };
                *v = Value::String(ts.strftime(format).to_string());
                Ok(true)
            }
            (Go::Time { .. }, other) => Err(Self::type_error_named(
                json_kind(other),
                owner,
                go_path,
                "string",
            )),
            (Go::Duration, Value::String(d)) if is_go_duration(d) => Ok(true),
            (Go::Duration, Value::String(d)) => Err(format!(
                "time: invalid duration {}",
                crate::handlers::validate::go_quote(d)
            )),
            (Go::Duration, other) => Err(Self::type_error_named(
                json_kind(other),
                owner,
                go_path,
                "string",
            )),
            (Go::Str { bytes }, Value::String(text)) => {
                if bytes && let Err(e) = base64::engine::general_purpose::STANDARD.decode(text) {
                    let at = match e {
                        base64::DecodeError::InvalidByte(i, _)
                        | base64::DecodeError::InvalidLastSymbol(i, _) => i,
                        _ => text.len(),
                    };
                    return Err(format!("illegal base64 data at input byte {at}"));
                }
                Ok(true)
            }
            (Go::Int { bits32 }, Value::Number(n)) => {
                let fits = n
                    .as_i64()
                    .is_some_and(|i| !bits32 || i32::try_from(i).is_ok());
                if fits {
                    Ok(true)
                } else {
                    fail(&format!(
                        "number {}",
                        crate::handlers::validate::go_number(n)
                    ))
                }
            }
            (Go::Float, Value::Number(_)) | (Go::Bool, Value::Bool(_)) => Ok(true),
            (Go::Array, Value::Array(_)) => {
                let Some(items) = s.items() else {
                    return Ok(true);
                };
                if let Value::Array(list) = v {
                    for (i, item) in list.iter_mut().enumerate() {
                        if !item.is_null() {
                            self.decode_value(
                                items,
                                item,
                                owner,
                                go_path,
                                &format!("{path}[{i}]"),
                            )?;
                        }
                    }
                }
                Ok(true)
            }
            (Go::Map, Value::Object(_)) => {
                let Some(values) = s.additional_properties() else {
                    return Ok(true);
                };
                let string_values = matches!(classify(values), Go::Str { bytes: false });
                if let Value::Object(map) = v {
                    for (k, item) in map.iter_mut() {
                        if item.is_null() {
                            if string_values {
                                *item = Value::String(String::new());
                            }
                            continue;
                        }
                        self.decode_value(values, item, owner, go_path, &child(path, k))?;
                    }
                }
                Ok(true)
            }
            (Go::Struct, Value::Object(_)) => {
                let name = definition_name(s.node()).map_or("", short_name);
                let name = name.rsplit('.').next().unwrap_or(name);
                self.decode_struct(s, v, name, go_path, path)?;
                Ok(true)
            }
            (_, other) => fail(json_kind(other)),
        }
    }

    fn decode_struct(
        &mut self,
        s: Schema<'static>,
        v: &mut Value,
        name: &str,
        go_path: &str,
        path: &str,
    ) -> Result<(), String> {
        let Value::Object(map) = v else {
            return Ok(());
        };
        let keys: Vec<String> = map.keys().cloned().collect();
        for k in keys {
            let field_path = child(path, &k);
            let Some(prop) = s.property(&k) else {
                self.unknown.push(field_path);
                map.remove(&k);
                continue;
            };
            let keep = match map.get_mut(&k) {
                Some(item) => {
                    self.decode_value(prop, item, name, &child(go_path, &k), &field_path)?
                }
                None => true,
            };
            if !keep {
                map.remove(&k);
            }
        }
        Ok(())
    }
}

/// The paths of fields that appear more than once in one JSON object of `body`
/// (`spec.replicas`, `spec.containers[0].name`), in the order met.
pub(super) fn duplicate_fields(body: &[u8]) -> Vec<String> {
    let mut found = Vec::new();
    let mut de = serde_json::Deserializer::from_slice(body);
    let _ = Scan {
        path: String::new(),
        found: &mut found,
    }
    .deserialize(&mut de);
    found
}

struct Scan<'a> {
    path: String,
    found: &'a mut Vec<String>,
}

impl<'de> DeserializeSeed<'de> for Scan<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Scan<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut i = 0;
        while seq
            .next_element_seed(Scan {
                path: format!("{}[{i}]", self.path),
                found: self.found,
            })?
            .is_some()
        {
            i += 1;
        }
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            let path = child(&self.path, &key);
            if !seen.insert(key) {
                self.found.push(path.clone());
            }
            map.next_value_seed(Scan {
                path,
                found: self.found,
            })?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::spec::builtin_schema;
    use serde_json::json;

    fn deployment() -> Schema<'static> {
        builtin_schema("apps", "v1", "Deployment").unwrap()
    }

    #[test]
    fn wrong_types_fail_like_the_go_decoder() {
        let mut v = json!({"spec": {"replicas": "three"}});
        assert_eq!(
            decode(deployment(), &mut v).unwrap_err(),
            "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32"
        );
        let mut v = json!({"spec": {"replicas": 3.5}});
        assert_eq!(
            decode(deployment(), &mut v).unwrap_err(),
            "json: cannot unmarshal number 3.5 into Go struct field DeploymentSpec.spec.replicas of type int32"
        );
        let mut v = json!({"spec": {"replicas": 3_000_000_000_i64}});
        assert!(decode(deployment(), &mut v).is_err());
        let mut v =
            json!({"spec": {"template": {"spec": {"containers": [{"name": "a", "image": 5}]}}}});
        assert_eq!(
            decode(deployment(), &mut v).unwrap_err(),
            "json: cannot unmarshal number into Go struct field Container.spec.template.spec.containers.image of type string"
        );
        let mut v = json!({"spec": {"template": {"spec": {"containers": {}}}}});
        assert_eq!(
            decode(deployment(), &mut v).unwrap_err(),
            "json: cannot unmarshal object into Go struct field PodSpec.spec.template.spec.containers of type []v1.Container"
        );
        let mut v = json!({"metadata": {"labels": {"a": 1}}});
        assert_eq!(
            decode(deployment(), &mut v).unwrap_err(),
            "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string"
        );
    }

    #[test]
    fn unknown_fields_are_dropped_and_reported_with_indices() {
        let mut v = json!({"spec": {"foo": 1, "replicas": 2, "template": {"spec": {
            "containers": [{"name": "a", "bogus": true}]}}}, "Spec": {}});
        let unknown = decode(deployment(), &mut v).unwrap();
        assert_eq!(
            unknown,
            ["Spec", "spec.foo", "spec.template.spec.containers[0].bogus"]
        );
        assert_eq!(
            v,
            json!({"spec": {"replicas": 2, "template": {"spec": {"containers": [{"name": "a"}]}}}})
        );
    }

    #[test]
    fn special_go_types() {
        let pod = builtin_schema("", "v1", "Pod").unwrap();
        let mut v = json!({"spec": {"containers": [{"name": "a", "resources": {"limits": {"cpu": 1, "memory": "64Mi"}},
            "ports": [{"containerPort": 80}], "readinessProbe": {"httpGet": {"port": "http"}}}]},
            "metadata": {"creationTimestamp": "2024-01-01T02:00:00+02:00", "name": null}});
        decode(pod, &mut v).unwrap();
        assert_eq!(v["metadata"]["creationTimestamp"], "2024-01-01T00:00:00Z");
        assert!(v["metadata"].get("name").is_none());
        let mut bad = json!({"spec": {"containers": [{"name": "a", "resources": {"limits": {"cpu": "lots"}}}]}});
        assert_eq!(decode(pod, &mut bad).unwrap_err(), QUANTITY_ERROR);
        let mut bad = json!({"metadata": {"creationTimestamp": "yesterday"}});
        assert!(
            decode(pod, &mut bad)
                .unwrap_err()
                .starts_with("parsing time")
        );
        let secret = builtin_schema("", "v1", "Secret").unwrap();
        let mut bad = json!({"data": {"k": "not base64!"}});
        assert_eq!(
            decode(secret, &mut bad).unwrap_err(),
            "illegal base64 data at input byte 3"
        );
        let mut ok = json!({"data": {"k": "aGk="}, "stringData": {"x": null}});
        decode(secret, &mut ok).unwrap();
        assert_eq!(ok["stringData"]["x"], "");
        assert!(parse_quantity("1.5Gi").is_ok() && parse_quantity("1e3").is_ok());
        assert!(parse_quantity("5 cores").is_err() && parse_quantity("1Qi").is_err());
        assert!(is_go_duration("1h30m") && is_go_duration("0") && !is_go_duration("soon"));
    }

    #[test]
    fn duplicates_are_found_on_the_raw_body() {
        let body = br#"{"spec":{"replicas":1,"replicas":2,"x":[{"a":1,"a":2}]}}"#;
        assert_eq!(duplicate_fields(body), ["spec.replicas", "spec.x[0].a"]);
        assert!(duplicate_fields(b"not json").is_empty());
    }
}
