//! Which Kubernetes versions each k8s-openapi resource type exists in, and the gate that makes
//! generated code follow the application's choice of version.
//!
//! k8s-openapi compiles the types of exactly one Kubernetes minor, chosen by the final
//! application's `v1_*` feature (libraries must not pick one). Code generated from one
//! minor's OpenAPI spec names types another minor lacks: `scheduling.k8s.io/v1alpha1`
//! `Workload` exists only in 1.35, `networking.k8s.io/v1beta1` is gone in 1.37. Such code is
//! wrapped in k8s-openapi's own version macros (`k8s_if_le_1_36! { ... }`, exported for
//! downstream crates exactly for this), reached through the configured k8s-openapi path, so
//! what the application's version lacks is absent instead of a compile error, and no build
//! script is needed. The macros can wrap a module declaration, a `use` and an associated
//! function alike, which is everything the module tree emits per resource.
//!
//! [`AVAILABILITY`] lists, for every resource type of k8s-openapi 0.29 that some of its
//! versions lack, the first and last Kubernetes minor that has it (types not listed are in
//! every version). It is read off k8s-openapi 0.29.0's per-version source trees
//! (`src/v1_33` .. `src/v1_37`, the types with an `impl crate::Resource`) by
//! `.ci/k8s-openapi-availability.sh`, which CI runs with `--check` against this file, so the
//! table cannot drift from the crate it describes.
//!
//! Gates are only emitted for bounds inside [`SUPPORTED_MINORS`]: a type that exists from
//! 1.34 on needs no gate when the oldest supported minor is 1.35.

use std::ops::RangeInclusive;

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

/// The attribute [`VersionGate::wrap`] marks a gated item with and [`unfold`] replaces.
const MARKER: &str = "kinform_version_gate";

use crate::model::{ResourceDef, RootType};

/// The Kubernetes minors k8s-openapi 0.29 has a `v1_*` feature for.
pub const K8S_OPENAPI_MINORS: RangeInclusive<u32> = 33..=37;

/// The minors kinform supports: from the oldest one still maintained upstream (1.34 reached
/// its end of life on 2026-10-27, <https://kubernetes.io/releases/>) to the newest k8s-openapi
/// 0.29 offers. CI builds the workspace at both ends.
pub const SUPPORTED_MINORS: RangeInclusive<u32> = 35..=37;

/// `(k8s-openapi path without the crate, first minor, last minor)` of every k8s-openapi 0.29
/// resource type that not every version has. Sorted by path.
#[rustfmt::skip]
pub const AVAILABILITY: &[(&str, u32, u32)] = &[
    // BEGIN k8s-openapi 0.29.0 availability (.ci/k8s-openapi-availability.sh)
    ("api::admissionregistration::v1::MutatingAdmissionPolicy", 36, 37),
    ("api::admissionregistration::v1::MutatingAdmissionPolicyBinding", 36, 37),
    ("api::admissionregistration::v1beta1::MutatingAdmissionPolicy", 34, 37),
    ("api::admissionregistration::v1beta1::MutatingAdmissionPolicyBinding", 34, 37),
    ("api::admissionregistration::v1beta1::ValidatingAdmissionPolicy", 33, 33),
    ("api::admissionregistration::v1beta1::ValidatingAdmissionPolicyBinding", 33, 33),
    ("api::certificates::v1::ClusterTrustBundle", 37, 37),
    ("api::certificates::v1::PodCertificateRequest", 37, 37),
    ("api::certificates::v1alpha1::ClusterTrustBundle", 33, 36),
    ("api::certificates::v1alpha1::PodCertificateRequest", 34, 34),
    ("api::certificates::v1beta1::PodCertificateRequest", 35, 37),
    ("api::lifecycle::v1alpha1::Eviction", 37, 37),
    ("api::lifecycle::v1alpha1::EvictionRequest", 37, 37),
    ("api::networking::v1beta1::IPAddress", 33, 36),
    ("api::networking::v1beta1::ServiceCIDR", 33, 36),
    ("api::resource::v1::DeviceClass", 34, 37),
    ("api::resource::v1::DeviceTaintRule", 37, 37),
    ("api::resource::v1::ResourceClaim", 34, 37),
    ("api::resource::v1::ResourceClaimTemplate", 34, 37),
    ("api::resource::v1::ResourceSlice", 34, 37),
    ("api::resource::v1alpha3::DeviceClass", 33, 33),
    ("api::resource::v1alpha3::ResourceClaim", 33, 33),
    ("api::resource::v1alpha3::ResourceClaimTemplate", 33, 33),
    ("api::resource::v1alpha3::ResourcePoolStatusRequest", 36, 37),
    ("api::resource::v1alpha3::ResourceSlice", 33, 33),
    ("api::resource::v1beta2::DeviceTaintRule", 36, 37),
    ("api::scheduling::v1alpha1::Workload", 35, 35),
    ("api::scheduling::v1alpha2::PodGroup", 36, 36),
    ("api::scheduling::v1alpha2::Workload", 36, 36),
    ("api::scheduling::v1alpha3::CompositePodGroup", 37, 37),
    ("api::scheduling::v1alpha3::PodGroup", 37, 37),
    ("api::scheduling::v1alpha3::Workload", 37, 37),
    ("api::scheduling::v1beta1::PodGroup", 37, 37),
    ("api::scheduling::v1beta1::Workload", 37, 37),
    ("api::storage::v1::VolumeAttributesClass", 34, 37),
    ("api::storage::v1alpha1::VolumeAttributesClass", 33, 34),
    ("api::storage::v1beta1::VolumeAttributesClass", 33, 36),
    ("api::storagemigration::v1::StorageVersionMigration", 37, 37),
    ("api::storagemigration::v1alpha1::StorageVersionMigration", 33, 34),
    ("api::storagemigration::v1beta1::StorageVersionMigration", 35, 37),
    // END k8s-openapi 0.29.0 availability
];

