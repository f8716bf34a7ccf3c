//! The module tree of generated code: one module per group, per version and per resource,
//! and how it is laid out as files.
//!
//! ```text
//! <root>            prelude (every extension trait), `pub mod <group>;`
//! <group>/          `<Group>Informers` + `InformerFactory` extension trait, `pub mod <version>;`
//! <group>/<version>/  `<Group><Version>Client` + `Client` extension trait,
//!                     `<Group><Version>Informers`, `pub use <kind>::<Kind>;` and
//!                     `pub use <kind>::apply::<Kind>Apply;` (CRDs)
//! <group>/<version>/<kind>_client.rs  `FooClient`, `FooLister`, `FooInformer`
//! <group>/<version>/<kind>/mod.rs     CRDs only: the kind's types (`Foo`, `FooSpec`, ...)
//! <group>/<version>/<kind>/apply.rs   CRDs only: their apply configurations (`FooApply`, ...)
//! ```
//!
//! One naming scheme tells a kind's types from its client: the types of kind `ScaledObject`
//! are in `scaled_object`, its client, lister and informer in `scaled_object_client`
//! ([`crate::naming::client_module`]), so the two sit side by side in a listing and neither
//! name is a plural that reads like the other. The clientset and factory accessors keep
//! the resource's plural, as client-go does (`client.keda_sh_v1alpha1().scaledobjects("ns")`).
//!
//! Each module is written as a person would: the emitters name outside items by their full
//! path, and [`super::imports`] turns those into one `use` per item and short names.
//!
//! [`Layout::Tree`] writes that as files (`mod.rs` per directory; the root file's name is
//! configurable, e.g. `lib.rs`), for committed sources; [`Layout::SingleFile`] nests the same
//! modules inline in one file for `include!(concat!(env!("OUT_DIR"), ...))` from a build
//! script, as prost-build does (a `mod foo;` inside an included file would resolve relative to
//! the includer, so a tree cannot be included). With `feature_per_group`, each group module
//! and its prelude entries sit behind `#[cfg(feature = "<group module name>")]`.
//!
//! Kubernetes versions: a resource whose k8s-openapi type some supported Kubernetes version
//! lacks ([`super::versions`]) is wrapped, with everything that names it (its module
//! declaration, its clientset and informer accessors), in k8s-openapi's version macros; a group
//! version (or a group) all of whose resources are gated is gated as a whole instead (its
//! declaration, its accessor on the group's informers, its prelude entries), so an
//! application on a version without it gets no empty clientset. The root's
//! out-of-line module declarations carry `#[rustfmt::skip]`, so `cargo fmt` over a crate that
//! commits the tree does not rewrite the generated files.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use proc_macro2::TokenStream;
use quote::{ToTokens, quote};

use crate::model::types::TypeModule;
use crate::model::{ApiModel, ResourceDef, RootType};

use super::apply::{APPLY_MODULE, apply_name, emit_apply_module};
use super::format::{
    FormatError, GENERATED_HEADER as HEADER, doc_attrs, format_parsed, inner_doc_attrs, parse_file,
};
use super::imports::shorten_file;
use super::runtime::RuntimePaths;
use super::types::{TypesConfig, emit_type_module};
use super::versions::{VersionGate, gated, unfold};
use super::{client, informer};
use crate::naming::{camel, client_module, group_names, ident, snake};

/// Options of the resource emitters.
#[derive(Clone, Debug)]
pub struct EmitOptions {
    /// Crate paths used in emitted code.
    pub paths: RuntimePaths,
    /// Options of the CRD type emitter (same runtime crate).
    pub types: TypesConfig,
    /// Gate each group behind a Cargo feature named like its module.
    pub feature_per_group: bool,
    /// Emit each CRD kind's apply configurations (`<kind>::apply`).
    pub apply_configurations: bool,
}

