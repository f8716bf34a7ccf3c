//! Content negotiation: the forms a response can take, chosen from the `Accept` header as the
//! real server does.
//!
//! JSON is always served (a client asking only for protobuf gets JSON too, which client-go
//! accepts from servers that lack protobuf). `as=PartialObjectMetadata` / `...List` (client-go's
//! metadata client) answers `meta.k8s.io/v1` metadata-only objects; `as=Table` (kubectl get)
//! answers `meta.k8s.io/v1` Tables whose rows carry the row object as PartialObjectMetadata
//! unless `includeObject=Object|None` says otherwise.

use bytes::Bytes;
use serde_json::{Value, json};

use crate::registry::ResourceInfo;
use crate::storage::Obj;

/// The form of a response body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Form {
    /// Plain JSON objects and lists.
    Json,
    /// `PartialObjectMetadata(List)`.
    Metadata,
    /// `Table`.
    Table,
}

impl Form {
    /// Picks the first form of the `Accept` header this server can produce.
    pub fn from_accept(accept: Option<&str>) -> Self {
        let Some(accept) = accept else {
            return Self::Json;
        };
        for part in accept.split(',') {
            let params: Vec<&str> = part.split(';').map(str::trim).collect();
            let media = params[0];
            if media != "application/json" && media != "*/*" && media != "application/*" {
                continue;
            }
            let as_ = params.iter().find_map(|p| p.strip_prefix("as="));
            let group = params.iter().find_map(|p| p.strip_prefix("g="));
            match (as_, group) {
                (None, _) => return Self::Json,
                (Some("Table"), Some("meta.k8s.io")) => return Self::Table,
                (
                    Some("PartialObjectMetadata" | "PartialObjectMetadataList"),
                    Some("meta.k8s.io"),
                ) => {
                    return Self::Metadata;
                }
                _ => continue,
            }
        }
        Self::Json
    }
}

/// How the Table rows should carry their object (`includeObject`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum IncludeObject {
    /// No object.
    None,
    /// PartialObjectMetadata (the default).
    Metadata,
    /// The full object.
    Object,
}

impl IncludeObject {
    /// Parses the `includeObject` query parameter.
    pub fn parse(value: Option<&str>) -> Self {
        match value {
            Some("None") => Self::None,
            Some("Object") => Self::Object,
            _ => Self::Metadata,
        }
    }
}

/// The object bytes as seen through `info`'s version (`Obj::value_for`: only `apiVersion`
/// differs between the versions of a resource, as with conversion strategy `None`, but for
/// the two Event versions).
pub(crate) fn object_bytes(info: &ResourceInfo, obj: &Obj) -> Bytes {
    if obj.api_version == info.api_version() {
        return obj.bytes.clone();
    }
    Bytes::from(serde_json::to_vec(&obj.value_for(info)).unwrap_or_default())
}

/// The object's `PartialObjectMetadata`.
pub(crate) fn metadata_object(value: &Value) -> Value {
    json!({
        "kind": "PartialObjectMetadata",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": value["metadata"].clone(),
    })
}

/// The object in the requested single-object form.
pub(crate) fn render_object(
    info: &ResourceInfo,
    obj: &Obj,
    form: Form,
    include: IncludeObject,
) -> Bytes {
    match form {
        Form::Json => object_bytes(info, obj),
        Form::Metadata => to_bytes(&metadata_object(&obj.value())),
        Form::Table => to_bytes(&crate::handlers::negotiation::table::table(
            info,
            &[obj.value_for(info)],
            include,
            None,
        )),
    }
}

/// Serializes a JSON value.
pub(crate) fn to_bytes(v: &Value) -> Bytes {
    Bytes::from(serde_json::to_vec(v).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negotiates_like_the_api_server() {
        assert_eq!(Form::from_accept(None), Form::Json);
        assert_eq!(
            Form::from_accept(Some(
                "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"
            )),
            Form::Table
        );
        assert_eq!(
            Form::from_accept(Some(
                "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
            )),
            Form::Metadata
        );
        assert_eq!(
            Form::from_accept(Some("application/vnd.kubernetes.protobuf, */*")),
            Form::Json
        );
        assert_eq!(
            Form::from_accept(Some(
                "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json"
            )),
            Form::Json
        );
    }
}