/// The Kubernetes minors some generated code exists in: `first..=last` (empty when
/// `first > last`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VersionGate {
    first: u32,
    last: u32,
}

impl Default for VersionGate {
    fn default() -> Self {
        Self::ALL
    }
}

impl VersionGate {
    /// Every version: no gate.
    pub const ALL: Self = Self {
        first: *K8S_OPENAPI_MINORS.start(),
        last: *K8S_OPENAPI_MINORS.end(),
    };

    /// The versions that have k8s-openapi type `path` (`k8s_openapi::api::core::v1::Pod` or
    /// `api::core::v1::Pod`); any other path (a generated type) exists in every version.
    pub fn of_type(path: &str) -> Self {
        let rest = path
            .trim_start_matches("::")
            .strip_prefix("k8s_openapi::")
            .unwrap_or(path);
        AVAILABILITY
            .binary_search_by(|(p, _, _)| (*p).cmp(rest))
            .map(|i| Self {
                first: AVAILABILITY[i].1,
                last: AVAILABILITY[i].2,
            })
            .unwrap_or(Self::ALL)
    }

    /// The versions that have every k8s-openapi type a resource's client names: its object
    /// type and its subresources' bodies.
    pub fn of_resource(res: &ResourceDef) -> Self {
        let of_root = |t: &RootType| match t {
            RootType::External(p) => Self::of_type(p),
            RootType::Generated(_) => Self::ALL,
        };
        res.subresources
            .values()
            .filter_map(|s| s.body_type.as_ref())
            .fold(of_root(&res.root), |g, t| g.intersect(of_root(t)))
    }

    /// The newest minor in the gate.
    pub fn last(self) -> u32 {
        self.last
    }

    /// The versions both gates have.
    pub fn intersect(self, other: Self) -> Self {
        Self {
            first: self.first.max(other.first),
            last: self.last.min(other.last),
        }
    }

    /// The smallest gate covering all of `gates` when each of them is a real gate; [`Self::ALL`]
    /// when one is open (or there are none), since the code around them then always exists.
    pub fn hull(gates: impl IntoIterator<Item = Self>) -> Self {
        let mut out: Option<Self> = None;
        for g in gates {
            if g.is_open() {
                return Self::ALL;
            }
            out = Some(match out {
                None => g,
                Some(o) => Self {
                    first: o.first.min(g.first),
                    last: o.last.max(g.last),
                },
            });
        }
        out.unwrap_or(Self::ALL)
    }

    /// Whether the gate lets every supported version through (nothing to emit).
    pub fn is_open(self) -> bool {
        !self.needs_lower() && !self.needs_upper()
    }

    fn needs_lower(self) -> bool {
        self.first > *SUPPORTED_MINORS.start()
    }

    fn needs_upper(self) -> bool {
        self.last < *SUPPORTED_MINORS.end()
    }

    /// This gate relative to an enclosing one: `None` when the enclosing code is gated
    /// exactly so already, or when this gate is open.
    pub fn within(self, outer: Self) -> Option<Self> {
        (self.clamp() != outer.clamp() && !self.is_open()).then_some(self)
    }

    /// The gate as far as supported versions can tell (bounds outside the range dropped).
    fn clamp(self) -> Self {
        Self {
            first: self.first.max(*SUPPORTED_MINORS.start()),
            last: self.last.min(*SUPPORTED_MINORS.end()),
        }
    }

