//! Every Rust name the generator chooses: fields, types, modules, groups, accessors.
//!
//! One module, used by readers (type and field names in the model) and emitters (modules,
//! accessors, clients) alike, so one input string always becomes one identifier wherever it
//! is named. Kubernetes JSON names are camelCase, but CRDs also carry snake_case
//! (`init_containers`), dashes (`hugepages-1Gi`), leading symbols (`$ref`, `x-kubernetes-*`),
//! Rust keywords (`type`, `ref`, `match`, `enum`) and upper-case acronyms (`HPAReplicas`); the
//! JSON name is kept separately (serde renames), so nothing depends on the conversion being
//! reversible.
//!
//! Words are split as heck splits them (crates considered: heck, which this module replaced,
//! and convert_case; both cut `NVMeOF` into `nv_me_of`), with one rule more: an acronym keeps a
//! single lower-case letter that an upper-case letter, a digit or the end follows, so
//! acronyms stay whole (`CephNVMeOFGateway` -> `ceph_nvmeof_gateway`, `podIPs` -> `pod_ips`,
//! `IPv6Address` -> `ipv6_address`, `HTTPRoute` -> `http_route`), as k8s-openapi names
//! `podIPs` `pod_ips`.
//!
//! # Group names
//!
//! A group's module and accessor name never takes a name of `kinform-api`'s, and depends on
//! the group alone, so crates generated apart can be used side by side (their preludes
//! glob-imported together):
//!
//! - the groups kube-apiserver serves itself ([`BUILT_IN_GROUPS`], the groups of
//!   `kinform-api`) are named as client-go names them, after their first DNS label
//!   (`rbac.authorization.k8s.io` -> `rbac`, `apps` -> `apps`, the core group -> `core`);
//! - other groups under `.k8s.io` (Kubernetes' own, named in API review) too, unless that
//!   label is a built-in group's name: `gateway.networking.k8s.io` -> `gateway`, but
//!   `policy.networking.k8s.io` -> `policy_networking_k8s_io` (the built-in `policy` group
//!   has `policy`);
//! - every other group keeps its whole name: `example.com` -> `example_com`,
//!   `cluster.x-k8s.io` -> `cluster_x_k8s_io`, where the first label alone (`example`,
//!   cert-manager's `cert`) would say little and collide often. Such a name holds a `_`
//!   when the group holds a dot, as every CRD's does, and no built-in group's name does.
//!
//! Two groups of one run that would still get one name (two `.k8s.io` groups with one first
//! label, or groups that differ only in `-` against `.`) both take their whole names, the
//! later of those that still clash a `_2` suffix. Crates generated apart can clash only
//! there, or when both generate the same group.

use std::collections::{BTreeMap, BTreeSet};

use proc_macro2::{Ident, Span};

/// Strict and reserved keywords of Rust 2024 (all usable as raw identifiers except
/// [`NON_RAW_KEYWORDS`]).
const KEYWORDS: &[&str] = &[
    "abstract", "as", "async", "await", "become", "box", "break", "const", "continue", "crate",
    "do", "dyn", "else", "enum", "extern", "false", "final", "fn", "for", "gen", "if", "impl",
    "in", "let", "loop", "macro", "match", "mod", "move", "mut", "override", "priv", "pub", "ref",
    "return", "self", "Self", "static", "struct", "super", "trait", "true", "try", "type",
    "typeof", "unsafe", "unsized", "use", "virtual", "where", "while", "yield",
];

/// Keywords that cannot be raw identifiers.
const NON_RAW_KEYWORDS: &[&str] = &["self", "Self", "super", "crate", "_"];

