//! Coverage: every GroupVersionResource of the Kubernetes v1.35 OpenAPI spec, of the v1.36
//! spec (those 1.35 lacks) and of 1.37 ([`ONLY_1_37`], the resources of k8s-openapi's 1.37
//! sources neither spec has) is exposed by the crate with exactly the verbs and subresources
//! the spec declares, and nothing else.
//!
//! Both sides are read independently of the generator: the spec's `paths` with serde_json
//! (the `x-kubernetes-action` and `x-kubernetes-group-version-kind` of every operation), the
//! crate's committed sources with syn. The mapping checked is the crate's public contract:
//! module `<group>::<version>::<kind>_client` (`core` for the core group, the first DNS label
//! otherwise); client methods `get`, `list`, `watch`, `create`, `replace` (put), `patch`,
//! `delete`, `delete_collection`; subresource methods `get_<sub>`, `replace_<sub>`,
//! `patch_<sub>`, `create_<sub>` (post), a byte-stream `<sub>` for a GET answering a string
//! (`log`); for connect subresources `exec`, `attach`, `portforward`, and `proxy` plus
//! `proxy_get` (their HTTP methods are all served by the one `proxy` call); a lister and an
//! informer exactly when the resource can be listed and watched.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;
use syn::{ImplItem, Item};

const SPEC: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../shared/corpus/openapi/swagger.json"
);
const SPEC_1_36: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../shared/corpus/openapi/v1.36/swagger.json"
);
const SRC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/src");

/// `(group, version, plural, kind, namespaced, verbs of)`: see [`ONLY_1_37`].
type OnlyLater = (
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    bool,
    Option<&'static str>,
);

/// The resources of Kubernetes 1.37 that neither spec has (k8s-openapi 0.29's `src/v1_37`):
/// `(group, version, plural, kind, namespaced, version of the same group and kind whose
/// verbs it has)`; `None` takes the generic registry's verbs, as kinform-gen's rule says
/// (`Generator::later_k8s_openapi_sources`).
const ONLY_1_37: &[OnlyLater] = &[
    (
        "certificates.k8s.io",
        "v1",
        "clustertrustbundles",
        "ClusterTrustBundle",
        false,
        Some("v1beta1"),
    ),
    (
        "certificates.k8s.io",
        "v1",
        "podcertificaterequests",
        "PodCertificateRequest",
        true,
        Some("v1beta1"),
    ),
    (
        "lifecycle.k8s.io",
        "v1alpha1",
        "evictionrequests",
        "EvictionRequest",
        true,
        None,
    ),
    (
        "lifecycle.k8s.io",
        "v1alpha1",
        "evictions",
        "Eviction",
        true,
        None,
    ),
    (
        "resource.k8s.io",
        "v1",
        "devicetaintrules",
        "DeviceTaintRule",
        false,
        Some("v1beta2"),
    ),
    (
        "scheduling.k8s.io",
        "v1alpha3",
        "compositepodgroups",
        "CompositePodGroup",
        true,
        None,
    ),
    (
        "scheduling.k8s.io",
        "v1alpha3",
        "podgroups",
        "PodGroup",
        true,
        Some("v1alpha2"),
    ),
    (
        "scheduling.k8s.io",
        "v1alpha3",
        "workloads",
        "Workload",
        true,
        Some("v1alpha2"),
    ),
    (
        "scheduling.k8s.io",
        "v1beta1",
        "podgroups",
        "PodGroup",
        true,
        Some("v1alpha2"),
    ),
    (
        "scheduling.k8s.io",
        "v1beta1",
        "workloads",
        "Workload",
        true,
        Some("v1alpha2"),
    ),
    (
        "storagemigration.k8s.io",
        "v1",
        "storageversionmigrations",
        "StorageVersionMigration",
        false,
        Some("v1beta1"),
    ),
];

/// What the spec declares for one GVR.
#[derive(Clone, Debug, Default)]
struct SpecResource {
    kind: String,
    namespaced: bool,
    /// Client method name -> kind of the object it carries (`None` for byte streams).
    methods: BTreeMap<String, Option<String>>,
    /// Connect subresources (each exposed as a method, see [`connect_methods`]).
    connect: BTreeSet<String>,
    list: bool,
    watch: bool,
}

