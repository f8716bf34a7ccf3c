//! Content negotiation: the forms a response can take, chosen from the `Accept` header as the
//! real server does.
//!
//! JSON is always served (a client asking only for protobuf gets JSON too, which client-go
//! accepts from servers that lack protobuf). `as=PartialObjectMetadata` / `...List` (client-go's
//! metadata client) answers `meta.k8s.io/v1` metadata-only objects; `as=Table` (kubectl get)
//! answers `meta.k8s.io/v1` Tables whose rows carry the row object as PartialObjectMetadata
//! unless `includeObject=Object|None` says otherwise.
//!
//! `drop=metadata.managedFields` (KEP-5958, the `ManagedFieldsOptOut` feature gate, alpha and
//! off by default): with the gate on, a plain JSON clause carrying it answers objects without
//! `metadata.managedFields` ([`Form::JsonWithoutManagedFields`]), for GET, LIST and WATCH
//! alike. The value is a `+`-separated set of fields; targets other than
//! `metadata.managedFields` are ignored, as the KEP says. The answer's `Content-Type` stays
//! `application/json`: the real server echoes no parameter either, so a client can tell that
//! the request was honoured only by the objects it receives. With the gate off the
//! parameter is one of the `Unrecognized` parameters of apiserver's `acceptMediaTypeOptions`,
//! which accepts the clause and ignores them: the objects keep their managedFields, as from a
//! server that predates the KEP (no 406). Sources: the KEP,
//! <https://github.com/kubernetes/enhancements/tree/master/keps/sig-api-machinery/5958-client-opt-out-managedfields>,
//! and apiserver's `endpoints/handlers/negotiation/negotiate.go`.

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
    /// Plain JSON objects and lists without `metadata.managedFields`
    /// (`drop=metadata.managedFields`, with the `ManagedFieldsOptOut` gate on).
    JsonWithoutManagedFields,
}

impl Form {
    /// Picks the first form of the `Accept` header this server can produce; `opt_out` is the
    /// `ManagedFieldsOptOut` feature gate (off: `drop` is ignored as an unknown parameter).
    pub fn from_accept(accept: Option<&str>, opt_out: bool) -> Self {
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
                (None, _) => {
                    let drops = params
                        .iter()
                        .filter_map(|p| p.strip_prefix("drop="))
                        .any(|v| v.split('+').any(|f| f == "metadata.managedFields"));
                    return if opt_out && drops {
                        Self::JsonWithoutManagedFields
                    } else {
                        Self::Json
                    };
                }
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

/// [`object_bytes`] without `metadata.managedFields` (the same bytes when it has none).
pub(crate) fn object_bytes_without_managed_fields(info: &ResourceInfo, obj: &Obj) -> Bytes {
    let bytes = object_bytes(info, obj);
    if memchr::memmem::find(&bytes, b"\"managedFields\"").is_none() {
        return bytes;
    }
    let mut value = obj.value_for(info);
    let removed = value
        .get_mut("metadata")
        .and_then(Value::as_object_mut)
        .and_then(|meta| meta.remove("managedFields"));
    if removed.is_some() {
        to_bytes(&value)
    } else {
        bytes
    }
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
        Form::JsonWithoutManagedFields => object_bytes_without_managed_fields(info, obj),
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
        assert_eq!(Form::from_accept(None, false), Form::Json);
        assert_eq!(
            Form::from_accept(
                Some(
                    "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"
                ),
                false
            ),
            Form::Table
        );
        assert_eq!(
            Form::from_accept(
                Some("application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"),
                false
            ),
            Form::Metadata
        );
        assert_eq!(
            Form::from_accept(Some("application/vnd.kubernetes.protobuf, */*"), false),
            Form::Json
        );
        assert_eq!(
            Form::from_accept(
                Some(
                    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json"
                ),
                false
            ),
            Form::Json
        );
    }

    #[test]
    fn drop_managed_fields_needs_the_gate() {
        let accept = Some("application/json;drop=metadata.managedFields, application/json");
        assert_eq!(
            Form::from_accept(accept, true),
            Form::JsonWithoutManagedFields
        );
        assert_eq!(Form::from_accept(accept, false), Form::Json);
        let several = Some("application/json;drop=spec.future+metadata.managedFields");
        assert_eq!(
            Form::from_accept(several, true),
            Form::JsonWithoutManagedFields
        );
        let unknown = Some("application/json;drop=spec.future");
        assert_eq!(Form::from_accept(unknown, true), Form::Json);
    }
}
