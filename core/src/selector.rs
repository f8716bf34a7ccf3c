//! Label and field selectors: parsing, printing and matching.
//!
//! Reproduces `k8s.io/apimachinery/pkg/labels` (`labels.Parse`) and `pkg/fields`
//! (`fields.ParseSelector`). Shared by the client (query parameters), the listers (served by
//! the store's label index) and `TestApiServer` (server-side filtering), so that the three
//! agree on every corner: `!=` and `notin` match objects that lack the key, `key` / `!key`
//! test existence, `gt`/`lt` compare integers, and the empty selector matches everything.
//!
//! The parsers refuse what Kubernetes refuses, so that a printed selector always parses back
//! to itself (tested by property in `tests/selector_roundtrip.rs`):
//! - label selectors are split by the lexer of `labels.Parse`: only space, tab, CR and LF
//!   separate tokens (its `isWhitespace`); any other byte, Unicode spaces included, belongs to
//!   a key or value, which is then validated (`IsQualifiedName`, `IsValidLabelValue`, also
//!   for the integer of `gt`/`lt`, as `NewRequirement` does);
//! - a structured selector's `matchLabels` keys and values and `matchExpressions` values are
//!   validated as `LabelSelectorAsSelector` does (a value `web,tier=db` is refused instead of
//!   printing as two requirements);
//! - field selectors are split as `fields.ParseSelector` splits them: terms at unescaped
//!   commas, each term at the first `!=`, `==` or `=` (scanning left to right), the value
//!   unescaped with `fields.UnescapeValue`, which refuses an unescaped `=` or `,` (so
//!   `a=b==c` and `x=a!=b` are errors); nothing is trimmed.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use k8s_openapi::apimachinery::pkg::apis::meta::v1 as metav1;

/// A selector that could not be parsed or converted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid selector {selector:?}: {reason}")]
pub struct SelectorError {
    /// The selector text (or a rendering of the structured selector).
    pub selector: String,
    /// What is wrong with it.
    pub reason: String,
}

/// The operator of one label requirement.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum LabelOp {
    /// `key=value` or `key==value`.
    Equals(String),
    /// `key!=value`: also matches objects without the key.
    NotEquals(String),
    /// `key in (a,b)`.
    In(Vec<String>),
    /// `key notin (a,b)`: also matches objects without the key.
    NotIn(Vec<String>),
    /// `key`.
    Exists,
    /// `!key`.
    DoesNotExist,
    /// `key>n`: the label exists and parses as an integer greater than `n`.
    GreaterThan(i64),
    /// `key<n`: the label exists and parses as an integer less than `n`.
    LessThan(i64),
}

/// One `key op values` requirement of a label selector.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LabelRequirement {
    /// The label key.
    pub key: String,
    /// The operator and its values.
    pub op: LabelOp,
}

impl LabelRequirement {
    /// Whether `labels` satisfies this requirement.
    pub fn matches(&self, labels: Option<&BTreeMap<String, String>>) -> bool {
        let value = labels.and_then(|l| l.get(&self.key)).map(String::as_str);
        match (&self.op, value) {
            (LabelOp::Equals(v), Some(have)) => have == v,
            (LabelOp::Equals(_), None) => false,
            (LabelOp::NotEquals(v), have) => have != Some(v.as_str()),
            (LabelOp::In(vs), Some(have)) => vs.iter().any(|v| v == have),
            (LabelOp::In(_), None) => false,
            (LabelOp::NotIn(vs), have) => have.is_none_or(|have| !vs.iter().any(|v| v == have)),
            (LabelOp::Exists, have) => have.is_some(),
            (LabelOp::DoesNotExist, have) => have.is_none(),
            (LabelOp::GreaterThan(n), Some(have)) => have.parse::<i64>().is_ok_and(|h| h > *n),
            (LabelOp::LessThan(n), Some(have)) => have.parse::<i64>().is_ok_and(|h| h < *n),
            (LabelOp::GreaterThan(_) | LabelOp::LessThan(_), None) => false,
        }
    }

