//! Borrowed cache keys.
//!
//! The store and the DeltaFIFO never keep a key string per object: an entry's key is derived
//! from the object it holds (`metadata.namespace` and `metadata.name`), and a lookup by a key
//! string compares against that. [`ObjectKey`] is the borrowed, split form both sides agree
//! on, so that hashing the string `"ns/name"` and hashing an object whose key it is give the
//! same result without building the string.

use std::fmt;

use crate::resource::{HasMetadata, object_key, split_key};

/// A cache key (`namespace/name`, or `name`) borrowed from an object or a key string.
///
/// Two `ObjectKey`s are equal exactly when the key strings they stand for are equal: the
/// canonical form is the split of the key string at its first `/`, as client-go's
/// `SplitMetaNamespaceKey`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ObjectKey<'a> {
    namespace: Option<&'a str>,
    name: &'a str,
}

impl<'a> ObjectKey<'a> {
    /// The key of an object in `namespace` (or cluster-scoped when `None` or empty) named `name`.
    pub fn new(namespace: Option<&'a str>, name: &'a str) -> Self {
        match namespace {
            Some(ns) if !ns.is_empty() => Self {
                namespace: Some(ns),
                name,
            },
            _ => Self::parse(name),
        }
    }

    /// Splits a key string (`namespace/name` or `name`).
    pub fn parse(key: &'a str) -> Self {
        let (namespace, name) = split_key(key);
        Self { namespace, name }
    }

    /// The key of `obj`, borrowed from its metadata.
    pub fn of<K: HasMetadata + ?Sized>(obj: &'a K) -> Self {
        Self::new(obj.namespace(), obj.name())
    }

    /// The part before the first `/`, if any (the namespace for well-formed keys).
    pub fn namespace(&self) -> Option<&'a str> {
        self.namespace
    }

    /// The part after the first `/`, or the whole key (the name for well-formed keys).
    pub fn name(&self) -> &'a str {
        self.name
    }

    /// The key as an owned string.
    pub fn to_key(&self) -> String {
        match self.namespace {
            // `Some("")` only comes from parsing a key that starts with `/`: keep the slash.
            Some("") => format!("/{}", self.name),
            ns => object_key(ns, self.name),
        }
    }
}

impl fmt::Display for ObjectKey<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.namespace {
            Some(ns) => write!(f, "{ns}/{}", self.name),
            None => f.write_str(self.name),
        }
    }
}

impl PartialEq<str> for ObjectKey<'_> {
    fn eq(&self, other: &str) -> bool {
        *self == ObjectKey::parse(other)
    }
}

impl PartialEq<&str> for ObjectKey<'_> {
    fn eq(&self, other: &&str) -> bool {
        *self == ObjectKey::parse(other)
    }
}

impl PartialEq<String> for ObjectKey<'_> {
    fn eq(&self, other: &String) -> bool {
        *self == ObjectKey::parse(other)
    }
}

impl From<ObjectKey<'_>> for String {
    fn from(key: ObjectKey<'_>) -> Self {
        key.to_key()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_and_parts_agree() {
        for key in ["ns/name", "name", "a/b/c", "/x", "x/", ""] {
            let k = ObjectKey::parse(key);
            assert_eq!(k.to_key(), key);
            assert_eq!(k.to_string(), key);
            assert_eq!(k, key);
            if k.namespace() != Some("") {
                assert_eq!(ObjectKey::new(k.namespace(), k.name()).to_key(), key);
            }
        }
        // A cluster-scoped object named "/x" has the key "/x".
        assert_eq!(ObjectKey::new(None, "/x"), ObjectKey::parse("/x"));
        assert_eq!(ObjectKey::new(Some(""), "n"), ObjectKey::parse("n"));
        assert_eq!(ObjectKey::new(None, "a/b"), ObjectKey::parse("a/b"));
        assert_eq!(ObjectKey::new(Some("a"), "b/c"), ObjectKey::parse("a/b/c"));
    }
}
