//! Opt-in authentication and RBAC authorization: a controller test fails with 403 exactly where
//! a cluster would (the classic "forgot a verb in the ClusterRole" bug).
//!
//! Off by default: every request is the admin user of [`super::review`]. With
//! [`TestApiServerBuilder::rbac`](super::TestApiServerBuilder::rbac):
//! - **Authentication** by bearer token, as kube-apiserver's token authenticators: the
//!   kubeconfig's token is the admin (group `system:masters`); tokens made with
//!   [`TestApiServer::token_for`](super::TestApiServer::token_for) or
//!   [`TestApiServer::service_account_client`](super::TestApiServer::service_account_client)
//!   stand for the user they name; any other request is 401 `Unauthorized`. The admin may
//!   impersonate (`Impersonate-User`, `Impersonate-Group`: `kubectl --as`).
//! - **Authorization** as the RBAC authorizer (`plugin/pkg/auth/authorizer/rbac`): members
//!   of `system:masters` may do everything; every authenticated user may read discovery,
//!   `/version`, `/openapi` and `/healthz` and create the self reviews (the bootstrap roles
//!   `system:discovery`, `system:basic-user` and `system:public-info-viewer`); anything else
//!   must be granted by a rule of a ClusterRole bound by a ClusterRoleBinding, or of a Role or
//!   ClusterRole bound by a RoleBinding in the request's namespace, matching the verb, API
//!   group, resource (`pods`, `pods/log`, `*`, `pods/*`, `*/scale`) and resource name.
//!   ClusterRoles with an `aggregationRule` get the rules of the ClusterRoles their
//!   selectors match. A denial is a 403 `Forbidden` Status worded as kube-apiserver's.
//!
//! Not reproduced: escalation checks when writing roles and bindings, other authenticators
//! (client certificates, OIDC), the node authorizer, webhooks.

use std::collections::HashMap;

use parking_lot::Mutex;
use serde_json::{Value, json};

use crate::status::ApiError;
use crate::storage::Inner;

/// The user every request is authenticated as.
pub(crate) const USER: &str = "kinform-testserver-admin";
/// The groups of [`USER`].
pub(crate) const GROUPS: [&str; 2] = ["system:masters", "system:authenticated"];

/// An authenticated user.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct User {
    /// `username`.
    pub name: String,
    /// `groups`.
    pub groups: Vec<String>,
}

impl User {
    /// The admin every request is when authorization is off.
    pub fn admin() -> Self {
        Self {
            name: USER.to_owned(),
            groups: GROUPS.iter().map(|g| g.to_string()).collect(),
        }
    }

    /// The user of service account `namespace/name`.
    pub fn service_account(namespace: &str, name: &str) -> Self {
        Self {
            name: format!("system:serviceaccount:{namespace}:{name}"),
            groups: vec![
                "system:serviceaccounts".to_owned(),
                format!("system:serviceaccounts:{namespace}"),
                "system:authenticated".to_owned(),
            ],
        }
    }

    fn is_master(&self) -> bool {
        self.groups.iter().any(|g| g == "system:masters")
    }

    /// As `userInfo` in reviews.
    pub fn to_json(&self) -> Value {
        json!({"username": self.name, "groups": self.groups})
    }
}

/// The tokens the server knows, and whether it authorizes at all.
#[derive(Debug, Default)]
pub(crate) struct Auth {
    enabled: bool,
    tokens: Mutex<HashMap<String, User>>,
}

impl Auth {
    /// Authentication and authorization on (`true`) or every request the admin.
    pub fn new(enabled: bool) -> Self {
        let auth = Self {
            enabled,
            tokens: Mutex::default(),
        };
        auth.tokens
            .lock()
            .insert(crate::TOKEN.to_owned(), User::admin());
        auth
    }

    /// Whether RBAC is enforced.
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// A new token standing for `user`.
    pub fn issue(&self, user: User) -> String {
        let n: u128 = rand::random();
        let token = format!("kinform-{n:032x}");
        self.tokens.lock().insert(token.clone(), user);
        token
    }

    /// Registers `token` (made elsewhere: a TokenRequest's JWT) as standing for `user`.
    pub fn register(&self, token: String, user: User) {
        self.tokens.lock().insert(token, user);
    }

    /// The user a token stands for.
    pub fn user_of_token(&self, token: &str) -> Option<User> {
        self.tokens.lock().get(token).cloned()
    }