/// Names of the Rust prelude: generated types never take them, and generated code never
/// imports another item under one of them.
pub const RESERVED_TYPE_NAMES: &[&str] = &[
    "Option",
    "Some",
    "None",
    "String",
    "Vec",
    "Box",
    "Result",
    "Ok",
    "Err",
    "Default",
    "Clone",
    "Copy",
    "Debug",
    "PartialEq",
    "Eq",
    "Send",
    "Sync",
    "Sized",
    "From",
    "Into",
    "Self",
    "ToString",
    "Iterator",
    "Drop",
    "Fn",
    "FnMut",
    "FnOnce",
    "AsRef",
    "AsMut",
    "IntoIterator",
    "ToOwned",
    "PartialOrd",
    "Ord",
    "Extend",
];

/// Whether `s` is a Rust keyword (strict or reserved).
pub fn is_keyword(s: &str) -> bool {
    KEYWORDS.contains(&s)
}

/// The words of a name: runs of ASCII letters and digits cut where the case changes, as heck
/// cuts them (`initContainers` -> `init`, `Containers`; `HTTPRoute` -> `HTTP`, `Route`), except
/// that an acronym keeps a single lower-case letter followed by an upper-case letter, a digit
/// or the end (`NVMeOFGateway` -> `NVMeOF`, `Gateway`; `IPs`; `IPv6`). Everything else
/// separates words.
pub fn words(s: &str) -> Vec<&str> {
    #[derive(Clone, Copy, PartialEq)]
    enum Case {
        None,
        Lower,
        Upper,
    }
    let mut out = Vec::new();
    for chunk in s.split(|c: char| !c.is_ascii_alphanumeric()) {
        let b = chunk.as_bytes();
        let (mut start, mut i, mut case) = (0, 0, Case::None);
        while i + 1 < b.len() {
            let (c, next) = (b[i], b[i + 1]);
            let with_c = if c.is_ascii_lowercase() {
                Case::Lower
            } else if c.is_ascii_uppercase() {
                Case::Upper
            } else {
                case
            };
            if with_c == Case::Lower && next.is_ascii_uppercase() {
                out.push(&chunk[start..=i]);
                (start, case) = (i + 1, Case::None);
            } else if case == Case::Upper && c.is_ascii_uppercase() && next.is_ascii_lowercase() {
                if b.get(i + 2).is_none_or(|a| !a.is_ascii_lowercase()) {
                    // `NVMe`, `IPs`: the letter stays in the acronym.
                    i += 2;
                    continue;
                }
                out.push(&chunk[start..i]);
                (start, case) = (i, Case::Upper);
            } else {
                case = with_c;
            }
            i += 1;
        }
        if start < b.len() {
            out.push(&chunk[start..]);
        }
    }
    out
}

/// The snake_case field or module name for a JSON name, before keyword escaping:
/// `initContainers` -> `init_containers`, `hugepages-1Gi` -> `hugepages_1gi`,
/// `$ref` -> `ref`, `1x` -> `_1x`, `CephNVMeOFGateway` -> `ceph_nvmeof_gateway`; empty or
/// symbol-only names become `field`.
pub fn snake_name(json: &str) -> String {
    let mut s = String::with_capacity(json.len() + 4);
    for w in words(json) {
        if !s.is_empty() {
            s.push('_');
        }
        s.extend(w.chars().map(|c| c.to_ascii_lowercase()));
    }
    if s.is_empty() {
        "field".to_owned()
    } else if s.starts_with(|c: char| c.is_ascii_digit()) {
        format!("_{s}")
    } else {
        s
    }
}

/// The UpperCamelCase type, variant or trait-name part for any string: `spec` -> `Spec`,
/// `HPAReplicas` -> `HpaReplicas`, `example_com` -> `ExampleCom`, `1.0` -> `V10`,
/// `CephNVMeOFGateway` -> `CephNvmeofGateway`; empty or symbol-only names become `Value`,
/// `Self` becomes `SelfValue`.
pub fn camel(json: &str) -> String {
    let mut s = String::with_capacity(json.len() + 1);
    for w in words(json) {
        let mut chars = w.chars();
        if let Some(first) = chars.next() {
            s.push(first.to_ascii_uppercase());
            s.extend(chars.map(|c| c.to_ascii_lowercase()));
        }
    }
    if s.is_empty() {
        "Value".to_owned()
    } else if s.starts_with(|c: char| c.is_ascii_digit()) {
        format!("V{s}")
    } else if s == "Self" {
        "SelfValue".to_owned()
    } else {
        s
    }
}

