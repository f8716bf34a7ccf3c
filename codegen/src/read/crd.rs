//! CRD YAML (apiextensions.k8s.io/v1 CustomResourceDefinition) -> [`ApiModel`] + one
//! [`TypeModule`] per served version.
//!
//! Input is what `kubectl apply -f` takes: files and directories (recursively, `*.yaml`,
//! `*.yml`, `*.json`, in sorted order so output is deterministic), multi-document streams,
//! `List` wrappers and empty documents. Documents that are not CRDs (a Namespace shipped in
//! the same file) are not errors: they are listed in [`CrdSet::skipped`] for the caller to
//! report, as are files of a directory that are not YAML or JSON or hold no document
//! ([`CrdSet::ignored_files`]). Every *served* version becomes a resource, as the API server
//! serves exactly those; unserved versions are listed in [`CrdSet::unserved`]. Names, scope, subresources (status,
//! scale), printer columns, storage flag and deprecation come from the CRD as
//! apiextensions-apiserver reads them.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::model::types::TypeModule;
use crate::model::{
    ApiGroup, ApiModel, GroupVersion, PrinterColumn, ResourceDef, RootType, ScalePaths, Scope,
    Subresource, Verb,
};

use super::crd_error::{CrdError, SchemaError};
use super::crd_schema::{ResourceIdent, convert_schema};
use super::names;
use super::yaml::parse_stream;

/// The path of `autoscaling/v1` `Scale`, the body type of every CRD `scale` subresource.
pub const SCALE_TYPE: &str = "k8s_openapi::api::autoscaling::v1::Scale";

/// Everything read from a set of CRD files.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CrdSet {
    /// Groups, versions and resources; every resource's root is
    /// [`RootType::Generated`] with the type's path relative to the types file
    /// (`{group_module}::{version}::{Kind}`, see [`TypeModule::rust_path`]).
    pub model: ApiModel,
    /// The types of every served CRD version, sorted by group, version and kind.
    pub types: Vec<TypeModule>,
    /// Documents that are not CRDs, with their `apiVersion`/`kind`.
    pub skipped: Vec<SkippedDocument>,
    /// Versions a CRD declares but does not serve (`served: false`).
    pub unserved: Vec<UnservedVersion>,
    /// Files of a CRD directory that were not read (not `*.yaml`/`*.yml`/`*.json`) or held
    /// no document.
    pub ignored_files: Vec<IgnoredFile>,
}

/// A file of the input that contributed nothing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IgnoredFile {
    /// The file.
    pub file: PathBuf,
    /// Why: `not a .yaml, .yml or .json file` or `no YAML document`.
    pub reason: &'static str,
}

/// A document that was not a CustomResourceDefinition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkippedDocument {
    /// The file.
    pub file: PathBuf,
    /// 0-based document index.
    pub document: usize,
    /// Its `apiVersion` (empty when absent).
    pub api_version: String,
    /// Its `kind` (empty when absent).
    pub kind: String,
}

/// A CRD version with `served: false`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnservedVersion {
    /// `metadata.name` of the CRD.
    pub crd: String,
    /// The version.
    pub version: String,
}

/// Reads every CRD in `paths` (files or directories), on a stack as deep as the deepest
/// document kube-apiserver accepts needs ([`super::yaml::MAX_NESTING`]).
pub fn read_crds<P: AsRef<Path>>(paths: impl IntoIterator<Item = P>) -> Result<CrdSet, CrdError> {
    let paths: Vec<PathBuf> = paths.into_iter().map(|p| p.as_ref().to_owned()).collect();
    super::stack::deep(|| {
        let mut set = CrdSet::default();
        for path in &paths {
            add_path(&mut set, path)?;
        }
        Ok(set)
    })
}

/// Reads the CRDs of one YAML stream; `file` only names the source in errors.
pub fn read_crd_str(file: &Path, text: &str) -> Result<CrdSet, CrdError> {
    super::stack::deep(|| {
        let mut set = CrdSet::default();
        add_str(&mut set, file, text)?;
        Ok(set)
    })
}

