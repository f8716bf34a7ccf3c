//! The library front end, for build scripts and the CLI, in the manner of prost-build: a
//! builder collecting inputs and options, then [`Generator::generate`] (write) or
//! [`Generator::check`] (compare with what is on disk).
//!
//! In `build.rs` (the whole file, and the `include!` of its output):
//!
//! ```no_run
//! // build.rs, the body of its `fn main()`:
//! println!("cargo:rerun-if-changed=crds");
//! let out_dir = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
//! if let Err(e) = kinform_codegen::Generator::new().crd_dir("crds").out_dir(out_dir).generate() {
//!     eprintln!("kinform-gen: {e}"); // names the file and the schema path
//!     std::process::exit(1);
//! }
//! // src/lib.rs: pub mod generated { include!(concat!(env!("OUT_DIR"), "/kinform_generated.rs")); }
//! ```
//!
//! (`no_run` only because a doc test has no `OUT_DIR`; `examples/crd-codegen` in the
//! repository is exactly this build script and `include!`, built and run by its test.) What
//! it writes, from a CRD:
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let crds = tempfile::tempdir()?;
//! std::fs::write(crds.path().join("foos.yaml"), r#"
//! apiVersion: apiextensions.k8s.io/v1
//! kind: CustomResourceDefinition
//! metadata: {name: foos.example.com}
//! spec:
//!   group: example.com
//!   scope: Namespaced
//!   names: {kind: Foo, plural: foos}
//!   versions:
//!   - name: v1
//!     served: true
//!     storage: true
//!     schema:
//!       openAPIV3Schema:
//!         type: object
//!         properties:
//!           spec: {type: object, properties: {size: {type: integer}}}
//! "#)?;
//! let out = tempfile::tempdir()?;
//! kinform_codegen::Generator::new().crd_dir(crds.path()).out_dir(out.path()).generate()?;
//! let code = std::fs::read_to_string(out.path().join("kinform_generated.rs"))?;
//! for item in ["pub struct Foo ", "pub struct FooSpec", "FooClient", "FooLister", "FooInformer"] {
//!     assert!(code.contains(item), "{item}");
//! }
//! # Ok(()) }
//! ```
//!
//! The default layout is one file, `kinform_generated.rs`, for `include!`; the CLI writes a
//! module tree instead ([`Layout::Tree`]).
//!
//! What the inputs hold but the output leaves out is reported, never dropped in silence:
//! [`Generator::generate_report`] (and `check_report`, `render_report`) return a [`Warning`]
//! for every document that is not a CRD, file of a CRD directory that is not read, version a
//! CRD does not serve, deprecated version generated, and `group`/`version` filter that
//! matches nothing; `kinform-gen` prints them. A run whose result holds no resource at all is
//! an error ([`GenerateError::Empty`]) that lists them.

use std::fs;
use std::path::{Path, PathBuf};

use crate::emit::format::{DocLines, FormatError, GENERATED_HEADER as HEADER};
use crate::emit::modules::{EmitOptions, GeneratedFile, Layout, build_tree, render};
use crate::emit::runtime::{PathError, RuntimePaths};
use crate::emit::types::TypesConfig;
use crate::emit::versions::VersionGate;
use crate::model::types::TypeModule;
use crate::model::{ApiModel, ResourceDef, RootType, Verb};
use crate::read::crd::read_crds;
use crate::read::crd_error::CrdError;
use crate::read::k8s_sources::{SourceResource, SourcesError, read_source_resources};
use crate::read::openapi::{OpenApiError, read_openapi};

