//! The Kubernetes name rules the readers enforce before a name reaches [`crate::naming`].
//!
//! Group, version, plural, kind and subresource names become Rust modules, types and
//! accessors; a name the API server would never accept (`ü`, `}`, `a b`) could only become
//! Rust that collides or does not compile. The readers therefore reject, with the document
//! and path of the offending value, what apiextensions-apiserver's CRD validation
//! (`ValidateCustomResourceDefinitionNames`, `ValidateCustomResourceDefinitionSpec`) rejects:
//!
//! - group: a DNS-1123 subdomain (`IsDNS1123Subdomain`); for CRDs also with at least one dot;
//! - version, plural, singular, short names, categories, subresources: DNS-1035 labels
//!   (`IsDNS1035Label`);
//! - kind and list kind: DNS-1035 labels once lower-cased;
//!
//! and, for k8s-openapi type names derived from OpenAPI definition names, every segment must
//! be a Rust identifier ([`is_rust_path_segment`]).

/// An RFC 1035 label as apimachinery's `IsDNS1035Label`: at most 63 characters, lower-case
/// ASCII letters, digits and `-`, starting with a letter, ending with a letter or digit.
pub fn is_dns1035_label(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 63
        && b[0].is_ascii_lowercase()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
}

/// An RFC 1123 subdomain as apimachinery's `IsDNS1123Subdomain`: at most 253 characters,
/// dot-separated labels of lower-case ASCII letters, digits and `-`, each starting and ending
/// with a letter or digit.
pub fn is_dns1123_subdomain(s: &str) -> bool {
    s.len() <= 253
        && s.split('.').all(|label| {
            let b = label.as_bytes();
            !b.is_empty()
                && b[0].is_ascii_alphanumeric()
                && b[b.len() - 1].is_ascii_alphanumeric()
                && b.iter()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        })
}

/// A kind as apiextensions validates one: its lower-case form is a DNS-1035 label.
pub fn is_kind(s: &str) -> bool {
    is_dns1035_label(&s.to_ascii_lowercase()) && s.is_ascii()
}

/// A segment of a Rust path as emitted (after `-` -> `_`): ASCII letter or `_`, then ASCII
/// letters, digits and `_`, not `_` alone nor a keyword.
pub fn is_rust_path_segment(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && s != "_"
        && !crate::naming::is_keyword(s)
        && (b[0].is_ascii_alphabetic() || b[0] == b'_')
        && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dns_labels_and_subdomains() {
        assert!(is_dns1035_label("widgets"));
        assert!(is_dns1035_label("v1beta1"));
        assert!(!is_dns1035_label("ü"));
        assert!(!is_dns1035_label("}"));
        assert!(!is_dns1035_label("1abc"));
        assert!(!is_dns1035_label("abc-"));
        assert!(!is_dns1035_label(""));
        assert!(is_dns1123_subdomain("example.com"));
        assert!(is_dns1123_subdomain("cert-manager.io"));
        assert!(!is_dns1123_subdomain("Example.com"));
        assert!(!is_dns1123_subdomain("a..b"));
        assert!(!is_dns1123_subdomain("foo}"));
        assert!(is_kind("HTTPRoute"));
        assert!(!is_kind("Wid)get"));
        assert!(!is_kind("Ü"));
        assert!(is_rust_path_segment("v1"));
        assert!(is_rust_path_segment("apiextensions_apiserver"));
        assert!(!is_rust_path_segment("Wid)get"));
        assert!(!is_rust_path_segment("1a"));
        assert!(!is_rust_path_segment("_"));
        assert!(!is_rust_path_segment("type"));
    }
}
