//! The derive reader: what `#[derive(CustomResource)]`'s `#[kinform(...)]` attributes say
//! -> the [`crate::model`], so the macro expands through the same resource emitters
//! (client, lister, informer) as `kinform-gen`; the emitting side is the emitter module `derive`.
//!
//! As serde_derive does, the macro crate parses the attributes into its own AST (with spans)
//! and validates them there (missing `group`, conflicting `namespaced`, ...), because only it
//! can point at the offending tokens; what reaches this module is already valid, so turning
//! it into a [`ResourceDef`] cannot fail. Defaults follow kube-derive: the plural is the
//! lower-cased kind made plural with English rules, the singular the lower-cased kind.

use std::collections::{BTreeMap, BTreeSet};

use crate::model::{PrinterColumn, ResourceDef, RootType, ScalePaths, Scope, Subresource, Verb};

/// A derived resource, as the macro parsed and validated it.
#[derive(Clone, Debug, PartialEq)]
pub struct DeriveResource {
    /// API group.
    pub group: String,
    /// Version.
    pub version: String,
    /// Kind.
    pub kind: String,
    /// The root type's Rust name (the kind unless `root = "..."`).
    pub root: String,
    /// `plural = "..."`, when given.
    pub plural: Option<String>,
    /// `singular = "..."`, when given.
    pub singular: Option<String>,
    /// `namespaced`.
    pub namespaced: bool,
    /// `shortname = "..."`, repeated.
    pub short_names: Vec<String>,
    /// `category = "..."`, repeated.
    pub categories: Vec<String>,
    /// `status = "..."` was given (enables the status subresource).
    pub has_status: bool,
    /// `scale(...)`.
    pub scale: Option<ScalePaths>,
    /// `printcolumn(...)`, repeated.
    pub printer_columns: Vec<PrinterColumn>,
    /// `served = false` turns serving off.
    pub served: bool,
    /// `storage`.
    pub storage: bool,
    /// `deprecated` / `deprecated = "warning"`.
    pub deprecated: Option<Option<String>>,
    /// Documentation of the root type.
    pub docs: Option<String>,
}

/// kube-derive's default plural: lower-cased kind with English plural endings.
pub fn default_plural(kind: &str) -> String {
    let lower = kind.to_ascii_lowercase();
    if lower.ends_with('s')
        || lower.ends_with('x')
        || lower.ends_with('z')
        || lower.ends_with("ch")
        || lower.ends_with("sh")
    {
        format!("{lower}es")
    } else if lower.ends_with('y')
        && !lower.ends_with("ay")
        && !lower.ends_with("ey")
        && !lower.ends_with("oy")
        && !lower.ends_with("uy")
    {
        format!("{}ies", &lower[..lower.len() - 1])
    } else {
        format!("{lower}s")
    }
}

impl DeriveResource {
    /// The plural name (given or defaulted).
    pub fn plural(&self) -> String {
        self.plural
            .clone()
            .unwrap_or_else(|| default_plural(&self.kind))
    }

    /// The singular name (given or the lower-cased kind).
    pub fn singular(&self) -> String {
        self.singular
            .clone()
            .unwrap_or_else(|| self.kind.to_ascii_lowercase())
    }

    /// The model of the resource: every verb a CRD serves, plus the status and scale
    /// subresources it enables.
    pub fn resource_def(&self) -> ResourceDef {
        let verbs = super::crd::all_verbs();
        let sub_verbs: BTreeSet<Verb> =
            [Verb::Get, Verb::Update, Verb::Patch].into_iter().collect();
        let mut subresources = BTreeMap::new();
        if self.has_status {
            subresources.insert(
                "status".to_owned(),
                Subresource {
                    name: "status".to_owned(),
                    verbs: sub_verbs.clone(),
                    body_type: None,
                    streams: false,
                    scale_paths: None,
                },
            );
        }
        if let Some(scale) = &self.scale {
            subresources.insert(
                "scale".to_owned(),
                Subresource {
                    name: "scale".to_owned(),
                    verbs: sub_verbs,
                    body_type: None,
                    streams: false,
                    scale_paths: Some(scale.clone()),
                },
            );
        }
        ResourceDef {
            kind: self.kind.clone(),
            plural: self.plural(),
            singular: Some(self.singular()),
            list_kind: Some(format!("{}List", self.kind)),
            scope: if self.namespaced {
                Scope::Namespaced
            } else {
                Scope::Cluster
            },
            verbs,
            subresources,
            short_names: self.short_names.clone(),
            categories: self.categories.clone(),
            printer_columns: self.printer_columns.clone(),
            served: self.served,
            storage: self.storage,
            deprecated: self.deprecated.clone(),
            root: RootType::Generated(self.root.clone()),
            docs: self.docs.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plurals() {
        assert_eq!(default_plural("Foo"), "foos");
        assert_eq!(default_plural("Policy"), "policies");
        assert_eq!(default_plural("Gateway"), "gateways");
        assert_eq!(default_plural("Ingress"), "ingresses");
        assert_eq!(default_plural("Box"), "boxes");
        assert_eq!(default_plural("Patch"), "patches");
    }

    #[test]
    fn model_has_subresources() {
        let d = DeriveResource {
            group: "example.com".into(),
            version: "v1".into(),
            kind: "Foo".into(),
            root: "Foo".into(),
            plural: None,
            singular: None,
            namespaced: true,
            short_names: vec![],
            categories: vec![],
            has_status: true,
            scale: None,
            printer_columns: vec![],
            served: true,
            storage: true,
            deprecated: None,
            docs: None,
        };
        let r = d.resource_def();
        assert_eq!(r.plural, "foos");
        assert_eq!(r.scope, Scope::Namespaced);
        assert!(r.subresources.contains_key("status"));
    }
}
