//! Rust names for groups, versions, resources and their accessors.
//!
//! client-go names a built-in group after its first DNS label (`rbac.authorization.k8s.io`
//! -> `RbacV1()`, `apps` -> `AppsV1()`, the core group -> `CoreV1()`); we do the same for
//! groups that are Kubernetes' own (no dot, or under `.k8s.io`), and use the whole group for
//! everyone else's (`example.com` -> `example_com`), where the first label alone (`example`,
//! `cert-manager`'s `cert`) would say little and collide often. Two groups that would still
//! get the same name both fall back to their whole name. Every name is a valid, non-keyword
//! identifier, and the same model always gives the same names.

use std::collections::BTreeMap;

use heck::{ToSnakeCase, ToUpperCamelCase};

pub use super::naming::ident;
use super::naming::is_keyword;

/// A `snake_case` identifier for any string: non-alphanumerics become `_`, a leading digit
/// gets a `_` prefix, keywords get a `_` suffix.
pub fn snake(s: &str) -> String {
    let cleaned: String = s
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    let mut out = cleaned.to_snake_case();
    if out.is_empty() {
        out.push('_');
    }
    if out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, '_');
    }
    if is_keyword(&out) {
        out.push('_');
    }
    out
}

/// An `UpperCamelCase` identifier for any string (`example_com` -> `ExampleCom`).
pub fn camel(s: &str) -> String {
    let cleaned: String = s
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    let mut out = cleaned.to_upper_camel_case();
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, 'X');
    }
    if is_keyword(&out) {
        out.push('_');
    }
    out
}

/// Whether the group is one of Kubernetes' own.
fn is_kubernetes_group(group: &str) -> bool {
    !group.contains('.') || group.ends_with(".k8s.io")
}

/// The short name of a group before collision handling.
fn short_name(group: &str) -> String {
    if group.is_empty() {
        "core".to_owned()
    } else if is_kubernetes_group(group) {
        snake(group.split('.').next().unwrap_or(group))
    } else {
        snake(group)
    }
}

/// The module / accessor name of every group: `""` -> `core`, `apps` -> `apps`,
/// `rbac.authorization.k8s.io` -> `rbac`, `example.com` -> `example_com`.
pub fn group_names<'a>(groups: impl IntoIterator<Item = &'a str>) -> BTreeMap<String, String> {
    let groups: Vec<&str> = groups.into_iter().collect();
    let mut count: BTreeMap<String, usize> = BTreeMap::new();
    for g in &groups {
        *count.entry(short_name(g)).or_default() += 1;
    }
    groups
        .iter()
        .map(|g| {
            let short = short_name(g);
            let name = if count[&short] > 1 && !g.is_empty() {
                snake(g)
            } else {
                short
            };
            ((*g).to_owned(), name)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_naming() {
        let names = group_names([
            "",
            "apps",
            "rbac.authorization.k8s.io",
            "authorization.k8s.io",
            "example.com",
            "cert-manager.io",
            "cluster.x-k8s.io",
        ]);
        assert_eq!(names[""], "core");
        assert_eq!(names["apps"], "apps");
        assert_eq!(names["rbac.authorization.k8s.io"], "rbac");
        assert_eq!(names["authorization.k8s.io"], "authorization");
        assert_eq!(names["example.com"], "example_com");
        assert_eq!(names["cert-manager.io"], "cert_manager_io");
        assert_eq!(names["cluster.x-k8s.io"], "cluster_x_k8s_io");
    }

    #[test]
    fn collisions_fall_back_to_whole_names() {
        let names = group_names(["foo.k8s.io", "foo"]);
        assert_eq!(names["foo.k8s.io"], "foo_k8s_io");
        assert_eq!(names["foo"], "foo");
    }

    #[test]
    fn identifiers_are_valid() {
        assert_eq!(snake("type"), "type_");
        assert_eq!(snake("3d"), "_3d");
        assert_eq!(snake("ephemeralcontainers"), "ephemeralcontainers");
        assert_eq!(camel("example_com"), "ExampleCom");
        assert_eq!(camel("v1beta1"), "V1beta1");
        assert_eq!(camel("foo"), "Foo");
    }
}