/// Adds a file, or every `*.yaml`/`*.yml`/`*.json` under a directory, to `set`.
pub fn add_path(set: &mut CrdSet, path: &Path) -> Result<(), CrdError> {
    let io = |source| CrdError::Io {
        file: path.to_owned(),
        source,
    };
    if path.is_dir() {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(path)
            .map_err(io)?
            .map(|e| e.map(|e| e.path()))
            .collect::<Result<_, _>>()
            .map_err(io)?;
        entries.sort();
        for entry in entries {
            let is_yaml = entry
                .extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| matches!(e, "yaml" | "yml" | "json"));
            if entry.is_dir() || is_yaml {
                add_path(set, &entry)?;
            } else {
                set.ignored_files.push(IgnoredFile {
                    file: entry,
                    reason: "not a .yaml, .yml or .json file",
                });
            }
        }
        Ok(())
    } else {
        let text = std::fs::read_to_string(path).map_err(io)?;
        add_str(set, path, &text)
    }
}

/// Adds the CRDs of one YAML stream to `set`.
pub fn add_str(set: &mut CrdSet, file: &Path, text: &str) -> Result<(), CrdError> {
    let mut any = false;
    for doc in parse_stream(file, text)? {
        if let Some(value) = &doc.value {
            any = true;
            add_document(set, file, doc.index, value, 0)?;
        }
    }
    if !any {
        set.ignored_files.push(IgnoredFile {
            file: file.to_owned(),
            reason: "no YAML document",
        });
    }
    Ok(())
}

fn add_document(
    set: &mut CrdSet,
    file: &Path,
    document: usize,
    value: &Value,
    depth: usize,
) -> Result<(), CrdError> {
    let ctx = Ctx {
        file,
        document,
        crd: "<unnamed>".to_owned(),
    };
    let Value::Object(obj) = value else {
        return Err(ctx.invalid("", "a document must be a mapping"));
    };
    let api_version = obj.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    let kind = obj.get("kind").and_then(Value::as_str).unwrap_or("");
    if kind.ends_with("List") && obj.contains_key("items") && depth < 8 {
        let Some(items) = obj.get("items").and_then(Value::as_array) else {
            return Err(ctx.invalid(".items", "a List's items must be an array"));
        };
        for item in items {
            add_document(set, file, document, item, depth + 1)?;
        }
        return Ok(());
    }
    if kind != "CustomResourceDefinition" || !api_version.starts_with("apiextensions.k8s.io/") {
        set.skipped.push(SkippedDocument {
            file: file.to_owned(),
            document,
            api_version: api_version.to_owned(),
            kind: kind.to_owned(),
        });
        return Ok(());
    }
    if api_version != "apiextensions.k8s.io/v1" {
        return Err(ctx.invalid(
            ".apiVersion",
            format!(
                "{api_version} CRDs are not supported; convert them to apiextensions.k8s.io/v1"
            ),
        ));
    }
    add_crd(set, ctx, obj)
}

struct Ctx<'a> {
    file: &'a Path,
    document: usize,
    crd: String,
}

