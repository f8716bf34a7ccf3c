//! The emitted items of derived resources: what `#[derive(CustomResource)]` adds beside a type
//! (its typed client, lister, informer and factory accessor) and what `#[kinform::api_group]`
//! adds to the module holding a group's derives (the clientset and informer accessors), from
//! the same emitters `kinform-gen` calls for a CRD, so derived and generated code are the same
//! code. The input is the derive reader's [`DeriveResource`].

use std::collections::BTreeMap;

use proc_macro2::TokenStream;

use crate::model::ResourceDef;
use crate::naming::{client_module, group_names, snake};
use crate::read::derive::DeriveResource;

use super::client::{group_version_clientset, resource_client};
use super::informer::{group_informers, group_version_informers, has_informer, resource_informer};
use super::modules::{GroupCtx, GroupVersionCtx, ResourceCtx};
use super::runtime::RuntimePaths;

/// The typed client, lister and informer of a derived resource, as `kinform-gen` emits them
/// into a resource module, naming the root type `object` (in scope where the tokens go).
pub fn resource_items(
    res: &DeriveResource,
    object: TokenStream,
    paths: &RuntimePaths,
) -> TokenStream {
    let def = res.resource_def();
    let ctx = ResourceCtx::new(&def, &res.group, &res.version, object, paths, &res.root);
    let mut out = resource_client(&ctx);
    if has_informer(&def) {
        out.extend(resource_informer(&ctx));
        out.extend(factory_accessor(&ctx, paths));
    }
    out
}

/// The module generated code gives a derived resource's client, lister and informer.
pub fn resource_module(res: &DeriveResource) -> String {
    client_module(&res.root)
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
    /// Per resource (by plural, as generated code orders them): its module name (`foo_client`)
    /// and the root type's name, whose `FooClient`, `FooLister` and `FooInformer` that module
    /// must hold.
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
            // Derived types are the user's own: in every Kubernetes version.
            gate: None,
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
                    .map(|(_, (d, _))| (resource_module(d), d.root.clone()))
                    .collect(),
            }
        })
        .collect();
    let g = GroupCtx {
        group,
        name: name.clone(),
        versions: gvs,
        paths,
        gate: None,
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
                ("bar_client".to_owned(), "Bar".to_owned()),
                ("foo_client".to_owned(), "Foo".to_owned())
            ]
        );
        let tokens = v1.items.to_string();
        assert!(tokens.contains("pub struct ExampleComV1Client"));
        assert!(tokens.contains("fn example_com_v1 (& self) -> ExampleComV1Client"));
        // Scope decides the clientset accessor's signature.
        assert!(
            tokens.contains("pub fn foos (& self , namespace : & str) -> foo_client :: FooClient")
        );
        assert!(tokens.contains("pub fn bars (& self) -> bar_client :: BarClient"));
        assert!(tokens.contains("pub fn foos (& self) -> foo_client :: FooInformer < 'a >"));
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
    fn resource_items_are_the_generated_ones() {
        let mut d = derived("example.com", "v1", "Foo", true);
        d.has_status = true;
        let paths = RuntimePaths::new("::kinform", None).expect("valid path");
        let tokens = resource_items(&d, quote::quote!(Foo), &paths).to_string();
        assert!(tokens.contains("FooClient"));
        assert!(tokens.contains("FooLister"));
        assert!(tokens.contains("FooInformer"));
        assert!(tokens.contains("get_status"));
    }
}
