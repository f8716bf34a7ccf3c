//! Documents generated from a CRD version's `openAPIV3Schema`, for the round-trip tests:
//! random ones (proptest's deterministic RNG: absent optional properties, explicit `null`s
//! where the schema allows them, `null` items that have a default, unknown enum values,
//! unknown keys beside preserved fields) and full ones that carry one kind of probe at every
//! site of that kind (an integer quantity, a fractional or offset timestamp, an integer in a
//! `number` field).

use proptest::prelude::Rng;
use proptest::test_runner::TestRng;
use serde_json::{Map, Value, json};

/// The quantity pattern controller-gen writes (as the reader knows it).
pub use kinform_codegen::read::crd_schema::QUANTITY_PATTERN;

/// What a generated document carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Random choices.
    Random,
    /// Every optional property once (down to a depth), each site of the probe's kind set to
    /// the probe's value.
    Full(Probe),
}

/// One kind of value that must keep its exact form.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Probe {
    /// `2` in an int-or-string with the quantity pattern.
    IntegerQuantity,
    /// `…00.123456Z` in a `date-time`.
    FractionTime,
    /// `…02:00:00+02:00` in a `date-time`.
    OffsetTime,
    /// `3` in a `number`.
    IntegerNumber,
}

impl Probe {
    /// Every probe.
    pub const ALL: [Probe; 4] = [
        Probe::IntegerQuantity,
        Probe::FractionTime,
        Probe::OffsetTime,
        Probe::IntegerNumber,
    ];

    fn matches(self, site: Site) -> bool {
        matches!(
            (self, site),
            (Probe::IntegerQuantity, Site::Quantity)
                | (Probe::FractionTime | Probe::OffsetTime, Site::DateTime)
                | (Probe::IntegerNumber, Site::Number)
        )
    }

