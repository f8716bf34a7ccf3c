//! Sets of field paths and their `FieldsV1` encoding, as structured-merge-diff's `fieldpath`
//! package defines them.
//!
//! A path is a list of elements: a struct or map field (`f:name`), an associative-list item
//! named by its key fields (`k:{"name":"nginx"}`), a set item named by its value
//! (`v:"finalizer"`), or a list index (`i:0`, never produced here, decoded for completeness).
//! A [`Set`] is a tree: at each node, `members` are paths that end there and `children` are
//! subtrees. Encoded as `FieldsV1`, a member is an empty object, a child an object of its own
//! members and children, and a node that is both carries `".": {}` among its children.
//! Elements order as the Go library orders them (fields, then keys, then values, then
//! indexes), which is the order of conflicts and of the encoded sets; `serde_json` writes
//! object keys sorted as strings, which for these prefixes is the same order except between
//! `i:` and `k:` elements, which never share a node.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

/// One element of a field path.
#[derive(Clone, Debug)]
pub(crate) enum Pe {
    /// A struct field or map key: `f:name`.
    Field(String),
    /// An associative-list item, by its key fields sorted by name: `k:{"name":"a"}`.
    Key(Vec<(String, Value)>),
    /// A set item, by its value: `v:"a"`.
    Value(Value),
    /// A list index: `i:0`.
    Index(i64),
}

impl Pe {
    fn rank(&self) -> u8 {
        match self {
            Pe::Field(_) => 0,
            Pe::Key(_) => 1,
            Pe::Value(_) => 2,
            Pe::Index(_) => 3,
        }
    }

    /// The `FieldsV1` key of this element.
    pub fn encode(&self) -> String {
        match self {
            Pe::Field(n) => format!("f:{n}"),
            Pe::Key(fields) => {
                let m: Map<String, Value> = fields.iter().cloned().collect();
                format!("k:{}", Value::Object(m))
            }
            Pe::Value(v) => format!("v:{v}"),
            Pe::Index(i) => format!("i:{i}"),
        }
    }

    /// Parses a `FieldsV1` key; `None` for a key of an unknown kind (which the Go library
    /// skips) or one that does not parse.
    pub fn decode(key: &str) -> Option<Pe> {
        let (kind, rest) = key.split_once(':')?;
        match kind {
            "f" => Some(Pe::Field(rest.to_owned())),
            "k" => {
                let Value::Object(m) = serde_json::from_str(rest).ok()? else {
                    return None;
                };
                Some(Pe::Key(m.into_iter().collect()))
            }
            "v" => serde_json::from_str(rest).ok().map(Pe::Value),
            "i" => rest.parse().ok().map(Pe::Index),
            _ => None,
        }
    }
}

/// Go's `value.ToString`: strings quoted, everything else as JSON.
fn value_string(v: &Value) -> String {
    v.to_string()
}

impl std::fmt::Display for Pe {
    /// The path notation of conflicts: `.name`, `[name="a",port=80]`, `[="a"]`, `[0]`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Pe::Field(n) => write!(f, ".{n}"),
            Pe::Key(fields) => {
                let parts: Vec<String> = fields
                    .iter()
                    .map(|(k, v)| format!("{k}={}", value_string(v)))
                    .collect();
                write!(f, "[{}]", parts.join(","))
            }
            Pe::Value(v) => write!(f, "[={}]", value_string(v)),
            Pe::Index(i) => write!(f, "[{i}]"),
        }
    }
}

/// A path as the conflicts print it: `.spec.containers[name="a"].image`.
pub(crate) fn path_string(path: &[Pe]) -> String {
    path.iter().map(ToString::to_string).collect()
}

/// Structured-merge-diff's total order of values: numbers, strings, booleans, lists, maps,
/// null.
pub(crate) fn compare_values(a: &Value, b: &Value) -> Ordering {
    fn rank(v: &Value) -> u8 {
        match v {
            Value::Number(_) => 0,
            Value::String(_) => 1,
            Value::Bool(_) => 2,
            Value::Array(_) => 3,
            Value::Object(_) => 4,
            Value::Null => 5,
        }
    }
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            let (fx, fy) = (x.as_f64().unwrap_or(0.0), y.as_f64().unwrap_or(0.0));
            fx.total_cmp(&fy)
                // Keep the order consistent with equality: 1 and 1.0 differ.
                .then_with(|| x.is_f64().cmp(&y.is_f64()))
                .then_with(|| x.to_string().cmp(&y.to_string()))
        }
        (Value::String(x), Value::String(y)) => x.cmp(y),
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        (Value::Array(x), Value::Array(y)) => {
            for (p, q) in x.iter().zip(y) {
                let c = compare_values(p, q);
                if c != Ordering::Equal {
                    return c;
                }
            }
            x.len().cmp(&y.len())
        }
        (Value::Object(_), Value::Object(_)) => a.to_string().cmp(&b.to_string()),
        _ => rank(a).cmp(&rank(b)),
    }
}