/// Why generation failed.
#[derive(Debug, thiserror::Error)]
pub enum GenerateError {
    /// An OpenAPI input could not be read.
    #[error(transparent)]
    OpenApi(#[from] OpenApiError),
    /// A CRD input could not be read (boxed: it carries file, document and schema path).
    #[error(transparent)]
    Crd(Box<CrdError>),
    /// k8s-openapi's sources of a later version could not be read.
    #[error(transparent)]
    Sources(#[from] SourcesError),
    /// A configured crate path is not a path.
    #[error(transparent)]
    Path(#[from] PathError),
    /// The emitters produced invalid Rust (a bug).
    #[error(transparent)]
    Format(#[from] FormatError),
    /// No inputs were given.
    #[error("nothing to generate: give at least one CRD file or directory, or an OpenAPI spec")]
    NoInput,
    /// The inputs and filters leave nothing to generate; the warnings say what was left out
    /// (the message summarizes them, one line for each kind of warning: see [`summarize`]).
    #[error("nothing to generate: the inputs{} define no served resource (expected \
             CustomResourceDefinitions of apiextensions.k8s.io/v1 with a served version, or \
             the OpenAPI document of a Kubernetes API server){}",
            if *.filtered { " after the group/version filters" } else { "" },
            list_warnings(.warnings))]
    Empty {
        /// Whether filters were given.
        filtered: bool,
        /// Everything that was left out.
        warnings: Vec<Warning>,
    },
    /// No output directory was given.
    #[error("no output directory: call out_dir()")]
    NoOutDir,
    /// `root_doc_include` was combined with the single-file layout, whose includer owns the
    /// docs (an `include!`d file cannot carry inner attributes).
    #[error("root_doc_include needs the tree layout: an include!d file cannot carry crate docs")]
    RootDocNeedsTree,
    /// Two inputs define the same group/version/resource.
    #[error("{}: {group}/{version}/{plural} is already defined by an earlier input", .file.display())]
    Duplicate {
        /// The input that defines it again.
        file: PathBuf,
        /// Group.
        group: String,
        /// Version.
        version: String,
        /// Plural.
        plural: String,
    },
    /// Writing or reading the output failed.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
}

/// The lines of [`summarize`] under `left out:`, for the message of [`GenerateError::Empty`].
fn list_warnings(warnings: &[Warning]) -> String {
    if warnings.is_empty() {
        return String::new();
    }
    let mut out = String::from("; left out:");
    for line in summarize(warnings) {
        out.push_str("\n  ");
        out.push_str(&line);
    }
    out
}

/// How many warnings of one kind are listed one by one before they are counted instead.
const LISTED: usize = 3;

/// What `warnings` say, in lines a terminal shows whole: each kind of warning listed one by
/// one while there are at most three of it, else counted in one line that names the first
/// (`200 documents are not CustomResourceDefinitions: 120 Deployment, 60 Service, 20 of 3
/// other kinds; the first: deploy/app.yaml document 0`). `kinform-gen` prints these lines.
pub fn summarize(warnings: &[Warning]) -> Vec<String> {
    let mut out = Vec::new();
    let of = |pick: fn(&Warning) -> bool| -> Vec<&Warning> {
        warnings.iter().filter(|w| pick(w)).collect()
    };
    let not_crds = of(|w| matches!(w, Warning::NotACrd { .. }));
    if not_crds.len() > LISTED {
        let mut kinds: std::collections::BTreeMap<&str, usize> = Default::default();
        for w in &not_crds {
            if let Warning::NotACrd { kind, .. } = w {
                *kinds.entry(or_none(kind)).or_default() += 1;
            }
        }
        let mut kinds: Vec<(&str, usize)> = kinds.into_iter().collect();
        kinds.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        let mut parts: Vec<String> = kinds
            .iter()
            .take(LISTED)
            .map(|(k, n)| format!("{n} {k}"))
            .collect();
        if kinds.len() > LISTED {
            let rest: usize = kinds[LISTED..].iter().map(|(_, n)| n).sum();
            parts.push(format!("{rest} of {} other kinds", kinds.len() - LISTED));
        }
        let first = match not_crds[0] {
            Warning::NotACrd { file, document, .. } => {
                format!("{}: document {document}", file.display())
            }
            _ => String::new(),
        };
        out.push(format!(
            "{} documents are not CustomResourceDefinitions: {}; the first: {first}",
            not_crds.len(),
            parts.join(", ")
        ));
    } else {
        out.extend(not_crds.iter().map(ToString::to_string));
    }
    let ignored = of(|w| matches!(w, Warning::IgnoredFile { .. }));
    if ignored.len() > LISTED {
        let mut reasons: std::collections::BTreeMap<&str, usize> = Default::default();
        for w in &ignored {
            if let Warning::IgnoredFile { reason, .. } = w {
                *reasons.entry(reason).or_default() += 1;
            }
        }
        let parts: Vec<String> = reasons.iter().map(|(r, n)| format!("{n} {r}")).collect();
        let first = match ignored[0] {
            Warning::IgnoredFile { file, .. } => file.display().to_string(),
            _ => String::new(),
        };
        out.push(format!(
            "{} files skipped: {}; the first: {first}",
            ignored.len(),
            parts.join(", ")
        ));
    } else {
        out.extend(ignored.iter().map(ToString::to_string));
    }
    let unserved = of(|w| matches!(w, Warning::UnservedVersion { .. }));
    if unserved.len() > LISTED {
        let first = unserved[0].to_string();
        out.push(format!(
            "{} versions are not served: skipped; the first: {first}",
            unserved.len()
        ));
    } else {
        out.extend(unserved.iter().map(ToString::to_string));
    }
    let deprecated = of(|w| matches!(w, Warning::DeprecatedVersion { .. }));
    if deprecated.len() > LISTED {
        out.push(format!(
            "{} deprecated versions generated; the first: {}",
            deprecated.len(),
            deprecated[0]
        ));
    } else {
        out.extend(deprecated.iter().map(ToString::to_string));
    }
    out.extend(
        warnings
            .iter()
            .filter(|w| {
                !matches!(
                    w,
                    Warning::NotACrd { .. }
                        | Warning::IgnoredFile { .. }
                        | Warning::UnservedVersion { .. }
                        | Warning::DeprecatedVersion { .. }
                )
            })
            .map(ToString::to_string),
    );
    out
}

/// Something the inputs hold that the output leaves out (or keeps with a caveat), reported
/// by [`Generator::generate_report`] and printed by `kinform-gen` ([`summarize`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Warning {
    /// A document of a CRD input that is not an `apiextensions.k8s.io` CustomResourceDefinition.
    #[error("{}: document {document} {}, not a CustomResourceDefinition: skipped", .file.display(), describe_document(.kind, .api_version))]
    NotACrd {
        /// The file.
        file: PathBuf,
        /// 0-based document index in the file.
        document: usize,
        /// Its `apiVersion`.
        api_version: String,
        /// Its `kind`.
        kind: String,
    },
    /// A file of a CRD input that contributed nothing.
    #[error("{}: {reason}: skipped", .file.display())]
    IgnoredFile {
        /// The file.
        file: PathBuf,
        /// Why (not YAML, no document).
        reason: String,
    },
    /// A CRD version with `served: false` (the API server does not serve it either).
    #[error("CRD {crd}: version {version} is not served: skipped")]
    UnservedVersion {
        /// `metadata.name` of the CRD.
        crd: String,
        /// The version.
        version: String,
    },
    /// A served version marked deprecated: generated, with its deprecation in the docs.
    #[error("{group}/{version} {plural} is deprecated{}: generated", .message.as_ref().map(|m| format!(" ({m})")).unwrap_or_default())]
    DeprecatedVersion {
        /// Group.
        group: String,
        /// Version.
        version: String,
        /// Plural.
        plural: String,
        /// Its `deprecationWarning`, if any.
        message: Option<String>,
    },
    /// A `group` or `version` filter that matches nothing in the inputs.
    #[error("--{option} {value} matches nothing in the inputs")]
    FilterMatchesNothing {
        /// `group` or `version`.
        option: &'static str,
        /// The filter.
        value: String,
    },
    /// A CRD version whose types nest deeper than rustc's default `recursion_limit` (128)
    /// lets it check their auto traits (`Send`, `Sync`): the crate that includes them needs
    /// `#![recursion_limit = "<limit>"]`.
    #[error(
        "{group}/{version} {kind}: its types nest {nesting} levels deep: add \
             #![recursion_limit = \"{limit}\"] to the crate that includes them (rustc's \
             default, 128, is too low for them)"
    )]
    DeepTypes {
        /// Group.
        group: String,
        /// Version.
        version: String,
        /// Kind.
        kind: String,
        /// [`TypeModule::nesting`].
        nesting: usize,
        /// A `recursion_limit` that suffices.
        limit: usize,
    },
    /// An OpenAPI input with no operation of a Kubernetes resource: none carries
    /// `x-kubernetes-action` with `x-kubernetes-group-version-kind`, as the documents a
    /// Kubernetes API server serves do.
    #[error("{}: no operation carries x-kubernetes-action and x-kubernetes-group-version-kind \
             (expected the OpenAPI document of a Kubernetes API server, as `kubectl get --raw \
             /openapi/v2` prints it): skipped", .file.display())]
    NoKubernetesOperations {
        /// The file or directory.
        file: PathBuf,
    },
    /// A resource of k8s-openapi's sources ([`Generator::later_k8s_openapi_sources`]) that
    /// no spec has and that cannot be listed: its verbs are not known (a registry-backed
    /// resource is listable; one that is not, such as a review, serves what its own code
    /// says), so it gets no client.
    #[error("{}: {group}/{version} {kind} is in no spec and not listable: its verbs are \
             unknown: skipped", .file.display())]
    UnknownVerbs {
        /// The source file.
        file: PathBuf,
        /// Group.
        group: String,
        /// Version.
        version: String,
        /// Kind.
        kind: String,
    },
}