type Gvr = (String, String, String);

/// The GVRs of the 1.35 spec, then those of the 1.36 spec it lacks, then [`ONLY_1_37`].
fn expected() -> BTreeMap<Gvr, SpecResource> {
    let mut out = read_spec(SPEC);
    for (gvr, res) in read_spec(SPEC_1_36) {
        out.entry(gvr).or_insert(res);
    }
    for &(group, version, plural, kind, namespaced, verbs_of) in ONLY_1_37 {
        let gvr = (group.to_owned(), version.to_owned(), plural.to_owned());
        assert!(
            !out.contains_key(&gvr),
            "{gvr:?} is in a spec: not 1.37-only"
        );
        let res = match verbs_of {
            Some(v) => {
                let from = (group.to_owned(), v.to_owned(), plural.to_owned());
                let res = out
                    .get(&from)
                    .unwrap_or_else(|| panic!("{from:?} in no spec"));
                assert_eq!(res.kind, kind, "{from:?}");
                SpecResource {
                    namespaced,
                    ..res.clone()
                }
            }
            None => {
                let verbs = [
                    "get",
                    "list",
                    "watch",
                    "create",
                    "replace",
                    "patch",
                    "apply",
                    "delete",
                    "delete_collection",
                ];
                SpecResource {
                    kind: kind.to_owned(),
                    namespaced,
                    methods: verbs
                        .iter()
                        .map(|m| ((*m).to_owned(), Some(kind.to_owned())))
                        .collect(),
                    connect: BTreeSet::new(),
                    list: true,
                    watch: true,
                }
            }
        };
        out.insert(gvr, res);
    }
    out
}