impl Ctx<'_> {
    fn invalid(&self, path: &str, message: impl Into<String>) -> CrdError {
        CrdError::Invalid {
            file: self.file.to_owned(),
            document: self.document,
            crd: self.crd.clone(),
            path: path.to_owned(),
            message: message.into(),
        }
    }

    fn obj<'v>(
        &self,
        v: &'v Map<String, Value>,
        key: &str,
        path: &str,
    ) -> Result<&'v Map<String, Value>, CrdError> {
        match v.get(key) {
            Some(Value::Object(m)) => Ok(m),
            Some(_) => Err(self.invalid(&format!("{path}.{key}"), "must be a mapping")),
            None => Err(self.invalid(&format!("{path}.{key}"), "is required")),
        }
    }

    fn opt_str<'v>(
        &self,
        v: &'v Map<String, Value>,
        key: &str,
        path: &str,
    ) -> Result<Option<&'v str>, CrdError> {
        match v.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(self.invalid(&format!("{path}.{key}"), "must be a string")),
        }
    }

    fn str<'v>(
        &self,
        v: &'v Map<String, Value>,
        key: &str,
        path: &str,
    ) -> Result<&'v str, CrdError> {
        self.opt_str(v, key, path)?
            .filter(|s| !s.is_empty())
            .ok_or_else(|| self.invalid(&format!("{path}.{key}"), "is required"))
    }

    fn bool(&self, v: &Map<String, Value>, key: &str, path: &str) -> Result<bool, CrdError> {
        match v.get(key) {
            None | Some(Value::Null) => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => Err(self.invalid(&format!("{path}.{key}"), "must be a boolean")),
        }
    }

    fn strings(
        &self,
        v: &Map<String, Value>,
        key: &str,
        path: &str,
    ) -> Result<Vec<String>, CrdError> {
        match v.get(key) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .map(|i| {
                    i.as_str()
                        .map(str::to_owned)
                        .ok_or_else(|| self.invalid(&format!("{path}.{key}"), "must list strings"))
                })
                .collect(),
            Some(_) => Err(self.invalid(&format!("{path}.{key}"), "must be an array")),
        }
    }
}

/// Rejects names the API server rejects (see [`super::names`]): they become Rust names.
fn validate_names(ctx: &Ctx<'_>, n: &CrdNames) -> Result<(), CrdError> {
    if !names::is_dns1123_subdomain(&n.group) || !n.group.contains('.') {
        return Err(ctx.invalid(
            ".spec.group",
            format!("{:?} is not a DNS subdomain with at least one dot", n.group),
        ));
    }
    let label = |path: &str, value: &str| {
        if names::is_dns1035_label(value) {
            Ok(())
        } else {
            Err(ctx.invalid(
                path,
                format!("{value:?} is not a DNS-1035 label (lower-case letters, digits, '-')"),
            ))
        }
    };
    let kind = |path: &str, value: &str| {
        if names::is_kind(value) {
            Ok(())
        } else {
            Err(ctx.invalid(
                path,
                format!(
                    "{value:?} is not a kind (ASCII letters, digits, '-', starting with a letter)"
                ),
            ))
        }
    };
    label(".spec.names.plural", &n.plural)?;
    kind(".spec.names.kind", &n.kind)?;
    if let Some(s) = &n.singular {
        label(".spec.names.singular", s)?;
    }
    if let Some(l) = &n.list_kind {
        kind(".spec.names.listKind", l)?;
    }
    for (i, s) in n.short_names.iter().enumerate() {
        label(&format!(".spec.names.shortNames[{i}]"), s)?;
    }
    for (i, c) in n.categories.iter().enumerate() {
        label(&format!(".spec.names.categories[{i}]"), c)?;
    }
    Ok(())
}

/// Names shared by all versions of a CRD.
struct CrdNames {
    group: String,
    kind: String,
    plural: String,
    singular: Option<String>,
    list_kind: Option<String>,
    short_names: Vec<String>,
    categories: Vec<String>,
    scope: Scope,
}

fn add_crd(set: &mut CrdSet, mut ctx: Ctx<'_>, obj: &Map<String, Value>) -> Result<(), CrdError> {
    if let Some(name) = obj
        .get("metadata")
        .and_then(|m| m.get("name"))
        .and_then(Value::as_str)
    {
        ctx.crd = name.to_owned();
    }
    let spec = ctx.obj(obj, "spec", "")?;
    let names = ctx.obj(spec, "names", ".spec")?;
    let scope = match ctx.str(spec, "scope", ".spec")? {
        "Namespaced" => Scope::Namespaced,
        "Cluster" => Scope::Cluster,
        other => {
            return Err(ctx.invalid(
                ".spec.scope",
                format!("must be Namespaced or Cluster, found {other:?}"),
            ));
        }
    };
    let crd_names = CrdNames {
        group: ctx.str(spec, "group", ".spec")?.to_owned(),
        kind: ctx.str(names, "kind", ".spec.names")?.to_owned(),
        plural: ctx.str(names, "plural", ".spec.names")?.to_owned(),
        singular: ctx
            .opt_str(names, "singular", ".spec.names")?
            .map(str::to_owned),
        list_kind: ctx
            .opt_str(names, "listKind", ".spec.names")?
            .map(str::to_owned),
        short_names: ctx.strings(names, "shortNames", ".spec.names")?,
        categories: ctx.strings(names, "categories", ".spec.names")?,
        scope,
    };
    validate_names(&ctx, &crd_names)?;
    let Some(versions) = spec.get("versions").and_then(Value::as_array) else {
        return Err(ctx.invalid(".spec.versions", "must be a non-empty array"));
    };
    for (i, version) in versions.iter().enumerate() {
        let path = format!(".spec.versions[{i}]");
        let Value::Object(version) = version else {
            return Err(ctx.invalid(&path, "must be a mapping"));
        };
        add_version(set, &ctx, &crd_names, version, &path)?;
    }
    set.types
        .sort_by(|a, b| (&a.group, &a.version, &a.kind).cmp(&(&b.group, &b.version, &b.kind)));
    Ok(())
}

