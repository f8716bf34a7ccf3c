//! Request routing: paths, methods and the injected faults, onto the handlers.
//!
//! Paths follow the API server's layout: `/api/v1/...` for the core group,
//! `/apis/{group}/{version}/...` for named groups, then `[namespaces/{ns}/]{plural}[/{name}[/{sub}]]`
//! (`/api/v1/namespaces/{name}[/status]` being the namespace object itself). `/openapi/v2`
//! and `/openapi/v3` serve the documents of [`super::openapi`]. Every answer about a
//! deprecated resource version, errors included but not 401 and 403, carries its
//! `Warning: 299` header ([`ResourceInfo::deprecation_warning`]).

use std::convert::Infallible;
use std::sync::Arc;

use bytes::Bytes;
use http::{Method, Request, Response};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use serde_json::{Value, json};

use crate::admission::{Gate, Operation, Request as AdmissionRequest, UserInfo};
use crate::handlers::negotiation::body::Body;
use crate::handlers::negotiation::render::{
    Form, IncludeObject, object_bytes, render_object, to_bytes,
};
use crate::handlers::params::{ListOptions, Query};
use crate::handlers::patch::PatchType;
use crate::handlers::validate::Check;
use crate::registry::ResourceInfo;
use crate::status::ApiError;
use crate::{
    State, discovery, handlers::delete, handlers::list, handlers::scale, handlers::watch,
    handlers::write, json_response, response,
};

/// Largest request body accepted (the real server's default is 3 MiB).
const MAX_BODY: usize = 3 * 1024 * 1024;

/// Handles one request; never fails at the HTTP level.
pub(crate) async fn handle(
    state: Arc<State>,
    req: Request<Incoming>,
) -> Result<Response<Body>, Infallible> {
    state.requests.record(req.method(), req.uri());
    let deprecation = deprecation_warning(&state, req.uri().path());
    let mut response = match route(&state, req).await {
        Ok(r) => r,
        Err(e) => error_response(&e),
    };
    // kube-apiserver's handler of a deprecated resource adds its warning before it runs, so
    // every answer of the handler carries it; the authentication and authorization filters
    // in front of the handler answer 401 and 403 without it.
    if let Some(text) = deprecation
        && !matches!(response.status().as_u16(), 401 | 403)
        && let Ok(v) = http::HeaderValue::from_str(&format!(
            "299 - {}",
            crate::handlers::validate::go_quote(&text)
        ))
    {
        response.headers_mut().append(http::header::WARNING, v);
    }
    Ok(response)
}

/// The deprecation warning of the resource a path names
/// ([`ResourceInfo::deprecation_warning`]), or `None`.
fn deprecation_warning(state: &State, path: &str) -> Option<String> {
    let segs: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let (group, version, rest) = match segs.as_slice() {
        ["api", "v1", rest @ ..] => ("", "v1", rest),
        ["apis", g, v, rest @ ..] => (*g, *v, rest),
        _ => return None,
    };
    resolve(state, group, version, rest)?
        .info
        .deprecation_warning
        .clone()
}

/// A `Status` answer for an error.
pub(crate) fn error_response(e: &ApiError) -> Response<Body> {
    let mut r = json_response(e.code, e.to_bytes());
    if let Some(secs) = e.retry_after
        && let Ok(v) = http::HeaderValue::from_str(&secs.to_string())
    {
        r.headers_mut().insert(http::header::RETRY_AFTER, v);
    }
    r
}

/// Where a resource request points.
#[derive(Clone)]
struct Target {
    info: Arc<ResourceInfo>,
    namespace: Option<String>,
    name: Option<String>,
    sub: Option<String>,
}