fn read_spec(file: &str) -> BTreeMap<Gvr, SpecResource> {
    let text = fs::read_to_string(file).unwrap_or_else(|e| panic!("{file}: {e}"));
    let spec: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{file}: {e}"));
    let mut out: BTreeMap<Gvr, SpecResource> = BTreeMap::new();
    for (path, ops) in spec["paths"].as_object().expect("paths") {
        let (group, rest) = if let Some(rest) = path.strip_prefix("/api/") {
            (String::new(), rest)
        } else if let Some(rest) = path.strip_prefix("/apis/") {
            match rest.split_once('/') {
                Some((g, rest)) => (g.to_owned(), rest),
                None => continue,
            }
        } else {
            continue;
        };
        let mut segs: Vec<&str> = rest.split('/').filter(|s| !s.is_empty()).collect();
        if segs.len() < 2 {
            continue; // discovery: `/api/v1`, `/apis/apps/v1`
        }
        let version = segs.remove(0).to_owned();
        if segs.first() == Some(&"watch") {
            segs.remove(0);
        }
        let namespaced = segs.len() > 2 && segs[0] == "namespaces" && segs[1] == "{namespace}";
        if namespaced {
            segs.drain(..2);
        }
        let plural = segs[0].to_owned();
        let sub = match segs.as_slice() {
            [_] | [_, "{name}"] => None,
            [_, "{name}", sub, ..] => Some((*sub).to_owned()),
            other => panic!("{path}: unexpected path shape {other:?}"),
        };
        for (method, op) in ops.as_object().expect("operations") {
            let Some(action) = op["x-kubernetes-action"].as_str() else {
                continue;
            };
            let kind = op["x-kubernetes-group-version-kind"]["kind"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            let res = out
                .entry((group.clone(), version.clone(), plural.clone()))
                .or_default();
            // `/api/v1/pods` (all namespaces) lists a namespaced resource too.
            res.namespaced |= namespaced;
            let name = match (&sub, action) {
                (_, "connect") => {
                    let sub = sub.clone().expect("connect on a subresource");
                    for m in connect_methods(&sub) {
                        res.methods.insert(m, None);
                    }
                    res.connect.insert(sub);
                    continue;
                }
                (None, _) => {
                    res.kind.clone_from(&kind);
                    match action {
                        "get" => "get",
                        "list" => {
                            res.list = true;
                            "list"
                        }
                        "watch" | "watchlist" => {
                            res.watch = true;
                            "watch"
                        }
                        "post" => "create",
                        "put" => "replace",
                        "patch" => {
                            res.methods.insert("apply".to_owned(), Some(kind.clone()));
                            "patch"
                        }
                        "delete" => "delete",
                        "deletecollection" => "delete_collection",
                        other => panic!("{path} {method}: unknown action {other}"),
                    }
                    .to_owned()
                }
                // A PATCH takes server-side apply too: `apply` beside `patch`.
                (Some(s), _) if s == "status" && action == "patch" => {
                    res.methods
                        .insert("apply_status".to_owned(), Some(kind.clone()));
                    "patch_status".to_owned()
                }
                (Some(s), _) => {
                    let streams =
                        op["responses"]["200"]["schema"]["type"].as_str() == Some("string");
                    if streams && action == "get" {
                        res.methods.insert(s.clone(), None);
                        continue;
                    }
                    let verb = match action {
                        "get" => "get",
                        "put" => "replace",
                        "patch" => "patch",
                        "post" => "create",
                        other => panic!("{path} {method}: unexpected subresource action {other}"),
                    };
                    format!("{verb}_{s}")
                }
            };
            res.methods.insert(name, Some(kind));
        }
    }
    out
}

/// The client methods of a connect subresource.
fn connect_methods(sub: &str) -> Vec<String> {
    if sub == "proxy" {
        vec!["proxy".into(), "proxy_get".into()]
    } else {
        vec![sub.to_owned()]
    }
}

/// Return types of connect methods: they carry no object kind.
const CONNECT_TYPES: &[&str] = &[
    "ByteStream",
    "AttachedProcess",
    "Portforwarder",
    "ProxyResponse",
    "Vec",
    "u8",
];

fn group_module(group: &str) -> &str {
    if group.is_empty() {
        "core"
    } else {
        group.split('.').next().unwrap_or(group)
    }
}

fn parse(path: &Path) -> syn::File {
    let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn last_segment(ty: &syn::Type) -> Option<String> {
    match ty {
        syn::Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
        syn::Type::Reference(r) => last_segment(&r.elem),
        _ => None,
    }
}

/// The innermost first type argument's last segment: `Result<ObjectList<Pod>>`,
/// `Result<DeleteResponse<Pod>>`, `Api<Pod>` -> `Pod`; `Result<ByteStream>` -> `ByteStream`.
fn generic_arg(ty: &syn::Type) -> Option<String> {
    let syn::Type::Path(p) = ty else { return None };
    let last = p.path.segments.last()?;
    let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    match args.args.first()? {
        syn::GenericArgument::Type(t) => generic_arg(t).or_else(|| last_segment(t)),
        _ => None,
    }
}

fn docs(attrs: &[syn::Attribute]) -> String {
    attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .filter_map(|a| match &a.meta {
            syn::Meta::NameValue(nv) => match &nv.value {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(s),
                    ..
                }) => Some(s.value()),
                _ => None,
            },
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// What one generated resource module exposes.
#[derive(Debug, Default)]
struct CrateResource {
    object: Option<String>,
    /// Method -> kind carried (the `object` argument's type, else the `Result`'s).
    methods: BTreeMap<String, Option<String>>,
    ctor_takes_namespace: bool,
    client_docs: String,
    lister: bool,
    informer: bool,
}

fn read_resource(path: &Path) -> CrateResource {
    let mut out = CrateResource::default();
    for item in parse(path).items {
        match item {
            Item::Struct(s) if s.ident.to_string().ends_with("Client") => {
                out.client_docs = docs(&s.attrs);
                out.object = s
                    .fields
                    .iter()
                    .find(|f| f.ident.as_ref().is_some_and(|i| i == "api"))
                    .and_then(|f| generic_arg(&f.ty));
            }
            Item::Struct(s) if s.ident.to_string().ends_with("Informer") => out.informer = true,
            Item::Type(t) if t.ident.to_string().ends_with("Lister") => out.lister = true,
            Item::Impl(imp)
                if last_segment(&imp.self_ty).is_some_and(|n| n.ends_with("Client")) =>
            {
                for it in imp.items {
                    let ImplItem::Fn(f) = it else { continue };
                    let name = f.sig.ident.to_string();
                    if name == "new" {
                        out.ctor_takes_namespace = f.sig.inputs.len() == 2;
                        continue;
                    }
                    let object_arg = f.sig.inputs.iter().find_map(|arg| match arg {
                        syn::FnArg::Typed(pt) => match &*pt.pat {
                            syn::Pat::Ident(i) if i.ident == "object" => last_segment(&pt.ty),
                            _ => None,
                        },
                        syn::FnArg::Receiver(_) => None,
                    });
                    let ret = match &f.sig.output {
                        syn::ReturnType::Type(_, t) => generic_arg(t),
                        syn::ReturnType::Default => None,
                    };
                    let carried = object_arg
                        .or(ret)
                        .filter(|k| !CONNECT_TYPES.contains(&k.as_str()));
                    out.methods.insert(name, carried);
                }
            }
            _ => {}
        }
    }
    out
}

/// `fn <name>` of every inherent impl in a group version's `mod.rs`, by self type.
fn accessors(path: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for item in parse(path).items {
        if let Item::Impl(imp) = item {
            if imp.trait_.is_some() {
                continue;
            }
            let ty = last_segment(&imp.self_ty).unwrap_or_default();
            let fns = out.entry(ty).or_default();
            for it in imp.items {
                fn_names(it, fns);
            }
        }
    }
    out
}

/// The name of `item` when it is a method, or of the method inside its version gates
/// (`k8s_if_ge_1_36! { pub fn devicetaintrules(..) }`).
fn fn_names(item: ImplItem, out: &mut BTreeSet<String>) {
    match item {
        ImplItem::Fn(f) => {
            out.insert(f.sig.ident.to_string());
        }
        ImplItem::Macro(m) => {
            let inner: ImplItem = syn::parse2(m.mac.tokens).expect("a gated impl item");
            fn_names(inner, out);
        }
        _ => {}
    }
}

fn resource_files(dir: &Path, out: &mut BTreeSet<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            resource_files(&path, out);
        } else if path
            .file_name()
            .is_some_and(|n| n != "mod.rs" && n != "lib.rs")
        {
            out.insert(path);
        }
    }
}

/// Every difference between the spec and the crate, as readable lines.
fn problems() -> Vec<String> {
    let spec = expected();
    let src = Path::new(SRC);
    let mut problems = Vec::new();
    let mut expected_files = BTreeSet::new();
    for ((group, version, plural), want) in &spec {
        let gvr = if group.is_empty() {
            format!("{version}/{plural}")
        } else {
            format!("{group}/{version}/{plural}")
        };
        let gm = group_module(group);
        // `Pod` -> `pod_client.rs`, `CSIDriver` -> `csi_driver_client.rs` (the generator's
        // naming rule for identifiers, shared with users who name the module).
        let module = kinform_codegen::naming::client_module(&want.kind);
        let file = src.join(gm).join(version).join(format!("{module}.rs"));
        expected_files.insert(file.clone());
        if !file.exists() {
            problems.push(format!("{gvr}: missing resource module {}", file.display()));
            continue;
        }
        let have = read_resource(&file);
        if have.object.as_deref() != Some(want.kind.as_str()) {
            problems.push(format!(
                "{gvr}: object type {:?}, spec kind {}",
                have.object, want.kind
            ));
        }
        if have.ctor_takes_namespace != want.namespaced {
            problems.push(format!(
                "{gvr}: namespaced is {}, client takes a namespace: {}",
                want.namespaced, have.ctor_takes_namespace
            ));
        }
        for (m, kind) in &want.methods {
            match have.methods.get(m) {
                None => problems.push(format!("{gvr}: missing method {m}")),
                Some(k) if k != kind => {
                    problems.push(format!("{gvr}: {m} carries {k:?}, spec says {kind:?}"))
                }
                Some(_) => {}
            }
        }
        for m in have
            .methods
            .keys()
            .filter(|m| !want.methods.contains_key(*m))
        {
            problems.push(format!("{gvr}: method {m} is not in the spec"));
        }
        for c in &want.connect {
            if connect_methods(c)
                .iter()
                .any(|m| !have.methods.contains_key(m))
            {
                problems.push(format!(
                    "{gvr}: connect subresource {c} has no client method"
                ));
            }
            if have.client_docs.contains("not generated") {
                problems.push(format!(
                    "{gvr}: the client's docs say a subresource is not generated"
                ));
            }
        }
        let informable = want.list && want.watch;
        if have.lister != informable || have.informer != informable {
            problems.push(format!(
                "{gvr}: list+watch {informable}, lister {}, informer {}",
                have.lister, have.informer
            ));
        }
        let gv_mod = src.join(gm).join(version).join("mod.rs");
        let acc = accessors(&gv_mod);
        let by_suffix = |suffix: &str| {
            acc.iter()
                .filter(|(t, _)| t.ends_with(suffix))
                .any(|(_, fns)| fns.contains(plural.as_str()))
        };
        if !by_suffix("Client") {
            problems.push(format!(
                "{gvr}: no clientset accessor `{plural}` in {}",
                gv_mod.display()
            ));
        }
        if informable && !by_suffix("Informers") {
            problems.push(format!(
                "{gvr}: no informer accessor `{plural}` in {}",
                gv_mod.display()
            ));
        }
    }
    let mut files = BTreeSet::new();
    resource_files(src, &mut files);
    for extra in files.difference(&expected_files) {
        problems.push(format!(
            "{}: a resource module the spec does not declare",
            extra.display()
        ));
    }
    problems
}

#[test]
fn every_spec_resource_verb_and_subresource_is_exposed() {
    let spec = read_spec(SPEC);
    // Sanity: the reader sees the spec (guards against a vacuous pass).
    assert!(
        spec.len() > 80,
        "only {} GVRs read from the spec",
        spec.len()
    );
    let pods = &spec[&(String::new(), "v1".to_owned(), "pods".to_owned())];
    for m in [
        "get_status",
        "create_eviction",
        "create_binding",
        "log",
        "patch_resize",
        "get_ephemeralcontainers",
    ] {
        assert!(pods.methods.contains_key(m), "spec reader lost pods {m}");
    }
    for c in ["exec", "attach", "portforward", "proxy"] {
        assert!(pods.connect.contains(c), "spec reader lost pods {c}");
        assert!(
            pods.methods.contains_key(c),
            "pods {c} is not an expected method"
        );
    }
    for plural in ["services", "nodes"] {
        let r = &spec[&(String::new(), "v1".to_owned(), plural.to_owned())];
        assert!(r.methods.contains_key("proxy") && r.methods.contains_key("proxy_get"));
    }
    let problems = problems();
    assert!(
        problems.is_empty(),
        "{} problem(s):\n{}",
        problems.len(),
        problems.join("\n")
    );
}

/// Each group module sits behind a feature of the same name, which `all` turns on.
#[test]
fn every_group_has_a_feature_and_all_enables_it() {
    let manifest =
        fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml")).expect("Cargo.toml");
    let lib = fs::read_to_string(Path::new(SRC).join("lib.rs")).expect("lib.rs");
    // A group some versions lack sits inside a version gate, indented.
    let lib: String = lib
        .lines()
        .map(|l| format!("{}\n", l.trim_start()))
        .collect();
    let all_start = manifest.find("\nall = [").expect("an `all` feature");
    let all_end = all_start + manifest[all_start..].find(']').expect("end of `all`");
    let all = &manifest[all_start..all_end];
    let spec = expected();
    let groups: BTreeSet<&str> = spec.keys().map(|(g, _, _)| group_module(g)).collect();
    let mut problems = Vec::new();
    for g in groups {
        if !manifest.contains(&format!("\n{g} = []")) {
            problems.push(format!("no feature `{g}` in Cargo.toml"));
        }
        if !all.contains(&format!("\"{g}\"")) {
            problems.push(format!("`all` does not enable `{g}`"));
        }
        if !lib.contains(&format!(
            "#[cfg(feature = \"{g}\")]\n#[rustfmt::skip]\npub mod {g};"
        )) {
            problems.push(format!(
                "lib.rs does not gate `pub mod {g}` on feature `{g}`"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
