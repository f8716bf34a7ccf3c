//! Schema keyword validation, worded as kube-openapi's validator (`pkg/validation/validate`)
//! and `kubeOpenAPIResultToFieldErrors` word it, plus the list-type (`listtype`) and embedded
//! resource (`objectmeta`) checks of apiextensions-apiserver.
//!
//! The validators run in kube-openapi's order for each value: type (with `nullable`,
//! `format`, `x-kubernetes-int-or-string`), `allOf`/`anyOf`/`oneOf`/`not`, string
//! (`maxLength`, `minLength`, `pattern`), format, number (`multipleOf`, `maximum`,
//! `minimum`, exclusive bounds), array (`items`, `minItems`, `maxItems`, `uniqueItems`),
//! `enum`, object (`minProperties`/`maxProperties`, which stop the object's other checks,
//! properties, `additionalProperties`, `required`). A value of the wrong type gets only its
//! type error. Field paths are kube-openapi's: `spec.items[0].name`, `spec.labels.key`.
//! `pattern` is matched with the `regex` crate, whose syntax is RE2's like Go's `regexp`.
//!
//! In [`Mode::Builtin`] only `required` and `enum` are checked (types were checked while
//! decoding, and the v2 document carries no other keyword for built-ins); an empty string is
//! not checked against an `enum`, since Go defaulting replaces it before validation.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use base64::Engine as _;
use serde_json::Value;

use crate::handlers::validate::{Cause, child};
use crate::registry::spec::Schema;

/// Which keywords apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Built-in kinds: `required` and `enum`.
    Builtin,
    /// Custom resources: every keyword of a structural schema.
    Custom,
}

/// Validates `value` (the whole object) against `schema`; `old` is the stored object on
/// update, for ratcheting.
pub(super) fn validate(
    schema: Schema<'_>,
    value: &Value,
    old: Option<&Value>,
    mode: Mode,
) -> Vec<Cause> {
    let mut v = Validator {
        mode,
        causes: Vec::new(),
    };
    v.node(schema, value, old, "");
    v.causes
}

struct Validator {
    mode: Mode,
    causes: Vec<Cause>,
}

fn flag(s: Schema<'_>, key: &str) -> bool {
    s.get(key) == Some(&Value::Bool(true))
}

fn int(s: Schema<'_>, key: &str) -> Option<i64> {
    s.get(key).and_then(Value::as_i64)
}

/// kube-openapi's name of the data's type and format.
fn data_type(x: &Value) -> (&'static str, &'static str) {
    match x {
        Value::Bool(_) => ("boolean", ""),
        Value::String(_) => ("string", ""),
        Value::Number(n) if n.is_i64() || n.is_u64() => ("integer", "int64"),
        Value::Number(_) => ("number", "double"),
        Value::Array(_) => ("array", ""),
        Value::Object(_) => ("object", ""),
        Value::Null => ("null", ""),
    }
}

/// `<path> in body <text>`, kube-openapi's message prefix.
fn in_body(path: &str, text: &str) -> String {
    format!("{path} in body {text}")
}

impl Validator {
    fn push(&mut self, c: Cause) {
        self.causes.push(c);
    }

    fn node(&mut self, s: Schema<'_>, x: &Value, old: Option<&Value>, path: &str) {
        let custom = self.mode == Mode::Custom;
        // Ratcheting: an unchanged value keeps whatever errors it already had.
        if custom && old == Some(x) {
            return;
        }
        if custom && !path.is_empty() && flag(s, "x-kubernetes-embedded-resource") {
            self.embedded(x, path);
        }
        if custom && !self.type_ok(s, x, path) {
            return;
        }
        if custom {
            self.combinators(s, x, path);
            self.causes
                .extend(crate::handlers::validate::cel::check(s, x, old, path));
        }
        match x {
            Value::String(text) if custom => {
                self.string(s, text, x, path);
                self.format(s, text, x, path);
            }
            Value::Number(n) if custom => self.number(s, n, x, path),
            Value::Array(items) => self.array(s, items, old, path),
            _ => {}
        }
        self.enumeration(s, x, path);
        if let Value::Object(map) = x {
            self.object(s, map, old, path);
        }
    }