fn or_none(s: &str) -> &str {
    if s.is_empty() { "<none>" } else { s }
}

/// `is an Application (apiVersion argoproj.io/v1alpha1)`, `has no kind (apiVersion v1)`.
fn describe_document(kind: &str, api_version: &str) -> String {
    let api_version = if api_version.is_empty() {
        "no apiVersion".to_owned()
    } else {
        format!("apiVersion {api_version}")
    };
    if kind.is_empty() {
        format!("has no kind ({api_version})")
    } else {
        format!("is {} {kind} ({api_version})", article(kind))
    }
}

/// `a` or `an` before a kind, as it is read aloud: `an Application`, `a Namespace`, and, for
/// an acronym read letter by letter, `an HTTPRoute`, `an SLO`, `a CRD`.
pub(crate) fn article(word: &str) -> &'static str {
    let b = word.as_bytes();
    let acronym = b.len() > 1 && b[0].is_ascii_uppercase() && b[1].is_ascii_uppercase();
    let vowel_sound = match b.first().map(u8::to_ascii_uppercase) {
        Some(b'A' | b'E' | b'I' | b'O') => true,
        Some(b'U') => {
            let lower = word.to_ascii_lowercase();
            !acronym
                && !["uni", "us", "ut", "ur"]
                    .iter()
                    .any(|p| lower.starts_with(p))
        }
        Some(b'F' | b'H' | b'L' | b'M' | b'N' | b'R' | b'S' | b'X') => acronym,
        _ => false,
    };
    if vowel_sound { "an" } else { "a" }
}