    /// The label values an object must carry under `key` to match, when that set is finite
    /// (`=` and `in`). Indexes use this to touch only candidate objects.
    pub fn required_values(&self) -> Option<&[String]> {
        match &self.op {
            LabelOp::Equals(v) => Some(std::slice::from_ref(v)),
            LabelOp::In(vs) => Some(vs),
            _ => None,
        }
    }
}

impl fmt::Display for LabelRequirement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let k = &self.key;
        match &self.op {
            LabelOp::Equals(v) => write!(f, "{k}={v}"),
            LabelOp::NotEquals(v) => write!(f, "{k}!={v}"),
            LabelOp::In(vs) => write!(f, "{k} in ({})", vs.join(",")),
            LabelOp::NotIn(vs) => write!(f, "{k} notin ({})", vs.join(",")),
            LabelOp::Exists => write!(f, "{k}"),
            LabelOp::DoesNotExist => write!(f, "!{k}"),
            LabelOp::GreaterThan(n) => write!(f, "{k}>{n}"),
            LabelOp::LessThan(n) => write!(f, "{k}<{n}"),
        }
    }
}

/// A parsed label selector: the conjunction of its requirements.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct LabelSelector {
    requirements: Vec<LabelRequirement>,
}

impl LabelSelector {
    /// The selector that matches everything.
    pub fn everything() -> Self {
        Self::default()
    }

    /// Parses the `labelSelector` query syntax, e.g. `app=web,tier in (a,b),!canary`.
    pub fn parse(text: &str) -> Result<Self, SelectorError> {
        LabelParser::new(text).parse()
    }

    /// A selector requiring every `key=value` of `labels` (Kubernetes' `SelectorFromSet`).
    ///
    /// Like `SelectorFromSet`, it does not validate: a key or value that is not a valid label
    /// prints as something else (`{app: "web,tier=db"}` prints as two requirements) and the
    /// server refuses it. [`LabelSelector::try_from_labels`] validates
    /// (`ValidatedSelectorFromSet`).
    pub fn from_labels<'a>(labels: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        let mut requirements: Vec<_> = labels
            .into_iter()
            .map(|(k, v)| LabelRequirement {
                key: k.to_owned(),
                op: LabelOp::Equals(v.to_owned()),
            })
            .collect();
        requirements.sort_by(|a, b| a.key.cmp(&b.key));
        Self { requirements }
    }

    /// A selector requiring every `key=value` of `labels`, each key and value validated
    /// (Kubernetes' `ValidatedSelectorFromSet`).
    pub fn try_from_labels<'a>(
        labels: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<Self, SelectorError> {
        let labels: Vec<_> = labels.into_iter().collect();
        for (k, v) in &labels {
            let err = |reason: String| SelectorError {
                selector: format!("{k}={v}"),
                reason,
            };
            validate_label_key(k).map_err(err)?;
            validate_label_value(v).map_err(err)?;
        }
        Ok(Self::from_labels(labels))
    }

    /// Adds a requirement.
    #[must_use]
    pub fn with(mut self, requirement: LabelRequirement) -> Self {
        self.requirements.push(requirement);
        self
    }

    /// The requirements, all of which must hold.
    pub fn requirements(&self) -> &[LabelRequirement] {
        &self.requirements
    }

    /// Whether this selector matches every object.
    pub fn is_everything(&self) -> bool {
        self.requirements.is_empty()
    }

    /// Whether `labels` satisfies every requirement.
    pub fn matches(&self, labels: Option<&BTreeMap<String, String>>) -> bool {
        self.requirements.iter().all(|r| r.matches(labels))
    }
}

impl fmt::Display for LabelSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, r) in self.requirements.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{r}")?;
        }
        Ok(())
    }
}

impl FromStr for LabelSelector {
    type Err = SelectorError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

impl TryFrom<&metav1::LabelSelector> for LabelSelector {
    type Error = SelectorError;

