//! The derive front-end: what `#[derive(CustomResource)]`'s `#[kinform(...)]` attributes say
//! -> the [`crate::model`], so the macro expands through the same resource emitters
//! (client, lister, informer) as `kinform-gen`.
//!
//! As serde_derive does, the macro crate parses the attributes into its own AST (with spans)
//! and validates them there (missing `group`, conflicting `namespaced`, ...), because only it
//! can point at the offending tokens; what reaches this module is already valid, so turning
//! it into a [`ResourceDef`] cannot fail. Defaults follow kube-derive: the plural is the
//! lower-cased kind made plural with English rules, the singular the lower-cased kind.

use std::collections::{BTreeMap, BTreeSet};

use proc_macro2::TokenStream;

use crate::emit::client::{group_version_clientset, resource_client};
use crate::emit::informer::{
    group_informers, group_version_informers, has_informer, resource_informer,
};
use crate::emit::modules::{GroupCtx, GroupVersionCtx, ResourceCtx};
use crate::emit::runtime::RuntimePaths;
use crate::model::{PrinterColumn, ResourceDef, RootType, ScalePaths, Scope, Subresource, Verb};
use crate::naming::{group_names, snake};

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

    /// The typed client, lister and informer of the resource, as `kinform-gen` emits them
    /// into a resource module, naming the root type `object` (in scope where the tokens go).
    pub fn resource_items(&self, object: TokenStream, paths: &RuntimePaths) -> TokenStream {
        let res = self.resource_def();
        let ctx = ResourceCtx::new(&res, &self.group, &self.version, object, paths, &self.root);
        let mut out = resource_client(&ctx);
        if has_informer(&res) {
            out.extend(resource_informer(&ctx));
            out.extend(factory_accessor(&ctx, paths));
        }
        out
    }
}

/// The group-level items of derived resources of one API group, as `kinform-gen` emits them
/// for the same group: what `#[kinform::api_group]` adds to the module it annotates.
#[derive(Clone, Debug)]
pub struct GroupItems {
    /// The group's module name in generated code (`example_com`), which is also the
    /// `InformerFactory` accessor.
    pub name: String,
    /// `<Group>Informers` and its `InformerFactory` extension trait (`<Group>InformersExt`);
    /// they name each version's informer set as `<version>::<Group><Version>Informers`.
    pub group: TokenStream,
    /// The versions, in order.
    pub versions: Vec<VersionItems>,
    /// Every extension trait, as paths relative to the group-level module
    /// (`<Group>InformersExt`, `v1::<Group>V1ClientExt`): the generated prelude's entries.
    pub prelude: Vec<TokenStream>,
}

/// One version of a [`GroupItems`].
#[derive(Clone, Debug)]
pub struct VersionItems {
    /// The version module's name (`v1`).
    pub module: String,
    /// `<Group><Version>Client` + its `Client` extension trait and `<Group><Version>Informers`;
    /// they name each resource's items as `<plural module>::FooClient` / `FooInformer`.
    pub items: TokenStream,
    /// Per resource (by plural, as generated code orders them): its module name (the plural, `foos`) and the root
    /// type's name, whose `FooClient`, `FooLister` and `FooInformer` that module must hold.
    pub resources: Vec<(String, String)>,
}

/// Why derived resources cannot form one group.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum GroupError {
    /// A resource declares another group.
    #[error("`{kind}` is in group `{found}`, not `{group}`")]
    WrongGroup {
        /// The group being built.
        group: String,
        /// The resource's kind.
        kind: String,
        /// The resource's group.
        found: String,
    },
    /// Two resources of one version have the same plural (one URL, one accessor).
    #[error(
        "`{group}/{version}` has two resources named `{plural}` (kinds `{first}` and `{second}`)"
    )]
    DuplicateResource {
        /// Group.
        group: String,
        /// Version.
        version: String,
        /// The shared plural.
        plural: String,
        /// The first kind.
        first: String,
        /// The second kind.
        second: String,
    },
}

