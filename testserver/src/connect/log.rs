//! `pods/log`: `GET /api/v1/namespaces/{ns}/pods/{name}/log`, kube-apiserver's `LogREST`
//! with the kubelet's side of it (its container log endpoint), since no kubelet runs here.
//!
//! kube-apiserver's part:
//! - `PodLogOptions` decoded from the query (a malformed integer or time is 400) and
//!   validated (`ValidatePodLogOptions`: `tailLines` not negative, `limitBytes` and
//!   `sinceSeconds` positive, not both `sinceSeconds` and `sinceTime`; 422 Invalid of kind
//!   `PodLogOptions`);
//! - the pod must exist (404 `pods "x" not found`) and the container resolves as for exec
//!   (`connect::resolve_container`: the only regular container when none is named, 400 with
//!   every container's name otherwise, 400 for a name the pod does not have);
//! - a pod with no `spec.nodeName` has no kubelet to ask: 204 No Content, an empty log.
//!
//! The kubelet's part, for a bound pod: the logs a test registered with
//! [`crate::TestApiServer::set_pod_log`] for the container, as `text/plain`, cut by
//! `tailLines` (last lines) then `limitBytes`; without any, the container's status decides
//! as the kubelet's `validateContainerLogStatus` does, its refusals passed on as 400
//! BadRequest with the kubelet's text (`container "app" in pod "web" is waiting to start:
//! ContainerCreating`); a running or terminated container has an empty log. A container
//! with no status entry is taken as waiting with reason `ContainerCreating`, which a kubelet
//! reports for a pod it has just been given.
//!
//! Not reproduced: `follow` (the log ends with what is registered), `timestamps` and the
//! time filters `sinceSeconds` and `sinceTime` (registered text carries no times; they are
//! validated only), `previous` beyond the kubelet's status check (registered text is the
//! current container's), and the `stream` option of split stdout/stderr logs.

use serde_json::{Value, json};

use crate::State;
use crate::handlers::negotiation::body::{Body, full};
use crate::handlers::params::Query;
use crate::handlers::validate::{Cause, invalid_error};
use crate::status::ApiError;
use crate::storage::object_key;

/// The `PodLogOptions` this server reads.
#[derive(Debug, Default, PartialEq)]
struct Options {
    container: Option<String>,
    previous: bool,
    tail_lines: Option<i64>,
    limit_bytes: Option<i64>,
}

/// An integer parameter as the query conversion parses it (`strconv.ParseInt`).
fn int(q: &Query, key: &str) -> Result<Option<i64>, ApiError> {
    q.get(key)
        .map(|v| {
            v.parse::<i64>().map_err(|_| {
                ApiError::bad_request(format!("strconv.ParseInt: parsing {v:?}: invalid syntax"))
            })
        })
        .transpose()
}

/// Decodes and validates the options (`ValidatePodLogOptions`).
fn options(q: &Query, pod: &str) -> Result<Options, ApiError> {
    let tail_lines = int(q, "tailLines")?;
    let limit_bytes = int(q, "limitBytes")?;
    let since_seconds = int(q, "sinceSeconds")?;
    let since_time = q.get("sinceTime");
    if let Some(t) = since_time
        && t.parse::<jiff::Timestamp>().is_err()
    {
        return Err(ApiError::bad_request(format!(
            "parsing time {t:?} as \"2006-01-02T15:04:05Z07:00\": cannot parse {t:?}"
        )));
    }
    let mut causes = Vec::new();
    if let Some(n) = tail_lines.filter(|n| *n < 0) {
        causes.push(Cause::invalid(
            "tailLines",
            &json!(n),
            "must be greater than or equal to 0",
        ));
    }
    if let Some(n) = limit_bytes.filter(|n| *n < 1) {
        causes.push(Cause::invalid(
            "limitBytes",
            &json!(n),
            "must be greater than 0",
        ));
    }
    match (since_seconds, since_time) {
        (Some(_), Some(_)) => causes.push(Cause {
            reason: "FieldValueForbidden",
            field: String::new(),
            message: "Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified"
                .into(),
        }),
        (Some(n), None) if n < 1 => causes.push(Cause::invalid(
            "sinceSeconds",
            &json!(n),
            "must be greater than 0",
        )),
        _ => {}
    }
    if !causes.is_empty() {
        return Err(invalid_error("", "PodLogOptions", pod, causes));
    }
    Ok(Options {
        container: q.get("container").map(str::to_owned),
        previous: q.flag("previous").unwrap_or(false),
        tail_lines,
        limit_bytes,
    })
}