    /// Converts the structured selector of Deployments, Services etc.
    /// (`metav1.LabelSelectorAsSelector`).
    fn try_from(sel: &metav1::LabelSelector) -> Result<Self, SelectorError> {
        for (k, v) in sel.match_labels.iter().flatten() {
            let err = |reason: String| SelectorError {
                selector: format!("{sel:?}"),
                reason: format!("matchLabels key {k:?}: {reason}"),
            };
            validate_label_key(k).map_err(err)?;
            validate_label_value(v).map_err(err)?;
        }
        let mut out = Self::from_labels(
            sel.match_labels
                .iter()
                .flatten()
                .map(|(k, v)| (k.as_str(), v.as_str())),
        );
        for expr in sel.match_expressions.iter().flatten() {
            let values = expr.values.clone().unwrap_or_default();
            let err = |reason: &str| SelectorError {
                selector: format!("{sel:?}"),
                reason: format!("matchExpressions key {:?}: {reason}", expr.key),
            };
            let op = match expr.operator.as_str() {
                "In" | "NotIn" if values.is_empty() => return Err(err("values must be non-empty")),
                "In" => LabelOp::In(values),
                "NotIn" => LabelOp::NotIn(values),
                "Exists" | "DoesNotExist" if !values.is_empty() => {
                    return Err(err("values must be empty"));
                }
                "Exists" => LabelOp::Exists,
                "DoesNotExist" => LabelOp::DoesNotExist,
                other => return Err(err(&format!("unknown operator {other:?}"))),
            };
            validate_label_key(&expr.key).map_err(|r| err(&r))?;
            if let LabelOp::In(vs) | LabelOp::NotIn(vs) = &op {
                for v in vs {
                    validate_label_value(v).map_err(|r| err(&r))?;
                }
            }
            out.requirements.push(LabelRequirement {
                key: expr.key.clone(),
                op,
            });
        }
        Ok(out)
    }
}

/// Checks a label key: an optional DNS-subdomain prefix and `/`, then a name of at most 63
/// characters of `[A-Za-z0-9._-]` that starts and ends alphanumeric.
pub fn validate_label_key(key: &str) -> Result<(), String> {
    let (prefix, name) = match key.rsplit_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, key),
    };
    if let Some(p) = prefix {
        if p.is_empty() || p.len() > 253 {
            return Err(format!("prefix of {key:?} must be 1 to 253 characters"));
        }
        if validate_dns_subdomain(p).is_err() {
            return Err(format!(
                "prefix of {key:?} must be a lower-case DNS subdomain"
            ));
        }
    }
    if name.is_empty() {
        return Err(format!("name part of {key:?} must not be empty"));
    }
    validate_label_value(name).map_err(|_| {
        format!(
            "name part of {key:?} must be at most 63 characters of [A-Za-z0-9._-], \
             starting and ending alphanumeric"
        )
    })
}

/// Checks a DNS subdomain (RFC 1123), the form of most object names (a Lease's, say) and of
/// label key prefixes: at most 253 characters of lower-case `[a-z0-9-.]`, each part between
/// dots non-empty and alphanumeric at both ends.
pub fn validate_dns_subdomain(name: &str) -> Result<(), String> {
    let part_ok = |part: &str| {
        !part.is_empty()
            && part
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            && !part.starts_with('-')
            && !part.ends_with('-')
    };
    if name.len() <= 253 && name.split('.').all(part_ok) {
        Ok(())
    } else {
        Err(
            "must be a DNS subdomain: at most 253 characters of lower-case [a-z0-9-.], \
             each part between dots alphanumeric at both ends"
                .to_owned(),
        )
    }
}

