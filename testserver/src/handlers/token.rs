//! The `serviceaccounts/token` subresource: `TokenRequest` (`authentication.k8s.io/v1`),
//! what `kubectl create token` and the kubelet's projected token volumes ask for.
//!
//! As kube-apiserver's `TokenREST` (`pkg/registry/core/serviceaccount/storage/token.go`): a
//! POST only (other methods 405); the body's `metadata.name`/`namespace`, when given, must be
//! the ServiceAccount's (422); the ServiceAccount must exist (404 `serviceaccounts "x" not
//! found`); `spec.expirationSeconds` defaults to 3600 and is validated as
//! `ValidateTokenRequest` does (below 600 seconds or above 2^32: 422 Invalid on
//! `spec.expirationSeconds`); `spec.audiences` defaults to the server's API audience
//! ([`API_AUDIENCE`]) and is echoed; a `spec.boundObjectRef` must name an existing Pod (running
//! as that ServiceAccount), Secret or Node, with a matching uid when one is given (400, 404,
//! 409 as the real server). The answer is 201 with the request, `metadata.creationTimestamp`
//! and `status.token` / `status.expirationTimestamp` (now + `expirationSeconds`).
//!
//! The token is shaped as the real server's: a JWT whose claims are those of a bound service
//! account token (`iss`, `sub`, `aud`, `exp`, `iat`, `nbf`, `jti`, `kubernetes.io` with the
//! namespace, the ServiceAccount's name and uid and the bound object), so a test that decodes
//! it reads what it would in a cluster. It is registered with the server's authenticator
//! (module `authz`), so with [`TestApiServerBuilder::rbac`] it authenticates as
//! `system:serviceaccount:<namespace>:<name>` in the groups `system:serviceaccounts`,
//! `system:serviceaccounts:<namespace>` and `system:authenticated`.
//!
//! Not reproduced: the signature (random bytes: no key is published at
//! `/openid/v1/jwks`, so the token cannot be verified offline), expiry (the token keeps
//! authenticating after `exp`) and invalidation when the ServiceAccount or bound object is
//! deleted, the `authentication.kubernetes.io/*` user extras, and the server flags that cap or
//! extend the lifetime (`--service-account-max-token-expiration`, extended pod-bound tokens).
//! A JWT is assembled by hand (two base64url JSON documents): a JWT crate would bring signing
//! the server has no key for.
//!
//! [`TestApiServerBuilder::rbac`]: super::TestApiServerBuilder::rbac

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Value, json};

use crate::authorization::{Auth, User};
use crate::registry::ResourceInfo;
use crate::status::ApiError;
use crate::storage::{Inner, object_key};

/// The API server's audience and issuer (kubeadm's `--service-account-issuer`), the default
/// audience of a token request.
pub(crate) const API_AUDIENCE: &str = "https://kubernetes.default.svc.cluster.local";

/// `expirationSeconds` when the request leaves it out (`SetDefaults_TokenRequestSpec`).
const DEFAULT_EXPIRATION: i64 = 3600;
/// The shortest lifetime a request may ask for (ten minutes).
const MIN_EXPIRATION: i64 = 600;