    /// The user making a request, from its `Authorization` and impersonation headers.
    pub fn authenticate(&self, headers: &http::HeaderMap) -> Result<User, ApiError> {
        if !self.enabled {
            return Ok(User::admin());
        }
        let unauthorized = || ApiError::new(401, "Unauthorized", "Unauthorized");
        let token = headers
            .get(http::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .ok_or_else(unauthorized)?;
        let user = self.user_of_token(token.trim()).ok_or_else(unauthorized)?;
        let Some(as_user) = headers
            .get("impersonate-user")
            .and_then(|v| v.to_str().ok())
        else {
            return Ok(user);
        };
        if !user.is_master() {
            return Err(ApiError::new(
                403,
                "Forbidden",
                format!(
                    "users \"{as_user}\" is forbidden: User \"{}\" cannot impersonate resource \"users\" in API group \"\" at the cluster scope",
                    user.name
                ),
            ));
        }
        let mut groups: Vec<String> = headers
            .get_all("impersonate-group")
            .iter()
            .filter_map(|v| v.to_str().ok().map(str::to_owned))
            .collect();
        if let Some(rest) = as_user.strip_prefix("system:serviceaccount:")
            && let Some((ns, _)) = rest.split_once(':')
            && groups.is_empty()
        {
            groups.extend([
                "system:serviceaccounts".to_owned(),
                format!("system:serviceaccounts:{ns}"),
            ]);
        }
        groups.push("system:authenticated".to_owned());
        Ok(User {
            name: as_user.to_owned(),
            groups,
        })
    }
}

/// What a request asks to do, as the authorizer sees it.
#[derive(Clone, Debug, Default)]
pub(crate) struct Attributes<'a> {
    /// `get`, `list`, `watch`, `create`, `update`, `patch`, `delete`, `deletecollection`.
    pub verb: &'a str,
    /// The API group (`""` for core).
    pub group: &'a str,
    /// The resource's plural.
    pub resource: &'a str,
    /// The subresource, if any.
    pub subresource: Option<&'a str>,
    /// The namespace, `None` at the cluster scope.
    pub namespace: Option<&'a str>,
    /// The object's name, if the request names one.
    pub name: Option<&'a str>,
}

/// Allows or refuses a resource request of `user`.
pub(crate) fn authorize(inner: &Inner, user: &User, a: &Attributes<'_>) -> Result<(), ApiError> {
    if allowed(inner, user, a) {
        return Ok(());
    }
    let resource = match a.subresource {
        Some(sub) => format!("{}/{sub}", a.resource),
        None => a.resource.to_owned(),
    };
    let subject = match a.name {
        Some(name) => format!("{resource} \"{name}\""),
        None => resource.clone(),
    };
    let scope = match a.namespace {
        Some(ns) => format!("in the namespace \"{ns}\""),
        None => "at the cluster scope".to_owned(),
    };
    let mut e = ApiError::new(
        403,
        "Forbidden",
        format!(
            "{subject} is forbidden: User \"{}\" cannot {} resource \"{resource}\" in API group \"{}\" {scope}",
            user.name, a.verb, a.group
        ),
    );
    e.details = Some(crate::status::details(
        a.group,
        a.resource,
        a.name.unwrap_or_default(),
        None,
    ));
    Err(e)
}

/// Whether `user` may do `a`.
pub(crate) fn allowed(inner: &Inner, user: &User, a: &Attributes<'_>) -> bool {
    if user.is_master() {
        return true;
    }
    let self_review = a.verb == "create"
        && matches!(
            (a.group, a.resource),
            (
                "authorization.k8s.io",
                "selfsubjectaccessreviews" | "selfsubjectrulesreviews"
            ) | ("authentication.k8s.io", "selfsubjectreviews")
        );
    if self_review {
        return true;
    }
    rules_for(inner, user, a.namespace)
        .iter()
        .any(|rule| rule_allows(rule, a))
}

/// The RBAC rules bound to `user` at the cluster scope and, with `namespace`, in it.
pub(crate) fn rules_for(inner: &Inner, user: &User, namespace: Option<&str>) -> Vec<Value> {
    let rbac = |plural: &str| format!("rbac.authorization.k8s.io/{plural}");
    let cluster_roles = inner.objects(&rbac("clusterroles"), None);
    let cluster_role = |name: &str| {
        cluster_roles
            .iter()
            .find(|r| r.name == name)
            .map(|r| r.value())
    };
    let rules_of = |role_ref: &Value, binding_ns: Option<&str>| -> Vec<Value> {
        let name = role_ref["name"].as_str().unwrap_or_default();
        let role = match (role_ref["kind"].as_str(), binding_ns) {
            (Some("ClusterRole"), _) => cluster_role(name),
            (Some("Role"), Some(ns)) => inner
                .get(&rbac("roles"), &crate::storage::object_key(ns, name))
                .map(|r| r.value()),
            _ => None,
        };
        let Some(role) = role else {
            return Vec::new();
        };
        let mut rules: Vec<Value> = role["rules"].as_array().cloned().unwrap_or_default();
        for selector in role["aggregationRule"]["clusterRoleSelectors"]
            .as_array()
            .into_iter()
            .flatten()
        {
            for other in &cluster_roles {
                let labels = &other.labels;
                let matches = selector["matchLabels"].as_object().is_some_and(|m| {
                    m.iter()
                        .all(|(k, v)| labels.get(k).map(String::as_str) == v.as_str())
                });
                if matches {
                    rules.extend(
                        other.value()["rules"]
                            .as_array()
                            .cloned()
                            .unwrap_or_default(),
                    );
                }
            }
        }
        rules
    };
    let binds = |binding: &Value, binding_ns: Option<&str>| {
        binding["subjects"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|s| subject_matches(s, user, binding_ns))
    };
    let mut bound: Vec<Value> = Vec::new();
    for b in inner.objects(&rbac("clusterrolebindings"), None) {
        let b = b.value();
        if binds(&b, None) {
            bound.extend(rules_of(&b["roleRef"], None));
        }
    }
    if let Some(ns) = namespace {
        for b in inner.objects(&rbac("rolebindings"), Some(ns)) {
            let b = b.value();
            if binds(&b, Some(ns)) {
                bound.extend(rules_of(&b["roleRef"], Some(ns)));
            }
        }
    }
    bound
}