/// Checks a label value: empty, or at most 63 characters of `[A-Za-z0-9._-]` that start and
/// end alphanumeric.
pub fn validate_label_value(value: &str) -> Result<(), String> {
    if value.is_empty() {
        return Ok(());
    }
    let bytes = value.as_bytes();
    let ok = value.len() <= 63
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        && bytes[0].is_ascii_alphanumeric()
        && bytes[bytes.len() - 1].is_ascii_alphanumeric();
    if ok {
        Ok(())
    } else {
        Err(format!(
            "label value {value:?} must be at most 63 characters of [A-Za-z0-9._-], \
             starting and ending alphanumeric"
        ))
    }
}

/// The label selector lexer's whitespace (`isWhitespace` of `labels`): space, tab, CR, LF.
fn is_label_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\r' | '\n')
}

/// The label selector lexer's special symbols (`isSpecialSymbol` of `labels`).
fn is_label_symbol(c: char) -> bool {
    matches!(c, '=' | '!' | '(' | ')' | ',' | '<' | '>')
}

/// A hand-written scanner for the label selector grammar of `labels.Parse`.
struct LabelParser<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> LabelParser<'a> {
    fn new(text: &'a str) -> Self {
        Self { text, pos: 0 }
    }

    fn err(&self, reason: impl Into<String>) -> SelectorError {
        SelectorError {
            selector: self.text.to_owned(),
            reason: reason.into(),
        }
    }

    fn rest(&self) -> &'a str {
        &self.text[self.pos..]
    }

    fn skip_ws(&mut self) {
        let trimmed = self.rest().trim_start_matches(is_label_space);
        self.pos = self.text.len() - trimmed.len();
    }

    fn eat(&mut self, token: &str) -> bool {
        self.skip_ws();
        if self.rest().starts_with(token) {
            self.pos += token.len();
            true
        } else {
            false
        }
    }

    /// Eats a keyword (`in`, `notin`) only when followed by whitespace or `(`.
    fn eat_word(&mut self, word: &str) -> bool {
        self.skip_ws();
        let rest = self.rest();
        let after = &rest.as_bytes()[word.len().min(rest.len())..];
        if rest.starts_with(word)
            && after
                .first()
                .is_some_and(|&c| is_label_space(c as char) || is_label_symbol(c as char))
        {
            self.pos += word.len();
            true
        } else {
            false
        }
    }

    fn identifier(&mut self) -> &'a str {
        self.skip_ws();
        let rest = self.rest();
        let end = rest
            .find(|c: char| is_label_space(c) || is_label_symbol(c))
            .unwrap_or(rest.len());
        self.pos += end;
        &rest[..end]
    }

    fn parse(mut self) -> Result<LabelSelector, SelectorError> {
        let mut requirements = Vec::new();
        self.skip_ws();
        if self.rest().is_empty() {
            return Ok(LabelSelector::default());
        }
        loop {
            requirements.push(self.requirement()?);
            self.skip_ws();
            if self.rest().is_empty() {
                break;
            }
            if !self.eat(",") {
                return Err(self.err(format!("expected ',' at {:?}", self.rest())));
            }
        }
        Ok(LabelSelector { requirements })
    }

    fn requirement(&mut self) -> Result<LabelRequirement, SelectorError> {
        if self.eat("!") {
            let key = self.key()?;
            return Ok(LabelRequirement {
                key,
                op: LabelOp::DoesNotExist,
            });
        }
        let key = self.key()?;
        let op = if self.eat("==") || self.eat("=") {
            LabelOp::Equals(self.value()?)
        } else if self.eat("!=") {
            LabelOp::NotEquals(self.value()?)
        } else if self.eat(">") {
            LabelOp::GreaterThan(self.integer()?)
        } else if self.eat("<") {
            LabelOp::LessThan(self.integer()?)
        } else if self.eat_word("notin") {
            LabelOp::NotIn(self.value_set()?)
        } else if self.eat_word("in") {
            LabelOp::In(self.value_set()?)
        } else {
            self.skip_ws();
            if self.rest().is_empty() || self.rest().starts_with(',') {
                LabelOp::Exists
            } else {
                return Err(self.err(format!("expected an operator after {key:?}")));
            }
        };
        Ok(LabelRequirement { key, op })
    }

    fn key(&mut self) -> Result<String, SelectorError> {
        let key = self.identifier();
        if key.is_empty() {
            return Err(self.err(format!("expected a label key at {:?}", self.rest())));
        }
        validate_label_key(key).map_err(|r| self.err(r))?;
        Ok(key.to_owned())
    }

    fn value(&mut self) -> Result<String, SelectorError> {
        let value = self.identifier();
        validate_label_value(value).map_err(|r| self.err(r))?;
        Ok(value.to_owned())
    }

    fn integer(&mut self) -> Result<i64, SelectorError> {
        let value = self.identifier();
        // `NewRequirement` checks the integer as a label value too (no sign, no spaces).
        validate_label_value(value).map_err(|r| self.err(r))?;
        value
            .parse()
            .map_err(|_| self.err(format!("{value:?} is not an integer")))
    }

    fn value_set(&mut self) -> Result<Vec<String>, SelectorError> {
        if !self.eat("(") {
            return Err(self.err("expected '(' after in/notin"));
        }
        let mut values = Vec::new();
        loop {
            values.push(self.value()?);
            if self.eat(")") {
                break;
            }
            if !self.eat(",") {
                return Err(self.err("expected ',' or ')' in value set"));
            }
        }
        values.sort();
        values.dedup();
        Ok(values)
    }
}