fn add_version(
    set: &mut CrdSet,
    ctx: &Ctx<'_>,
    names: &CrdNames,
    version: &Map<String, Value>,
    path: &str,
) -> Result<(), CrdError> {
    let name = ctx.str(version, "name", path)?.to_owned();
    if !names::is_dns1035_label(&name) {
        return Err(ctx.invalid(
            &format!("{path}.name"),
            format!("{name:?} is not a DNS-1035 label (lower-case letters, digits, '-')"),
        ));
    }
    if !ctx.bool(version, "served", path)? {
        set.unserved.push(UnservedVersion {
            crd: ctx.crd.clone(),
            version: name,
        });
        return Ok(());
    }
    let schema = ctx.obj(version, "schema", path).and_then(|s| {
        s.get("openAPIV3Schema")
            .ok_or_else(|| ctx.invalid(&format!("{path}.schema.openAPIV3Schema"), "is required"))
    })?;
    let id = ResourceIdent {
        group: &names.group,
        version: &name,
        kind: &names.kind,
        plural: &names.plural,
        scope: names.scope,
    };
    let module = convert_schema(schema, &id).map_err(|issue| {
        CrdError::Schema(Box::new(SchemaError {
            file: ctx.file.to_owned(),
            document: ctx.document,
            crd: ctx.crd.clone(),
            version: name.clone(),
            path: issue.path,
            message: issue.message,
        }))
    })?;
    let duplicate = |message: String| CrdError::Duplicate {
        file: ctx.file.to_owned(),
        document: ctx.document,
        crd: ctx.crd.clone(),
        message,
    };
    if set
        .types
        .iter()
        .any(|t| t.group == module.group && t.version == module.version && t.root == module.root)
    {
        return Err(duplicate(format!(
            "{}/{} already defines a type named {}",
            names.group, name, module.root
        )));
    }
    let gv = set
        .model
        .groups
        .entry(names.group.clone())
        .or_insert_with(|| ApiGroup {
            name: names.group.clone(),
            versions: BTreeMap::new(),
        })
        .versions
        .entry(name.clone())
        .or_insert_with(|| GroupVersion {
            group: names.group.clone(),
            version: name.clone(),
            resources: BTreeMap::new(),
        });
    if gv.resources.contains_key(&names.plural) {
        return Err(duplicate(format!(
            "{}/{} already has a resource named {}",
            names.group, name, names.plural
        )));
    }
    let resource = ResourceDef {
        kind: names.kind.clone(),
        plural: names.plural.clone(),
        singular: names.singular.clone(),
        list_kind: names.list_kind.clone(),
        scope: names.scope,
        verbs: all_verbs(),
        subresources: subresources(ctx, version, path)?,
        short_names: names.short_names.clone(),
        categories: names.categories.clone(),
        printer_columns: printer_columns(ctx, version, path)?,
        served: true,
        storage: ctx.bool(version, "storage", path)?,
        deprecated: if ctx.bool(version, "deprecated", path)? {
            Some(
                ctx.opt_str(version, "deprecationWarning", path)?
                    .map(str::to_owned),
            )
        } else {
            None
        },
        root: RootType::Generated(module.rust_path()),
        docs: module.get(&module.root).and_then(|t| match t {
            crate::model::types::TypeDef::Struct(s) => s.docs.clone(),
            _ => None,
        }),
    };
    gv.resources.insert(names.plural.clone(), resource);
    set.types.push(module);
    Ok(())
}

