//! Comparing resourceVersions as KEP-5504 allows: two well-formed versions (ASCII digits,
//! at least one, no leading zero) compare as the integers they spell; anything else cannot
//! be compared.

use std::cmp::Ordering;

/// A resourceVersion that is not a well-formed integer (KEP-5504): an aggregated API
/// server's opaque version, `""`, `"0"` (which names no state), or a version with a
/// leading zero. Code that meets one *fails open*: it treats the comparison as caught up,
/// and counts it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("resourceVersion {0:?} is not a comparable integer (KEP-5504)")]
pub struct IncomparableVersion(pub String);

/// Whether `rv` is well-formed by KEP-5504's rules: at least one character, only `0`-`9`,
/// no leading zero (so `"0"` is not: the API uses it for "any version", never for a state).
pub fn is_comparable(rv: &str) -> bool {
    let b = rv.as_bytes();
    !b.is_empty() && b[0] != b'0' && b.iter().all(u8::is_ascii_digit)
}

/// Compares two resourceVersions as KEP-5504's `CompareResourceVersion` does: by length,
/// then digit by digit, so versions of any size compare (no integer overflows).
///
/// ```
/// use std::cmp::Ordering;
/// use kinform_runtime::consistency::compare_resource_versions;
///
/// assert_eq!(compare_resource_versions("99", "100"), Ok(Ordering::Less));
/// assert!(compare_resource_versions("abc", "100").is_err());
/// ```
pub fn compare_resource_versions(a: &str, b: &str) -> Result<Ordering, IncomparableVersion> {
    for rv in [a, b] {
        if !is_comparable(rv) {
            return Err(IncomparableVersion(rv.to_owned()));
        }
    }
    Ok(a.len().cmp(&b.len()).then_with(|| a.cmp(b)))
}

/// The integer a well-formed resourceVersion spells, when it fits in a `u64` (every version
/// etcd hands out does: they are its 64-bit revisions). `None` when it is not well-formed
/// or larger (then it is treated as incomparable).
pub fn parse_resource_version(rv: &str) -> Option<u64> {
    if !is_comparable(rv) || rv.len() > 20 {
        return None;
    }
    rv.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn well_formed_versions_compare_as_integers() {
        assert_eq!(compare_resource_versions("9", "10"), Ok(Ordering::Less));
        assert_eq!(compare_resource_versions("10", "10"), Ok(Ordering::Equal));
        assert_eq!(compare_resource_versions("20", "19"), Ok(Ordering::Greater));
        // Larger than any u128: still compared, by length then digits.
        let huge = "1".repeat(60);
        assert_eq!(compare_resource_versions(&huge, "5"), Ok(Ordering::Greater));
    }

    #[test]
    fn malformed_versions_are_incomparable() {
        for bad in ["", "0", "012", "12a", "-1", " 1", "1.5", "a1b2"] {
            assert!(!is_comparable(bad), "{bad:?}");
            assert_eq!(
                compare_resource_versions(bad, "1"),
                Err(IncomparableVersion(bad.to_owned()))
            );
            assert_eq!(
                compare_resource_versions("1", bad),
                Err(IncomparableVersion(bad.to_owned()))
            );
            assert_eq!(parse_resource_version(bad), None);
        }
    }

    #[test]
    fn parse_keeps_what_fits_in_u64() {
        assert_eq!(parse_resource_version("1"), Some(1));
        assert_eq!(
            parse_resource_version("18446744073709551615"),
            Some(u64::MAX)
        );
        assert_eq!(parse_resource_version("18446744073709551616"), None);
        assert_eq!(parse_resource_version(&"9".repeat(30)), None);
    }
}