    /// `validateEmbeddedResource`: `apiVersion` and `kind` are required strings.
    fn embedded(&mut self, x: &Value, path: &str) {
        let Value::Object(map) = x else { return };
        for key in ["apiVersion", "kind"] {
            let p = child(path, key);
            match map.get(key) {
                None => self.push(Cause::required(&p)),
                Some(Value::String(s)) if s.is_empty() => self.push(Cause::required(&p)),
                Some(Value::String(_)) => {}
                Some(other) => self.push(Cause::invalid(&p, other, "must be a string")),
            }
        }
    }

    /// The type validator; false when the value has the wrong type.
    fn type_ok(&mut self, s: Schema<'_>, x: &Value, path: &str) -> bool {
        let types: Vec<&str> = if flag(s, "x-kubernetes-int-or-string") {
            vec!["integer", "string"]
        } else {
            s.str("type").into_iter().collect()
        };
        let format = s.str("format").unwrap_or_default();
        if types.is_empty() && format.is_empty() {
            return true;
        }
        let joined = types.join(",");
        let fail = |this: &mut Self, expected: &str, got: &str| {
            let text = in_body(
                path,
                &format!(
                    "must be of type {expected}: {}",
                    crate::handlers::validate::go_quote(got)
                ),
            );
            this.push(Cause::type_invalid(path, &Value::String(got.into()), &text));
            false
        };
        if x.is_null() {
            if !types.is_empty() && !flag(s, "nullable") {
                return fail(self, &joined, "null");
            }
            return true;
        }
        let (sch_type, data_format) = data_type(x);
        let contains = |t: &str| types.contains(&t);
        let is_float_int = sch_type == "number"
            && x.as_f64().is_some_and(|f| f.fract() == 0.0)
            && contains("integer");
        let is_int_float = sch_type == "integer" && contains("number");
        let is_lower_int = format == "int64" && data_format == "int32";
        let stringish = x.is_string() || x.is_array();
        let type_or_format_matches = contains(sch_type)
            || data_format == format
            || is_float_int
            || is_int_float
            || is_lower_int;
        if !(stringish || format.is_empty() || type_or_format_matches) {
            return fail(self, format, data_format);
        }
        let numeric = contains("number") || contains("integer");
        if stringish && !numeric && !format.is_empty() {
            return true;
        }
        let type_matches = types.is_empty() || contains(sch_type) || is_float_int || is_int_float;
        if !type_matches {
            return fail(self, &joined, sch_type);
        }
        true
    }

    /// Whether `x` passes `s` alone (for `anyOf`, `oneOf`, `not`).
    fn passes(&self, s: Schema<'_>, x: &Value, path: &str) -> bool {
        let mut sub = Validator {
            mode: self.mode,
            causes: Vec::new(),
        };
        sub.node(s, x, None, path);
        sub.causes.is_empty()
    }