/// What a run wrote (or found stale) and what it left out.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// The files written ([`Generator::generate_report`]) or out of date
    /// ([`Generator::check_report`]).
    pub files: Vec<PathBuf>,
    /// What was left out.
    pub warnings: Vec<Warning>,
}

/// Builder for a generator run.
#[derive(Clone, Debug)]
pub struct Generator {
    crds: Vec<PathBuf>,
    openapi: Vec<PathBuf>,
    later_openapi: Vec<PathBuf>,
    later_sources: Vec<PathBuf>,
    out_dir: Option<PathBuf>,
    runtime_crate: String,
    k8s_openapi_crate: Option<String>,
    groups: Vec<String>,
    versions: Vec<String>,
    layout: Layout,
    feature_per_group: bool,
    apply_configurations: bool,
    root_doc_include: Option<String>,
}

impl Default for Generator {
    fn default() -> Self {
        Self::new()
    }
}

impl Generator {
    /// A generator with no inputs, runtime crate `::kinform`, one output file.
    pub fn new() -> Self {
        Self {
            crds: Vec::new(),
            openapi: Vec::new(),
            later_openapi: Vec::new(),
            later_sources: Vec::new(),
            out_dir: None,
            runtime_crate: "::kinform".to_owned(),
            k8s_openapi_crate: None,
            groups: Vec::new(),
            versions: Vec::new(),
            layout: Layout::SingleFile {
                file_name: "kinform_generated.rs".to_owned(),
            },
            feature_per_group: false,
            apply_configurations: true,
            root_doc_include: None,
        }
    }

    /// Adds a directory of CRD YAML (read recursively).
    pub fn crd_dir(self, dir: impl AsRef<Path>) -> Self {
        self.crd(dir)
    }

    /// Adds a CRD file or directory (multi-document streams and `List`s are fine).
    pub fn crd(mut self, path: impl AsRef<Path>) -> Self {
        self.crds.push(path.as_ref().to_owned());
        self
    }

    /// Adds an OpenAPI spec: a `swagger.json`, a v3 document, or a directory of v3 documents.
    pub fn openapi(mut self, path: impl AsRef<Path>) -> Self {
        self.openapi.push(path.as_ref().to_owned());
        self
    }

    /// Adds the spec of a later Kubernetes version than the [`Generator::openapi`] inputs':
    /// the resources they lack are added (those they have are kept as they read them), so
    /// generated code covers the union of the versions. Each resource is emitted inside the
    /// k8s-openapi version gate of its type (see `emit::versions`), so an application at an
    /// older version, whose k8s-openapi lacks the type, does not see it. Repeatable, oldest
    /// first.
    pub fn later_openapi(mut self, path: impl AsRef<Path>) -> Self {
        self.later_openapi.push(path.as_ref().to_owned());
        self
    }

