//! The resources of k8s-openapi's own sources of one Kubernetes version (the crate's
//! `src/v1_37`), for a version whose OpenAPI document is not at hand.
//!
//! k8s-openapi 0.29 keeps no operations, but every type the API server serves as a resource
//! says what kubectl's discovery would: `impl crate::Resource for T` holds its `GROUP`,
//! `VERSION`, `KIND`, `URL_PATH_SEGMENT` (the plural) and `Scope` (`NamespaceResourceScope`,
//! `ClusterResourceScope`; `SubResourceScope` marks a subresource's body, such as `Scale`,
//! which is no resource of its own), and `impl crate::ListableResource for T` says it can be
//! listed. The type's Rust path is its file's module path. `apimachinery`'s types are not
//! read: its `Resource`s are `Status` and the discovery documents. The verbs are not in the sources;
//! [`crate::Generator::later_k8s_openapi_sources`] documents the rule that gives them.
//!
//! Read with syn, as kinform-codegen's in-place emitter reads the same sources for its
//! decoders; only files that name `crate::Resource` are parsed. A file that does not parse,
//! or a `Resource` impl without one of the constants, is an error naming the file, never a
//! resource left out.

use std::path::{Path, PathBuf};

use crate::model::Scope;
use crate::read::openapi::type_path::K8S_OPENAPI;

/// The module of apimachinery's types: `Status` and the discovery documents (`APIGroup`,
/// `APIResourceList`) implement `Resource` too, but are no resource the API server stores.
const APIMACHINERY: &str = "apimachinery";

/// Why k8s-openapi's sources could not be read.
#[derive(Debug, thiserror::Error)]
pub enum SourcesError {
    /// A file or directory could not be read.
    #[error("reading {path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A file is not shaped like k8s-openapi's generated sources.
    #[error("{path}: {message}")]
    Source {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
}

/// One resource type of the sources.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceResource {
    /// API group (`""` for the core group).
    pub group: String,
    /// Version (`v1alpha1`).
    pub version: String,
    /// Kind (`EvictionRequest`).
    pub kind: String,
    /// Plural, the URL path segment (`evictionrequests`).
    pub plural: String,
    /// Namespaced or cluster-scoped.
    pub scope: Scope,
    /// `LIST_KIND` of its `ListableResource` impl, when it has one.
    pub list_kind: Option<String>,
    /// Its path, starting with the crate (`k8s_openapi::api::lifecycle::v1alpha1::EvictionRequest`).
    pub rust: String,
    /// The file it was read from.
    pub file: PathBuf,
}

/// The resources of k8s-openapi's sources of one version, `dir` (`src/v1_37`), sorted by
/// Rust path.
pub fn read_source_resources(dir: &Path) -> Result<Vec<SourceResource>, SourcesError> {
    let mut out = Vec::new();
    collect(dir, &mut Vec::new(), &mut out)?;
    out.sort_by(|a, b| a.rust.cmp(&b.rust));
    Ok(out)
}

fn collect(
    dir: &Path,
    modules: &mut Vec<String>,
    out: &mut Vec<SourceResource>,
) -> Result<(), SourcesError> {
    let io = |source| SourcesError::Io {
        path: dir.to_owned(),
        source,
    };
    let mut entries = std::fs::read_dir(dir)
        .map_err(io)?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(io)?;
    entries.sort();
    for path in entries {
        let Some(stem) = path.file_stem().and_then(|s| s.to_str()).map(str::to_owned) else {
            continue;
        };
        if path.is_dir() {
            if modules.is_empty() && stem == APIMACHINERY {
                continue;
            }
            modules.push(stem);
            collect(&path, modules, out)?;
            modules.pop();
        } else if path.extension().is_some_and(|e| e == "rs") {
            read_file(&path, modules, out)?;
        }
    }
    Ok(())
}

fn read_file(
    path: &Path,
    modules: &[String],
    out: &mut Vec<SourceResource>,
) -> Result<(), SourcesError> {
    let text = std::fs::read_to_string(path).map_err(|source| SourcesError::Io {
        path: path.to_owned(),
        source,
    })?;
    if !text.contains("impl crate::Resource for ") {
        return Ok(());
    }
    let error = |message: String| SourcesError::Source {
        path: path.to_owned(),
        message,
    };
    let file = syn::parse_file(&text).map_err(|e| error(format!("not Rust: {e}")))?;
    let impls: Vec<&syn::ItemImpl> = file
        .items
        .iter()
        .filter_map(|i| match i {
            syn::Item::Impl(imp) if imp.generics.params.is_empty() => Some(imp),
            _ => None,
        })
        .collect();
    for imp in &impls {
        if trait_name(imp) != Some("Resource") {
            continue;
        }
        let ty = self_name(imp)
            .ok_or_else(|| error("`impl crate::Resource` for a non-path type".into()))?;
        let consts = |name: &str| {
            imp.items.iter().find_map(|item| match item {
                syn::ImplItem::Const(c) if c.ident == name => match &c.expr {
                    syn::Expr::Lit(syn::ExprLit {
                        lit: syn::Lit::Str(s),
                        ..
                    }) => Some(s.value()),
                    _ => None,
                },
                _ => None,
            })
        };
        let need = |name: &str| {
            consts(name).ok_or_else(|| {
                error(format!(
                    "`impl crate::Resource for {ty}` has no string `{name}`"
                ))
            })
        };
        let scope = imp.items.iter().find_map(|item| match item {
            syn::ImplItem::Type(t) if t.ident == "Scope" => match &t.ty {
                syn::Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
                _ => None,
            },
            _ => None,
        });
        let scope = match scope.as_deref() {
            Some("NamespaceResourceScope") => Scope::Namespaced,
            Some("ClusterResourceScope") => Scope::Cluster,
            // A subresource's body (`Scale`, `Eviction`, `TokenRequest`), or `Status`.
            Some("SubResourceScope") => continue,
            other => {
                return Err(error(format!(
                    "`impl crate::Resource for {ty}`: scope {other:?}"
                )));
            }
        };
        let list_kind = impls
            .iter()
            .filter(|i| {
                trait_name(i) == Some("ListableResource")
                    && self_name(i).as_deref() == Some(ty.as_str())
            })
            .find_map(|i| {
                i.items.iter().find_map(|item| match item {
                    syn::ImplItem::Const(c) if c.ident == "LIST_KIND" => match &c.expr {
                        syn::Expr::Lit(syn::ExprLit {
                            lit: syn::Lit::Str(s),
                            ..
                        }) => Some(s.value()),
                        _ => None,
                    },
                    _ => None,
                })
            });
        let mut rust = String::from(K8S_OPENAPI);
        for m in modules {
            rust.push_str("::");
            rust.push_str(m);
        }
        rust.push_str("::");
        rust.push_str(&ty);
        out.push(SourceResource {
            group: need("GROUP")?,
            version: need("VERSION")?,
            kind: need("KIND")?,
            plural: need("URL_PATH_SEGMENT")?,
            scope,
            list_kind,
            rust,
            file: path.to_owned(),
        });
    }
    Ok(())
}