/// A field name as written in Rust source: keywords become raw identifiers (`r#type`), the
/// keywords that cannot be raw get a trailing underscore (`self_`).
pub fn field_name(snake: &str) -> String {
    if NON_RAW_KEYWORDS.contains(&snake) {
        format!("{snake}_")
    } else if is_keyword(snake) {
        format!("r#{snake}")
    } else {
        snake.to_owned()
    }
}

/// A module, accessor or function name for any string: [`snake_name`], with a `_` suffix on
/// keywords: `gateway.networking.k8s.io` -> `gateway_networking_k8s_io`, `HTTPRoute` ->
/// `http_route`, `type` -> `type_`, `v1beta1` -> `v1beta1`.
pub fn snake(s: &str) -> String {
    let snake = snake_name(s);
    if is_keyword(&snake) || NON_RAW_KEYWORDS.contains(&snake.as_str()) {
        format!("{snake}_")
    } else {
        snake
    }
}

/// The API groups kube-apiserver serves itself in the Kubernetes versions kinform supports
/// (1.35 to 1.37; `""` is the core group): the groups of `kinform-api`, named after their
/// first DNS label (see the module docs).
pub const BUILT_IN_GROUPS: &[&str] = &[
    "",
    "admissionregistration.k8s.io",
    "apiextensions.k8s.io",
    "apiregistration.k8s.io",
    "apps",
    "authentication.k8s.io",
    "authorization.k8s.io",
    "autoscaling",
    "batch",
    "certificates.k8s.io",
    "coordination.k8s.io",
    "discovery.k8s.io",
    "events.k8s.io",
    "flowcontrol.apiserver.k8s.io",
    "internal.apiserver.k8s.io",
    "lifecycle.k8s.io",
    "networking.k8s.io",
    "node.k8s.io",
    "policy",
    "rbac.authorization.k8s.io",
    "resource.k8s.io",
    "scheduling.k8s.io",
    "storage.k8s.io",
    "storagemigration.k8s.io",
];

/// The module / accessor name of one group alone (see the module docs): `""` -> `core`,
/// `rbac.authorization.k8s.io` -> `rbac`, `gateway.networking.k8s.io` -> `gateway`,
/// `policy.networking.k8s.io` -> `policy_networking_k8s_io`, `example.com` -> `example_com`.
pub fn group_name(group: &str) -> String {
    let label = snake(group.split('.').next().unwrap_or(group));
    // The names of the built-in groups: the core group's is `core`.
    let built_in_name = |b: &&str| {
        let name = if b.is_empty() {
            "core"
        } else {
            b.split('.').next().unwrap_or(b)
        };
        snake(name) == label
    };
    let kubernetes_own = group.ends_with(".k8s.io") && !BUILT_IN_GROUPS.iter().any(built_in_name);
    if group.is_empty() {
        "core".to_owned()
    } else if BUILT_IN_GROUPS.contains(&group) || kubernetes_own {
        label
    } else {
        snake(group)
    }
}

/// The module / accessor name of every group of one run: [`group_name`], or, for groups
/// that would share one, their whole names (and a `_2`, `_3`, ... suffix on a later group,
/// in the given order, whose whole name an earlier one took).
pub fn group_names<'a>(groups: impl IntoIterator<Item = &'a str>) -> BTreeMap<String, String> {
    let groups: Vec<&str> = groups.into_iter().collect();
    let mut count: BTreeMap<String, usize> = BTreeMap::new();
    for g in &groups {
        *count.entry(group_name(g)).or_default() += 1;
    }
    let mut taken = NameAllocator::snake();
    let mut out = BTreeMap::new();
    for g in groups {
        if out.contains_key(g) {
            continue;
        }
        let name = group_name(g);
        let name = if count[&name] > 1 && !g.is_empty() && !BUILT_IN_GROUPS.contains(&g) {
            snake(g)
        } else {
            name
        };
        out.insert(g.to_owned(), taken.alloc(&name));
    }
    out
}

