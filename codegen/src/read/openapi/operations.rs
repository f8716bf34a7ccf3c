//! Both OpenAPI formats reduced to one flat list of Kubernetes operations.
//!
//! Only what the model needs is kept: the URL path, the HTTP method, `x-kubernetes-action`,
//! `x-kubernetes-group-version-kind`, and the schemas of the request body and of the success
//! response (v2: `in: body` parameters and `responses.200.schema`; v3: `requestBody.content`
//! and `responses.200.content`). Operations without `x-kubernetes-action` are the discovery
//! and version endpoints (`/apis/`, `/version/`, `/.well-known/...`) and carry no resource,
//! so they are left out; an unknown action is an error rather than skipped.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::OpenApiError;

/// `x-kubernetes-action` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Action {
    /// `get`: read one object (or a subresource).
    Get,
    /// `list`: read a collection.
    List,
    /// `watch`: the deprecated `/watch/.../{name}` endpoint.
    Watch,
    /// `watchlist`: the deprecated `/watch/...` collection endpoint.
    WatchList,
    /// `post`: create.
    Post,
    /// `put`: replace.
    Put,
    /// `patch`: patch.
    Patch,
    /// `delete`: delete one object.
    Delete,
    /// `deletecollection`: delete a collection.
    DeleteCollection,
    /// `connect`: an upgraded or proxied connection (exec, attach, portforward, proxy).
    Connect,
}

impl Action {
    /// Parses an `x-kubernetes-action` value.
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "get" => Self::Get,
            "list" => Self::List,
            "watch" => Self::Watch,
            "watchlist" => Self::WatchList,
            "post" => Self::Post,
            "put" => Self::Put,
            "patch" => Self::Patch,
            "delete" => Self::Delete,
            "deletecollection" => Self::DeleteCollection,
            "connect" => Self::Connect,
            _ => return None,
        })
    }
}

/// `x-kubernetes-group-version-kind`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Gvk {
    /// Group, `""` for core.
    pub group: String,
    /// Version.
    pub version: String,
    /// Kind.
    pub kind: String,
}

/// One operation of the spec.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Operation {
    /// The document it came from.
    pub file: PathBuf,
    /// URL path template, e.g. `/api/v1/namespaces/{namespace}/pods/{name}`.
    pub path: String,
    /// HTTP method, lower case.
    pub method: String,
    /// `x-kubernetes-action`.
    pub action: Action,
    /// `x-kubernetes-group-version-kind`, when present.
    pub gvk: Option<Gvk>,
    /// The schema (definition name, e.g. `io.k8s.api.core.v1.Pod`) whose
    /// `x-kubernetes-group-version-kind` equals [`Operation::gvk`], when there is one.
    pub gvk_schema: Option<String>,
    /// Definition name of the request body, when it is a `$ref`.
    pub request_schema: Option<String>,
    /// Definition name of the success response, when it is a `$ref`.
    pub response_schema: Option<String>,
    /// Whether the success response is a plain `string` (logs, connect endpoints).
    pub response_is_string: bool,
}

const METHODS: [&str; 7] = ["get", "put", "post", "delete", "options", "head", "patch"];

/// The operations of one or more documents, and the descriptions of their kinds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Parsed {
    /// Every operation carrying `x-kubernetes-action`, in document order.
    pub operations: Vec<Operation>,
    /// `description` of every schema that declares `x-kubernetes-group-version-kind`, by
    /// definition name.
    pub descriptions: BTreeMap<String, String>,
}

impl Parsed {
    /// Appends another document's operations and descriptions.
    pub fn extend(&mut self, other: Parsed) {
        self.operations.extend(other.operations);
        self.descriptions.extend(other.descriptions);
    }
}

