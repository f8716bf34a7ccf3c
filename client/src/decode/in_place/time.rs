//! `Time`, the most frequent value decoded afresh (every condition, container state and
//! managedFields entry has one), without jiff's general parser for the form Kubernetes
//! writes: `YYYY-MM-DDTHH:MM:SSZ` (RFC 3339 in UTC, whole seconds; apimachinery's
//! `metav1.Time` marshals exactly this). A string of that form with a valid date and time
//! is the same instant for jiff (k8s-openapi's `Time` deserializes a `jiff::Timestamp`
//! from it), so it is computed directly; every other string or value (fractions, offsets,
//! a leap second, a date that does not exist, years before 1) goes to jiff as on the
//! ordinary path, and its result or error stands.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;

use super::fields::Required;
use super::{InPlace, Mismatch, Result, Scratch, Value, fresh};

impl InPlace for Time {
    fn decode_new<'i>(v: Value<'_, 'i>, cx: &mut Scratch<'i>) -> Result<Self> {
        match v.str().ok().and_then(utc_seconds) {
            Some(t) => Ok(Time(t)),
            None => fresh(v, cx),
        }
    }
}

/// k8s-openapi has no default `Time`: an absent required one is a missing field.
impl Required for Time {
    fn clear_in_place(&mut self) -> Result {
        Err(Mismatch)
    }
}

/// The instant `s` names when it is `YYYY-MM-DDTHH:MM:SSZ` with a valid date and time.
fn utc_seconds(s: &str) -> Option<Timestamp> {
    let b: &[u8; 20] = s.as_bytes().try_into().ok()?;
    let syntax = [
        (4, b'-'),
        (7, b'-'),
        (10, b'T'),
        (13, b':'),
        (16, b':'),
        (19, b'Z'),
    ];
    if syntax.iter().any(|&(i, c)| b[i] != c) {
        return None;
    }
    let num = |from: usize, to: usize| -> Option<i64> {
        b[from..to].iter().try_fold(0i64, |n, &d| {
            d.is_ascii_digit().then(|| n * 10 + i64::from(d - b'0'))
        })
    };
    let (year, month, day) = (num(0, 4)?, num(5, 7)?, num(8, 10)?);
    let (hour, minute, second) = (num(11, 13)?, num(14, 16)?, num(17, 19)?);
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let month_days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return None,
    };
    if year < 1 || !(1..=month_days).contains(&day) || hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    let days = days_from_civil(year, month, day);
    Timestamp::from_second(days * 86_400 + hour * 3_600 + minute * 60 + second).ok()
}

/// Days from 1970-01-01 to a date of the proleptic Gregorian calendar (year >= 1): the
/// count of days of the 400-year eras, each starting on March 1st so that the leap day
/// ends a year.
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let year_of_era = y - era * 400;
    let day_of_year = (153 * ((month + 9) % 12) + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// What k8s-openapi's `Time` (jiff) makes of `s`.
    fn jiff(s: &str) -> Option<Timestamp> {
        serde_json::from_value::<Time>(s.into()).ok().map(|t| t.0)
    }

    #[test]
    fn the_canonical_form_is_the_instant_jiff_reads_and_others_go_to_jiff() {
        for s in [
            "1970-01-01T00:00:00Z",
            "2024-02-29T23:59:59Z",
            "2000-02-29T12:00:00Z",
            "1900-02-28T00:00:00Z",
            "0001-01-01T00:00:00Z",
            "1969-12-31T23:59:59Z",
            "2026-11-27T14:01:19Z",
        ] {
            assert_eq!(utc_seconds(s), jiff(s), "{s}");
            assert!(utc_seconds(s).is_some(), "{s}");
        }
        for s in [
            "1900-02-29T00:00:00Z",
            "2023-02-29T00:00:00Z",
            "2024-04-31T00:00:00Z",
            "2024-13-01T00:00:00Z",
            "2024-00-01T00:00:00Z",
            "2024-01-00T00:00:00Z",
            "2024-01-01T24:00:00Z",
            "2024-01-01T00:60:00Z",
            "2024-01-01T23:59:60Z",
            "0000-01-01T00:00:00Z",
            // Past jiff's last instant.
            "9999-12-31T23:59:59Z",
            "2024-01-01T00:00:00.5Z",
            "2024-01-01T00:00:00+01:00",
            "2024-01-01t00:00:00z",
            "2024-01-01 00:00:00Z",
            "+2024-01-01T00:00:0Z",
            "2024-01-01T00:00:00",
        ] {
            assert_eq!(utc_seconds(s), None, "{s} goes to jiff");
        }
    }

    proptest! {
        #[test]
        fn any_string_of_the_form_is_what_jiff_reads_or_goes_to_jiff(
            y in 0u32..10_000, mo in 0u32..14, d in 0u32..33,
            h in 0u32..26, mi in 0u32..62, s in 0u32..62,
        ) {
            let text = format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}Z");
            if let Some(t) = utc_seconds(&text) {
                prop_assert_eq!(Some(t), jiff(&text), "{}", text);
            }
            if s < 60 && y > 0 {
                // Valid for jiff is valid here.
                prop_assert_eq!(utc_seconds(&text), jiff(&text), "{}", text);
            }
        }
    }
}