/// The module holding a resource's client, lister and informer: the snake_case name of the
/// type they are named after (the kind, or the plural when two resources of a version share a
/// kind) with a `_client` suffix: `Pod` -> `pod_client`, `ScaledObject` ->
/// `scaled_object_client`. The suffix keeps it apart from the module of the kind's types
/// (`scaled_object`) that CRD versions get beside it.
pub fn client_module(type_base: &str) -> String {
    format!("{}_client", snake_name(type_base))
}

/// Parses a name produced by this module (possibly `r#...`) into an [`Ident`].
///
/// Never panics: the readers reject names that are not Kubernetes names before they get
/// here, and a string that still is not an identifier (a bug) is turned into one
/// ([`snake_name`], prefixed `invalid_`) rather than aborting the generator; the output
/// then fails to compile where the name is used, not silently elsewhere.
pub fn ident(name: &str) -> Ident {
    match name.strip_prefix("r#") {
        Some(raw) if is_plain_ident(raw) && !NON_RAW_KEYWORDS.contains(&raw) => {
            Ident::new_raw(raw, Span::call_site())
        }
        None if is_plain_ident(name) && (!is_keyword(name) || NON_RAW_KEYWORDS.contains(&name)) => {
            Ident::new(name, Span::call_site())
        }
        _ => Ident::new(
            &format!("invalid_{}", snake_name(name.trim_start_matches("r#"))),
            Span::call_site(),
        ),
    }
}

/// Whether `s` is an identifier of ASCII letters, digits and `_` that is not `_` alone.
fn is_plain_ident(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && s != "_"
        && (b[0].is_ascii_alphabetic() || b[0] == b'_')
        && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_')
}

/// Hands out unique names in one namespace: the first request for a base name gets it, later
/// ones get `{base}{sep}2`, `{base}{sep}3`, ... (deterministic for a deterministic order).
#[derive(Clone, Debug, Default)]
pub struct NameAllocator {
    used: BTreeSet<String>,
    separator: &'static str,
}

impl NameAllocator {
    /// An allocator for snake_case names (suffix `_2`).
    pub fn snake() -> Self {
        Self {
            used: BTreeSet::new(),
            separator: "_",
        }
    }

    /// An allocator for CamelCase names (suffix `2`), with the prelude names reserved.
    pub fn camel() -> Self {
        let mut me = Self {
            used: BTreeSet::new(),
            separator: "",
        };
        for n in RESERVED_TYPE_NAMES {
            me.reserve(n);
        }
        me
    }

    /// Marks `name` as taken.
    pub fn reserve(&mut self, name: &str) {
        self.used.insert(name.to_owned());
    }

    /// Whether `name` is taken.
    pub fn is_taken(&self, name: &str) -> bool {
        self.used.contains(name)
    }

    /// A fresh name based on `base`.
    pub fn alloc(&mut self, base: &str) -> String {
        if self.used.insert(base.to_owned()) {
            return base.to_owned();
        }
        let mut n = 2u64;
        loop {
            let candidate = format!("{base}{}{n}", self.separator);
            if self.used.insert(candidate.clone()) {
                return candidate;
            }
            n += 1;
        }
    }
}