    fn value(self) -> Value {
        match self {
            Probe::IntegerQuantity => json!(2),
            Probe::FractionTime => json!("2024-01-01T00:00:00.123456Z"),
            Probe::OffsetTime => json!("2024-01-01T02:00:00+02:00"),
            Probe::IntegerNumber => json!(3),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Site {
    Quantity,
    DateTime,
    Number,
}

fn site(s: &Value) -> Option<Site> {
    if s.get("x-kubernetes-int-or-string") == Some(&Value::Bool(true)) {
        return (s.get("pattern").and_then(Value::as_str) == Some(QUANTITY_PATTERN))
            .then_some(Site::Quantity);
    }
    match (
        s.get("type").and_then(Value::as_str),
        s.get("format").and_then(Value::as_str),
    ) {
        (Some("string"), Some("date-time")) => Some(Site::DateTime),
        (Some("number"), _) => Some(Site::Number),
        _ => None,
    }
}

/// Whether the schema has a site the probe fits (outside the root `metadata`).
pub fn has_site(schema: &Value, probe: Probe) -> bool {
    fn walk(s: &Value, probe: Probe, depth: usize) -> bool {
        if depth > 40 {
            return false;
        }
        if site(s).is_some_and(|k| probe.matches(k)) {
            return true;
        }
        let props = s
            .get("properties")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .filter(|(k, _)| depth > 0 || k.as_str() != "metadata")
            .map(|(_, v)| v);
        let subs = ["items", "additionalProperties"]
            .iter()
            .filter_map(|k| s.get(*k).filter(|v| v.is_object()));
        props.chain(subs).any(|v| walk(v, probe, depth + 1))
    }
    walk(schema, probe, 0)
}

/// A document of (apiVersion, kind) generated from `schema`.
pub fn document(
    schema: &Value,
    api_version: &str,
    kind: &str,
    name: &str,
    mode: Mode,
    rng: &mut TestRng,
) -> Value {
    let mut generator = Gen { rng, mode };
    let mut doc = Map::new();
    doc.insert("apiVersion".into(), json!(api_version));
    doc.insert("kind".into(), json!(kind));
    doc.insert("metadata".into(), json!({"name": name}));
    if let Some(Value::Object(props)) = schema.get("properties") {
        for (k, p) in props {
            if matches!(k.as_str(), "apiVersion" | "kind" | "metadata") {
                continue;
            }
            if let Some(v) = generator.property(p, required(schema, k), 1) {
                doc.insert(k.clone(), v);
            }
        }
    }
    Value::Object(doc)
}

fn required(s: &Value, key: &str) -> bool {
    s.get("required")
        .and_then(Value::as_array)
        .is_some_and(|r| r.iter().any(|k| k == key))
}

struct Gen<'a> {
    rng: &'a mut TestRng,
    mode: Mode,
}

/// Below this depth a random document leaves optional properties out.
const MAX_DEPTH: usize = 14;

impl Gen<'_> {
    /// One in `n`.
    fn one_in(&mut self, n: u32) -> bool {
        self.rng.next_u32().is_multiple_of(n)
    }

    fn pick<'v>(&mut self, values: &'v [Value]) -> Option<&'v Value> {
        if values.is_empty() {
            return None;
        }
        let i = self.rng.next_u32() as usize % values.len();
        values.get(i)
    }

    /// A property's value, or `None` to leave it out.
    fn property(&mut self, s: &Value, required: bool, depth: usize) -> Option<Value> {
        let nullable = s.get("nullable") == Some(&Value::Bool(true));
        match self.mode {
            Mode::Random => {
                if !required && (depth > MAX_DEPTH || self.one_in(3)) {
                    return None;
                }
                if nullable && self.one_in(4) {
                    return Some(Value::Null);
                }
            }
            Mode::Full(_) => {
                if !required && depth > MAX_DEPTH {
                    return None;
                }
            }
        }
        Some(self.value(s, depth))
    }

    fn value(&mut self, s: &Value, depth: usize) -> Value {
        if let (Mode::Full(probe), Some(k)) = (self.mode, site(s))
            && probe.matches(k)
        {
            return probe.value();
        }
        if s.get("x-kubernetes-int-or-string") == Some(&Value::Bool(true)) {
            let quantity = s.get("pattern").and_then(Value::as_str) == Some(QUANTITY_PATTERN);
            return match (self.one_in(2), quantity) {
                (true, _) => json!(self.rng.next_u32() % 100),
                (false, true) => json!("500m"),
                (false, false) => json!("25%"),
            };
        }
        let ty = s.get("type").and_then(Value::as_str).or_else(|| {
            // A typeless union: the first branch's type.
            ["anyOf", "oneOf"].iter().find_map(|k| {
                s.get(*k)?
                    .as_array()?
                    .iter()
                    .find_map(|b| b.get("type").and_then(Value::as_str))
            })
        });
        match ty {
            Some("string") => self.string(s),
            Some("integer") => json!(self.rng.next_u32() % 1000),
            Some("number") => {
                if self.one_in(2) {
                    json!(self.rng.next_u32() % 10)
                } else {
                    json!(2.5)
                }
            }
            Some("boolean") => json!(self.one_in(2)),
            Some("array") => self.array(s, depth),
            Some("object") | None => self.object(s, depth),
            Some(_) => Value::Null,
        }
    }

    fn string(&mut self, s: &Value) -> Value {
        if let Some(values) = s.get("enum").and_then(Value::as_array) {
            let known: Vec<Value> = values.iter().filter(|v| v.is_string()).cloned().collect();
            if matches!(self.mode, Mode::Random) && self.one_in(4) || known.is_empty() {
                return json!("UnknownToThisSchema");
            }
            return self.pick(&known).cloned().unwrap_or(json!("x"));
        }
        match s.get("format").and_then(Value::as_str) {
            Some("date-time") => self
                .pick(&[
                    json!("2024-01-01T00:00:00Z"),
                    json!("2024-01-01T00:00:00.5Z"),
                    json!("2024-01-01T02:00:00+02:00"),
                ])
                .cloned()
                .unwrap_or(Value::Null),
            Some("byte") => json!("aGVsbG8="),
            Some("date") => json!("2024-01-01"),
            _ => json!(format!("s{}", self.rng.next_u32() % 100)),
        }
    }

    fn array(&mut self, s: &Value, depth: usize) -> Value {
        let Some(items) = s.get("items").filter(|i| i.is_object()) else {
            return json!([1, "x"]);
        };
        let n = match self.mode {
            Mode::Random if depth > MAX_DEPTH => 0,
            Mode::Random => self.rng.next_u32() % 3,
            Mode::Full(_) => 1,
        };
        let nullable = items.get("nullable") == Some(&Value::Bool(true));
        let defaulted = items.get("default").is_some_and(|d| !d.is_null());
        (0..n)
            .map(|_| {
                if matches!(self.mode, Mode::Random) && (nullable || defaulted) && self.one_in(4) {
                    Value::Null
                } else {
                    self.value(items, depth + 1)
                }
            })
            .collect()
    }

    fn object(&mut self, s: &Value, depth: usize) -> Value {
        let mut out = Map::new();
        let preserve = s.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true));
        if s.get("x-kubernetes-embedded-resource") == Some(&Value::Bool(true)) {
            out.insert("apiVersion".into(), json!("v1"));
            out.insert("kind".into(), json!("ConfigMap"));
            out.insert("metadata".into(), json!({"name": "embedded"}));
        }
        let props = s.get("properties").and_then(Value::as_object);
        if let Some(props) = props {
            for (k, p) in props {
                if out.contains_key(k) {
                    continue;
                }
                if let Some(v) = self.property(p, required(s, k), depth + 1) {
                    out.insert(k.clone(), v);
                }
            }
        }
        match s.get("additionalProperties") {
            Some(ap @ Value::Object(_)) => {
                let n = match self.mode {
                    Mode::Random if depth > MAX_DEPTH => 0,
                    Mode::Random => self.rng.next_u32() % 3,
                    Mode::Full(_) => 1,
                };
                let nullable = ap.get("nullable") == Some(&Value::Bool(true));
                let defaulted = ap.get("default").is_some_and(|d| !d.is_null());
                for i in 0..n {
                    let v = if matches!(self.mode, Mode::Random)
                        && (nullable || defaulted)
                        && self.one_in(4)
                    {
                        Value::Null
                    } else {
                        self.value(ap, depth + 1)
                    };
                    out.insert(format!("key{i}"), v);
                }
            }
            Some(Value::Bool(true)) => {
                out.insert("free".into(), json!({"a": [1, "x", null]}));
            }
            _ if preserve => {
                out.insert("unknownKey".into(), json!({"deep": [1, 2.5, null]}));
            }
            _ => {}
        }
        Value::Object(out)
    }
}

