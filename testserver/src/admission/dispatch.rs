//! Calling the selected webhooks: the mutating ones in order with reinvocation
//! (`mutating/dispatcher.go`), the validating ones at once (`validating/dispatcher.go`).

use std::collections::HashSet;
use std::sync::Arc;

use futures_util::StreamExt as _;
use futures_util::stream::FuturesUnordered;
use serde_json::{Value, json};

use super::client::{self, CallError};
use super::config::{self, Webhook};
use super::matching::{self, ConditionError};
use super::review::{self, Invocation};
use super::{Context, Gate, Operation, Request, conversion};
use crate::status::ApiError;

/// What the store says about a request, read once under its lock.
struct Snapshot {
    hooks: Arc<Vec<Webhook>>,
    /// The labels of the request's namespace (`None` when it does not exist).
    namespace_labels: Option<Value>,
    /// The other served versions of the resource: version and kind.
    equivalents: Vec<(String, String)>,
    /// The resource's CRD, for converting to an equivalent version.
    crd: Option<Value>,
}

fn snapshot(cx: &Context, req: &Request, mutating: bool) -> Snapshot {
    let inner = cx.storage.lock();
    let info = &req.info;
    let namespace_labels = if req.namespace.is_empty() {
        None
    } else {
        inner
            .get("/namespaces", &req.namespace)
            .map(|ns| ns.value()["metadata"]["labels"].clone())
    };
    let equivalents = inner
        .registry
        .groups()
        .into_iter()
        .filter(|(g, _)| *g == info.group)
        .flat_map(|(_, versions)| versions)
        .filter(|v| *v != info.version)
        .filter_map(|v| {
            inner
                .registry
                .get(&info.group, &v, &info.plural)
                .map(|i| (v, i.kind.clone()))
        })
        .collect();
    Snapshot {
        hooks: config::webhooks(&inner, mutating),
        namespace_labels,
        equivalents,
        crd: inner.crd_of(info).map(|c| c.value()),
    }
}

/// Whether a `metav1.LabelSelector` has no requirement (it selects everything).
fn empty_selector(selector: &Value) -> bool {
    selector.as_object().is_none_or(|m| {
        m.values()
            .all(|v| v.is_null() || v == &json!({}) || v == &json!([]))
    })
}

/// Whether `hook` is called for this request, and in which version; an error is the
/// request's answer.
fn select(
    snap: &Snapshot,
    req: &Request,
    hook: &Webhook,
    op: Operation,
    object: Option<&Value>,
    old: Option<&Value>,
) -> Result<Option<Invocation>, ApiError> {
    let info = &req.info;
    let ns = if info.is_namespace() {
        ""
    } else {
        req.namespace.as_str()
    };
    let exact = hook.rules.iter().any(|r| {
        matching::rule_matches(
            r,
            op,
            &info.group,
            &info.version,
            info,
            &req.subresource,
            ns,
        )
    });
    let invocation = if exact {
        Some(Invocation {
            group: info.group.clone(),
            version: info.version.clone(),
            kind: info.kind.clone(),
        })
    } else if !hook.exact {
        hook.rules.iter().find_map(|r| {
            snap.equivalents.iter().find_map(|(version, kind)| {
                matching::rule_matches(r, op, &info.group, version, info, &req.subresource, ns)
                    .then(|| Invocation {
                        group: info.group.clone(),
                        version: version.clone(),
                        kind: kind.clone(),
                    })
            })
        })
    } else {
        None
    };
    if invocation.is_none() {
        return Ok(None);
    }
    // The namespace selector: a namespaced request is matched on its namespace's labels,
    // a Namespace on its own, any other cluster-scoped request always.
    let ns_labels = if empty_selector(&hook.namespace_selector) {
        None
    } else if info.is_namespace() && req.subresource.is_empty() {
        Some(match op {
            Operation::Delete => old.map_or(Value::Null, |o| o["metadata"]["labels"].clone()),
            _ => object
                .or(old)
                .map_or(Value::Null, |o| o["metadata"]["labels"].clone()),
        })
    } else if req.namespace.is_empty() {
        None
    } else {
        Some(
            snap.namespace_labels
                .clone()
                .ok_or_else(|| ApiError::not_found("", "namespaces", &req.namespace))?,
        )
    };
    if let Some(labels) = ns_labels
        && !matching::selects(&hook.namespace_selector, &labels).map_err(ApiError::internal)?
    {
        return Ok(None);
    }
    let obj_selected = |o: Option<&Value>| -> Result<bool, ApiError> {
        match o {
            Some(o) => matching::selects(&hook.object_selector, &o["metadata"]["labels"])
                .map_err(ApiError::internal),
            None => Ok(false),
        }
    };
    if !empty_selector(&hook.object_selector) && !obj_selected(object)? && !obj_selected(old)? {
        return Ok(None);
    }
    Ok(invocation)
}