    /// Adds k8s-openapi's own sources of a later Kubernetes version (its crate's `src/v1_37`),
    /// for a version whose spec is not at hand: read after every spec, its resources the
    /// model lacks are added as [`Generator::later_openapi`] adds a spec's.
    ///
    /// The sources give a resource's group, version, kind, plural, scope and whether it is
    /// listable, not its verbs, which come from this rule:
    /// - a resource whose group already has the same kind and plural at another version (one
    ///   promoted or moved to a new version: `certificates.k8s.io/v1` `ClusterTrustBundle`)
    ///   takes that version's verbs and subresources, the newest version's of those whose
    ///   k8s-openapi type lasts longest, as kube-apiserver serves a promoted resource from
    ///   the same registry code;
    /// - any other listable resource gets the verbs kube-apiserver's generic registry serves
    ///   for every stored resource (get, list, watch, create, update, patch, delete,
    ///   deletecollection) and no subresources (for those, `kinform::Api` reaches any
    ///   subresource by name);
    /// - a resource that is not listable is skipped with [`Warning::UnknownVerbs`].
    pub fn later_k8s_openapi_sources(mut self, dir: impl AsRef<Path>) -> Self {
        self.later_sources.push(dir.as_ref().to_owned());
        self
    }

    /// Where files are written.
    pub fn out_dir(mut self, dir: impl AsRef<Path>) -> Self {
        self.out_dir = Some(dir.as_ref().to_owned());
        self
    }

    /// The path of the runtime crate in emitted code (default `::kinform`).
    pub fn runtime_crate(mut self, path: impl Into<String>) -> Self {
        self.runtime_crate = path.into();
        self
    }

    /// The path of k8s-openapi in emitted code (default: the runtime's re-export,
    /// `<runtime>::k8s_openapi`).
    pub fn k8s_openapi_crate(mut self, path: impl Into<String>) -> Self {
        self.k8s_openapi_crate = Some(path.into());
        self
    }

    /// Only emit this API group (`""` or `core` for the core group); repeatable. Default: all.
    pub fn group(mut self, group: impl Into<String>) -> Self {
        self.groups.push(group.into());
        self
    }