impl Ord for Pe {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (Pe::Field(a), Pe::Field(b)) => a.cmp(b),
            (Pe::Key(a), Pe::Key(b)) => {
                for ((ka, va), (kb, vb)) in a.iter().zip(b) {
                    let c = ka.cmp(kb).then_with(|| compare_values(va, vb));
                    if c != Ordering::Equal {
                        return c;
                    }
                }
                a.len().cmp(&b.len())
            }
            (Pe::Value(a), Pe::Value(b)) => compare_values(a, b),
            (Pe::Index(a), Pe::Index(b)) => a.cmp(b),
            _ => self.rank().cmp(&other.rank()),
        }
    }
}

impl PartialOrd for Pe {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Pe {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Pe {}

/// A set of field paths, as a tree.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Set {
    /// Paths that end at this node.
    pub members: BTreeSet<Pe>,
    /// Subtrees, never empty.
    pub children: BTreeMap<Pe, Set>,
}

impl Set {
    /// Whether the set holds no path.
    pub fn is_empty(&self) -> bool {
        self.members.is_empty() && self.children.is_empty()
    }

    /// Adds `path` (the empty path is no member of any set).
    pub fn insert(&mut self, path: &[Pe]) {
        match path {
            [] => {}
            [last] => {
                self.members.insert(last.clone());
            }
            [first, rest @ ..] => self.children.entry(first.clone()).or_default().insert(rest),
        }
    }

    /// Whether `path` is a member.
    pub fn has(&self, path: &[Pe]) -> bool {
        match path {
            [] => false,
            [last] => self.members.contains(last),
            [first, rest @ ..] => self.children.get(first).is_some_and(|c| c.has(rest)),
        }
    }

    /// The subtree under `pe`, if any.
    pub fn child(&self, pe: &Pe) -> Option<&Set> {
        self.children.get(pe)
    }

    /// Every path of `self` or `other`.
    pub fn union(&self, other: &Set) -> Set {
        let mut out = self.clone();
        out.members.extend(other.members.iter().cloned());
        for (pe, c) in &other.children {
            let merged = match out.children.get(pe) {
                Some(mine) => mine.union(c),
                None => c.clone(),
            };
            out.children.insert(pe.clone(), merged);
        }
        out
    }

    /// The paths of `self` that are not in `other` (a member removed keeps its children, as in
    /// the Go library).
    pub fn difference(&self, other: &Set) -> Set {
        let members = self.members.difference(&other.members).cloned().collect();
        let children = self
            .children
            .iter()
            .filter_map(|(pe, c)| {
                let d = match other.children.get(pe) {
                    Some(o) => c.difference(o),
                    None => c.clone(),
                };
                (!d.is_empty()).then(|| (pe.clone(), d))
            })
            .collect();
        Set { members, children }
    }

    /// The paths in both sets.
    pub fn intersection(&self, other: &Set) -> Set {
        let members = self.members.intersection(&other.members).cloned().collect();
        let children = self
            .children
            .iter()
            .filter_map(|(pe, c)| {
                let i = c.intersection(other.children.get(pe)?);
                (!i.is_empty()).then(|| (pe.clone(), i))
            })
            .collect();
        Set { members, children }
    }

    /// Every path, members of a node before its children, each in element order (the Go
    /// library's `Iterate`).
    pub fn paths(&self) -> Vec<Vec<Pe>> {
        let mut out = Vec::new();
        self.collect(&mut Vec::new(), &mut out);
        out
    }

    fn collect(&self, prefix: &mut Vec<Pe>, out: &mut Vec<Vec<Pe>>) {
        for m in &self.members {
            let mut p = prefix.clone();
            p.push(m.clone());
            out.push(p);
        }
        for (pe, c) in &self.children {
            prefix.push(pe.clone());
            c.collect(prefix, out);
            prefix.pop();
        }
    }

    /// The `FieldsV1` encoding.
    pub fn to_fields_v1(&self) -> Value {
        let mut m = Map::new();
        for pe in &self.members {
            if !self.children.contains_key(pe) {
                m.insert(pe.encode(), Value::Object(Map::new()));
            }
        }
        for (pe, c) in &self.children {
            let mut inner = match c.to_fields_v1() {
                Value::Object(o) => o,
                _ => Map::new(),
            };
            if self.members.contains(pe) {
                inner.insert(".".to_owned(), Value::Object(Map::new()));
            }
            m.insert(pe.encode(), Value::Object(inner));
        }
        Value::Object(m)
    }