/// Every verb: the API server serves all of them for every CRD version.
pub(crate) fn all_verbs() -> BTreeSet<Verb> {
    [
        Verb::Get,
        Verb::List,
        Verb::Watch,
        Verb::Create,
        Verb::Update,
        Verb::Patch,
        Verb::Delete,
        Verb::DeleteCollection,
    ]
    .into_iter()
    .collect()
}

fn subresources(
    ctx: &Ctx<'_>,
    version: &Map<String, Value>,
    path: &str,
) -> Result<BTreeMap<String, Subresource>, CrdError> {
    let mut out = BTreeMap::new();
    let sub = match version.get("subresources") {
        None | Some(Value::Null) => return Ok(out),
        Some(Value::Object(m)) => m,
        Some(_) => return Err(ctx.invalid(&format!("{path}.subresources"), "must be a mapping")),
    };
    let path = format!("{path}.subresources");
    let verbs: BTreeSet<Verb> = [Verb::Get, Verb::Update, Verb::Patch].into_iter().collect();
    if sub.contains_key("status") {
        ctx.obj(sub, "status", &path)?;
        out.insert(
            "status".to_owned(),
            Subresource {
                name: "status".to_owned(),
                verbs: verbs.clone(),
                body_type: None,
                streams: false,
                scale_paths: None,
            },
        );
    }
    if sub.contains_key("scale") {
        let scale = ctx.obj(sub, "scale", &path)?;
        let spath = format!("{path}.scale");
        out.insert(
            "scale".to_owned(),
            Subresource {
                name: "scale".to_owned(),
                verbs,
                body_type: Some(RootType::External(SCALE_TYPE.to_owned())),
                streams: false,
                scale_paths: Some(ScalePaths {
                    spec_replicas_path: ctx.str(scale, "specReplicasPath", &spath)?.to_owned(),
                    status_replicas_path: ctx.str(scale, "statusReplicasPath", &spath)?.to_owned(),
                    label_selector_path: ctx
                        .opt_str(scale, "labelSelectorPath", &spath)?
                        .map(str::to_owned),
                }),
            },
        );
    }
    Ok(out)
}

fn printer_columns(
    ctx: &Ctx<'_>,
    version: &Map<String, Value>,
    path: &str,
) -> Result<Vec<PrinterColumn>, CrdError> {
    let cols = match version.get("additionalPrinterColumns") {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(cols)) => cols,
        Some(_) => {
            return Err(ctx.invalid(
                &format!("{path}.additionalPrinterColumns"),
                "must be an array",
            ));
        }
    };
    let mut out = Vec::with_capacity(cols.len());
    for (i, col) in cols.iter().enumerate() {
        let cpath = format!("{path}.additionalPrinterColumns[{i}]");
        let Value::Object(col) = col else {
            return Err(ctx.invalid(&cpath, "must be a mapping"));
        };
        let priority = match col.get("priority") {
            None | Some(Value::Null) => 0,
            Some(v) => v
                .as_i64()
                .and_then(|p| i32::try_from(p).ok())
                .ok_or_else(|| ctx.invalid(&format!("{cpath}.priority"), "must be an int32"))?,
        };
        out.push(PrinterColumn {
            name: ctx.str(col, "name", &cpath)?.to_owned(),
            type_: ctx.str(col, "type", &cpath)?.to_owned(),
            json_path: ctx.str(col, "jsonPath", &cpath)?.to_owned(),
            description: ctx.opt_str(col, "description", &cpath)?.map(str::to_owned),
            format: ctx.opt_str(col, "format", &cpath)?.map(str::to_owned),
            priority,
        });
    }
    Ok(out)
}