    /// Only emit this version (`v1`, or `group/version`); repeatable. Default: all.
    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.versions.push(version.into());
        self
    }

    /// How files are laid out.
    pub fn layout(mut self, layout: Layout) -> Self {
        self.layout = layout;
        self
    }

    /// Gate each group module behind a Cargo feature named like it (`apps`, `core`, `rbac`).
    pub fn feature_per_group(mut self, on: bool) -> Self {
        self.feature_per_group = on;
        self
    }

    /// Whether each CRD kind's types come with their apply configurations (`<kind>::apply`,
    /// `FooApply`: typed server-side apply); on by default. Off, a crate that never applies
    /// compiles only the types, clients, listers and informers.
    pub fn apply_configurations(mut self, on: bool) -> Self {
        self.apply_configurations = on;
        self
    }

    /// Replaces the root module's generated docs with `#![doc = include_str!(path)]` (`path`
    /// relative to the root file, e.g. `../README.md`), so a committed crate keeps hand-written
    /// crate docs while every line of its sources stays generated. Tree layout only.
    pub fn root_doc_include(mut self, path: impl Into<String>) -> Self {
        self.root_doc_include = Some(path.into());
        self
    }

    /// Reads every input into one model and the CRD types, with the group and version
    /// filters applied (what was left out: [`Generator::model_report`]).
    pub fn model(&self) -> Result<(ApiModel, Vec<TypeModule>), GenerateError> {
        self.model_report().map(|(model, types, _)| (model, types))
    }

    /// [`Generator::model`], plus what was left out; an error when nothing is left.
    pub fn model_report(&self) -> Result<(ApiModel, Vec<TypeModule>, Vec<Warning>), GenerateError> {
        crate::read::stack::deep(|| self.model_here())
    }

    fn model_here(&self) -> Result<(ApiModel, Vec<TypeModule>, Vec<Warning>), GenerateError> {
        if self.openapi.is_empty() && self.crds.is_empty() && self.later_openapi.is_empty() {
            return Err(GenerateError::NoInput);
        }
        let mut model = ApiModel::default();
        let mut types = Vec::new();
        let mut warnings = Vec::new();
        if !self.crds.is_empty() {
            let set = read_crds(&self.crds).map_err(|e| GenerateError::Crd(Box::new(e)))?;
            warnings.extend(set.ignored_files.into_iter().map(|f| Warning::IgnoredFile {
                file: f.file,
                reason: f.reason.to_owned(),
            }));
            warnings.extend(set.skipped.into_iter().map(|d| Warning::NotACrd {
                file: d.file,
                document: d.document,
                api_version: d.api_version,
                kind: d.kind,
            }));
            warnings.extend(set.unserved.into_iter().map(|u| Warning::UnservedVersion {
                crd: u.crd,
                version: u.version,
            }));
            // The first input: nothing to clash with (the reader rejects duplicates).
            merge(&mut model, set.model, Path::new(""))?;
            types = set.types;
        }
        for path in &self.openapi {
            let read = read_openapi(path)?;
            if read
                .groups
                .values()
                .all(|g| g.versions.values().all(|v| v.resources.is_empty()))
            {
                warnings.push(Warning::NoKubernetesOperations { file: path.clone() });
            }
            merge(&mut model, read, path)?;
        }
        for path in &self.later_openapi {
            add_missing(&mut model, read_openapi(path)?);
        }
        for dir in &self.later_sources {
            let found = read_source_resources(dir)?;
            warnings.extend(add_from_sources(&mut model, found));
        }
        warnings.extend(self.filter(&mut model));
        types.retain(|t| {
            model
                .groups
                .get(&t.group)
                .is_some_and(|g| g.versions.contains_key(&t.version))
        });
        for t in &types {
            let nesting = t.nesting();
            // One step of rustc's auto-trait check a level (94 object levels nest 190 types
            // deep and fail at the default 128), with a margin.
            if nesting > 120 {
                warnings.push(Warning::DeepTypes {
                    group: t.group.clone(),
                    version: t.version.clone(),
                    kind: t.kind.clone(),
                    nesting,
                    limit: (nesting + 64).next_power_of_two(),
                });
            }
        }
        for (g, group) in &model.groups {
            for (v, gv) in &group.versions {
                for (plural, r) in &gv.resources {
                    if let Some(message) = &r.deprecated {
                        warnings.push(Warning::DeprecatedVersion {
                            group: g.clone(),
                            version: v.clone(),
                            plural: plural.clone(),
                            message: message.clone(),
                        });
                    }
                }
            }
        }
        let empty = model
            .groups
            .values()
            .all(|g| g.versions.values().all(|v| v.resources.is_empty()));
        if empty {
            return Err(GenerateError::Empty {
                filtered: !self.groups.is_empty() || !self.versions.is_empty(),
                warnings,
            });
        }
        Ok((model, types, warnings))
    }

    /// Applies the group and version filters; a warning for each filter that matches nothing.
    fn filter(&self, model: &mut ApiModel) -> Vec<Warning> {
        let mut warnings = Vec::new();
        let group_matches = |f: &str, g: &str| f == g || (g.is_empty() && f == "core");
        for f in &self.groups {
            if !model.groups.keys().any(|g| group_matches(f, g)) {
                warnings.push(Warning::FilterMatchesNothing {
                    option: "group",
                    value: f.clone(),
                });
            }
        }
        if !self.groups.is_empty() {
            model
                .groups
                .retain(|g, _| self.groups.iter().any(|f| group_matches(f, g)));
        }
        if !self.versions.is_empty() {
            let gv = |g: &str, v: &str| {
                if g.is_empty() {
                    format!("core/{v}")
                } else {
                    format!("{g}/{v}")
                }
            };
            let version_matches = |f: &str, g: &str, v: &str| f == v || f == gv(g, v);
            for f in &self.versions {
                let matched = model
                    .groups
                    .iter()
                    .any(|(g, group)| group.versions.keys().any(|v| version_matches(f, g, v)));
                if !matched {
                    warnings.push(Warning::FilterMatchesNothing {
                        option: "version",
                        value: f.clone(),
                    });
                }
            }
            for (g, group) in &mut model.groups {
                group
                    .versions
                    .retain(|v, _| self.versions.iter().any(|f| version_matches(f, g, v)));
            }
            model.groups.retain(|_, g| !g.versions.is_empty());
        }
        warnings
    }

    /// Emits the files in memory.
    pub fn render(&self) -> Result<Vec<GeneratedFile>, GenerateError> {
        self.render_report().map(|(files, _)| files)
    }

    /// [`Generator::render`], plus what was left out.
    pub fn render_report(&self) -> Result<(Vec<GeneratedFile>, Vec<Warning>), GenerateError> {
        // Deep schemas recurse as deep in the emitters and formatter as in the reader.
        crate::read::stack::deep(|| self.render_here())
    }

    fn render_here(&self) -> Result<(Vec<GeneratedFile>, Vec<Warning>), GenerateError> {
        let (model, types, warnings) = self.model_here()?;
        let opts = EmitOptions {
            paths: RuntimePaths::new(&self.runtime_crate, self.k8s_openapi_crate.as_deref())?,
            types: TypesConfig::with_runtime_crate(&self.runtime_crate)?,
            feature_per_group: self.feature_per_group,
            apply_configurations: self.apply_configurations,
        };
        if self.root_doc_include.is_some() && !matches!(self.layout, Layout::Tree { .. }) {
            return Err(GenerateError::RootDocNeedsTree);
        }
        // Doc lines travel beside the tokens until formatted (emit/format.rs).
        let _docs = DocLines::open();
        let mut root = build_tree(&model, &types, &opts);
        drop((model, types));
        if let Some(path) = &self.root_doc_include {
            root.doc.clear();
            let items = std::mem::take(&mut root.items);
            root.items = quote::quote!(#![doc = include_str!(#path)] #items);
        }
        Ok((render(root, &self.layout)?, warnings))
    }

    /// Writes the files into the output directory (files whose contents are unchanged are
    /// not rewritten, so cargo does not rebuild for nothing); returns their paths. What was
    /// left out is dropped: see [`Generator::generate_report`].
    pub fn generate(&self) -> Result<Vec<PathBuf>, GenerateError> {
        self.generate_report().map(|r| r.files)
    }

    /// [`Generator::generate`], plus what was left out (a build script can print each
    /// warning as `cargo:warning=...`).
    pub fn generate_report(&self) -> Result<Report, GenerateError> {
        let out = self.out_dir.as_ref().ok_or(GenerateError::NoOutDir)?;
        let (files, warnings) = self.render_report()?;
        let mut written = Vec::new();
        for file in files {
            let path = out.join(&file.path);
            if fs::read_to_string(&path).is_ok_and(|old| old == file.contents) {
                written.push(path);
                continue;
            }
            if let Some(parent) = path.parent() {
                fs::create_dir_all(parent).map_err(|source| GenerateError::Io {
                    path: parent.to_owned(),
                    source,
                })?;
            }
            fs::write(&path, &file.contents).map_err(|source| GenerateError::Io {
                path: path.clone(),
                source,
            })?;
            written.push(path);
        }
        Ok(Report {
            files: written,
            warnings,
        })
    }

    /// The files in the output directory that differ from what [`Generator::generate`] would
    /// write: changed or missing files, and stale `@generated` files that would no longer be
    /// written. Empty when up to date.
    pub fn check(&self) -> Result<Vec<PathBuf>, GenerateError> {
        self.check_report().map(|r| r.files)
    }

    /// [`Generator::check`], plus what was left out.
    pub fn check_report(&self) -> Result<Report, GenerateError> {
        let out = self.out_dir.as_ref().ok_or(GenerateError::NoOutDir)?;
        let (files, warnings) = self.render_report()?;
        let mut stale = Vec::new();
        for file in &files {
            let path = out.join(&file.path);
            if fs::read_to_string(&path).ok().as_deref() != Some(file.contents.as_str()) {
                stale.push(path);
            }
        }
        let expected: std::collections::BTreeSet<PathBuf> =
            files.iter().map(|f| out.join(&f.path)).collect();
        let mut on_disk = Vec::new();
        collect_generated(out, &mut on_disk)?;
        stale.extend(on_disk.into_iter().filter(|p| !expected.contains(p)));
        stale.sort();
        Ok(Report {
            files: stale,
            warnings,
        })
    }
}