    /// Decodes `FieldsV1`; keys of unknown kinds are skipped as the Go library skips them.
    pub fn from_fields_v1(v: &Value) -> Result<Set, String> {
        let Value::Object(m) = v else {
            return Err("fieldsV1 must be a JSON object".to_owned());
        };
        let mut set = Set::default();
        for (key, child) in m {
            if key == "." {
                continue;
            }
            let Some(pe) = Pe::decode(key) else {
                if key.starts_with("f:") || key.starts_with("k:") || key.starts_with("v:") {
                    return Err(format!("parsing key {key:?} as a path element"));
                }
                continue;
            };
            let Value::Object(cm) = child else {
                return Err(format!("the value of {key:?} must be an object"));
            };
            let sub = Set::from_fields_v1(child)?;
            if cm.is_empty() || cm.contains_key(".") {
                set.members.insert(pe.clone());
            }
            if !sub.is_empty() {
                set.children.insert(pe, sub);
            }
        }
        Ok(set)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn f(n: &str) -> Pe {
        Pe::Field(n.to_owned())
    }

    /// The encoding kube-apiserver writes for `kubectl create deployment` (FieldsV1 as in
    /// structured-merge-diff's `serialize.go`): `.` marks a node that is also a member.
    #[test]
    fn fields_v1_round_trip() {
        let v = json!({
            "f:metadata": {"f:labels": {".": {}, "f:app": {}}},
            "f:spec": {
                "f:replicas": {},
                "f:template": {"f:spec": {"f:containers": {
                    "k:{\"name\":\"nginx\"}": {".": {}, "f:image": {}, "f:name": {}}
                }}},
            },
            "f:metadata2": {"f:finalizers": {".": {}, "v:\"a\"": {}}},
        });
        let s = Set::from_fields_v1(&v).unwrap();
        assert!(s.has(&[f("metadata"), f("labels")]));
        assert!(s.has(&[f("metadata"), f("labels"), f("app")]));
        assert!(!s.has(&[f("metadata")]));
        let key = Pe::Key(vec![("name".into(), json!("nginx"))]);
        let c = [f("spec"), f("template"), f("spec"), f("containers"), key];
        assert!(s.has(&c));
        assert!(s.has(&[f("metadata2"), f("finalizers"), Pe::Value(json!("a"))]));
        assert_eq!(s.to_fields_v1(), v);
        assert_eq!(
            path_string(&[c.as_slice(), &[f("image")]].concat()),
            ".spec.template.spec.containers[name=\"nginx\"].image"
        );
    }

    #[test]
    fn unknown_element_kinds_are_skipped_and_bad_ones_refused() {
        let s = Set::from_fields_v1(&json!({"x:future": {}, "f:a": {}})).unwrap();
        assert_eq!(s.paths(), vec![vec![f("a")]]);
        assert!(Set::from_fields_v1(&json!({"k:notjson": {}})).is_err());
        assert!(Set::from_fields_v1(&json!([])).is_err());
    }

    #[test]
    fn set_algebra_matches_the_go_library() {
        let mut a = Set::default();
        a.insert(&[f("spec")]);
        a.insert(&[f("spec"), f("x")]);
        a.insert(&[f("spec"), f("y")]);
        let mut b = Set::default();
        b.insert(&[f("spec"), f("y")]);
        b.insert(&[f("z")]);
        let d = a.difference(&b);
        assert_eq!(d.paths(), vec![vec![f("spec")], vec![f("spec"), f("x")]]);
        let i = a.intersection(&b);
        assert_eq!(i.paths(), vec![vec![f("spec"), f("y")]]);
        let u = a.union(&b);
        assert_eq!(u.paths().len(), 4);
        // Removing a member keeps its children.
        let mut only_spec = Set::default();
        only_spec.insert(&[f("spec")]);
        assert_eq!(a.difference(&only_spec).paths().len(), 2);
    }

    #[test]
    fn element_order_is_fields_keys_values_indexes() {
        let mut pes = [
            Pe::Index(0),
            Pe::Value(json!("a")),
            Pe::Key(vec![("name".into(), json!("b"))]),
            f("z"),
        ];
        pes.sort();
        assert_eq!(pes[0], f("z"));
        assert!(matches!(pes[1], Pe::Key(_)));
        assert!(matches!(pes[3], Pe::Index(0)));
        assert_eq!(
            Pe::Key(vec![
                ("name".into(), json!("b")),
                ("port".into(), json!(80))
            ])
            .to_string(),
            "[name=\"b\",port=80]"
        );
        assert_eq!(Pe::Value(json!(3)).encode(), "v:3");
        assert!(compare_values(&json!(1), &json!("a")).is_lt());
    }
}