    /// `item` (one item) wrapped in k8s-openapi's version macros (`k8s` is the crate's path
    /// in emitted code), so it exists only where the application's version is in the gate.
    ///
    /// The wrapping is written as marker attributes that [`unfold`] turns into the macro
    /// invocations after formatting: prettyplease prints a macro's body as one run of tokens,
    /// while the marked item is formatted like every other item.
    pub fn wrap(self, k8s: &TokenStream, item: TokenStream) -> TokenStream {
        let k8s = k8s.to_string().replace(' ', "");
        let mut macros = Vec::new();
        let (lower, upper) = (self.needs_lower(), self.needs_upper());
        if lower && upper && self.first == self.last {
            macros.push(format!("k8s_if_1_{}", self.first));
        } else {
            if lower {
                macros.push(format!("k8s_if_ge_1_{}", self.first));
            }
            if upper {
                macros.push(format!("k8s_if_le_1_{}", self.last));
            }
        }
        let marker = format_ident!("{MARKER}");
        let markers = macros.iter().map(|m| {
            let path = format!("{k8s}::{m}!");
            quote!(#[#marker = #path])
        });
        quote!(#(#markers)* #item)
    }
}

/// `items` wrapped in `gate` when there is one.
pub fn gated(gate: Option<VersionGate>, k8s: &TokenStream, items: TokenStream) -> TokenStream {
    match gate {
        Some(g) => g.wrap(k8s, items),
        None => items,
    }
}

/// Turns every item marked by [`VersionGate::wrap`] in formatted source into the macro
/// invocations the markers name, the item indented inside (outer marker outermost):
///
/// ```text
/// #[kinform_version_gate = "::k8s_openapi::k8s_if_le_1_36!"]       ::k8s_openapi::k8s_if_le_1_36! {
/// /// Docs.                                                 ->          /// Docs.
/// pub mod v1beta1;                                                      pub mod v1beta1;
///                                                                   }
/// ```
///
/// An item ends on its first line when that line ends with `;`, else at the next line
/// indented as it is that closes a brace (prettyplease's `}` or `};`; a wrapped signature's
/// `) -> T {` at the same indentation is not an end).
pub fn unfold(text: &str) -> String {
    let prefix = format!("#[{MARKER} = \"");
    let lines: Vec<&str> = text.lines().collect();
    let mut out = String::with_capacity(text.len() + 256);
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let indent = line.len() - line.trim_start().len();
        let mut macros = Vec::new();
        while let Some(m) = lines
            .get(i)
            .and_then(|l| l.trim_start().strip_prefix(prefix.as_str()))
            .and_then(|rest| rest.strip_suffix("\"]"))
        {
            macros.push(m);
            i += 1;
        }
        if macros.is_empty() {
            out.push_str(line);
            out.push('\n');
            i += 1;
            continue;
        }
        // The item: attributes and docs, its first line, then up to its closing line.
        let start = i;
        while i < lines.len() && lines[i].trim_start().starts_with(['#', '/']) {
            i += 1;
        }
        if i < lines.len() && !lines[i].trim_end().ends_with(';') {
            i += 1;
            while i < lines.len()
                && !(lines[i].len() - lines[i].trim_start().len() == indent
                    && lines[i].trim_start().starts_with('}'))
            {
                i += 1;
            }
        }
        let end = (i + 1).min(lines.len());
        let pad = " ".repeat(indent);
        for (depth, m) in macros.iter().enumerate() {
            out.push_str(&format!("{pad}{}{m} {{\n", "    ".repeat(depth)));
        }
        let inner = "    ".repeat(macros.len());
        for l in &lines[start..end] {
            if !l.is_empty() {
                out.push_str(&inner);
            }
            out.push_str(l);
            out.push('\n');
        }
        for depth in (0..macros.len()).rev() {
            out.push_str(&format!("{pad}{}}}\n", "    ".repeat(depth)));
        }
        i = end;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_sorted_contiguous_and_inside_the_crates_versions() {
        for w in AVAILABILITY.windows(2) {
            assert!(w[0].0 < w[1].0, "{} / {} out of order", w[0].0, w[1].0);
        }
        for (p, first, last) in AVAILABILITY {
            assert!(first <= last, "{p}");
            assert!(K8S_OPENAPI_MINORS.contains(first) && K8S_OPENAPI_MINORS.contains(last));
            assert!(
                (*first, *last) != (*K8S_OPENAPI_MINORS.start(), *K8S_OPENAPI_MINORS.end()),
                "{p} is in every version: not an entry"
            );
        }
    }

    #[test]
    fn lookup_with_or_without_the_crate_name() {
        let w = VersionGate::of_type("k8s_openapi::api::scheduling::v1alpha1::Workload");
        assert_eq!(
            w,
            VersionGate {
                first: 35,
                last: 35
            }
        );
        assert_eq!(
            VersionGate::of_type("::k8s_openapi::api::networking::v1beta1::IPAddress"),
            VersionGate::of_type("api::networking::v1beta1::IPAddress")
        );
        assert_eq!(
            VersionGate::of_type("k8s_openapi::api::core::v1::Pod"),
            VersionGate::ALL
        );
    }

    fn unfolded(g: VersionGate) -> String {
        let k8s = quote!(::kinform::k8s_openapi);
        let tokens = quote! {
            /// Docs.
            pub mod v;
        };
        let file = syn::parse2::<syn::File>(g.wrap(&k8s, tokens)).expect("parses");
        unfold(&prettyplease::unparse(&file))
    }

    #[test]
    fn gates_only_bounds_inside_the_supported_range() {
        // 1.34..: always there from the oldest supported minor on.
        assert!(
            VersionGate {
                first: 34,
                last: 37
            }
            .is_open()
        );
        assert_eq!(
            unfolded(VersionGate {
                first: 34,
                last: 37
            }),
            "/// Docs.\npub mod v;\n"
        );
        assert_eq!(
            unfolded(VersionGate {
                first: 33,
                last: 36
            }),
            "::kinform::k8s_openapi::k8s_if_le_1_36! {\n    /// Docs.\n    pub mod v;\n}\n"
        );
        assert!(
            unfolded(VersionGate {
                first: 36,
                last: 37
            })
            .starts_with("::kinform::k8s_openapi::k8s_if_ge_1_36! {")
        );
        let one = unfolded(VersionGate {
            first: 36,
            last: 36,
        });
        assert!(
            one.starts_with("::kinform::k8s_openapi::k8s_if_1_36! {") && !one.contains("_le_"),
            "{one}"
        );
        let nested = unfolded(
            VersionGate {
                first: 33,
                last: 35,
            }
            .intersect(VersionGate {
                first: 36,
                last: 37,
            }),
        );
        assert_eq!(
            nested,
            "::kinform::k8s_openapi::k8s_if_ge_1_36! {\n    ::kinform::k8s_openapi::k8s_if_le_1_35! {\n        /// Docs.\n        pub mod v;\n    }\n}\n"
        );
    }

    #[test]
    fn unfold_takes_a_whole_function_and_leaves_the_rest() {
        let k8s = quote!(::k8s_openapi);
        let gate = VersionGate {
            first: 33,
            last: 35,
        };
        let f = gate.wrap(
            &k8s,
            quote! {
                /// The accessor.
                #[inline]
                pub fn v1alpha1(&self) -> u8 {
                    let x = 1;
                    x
                }
            },
        );
        let long = gate.wrap(&k8s, quote! {
            pub fn validatingadmissionpolicybindings(&self, namespace: &str) -> validating_admission_policy_binding_client::ValidatingAdmissionPolicyBindingClient {
                validating_admission_policy_binding_client::ValidatingAdmissionPolicyBindingClient::new(namespace)
            }
        });
        let file: syn::File = syn::parse2(quote! {
            impl S {
                pub fn v1(&self) -> u8 { 0 }
                #f
                pub fn v2(&self) -> u8 { 2 }
                #long
                pub fn v3(&self) -> u8 { 3 }
            }
        })
        .expect("parses");
        let text = unfold(&prettyplease::unparse(&file));
        let want = "    ::k8s_openapi::k8s_if_le_1_35! {\n        /// The accessor.\n        #[inline]\n        pub fn v1alpha1(&self) -> u8 {\n            let x = 1;\n            x\n        }\n    }\n    pub fn v2";
        assert!(text.contains(want), "{text}");
        // What unfolds parses as Rust again, with the macro in place of the item.
        let reparsed: syn::File = syn::parse_str(&text).expect("unfolded source parses");
        let syn::Item::Impl(imp) = &reparsed.items[0] else {
            panic!("{text}")
        };
        assert!(matches!(imp.items[1], syn::ImplItem::Macro(_)), "{text}");
        assert!(matches!(imp.items[3], syn::ImplItem::Macro(_)), "{text}");
        assert!(
            matches!(&imp.items[4], syn::ImplItem::Fn(f) if f.sig.ident == "v3"),
            "{text}"
        );
    }

    #[test]
    fn hull_and_within() {
        let a = VersionGate {
            first: 33,
            last: 36,
        };
        let b = VersionGate {
            first: 35,
            last: 35,
        };
        assert_eq!(VersionGate::hull([a, b]), a);
        assert_eq!(VersionGate::hull([a, VersionGate::ALL]), VersionGate::ALL);
        assert_eq!(VersionGate::hull([]), VersionGate::ALL);
        assert_eq!(a.within(a), None);
        assert_eq!(b.within(a), Some(b));
        assert_eq!(VersionGate::ALL.within(a), None);
        // The same gate as far as supported versions go: no nested repetition.
        assert_eq!(
            VersionGate {
                first: 34,
                last: 36
            }
            .within(a),
            None
        );
    }
}