/// The group-level items of `resources`, all of `group`: client-go's `ExampleComV1()`
/// clientset accessor and `factory.ExampleCom().V1().Foos()` informer accessors, from the
/// same emitters as generated code ([`group_version_clientset`], [`group_version_informers`],
/// [`group_informers`]). Versions are ordered by name as `kinform-gen` orders them; resources
/// within a version by plural.
pub fn group_items(
    group: &str,
    resources: &[DeriveResource],
    paths: &RuntimePaths,
) -> Result<GroupItems, GroupError> {
    let mut versions: BTreeMap<&str, BTreeMap<String, (&DeriveResource, ResourceDef)>> =
        BTreeMap::new();
    for r in resources {
        if r.group != group {
            return Err(GroupError::WrongGroup {
                group: group.to_owned(),
                kind: r.kind.clone(),
                found: r.group.clone(),
            });
        }
        let plural = r.plural();
        let v = versions.entry(&r.version).or_default();
        if let Some((first, _)) = v.get(&plural) {
            return Err(GroupError::DuplicateResource {
                group: group.to_owned(),
                version: r.version.clone(),
                plural,
                first: first.kind.clone(),
                second: r.kind.clone(),
            });
        }
        v.insert(plural, (r, r.resource_def()));
    }
    let name = group_names([group])[group].clone();
    let gvs: Vec<GroupVersionCtx<'_>> = versions
        .iter()
        .map(|(version, res)| GroupVersionCtx {
            group,
            version,
            group_name: name.clone(),
            resources: res
                .values()
                .map(|(d, def)| {
                    let root = quote::format_ident!("{}", d.root);
                    ResourceCtx::new(def, group, version, quote::quote!(#root), paths, &d.root)
                })
                .collect(),
            paths,
        })
        .collect();
    let mut prelude = Vec::new();
    let out_versions = gvs
        .iter()
        .zip(versions.values())
        .map(|(gv, res)| {
            let mut items = group_version_clientset(gv);
            items.extend(group_version_informers(gv));
            let vmod = gv.version_ident();
            let ext = gv.client_ext_ident();
            prelude.push(quote::quote!(#vmod::#ext));
            VersionItems {
                module: snake(gv.version),
                items,
                resources: res
                    .iter()
                    .map(|(plural, (d, _))| (snake(plural), d.root.clone()))
                    .collect(),
            }
        })
        .collect();
    let g = GroupCtx {
        group,
        name: name.clone(),
        versions: gvs,
        paths,
    };
    let ext = g.informers_ext_ident();
    prelude.insert(0, quote::quote!(#ext));
    Ok(GroupItems {
        group: group_informers(&g),
        name,
        versions: out_versions,
        prelude,
    })
}

/// The factory accessor of a derived resource. Generated code reaches an informer through
/// one extension trait per group (`factory.example_com().v1().foos()`); one derive cannot
/// declare that trait (two derived kinds of a group would each declare it), so each derived
/// resource also gets its own trait, `FooInformerExt`, adding `factory.foos()` (the plural, as
/// the generated accessor's last step). It stays beside the group accessor that
/// `#[kinform::api_group]` adds through [`group_items`]: it needs no group declaration, and
/// both reach the same shared informer.
fn factory_accessor(ctx: &ResourceCtx<'_>, paths: &RuntimePaths) -> TokenStream {
    let factory = paths.informer_factory();
    let informer = ctx.informer_ident();
    let ext = quote::format_ident!("{}Ext", informer);
    let method = ctx.accessor_ident();
    let doc = format!(
        "Adds `{method}()` to the runtime's `InformerFactory`: the shared informer and lister of `{}`.",
        ctx.gvr()
    );
    quote::quote! {
        #[doc = #doc]
        pub trait #ext {
            #[doc = #doc]
            fn #method(&self) -> #informer<'_>;
        }

        impl #ext for #factory {
            fn #method(&self) -> #informer<'_> {
                #informer::new(self)
            }
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

    fn derived(group: &str, version: &str, kind: &str, namespaced: bool) -> DeriveResource {
        DeriveResource {
            group: group.into(),
            version: version.into(),
            kind: kind.into(),
            root: kind.into(),
            plural: None,
            singular: None,
            namespaced,
            short_names: vec![],
            categories: vec![],
            has_status: false,
            scale: None,
            printer_columns: vec![],
            served: true,
            storage: true,
            deprecated: None,
            docs: None,
        }
    }

    #[test]
    fn group_items_use_generated_names() {
        let paths = RuntimePaths::new("::kinform", None).expect("valid path");
        let items = group_items(
            "example.com",
            &[
                derived("example.com", "v1", "Foo", true),
                derived("example.com", "v1", "Bar", false),
                derived("example.com", "v1alpha1", "Foo", true),
            ],
            &paths,
        )
        .unwrap();
        assert_eq!(items.name, "example_com");
        let group = items.group.to_string();
        assert!(group.contains("pub trait ExampleComInformersExt"));
        assert!(group.contains("fn example_com (& self) -> ExampleComInformers"));
        assert!(group.contains("v1alpha1 :: ExampleComV1alpha1Informers"));
        let modules: Vec<&str> = items.versions.iter().map(|v| v.module.as_str()).collect();
        assert_eq!(modules, ["v1", "v1alpha1"]);
        let v1 = &items.versions[0];
        assert_eq!(
            v1.resources,
            [
                ("bars".to_owned(), "Bar".to_owned()),
                ("foos".to_owned(), "Foo".to_owned())
            ]
        );
        let tokens = v1.items.to_string();
        assert!(tokens.contains("pub struct ExampleComV1Client"));
        assert!(tokens.contains("fn example_com_v1 (& self) -> ExampleComV1Client"));
        // Scope decides the clientset accessor's signature.
        assert!(tokens.contains("pub fn foos (& self , namespace : & str) -> foos :: FooClient"));
        assert!(tokens.contains("pub fn bars (& self) -> bars :: BarClient"));
        assert!(tokens.contains("pub fn foos (& self) -> foos :: FooInformer < 'a >"));
        let prelude: Vec<String> = items.prelude.iter().map(ToString::to_string).collect();
        assert_eq!(
            prelude,
            [
                "ExampleComInformersExt",
                "v1 :: ExampleComV1ClientExt",
                "v1alpha1 :: ExampleComV1alpha1ClientExt"
            ]
        );
    }

    #[test]
    fn group_items_reject_other_groups_and_shared_plurals() {
        let paths = RuntimePaths::new("::kinform", None).expect("valid path");
        let err = group_items(
            "example.com",
            &[derived("other.io", "v1", "Foo", true)],
            &paths,
        )
        .unwrap_err();
        assert!(matches!(err, GroupError::WrongGroup { ref found, .. } if found == "other.io"));
        let mut second = derived("example.com", "v1", "Fooo", true);
        second.plural = Some("foos".into());
        let err = group_items(
            "example.com",
            &[derived("example.com", "v1", "Foo", true), second],
            &paths,
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "`example.com/v1` has two resources named `foos` (kinds `Foo` and `Fooo`)"
        );
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
        let paths = RuntimePaths::new("::kinform", None).expect("valid path");
        let tokens = d.resource_items(quote::quote!(Foo), &paths).to_string();
        assert!(tokens.contains("FooClient"));
        assert!(tokens.contains("FooLister"));
        assert!(tokens.contains("FooInformer"));
        assert!(tokens.contains("get_status"));
    }
}