/// The review request for `hook` with its conditions checked: `None` when a condition is
/// false (or failed under `failurePolicy: Ignore`).
fn conditions(
    req: &Request,
    hook: &Webhook,
    object: Option<&Value>,
    old: Option<&Value>,
    review_request: &Value,
) -> Result<bool, ApiError> {
    let name = if req.name.is_empty() {
        object
            .and_then(|o| o["metadata"]["name"].as_str())
            .unwrap_or_default()
    } else {
        req.name.as_str()
    };
    match matching::conditions_match(hook, object, old, &matching::cel_request(review_request)) {
        Ok(m) => Ok(m),
        Err(ConditionError::Unsupported(why)) => {
            tracing::warn!(webhook = %hook.name, "{why}");
            Err(review::conditions_failed(req, name, &why))
        }
        Err(ConditionError::Evaluation(_)) if hook.ignore_failures => Ok(false),
        Err(ConditionError::Evaluation(why)) => {
            tracing::warn!(webhook = %hook.name, "failed evaluating match conditions, failing closed: {why}");
            Err(review::conditions_failed(req, name, &why))
        }
    }
}

/// A call's outcome before the failure policy.
enum Called {
    Answer(review::Answer),
    /// A failure the failure policy decides about.
    Failed(String),
}

/// One call of `hook` with `review_request`.
async fn call(cx: &Context, hook: &Webhook, review_request: &Value) -> Called {
    let Some(version) = review::review_version(hook) else {
        return Called::Failed(format!(
            "webhook does not accept known AdmissionReview versions: {:?}",
            hook.review_versions
        ));
    };
    let endpoint = match client::endpoint(
        &cx.services,
        hook.url.as_deref(),
        hook.service.as_ref(),
        hook.ca_bundle.as_deref(),
        Some(hook.timeout),
    ) {
        Ok(e) => e,
        Err(CallError(e)) => return Called::Failed(format!("could not get REST client: {e}")),
    };
    let uid = super::new_uid();
    let body = review::review(version, &uid, review_request).to_string();
    match client::post(&endpoint, body.into_bytes(), hook.timeout).await {
        Err(CallError(e)) => Called::Failed(format!("failed to call webhook: {e}")),
        Ok(answer) => match review::verify(version, &uid, hook.mutating, &answer) {
            Ok(a) => Called::Answer(a),
            Err(e) => Called::Failed(format!("received invalid webhook response: {e}")),
        },
    }
}

/// The dry-run check of `callAttrMutatingHook` and `callHook`.
fn check_dry_run(req: &Request, hook: &Webhook) -> Result<(), ApiError> {
    if req.dry_run && !matches!(hook.side_effects.as_str(), "None" | "NoneOnDryRun") {
        return Err(review::dry_run_unsupported(&hook.name));
    }
    Ok(())
}

/// Converts `object` into `to` (`group/version`) for a webhook of an equivalent version.
async fn to_version(
    cx: &Context,
    snap: &Snapshot,
    object: Option<&Value>,
    to: &str,
) -> Result<Option<Value>, ApiError> {
    let Some(o) = object else {
        return Ok(None);
    };
    if o["apiVersion"].as_str() == Some(to) {
        return Ok(Some(o.clone()));
    }
    let converted = conversion::convert(cx, snap.crd.as_ref(), vec![o.clone()], to).await?;
    Ok(converted.into_iter().next())
}

fn api_version(group: &str, version: &str) -> String {
    if group.is_empty() {
        version.to_owned()
    } else {
        format!("{group}/{version}")
    }
}

