//! OpenAPI definition names -> k8s-openapi 0.29 type paths.
//!
//! k8s-openapi lays its modules out after the Go package of each definition, with `-`
//! replaced by `_`: `io.k8s.api.core.v1.Pod` is `k8s_openapi::api::core::v1::Pod`,
//! `io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition` is
//! `k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition`
//! and `io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.APIService` is
//! `k8s_openapi::kube_aggregator::pkg::apis::apiregistration::v1::APIService`. `*List`
//! definitions have no k8s-openapi type (it uses a generic `List<T>`) and are never mapped.

use crate::read::names::is_rust_path_segment;

/// The crate name the mapped paths start with; emitters replace it with the configured path.
pub const K8S_OPENAPI: &str = "k8s_openapi";

/// Maps a definition name to its k8s-openapi path, `None` for names outside `io.k8s.` and
/// for names with a segment that is not a Rust identifier (`io.k8s.api.core.v1.Wid)get`: no
/// k8s-openapi type can have that path).
pub fn k8s_openapi_path(definition: &str) -> Option<String> {
    let rest = definition.strip_prefix("io.k8s.")?;
    let parts: Vec<&str> = rest.split('.').collect();
    if parts.len() < 2
        || parts
            .iter()
            .any(|p| !is_rust_path_segment(&p.replace('-', "_")))
    {
        return None;
    }
    let (ty, modules) = parts.split_last()?;
    let mut path = String::from(K8S_OPENAPI);
    for m in modules {
        path.push_str("::");
        path.push_str(&m.replace('-', "_"));
    }
    path.push_str("::");
    path.push_str(ty);
    Some(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_api_apiextensions_and_aggregator() {
        assert_eq!(
            k8s_openapi_path("io.k8s.api.core.v1.Pod").unwrap(),
            "k8s_openapi::api::core::v1::Pod"
        );
        assert_eq!(
            k8s_openapi_path(
                "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition"
            )
            .unwrap(),
            "k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition"
        );
        assert_eq!(
            k8s_openapi_path("io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.APIService")
                .unwrap(),
            "k8s_openapi::kube_aggregator::pkg::apis::apiregistration::v1::APIService"
        );
        assert_eq!(k8s_openapi_path("com.example.Foo"), None);
        assert_eq!(k8s_openapi_path("io.k8s.Foo"), None);
        assert_eq!(k8s_openapi_path("io.k8s.api.core.v1.Wid)get"), None);
        assert_eq!(k8s_openapi_path("io.k8s.api.co re.v1.Pod"), None);
    }
}