/// Adds `other`'s resources (read from `file`) to `model`; a resource defined twice is an
/// error.
fn merge(model: &mut ApiModel, other: ApiModel, file: &Path) -> Result<(), GenerateError> {
    for (g, group) in other.groups {
        let target = model.groups.entry(g.clone()).or_default();
        target.name.clone_from(&g);
        for (v, gv) in group.versions {
            let tv = target.versions.entry(v.clone()).or_default();
            tv.group.clone_from(&g);
            tv.version.clone_from(&v);
            for (plural, r) in gv.resources {
                if tv.resources.contains_key(&plural) {
                    return Err(GenerateError::Duplicate {
                        file: file.to_owned(),
                        group: g,
                        version: v,
                        plural,
                    });
                }
                tv.resources.insert(plural, r);
            }
        }
    }
    Ok(())
}

/// Adds the resources of `later` that `model` lacks (by group, version and plural).
fn add_missing(model: &mut ApiModel, later: ApiModel) {
    for (g, group) in later.groups {
        let target = model.groups.entry(g.clone()).or_default();
        target.name.clone_from(&g);
        for (v, gv) in group.versions {
            let tv = target.versions.entry(v.clone()).or_default();
            tv.group.clone_from(&g);
            tv.version.clone_from(&v);
            for (plural, r) in gv.resources {
                tv.resources.entry(plural).or_insert(r);
            }
        }
    }
}