    fn combinators(&mut self, s: Schema<'_>, x: &Value, path: &str) {
        let list = |key: &str| -> Vec<Schema<'_>> {
            s.get(key)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(Schema::standalone)
                .collect()
        };
        // Composite errors carry no field name: the real server reports them at `<nil>`.
        let composite = |this: &mut Self, text: String| {
            this.push(Cause::invalid(
                "<nil>",
                &Value::String(String::new()),
                &text,
            ));
        };
        for sub in list("allOf") {
            self.node(sub, x, None, path);
        }
        let any = list("anyOf");
        if !any.is_empty() && !any.iter().any(|sub| self.passes(*sub, x, path)) {
            composite(
                self,
                format!(
                    "{} must validate at least one schema (anyOf)",
                    crate::handlers::validate::go_quote(path)
                ),
            );
        }
        let one = list("oneOf");
        if !one.is_empty() {
            let valid = one.iter().filter(|sub| self.passes(**sub, x, path)).count();
            if valid != 1 {
                let found = if valid == 0 {
                    "Found none valid".to_owned()
                } else {
                    format!("Found {valid} valid alternatives")
                };
                composite(
                    self,
                    format!(
                        "{} must validate one and only one schema (oneOf). {found}",
                        crate::handlers::validate::go_quote(path)
                    ),
                );
            }
        }
        if let Some(not) = s.get("not").filter(|n| n.is_object())
            && self.passes(Schema::standalone(not), x, path)
        {
            composite(
                self,
                format!(
                    "{} must not validate the schema (not)",
                    crate::handlers::validate::go_quote(path)
                ),
            );
        }
    }

    fn string(&mut self, s: Schema<'_>, text: &str, x: &Value, path: &str) {
        let chars = text.chars().count() as i64;
        if let Some(max) = int(s, "maxLength")
            && chars > max
        {
            self.push(Cause::too_long(path, max));
        }
        if let Some(min) = int(s, "minLength")
            && chars < min
        {
            let t = in_body(path, &format!("should be at least {min} chars long"));
            self.push(Cause::invalid(path, x, &t));
        }
        if let Some(pattern) = s.str("pattern")
            && let Some(re) = compiled(pattern)
            && !re.is_match(text)
        {
            let t = in_body(path, &format!("should match '{pattern}'"));
            self.push(Cause::invalid(path, x, &t));
        }
    }

    fn format(&mut self, s: Schema<'_>, text: &str, x: &Value, path: &str) {
        let Some(format) = s.str("format") else {
            return;
        };
        if !format_ok(format, text) {
            let t = in_body(
                path,
                &format!(
                    "must be of type {format}: {}",
                    crate::handlers::validate::go_quote(text)
                ),
            );
            self.push(Cause::type_invalid(path, x, &t));
        }
    }

    fn number(&mut self, s: Schema<'_>, n: &serde_json::Number, x: &Value, path: &str) {
        let Some(f) = n.as_f64() else { return };
        let bound = |key: &str| s.get(key).and_then(Value::as_number);
        if let Some(m) = bound("multipleOf")
            && let Some(mf) = m.as_f64()
            && mf > 0.0
            && (f / mf).fract().abs() > 1e-9
        {
            let t = in_body(
                path,
                &format!(
                    "should be a multiple of {}",
                    crate::handlers::validate::go_number(m)
                ),
            );
            self.push(Cause::invalid(path, x, &t));
        }
        if let Some(max) = bound("maximum")
            && let Some(mf) = max.as_f64()
        {
            let exclusive = flag(s, "exclusiveMaximum");
            if f > mf || (exclusive && f == mf) {
                let op = if exclusive {
                    "less than"
                } else {
                    "less than or equal to"
                };
                let t = in_body(
                    path,
                    &format!(
                        "should be {op} {}",
                        crate::handlers::validate::go_number(max)
                    ),
                );
                self.push(Cause::invalid(path, x, &t));
            }
        }
        if let Some(min) = bound("minimum")
            && let Some(mf) = min.as_f64()
        {
            let exclusive = flag(s, "exclusiveMinimum");
            if f < mf || (exclusive && f == mf) {
                let op = if exclusive {
                    "greater than"
                } else {
                    "greater than or equal to"
                };
                let t = in_body(
                    path,
                    &format!(
                        "should be {op} {}",
                        crate::handlers::validate::go_number(min)
                    ),
                );
                self.push(Cause::invalid(path, x, &t));
            }
        }
    }

    fn array(&mut self, s: Schema<'_>, items: &[Value], old: Option<&Value>, path: &str) {
        let custom = self.mode == Mode::Custom;
        let keys = if s.str("x-kubernetes-list-type") == Some("map") {
            s.list_map_keys()
        } else {
            Vec::new()
        };
        let old_items = old.and_then(Value::as_array);
        if let Some(it) = s.items() {
            for (i, item) in items.iter().enumerate() {
                // Ratcheting correlates the items of map lists by their keys.
                let old_item = old_items.filter(|_| !keys.is_empty()).and_then(|olds| {
                    olds.iter().find(|o| {
                        keys.iter()
                            .all(|k| o.get(k).is_some() && o.get(k) == item.get(k))
                    })
                });
                self.node(it, item, old_item, &format!("{path}[{i}]"));
            }
        }
        if !custom {
            return;
        }
        let size = items.len() as i64;
        if let Some(min) = int(s, "minItems")
            && size < min
        {
            let t = in_body(path, &format!("should have at least {min} items"));
            self.push(Cause::invalid(path, &Value::from(size), &t));
        }
        if let Some(max) = int(s, "maxItems")
            && size > max
        {
            self.push(Cause::too_many(path, items.len(), max));
        }
        if flag(s, "uniqueItems") && has_duplicates(items.iter()) {
            let t = in_body(path, "shouldn't contain duplicates");
            self.push(Cause::invalid(path, &Value::String(String::new()), &t));
        }
        match s.str("x-kubernetes-list-type") {
            Some("set") => {
                for i in repeated(items.iter()) {
                    self.push(Cause::duplicate(&format!("{path}[{i}]"), &items[i]));
                }
            }
            Some("map") => self.list_map(&keys, items, path),
            _ => {}
        }
    }

    /// `validateListMap`: items are objects, unique by their keys.
    fn list_map(&mut self, keys: &[&str], items: &[Value], path: &str) {
        if let Some((i, x)) = items
            .iter()
            .enumerate()
            .find(|(_, x)| !x.is_object() && !x.is_null())
        {
            self.push(Cause::invalid(
                &format!("{path}[{i}]"),
                x,
                "must be an object for an array of list-type map",
            ));
            return;
        }
        let key_values: Vec<Value> = items
            .iter()
            .map(|x| {
                let mut k = serde_json::Map::new();
                for key in keys {
                    if let Some(v) = x.get(*key) {
                        k.insert((*key).to_owned(), v.clone());
                    }
                }
                Value::Object(k)
            })
            .collect();
        for i in repeated(key_values.iter()) {
            self.push(Cause::duplicate(&format!("{path}[{i}]"), &key_values[i]));
        }
    }

    fn enumeration(&mut self, s: Schema<'_>, x: &Value, path: &str) {
        let Some(allowed) = s.get("enum").and_then(Value::as_array) else {
            return;
        };
        if self.mode == Mode::Builtin && x.as_str() == Some("") {
            return;
        }
        if allowed.contains(x) {
            return;
        }
        let names: Vec<String> = allowed
            .iter()
            .map(|a| match a {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            })
            .collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        self.push(Cause::not_supported(path, x, &names));
    }

    fn object(
        &mut self,
        s: Schema<'_>,
        map: &serde_json::Map<String, Value>,
        old: Option<&Value>,
        path: &str,
    ) {
        let custom = self.mode == Mode::Custom;
        let n = map.len() as i64;
        if custom
            && let Some(min) = int(s, "minProperties")
            && n < min
        {
            let t = in_body(path, &format!("should have at least {min} properties"));
            self.push(Cause::invalid(path, &Value::from(n), &t));
            return;
        }
        if custom
            && let Some(max) = int(s, "maxProperties")
            && n > max
        {
            self.push(Cause::too_many(path, map.len(), max));
            return;
        }
        let extra = s.additional_properties();
        for (k, v) in map {
            let old_v = old.and_then(|o| o.get(k));
            if let Some(prop) = s.property(k) {
                self.node(prop, v, old_v, &child(path, k));
            } else if let Some(extra) = extra {
                self.node(extra, v, old_v, &child(path, k));
            }
        }
        for r in s
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            if !map.contains_key(r) {
                self.push(Cause::required(&child(path, r)));
            }
        }
    }
}