/// Parses one document (v2 or v3) into its operations.
pub fn parse_document(text: &str, file: &Path) -> Result<Parsed, OpenApiError> {
    let doc: Value = serde_json::from_str(text).map_err(|source| OpenApiError::Json {
        path: file.to_owned(),
        line: source.line(),
        column: source.column(),
        source,
    })?;
    let structure = |pointer: &str, message: &str| OpenApiError::Structure {
        path: file.to_owned(),
        pointer: pointer.to_owned(),
        message: message.to_owned(),
    };
    let version = Format::detect(&doc).ok_or_else(|| {
        structure(
            "",
            "neither a `swagger: \"2.0\"` nor an `openapi: \"3.x\"` document",
        )
    })?;
    let schemas = match version {
        Format::V2 => doc.get("definitions"),
        Format::V3 => doc.pointer("/components/schemas"),
    };
    let (gvk_index, descriptions) = index_gvks(schemas);
    let paths = doc
        .get("paths")
        .and_then(Value::as_object)
        .ok_or_else(|| structure("/paths", "missing or not an object"))?;
    let ctx = Ctx {
        doc: &doc,
        file,
        format: version,
    };
    let mut ops = Vec::new();
    for (path, item) in paths {
        let item_ptr = format!("/paths/{}", escape(path));
        let item = item
            .as_object()
            .ok_or_else(|| structure(&item_ptr, "path item is not an object"))?;
        for method in METHODS {
            let Some(op) = item.get(method) else { continue };
            let ptr = format!("{item_ptr}/{method}");
            if let Some(op) = ctx.operation(path, method, op, item.get("parameters"), &ptr)? {
                let gvk_schema = op.gvk.as_ref().and_then(|g| gvk_index.get(g).cloned());
                ops.push(Operation { gvk_schema, ..op });
            }
        }
    }
    Ok(Parsed {
        operations: ops,
        descriptions,
    })
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Format {
    V2,
    V3,
}

impl Format {
    fn detect(doc: &Value) -> Option<Self> {
        if doc.get("swagger").and_then(Value::as_str) == Some("2.0") {
            Some(Self::V2)
        } else if doc
            .get("openapi")
            .and_then(Value::as_str)
            .is_some_and(|v| v.starts_with("3."))
        {
            Some(Self::V3)
        } else {
            None
        }
    }
}

struct Ctx<'a> {
    doc: &'a Value,
    file: &'a Path,
    format: Format,
}

impl Ctx<'_> {
    fn err(&self, pointer: &str, message: impl Into<String>) -> OpenApiError {
        OpenApiError::Structure {
            path: self.file.to_owned(),
            pointer: pointer.to_owned(),
            message: message.into(),
        }
    }

    fn operation(
        &self,
        path: &str,
        method: &str,
        op: &Value,
        path_params: Option<&Value>,
        ptr: &str,
    ) -> Result<Option<Operation>, OpenApiError> {
        let Some(action) = op.get("x-kubernetes-action") else {
            return Ok(None);
        };
        let action_str = action
            .as_str()
            .ok_or_else(|| self.err(ptr, "x-kubernetes-action is not a string"))?;
        let action = Action::parse(action_str).ok_or_else(|| {
            self.err(
                &format!("{ptr}/x-kubernetes-action"),
                format!("unknown x-kubernetes-action `{action_str}`"),
            )
        })?;
        let gvk = match op.get("x-kubernetes-group-version-kind") {
            None => None,
            Some(v) => Some(parse_gvk(v).ok_or_else(|| {
                self.err(
                    &format!("{ptr}/x-kubernetes-group-version-kind"),
                    "expected {group, version, kind} strings",
                )
            })?),
        };
        let request_schema = match self.format {
            Format::V2 => self.v2_body(op.get("parameters"), path_params)?,
            Format::V3 => op
                .pointer("/requestBody/content")
                .and_then(|c| first_content_schema(c))
                .and_then(schema_ref),
        };
        let response = match self.format {
            Format::V2 => op.pointer("/responses/200/schema"),
            Format::V3 => op
                .pointer("/responses/200/content")
                .and_then(first_content_schema),
        };
        let response_schema = response.and_then(schema_ref);
        let response_is_string =
            response.and_then(|s| s.get("type")).and_then(Value::as_str) == Some("string");
        Ok(Some(Operation {
            file: self.file.to_owned(),
            path: path.to_owned(),
            method: method.to_owned(),
            action,
            gvk,
            gvk_schema: None,
            request_schema,
            response_schema,
            response_is_string,
        }))
    }

    /// The `$ref` of the `in: body` parameter, resolving `#/parameters/...` references.
    fn v2_body(
        &self,
        op_params: Option<&Value>,
        path_params: Option<&Value>,
    ) -> Result<Option<String>, OpenApiError> {
        for params in [op_params, path_params].into_iter().flatten() {
            let Some(params) = params.as_array() else {
                continue;
            };
            for param in params {
                let param = match param.get("$ref").and_then(Value::as_str) {
                    Some(r) => {
                        let pointer = r.strip_prefix('#').unwrap_or(r);
                        self.doc.pointer(pointer).ok_or_else(|| {
                            self.err(pointer, format!("unresolved parameter reference `{r}`"))
                        })?
                    }
                    None => param,
                };
                if param.get("in").and_then(Value::as_str) == Some("body") {
                    return Ok(param.get("schema").and_then(schema_ref));
                }
            }
        }
        Ok(None)
    }
}

