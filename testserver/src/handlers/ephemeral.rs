//! `pods/ephemeralcontainers`: the Pod read (GET), replaced (PUT) or patched (PATCH: merge,
//! JSON and strategic merge patches, as `kubectl debug` sends) through the subresource that
//! adds ephemeral containers, kube-apiserver's `EphemeralContainersREST`.
//!
//! As the real server's `podEphemeralContainersStrategy`: the written Pod is decoded as any
//! (400 on a value its Go types cannot hold, `fieldValidation` applies), then only
//! `spec.ephemeralContainers` of it is kept, every other change is dropped (the stored pod is the base),
//! with the written `resourceVersion` as a precondition (409). Validation
//! (`ValidatePodEphemeralContainersUpdate`, 422 Invalid of kind Pod) refuses removing or
//! changing an existing ephemeral container, and, of each ephemeral container, a missing
//! `name` or `image`, a name another container of the pod has, and the fields an ephemeral
//! container may not set (`ports`, probes, `lifecycle`, `resources`, `resizePolicy`); a
//! mirror (static) pod takes none. The answer is the updated Pod.
//!
//! Not reproduced: the `cmp.Diff` of a changed container in its error message, the rest of
//! the Pod's hand-written validation, and server-side apply to this subresource (415, as
//! for the other patch types this server does not take).

use serde_json::{Value, json};

use crate::State;
use crate::handlers::negotiation::body::Body;
use crate::handlers::negotiation::render::{Form, IncludeObject, render_object};
use crate::handlers::params::Query;
use crate::handlers::patch::PatchType;
use crate::handlers::validate::{Cause, Check, child, invalid_error};
use crate::registry::ResourceInfo;
use crate::status::ApiError;
use crate::storage::object_key;

/// Fields an ephemeral container may not set.
const FORBIDDEN: &[&str] = &[
    "ports",
    "livenessProbe",
    "readinessProbe",
    "startupProbe",
    "lifecycle",
    "resources",
    "resizePolicy",
];

/// Serves one request on the subresource.
#[allow(clippy::too_many_arguments)]
pub(crate) fn serve(
    state: &State,
    info: &ResourceInfo,
    method: &http::Method,
    path: &str,
    namespace: &str,
    name: &str,
    form: Form,
    q: &Query,
    content_type: &str,
    body: &[u8],
) -> Result<http::Response<Body>, ApiError> {
    let written = match *method {
        http::Method::GET => {
            return crate::handlers::list::get(state, info, namespace, name, form, q);
        }
        http::Method::PUT => Written::Replace(Value::Object(
            crate::handlers::eviction::body_object(body, "Pod", &["v1"])?,
        )),
        http::Method::PATCH => Written::Patch(PatchType::from_content_type(content_type)?),
        _ => return Err(ApiError::method_not_allowed(method.as_str(), path)),
    };
    let options_kind = match written {
        Written::Replace(_) => "UpdateOptions",
        Written::Patch(_) => "PatchOptions",
    };
    let mut check = Check::from_request(q, body, options_kind)?;
    let mut inner = state.storage.write(q.dry_run()?);
    let old = inner
        .get(&info.storage_key(), &object_key(namespace, name))
        .ok_or_else(|| ApiError::not_found("", "pods", name))?;
    let stored = old.value();
    let mut new = match written {
        Written::Replace(v) => v,
        Written::Patch(pt) => {
            let schema = pt.schema_for(info)?;
            let mut current = stored.clone();
            current["apiVersion"] = json!(info.api_version());
            pt.apply(current, body, schema)?
        }
    };
    if !new.is_object() {
        return Err(ApiError::bad_request("the body is not a Pod object"));
    }
    if new.get("apiVersion").is_none() {
        new["apiVersion"] = json!("v1");
    }
    if new.get("kind").is_none() {
        new["kind"] = json!("Pod");
    }
    // The written Pod is decoded whole before the strategy keeps its ephemeral containers:
    // a value its Go type cannot hold is a 400 even outside them.
    crate::handlers::validate::decode(&inner, info, &mut new, &mut check)?;
    let body_name = new["metadata"]["name"].as_str().unwrap_or_default();
    if !body_name.is_empty() && body_name != name {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({body_name}) does not match the name on the URL ({name})"
        )));
    }
    let mut pod = stored.clone();
    match &new["spec"]["ephemeralContainers"] {
        Value::Null => {
            if let Some(spec) = pod["spec"].as_object_mut() {
                spec.remove("ephemeralContainers");
            }
        }
        ecs => pod["spec"]["ephemeralContainers"] = ecs.clone(),
    }
    pod["metadata"]["resourceVersion"] = match new["metadata"]["resourceVersion"].as_str() {
        Some(rv) if !rv.is_empty() => json!(rv),
        _ => json!(old.rv.to_string()),
    };
    let causes = validate(&stored, &pod);
    if !causes.is_empty() {
        return Err(invalid_error("", "Pod", name, causes));
    }
    let obj =
        crate::handlers::write::update(&mut inner, info, namespace, name, false, pod, &mut check)?;
    drop(inner);
    let include = IncludeObject::parse(q.get("includeObject"));
    Ok(check.with_warnings(crate::json_response(
        200,
        render_object(info, &obj, form, include),
    )))
}

