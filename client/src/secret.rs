//! A wrapper that keeps secrets (tokens, passwords, private keys) out of `Debug` output.
//!
//! client-go redacts bearer tokens and key data when printing a `rest.Config`
//! (`rest.Config.String()`); every secret-bearing field of kinform's configuration is a
//! [`Secret`], so a `{:?}` of any config, kubeconfig or client prints `[redacted]` in its place.
//!
//! URLs are the other place a credential hides: a `proxy-url` may carry `user:password@`.
//! [`redact_userinfo`] gives the text a URL is printed as, in `Debug` and in error messages,
//! with that part replaced by `***`; the URL itself is kept whole for connecting.

use std::borrow::Cow;
use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A value that must never be printed. `Debug` shows `Secret([redacted])`.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Secret<T>(T);

impl<T> Secret<T> {
    /// Wraps a secret value.
    pub fn new(value: T) -> Self {
        Self(value)
    }

    /// The secret value. Call sites that use it are the only places a secret is read.
    pub fn expose(&self) -> &T {
        &self.0
    }

    /// Unwraps the secret value.
    pub fn into_inner(self) -> T {
        self.0
    }
}

impl<T> fmt::Debug for Secret<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret([redacted])")
    }
}

impl<T> From<T> for Secret<T> {
    fn from(value: T) -> Self {
        Self(value)
    }
}

impl<T: Serialize> Serialize for Secret<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Secret<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        T::deserialize(deserializer).map(Self)
    }
}

/// `url` with its userinfo (`user:password@`) replaced by `***@`, for printing:
/// `http://me:pw@proxy:3128` shows as `http://***@proxy:3128`.
///
/// Works on text that is not a valid URL too (it is used in the message saying so): the
/// userinfo is everything between `://` (or the start, without a scheme) and the last `@`,
/// so a password with an unescaped `/`, `?` or `@` is hidden whole. A path holding an `@`
/// is over-redacted, which only costs readability.
pub(crate) fn redact_userinfo(url: &str) -> Cow<'_, str> {
    let start = url.find("://").map_or(0, |i| i + 3);
    match url[start..].rfind('@') {
        Some(at) => Cow::Owned(format!("{}***{}", &url[..start], &url[start + at..])),
        None => Cow::Borrowed(url),
    }
}

/// `Debug` of a URL through [`redact_userinfo`], printed as a quoted string.
pub(crate) struct RedactedUrl<'a>(pub(crate) &'a str);

impl fmt::Debug for RedactedUrl<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*redact_userinfo(self.0), f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn userinfo_is_replaced_and_the_rest_kept() {
        let cases = [
            ("http://me:pw@proxy:3128", "http://***@proxy:3128"),
            ("http://me:pw@proxy:3128/", "http://***@proxy:3128/"),
            ("http://token@proxy", "http://***@proxy"),
            ("http://me:p/w?x#@proxy:3128", "http://***@proxy:3128"),
            ("http://me:p@w@proxy", "http://***@proxy"),
            ("me:pw@proxy:3128", "***@proxy:3128"),
            ("http://proxy.example:3128", "http://proxy.example:3128"),
            ("", ""),
        ];
        for (url, shown) in cases {
            assert_eq!(redact_userinfo(url), shown, "{url}");
        }
        assert_eq!(
            format!("{:?}", RedactedUrl("http://a:b@h")),
            "\"http://***@h\""
        );
    }

    #[test]
    fn debug_is_redacted() {
        let s = Secret::new("hunter2".to_string());
        assert_eq!(format!("{s:?}"), "Secret([redacted])");
        assert_eq!(s.expose(), "hunter2");
    }
}