/// Serves one `pods/log` request.
pub(crate) fn serve(
    state: &State,
    namespace: &str,
    name: &str,
    q: &Query,
) -> Result<http::Response<Body>, ApiError> {
    let opts = options(q, name)?;
    let pod = {
        let inner = state.storage.lock();
        let info = inner.registry.get("", "v1", "pods");
        info.and_then(|info| inner.get(&info.storage_key(), &object_key(namespace, name)))
            .map(|o| o.value())
            .ok_or_else(|| ApiError::not_found("", "pods", name))?
    };
    let container = crate::connect::resolve_container(&pod, name, opts.container.as_deref())?;
    let container = container["name"].as_str().unwrap_or_default().to_owned();
    if pod["spec"]["nodeName"]
        .as_str()
        .unwrap_or_default()
        .is_empty()
    {
        return Ok(crate::response(204, "text/plain", full("")));
    }
    let text = match state.connect.pod_log(namespace, name, &container) {
        Some(text) if !opts.previous => text,
        _ => {
            kubelet_status_check(&pod, name, &container, opts.previous)?;
            String::new()
        }
    };
    let text = cut(&text, opts.tail_lines, opts.limit_bytes);
    Ok(crate::response(200, "text/plain", full(text)))
}

/// The kubelet's `validateContainerLogStatus`: `Ok` when the container has (had, for
/// `previous`) a container to read logs from, its refusal otherwise.
fn kubelet_status_check(
    pod: &Value,
    pod_name: &str,
    container: &str,
    previous: bool,
) -> Result<(), ApiError> {
    let status = [
        "containerStatuses",
        "initContainerStatuses",
        "ephemeralContainerStatuses",
    ]
    .iter()
    .filter_map(|k| pod["status"][*k].as_array())
    .flatten()
    .find(|s| s["name"].as_str() == Some(container));
    let refuse = |why: &str| {
        Err(ApiError::bad_request(format!(
            "container {container:?} in pod {pod_name:?} {why}"
        )))
    };
    let Some(status) = status else {
        return refuse("is waiting to start: ContainerCreating");
    };
    let has_id = |v: &Value| !v["containerID"].as_str().unwrap_or_default().is_empty();
    let last_terminated = &status["lastState"]["terminated"];
    if previous {
        if last_terminated.is_object() && has_id(last_terminated) {
            return Ok(());
        }
        return Err(ApiError::bad_request(format!(
            "previous terminated container {container:?} in pod {pod_name:?} not found"
        )));
    }
    let state = &status["state"];
    if state["running"].is_object() {
        return Ok(());
    }
    if state["terminated"].is_object() {
        if has_id(&state["terminated"]) || (last_terminated.is_object() && has_id(last_terminated))
        {
            return Ok(());
        }
        return refuse("is terminated");
    }
    if last_terminated.is_object() {
        if has_id(last_terminated) {
            return Ok(());
        }
        return refuse("is terminated");
    }
    if state["waiting"].is_object() {
        return match state["waiting"]["reason"].as_str().unwrap_or_default() {
            "ErrImagePull" => refuse("is waiting to start: image can't be pulled"),
            "ImagePullBackOff" => refuse("is waiting to start: trying and failing to pull image"),
            reason => refuse(&format!("is waiting to start: {reason}")),
        };
    }
    refuse("is waiting to start - no logs yet")
}

