//! The `scale` subresource (`autoscaling/v1` `Scale`), for deployments, replicasets and CRDs
//! that declare `subresources.scale`: GET reads the replica counts through the declared paths,
//! PUT and PATCH write `spec.replicas` back into the object (with the Scale's
//! resourceVersion as a precondition), as `kubectl scale` and the HPA use it. A negative or
//! missing `spec.replicas` is 422 Invalid on the `Scale` (`ValidateScale`).

use std::sync::Arc;

use serde_json::{Value, json};

use crate::handlers::patch::PatchType;
use crate::handlers::validate::{Cause, invalid_error};
use crate::registry::{ResourceInfo, ScalePaths};
use crate::status::ApiError;
use crate::storage::{Inner, Obj, object_key};

fn pointer(path: &str) -> String {
    path.replace('.', "/")
}

/// The Scale view of an object.
pub(crate) fn scale_of(paths: &ScalePaths, obj: &Obj) -> Value {
    let v = obj.value();
    let m = &v["metadata"];
    let selector = paths
        .label_selector
        .as_deref()
        .and_then(|p| v.pointer(&pointer(p)))
        .and_then(Value::as_str)
        .unwrap_or_default();
    let mut scale = json!({
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {
            "name": m["name"], "uid": m["uid"],
            "resourceVersion": m["resourceVersion"], "creationTimestamp": m["creationTimestamp"],
        },
        "spec": {"replicas": v.pointer(&pointer(&paths.spec_replicas)).cloned().unwrap_or(json!(0))},
        "status": {
            "replicas": v.pointer(&pointer(&paths.status_replicas)).cloned().unwrap_or(json!(0)),
            "selector": selector,
        },
    });
    if !obj.namespace.is_empty() {
        scale["metadata"]["namespace"] = json!(obj.namespace);
    }
    scale
}

/// GET `/scale`.
pub(crate) fn get(
    inner: &Inner,
    info: &ResourceInfo,
    ns: &str,
    name: &str,
) -> Result<Value, ApiError> {
    let paths = info
        .scale
        .as_ref()
        .ok_or_else(|| ApiError::no_route("scale"))?;
    let obj = inner
        .get(&info.storage_key(), &object_key(ns, name))
        .ok_or_else(|| ApiError::not_found(&info.group, &info.plural, name))?;
    Ok(scale_of(paths, &obj))
}

/// PUT (`patch` None, `body` a Scale) or PATCH (`patch` Some, `body` the patch) of `/scale`.
pub(crate) fn write(
    inner: &mut Inner,
    info: &ResourceInfo,
    ns: &str,
    name: &str,
    patch: Option<PatchType>,
    body: &[u8],
) -> Result<Value, ApiError> {
    let paths = info
        .scale
        .as_ref()
        .ok_or_else(|| ApiError::no_route("scale"))?;
    let schema = match patch {
        Some(pt) => pt.scale_schema_for(info)?,
        None => None,
    };
    let current = get(inner, info, ns, name)?;
    let scale: Value = match patch {
        Some(pt) => pt.apply(current, body, schema)?,
        None => serde_json::from_slice(body)
            .map_err(|e| ApiError::bad_request(format!("the body is not valid JSON: {e}")))?,
    };
    // `ValidateScale`, as `Scale.autoscaling "name" is invalid: ...`.
    let scale_invalid = |cause: Cause| invalid_error("autoscaling", "Scale", name, vec![cause]);
    let replicas = scale["spec"]["replicas"]
        .as_i64()
        .ok_or_else(|| scale_invalid(Cause::required("spec.replicas")))?;
    if replicas < 0 {
        return Err(scale_invalid(Cause::invalid(
            "spec.replicas",
            &json!(replicas),
            "must be greater than or equal to 0",
        )));
    }
    let old: Arc<Obj> = inner
        .get(&info.storage_key(), &object_key(ns, name))
        .ok_or_else(|| ApiError::not_found(&info.group, &info.plural, name))?;
    let mut v = old.value();
    let ptr = pointer(&paths.spec_replicas);
    let (parent, leaf) = ptr.rsplit_once('/').unwrap_or(("", ptr.as_str()));
    match v.pointer_mut(parent) {
        Some(Value::Object(m)) => {
            m.insert(leaf.to_owned(), json!(replicas));
        }
        _ => {
            return Err(ApiError::invalid(
                &info.group,
                &info.kind,
                name,
                &paths.spec_replicas,
                "parent path does not exist",
            ));
        }
    }
    v["metadata"]["resourceVersion"] = scale["metadata"]["resourceVersion"].clone();
    v["apiVersion"] = json!(info.api_version());
    let obj = crate::handlers::write::update(
        inner,
        info,
        ns,
        name,
        false,
        v,
        &mut crate::handlers::validate::Check::default(),
    )?;
    Ok(scale_of(paths, &obj))
}
