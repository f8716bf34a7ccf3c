//! Discovery of the server's API groups, versions and resources (`/api`, `/apis`), as
//! client-go's `discovery.DiscoveryClient` reads them (the unaggregated forms).
//!
//! The result resolves a group/version/kind to an [`ApiResource`] for dynamic clients, and
//! lists each resource's verbs and subresources.

use http::Method;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{APIGroupList, APIResourceList, APIVersions};

use super::{Client, Result};
use kinform_core::resource::{ApiResource, Scope};

/// One resource of a group version.
#[derive(Clone, Debug, PartialEq)]
pub struct DiscoveredResource {
    /// Group, version, kind, plural and scope.
    pub resource: ApiResource,
    /// Verbs (`get`, `list`, `watch`, ...).
    pub verbs: Vec<String>,
    /// Short names (`po` for pods).
    pub short_names: Vec<String>,
    /// Subresources (`status`, `scale`, `log`, ...).
    pub subresources: Vec<String>,
}

/// One version of a group.
#[derive(Clone, Debug, PartialEq)]
pub struct DiscoveredVersion {
    /// The version, e.g. `v1`.
    pub version: String,
    /// Its resources.
    pub resources: Vec<DiscoveredResource>,
}

/// One API group (`""` for the core group).
#[derive(Clone, Debug, PartialEq)]
pub struct DiscoveredGroup {
    /// The group name.
    pub name: String,
    /// The server's preferred version.
    pub preferred_version: Option<String>,
    /// Versions, in the server's order of preference.
    pub versions: Vec<DiscoveredVersion>,
}

/// The server's API surface.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Discovery {
    /// Groups, the core group first.
    pub groups: Vec<DiscoveredGroup>,
}

fn get(path: &str) -> http::Request<Vec<u8>> {
    let mut req = http::Request::new(Vec::new());
    *req.method_mut() = Method::GET;
    *req.uri_mut() = http::Uri::try_from(path).unwrap_or_default();
    req
}

impl Discovery {
    /// Reads `/api`, `/apis` and every group version's resource list.
    pub async fn run(client: &Client) -> Result<Self> {
        let mut groups = Vec::new();
        let core: APIVersions = client.request(get("/api")).await?;
        let mut core_group = DiscoveredGroup {
            name: String::new(),
            preferred_version: core.versions.first().cloned(),
            versions: Vec::new(),
        };
        for v in &core.versions {
            let list: APIResourceList = client.request(get(&format!("/api/{v}"))).await?;
            core_group.versions.push(version_of("", v, list));
        }
        groups.push(core_group);
        let apis: APIGroupList = client.request(get("/apis")).await?;
        for g in apis.groups {
            let mut group = DiscoveredGroup {
                name: g.name.clone(),
                preferred_version: g.preferred_version.map(|p| p.version),
                versions: Vec::new(),
            };
            for v in g.versions {
                let list: APIResourceList = client
                    .request(get(&format!("/apis/{}", v.group_version)))
                    .await?;
                group.versions.push(version_of(&g.name, &v.version, list));
            }
            groups.push(group);
        }
        Ok(Self { groups })
    }

    /// The group named `name` (`""` for core).
    pub fn group(&self, name: &str) -> Option<&DiscoveredGroup> {
        self.groups.iter().find(|g| g.name == name)
    }

    /// The resource of a group/version/kind.
    pub fn resolve_gvk(
        &self,
        group: &str,
        version: &str,
        kind: &str,
    ) -> Option<&DiscoveredResource> {
        self.group(group)?
            .versions
            .iter()
            .find(|v| v.version == version)?
            .resources
            .iter()
            .find(|r| r.resource.kind == kind)
    }

    /// The resource of a group and plural (or short name) in the group's preferred version.
    pub fn resolve_preferred(&self, group: &str, name: &str) -> Option<&DiscoveredResource> {
        let g = self.group(group)?;
        let v = g
            .preferred_version
            .as_deref()
            .and_then(|p| g.versions.iter().find(|v| v.version == p))
            .or_else(|| g.versions.first())?;
        v.resources
            .iter()
            .find(|r| r.resource.plural == name || r.short_names.iter().any(|s| s == name))
    }
}

fn version_of(group: &str, version: &str, list: APIResourceList) -> DiscoveredVersion {
    let mut resources: Vec<DiscoveredResource> = Vec::new();
    let mut subs: Vec<(String, String)> = Vec::new();
    for r in list.resources {
        if let Some((parent, sub)) = r.name.split_once('/') {
            subs.push((parent.to_owned(), sub.to_owned()));
            continue;
        }
        resources.push(DiscoveredResource {
            resource: ApiResource {
                group: group.to_owned().into(),
                version: version.to_owned().into(),
                kind: r.kind.into(),
                plural: r.name.into(),
                scope: if r.namespaced {
                    Scope::Namespaced
                } else {
                    Scope::Cluster
                },
            },
            verbs: r.verbs,
            short_names: r.short_names.unwrap_or_default(),
            subresources: Vec::new(),
        });
    }
    for (parent, sub) in subs {
        if let Some(r) = resources.iter_mut().find(|r| r.resource.plural == parent) {
            r.subresources.push(sub);
        }
    }
    DiscoveredVersion {
        version: version.to_owned(),
        resources,
    }
}