/// `doc` (a real document) with every value at a site of the probe's kind replaced by the
/// probe's value; `None` when the document has no such site.
pub fn probe_document(doc: &Value, schema: &Value, probe: Probe) -> Option<Value> {
    fn walk(x: &mut Value, s: &Value, probe: Probe, hits: &mut usize, depth: usize) {
        if depth > 60 {
            return;
        }
        if !x.is_null() && site(s).is_some_and(|k| probe.matches(k)) {
            *x = probe.value();
            *hits += 1;
            return;
        }
        match x {
            Value::Object(map) => {
                for (k, v) in map.iter_mut() {
                    if depth == 0 && k == "metadata" {
                        continue;
                    }
                    let sub = s
                        .get("properties")
                        .and_then(|p| p.get(k))
                        .or_else(|| s.get("additionalProperties").filter(|a| a.is_object()));
                    if let Some(sub) = sub {
                        walk(v, sub, probe, hits, depth + 1);
                    }
                }
            }
            Value::Array(items) => {
                if let Some(it) = s.get("items").filter(|i| i.is_object()) {
                    for v in items {
                        walk(v, it, probe, hits, depth + 1);
                    }
                }
            }
            _ => {}
        }
    }
    let mut out = doc.clone();
    let mut hits = 0;
    walk(&mut out, schema, probe, &mut hits, 0);
    (hits > 0).then_some(out)
}