/// The mutating webhooks over `object`: the object they leave.
pub(super) async fn mutate(
    cx: &Context,
    gate: &mut Gate,
    op: Operation,
    object: &Value,
    old: Option<&Value>,
) -> Result<Value, ApiError> {
    let snap = snapshot(cx, &gate.request, true);
    let mut object = object.clone();
    let request_version = gate.request.info.api_version();
    // `webhookReinvokeContext`: the IfNeeded webhooks called so far, and those to call again.
    let mut invoked_reinvocable: HashSet<(String, usize)> = HashSet::new();
    let mut reinvoke: HashSet<(String, usize)> = HashSet::new();
    let mut changed_any = false;
    for round in 0..2 {
        if round == 1 && (!changed_any || reinvoke.is_empty()) {
            break;
        }
        for hook in snap.hooks.iter() {
            let id = (hook.configuration.clone(), hook.index);
            let Some(invocation) = select(&snap, &gate.request, hook, op, Some(&object), old)?
            else {
                continue;
            };
            if round == 1 && !reinvoke.contains(&id) {
                continue;
            }
            let to = api_version(&invocation.group, &invocation.version);
            let versioned = to_version(cx, &snap, Some(&object), &to).await?;
            let versioned_old = to_version(cx, &snap, old, &to).await?;
            let review_request = review::request(
                &gate.request,
                &invocation,
                op,
                versioned.as_ref(),
                versioned_old.as_ref(),
            );
            if !conditions(
                &gate.request,
                hook,
                versioned.as_ref(),
                versioned_old.as_ref(),
                &review_request,
            )? {
                continue;
            }
            check_dry_run(&gate.request, hook)?;
            let answer = match call(cx, hook, &review_request).await {
                Called::Answer(a) => a,
                Called::Failed(why) if hook.ignore_failures => {
                    tracing::warn!(webhook = %hook.name, "failed calling webhook, failing open: {why}");
                    if hook.reinvoke_if_needed {
                        invoked_reinvocable.insert(id);
                    }
                    continue;
                }
                Called::Failed(why) => {
                    tracing::warn!(webhook = %hook.name, "failed calling webhook, failing closed: {why}");
                    return Err(review::calling_failed(&hook.name, &why));
                }
            };
            gate.warnings.extend(answer.warnings.iter().cloned());
            if !answer.allowed {
                return Err(review::denied(&hook.name, &answer.result));
            }
            let mut changed = false;
            if let (Some(patch), Some(versioned)) = (&answer.patch, versioned) {
                let patched = (gate.patcher)(versioned.clone(), patch).map_err(|e| {
                    ApiError::internal(format!(
                        "Internal error occurred: admission webhook {:?} returned a patch that does not apply: {e}",
                        hook.name
                    ))
                })?;
                if patched != versioned {
                    changed = true;
                    object = if to == request_version {
                        patched
                    } else {
                        to_version(cx, &snap, Some(&patched), &request_version)
                            .await?
                            .unwrap_or(patched)
                    };
                }
            } else if answer.patch.is_some() {
                return Err(ApiError::internal(format!(
                    "Internal error occurred: admission webhook {:?} attempted to modify the object, which is not supported for this operation",
                    hook.name
                )));
            }
            if changed {
                changed_any = true;
                reinvoke.extend(invoked_reinvocable.drain());
            }
            if hook.reinvoke_if_needed && round == 0 {
                invoked_reinvocable.insert(id);
            }
        }
    }
    Ok(object)
}