/// The last `tail_lines` lines of `text`, then at most `limit_bytes` bytes of them.
fn cut(text: &str, tail_lines: Option<i64>, limit_bytes: Option<i64>) -> Vec<u8> {
    let mut start = 0;
    if let Some(n) = tail_lines {
        let n = usize::try_from(n).unwrap_or(0);
        let lines: Vec<usize> = text
            .match_indices('\n')
            .map(|(i, _)| i + 1)
            .filter(|i| *i < text.len())
            .collect();
        let count = lines.len() + usize::from(!text.is_empty());
        start = if n == 0 {
            text.len()
        } else if n >= count {
            0
        } else {
            lines[count - n - 1]
        };
    }
    let mut out = text.as_bytes()[start..].to_vec();
    if let Some(limit) = limit_bytes {
        out.truncate(usize::try_from(limit).unwrap_or(usize::MAX));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(s: &str) -> Query {
        Query::parse(Some(s))
    }

    /// ValidatePodLogOptions' checks, answered as 422 Invalid of kind PodLogOptions; a
    /// malformed integer is the query conversion's 400.
    #[test]
    fn options_are_validated_as_kube_apiserver_does() {
        let e = options(&q("tailLines=-1"), "web").unwrap_err();
        assert_eq!(e.code, 422);
        assert_eq!(
            e.message,
            "PodLogOptions \"web\" is invalid: tailLines: Invalid value: -1: must be greater than or equal to 0"
        );
        assert_eq!(options(&q("limitBytes=0"), "web").unwrap_err().code, 422);
        assert_eq!(options(&q("sinceSeconds=0"), "web").unwrap_err().code, 422);
        let e = options(&q("sinceSeconds=5&sinceTime=2024-01-01T00:00:00Z"), "w").unwrap_err();
        assert!(
            e.message
                .ends_with("at most one of `sinceTime` or `sinceSeconds` may be specified")
        );
        assert_eq!(options(&q("tailLines=x"), "web").unwrap_err().code, 400);
        assert_eq!(
            options(&q("sinceTime=yesterday"), "web").unwrap_err().code,
            400
        );
        let o = options(&q("container=app&previous=True&tailLines=2"), "web").unwrap();
        assert_eq!(o.container.as_deref(), Some("app"));
        assert!(o.previous);
    }

    #[test]
    fn tail_then_limit() {
        let t = "a\nb\nc\n";
        assert_eq!(cut(t, Some(2), None), b"b\nc\n");
        assert_eq!(cut(t, Some(9), None), t.as_bytes());
        assert_eq!(cut(t, Some(0), None), b"");
        assert_eq!(cut("a\nb", Some(1), None), b"b");
        assert_eq!(cut(t, Some(2), Some(3)), b"b\nc");
        assert_eq!(cut(t, None, None), t.as_bytes());
    }

    /// The kubelet's validateContainerLogStatus messages.
    #[test]
    fn the_kubelets_status_check() {
        let pod = |status: Value| json!({"status": {"containerStatuses": [status]}});
        let msg = |p: &Value, previous| {
            kubelet_status_check(p, "web", "app", previous)
                .unwrap_err()
                .message
        };
        assert_eq!(
            msg(&json!({}), false),
            "container \"app\" in pod \"web\" is waiting to start: ContainerCreating"
        );
        let waiting =
            pod(json!({"name": "app", "state": {"waiting": {"reason": "ImagePullBackOff"}}}));
        assert_eq!(
            msg(&waiting, false),
            "container \"app\" in pod \"web\" is waiting to start: trying and failing to pull image"
        );
        assert_eq!(
            msg(&waiting, true),
            "previous terminated container \"app\" in pod \"web\" not found"
        );
        let running = pod(json!({"name": "app", "state": {"running": {}}}));
        assert!(kubelet_status_check(&running, "web", "app", false).is_ok());
        let gone = pod(json!({"name": "app", "state": {"terminated": {"exitCode": 1}}}));
        assert_eq!(
            msg(&gone, false),
            "container \"app\" in pod \"web\" is terminated"
        );
    }
}
