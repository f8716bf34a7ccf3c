//! Operations -> [`ApiModel`]: one [`ResourceDef`] per group, version and plural.
//!
//! - Verbs on the resource come from the paths without a subresource: `get`, `put`,
//!   `patch`, `delete` on `{plural}/{name}`; `list`, `post`, `deletecollection` on
//!   `{plural}`; `watch`/`watchlist` on the `/watch/` paths give [`Verb::Watch`] (the
//!   `watch=true` list parameter is not used: `componentstatuses` accepts it but is not
//!   watchable, as discovery says).
//! - A resource is namespaced when any of its paths is under `namespaces/{namespace}/`;
//!   the all-namespaces list path of a namespaced resource does not make it cluster-scoped.
//! - Its Rust type is the schema its `get` returns, else the body its `post`/`put`
//!   accepts, else the schema declaring its group-version-kind.
//! - Subresources take their verbs from their own paths (`connect` gives [`Verb::Connect`])
//!   and their body type from the request body (`put`, `post`), the response (`get`,
//!   `patch`) or, for connect, the schema of the options kind (`PodExecOptions`, absent from
//!   the v1.35 spec: connect options are query parameters); a body equal to the
//!   resource's own type is recorded as `None`. A `get` answering a plain string (`log`) is a
//!   byte stream.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use crate::model::{ApiModel, ResourceDef, RootType, Scope, Subresource, Verb};

use super::OpenApiError;
use super::operations::{Action, Operation, Parsed};
use super::paths::{PathInfo, parse_path};
use super::type_path::k8s_openapi_path;
use crate::read::names;

#[derive(Default)]
struct ResourceAcc {
    namespaced: bool,
    verbs: BTreeSet<Verb>,
    kind: Option<(String, Operation)>,
    /// Candidate root schemas by priority (lower is better).
    root: BTreeMap<u8, String>,
    subresources: BTreeMap<String, SubAcc>,
    file: PathBuf,
    /// JSON pointer of the resource's first operation, for errors.
    pointer: String,
}

#[derive(Default)]
struct SubAcc {
    verbs: BTreeSet<Verb>,
    body: Option<String>,
    streams: bool,
}

/// Builds the model from parsed operations.
pub fn build_model(parsed: &Parsed) -> Result<ApiModel, OpenApiError> {
    let mut resources: BTreeMap<(String, String, String), ResourceAcc> = BTreeMap::new();
    for op in &parsed.operations {
        let info = parse_path(&op.path).ok_or_else(|| structure(op, "not a resource path"))?;
        check_names(op, &info)?;
        let acc = resources
            .entry((info.group, info.version, info.plural))
            .or_default();
        acc.namespaced |= info.namespaced;
        if acc.file.as_os_str().is_empty() {
            acc.file = op.file.clone();
            acc.pointer = pointer(op);
        }
        match info.subresource {
            None => add_resource_op(acc, op)?,
            Some(sub) => add_subresource_op(acc.subresources.entry(sub).or_default(), op),
        }
    }
    let mut model = ApiModel::default();
    for ((group, version, plural), acc) in resources {
        let def = finish(&plural, acc, parsed)?;
        let g = model.groups.entry(group.clone()).or_default();
        g.name.clone_from(&group);
        let gv = g.versions.entry(version.clone()).or_default();
        gv.group = group;
        gv.version = version;
        gv.resources.insert(plural, def);
    }
    Ok(model)
}

/// Rejects group, version, plural and subresource names the API server could not serve
/// (see [`crate::read::names`]): they become Rust names.
fn check_names(op: &Operation, info: &PathInfo) -> Result<(), OpenApiError> {
    if !info.group.is_empty() && !names::is_dns1123_subdomain(&info.group) {
        return Err(structure(
            op,
            format!("group {:?} is not a DNS subdomain", info.group),
        ));
    }
    let labels = [
        ("version", Some(&info.version)),
        ("resource", Some(&info.plural)),
    ];
    let sub = [("subresource", info.subresource.as_ref())];
    for (what, value) in labels.into_iter().chain(sub) {
        if let Some(value) = value
            && !names::is_dns1035_label(value)
        {
            return Err(structure(
                op,
                format!(
                    "{what} {value:?} is not a DNS-1035 label (lower-case letters, digits, '-')"
                ),
            ));
        }
    }
    if let Some(gvk) = &op.gvk
        && !names::is_kind(&gvk.kind)
    {
        return Err(structure(
            op,
            format!(
                "x-kubernetes-group-version-kind: kind {:?} is not a kind",
                gvk.kind
            ),
        ));
    }
    Ok(())
}

fn structure(op: &Operation, message: impl Into<String>) -> OpenApiError {
    OpenApiError::Structure {
        path: op.file.clone(),
        pointer: pointer(op),
        message: message.into(),
    }
}