async fn route(state: &Arc<State>, req: Request<Incoming>) -> Result<Response<Body>, ApiError> {
    let path = req.uri().path().trim_end_matches('/').to_owned();
    let accept = req
        .headers()
        .get(http::header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let segs: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let method = req.method().clone();
    // Every path, discovery included, needs an authenticated user when RBAC is on; the
    // bootstrap roles let every such user read the non-resource paths.
    let user = state.auth.authenticate(req.headers())?;
    let reg = || state.storage.lock().registry.clone();
    let aggregated = discovery::wants_aggregated(accept.as_deref());
    let discovery_doc = match segs.as_slice() {
        ["version"] => Some(discovery::version()),
        ["healthz" | "readyz" | "livez"] => {
            return Ok(response(
                200,
                "text/plain",
                crate::handlers::negotiation::body::full("ok"),
            ));
        }
        ["api"] if aggregated => {
            let mut r = json_response(200, to_bytes(&discovery::aggregated(&reg(), true)));
            set_content_type(&mut r, discovery::AGGREGATED_V2);
            return Ok(r);
        }
        ["apis"] if aggregated => {
            let mut r = json_response(200, to_bytes(&discovery::aggregated(&reg(), false)));
            set_content_type(&mut r, discovery::AGGREGATED_V2);
            return Ok(r);
        }
        ["openapi", "v3"] => Some(crate::discovery::openapi::root(&state.storage.lock())),
        ["openapi", "v3", rest @ ..] if method == Method::GET => {
            let doc = crate::discovery::openapi::group_version_doc(&state.storage.lock(), rest)
                .ok_or_else(|| ApiError::no_route(&path))?;
            return Ok(match doc {
                crate::discovery::openapi::Document::Builtin(bytes) => {
                    json_response(200, Bytes::from_static(bytes))
                }
                crate::discovery::openapi::Document::Custom(doc) => {
                    json_response(200, to_bytes(&doc))
                }
            });
        }
        ["openapi", "v2"] if method == Method::GET && openapi_v2_json(accept.as_deref()) => {
            return Ok(json_response(
                200,
                Bytes::from_static(crate::registry::spec::v2_bytes()),
            ));
        }
        ["api"] => Some(discovery::api_versions(&state.addr.to_string())),
        ["api", "v1"] => Some(discovery::resource_list(&reg(), "", "v1")),
        ["apis"] => Some(discovery::group_list(&reg())),
        ["apis", g] => Some(discovery::group(&reg(), g).ok_or_else(|| ApiError::no_route(&path))?),
        ["apis", g, v] => {
            let reg = reg();
            if !reg.has_group_version(g, v) {
                return Err(ApiError::no_route(&path));
            }
            Some(discovery::resource_list(&reg, g, v))
        }
        _ => None,
    };
    if let Some(doc) = discovery_doc {
        if method != Method::GET {
            return Err(ApiError::method_not_allowed(method.as_str(), &path));
        }
        return Ok(json_response(200, to_bytes(&doc)));
    }
    if let Some(target) = crate::connect::target(req.uri().path()) {
        if state.auth.enabled() {
            let verb = target.verb(&method);
            let attrs = target.attributes(verb);
            crate::authorization::authorize(&state.storage.lock(), &user, &attrs)?;
        }
        return crate::connect::handle(state, req, target).await;
    }
    let (group, version, rest) = match segs.as_slice() {
        ["api", "v1", rest @ ..] => ("", "v1", rest),
        ["apis", g, v, rest @ ..] => (*g, *v, rest),
        _ => return Err(ApiError::no_route(&path)),
    };
    let target = resolve(state, group, version, rest).ok_or_else(|| ApiError::no_route(&path))?;

    // Faults apply to resource requests only.
    let latency = state.faults.latency();
    if !latency.is_zero() {
        tokio::time::sleep(latency).await;
    }
    state.faults.wait_released().await;
    if let Some(e) = state.faults.next_error() {
        return Err(e);
    }

    let form = Form::from_accept(accept.as_deref(), state.config.managed_fields_opt_out);
    let query = Query::parse(req.uri().query());
    let content_type = req
        .headers()
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("application/json")
        .to_owned();
    let user_agent = req
        .headers()
        .get(http::header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let writer = crate::handlers::fieldmanager::Writer::from_request(
        &query,
        user_agent.as_deref(),
        target.sub.as_deref(),
    );
    let mut body = read_body(req).await?;
    // Protobuf bodies of built-in kinds (kubectl create, client-go typed clients) become the
    // JSON the client would have sent; a PATCH keeps its type and is refused by PatchType.
    if method != Method::PATCH
        && !body.is_empty()
        && crate::handlers::negotiation::protobuf::is_protobuf(&content_type)
    {
        body = crate::handlers::negotiation::protobuf::to_json_body(&body)?;
    }
    if method != Method::PATCH
        && !body.is_empty()
        && crate::handlers::negotiation::body::is_yaml(&content_type)
    {
        body = crate::handlers::negotiation::body::yaml_to_json(&body)?;
    }
    if method == Method::GET && target.name.is_none() {
        wait_for_rv(state, &query).await;
    }
    // A read of a custom resource in a version its conversion webhook serves asks the
    // webhook for the objects read, as kube-apiserver converts what it reads from etcd (a
    // watch sends the forms the webhook gave when each object was written).
    if method == Method::GET && query.flag("watch") != Some(true) && target.sub.is_none() {
        crate::admission::conversion::refresh(
            &state.admission(),
            &target.info,
            target.namespace.as_deref(),
            target.name.as_deref(),
        )
        .await?;
    }
    let Some(mut gate) =
        admission_gate(state, &user, &method, &target, &query, &content_type, &body)?
    else {
        return crate::handlers::fieldmanager::with_writer(writer, || {
            dispatch(
                state,
                &user,
                &method,
                &path,
                target,
                form,
                &query,
                &content_type,
                &body,
                &mut None,
            )
        });
    };
    let cx = state.admission();
    if gate.request.operation == Some(Operation::Delete) {
        // Admitted before the delete, with the stored object; a missing one is the
        // delete's 404.
        let stored = {
            let inner = state.storage.lock();
            let key = crate::storage::object_key(
                target.namespace.as_deref().unwrap_or_default(),
                target.name.as_deref().unwrap_or_default(),
            );
            inner.get(&target.info.storage_key(), &key).map(|o| {
                let mut v = o.value_for(&target.info);
                v["apiVersion"] = json!(target.info.api_version());
                v
            })
        };
        if let Some(old) = stored {
            gate.admit_delete(&cx, &old).await?;
        }
        let answer = crate::handlers::fieldmanager::with_writer(writer, || {
            dispatch(
                state,
                &user,
                &method,
                &path,
                target,
                form,
                &query,
                &content_type,
                &body,
                &mut None,
            )
        });
        return answer.map(|r| webhook_warnings(r, &gate.warnings));
    }
    // The write runs until the gate has every answer it waits for (module `admission`).
    let mut slot = Some(gate);
    loop {
        let answer = crate::handlers::fieldmanager::with_writer(writer.clone(), || {
            dispatch(
                state,
                &user,
                &method,
                &path,
                target.clone(),
                form,
                &query,
                &content_type,
                &body,
                &mut slot,
            )
        });
        let Some(gate) = slot.as_mut() else {
            return answer;
        };
        if gate.is_pending() {
            gate.settle(&cx).await?;
            continue;
        }
        return answer.map(|r| webhook_warnings(r, &gate.warnings));
    }
}

/// The webhooks' warnings as `Warning: 299` headers.
fn webhook_warnings(response: Response<Body>, warnings: &[String]) -> Response<Body> {
    let check = Check {
        warnings: warnings.to_vec(),
        ..Check::default()
    };
    check.with_warnings(response)
}

/// The admission of a write that stored webhooks may select, or `None` (every other
/// request, and every request while no webhook could select it).
fn admission_gate(
    state: &State,
    user: &crate::authorization::User,
    method: &Method,
    t: &Target,
    q: &Query,
    content_type: &str,
    body: &Bytes,
) -> Result<Option<Gate>, ApiError> {
    let sub = t.sub.as_deref().unwrap_or_default();
    if !matches!(sub, "" | "status") || crate::handlers::review::is_review(&t.info) {
        return Ok(None);
    }
    if t.info.group.is_empty() && t.info.plural == "bindings" {
        return Ok(None);
    }
    let apply = *method == Method::PATCH && crate::handlers::fieldmanager::is_apply(content_type);
    use Operation::{Create, Delete, Update};
    let (operations, operation, options_kind): (&[Operation], _, _) =
        match (method, t.name.is_some()) {
            (&Method::POST, false) if sub.is_empty() => (&[Create], Some(Create), "CreateOptions"),
            (&Method::PUT, true) => (&[Update], Some(Update), "UpdateOptions"),
            (&Method::PATCH, true) if apply => (&[Create, Update], None, "PatchOptions"),
            (&Method::PATCH, true) => (&[Update], Some(Update), "PatchOptions"),
            (&Method::DELETE, true) if sub.is_empty() => (&[Delete], Some(Delete), "DeleteOptions"),
            _ => return Ok(None),
        };
    {
        let inner = state.storage.lock();
        let converts = operation != Some(Delete) && crate::admission::converts(&inner, &t.info);
        if !converts && !crate::admission::may_apply(&inner, &t.info, sub, operations) {
            return Ok(None);
        }
    }
    let (dry_run, mut options) = if operation == Some(Delete) {
        let parsed = delete::DeleteOptions::parse(body, q)?;
        let sent = serde_json::from_slice::<Value>(body)
            .ok()
            .filter(Value::is_object)
            .unwrap_or_else(|| json!({}));
        (parsed.dry_run, sent)
    } else {
        (q.dry_run()?, json!({}))
    };
    options["kind"] = json!(options_kind);
    options["apiVersion"] = json!("meta.k8s.io/v1");
    if dry_run {
        options["dryRun"] = json!(["All"]);
    }
    if operation != Some(Delete) {
        for key in ["fieldManager", "fieldValidation"] {
            if let Some(v) = q.get(key).filter(|v| !v.is_empty()) {
                options[key] = json!(v);
            }
        }
    }
    let request = AdmissionRequest {
        info: t.info.clone(),
        subresource: sub.to_owned(),
        namespace: t.namespace.clone().unwrap_or_default(),
        name: t.name.clone().unwrap_or_default(),
        user: UserInfo {
            username: user.name.clone(),
            groups: user.groups.clone(),
        },
        dry_run,
        options,
        operation,
    };
    Ok(Some(Gate::new(
        request,
        json_patch,
        write::new_uid(),
        (0..9).map(|_| write::random_suffix()).collect(),
        write::now_rfc3339(),
    )))
}

/// A webhook's JSON Patch, applied as a PATCH request's is.
fn json_patch(target: Value, patch: &[u8]) -> Result<Value, String> {
    PatchType::Json
        .apply(target, patch, None)
        .map_err(|e| e.message)
}

#[allow(clippy::too_many_arguments)]
fn dispatch(
    state: &Arc<State>,
    user: &crate::authorization::User,
    method: &Method,
    path: &str,
    t: Target,
    form: Form,
    q: &Query,
    content_type: &str,
    body: &Bytes,
    admission: &mut Option<Gate>,
) -> Result<Response<Body>, ApiError> {
    let info = &t.info;
    let ns = t.namespace.as_deref();
    let include = IncludeObject::parse(q.get("includeObject"));
    let sub = t.sub.as_deref();
    if state.auth.enabled() {
        let verb = match (method, t.name.is_some()) {
            (&Method::GET, false) if q.flag("watch") == Some(true) => "watch",
            (&Method::GET, false) => "list",
            (&Method::GET, true) => "get",
            (&Method::POST, _) => "create",
            (&Method::PUT, _) => "update",
            (&Method::PATCH, _) => "patch",
            (&Method::DELETE, true) => "delete",
            (&Method::DELETE, false) => "deletecollection",
            _ => "unknown",
        };
        let attrs = crate::authorization::Attributes {
            verb,
            group: &info.group,
            resource: &info.plural,
            subresource: sub,
            namespace: ns,
            name: t.name.as_deref(),
        };
        crate::authorization::authorize(&state.storage.lock(), user, &attrs)?;
    }
    let pods = info.group.is_empty() && info.plural == "pods";
    match (sub, ns, t.name.as_deref()) {
        (Some("log"), Some(ns), Some(name)) if pods => {
            if method != Method::GET {
                return Err(ApiError::method_not_allowed(method.as_str(), path));
            }
            return crate::connect::log::serve(state, ns, name, q);
        }
        (Some("eviction"), Some(ns), Some(name)) if pods => {
            if method != Method::POST {
                return Err(ApiError::method_not_allowed(method.as_str(), path));
            }
            return crate::handlers::eviction::evict(state, ns, name, q, body);
        }
        (Some("binding"), Some(ns), Some(name)) if pods => {
            if method != Method::POST {
                return Err(ApiError::method_not_allowed(method.as_str(), path));
            }
            return crate::handlers::binding::bind(state, ns, Some(name), q, body);
        }
        (Some("ephemeralcontainers"), Some(ns), Some(name)) if pods => {
            return crate::handlers::ephemeral::serve(
                state,
                info,
                method,
                path,
                ns,
                name,
                form.min_json(),
                q,
                content_type,
                body,
            );
        }
        (None, Some(ns), None)
            if info.group.is_empty() && info.plural == "bindings" && method == Method::POST =>
        {
            return crate::handlers::binding::bind(state, ns, None, q, body);
        }
        _ => {}
    }
    match sub {
        None => {}
        Some("status") if info.status_subresource => {}
        Some("scale") if info.scale.is_some() => {
            return scale_request(
                state,
                method,
                path,
                &t,
                q,
                content_type,
                body,
                form,
                include,
            );
        }
        Some("token") if info.group.is_empty() && info.plural == "serviceaccounts" => {
            let (Some(ns), Some(name)) = (ns, t.name.as_deref()) else {
                return Err(ApiError::no_route(path));
            };
            if method != Method::POST {
                return Err(ApiError::method_not_allowed(method.as_str(), path));
            }
            let answer = crate::handlers::token::request(
                &state.storage.lock(),
                &state.auth,
                info,
                ns,
                name,
                body,
            )?;
            return Ok(json_response(201, to_bytes(&answer)));
        }
        Some(_) => return Err(ApiError::no_route(path)),
    }
    let status_only = sub == Some("status");
    let ok = |code: u16, obj: &crate::storage::Obj| {
        json_response(code, render_object(info, obj, form.min_json(), include))
    };
    let not_allowed = || ApiError::method_not_allowed(method.as_str(), path);
    let verb = match (method, t.name.as_deref()) {
        (&Method::GET, None) if q.flag("watch") == Some(true) => "watch",
        (&Method::GET, None) => "list",
        (&Method::GET, Some(_)) => "get",
        (&Method::POST, None) => "create",
        (&Method::PUT, Some(_)) => "update",
        (&Method::PATCH, Some(_)) => "patch",
        (&Method::DELETE, Some(_)) if !status_only => "delete",
        (&Method::DELETE, None) => "deletecollection",
        _ => return Err(not_allowed()),
    };
    if sub.is_none() && !info.has_verb(verb) {
        return Err(not_allowed());
    }
    if verb == "create" && crate::handlers::review::is_review(info) {
        let value = parse_json(body)?;
        let review = crate::handlers::review::answer(
            &state.storage.lock(),
            &state.auth,
            user,
            info,
            ns,
            value,
        )?;
        return Ok(json_response(201, to_bytes(&review)));
    }
    let dry_run = if method == Method::DELETE {
        false // read from DeleteOptions below
    } else {
        q.dry_run()?
    };
    match verb {
        "watch" => watch::watch(state, info, ns, q, form),
        "list" => list::list(state, info, ns, q, form),
        "get" => list::get(
            state,
            info,
            ns.unwrap_or_default(),
            t.name.as_deref().unwrap_or_default(),
            form,
            q,
        ),
        "create" => {
            if info.namespaced && ns.is_none() {
                return Err(not_allowed());
            }
            let value = parse_json(body)?;
            let mut check = Check::from_request(q, body, "CreateOptions")?;
            check.admission = admission.take();
            let created = {
                let mut inner = state.storage.write(dry_run);
                write::create(&mut inner, info, ns, value, &mut check)
            };
            *admission = check.admission.take();
            let obj = created?;
            Ok(check.with_warnings(ok(201, &obj)))
        }
        "update" => {
            let value = parse_json(body)?;
            let mut check = Check::from_request(q, body, "UpdateOptions")?;
            check.admission = admission.take();
            let updated = {
                let mut inner = state.storage.write(dry_run);
                write::update(
                    &mut inner,
                    info,
                    ns.unwrap_or_default(),
                    t.name.as_deref().unwrap_or_default(),
                    status_only,
                    value,
                    &mut check,
                )
            };
            *admission = check.admission.take();
            let obj = updated?;
            Ok(check.with_warnings(ok(200, &obj)))
        }
        "patch" if crate::handlers::fieldmanager::is_apply(content_type) => {
            // The applied configuration may be YAML: its fields are checked once it is
            // merged, not scanned for duplicates as a JSON body is.
            let mut check = Check::from_request(q, b"{}", "PatchOptions")?;
            check.patch = true;
            check.admission = admission.take();
            let name = t.name.as_deref().unwrap_or_default();
            let applied = {
                let mut inner = state.storage.write(dry_run);
                crate::handlers::fieldmanager::apply(
                    &mut inner,
                    info,
                    ns,
                    name,
                    status_only,
                    q,
                    body,
                    &mut check,
                )
            };
            *admission = check.admission.take();
            let (obj, created) = applied?;
            Ok(check.with_warnings(ok(if created { 201 } else { 200 }, &obj)))
        }
        "patch" => {
            crate::handlers::fieldmanager::check_patch_options(q)?;
            let pt = PatchType::from_content_type(content_type)?;
            let mut check = Check::from_request(q, body, "PatchOptions")?;
            check.admission = admission.take();
            let patched = {
                let mut inner = state.storage.write(dry_run);
                write::patch(
                    &mut inner,
                    info,
                    ns.unwrap_or_default(),
                    t.name.as_deref().unwrap_or_default(),
                    status_only,
                    pt,
                    body,
                    &mut check,
                )
            };
            *admission = check.admission.take();
            let obj = patched?;
            Ok(check.with_warnings(ok(200, &obj)))
        }
        "delete" => {
            let options = delete::DeleteOptions::parse(body, q)?;
            let mut inner = state.storage.write(options.dry_run);
            let name = t.name.as_deref().unwrap_or_default();
            match delete::delete(&mut inner, info, ns.unwrap_or_default(), name, &options)? {
                delete::Deleted::Object(obj) => Ok(ok(200, &obj)),
                delete::Deleted::Gone(obj) => {
                    let status = json!({
                        "kind": "Status",
                        "apiVersion": "v1",
                        "metadata": {},
                        "status": "Success",
                        "details": crate::status::details(&info.group, &info.plural, &obj.name, Some(&obj.uid())),
                    });
                    let bytes = crate::status::encode(&status, true);
                    Ok(json_response(200, Bytes::from(bytes)))
                }
            }
        }
        _ => {
            let opts = ListOptions::parse(q, info, false, state.config.sharded_list_and_watch)?;
            let options = delete::DeleteOptions::parse(body, q)?;
            let mut inner = state.storage.write(options.dry_run);
            let gone = delete::delete_collection(&mut inner, info, ns, &opts, &options)?;
            let rv = inner.rv;
            drop(inner);
            let items: Vec<Value> = gone
                .iter()
                .filter_map(|o| serde_json::from_slice(&object_bytes(info, o)).ok())
                .collect();
            let list = json!({
                "kind": format!("{}List", info.kind),
                "apiVersion": info.api_version(),
                "metadata": {"resourceVersion": rv.to_string()},
                "items": items,
            });
            Ok(json_response(200, to_bytes(&list)))
        }
    }
}

/// A LIST or WATCH from a resourceVersion newer than the server's waits a while for the
/// server to reach it, as kube-apiserver's watch cache does (`waitUntilFreshAndBlock`); the
/// handler then answers "too large resource version" if it still is.
async fn wait_for_rv(state: &State, query: &Query) {
    let Some(want) = query
        .get("resourceVersion")
        .and_then(|rv| rv.parse::<u64>().ok())
    else {
        return;
    };
    let deadline = tokio::time::Instant::now() + state.config.future_rv_wait;
    while state.storage.lock().rv < want && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

/// A request of the `scale` subresource; a GET asking for a Table gets the scale printer's.
#[allow(clippy::too_many_arguments)]
fn scale_request(
    state: &Arc<State>,
    method: &Method,
    path: &str,
    t: &Target,
    q: &Query,
    content_type: &str,
    body: &Bytes,
    form: Form,
    include: IncludeObject,
) -> Result<Response<Body>, ApiError> {
    let ns = t.namespace.as_deref().unwrap_or_default();
    let name = t.name.as_deref().unwrap_or_default();
    let mut inner = state.storage.write(q.dry_run()?);
    let scale = match *method {
        Method::GET => scale::get(&inner, &t.info, ns, name)?,
        Method::PUT => scale::write(&mut inner, &t.info, ns, name, None, body)?,
        Method::PATCH => {
            let pt = PatchType::from_content_type(content_type)?;
            scale::write(&mut inner, &t.info, ns, name, Some(pt), body)?
        }
        _ => return Err(ApiError::method_not_allowed(method.as_str(), path)),
    };
    if *method == Method::GET && form == Form::Table {
        let table = crate::handlers::negotiation::table::scale_table(&scale, include);
        return Ok(json_response(200, to_bytes(&table)));
    }
    Ok(json_response(200, to_bytes(&scale)))
}

impl Form {
    /// Writes answer JSON or metadata, never tables.
    fn min_json(self) -> Self {
        match self {
            Form::Table => Form::Json,
            f => f,
        }
    }
}

fn resolve(state: &State, group: &str, version: &str, rest: &[&str]) -> Option<Target> {
    let reg = &state.storage.lock().registry;
    let namespaced_path = rest.first() == Some(&"namespaces")
        && rest.len() >= 3
        && !(rest.len() == 3 && matches!(rest[2], "status" | "finalize"));
    let (namespace, rest) = if namespaced_path {
        (Some(rest[1].to_owned()), &rest[2..])
    } else {
        (None, rest)
    };
    let info = reg.get(group, version, rest.first()?)?;
    if namespace.is_some() && !info.namespaced {
        return None;
    }
    if rest.len() > 1 && info.namespaced && namespace.is_none() {
        return None;
    }
    if rest.len() > 3 {
        return None;
    }
    Some(Target {
        info,
        namespace,
        name: rest.get(1).map(|s| s.to_string()),
        sub: rest.get(2).map(|s| s.to_string()),
    })
}

async fn read_body(req: Request<Incoming>) -> Result<Bytes, ApiError> {
    let limited = http_body_util::Limited::new(req.into_body(), MAX_BODY);
    match limited.collect().await {
        Ok(c) => Ok(c.to_bytes()),
        Err(e) => {
            if e.downcast_ref::<http_body_util::LengthLimitError>()
                .is_some()
            {
                Err(ApiError::new(
                    413,
                    "RequestEntityTooLarge",
                    "the request is too large",
                ))
            } else {
                Err(ApiError::bad_request(format!(
                    "reading the request body: {e}"
                )))
            }
        }
    }
}

fn parse_json(body: &[u8]) -> Result<Value, ApiError> {
    serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request(format!("the body is not valid JSON: {e}")))
}

/// Whether a request for `/openapi/v2` accepts the JSON form (the protobuf form is not
/// served; see [`super::openapi`]).
fn openapi_v2_json(accept: Option<&str>) -> bool {
    accept.is_none_or(|a| {
        a.split(',').any(|t| {
            let t = t.split(';').next().unwrap_or_default().trim();
            t == "application/json" || t == "*/*" || t == "application/*"
        })
    })
}

fn set_content_type(r: &mut Response<Body>, ct: &'static str) {
    r.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static(ct),
    );
}
