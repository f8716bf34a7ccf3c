//! Kubernetes URL path templates -> group, version, scope, plural, subresource.
//!
//! The API server registers every resource under the same few templates
//! (`k8s.io/apiserver/pkg/endpoints/installer.go`):
//! `/api/v1/[watch/][namespaces/{namespace}/]{plural}[/{name}[/{subresource}[/{path}]]]`
//! for the core group and `/apis/{group}/{version}/...` for the others. The namespace
//! resource itself is `namespaces/{name}`, which is why the prefix must read `{namespace}`.

/// What a URL path template says about the resource it addresses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathInfo {
    /// API group, `""` for core.
    pub group: String,
    /// Version.
    pub version: String,
    /// Whether the path is inside `namespaces/{namespace}/`.
    pub namespaced: bool,
    /// Whether the path is one of the deprecated `/watch/` endpoints.
    pub watch: bool,
    /// Plural resource name.
    pub plural: String,
    /// Whether the path names one object (`/{name}`).
    pub named: bool,
    /// Subresource, e.g. `status`.
    pub subresource: Option<String>,
}

/// Parses a path template; `None` when it is not a resource path.
pub fn parse_path(path: &str) -> Option<PathInfo> {
    let mut segs: Vec<&str> = path.trim_matches('/').split('/').collect();
    let (group, version, rest) = match *segs.first()? {
        "api" if segs.len() >= 2 => (String::new(), segs[1].to_owned(), segs.split_off(2)),
        "apis" if segs.len() >= 3 => (segs[1].to_owned(), segs[2].to_owned(), segs.split_off(3)),
        _ => return None,
    };
    let mut rest = rest.as_slice();
    let watch = rest.first() == Some(&"watch");
    if watch {
        rest = &rest[1..];
    }
    let namespaced = rest.len() >= 3 && rest[0] == "namespaces" && rest[1] == "{namespace}";
    if namespaced {
        rest = &rest[2..];
    }
    let plural = rest.first().filter(|p| is_literal(p))?;
    let named = match rest.get(1) {
        None => false,
        Some(&"{name}") => true,
        Some(_) => return None,
    };
    let subresource = match rest.get(2) {
        None => None,
        Some(sub) if is_literal(sub) => Some((*sub).to_owned()),
        Some(_) => return None,
    };
    // Anything after the subresource is a proxy's `{path}`; it addresses the same
    // subresource.
    if rest.len() > 3 && subresource.is_none() {
        return None;
    }
    Some(PathInfo {
        group,
        version,
        namespaced,
        watch,
        plural: (*plural).to_owned(),
        named,
        subresource,
    })
}

fn is_literal(seg: &str) -> bool {
    !seg.is_empty() && !seg.starts_with('{')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(path: &str) -> PathInfo {
        parse_path(path).unwrap_or_else(|| panic!("{path} did not parse"))
    }

    #[test]
    fn core_and_named_groups() {
        let pod = p("/api/v1/namespaces/{namespace}/pods/{name}");
        assert_eq!((pod.group.as_str(), pod.version.as_str()), ("", "v1"));
        assert!(pod.namespaced && pod.named && !pod.watch);
        assert_eq!(pod.plural, "pods");
        let scale = p("/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale");
        assert_eq!(scale.group, "apps");
        assert_eq!(scale.subresource.as_deref(), Some("scale"));
    }

    #[test]
    fn namespace_resource_is_cluster_scoped() {
        let ns = p("/api/v1/namespaces/{name}/status");
        assert!(!ns.namespaced);
        assert_eq!(ns.plural, "namespaces");
        assert_eq!(ns.subresource.as_deref(), Some("status"));
        assert!(!p("/api/v1/namespaces").namespaced);
    }

    #[test]
    fn watch_and_proxy_paths() {
        let w = p("/apis/apps/v1/watch/namespaces/{namespace}/deployments");
        assert!(w.watch && w.namespaced && !w.named);
        let proxy = p("/api/v1/nodes/{name}/proxy/{path}");
        assert_eq!(proxy.subresource.as_deref(), Some("proxy"));
        assert!(parse_path("/apis/").is_none());
        assert!(parse_path("/version/").is_none());
        assert!(parse_path("/api/v1/").is_none());
    }
}