/// The operator of one field requirement.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FieldOp {
    /// `field=value` or `field==value`.
    Equals,
    /// `field!=value`.
    NotEquals,
}

/// One `field op value` requirement of a field selector.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FieldRequirement {
    /// The field path, e.g. `metadata.name`.
    pub field: String,
    /// `=` or `!=`.
    pub op: FieldOp,
    /// The value, unescaped.
    pub value: String,
}

/// A parsed field selector: the conjunction of its requirements.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct FieldSelector {
    requirements: Vec<FieldRequirement>,
}

impl FieldSelector {
    /// Parses the `fieldSelector` query syntax, e.g. `metadata.name=web,status.phase!=Failed`.
    /// Values may escape `\`, `,` and `=` with a backslash, as `fields.EscapeValue` does.
    pub fn parse(text: &str) -> Result<Self, SelectorError> {
        let err = |reason: String| SelectorError {
            selector: text.to_owned(),
            reason,
        };
        let mut requirements = Vec::new();
        if text.is_empty() {
            return Ok(Self { requirements });
        }
        for part in split_unescaped(text, ',') {
            if part.is_empty() {
                continue;
            }
            let Some((field, op, raw)) = split_field_term(part) else {
                return Err(err(format!("{part:?} is not field=value or field!=value")));
            };
            let value = unescape_field_value(raw).map_err(err)?;
            requirements.push(FieldRequirement {
                field: field.to_owned(),
                op,
                value,
            });
        }
        Ok(Self { requirements })
    }

    /// A selector requiring `field == value`.
    pub fn equals(field: &str, value: &str) -> Self {
        Self {
            requirements: vec![FieldRequirement {
                field: field.to_owned(),
                op: FieldOp::Equals,
                value: value.to_owned(),
            }],
        }
    }

    /// The requirements, all of which must hold.
    pub fn requirements(&self) -> &[FieldRequirement] {
        &self.requirements
    }

    /// Whether this selector matches every object.
    pub fn is_everything(&self) -> bool {
        self.requirements.is_empty()
    }

    /// Whether an object matches, given a function that returns the value of a field path
    /// (`None` when the field is absent, which compares as the empty string).
    pub fn matches<'a>(&self, field: impl Fn(&str) -> Option<&'a str>) -> bool {
        self.requirements.iter().all(|r| {
            let have = field(&r.field).unwrap_or("");
            match r.op {
                FieldOp::Equals => have == r.value,
                FieldOp::NotEquals => have != r.value,
            }
        })
    }
}