/// What the request writes.
enum Written {
    Replace(Value),
    Patch(PatchType),
}

fn forbidden(field: &str, message: String) -> Cause {
    Cause {
        reason: "FieldValueForbidden",
        field: field.to_owned(),
        message: format!("Forbidden: {message}"),
    }
}

/// `ValidatePodEphemeralContainersUpdate`, the parts this server reproduces.
fn validate(old: &Value, new: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    if old["metadata"]["annotations"]["kubernetes.io/config.mirror"].is_string() {
        return vec![forbidden(
            "",
            "static pods do not support ephemeral containers".into(),
        )];
    }
    let path = "spec.ephemeralContainers";
    let list = |pod: &Value, key: &str| -> Vec<Value> {
        pod["spec"][key].as_array().cloned().unwrap_or_default()
    };
    let new_ecs = list(new, "ephemeralContainers");
    let mut seen: Vec<String> = ["initContainers", "containers"]
        .iter()
        .flat_map(|k| list(new, k))
        .filter_map(|c| c["name"].as_str().map(str::to_owned))
        .collect();
    for (i, c) in new_ecs.iter().enumerate() {
        let at = format!("{path}[{i}]");
        match c["name"].as_str().filter(|n| !n.is_empty()) {
            None => causes.push(Cause::required(&child(&at, "name"))),
            Some(n) if seen.iter().any(|s| s == n) => {
                causes.push(Cause::duplicate(&child(&at, "name"), &json!(n)));
            }
            Some(n) => seen.push(n.to_owned()),
        }
        if c["image"].as_str().is_none_or(str::is_empty) {
            causes.push(Cause::required(&child(&at, "image")));
        }
        for field in FORBIDDEN {
            // A Go zero value (kubectl sends `resources: {}`) is no setting.
            let set = match c.get(*field) {
                None | Some(Value::Null) => false,
                Some(Value::Object(m)) => !m.is_empty(),
                Some(Value::Array(a)) => !a.is_empty(),
                Some(_) => true,
            };
            if set {
                causes.push(forbidden(
                    &child(&at, field),
                    "cannot be set for an Ephemeral Container".into(),
                ));
            }
        }
    }
    for o in list(old, "ephemeralContainers") {
        let name = o["name"].as_str().unwrap_or_default();
        match new_ecs.iter().find(|c| c["name"].as_str() == Some(name)) {
            None => causes.push(forbidden(
                path,
                format!("existing ephemeral containers {name:?} may not be removed\n"),
            )),
            Some(c) if *c != o => causes.push(forbidden(
                &format!("{path}[{name}]"),
                format!("existing ephemeral containers {name:?} may not be changed\n"),
            )),
            Some(_) => {}
        }
    }
    causes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(ecs: Value) -> Value {
        json!({"metadata": {"name": "p"},
               "spec": {"containers": [{"name": "app", "image": "x"}], "ephemeralContainers": ecs}})
    }

    /// ValidatePodEphemeralContainersUpdate: adding is allowed, removing and changing are
    /// Forbidden, and each container is checked as an ephemeral container.
    #[test]
    fn only_additions_pass() {
        let old = pod(json!([{"name": "dbg", "image": "busybox"}]));
        let added =
            pod(json!([{"name": "dbg", "image": "busybox"}, {"name": "dbg2", "image": "busybox"}]));
        assert!(validate(&old, &added).is_empty());
        let removed = pod(json!([]));
        let c = validate(&old, &removed);
        assert_eq!(c[0].field, "spec.ephemeralContainers");
        assert_eq!(
            c[0].message,
            "Forbidden: existing ephemeral containers \"dbg\" may not be removed\n"
        );
        let changed = pod(json!([{"name": "dbg", "image": "alpine"}]));
        assert_eq!(
            validate(&old, &changed)[0].field,
            "spec.ephemeralContainers[dbg]"
        );
        let bad = pod(
            json!([{"name": "app", "ports": [{"containerPort": 80}], "resources": {}},
                             {"image": "x"}]),
        );
        let fields: Vec<String> = validate(&pod(json!([])), &bad)
            .into_iter()
            .map(|c| c.field)
            .collect();
        assert_eq!(
            fields,
            [
                "spec.ephemeralContainers[0].name",
                "spec.ephemeralContainers[0].image",
                "spec.ephemeralContainers[0].ports",
                "spec.ephemeralContainers[1].name",
            ]
        );
    }
}
