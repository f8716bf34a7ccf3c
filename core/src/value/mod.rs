//! Values that keep the exact form they were sent in: a [`Quantity`] that remembers whether
//! it was a JSON number or a string, a [`Timestamp`] that keeps its fraction and offset, and
//! the standard [`Condition`] of a status, whose transition time is such a timestamp.
//!
//! The API server stores a custom resource's JSON as it was sent (after pruning and
//! defaulting): `cpu: 2` stays a number, `"2024-01-01T02:00:00.5+02:00"` keeps its fraction
//! and offset. k8s-openapi's `Quantity` writes every quantity as a string (`2` comes back as
//! `"2"`), and its `Time` writes whole seconds in UTC (`"…00.5+02:00"` comes back as
//! `"…00Z"`): right for built-in kinds, whose Go types canonicalise the same way, but a
//! rewrite of a custom resource, whose stored form is the sent form. Generated CRD types use
//! these instead (`int-or-string` with the quantity pattern, `format: date-time`); a `number`
//! is a `serde_json::Number`, which keeps `3` an integer and `3.5` a float (without
//! serde_json's `arbitrary_precision`, which is global to a build, a number beyond `f64` is
//! rounded as everywhere else in serde_json).
//!
//! Written by hand, a few lines over `String`/`serde_json::Number`; parsing goes to `jiff`,
//! which k8s-openapi already depends on and re-exports. Crates considered: k8s-openapi's
//! `Quantity`/`Time` (rewrite the values, as said above), jiff's `Timestamp` and chrono's
//! `DateTime` (parse the text but write their own form).

use std::borrow::Cow;
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Number;

mod condition;

pub use condition::{
    Condition, ConditionApply, find_condition, is_condition_true, remove_condition, set_condition,
};

/// A resource quantity (`resource.Quantity`) as sent: a JSON number (`2`) or a string
/// (`"500m"`, `"1Gi"`), written back the same way.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Quantity {
    /// A JSON number (`cpu: 2`).
    Number(Number),
    /// A JSON string (`cpu: "500m"`).
    String(String),
}

impl Quantity {
    /// The quantity's text: the string as sent, or the number's decimal form.
    pub fn as_str(&self) -> Cow<'_, str> {
        match self {
            Quantity::Number(n) => Cow::Owned(n.to_string()),
            Quantity::String(s) => Cow::Borrowed(s),
        }
    }

    /// k8s-openapi's `Quantity` of the same text (always a string on the wire).
    pub fn to_k8s(&self) -> k8s_openapi::apimachinery::pkg::api::resource::Quantity {
        k8s_openapi::apimachinery::pkg::api::resource::Quantity(self.as_str().into_owned())
    }

    /// The value as a float, read as `resource.ParseQuantity` reads the text: a decimal
    /// number, then a binary (`Ki` .. `Ei`) or decimal (`n`, `u`, `m`, `k`, `M` .. `E`)
    /// suffix, or an exponent (`1e3`). `None` when the text is not a quantity.
    pub fn to_f64(&self) -> Option<f64> {
        if let Quantity::Number(n) = self {
            return n.as_f64();
        }
        let text = self.as_str();
        let text = text.trim();
        let split = text
            .find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | '+' | '-')))
            .unwrap_or(text.len());
        let (number, suffix) = text.split_at(split);
        if number.is_empty() || number == "+" || number == "-" {
            return None;
        }
        let base: f64 = number.parse().ok()?;
        let scale = match suffix {
            "" => 1.0,
            "n" => 1e-9,
            "u" => 1e-6,
            "m" => 1e-3,
            "k" => 1e3,
            "M" => 1e6,
            "G" => 1e9,
            "T" => 1e12,
            "P" => 1e15,
            "E" => 1e18,
            "Ki" => 1024f64,
            "Mi" => 1024f64.powi(2),
            "Gi" => 1024f64.powi(3),
            "Ti" => 1024f64.powi(4),
            "Pi" => 1024f64.powi(5),
            "Ei" => 1024f64.powi(6),
            exp => {
                let exp = exp.strip_prefix(['e', 'E'])?;
                10f64.powi(exp.parse().ok()?)
            }
        };
        Some(base * scale)
    }
}

impl fmt::Display for Quantity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.as_str())
    }
}

impl From<&str> for Quantity {
    fn from(s: &str) -> Self {
        Quantity::String(s.to_owned())
    }
}

impl From<String> for Quantity {
    fn from(s: String) -> Self {
        Quantity::String(s)
    }
}

impl From<i64> for Quantity {
    fn from(n: i64) -> Self {
        Quantity::Number(n.into())
    }
}

impl From<k8s_openapi::apimachinery::pkg::api::resource::Quantity> for Quantity {
    fn from(q: k8s_openapi::apimachinery::pkg::api::resource::Quantity) -> Self {
        Quantity::String(q.0)
    }
}

/// An RFC 3339 timestamp (`format: date-time`) kept as the text that was sent, with its
/// fraction and offset (`"2024-01-01T02:00:00.123456+02:00"`); [`Timestamp::parse`] reads it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Timestamp(pub String);