/// Adds the resources of k8s-openapi's sources that `model` lacks, with the verbs of the rule
/// of [`Generator::later_k8s_openapi_sources`]; a warning for each one skipped.
fn add_from_sources(model: &mut ApiModel, found: Vec<SourceResource>) -> Vec<Warning> {
    let mut warnings = Vec::new();
    for res in found {
        let known = model
            .groups
            .get(&res.group)
            .and_then(|g| g.versions.get(&res.version))
            .is_some_and(|gv| gv.resources.contains_key(&res.plural));
        if known {
            continue;
        }
        let counterpart = model.groups.get(&res.group).and_then(|g| {
            g.versions
                .values()
                .filter_map(|gv| {
                    gv.resources
                        .get(&res.plural)
                        .filter(|r| r.kind == res.kind)
                        .map(|r| (gv.version.as_str(), r))
                })
                .max_by_key(|(v, r)| (VersionGate::of_resource(r).last(), version_rank(v)))
                .map(|(_, r)| r.clone())
        });
        let def = match counterpart {
            Some(mut def) => {
                def.scope = res.scope;
                def.list_kind = res.list_kind.clone().or(def.list_kind);
                def.root = RootType::External(res.rust.clone());
                def.deprecated = None;
                def
            }
            None if res.list_kind.is_some() => ResourceDef {
                singular: Some(res.kind.to_lowercase()),
                list_kind: res.list_kind.clone(),
                scope: res.scope,
                verbs: [
                    Verb::Get,
                    Verb::List,
                    Verb::Watch,
                    Verb::Create,
                    Verb::Update,
                    Verb::Patch,
                    Verb::Delete,
                    Verb::DeleteCollection,
                ]
                .into(),
                subresources: Default::default(),
                short_names: Vec::new(),
                categories: Vec::new(),
                printer_columns: Vec::new(),
                served: true,
                storage: false,
                deprecated: None,
                root: RootType::External(res.rust.clone()),
                docs: None,
                kind: res.kind.clone(),
                plural: res.plural.clone(),
            },
            None => {
                warnings.push(Warning::UnknownVerbs {
                    file: res.file,
                    group: res.group,
                    version: res.version,
                    kind: res.kind,
                });
                continue;
            }
        };
        let g = model.groups.entry(res.group.clone()).or_default();
        g.name.clone_from(&res.group);
        let gv = g.versions.entry(res.version.clone()).or_default();
        gv.group.clone_from(&res.group);
        gv.version.clone_from(&res.version);
        gv.resources.insert(res.plural, def);
    }
    warnings
}

/// Kubernetes' order of versions, as kubectl sorts them (`v2` > `v1` > `v1beta2` > `v1beta1` >
/// `v1alpha1`); a name not shaped so ranks lowest.
fn version_rank(v: &str) -> (u8, u32, u32) {
    let Some(rest) = v.strip_prefix('v') else {
        return (0, 0, 0);
    };
    let digits = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    let Ok(major) = rest[..digits].parse::<u32>() else {
        return (0, 0, 0);
    };
    let tail = &rest[digits..];
    let (stage, minor) = if tail.is_empty() {
        (3, 0)
    } else if let Some(n) = tail.strip_prefix("beta") {
        (2, n.parse().unwrap_or(0))
    } else if let Some(n) = tail.strip_prefix("alpha") {
        (1, n.parse().unwrap_or(0))
    } else {
        return (0, 0, 0);
    };
    (stage, major, minor)
}

/// `.rs` files under `dir` that start with the `@generated` header.
fn collect_generated(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), GenerateError> {
    let io = |source| GenerateError::Io {
        path: dir.to_owned(),
        source,
    };
    let entries = match fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(io(e)),
    };
    for entry in entries {
        let path = entry.map_err(io)?.path();
        if path.is_dir() {
            collect_generated(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "rs")
            && fs::read_to_string(&path).is_ok_and(|s| s.starts_with(HEADER))
        {
            out.push(path);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_rank_as_kubernetes_orders_them() {
        let mut vs = [
            "v1alpha1", "v1", "v1beta2", "v2", "v1beta1", "v1alpha3", "x",
        ];
        vs.sort_by_key(|v| version_rank(v));
        assert_eq!(
            vs,
            [
                "x", "v1alpha1", "v1alpha3", "v1beta1", "v1beta2", "v1", "v2"
            ]
        );
    }
}