/// How the module tree is written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Layout {
    /// One file per module; `root_file` is the root module's file name (`mod.rs`, `lib.rs`).
    Tree {
        /// The root module's file name.
        root_file: String,
    },
    /// Every module inline in one file named `file_name`, for `include!`.
    SingleFile {
        /// The file name.
        file_name: String,
    },
}

/// One generated file: its path relative to the output directory and its contents.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GeneratedFile {
    /// Relative path.
    pub path: PathBuf,
    /// Formatted source.
    pub contents: String,
}

/// A module: its items and child modules.
#[derive(Clone, Debug, Default)]
pub struct Module {
    /// Module name (empty for the root).
    pub name: String,
    /// Module documentation.
    pub doc: String,
    /// `#[cfg(feature = ...)]` on the module's declaration.
    pub feature: Option<String>,
    /// The Kubernetes versions the module's declaration exists in.
    pub gate: Option<DeclGate>,
    /// The module's own items.
    pub items: TokenStream,
    /// Child modules, in order.
    pub children: Vec<Module>,
}

/// A module declaration that exists only in some Kubernetes versions: the gate and the
/// k8s-openapi crate path whose version macros apply it.
#[derive(Clone, Debug)]
pub struct DeclGate {
    /// The versions.
    pub gate: VersionGate,
    /// k8s-openapi's path in emitted code.
    pub k8s_openapi: TokenStream,
}

impl DeclGate {
    fn new(gate: Option<VersionGate>, paths: &RuntimePaths) -> Option<Self> {
        gate.map(|gate| Self {
            gate,
            k8s_openapi: paths.k8s_openapi().clone(),
        })
    }
}

/// Everything emitters need to know about one resource.
pub struct ResourceCtx<'a> {
    /// The resource.
    pub res: &'a ResourceDef,
    /// Its group.
    pub group: &'a str,
    /// Its version.
    pub version: &'a str,
    /// Tokens naming its object type.
    pub object: TokenStream,
    /// Crate paths.
    pub paths: &'a RuntimePaths,
    /// The Kubernetes versions it exists in, when its group version is not gated so already.
    pub gate: Option<VersionGate>,
    type_base: String,
}

impl<'a> ResourceCtx<'a> {
    /// The context of one resource outside a group-version tree (the derive macro): its
    /// client, lister and informer are named after `type_base` (`FooClient`, ...).
    pub fn new(
        res: &'a ResourceDef,
        group: &'a str,
        version: &'a str,
        object: TokenStream,
        paths: &'a RuntimePaths,
        type_base: &str,
    ) -> Self {
        Self {
            res,
            group,
            version,
            object,
            paths,
            gate: None,
            type_base: type_base.to_owned(),
        }
    }
}

impl ResourceCtx<'_> {
    /// `items` (code naming this resource outside its module) gated like the resource.
    pub fn gated(&self, items: TokenStream) -> TokenStream {
        gated(self.gate, self.paths.k8s_openapi(), items)
    }
    /// `group/version/plural` (`version/plural` for core).
    pub fn gvr(&self) -> String {
        if self.group.is_empty() {
            format!("{}/{}", self.version, self.res.plural)
        } else {
            format!("{}/{}/{}", self.group, self.version, self.res.plural)
        }
    }
    /// `FooClient`.
    pub fn client_ident(&self) -> proc_macro2::Ident {
        ident(&format!("{}Client", self.type_base))
    }
    /// `FooLister`.
    pub fn lister_ident(&self) -> proc_macro2::Ident {
        ident(&format!("{}Lister", self.type_base))
    }
    /// `FooInformer`.
    pub fn informer_ident(&self) -> proc_macro2::Ident {
        ident(&format!("{}Informer", self.type_base))
    }
    /// The accessor on clientsets and informer sets: the plural, `foos`.
    pub fn accessor_ident(&self) -> proc_macro2::Ident {
        ident(&snake(&self.res.plural))
    }
    /// The resource's module name: `foo_client` (see [`client_module`]).
    pub fn module_ident(&self) -> proc_macro2::Ident {
        ident(&self.module_name())
    }
    /// The resource's module name as a string.
    pub fn module_name(&self) -> String {
        client_module(&self.type_base)
    }
    /// Tokens naming a model type: k8s-openapi paths go through the configured crate path;
    /// generated types live in the group-version module, the resource module's parent.
    pub fn type_tokens(&self, t: &RootType) -> TokenStream {
        type_tokens(t, self.paths)
    }
}