impl Timestamp {
    /// The current instant in whole seconds, UTC (`"2024-01-01T00:00:00Z"`): how Go writes
    /// `metav1.Now()`.
    pub fn now() -> Self {
        let secs = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
        let now = k8s_openapi::jiff::Timestamp::from_second(secs)
            .unwrap_or(k8s_openapi::jiff::Timestamp::MAX);
        Timestamp(now.strftime("%Y-%m-%dT%H:%M:%SZ").to_string())
    }

    /// The text as sent.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The instant, parsed as RFC 3339 (any fraction, `Z` or a numeric offset).
    ///
    /// # Errors
    ///
    /// When the text is not an RFC 3339 timestamp.
    pub fn parse(&self) -> Result<k8s_openapi::jiff::Timestamp, k8s_openapi::jiff::Error> {
        self.0.parse()
    }

    /// k8s-openapi's `Time` of the same instant (which writes whole seconds in UTC).
    ///
    /// # Errors
    ///
    /// When the text is not an RFC 3339 timestamp.
    pub fn to_time(
        &self,
    ) -> Result<k8s_openapi::apimachinery::pkg::apis::meta::v1::Time, k8s_openapi::jiff::Error>
    {
        self.parse()
            .map(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time)
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<k8s_openapi::jiff::Timestamp> for Timestamp {
    /// RFC 3339 in UTC, with the fraction only when there is one.
    fn from(t: k8s_openapi::jiff::Timestamp) -> Self {
        Timestamp(t.to_string())
    }
}

impl From<k8s_openapi::apimachinery::pkg::apis::meta::v1::Time> for Timestamp {
    fn from(t: k8s_openapi::apimachinery::pkg::apis::meta::v1::Time) -> Self {
        Timestamp::from(t.0)
    }
}

impl From<&str> for Timestamp {
    fn from(s: &str) -> Self {
        Timestamp(s.to_owned())
    }
}

#[cfg(feature = "derive")]
impl schemars::JsonSchema for Timestamp {
    fn schema_name() -> Cow<'static, str> {
        "Timestamp".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({"type": "string", "format": "date-time"})
    }
}

#[cfg(feature = "derive")]
impl schemars::JsonSchema for Quantity {
    fn schema_name() -> Cow<'static, str> {
        "Quantity".into()
    }

    /// The schema controller-gen writes for `resource.Quantity`.
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "anyOf": [{"type": "integer"}, {"type": "string"}],
            "pattern": QUANTITY_PATTERN,
            "x-kubernetes-int-or-string": true
        })
    }
}

/// The pattern of `resource.Quantity`'s schema (apimachinery's OpenAPI definition, and what
/// controller-gen writes into CRDs): an int-or-string with it is a [`Quantity`].
pub const QUANTITY_PATTERN: &str = r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$";

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn quantities_keep_their_json_form() {
        for v in [json!(2), json!("2"), json!("500m"), json!(1.5)] {
            let q: Quantity = serde_json::from_value(v.clone()).unwrap();
            assert_eq!(serde_json::to_value(&q).unwrap(), v);
        }
        let q: Quantity = serde_json::from_value(json!(2)).unwrap();
        assert_eq!(q.as_str(), "2");
        assert_eq!(q.to_k8s().0, "2");
    }

    #[test]
    fn quantities_parse_their_suffixes() {
        let f = |s: &str| Quantity::from(s).to_f64();
        assert_eq!(f("500m"), Some(0.5));
        assert_eq!(f("1Gi"), Some(1073741824.0));
        assert_eq!(f("2k"), Some(2000.0));
        assert_eq!(f("1e3"), Some(1000.0));
        assert_eq!(f("-1.5"), Some(-1.5));
        assert_eq!(f("abc"), None);
        assert_eq!(f("1Xi"), None);
        assert_eq!(Quantity::from(4).to_f64(), Some(4.0));
    }

    #[test]
    fn timestamps_keep_fraction_and_offset() {
        for s in ["2024-01-01T00:00:00.123456Z", "2024-01-01T02:00:00+02:00"] {
            let t: Timestamp = serde_json::from_value(json!(s)).unwrap();
            assert_eq!(serde_json::to_value(&t).unwrap(), json!(s));
        }
        let a = Timestamp::from("2024-01-01T02:00:00+02:00")
            .parse()
            .unwrap();
        let b = Timestamp::from("2024-01-01T00:00:00Z").parse().unwrap();
        assert_eq!(a, b);
        assert!(Timestamp::from("yesterday").parse().is_err());
        let t = Timestamp::from("2024-01-01T00:00:00.5Z").to_time().unwrap();
        assert_eq!(Timestamp::from(t).as_str(), "2024-01-01T00:00:00.5Z");
    }

    #[test]
    fn numbers_keep_integer_ness() {
        for v in [json!(3), json!(3.5), json!(-1)] {
            let n: Number = serde_json::from_value(v.clone()).unwrap();
            assert_eq!(serde_json::to_value(&n).unwrap(), v);
        }
    }
}