/// The last segment of an impl's trait (`Resource` of `crate::Resource`).
fn trait_name(imp: &syn::ItemImpl) -> Option<&str> {
    let (_, path, _) = imp.trait_.as_ref()?;
    let first = path.segments.first()?;
    let last = path.segments.last()?;
    (first.ident == "crate" && path.segments.len() == 2).then_some(())?;
    Some(match last.ident.to_string().as_str() {
        "Resource" => "Resource",
        "ListableResource" => "ListableResource",
        _ => return None,
    })
}

/// The name of an impl's self type when it is a plain path (`Pod`).
fn self_name(imp: &syn::ItemImpl) -> Option<String> {
    match &*imp.self_ty {
        syn::Type::Path(p) if p.qself.is_none() => {
            p.path.segments.last().map(|s| s.ident.to_string())
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, rel: &str, text: &str) {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }

    const THING: &str = r#"// Generated from definition io.k8s.api.demo.v1alpha1.Thing
pub struct Thing { pub metadata: crate::apimachinery::pkg::apis::meta::v1::ObjectMeta }
impl crate::Resource for Thing {
    const API_VERSION: &'static str = "demo.k8s.io/v1alpha1";
    const GROUP: &'static str = "demo.k8s.io";
    const KIND: &'static str = "Thing";
    const VERSION: &'static str = "v1alpha1";
    const URL_PATH_SEGMENT: &'static str = "things";
    type Scope = crate::ClusterResourceScope;
}
impl crate::ListableResource for Thing {
    const LIST_KIND: &'static str = "ThingList";
}
"#;

    #[test]
    fn reads_resources_and_skips_subresource_bodies_and_apimachinery() {
        let tmp = tempfile::tempdir().expect("tempdir");
        write(tmp.path(), "api/demo/v1alpha1/thing.rs", THING);
        let body = THING
            .replace("Thing", "ThingScale")
            .replace("ClusterResourceScope", "SubResourceScope");
        write(tmp.path(), "api/demo/v1alpha1/thing_scale.rs", &body);
        let status = THING.replace("Thing", "Status");
        write(
            tmp.path(),
            "apimachinery/pkg/apis/meta/v1/status.rs",
            &status,
        );
        let mut review = THING
            .replace("Thing", "Review")
            .replace("ClusterResourceScope", "NamespaceResourceScope");
        review.truncate(
            review
                .find("impl crate::ListableResource")
                .expect("list impl"),
        );
        write(tmp.path(), "api/demo/v1/review.rs", &review);
        let found = read_source_resources(tmp.path()).expect("reads");
        let names: Vec<(&str, Scope, Option<&str>)> = found
            .iter()
            .map(|r| (r.rust.as_str(), r.scope, r.list_kind.as_deref()))
            .collect();
        assert_eq!(
            names,
            [
                (
                    "k8s_openapi::api::demo::v1::Review",
                    Scope::Namespaced,
                    None
                ),
                (
                    "k8s_openapi::api::demo::v1alpha1::Thing",
                    Scope::Cluster,
                    Some("ThingList")
                ),
            ]
        );
        let thing = &found[1];
        assert_eq!(
            (
                thing.group.as_str(),
                thing.version.as_str(),
                thing.kind.as_str(),
                thing.plural.as_str()
            ),
            ("demo.k8s.io", "v1alpha1", "Thing", "things")
        );
    }

    #[test]
    fn a_resource_without_its_plural_is_an_error_naming_the_file() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let broken = THING.replace("URL_PATH_SEGMENT", "PATH_SEGMENT");
        write(tmp.path(), "api/demo/v1alpha1/thing.rs", &broken);
        let err = read_source_resources(tmp.path()).expect_err("no plural");
        let text = err.to_string();
        assert!(
            text.contains("thing.rs") && text.contains("URL_PATH_SEGMENT"),
            "{text}"
        );
        write(
            tmp.path(),
            "api/demo/v1alpha1/thing.rs",
            "impl crate::Resource for {",
        );
        let err = read_source_resources(tmp.path()).expect_err("not Rust");
        assert!(err.to_string().contains("not Rust"), "{err}");
    }
}