/// The JSON pointer of an operation: `/paths/<path>/<method>`.
fn pointer(op: &Operation) -> String {
    format!(
        "/paths/{}/{}",
        op.path.replace('~', "~0").replace('/', "~1"),
        op.method
    )
}

fn add_resource_op(acc: &mut ResourceAcc, op: &Operation) -> Result<(), OpenApiError> {
    let verb = match op.action {
        Action::Get => Verb::Get,
        Action::List => Verb::List,
        Action::Watch | Action::WatchList => Verb::Watch,
        Action::Post => Verb::Create,
        Action::Put => Verb::Update,
        Action::Patch => Verb::Patch,
        Action::Delete => Verb::Delete,
        Action::DeleteCollection => Verb::DeleteCollection,
        Action::Connect => Verb::Connect,
    };
    acc.verbs.insert(verb);
    if let Some(gvk) = &op.gvk {
        match &acc.kind {
            None => acc.kind = Some((gvk.kind.clone(), op.clone())),
            Some((kind, first)) if *kind != gvk.kind => {
                return Err(structure(
                    op,
                    format!(
                        "kind `{}` differs from kind `{kind}` of {} {}",
                        gvk.kind, first.method, first.path
                    ),
                ));
            }
            Some(_) => {}
        }
    }
    let candidates = [
        (0, (op.action == Action::Get).then_some(&op.response_schema)),
        (1, (op.action == Action::Post).then_some(&op.request_schema)),
        (2, (op.action == Action::Put).then_some(&op.request_schema)),
        (3, Some(&op.gvk_schema)),
    ];
    for (priority, schema) in candidates {
        if let Some(Some(schema)) = schema {
            acc.root.entry(priority).or_insert_with(|| schema.clone());
        }
    }
    Ok(())
}

fn add_subresource_op(acc: &mut SubAcc, op: &Operation) {
    let (verb, body) = match op.action {
        Action::Get => (Verb::Get, &op.response_schema),
        Action::Put => (Verb::Update, &op.request_schema),
        Action::Post => (Verb::Create, &op.request_schema),
        // The request body of a patch is `meta.v1.Patch`; the object is in the response.
        Action::Patch => (Verb::Patch, &op.response_schema),
        Action::Connect => (Verb::Connect, &op.gvk_schema),
        Action::List | Action::Watch | Action::WatchList => (Verb::List, &None),
        Action::Delete | Action::DeleteCollection => (Verb::Delete, &None),
    };
    acc.verbs.insert(verb);
    if op.action == Action::Get && op.response_is_string {
        acc.streams = true;
    }
    if acc.body.is_none() {
        acc.body.clone_from(body);
    }
}

fn finish(plural: &str, acc: ResourceAcc, parsed: &Parsed) -> Result<ResourceDef, OpenApiError> {
    let missing = |what: &str| OpenApiError::Structure {
        path: acc.file.clone(),
        pointer: acc.pointer.clone(),
        message: format!("resource `{plural}`: {what}"),
    };
    let (kind, _) = acc
        .kind
        .clone()
        .ok_or_else(|| missing("no operation carries x-kubernetes-group-version-kind"))?;
    let root_schema = acc
        .root
        .values()
        .next()
        .cloned()
        .ok_or_else(|| missing("no operation names the resource's schema"))?;
    let root = external(&root_schema).ok_or_else(|| {
        missing(&format!(
            "schema `{root_schema}` has no k8s-openapi type (not under io.k8s., or not a Rust path)"
        ))
    })?;
    let mut subresources = BTreeMap::new();
    for (name, sub) in acc.subresources {
        let body_type = match &sub.body {
            Some(schema) if *schema != root_schema && !sub.streams => {
                Some(external(schema).ok_or_else(|| {
                    missing(&format!(
                        "subresource `{name}`: schema `{schema}` has no k8s-openapi type"
                    ))
                })?)
            }
            _ => None,
        };
        subresources.insert(
            name.clone(),
            Subresource {
                name,
                verbs: sub.verbs,
                body_type,
                streams: sub.streams,
                scale_paths: None,
            },
        );
    }
    let list_kind = acc
        .verbs
        .contains(&Verb::List)
        .then(|| format!("{kind}List"));
    Ok(ResourceDef {
        singular: Some(kind.to_lowercase()),
        list_kind,
        scope: if acc.namespaced {
            Scope::Namespaced
        } else {
            Scope::Cluster
        },
        verbs: acc.verbs,
        subresources,
        short_names: Vec::new(),
        categories: Vec::new(),
        printer_columns: Vec::new(),
        served: true,
        storage: false,
        deprecated: None,
        root,
        docs: parsed.descriptions.get(&root_schema).cloned(),
        kind,
        plural: plural.to_owned(),
    })
}

fn external(schema: &str) -> Option<RootType> {
    k8s_openapi_path(schema).map(RootType::External)
}