impl fmt::Display for FieldSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, r) in self.requirements.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            let op = match r.op {
                FieldOp::Equals => "=",
                FieldOp::NotEquals => "!=",
            };
            let escaped = r
                .value
                .replace('\\', "\\\\")
                .replace(',', "\\,")
                .replace('=', "\\=");
            write!(f, "{}{op}{escaped}", r.field)?;
        }
        Ok(())
    }
}

impl FromStr for FieldSelector {
    type Err = SelectorError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

fn split_unescaped(text: &str, sep: char) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut start = 0;
    let mut escaped = false;
    for (i, c) in text.char_indices() {
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == sep {
            parts.push(&text[start..i]);
            start = i + 1;
        }
    }
    parts.push(&text[start..]);
    parts
}

/// Splits a term at the first operator, scanning left to right and trying `!=`, `==`, `=` at
/// each position (`splitTerm` of `fields`): the field name has no escapes.
fn split_field_term(term: &str) -> Option<(&str, FieldOp, &str)> {
    for (i, _) in term.char_indices() {
        let rest = &term[i..];
        for (token, op) in [
            ("!=", FieldOp::NotEquals),
            ("==", FieldOp::Equals),
            ("=", FieldOp::Equals),
        ] {
            if let Some(value) = rest.strip_prefix(token) {
                return Some((&term[..i], op, value));
            }
        }
    }
    None
}