/// The schema of `application/json` content, else of the first content type by name.
fn first_content_schema(content: &Value) -> Option<&Value> {
    let content = content.as_object()?;
    content
        .get("application/json")
        .or_else(|| content.values().next())
        .and_then(|c| c.get("schema"))
}

/// `#/definitions/io.k8s.api.core.v1.Pod` or `#/components/schemas/...` -> the name.
fn schema_ref(schema: &Value) -> Option<String> {
    let r = schema.get("$ref")?.as_str()?;
    Some(r.rsplit('/').next()?.to_owned())
}

fn parse_gvk(v: &Value) -> Option<Gvk> {
    let field = |name: &str| v.get(name).and_then(Value::as_str).map(str::to_owned);
    Some(Gvk {
        group: field("group")?,
        version: field("version")?,
        kind: field("kind")?,
    })
}

/// GVK -> the first (by name) schema declaring it; and the descriptions of those schemas.
fn index_gvks(schemas: Option<&Value>) -> (BTreeMap<Gvk, String>, BTreeMap<String, String>) {
    let mut index = BTreeMap::new();
    let mut docs = BTreeMap::new();
    let Some(schemas) = schemas.and_then(Value::as_object) else {
        return (index, docs);
    };
    for (name, schema) in schemas {
        let Some(gvks) = schema
            .get("x-kubernetes-group-version-kind")
            .and_then(Value::as_array)
        else {
            continue;
        };
        for gvk in gvks.iter().filter_map(parse_gvk) {
            index.entry(gvk).or_insert_with(|| name.clone());
        }
        if let Some(d) = schema.get("description").and_then(Value::as_str) {
            docs.insert(name.clone(), d.to_owned());
        }
    }
    (index, docs)
}

/// Escapes a JSON pointer segment (RFC 6901).
fn escape(segment: &str) -> String {
    segment.replace('~', "~0").replace('/', "~1")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_non_openapi_and_reports_position() {
        let err = parse_document("{\"a\": 1}", Path::new("x.json")).unwrap_err();
        assert!(err.to_string().contains("neither"), "{err}");
        let err = parse_document("{\n  \"swagger\": ", Path::new("x.json")).unwrap_err();
        assert!(matches!(err, OpenApiError::Json { line: 2, .. }), "{err:?}");
    }

    #[test]
    fn unknown_action_is_an_error() {
        let doc = r#"{"swagger": "2.0", "paths": {"/api/v1/pods": {"get": {"x-kubernetes-action": "teleport"}}}}"#;
        let err = parse_document(doc, Path::new("s.json")).unwrap_err();
        assert!(
            err.to_string().contains("/paths/~1api~1v1~1pods/get"),
            "{err}"
        );
    }

    #[test]
    fn v3_request_and_response_schemas() {
        let doc = r##"{"openapi": "3.0.0", "components": {"schemas": {
              "io.k8s.api.policy.v1.Eviction": {"x-kubernetes-group-version-kind": [{"group": "policy", "version": "v1", "kind": "Eviction"}]}}},
            "paths": {"/api/v1/namespaces/{namespace}/pods/{name}/eviction": {"post": {
              "x-kubernetes-action": "post",
              "x-kubernetes-group-version-kind": {"group": "policy", "version": "v1", "kind": "Eviction"},
              "requestBody": {"content": {"*/*": {"schema": {"$ref": "#/components/schemas/io.k8s.api.policy.v1.Eviction"}}}},
              "responses": {"200": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/io.k8s.api.policy.v1.Eviction"}}}}}}}}}"##;
        let ops = parse_document(doc, Path::new("v3.json"))
            .unwrap()
            .operations;
        assert_eq!(ops.len(), 1);
        let op = &ops[0];
        assert_eq!(op.action, Action::Post);
        assert_eq!(
            op.request_schema.as_deref(),
            Some("io.k8s.api.policy.v1.Eviction")
        );
        assert_eq!(op.response_schema, op.request_schema);
        assert_eq!(op.gvk_schema, op.request_schema);
    }
}