/// The answer to a POST of `body` to `serviceaccounts/{name}/token` in `namespace`: the
/// TokenRequest with its status; the token is registered with `auth`.
pub(crate) fn request(
    inner: &Inner,
    auth: &Auth,
    service_accounts: &ResourceInfo,
    namespace: &str,
    name: &str,
    body: &[u8],
) -> Result<Value, ApiError> {
    let mut req: Value = serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request(format!("the body is not valid JSON: {e}")))?;
    if !req.is_object() {
        return Err(ApiError::bad_request("the body must be a JSON object"));
    }
    let invalid = |name: &str, field: &str, message: String| {
        let mut e = ApiError::invalid(
            "authentication.k8s.io",
            "TokenRequest",
            name,
            field,
            &message,
        );
        e.message =
            format!("TokenRequest.authentication.k8s.io {name:?} is invalid: {field}: {message}");
        e
    };
    for (field, want) in [("name", name), ("namespace", namespace)] {
        if let Some(given) = req["metadata"][field].as_str().filter(|g| !g.is_empty())
            && given != want
        {
            return Err(invalid(
                name,
                &format!("metadata.{field}"),
                format!(
                    "Invalid value: {given:?}: must match the service account {field} if specified"
                ),
            ));
        }
    }
    let account = inner
        .get(
            &service_accounts.storage_key(),
            &object_key(namespace, name),
        )
        .ok_or_else(|| ApiError::not_found("", &service_accounts.plural, name))?
        .value();

    let spec = req["spec"].as_object().cloned().unwrap_or_default();
    let expiration = match spec.get("expirationSeconds") {
        None | Some(Value::Null) => DEFAULT_EXPIRATION,
        Some(v) => v.as_i64().ok_or_else(|| {
            ApiError::bad_request(format!(
                "TokenRequest in version \"v1\" cannot be handled as a TokenRequest: json: cannot unmarshal {v} into Go struct field TokenRequestSpec.spec.expirationSeconds of type int64"
            ))
        })?,
    };
    let mut audiences: Vec<String> = match spec.get("audiences") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(a)) => a
            .iter()
            .map(|v| v.as_str().map(str::to_owned))
            .collect::<Option<_>>()
            .ok_or_else(|| ApiError::bad_request("spec.audiences must be a list of strings"))?,
        Some(_) => return Err(ApiError::bad_request("spec.audiences must be a list")),
    };
    if audiences.is_empty() {
        audiences.push(API_AUDIENCE.to_owned());
    }
    let now = jiff::Timestamp::now();
    if expiration < MIN_EXPIRATION {
        return Err(invalid(
            "",
            "spec.expirationSeconds",
            format!("Invalid value: {expiration}: may not specify a duration less than 10 minutes"),
        ));
    }
    if expiration > i64::from(u32::MAX) {
        return Err(invalid(
            "",
            "spec.expirationSeconds",
            format!(
                "Invalid value: {expiration}: may not specify a duration larger than 2^32 seconds"
            ),
        ));
    }
    let bound = match spec.get("boundObjectRef").filter(|r| !r.is_null()) {
        Some(r) => Some(bound_object(inner, namespace, name, r)?),
        None => None,
    };

    let iat = now.as_second();
    let exp = iat.saturating_add(expiration);
    let mut k8s = json!({
        "namespace": namespace,
        "serviceaccount": {"name": name, "uid": account["metadata"]["uid"]},
    });
    if let Some((kind, obj)) = &bound {
        k8s[kind.to_ascii_lowercase()] =
            json!({"name": obj["metadata"]["name"], "uid": obj["metadata"]["uid"]});
    }
    let claims = json!({
        "aud": audiences,
        "exp": exp,
        "iat": iat,
        "iss": API_AUDIENCE,
        "jti": crate::handlers::write::new_uid(),
        "kubernetes.io": k8s,
        "nbf": iat,
        "sub": format!("system:serviceaccount:{namespace}:{name}"),
    });
    let signature: [u8; 32] = rand::random();
    let token = format!(
        "{}.{}.{}",
        URL_SAFE_NO_PAD.encode(json!({"alg": "RS256", "kid": "kinform-testserver"}).to_string()),
        URL_SAFE_NO_PAD.encode(claims.to_string()),
        URL_SAFE_NO_PAD.encode(signature),
    );
    auth.register(token.clone(), User::service_account(namespace, name));

    let timestamp = |t: jiff::Timestamp| t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string();
    let expires = jiff::Timestamp::from_second(exp).unwrap_or(now);
    req["apiVersion"] = json!("authentication.k8s.io/v1");
    req["kind"] = json!("TokenRequest");
    let meta = &mut req["metadata"];
    if !meta.is_object() {
        *meta = json!({});
    }
    meta["name"] = json!(name);
    meta["namespace"] = json!(namespace);
    meta["creationTimestamp"] = json!(timestamp(now));
    let mut spec = spec;
    spec.insert("audiences".into(), json!(audiences));
    spec.insert("expirationSeconds".into(), json!(expiration));
    if let Some((_, obj)) = &bound
        && let Some(r) = spec.get_mut("boundObjectRef")
    {
        r["uid"] = obj["metadata"]["uid"].clone();
    }
    req["spec"] = Value::Object(spec);
    req["status"] = json!({"token": token, "expirationTimestamp": timestamp(expires)});
    Ok(req)
}

/// The object a `boundObjectRef` names, with its kind: a Pod running as the ServiceAccount,
/// a Secret, or a Node.
fn bound_object(
    inner: &Inner,
    namespace: &str,
    account: &str,
    r: &Value,
) -> Result<(String, Value), ApiError> {
    let api_version = r["apiVersion"].as_str().unwrap_or_default();
    let kind = r["kind"].as_str().unwrap_or_default();
    let name = r["name"].as_str().unwrap_or_default();
    let (plural, ns) = match (api_version, kind) {
        ("v1", "Pod") => ("pods", namespace),
        ("v1", "Secret") => ("secrets", namespace),
        ("v1", "Node") => ("nodes", ""),
        _ => {
            let (group, version) = crate::registry::split_api_version(api_version);
            let gvk = if group.is_empty() {
                format!("/{version}, Kind={kind}")
            } else {
                format!("{group}/{version}, Kind={kind}")
            };
            return Err(ApiError::bad_request(format!(
                "cannot bind token to object of type {gvk}"
            )));
        }
    };
    let info = inner
        .registry
        .get("", "v1", plural)
        .ok_or_else(|| ApiError::not_found("", plural, name))?;
    let obj = inner
        .get(&info.storage_key(), &object_key(ns, name))
        .ok_or_else(|| ApiError::not_found("", plural, name))?
        .value();
    if kind == "Pod" {
        let runs_as = obj["spec"]["serviceAccountName"]
            .as_str()
            .unwrap_or_default();
        if runs_as != account {
            return Err(ApiError::bad_request(format!(
                "cannot bind token for serviceaccount {account:?} to pod running with serviceaccount {runs_as:?}"
            )));
        }
    }
    let uid = obj["metadata"]["uid"].as_str().unwrap_or_default();
    if let Some(want) = r["uid"].as_str().filter(|u| !u.is_empty())
        && want != uid
    {
        return Err(ApiError::conflict(
            "",
            kind,
            name,
            &format!(
                "the UID in the bound object reference ({want}) does not match the UID in record ({uid}). The object might have been deleted and then recreated"
            ),
        ));
    }
    Ok((kind.to_owned(), obj))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::Registry;
    use crate::storage::Storage;

    #[test]
    fn tokens_need_the_account_and_ten_minutes() {
        let storage = Storage::new(100, 16);
        let auth = Auth::new(true);
        let sa = Registry::with_builtins()
            .get("", "v1", "serviceaccounts")
            .expect("served");
        let inner = storage.lock();
        let e = request(&inner, &auth, &sa, "ns", "robot", b"{}").unwrap_err();
        assert_eq!((e.code, e.reason), (404, "NotFound"));
        assert_eq!(e.message, "serviceaccounts \"robot\" not found");
    }
}