fn type_tokens(t: &RootType, paths: &RuntimePaths) -> TokenStream {
    let parse = |s: &str| -> TokenStream {
        syn::parse_str::<syn::Path>(s)
            .map(|p| quote!(#p))
            .unwrap_or_else(|_| {
                let i = ident(&camel(s));
                quote!(#i)
            })
    };
    match t {
        RootType::External(path) => match path.strip_prefix("k8s_openapi::") {
            Some(rest) => {
                let k8s = paths.k8s_openapi();
                let rest = parse(rest);
                quote!(#k8s::#rest)
            }
            None => parse(path),
        },
        // CRD types: `{group}::{version}::{Kind}` relative to the types tree; the group
        // version module re-exports each root, so the resource module (its child) names it
        // through `super`.
        RootType::Generated(name) => {
            let last = ident(name.rsplit("::").next().unwrap_or(name));
            quote!(super::#last)
        }
    }
}

/// The last segment of a generated object type's path, imported by [`object_import`].
fn short_object(t: &RootType) -> TokenStream {
    let i = match t {
        RootType::External(p) | RootType::Generated(p) => {
            ident(&camel(p.rsplit("::").next().unwrap_or(p)))
        }
    };
    quote!(#i)
}

/// One group version and its resources.
pub struct GroupVersionCtx<'a> {
    /// Group.
    pub group: &'a str,
    /// Version.
    pub version: &'a str,
    /// The group's module name.
    pub group_name: String,
    /// Resources by plural.
    pub resources: Vec<ResourceCtx<'a>>,
    /// Crate paths.
    pub paths: &'a RuntimePaths,
    /// The Kubernetes versions it exists in, when its group is not gated so already.
    pub gate: Option<VersionGate>,
}

impl GroupVersionCtx<'_> {
    /// `items` (code naming this group version outside its module) gated like it.
    pub fn gated(&self, items: TokenStream) -> TokenStream {
        gated(self.gate, self.paths.k8s_openapi(), items)
    }
    /// `apps/v1`, `core/v1`.
    pub fn label(&self) -> String {
        if self.group.is_empty() {
            format!("core/{}", self.version)
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }
    fn camel(&self) -> String {
        format!("{}{}", camel(&self.group_name), camel(self.version))
    }
    /// client-go's accessor name, `AppsV1()`.
    pub fn go_name(&self) -> String {
        format!("{}()", self.camel())
    }
    /// `AppsV1Client`.
    pub fn clientset_ident(&self) -> proc_macro2::Ident {
        ident(&format!("{}Client", self.camel()))
    }
    /// `AppsV1ClientExt`.
    pub fn client_ext_ident(&self) -> proc_macro2::Ident {
        ident(&format!("{}ClientExt", self.camel()))
    }
    /// `apps_v1`.
    pub fn client_accessor_ident(&self) -> proc_macro2::Ident {
        ident(&format!("{}_{}", self.group_name, snake(self.version)))
    }
    /// `AppsV1Informers`.
    pub fn informers_ident(&self) -> proc_macro2::Ident {
        ident(&format!("{}Informers", self.camel()))
    }
    /// `v1`.
    pub fn version_ident(&self) -> proc_macro2::Ident {
        ident(&snake(self.version))
    }
    /// Whether any resource gets an informer.
    pub fn has_informers(&self) -> bool {
        self.resources.iter().any(|r| informer::has_informer(r.res))
    }
}

/// One group and its versions.
pub struct GroupCtx<'a> {
    /// Group.
    pub group: &'a str,
    /// Module name.
    pub name: String,
    /// Versions.
    pub versions: Vec<GroupVersionCtx<'a>>,
    /// Crate paths.
    pub paths: &'a RuntimePaths,
    /// The Kubernetes versions it exists in.
    pub gate: Option<VersionGate>,
}

impl GroupCtx<'_> {
    /// `items` (code naming this group outside its module) gated like it.
    pub fn gated(&self, items: TokenStream) -> TokenStream {
        gated(self.gate, self.paths.k8s_openapi(), items)
    }
    /// `apps`, `core`.
    pub fn label(&self) -> String {
        if self.group.is_empty() {
            "core".to_owned()
        } else {
            self.group.to_owned()
        }
    }
    /// `AppsInformers`.
    pub fn informers_ident(&self) -> proc_macro2::Ident {
        ident(&format!("{}Informers", camel(&self.name)))
    }
    /// `AppsInformersExt`.
    pub fn informers_ext_ident(&self) -> proc_macro2::Ident {
        ident(&format!("{}InformersExt", camel(&self.name)))
    }
    /// `apps`.
    pub fn accessor_ident(&self) -> proc_macro2::Ident {
        ident(&self.name)
    }
    fn has_informers(&self) -> bool {
        self.versions.iter().any(GroupVersionCtx::has_informers)
    }
}

/// Type-name bases of a group version's resources: the kind, or the plural when two
/// resources share a kind.
fn type_bases(resources: &BTreeMap<String, ResourceDef>) -> BTreeMap<String, String> {
    let mut kinds: BTreeMap<String, usize> = BTreeMap::new();
    for r in resources.values() {
        *kinds.entry(camel(&r.kind)).or_default() += 1;
    }
    resources
        .iter()
        .map(|(plural, r)| {
            let k = camel(&r.kind);
            let base = if kinds[&k] > 1 { camel(plural) } else { k };
            (plural.clone(), base)
        })
        .collect()
}

/// Builds the module tree for a model and the CRD types (empty for OpenAPI input): each CRD
/// version's types go in a module named after the kind inside the group version module,
/// which re-exports the root type.
pub fn build_tree(model: &ApiModel, types: &[TypeModule], opts: &EmitOptions) -> Module {
    let paths = &opts.paths;
    let names = group_names(model.groups.keys().map(String::as_str));
    let mut groups: Vec<GroupCtx<'_>> = Vec::new();
    for (gname, group) in &model.groups {
        let name = names[gname].clone();
        let mut versions: Vec<GroupVersionCtx<'_>> = group
            .versions
            .values()
            .map(|gv| {
                let bases = type_bases(&gv.resources);
                let gates: BTreeMap<&String, VersionGate> = gv
                    .resources
                    .iter()
                    .map(|(plural, res)| (plural, VersionGate::of_resource(res)))
                    .collect();
                let gv_gate = VersionGate::hull(gates.values().copied());
                GroupVersionCtx {
                    group: gname,
                    version: &gv.version,
                    group_name: name.clone(),
                    resources: gv
                        .resources
                        .iter()
                        .map(|(plural, res)| ResourceCtx {
                            res,
                            group: gname,
                            version: &gv.version,
                            object: match &res.root {
                                // Named by its full path; the module's imports shorten it.
                                RootType::External(_) => type_tokens(&res.root, paths),
                                RootType::Generated(_) => short_object(&res.root),
                            },
                            paths,
                            gate: gates[plural].within(gv_gate),
                            type_base: bases[plural].clone(),
                        })
                        .collect(),
                    paths,
                    // Absolute for now; made relative to the group's gate below.
                    gate: Some(gv_gate),
                }
            })
            .collect();
        let gv_gates: Vec<VersionGate> = versions
            .iter()
            .map(|v| v.gate.unwrap_or_default())
            .collect();
        let g_gate = VersionGate::hull(gv_gates.iter().copied());
        for (v, gate) in versions.iter_mut().zip(gv_gates) {
            v.gate = gate.within(g_gate);
        }
        groups.push(GroupCtx {
            group: gname,
            name,
            versions,
            paths,
            gate: g_gate.within(VersionGate::ALL),
        });
    }
    // Groups ordered by module name, so `core` sits among the others alphabetically.
    groups.sort_by(|a, b| a.name.cmp(&b.name));

    let mut root = Module {
        doc: "Typed clients, listers and informers generated by kinform-gen.\n\nBring the extension traits into scope with `use <this module>::prelude::*;`, then `client.apps_v1().deployments(\"ns\")` and `factory.apps().v1().deployments()`.".to_owned(),
        ..Module::default()
    };
    let mut prelude = Vec::new();
    for g in &groups {
        let feature = opts.feature_per_group.then(|| g.name.clone());
        let cfg = feature
            .as_ref()
            .map(|f| quote!(#[cfg(feature = #f)]))
            .unwrap_or_default();
        let gmod = g.accessor_ident();
        let mut gm = Module {
            name: g.name.clone(),
            doc: format!("The `{}` API group.", g.label()),
            feature: feature.clone(),
            gate: DeclGate::new(g.gate, paths),
            ..Module::default()
        };
        if g.has_informers() {
            gm.items.extend(informer::group_informers(g));
            let ext = g.informers_ext_ident();
            prelude.push(g.gated(quote!(#cfg pub use super::#gmod::#ext;)));
        }
        for v in &g.versions {
            let vmod = v.version_ident();
            let mut vm = Module {
                name: snake(v.version),
                doc: format!("`{}`: clientset and shared informers.", v.label()),
                gate: DeclGate::new(v.gate, paths),
                ..Module::default()
            };
            let mut taken: BTreeSet<String> =
                v.resources.iter().map(ResourceCtx::module_name).collect();
            let version_types: Vec<&TypeModule> = types
                .iter()
                .filter(|t| t.group == v.group && t.version == v.version)
                .collect();
            for t in &version_types {
                let module = types_module_name(&t.module, &mut taken);
                let kmod = ident(&module);
                vm.items.extend(root_uses(&kmod, t, &version_types, opts));
                vm.children.push(Module {
                    name: module,
                    doc: format!("Types of `{}` `{}`.", t.kind, v.label()),
                    items: emit_type_module(t, &opts.types),
                    children: apply_module(t, &v.label(), opts),
                    ..Module::default()
                });
            }
            vm.items.extend(client::group_version_clientset(v));
            if v.has_informers() {
                vm.items.extend(informer::group_version_informers(v));
            }
            let ext = v.client_ext_ident();
            prelude.push(g.gated(v.gated(quote!(#cfg pub use super::#gmod::#vmod::#ext;))));
            for r in &v.resources {
                let mut rm = Module {
                    name: r.module_name(),
                    doc: resource_module_doc(r),
                    gate: DeclGate::new(r.gate, paths),
                    ..Module::default()
                };
                rm.items.extend(object_import(r));
                rm.items.extend(client::resource_client(r));
                if informer::has_informer(r.res) {
                    rm.items.extend(informer::resource_informer(r));
                }
                vm.children.push(rm);
            }
            gm.children.push(vm);
        }
        root.children.push(gm);
    }
    root.children.push(Module {
        name: "prelude".to_owned(),
        doc: "Every extension trait: `use ...::prelude::*;` adds the clientset accessors to `Client` and the group accessors to `InformerFactory`.".to_owned(),
        items: quote!(#(#prelude)*),
        ..Module::default()
    });
    root
}

/// The `apply` child of a kind's types module (`label`: its group version), unless apply
/// configurations are off.
fn apply_module(t: &TypeModule, label: &str, opts: &EmitOptions) -> Vec<Module> {
    if !opts.apply_configurations {
        return Vec::new();
    }
    vec![Module {
        name: APPLY_MODULE.to_owned(),
        doc: format!(
            "Apply configurations of `{}` `{label}`, for typed server-side apply.",
            t.kind
        ),
        items: emit_apply_module(t, &opts.types),
        ..Module::default()
    }]
}

/// `pub use` of a kind's root type and of its apply configuration from the version module;
/// the apply configuration only when no other kind of the version has a root of that name
/// (a kind `FooApply` beside `Foo`), so that one stays reachable through its `apply` module.
fn root_uses(
    kmod: &proc_macro2::Ident,
    t: &TypeModule,
    version_types: &[&TypeModule],
    opts: &EmitOptions,
) -> TokenStream {
    let root = ident(&t.root);
    let mut uses = quote!(pub use self::#kmod::#root;);
    let applied = apply_name(&t.root);
    if opts.apply_configurations && version_types.iter().all(|o| o.root != applied) {
        let (apply_mod, applied) = (ident(APPLY_MODULE), ident(&applied));
        uses.extend(quote!(pub use self::#kmod::#apply_mod::#applied;));
    }
    uses
}

/// The module of a kind's types: the kind's own module name unless a resource module (a kind
/// `FooClient` has types in `foo_client`, which is `Foo`'s client module) or another kind
/// already took it, then with a `_types` suffix (and a number, if needed), so the choice is
/// deterministic.
fn types_module_name(module: &str, taken: &mut BTreeSet<String>) -> String {
    let mut name = module.to_owned();
    let mut n = 1;
    while taken.contains(&name) {
        name = if n == 1 {
            format!("{module}_types")
        } else {
            format!("{module}_types{n}")
        };
        n += 1;
    }
    taken.insert(name.clone());
    name
}

/// `use super::Foo;` for a generated root type (an external one, k8s-openapi's `Pod`, is
/// imported by the module's short-name pass like every other outside item).
fn object_import(r: &ResourceCtx<'_>) -> TokenStream {
    if let RootType::Generated(_) = &r.res.root {
        let short = &r.object;
        return quote!(use super::#short;);
    }
    TokenStream::new()
}

fn resource_module_doc(r: &ResourceCtx<'_>) -> String {
    let mut doc = format!("`{}` (kind `{}`).", r.gvr(), r.res.kind);
    if let Some(d) = r
        .res
        .docs
        .as_deref()
        .map(str::trim)
        .filter(|d| !d.is_empty())
    {
        doc.push_str("\n\n");
        doc.push_str(d);
    }
    doc
}

/// Renders the tree as files.
pub fn render(root: Module, layout: &Layout) -> Result<Vec<GeneratedFile>, FormatError> {
    let mut files = Vec::new();
    match layout {
        Layout::Tree { root_file } => {
            let mut file = shorten_file(parse_file("crate root", root.items)?);
            let docs = parse_file("crate root", inner_doc_attrs(&root.doc))?;
            file.attrs.splice(0..0, docs.attrs);
            let mut decls = TokenStream::new();
            for child in root.children {
                decls.extend(tree_child(child, PathBuf::new(), &mut files)?);
            }
            file.items.extend(parse_file("crate root", decls)?.items);
            files.push(GeneratedFile {
                path: PathBuf::from(root_file),
                contents: format_parsed(file)?,
            });
        }
        Layout::SingleFile { file_name } => {
            let mut file = shorten_file(parse_file("crate root", root.items)?);
            for child in root.children {
                file.items.push(inline(child, true)?);
            }
            let body = format_parsed(file)?;
            let mut contents = String::from(HEADER);
            for line in root.doc.lines() {
                contents.push_str("//");
                if !line.is_empty() {
                    contents.push(' ');
                    contents.push_str(line);
                }
                contents.push('\n');
            }
            contents.push_str(&body[HEADER.len()..]);
            files.push(GeneratedFile {
                path: PathBuf::from(file_name),
                contents,
            });
        }
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    for f in &mut files {
        f.contents = unfold(&f.contents);
    }
    Ok(files)
}

fn declaration_attrs(m: &Module) -> TokenStream {
    let docs = doc_attrs(&m.doc);
    let cfg = m
        .feature
        .as_ref()
        .map(|f| quote!(#[cfg(feature = #f)]))
        .unwrap_or_default();
    quote!(#docs #cfg)
}

/// Writes `m` (and its children) as files under `dir`; returns its declaration.
fn tree_child(
    m: Module,
    dir: PathBuf,
    files: &mut Vec<GeneratedFile>,
) -> Result<TokenStream, FormatError> {
    let attrs = declaration_attrs(&m);
    let name = ident(&m.name);
    if m.children.is_empty() && m.name == "prelude" && dir.as_os_str().is_empty() {
        // The prelude stays inline in the root file.
        let items = m.items;
        return Ok(quote!(#attrs pub mod #name { #items }));
    }
    let path = if m.children.is_empty() {
        dir.join(format!("{}.rs", m.name))
    } else {
        dir.join(&m.name).join("mod.rs")
    };
    let module = path.display().to_string();
    let mut file = shorten_file(parse_file(&module, m.items)?);
    if !m.children.is_empty() {
        let sub = dir.join(&m.name);
        let mut decls = TokenStream::new();
        for child in m.children {
            decls.extend(tree_child(child, sub.clone(), files)?);
        }
        file.items.extend(parse_file(&module, decls)?.items);
    }
    files.push(GeneratedFile {
        contents: format_parsed(file)?,
        path,
    });
    // The files are prettyplease's output; `cargo fmt` must leave them alone, or `--check`
    // would find every committed file stale after a workspace-wide format. rustfmt does not
    // descend into a skipped module, so the root's declarations are enough.
    let skip = if dir.as_os_str().is_empty() {
        quote!(#[rustfmt::skip])
    } else {
        TokenStream::new()
    };
    Ok(gate_declaration(
        m.gate.as_ref(),
        quote!(#attrs #skip pub mod #name;),
    ))
}

/// A module's declaration inside its version gate, if it has one.
fn gate_declaration(gate: Option<&DeclGate>, decl: TokenStream) -> TokenStream {
    match gate {
        Some(g) => g.gate.wrap(&g.k8s_openapi, decl),
        None => decl,
    }
}

/// `m` as an inline module. A top-level one (`top`) allows the lints that an unused part of
/// the API would raise where the file is `include!`d into a binary or a private module
/// (`dead_code`, `unused_imports` of the prelude): generated code cannot know which resources
/// the includer uses, and every item it declares is meant as API.
fn inline(m: Module, top: bool) -> Result<syn::Item, FormatError> {
    let attrs = declaration_attrs(&m);
    let allow = if top {
        quote!(#[allow(dead_code, unused_imports)])
    } else {
        TokenStream::new()
    };
    let name = ident(&m.name);
    let body = shorten_file(parse_file(&m.name, m.items)?);
    let mut module: syn::ItemMod =
        syn::parse2(quote!(#attrs #allow pub mod #name {})).map_err(|e| FormatError {
            module: m.name.clone(),
            message: e.to_string(),
        })?;
    module.attrs.extend(body.attrs);
    let mut items = body.items;
    for child in m.children {
        items.push(inline(child, false)?);
    }
    if let Some((_, content)) = &mut module.content {
        *content = items;
    }
    let item = syn::Item::Mod(module);
    match &m.gate {
        None => Ok(item),
        Some(_) => {
            let tokens = gate_declaration(m.gate.as_ref(), item.to_token_stream());
            syn::parse2(tokens).map_err(|e| FormatError {
                module: m.name,
                message: e.to_string(),
            })
        }
    }
}