fn unescape_field_value(raw: &str) -> Result<String, String> {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(e @ ('\\' | ',' | '=')) => out.push(e),
                Some(e) => return Err(format!("invalid escape sequence \\{e} in {raw:?}")),
                None => return Err(format!("trailing backslash in {raw:?}")),
            },
            ',' | '=' => return Err(format!("unescaped {c:?} in value {raw:?}")),
            _ => out.push(c),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn parses_every_operator() {
        let sel = LabelSelector::parse(
            "app=web, tier==front,env!=prod,zone in (a, b),team notin (x),canary,!legacy,gen>3,gen<9",
        )
        .unwrap();
        assert_eq!(sel.requirements().len(), 9);
        assert_eq!(
            sel.to_string(),
            "app=web,tier=front,env!=prod,zone in (a,b),team notin (x),canary,!legacy,gen>3,gen<9"
        );
        let l = labels(&[
            ("app", "web"),
            ("tier", "front"),
            ("zone", "b"),
            ("canary", ""),
            ("gen", "5"),
        ]);
        assert!(sel.matches(Some(&l)));
        let mut l2 = l.clone();
        l2.insert("legacy".into(), "1".into());
        assert!(!sel.matches(Some(&l2)));
    }

    #[test]
    fn negative_operators_match_missing_keys() {
        let sel = LabelSelector::parse("env!=prod,team notin (x)").unwrap();
        assert!(sel.matches(None));
        assert!(!sel.matches(Some(&labels(&[("env", "prod")]))));
        assert!(!LabelSelector::parse("env=prod").unwrap().matches(None));
        assert!(LabelSelector::parse("").unwrap().matches(None));
    }

    #[test]
    fn rejects_bad_selectors_with_the_text() {
        for bad in [
            "app=",
            "=x",
            "app in a",
            "app in (a",
            "a b",
            "app=web,",
            "-bad=x",
            "gen>x",
        ] {
            let res = LabelSelector::parse(bad);
            if bad == "app=" {
                // An empty value is valid in Kubernetes.
                assert!(res.is_ok(), "{bad}");
                continue;
            }
            let err = res.unwrap_err();
            assert_eq!(err.selector, bad);
        }
    }

    #[test]
    fn structured_selectors_convert() {
        let sel = metav1::LabelSelector {
            match_labels: Some(labels(&[("app", "web")])),
            match_expressions: Some(vec![metav1::LabelSelectorRequirement {
                key: "tier".into(),
                operator: "In".into(),
                values: Some(vec!["a".into()]),
            }]),
        };
        let sel = LabelSelector::try_from(&sel).unwrap();
        assert_eq!(sel.to_string(), "app=web,tier in (a)");
        let bad = metav1::LabelSelector {
            match_labels: None,
            match_expressions: Some(vec![metav1::LabelSelectorRequirement {
                key: "tier".into(),
                operator: "Like".into(),
                values: None,
            }]),
        };
        assert!(
            LabelSelector::try_from(&bad)
                .unwrap_err()
                .reason
                .contains("Like")
        );
    }

    #[test]
    fn field_selectors() {
        let sel =
            FieldSelector::parse("metadata.name=a\\,b,metadata.namespace!=kube-system").unwrap();
        assert_eq!(sel.requirements()[0].value, "a,b");
        assert!(sel.matches(|f| match f {
            "metadata.name" => Some("a,b"),
            "metadata.namespace" => Some("default"),
            _ => None,
        }));
        assert_eq!(
            sel.to_string(),
            "metadata.name=a\\,b,metadata.namespace!=kube-system"
        );
        assert!(FieldSelector::parse("metadata.name").is_err());
        assert!(FieldSelector::parse("").unwrap().is_everything());
    }

    /// Issue #19: what `fields.ParseSelector` refuses, and its splitting at the first
    /// operator.
    #[test]
    fn field_selectors_refuse_what_go_refuses() {
        for bad in [
            "a=b==c", "x=a!=b", "a==b=c", "a!=b=c", "a=b\\", "a=b\\x", "a", " ",
        ] {
            let err = FieldSelector::parse(bad).unwrap_err();
            assert_eq!(err.selector, bad);
        }
        let sel = FieldSelector::parse("a!b=c, d==e\\=f,,").unwrap();
        assert_eq!(
            sel.requirements(),
            [
                FieldRequirement {
                    field: "a!b".into(),
                    op: FieldOp::Equals,
                    value: "c".into()
                },
                FieldRequirement {
                    field: " d".into(),
                    op: FieldOp::Equals,
                    value: "e=f".into()
                },
            ]
        );
        assert_eq!(sel.to_string(), "a!b=c, d=e\\=f");
        assert_eq!(FieldSelector::parse(&sel.to_string()).unwrap(), sel);
    }

    /// Issue #19: only the lexer's whitespace separates; a Unicode space is part of a value,
    /// which is then invalid; matchLabels are validated.
    #[test]
    fn label_selectors_refuse_what_go_refuses() {
        for bad in [
            "app=web\u{a0}",
            "app=\u{2003}web",
            "app\u{85}=web",
            "gen>-1",
            "gen<+1",
            "app in (a\u{3000}b)",
        ] {
            assert!(LabelSelector::parse(bad).is_err(), "{bad:?}");
        }
        let sel = LabelSelector::parse("\tapp = web ,\r\ntier in(a)").unwrap();
        assert_eq!(sel.to_string(), "app=web,tier in (a)");
        let structured = metav1::LabelSelector {
            match_labels: Some(labels(&[("app", "web,tier=db")])),
            match_expressions: None,
        };
        let err = LabelSelector::try_from(&structured).unwrap_err();
        assert!(err.reason.contains("matchLabels"), "{err}");
        let bad_key = metav1::LabelSelector {
            match_labels: Some(labels(&[("app in (x)", "web")])),
            match_expressions: None,
        };
        assert!(LabelSelector::try_from(&bad_key).is_err());
        let bad_value = metav1::LabelSelector {
            match_labels: None,
            match_expressions: Some(vec![metav1::LabelSelectorRequirement {
                key: "tier".into(),
                operator: "In".into(),
                values: Some(vec!["a),b in (c".into()]),
            }]),
        };
        assert!(LabelSelector::try_from(&bad_value).is_err());
        assert!(LabelSelector::try_from_labels([("app", "web,tier=db")]).is_err());
        assert_eq!(
            LabelSelector::try_from_labels([("b", "2"), ("a", "1")])
                .unwrap()
                .to_string(),
            "a=1,b=2"
        );
    }
}