/// The indices of the first repetition of each repeated value (`validateListSet`).
fn repeated<'a>(items: impl Iterator<Item = &'a Value>) -> Vec<usize> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut out = Vec::new();
    for (i, x) in items.enumerate() {
        let times = seen.entry(x.to_string()).or_insert(0);
        *times += 1;
        if *times == 2 {
            out.push(i);
        }
    }
    out
}

fn has_duplicates<'a>(items: impl Iterator<Item = &'a Value>) -> bool {
    !repeated(items).is_empty()
}

/// A compiled `pattern`, cached; `None` for a pattern that does not compile.
fn compiled(pattern: &str) -> Option<regex::Regex> {
    static CACHE: OnceLock<Mutex<HashMap<String, Option<regex::Regex>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let mut cache = cache.lock().unwrap_or_else(|e| e.into_inner());
    if cache.len() > 4096 {
        cache.clear();
    }
    cache
        .entry(pattern.to_owned())
        .or_insert_with(|| regex::Regex::new(pattern).ok())
        .clone()
}

/// Whether `text` is valid for a string `format` apiextensions-apiserver checks (unknown
/// formats pass, as they do there).
pub(super) fn format_ok(format: &str, text: &str) -> bool {
    let all = |s: &str, f: fn(u8) -> bool| !s.is_empty() && s.bytes().all(f);
    let hex = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_hexdigit());
    match format {
        "date-time" | "datetime" => {
            let b = text.as_bytes();
            b.len() >= 16
                && all(&text[..4], |c| c.is_ascii_digit())
                && b[4] == b'-'
                && b[7] == b'-'
                && (b[10] == b'T' || b[10] == b't' || b[10] == b' ')
                && (crate::handlers::validate::decode::parse_rfc3339(text).is_some()
                    || text
                        .replace(['t', ' '], "T")
                        .parse::<jiff::civil::DateTime>()
                        .is_ok()
                    || format!("{text}Z").parse::<jiff::Timestamp>().is_ok())
        }
        "date" => text.len() == 10 && text.parse::<jiff::civil::Date>().is_ok(),
        "byte" => base64::engine::general_purpose::STANDARD
            .decode(text)
            .is_ok(),
        "uuid" | "uuid3" | "uuid4" | "uuid5" => {
            let parts: Vec<&str> = text.split('-').collect();
            parts.len() == 5
                && hex(parts[0], 8)
                && hex(parts[1], 4)
                && hex(parts[2], 4)
                && hex(parts[3], 4)
                && hex(parts[4], 12)
                && match format {
                    "uuid3" => parts[2].starts_with('3'),
                    "uuid4" => parts[2].starts_with('4'),
                    "uuid5" => parts[2].starts_with('5'),
                    _ => true,
                }
        }
        "ipv4" => text.parse::<std::net::Ipv4Addr>().is_ok(),
        "ipv6" => text.parse::<std::net::Ipv6Addr>().is_ok(),
        "cidr" => text.split_once('/').is_some_and(|(ip, bits)| {
            let max = if ip.contains(':') { 128 } else { 32 };
            ip.parse::<std::net::IpAddr>().is_ok() && bits.parse::<u8>().is_ok_and(|b| b <= max)
        }),
        "mac" => {
            let parts: Vec<&str> = text.split([':', '-']).collect();
            matches!(parts.len(), 6 | 8 | 20) && parts.iter().all(|p| hex(p, 2))
        }
        "hostname" => {
            text.len() <= 255
                && text.split('.').all(|l| {
                    !l.is_empty()
                        && l.len() <= 63
                        && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
                        && !l.starts_with('-')
                        && !l.ends_with('-')
                })
        }
        "email" => text
            .split_once('@')
            .is_some_and(|(a, b)| !a.is_empty() && !b.is_empty() && !b.contains('@')),
        "uri" => {
            text.starts_with('/')
                || text.split_once(':').is_some_and(|(scheme, _)| {
                    scheme
                        .bytes()
                        .next()
                        .is_some_and(|b| b.is_ascii_alphabetic())
                        && all(scheme, |b| {
                            b.is_ascii_alphanumeric() || b == b'+' || b == b'-' || b == b'.'
                        })
                })
        }
        "duration" => {
            crate::handlers::validate::decode::is_go_duration(text)
                || text
                    .split_whitespace()
                    .collect::<String>()
                    .trim_end_matches(|c: char| c.is_ascii_alphabetic())
                    .parse::<f64>()
                    .is_ok()
        }
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(schema: Value, x: Value) -> Vec<String> {
        validate(Schema::standalone(&schema), &x, None, Mode::Custom)
            .into_iter()
            .map(|c| format!("{} {}: {}", c.reason, c.field, c.message))
            .collect()
    }

    fn obj(spec: Value) -> Value {
        json!({"type": "object", "properties": {"spec": {"type": "object", "properties": spec}}})
    }

    #[test]
    fn types() {
        let s = obj(
            json!({"replicas": {"type": "integer"}, "name": {"type": "string"},
            "port": {"x-kubernetes-int-or-string": true}, "ratio": {"type": "number"},
            "note": {"type": "string", "nullable": true}, "flag": {"type": "boolean"},
            "any": {"x-kubernetes-preserve-unknown-fields": true}}),
        );
        assert_eq!(
            check(s.clone(), json!({"spec": {"replicas": "three"}})),
            [
                "FieldValueTypeInvalid spec.replicas: Invalid value: \"string\": spec.replicas in body must be of type integer: \"string\""
            ]
        );
        assert_eq!(
            check(s.clone(), json!({"spec": {"name": 5, "flag": "yes"}})),
            [
                "FieldValueTypeInvalid spec.flag: Invalid value: \"string\": spec.flag in body must be of type boolean: \"string\"",
                "FieldValueTypeInvalid spec.name: Invalid value: \"integer\": spec.name in body must be of type string: \"integer\""
            ]
        );
        assert_eq!(
            check(s.clone(), json!({"spec": {"port": true}})),
            [
                "FieldValueTypeInvalid spec.port: Invalid value: \"boolean\": spec.port in body must be of type integer,string: \"boolean\""
            ]
        );
        assert!(
            check(
                s.clone(),
                json!({"spec": {"replicas": 2.0, "ratio": 1, "port": "http", "note": null, "any": [1]}})
            )
            .is_empty()
        );
        assert_eq!(
            check(s, json!({"spec": {"name": null}})),
            [
                "FieldValueTypeInvalid spec.name: Invalid value: \"null\": spec.name in body must be of type string: \"null\""
            ]
        );
    }

    #[test]
    fn strings_and_formats() {
        let s = obj(
            json!({"name": {"type": "string", "maxLength": 5, "minLength": 2, "pattern": "^[a-z]+$"},
            "when": {"type": "string", "format": "date-time"}, "data": {"type": "string", "format": "byte"},
            "id": {"type": "string", "format": "uuid"}, "other": {"type": "string", "format": "password"}}),
        );
        assert_eq!(
            check(s.clone(), json!({"spec": {"name": "ABCDEFG"}})),
            [
                "FieldValueTooLong spec.name: Too long: may not be more than 5 bytes",
                "FieldValueInvalid spec.name: Invalid value: \"ABCDEFG\": spec.name in body should match '^[a-z]+$'"
            ]
        );
        assert_eq!(
            check(s.clone(), json!({"spec": {"name": "a"}})),
            [
                "FieldValueInvalid spec.name: Invalid value: \"a\": spec.name in body should be at least 2 chars long"
            ]
        );
        assert_eq!(
            check(s.clone(), json!({"spec": {"when": "yesterday"}})),
            [
                "FieldValueTypeInvalid spec.when: Invalid value: \"yesterday\": spec.when in body must be of type date-time: \"yesterday\""
            ]
        );
        assert_eq!(check(s.clone(), json!({"spec": {"data": "!!"}})).len(), 1);
        assert_eq!(check(s.clone(), json!({"spec": {"id": "nope"}})).len(), 1);
        assert!(
            check(
                s,
                json!({"spec": {"name": "abc", "when": "2024-05-01T10:00:00Z", "data": "aGk=",
                "id": "123e4567-e89b-12d3-a456-426614174000", "other": "x"}})
            )
            .is_empty()
        );
    }

    #[test]
    fn numbers() {
        let s = obj(
            json!({"replicas": {"type": "integer", "minimum": 1, "maximum": 10},
            "ratio": {"type": "number", "minimum": 0, "exclusiveMinimum": true, "multipleOf": 0.5}}),
        );
        assert_eq!(
            check(s.clone(), json!({"spec": {"replicas": 0}})),
            [
                "FieldValueInvalid spec.replicas: Invalid value: 0: spec.replicas in body should be greater than or equal to 1"
            ]
        );
        assert_eq!(
            check(s.clone(), json!({"spec": {"replicas": 11}})),
            [
                "FieldValueInvalid spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10"
            ]
        );
        assert_eq!(
            check(s.clone(), json!({"spec": {"ratio": 0}})),
            [
                "FieldValueInvalid spec.ratio: Invalid value: 0: spec.ratio in body should be greater than 0"
            ]
        );
        assert_eq!(
            check(s, json!({"spec": {"ratio": 0.7}})),
            [
                "FieldValueInvalid spec.ratio: Invalid value: 0.7: spec.ratio in body should be a multiple of 0.5"
            ]
        );
    }

    #[test]
    fn enums_required_and_counts() {
        let s = obj(json!({"color": {"type": "string", "enum": ["red", "blue"]},
            "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 2},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}, "maxProperties": 1},
            "sel": {"type": "object", "minProperties": 1, "required": ["x"], "properties": {"x": {"type": "string"}}},
            "ref": {"type": "object", "required": ["name", "kind"], "properties": {"name": {"type": "string"}, "kind": {"type": "string"}}}}));
        assert_eq!(
            check(s.clone(), json!({"spec": {"color": "pink"}})),
            [
                "FieldValueNotSupported spec.color: Unsupported value: \"pink\": supported values: \"red\", \"blue\""
            ]
        );
        assert_eq!(
            check(
                s.clone(),
                json!({"spec": {"tags": ["a", "b", "c"], "labels": {"a": "1", "b": "2"}}})
            ),
            [
                "FieldValueTooMany spec.labels: Too many: 2: must have at most 1 item",
                "FieldValueTooMany spec.tags: Too many: 3: must have at most 2 items"
            ]
        );
        assert_eq!(
            check(s.clone(), json!({"spec": {"tags": [], "sel": {}}})),
            [
                "FieldValueInvalid spec.sel: Invalid value: 0: spec.sel in body should have at least 1 properties",
                "FieldValueInvalid spec.tags: Invalid value: 0: spec.tags in body should have at least 1 items"
            ]
        );
        assert_eq!(
            check(s, json!({"spec": {"ref": {}}})),
            [
                "FieldValueRequired spec.ref.name: Required value",
                "FieldValueRequired spec.ref.kind: Required value"
            ]
        );
    }

    #[test]
    fn list_types_and_embedded_resources() {
        let s = obj(json!({
            "set": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
            "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["port"],
                      "items": {"type": "object", "properties": {"port": {"type": "integer"}}}},
            "tmpl": {"type": "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true}}));
        assert_eq!(
            check(
                s.clone(),
                json!({"spec": {"set": ["a", "b", "a"], "ports": [{"port": 80}, {"port": 80}]}})
            ),
            [
                "FieldValueDuplicate spec.ports[1]: Duplicate value: {\"port\":80}",
                "FieldValueDuplicate spec.set[2]: Duplicate value: \"a\""
            ]
        );
        assert_eq!(
            check(s, json!({"spec": {"tmpl": {"kind": ""}}})),
            [
                "FieldValueRequired spec.tmpl.apiVersion: Required value",
                "FieldValueRequired spec.tmpl.kind: Required value"
            ]
        );
    }

    #[test]
    fn combinators() {
        let s = obj(
            json!({"x": {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
            "oneOf": [{"required": ["a"]}, {"required": ["b"]}]}}),
        );
        assert!(check(s.clone(), json!({"spec": {"x": {"a": "1"}}})).is_empty());
        assert_eq!(
            check(s, json!({"spec": {"x": {}}})),
            [
                "FieldValueInvalid <nil>: Invalid value: \"\": \"spec.x\" must validate one and only one schema (oneOf). Found none valid"
            ]
        );
    }

    #[test]
    fn ratcheting_lets_unchanged_invalid_values_through() {
        let node =
            obj(json!({"color": {"type": "string", "enum": ["red"]}, "n": {"type": "integer"}}));
        let s = Schema::standalone(&node);
        let old = json!({"spec": {"color": "pink", "n": 1}});
        let new = json!({"spec": {"color": "pink", "n": 2}});
        assert!(validate(s, &new, Some(&old), Mode::Custom).is_empty());
        let changed = json!({"spec": {"color": "green", "n": 2}});
        assert_eq!(validate(s, &changed, Some(&old), Mode::Custom).len(), 1);
    }

    #[test]
    fn builtins_check_required_and_enum_only() {
        let d = crate::registry::spec::builtin_schema("apps", "v1", "Deployment").unwrap();
        let causes = validate(
            d,
            &json!({"spec": {"strategy": {"type": "Sideways"}, "template": {"spec": {
                "containers": [{"name": "a", "imagePullPolicy": ""}]}}}}),
            None,
            Mode::Builtin,
        );
        let texts: Vec<String> = causes
            .iter()
            .map(|c| format!("{}: {}", c.field, c.message))
            .collect();
        assert_eq!(
            texts,
            [
                "spec.strategy.type: Unsupported value: \"Sideways\": supported values: \"Recreate\", \"RollingUpdate\"",
                "spec.selector: Required value"
            ]
        );
    }
}