fn subject_matches(subject: &Value, user: &User, binding_ns: Option<&str>) -> bool {
    let name = subject["name"].as_str().unwrap_or_default();
    match subject["kind"].as_str() {
        Some("User") => user.name == name,
        Some("Group") => user.groups.iter().any(|g| g == name),
        Some("ServiceAccount") => {
            let ns = subject["namespace"]
                .as_str()
                .or(binding_ns)
                .unwrap_or_default();
            user.name == format!("system:serviceaccount:{ns}:{name}")
        }
        _ => false,
    }
}

/// One RBAC `PolicyRule` against a resource request (`RuleAllows`).
fn rule_allows(rule: &Value, a: &Attributes<'_>) -> bool {
    let list = |key: &str| -> Vec<&str> {
        rule[key]
            .as_array()
            .map(|v| v.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default()
    };
    let verbs = list("verbs");
    if !verbs.iter().any(|v| *v == "*" || *v == a.verb) {
        return false;
    }
    let groups = list("apiGroups");
    if !groups.iter().any(|g| *g == "*" || *g == a.group) {
        return false;
    }
    let resources = list("resources");
    let combined = a.subresource.map(|s| format!("{}/{s}", a.resource));
    let resource_ok = resources.iter().any(|r| match (&combined, a.subresource) {
        (Some(c), Some(sub)) => {
            *r == "*" || r == c || *r == format!("{}/*", a.resource) || *r == format!("*/{sub}")
        }
        _ => *r == "*" || *r == a.resource,
    });
    if !resource_ok {
        return false;
    }
    let names = list("resourceNames");
    names.is_empty() || a.name.is_some_and(|n| names.contains(&n))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attrs<'a>(verb: &'a str, resource: &'a str, sub: Option<&'a str>) -> Attributes<'a> {
        Attributes {
            verb,
            group: "",
            resource,
            subresource: sub,
            namespace: Some("default"),
            name: Some("web"),
        }
    }

    #[test]
    fn rules_match_as_rbac() {
        let rule =
            json!({"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods", "pods/log"]});
        assert!(rule_allows(&rule, &attrs("get", "pods", None)));
        assert!(rule_allows(&rule, &attrs("get", "pods", Some("log"))));
        assert!(!rule_allows(&rule, &attrs("get", "pods", Some("exec"))));
        assert!(!rule_allows(&rule, &attrs("delete", "pods", None)));
        let wild = json!({"verbs": ["*"], "apiGroups": ["*"], "resources": ["*/scale"]});
        assert!(rule_allows(
            &wild,
            &attrs("update", "deployments", Some("scale"))
        ));
        assert!(!rule_allows(&wild, &attrs("update", "deployments", None)));
        let named = json!({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"], "resourceNames": ["db"]});
        assert!(!rule_allows(&named, &attrs("get", "pods", None)));
    }

    #[test]
    fn tokens_and_impersonation() {
        let auth = Auth::new(true);
        let sa = auth.issue(User::service_account("default", "ctl"));
        let mut h = http::HeaderMap::new();
        assert_eq!(auth.authenticate(&h).unwrap_err().code, 401);
        h.insert("authorization", format!("Bearer {sa}").parse().unwrap());
        assert_eq!(
            auth.authenticate(&h).unwrap().name,
            "system:serviceaccount:default:ctl"
        );
        h.insert("impersonate-user", "someone".parse().unwrap());
        assert_eq!(auth.authenticate(&h).unwrap_err().code, 403);
        h.insert(
            "authorization",
            format!("Bearer {}", crate::TOKEN).parse().unwrap(),
        );
        assert_eq!(auth.authenticate(&h).unwrap().name, "someone");
        assert!(
            Auth::new(false)
                .authenticate(&http::HeaderMap::new())
                .is_ok()
        );
    }
}