/// The validating webhooks over `object`, all at once; the first refusal to come back is
/// the answer.
pub(super) async fn validate(
    cx: &Context,
    gate: &mut Gate,
    op: Operation,
    object: Option<&Value>,
    old: Option<&Value>,
) -> Result<(), ApiError> {
    // ValidatingAdmissionPolicies come first in kube-apiserver's validating chain.
    let own = Invocation {
        group: gate.request.info.group.clone(),
        version: gate.request.info.version.clone(),
        kind: gate.request.info.kind.clone(),
    };
    let own_request = review::request(&gate.request, &own, op, object, old);
    super::policy::validate(cx, gate, op, object, old, &own_request)?;
    let snap = snapshot(cx, &gate.request, false);
    let mut calls = Vec::new();
    for hook in snap.hooks.iter() {
        let Some(invocation) = select(&snap, &gate.request, hook, op, object, old)? else {
            continue;
        };
        let to = api_version(&invocation.group, &invocation.version);
        let versioned = to_version(cx, &snap, object, &to).await?;
        let versioned_old = to_version(cx, &snap, old, &to).await?;
        let review_request = review::request(
            &gate.request,
            &invocation,
            op,
            versioned.as_ref(),
            versioned_old.as_ref(),
        );
        if !conditions(
            &gate.request,
            hook,
            versioned.as_ref(),
            versioned_old.as_ref(),
            &review_request,
        )? {
            continue;
        }
        check_dry_run(&gate.request, hook)?;
        calls.push((hook, review_request));
    }
    let mut running: FuturesUnordered<_> = calls
        .iter()
        .map(|(hook, review_request)| async move { (*hook, call(cx, hook, review_request).await) })
        .collect();
    let mut first_error = None;
    let mut warnings = Vec::new();
    while let Some((hook, called)) = running.next().await {
        let error = match called {
            Called::Answer(a) => {
                warnings.extend(a.warnings.iter().cloned());
                (!a.allowed).then(|| review::denied(&hook.name, &a.result))
            }
            Called::Failed(why) if hook.ignore_failures => {
                tracing::warn!(webhook = %hook.name, "failed calling webhook, failing open: {why}");
                None
            }
            Called::Failed(why) => {
                tracing::warn!(webhook = %hook.name, "failed calling webhook, failing closed: {why}");
                Some(review::calling_failed(&hook.name, &why))
            }
        };
        if first_error.is_none() {
            first_error = error;
        }
    }
    drop(running);
    gate.warnings.extend(warnings);
    match first_error {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// A DELETE: mutating webhooks (which may not patch) then validating ones, with `oldObject`
/// the stored object.
pub(super) async fn delete(cx: &Context, gate: &mut Gate, old: &Value) -> Result<(), ApiError> {
    mutate_delete(cx, gate, old).await?;
    validate(cx, gate, Operation::Delete, None, Some(old)).await
}

async fn mutate_delete(cx: &Context, gate: &mut Gate, old: &Value) -> Result<(), ApiError> {
    let snap = snapshot(cx, &gate.request, true);
    for hook in snap.hooks.iter() {
        let Some(invocation) = select(
            &snap,
            &gate.request,
            hook,
            Operation::Delete,
            None,
            Some(old),
        )?
        else {
            continue;
        };
        let to = api_version(&invocation.group, &invocation.version);
        let versioned_old = to_version(cx, &snap, Some(old), &to).await?;
        let review_request = review::request(
            &gate.request,
            &invocation,
            Operation::Delete,
            None,
            versioned_old.as_ref(),
        );
        if !conditions(
            &gate.request,
            hook,
            None,
            versioned_old.as_ref(),
            &review_request,
        )? {
            continue;
        }
        check_dry_run(&gate.request, hook)?;
        match call(cx, hook, &review_request).await {
            Called::Answer(a) => {
                gate.warnings.extend(a.warnings.iter().cloned());
                if !a.allowed {
                    return Err(review::denied(&hook.name, &a.result));
                }
                if a.patch.as_ref().is_some_and(|p| {
                    serde_json::from_slice::<Value>(p)
                        .ok()
                        .and_then(|v| v.as_array().map(|ops| !ops.is_empty()))
                        .unwrap_or(true)
                }) {
                    return Err(ApiError::internal(format!(
                        "Internal error occurred: admission webhook {:?} attempted to modify the object, which is not supported for this operation",
                        hook.name
                    )));
                }
            }
            Called::Failed(why) if hook.ignore_failures => {
                tracing::warn!(webhook = %hook.name, "failed calling webhook, failing open: {why}");
            }
            Called::Failed(why) => {
                tracing::warn!(webhook = %hook.name, "failed calling webhook, failing closed: {why}");
                return Err(review::calling_failed(&hook.name, &why));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::admission::config::parse_configuration;

    #[test]
    fn dry_runs_refuse_webhooks_with_side_effects() {
        let hook = |effects: &str| {
            parse_configuration(
                &json!({"metadata": {"name": "c"}, "webhooks": [{"name": "a.b.c", "sideEffects": effects}]}),
                false,
            )
            .remove(0)
        };
        let info = crate::registry::Registry::with_builtins()
            .get("", "v1", "configmaps")
            .expect("served");
        let mut req = Request {
            info,
            subresource: String::new(),
            namespace: "default".into(),
            name: "x".into(),
            user: Default::default(),
            dry_run: true,
            options: json!({}),
            operation: None,
        };
        assert!(check_dry_run(&req, &hook("None")).is_ok());
        assert!(check_dry_run(&req, &hook("NoneOnDryRun")).is_ok());
        for effects in ["Some", "Unknown", ""] {
            let e = check_dry_run(&req, &hook(effects)).unwrap_err();
            assert_eq!(
                (e.code, e.message.as_str()),
                (400, "admission webhook \"a.b.c\" does not support dry run")
            );
        }
        req.dry_run = false;
        assert!(check_dry_run(&req, &hook("Some")).is_ok());
    }
}