/// Assigns Rust field names to JSON property names of one struct.
///
/// Names whose snake_case form equals the JSON name (`init_containers`) are served first, so
/// they keep it; the camelCase sibling (`initContainers`) then gets `init_containers_2`.
/// The result is in the order of `json_names`.
pub fn assign_field_names<'a>(
    json_names: impl IntoIterator<Item = &'a str>,
    alloc: &mut NameAllocator,
) -> Vec<String> {
    let names: Vec<&str> = json_names.into_iter().collect();
    let mut out = vec![String::new(); names.len()];
    for exact_first in [true, false] {
        for (i, json) in names.iter().enumerate() {
            let snake = snake_name(json);
            if (snake == *json) == exact_first {
                out[i] = field_name(&alloc.alloc(&snake));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snake_names() {
        assert_eq!(snake_name("initContainers"), "init_containers");
        assert_eq!(snake_name("hugepages-1Gi"), "hugepages_1gi");
        assert_eq!(snake_name("$ref"), "ref");
        assert_eq!(
            snake_name("x-kubernetes-int-or-string"),
            "x_kubernetes_int_or_string"
        );
        assert_eq!(snake_name("HPAReplicas"), "hpa_replicas");
        assert_eq!(snake_name("CACerts"), "ca_certs");
        assert_eq!(snake_name("a.b/c"), "a_b_c");
        assert_eq!(snake_name("1abc"), "_1abc");
        assert_eq!(snake_name("$$"), "field");
        assert_eq!(snake_name(""), "field");
        assert_eq!(snake_name("héllo"), "h_llo");
    }

    #[test]
    fn keywords_are_escaped() {
        assert_eq!(field_name("type"), "r#type");
        assert_eq!(field_name("match"), "r#match");
        assert_eq!(field_name("gen"), "r#gen");
        assert_eq!(field_name("self"), "self_");
        assert_eq!(field_name("spec"), "spec");
        assert_eq!(snake("type"), "type_");
        assert_eq!(snake("HTTPRoute"), "http_route");
        assert_eq!(
            snake("gateway.networking.k8s.io"),
            "gateway_networking_k8s_io"
        );
        // Every produced name parses as an identifier.
        for n in ["r#type", "self_", "_1abc", "r#enum", "self", "Self"] {
            assert_eq!(ident(n).to_string(), n);
        }
        // Anything else becomes one instead of panicking.
        assert_eq!(ident("Wid)get").to_string(), "invalid_wid_get");
        assert_eq!(ident("ü").to_string(), "invalid_field");
        assert_eq!(ident("type").to_string(), "invalid_type");
        assert_eq!(ident("r#self").to_string(), "invalid_self");
        assert_eq!(ident("").to_string(), "invalid_field");
    }

    #[test]
    fn camel_names() {
        assert_eq!(camel("spec"), "Spec");
        assert_eq!(camel("RegularExpression"), "RegularExpression");
        assert_eq!(camel("1.0"), "V10");
        assert_eq!(camel(""), "Value");
        assert_eq!(camel("*"), "Value");
        assert_eq!(camel("self"), "SelfValue");
        assert_eq!(camel("postgresql"), "Postgresql");
    }

    #[test]
    fn snake_case_collisions_prefer_exact_names() {
        let mut alloc = NameAllocator::snake();
        let names = assign_field_names(
            ["initContainers", "init_containers", "type", "$ref", "ref"],
            &mut alloc,
        );
        assert_eq!(
            names,
            [
                "init_containers_2",
                "init_containers",
                "r#type",
                "ref_2",
                "r#ref"
            ]
        );
    }

    #[test]
    fn camel_allocator_reserves_prelude_names() {
        let mut alloc = NameAllocator::camel();
        assert_eq!(alloc.alloc("Option"), "Option2");
        assert_eq!(alloc.alloc("Foo"), "Foo");
        assert_eq!(alloc.alloc("Foo"), "Foo2");
        assert_eq!(alloc.alloc("Foo"), "Foo3");
    }

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
            "gateway.networking.k8s.io",
            "policy.networking.k8s.io",
            "metrics.k8s.io",
        ]);
        assert_eq!(names[""], "core");
        assert_eq!(names["apps"], "apps");
        assert_eq!(names["rbac.authorization.k8s.io"], "rbac");
        assert_eq!(names["authorization.k8s.io"], "authorization");
        assert_eq!(names["example.com"], "example_com");
        assert_eq!(names["cert-manager.io"], "cert_manager_io");
        assert_eq!(names["cluster.x-k8s.io"], "cluster_x_k8s_io");
        assert_eq!(names["gateway.networking.k8s.io"], "gateway");
        assert_eq!(
            names["policy.networking.k8s.io"],
            "policy_networking_k8s_io"
        );
        assert_eq!(names["metrics.k8s.io"], "metrics");
    }

    #[test]
    fn a_group_name_depends_on_the_group_alone() {
        // The same name in any run, whatever the other groups.
        for g in [
            "policy.networking.k8s.io",
            "policy",
            "foo.k8s.io",
            "example.com",
        ] {
            assert_eq!(group_names([g])[g], group_name(g));
            assert_eq!(group_names(["policy", "bar.k8s.io", g])[g], group_name(g));
        }
        assert_eq!(group_name("core.example.k8s.io"), "core_example_k8s_io");
        // Two `.k8s.io` groups of one run with one first label take their whole names.
        let both = group_names(["snapshot.storage.k8s.io", "snapshot.example.k8s.io"]);
        assert_eq!(both["snapshot.storage.k8s.io"], "snapshot_storage_k8s_io");
        assert_eq!(both["snapshot.example.k8s.io"], "snapshot_example_k8s_io");
        // No other group takes a built-in group's name.
        let built_in: BTreeSet<String> = BUILT_IN_GROUPS.iter().map(|g| group_name(g)).collect();
        assert_eq!(built_in.len(), BUILT_IN_GROUPS.len(), "{built_in:?}");
        for g in BUILT_IN_GROUPS.iter().filter(|g| !g.is_empty()) {
            let label = g.split('.').next().unwrap();
            for other in [format!("{label}.example.com"), format!("{label}.x.k8s.io")] {
                assert!(!built_in.contains(&group_name(&other)), "{other}");
            }
        }
    }

    #[test]
    fn groups_that_differ_in_dashes_and_dots_get_a_suffix() {
        let names = group_names(["a-b.io", "a.b-io"]);
        assert_eq!(names["a-b.io"], "a_b_io");
        assert_eq!(names["a.b-io"], "a_b_io_2");
    }

    #[test]
    fn acronyms_stay_whole() {
        let cases = [
            (
                "CephNVMeOFGateway",
                "ceph_nvmeof_gateway",
                "CephNvmeofGateway",
            ),
            ("podIPs", "pod_ips", "PodIps"),
            ("IPv6Address", "ipv6_address", "Ipv6Address"),
            ("HTTPRoute", "http_route", "HttpRoute"),
            ("HPAReplicas", "hpa_replicas", "HpaReplicas"),
            ("TLSv1", "tlsv1", "Tlsv1"),
            ("OAuth2Proxy", "o_auth2_proxy", "OAuth2Proxy"),
            ("hugepages-1Gi", "hugepages_1gi", "Hugepages1gi"),
            ("v1beta1", "v1beta1", "V1beta1"),
            ("X509Certificate", "x509_certificate", "X509Certificate"),
            ("setIDsOnly", "set_ids_only", "SetIdsOnly"),
            ("aBcD", "a_bc_d", "ABcD"),
        ];
        for (json, snake, upper) in cases {
            assert_eq!(snake_name(json), snake, "{json}");
            assert_eq!(camel(json), upper, "{json}");
        }
    }

    #[test]
    fn identifiers_are_valid() {
        assert_eq!(snake("type"), "type_");
        assert_eq!(snake("3d"), "_3d");
        assert_eq!(snake(""), "field");
        assert_eq!(camel("1x"), "V1x");
        assert_eq!(snake("ephemeralcontainers"), "ephemeralcontainers");
        assert_eq!(camel("example_com"), "ExampleCom");
        assert_eq!(camel("v1beta1"), "V1beta1");
        assert_eq!(camel("foo"), "Foo");
    }
}
