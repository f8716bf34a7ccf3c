//! Several versions of one kind -> one CRD.
//!
//! Each `#[derive(CustomResource)]` module describes one version; the API server takes one
//! CRD per group and kind with every version listed and exactly one marked `storage` (the
//! apiextensions validation rejects zero or several). [`merge_crds`] joins them after
//! checking they describe the same resource (group, names, scope), the way kube-core's
//! `merge_crds` does, and makes the named version the only storage version.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

/// Why CRDs cannot be merged.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum MergeError {
    /// No CRDs were given.
    #[error("no CustomResourceDefinitions to merge")]
    Empty,
    /// A CRD does not have exactly one version.
    #[error(
        "CustomResourceDefinition {name} has {count} versions; merge_crds takes one version per CRD"
    )]
    NotSingleVersion {
        /// The CRD's name.
        name: String,
        /// How many versions it has.
        count: usize,
    },
    /// A CRD differs from the first in a property all versions share.
    #[error(
        "CustomResourceDefinition version {version}: {property} is {found:?}, but the first CRD has {expected:?}"
    )]
    Mismatch {
        /// The version that differs.
        version: String,
        /// What differs (`group`, `names`, `scope`, `metadata.name`).
        property: &'static str,
        /// The first CRD's value.
        expected: String,
        /// This CRD's value.
        found: String,
    },
    /// Two CRDs describe the same version.
    #[error("version {0} is given more than once")]
    DuplicateVersion(String),
    /// The storage version is not among the versions.
    #[error("storage version {storage} is not one of the versions {versions:?}")]
    UnknownStorageVersion {
        /// The requested storage version.
        storage: String,
        /// The versions given.
        versions: Vec<String>,
    },
}

/// Merges single-version CRDs of one kind into one CRD whose only storage version is
/// `storage_version` (every other version gets `storage: false`).
pub fn merge_crds(
    crds: Vec<CustomResourceDefinition>,
    storage_version: &str,
) -> Result<CustomResourceDefinition, MergeError> {
    let mut iter = crds.into_iter();
    let mut merged = iter.next().ok_or(MergeError::Empty)?;
    check_single(&merged)?;
    for crd in iter {
        check_single(&crd)?;
        let version = crd.spec.versions[0].name.clone();
        let checks: [(&'static str, String, String); 4] = [
            (
                "metadata.name",
                format!("{:?}", merged.metadata.name),
                format!("{:?}", crd.metadata.name),
            ),
            ("group", merged.spec.group.clone(), crd.spec.group.clone()),
            (
                "names",
                format!("{:?}", merged.spec.names),
                format!("{:?}", crd.spec.names),
            ),
            ("scope", merged.spec.scope.clone(), crd.spec.scope.clone()),
        ];
        for (property, expected, found) in checks {
            if expected != found {
                return Err(MergeError::Mismatch {
                    version,
                    property,
                    expected,
                    found,
                });
            }
        }
        if merged.spec.versions.iter().any(|v| v.name == version) {
            return Err(MergeError::DuplicateVersion(version));
        }
        merged.spec.versions.extend(crd.spec.versions);
    }
    if !merged
        .spec
        .versions
        .iter()
        .any(|v| v.name == storage_version)
    {
        return Err(MergeError::UnknownStorageVersion {
            storage: storage_version.to_owned(),
            versions: merged
                .spec
                .versions
                .iter()
                .map(|v| v.name.clone())
                .collect(),
        });
    }
    for v in &mut merged.spec.versions {
        v.storage = v.name == storage_version;
    }
    Ok(merged)
}

fn check_single(crd: &CustomResourceDefinition) -> Result<(), MergeError> {
    match crd.spec.versions.len() {
        1 => Ok(()),
        count => Err(MergeError::NotSingleVersion {
            name: crd.metadata.name.clone().unwrap_or_default(),
            count,
        }),
    }
}
