//! What the in-place decoders are printed from, whichever source it was read from: the
//! k8s-openapi types of one Kubernetes version, by OpenAPI definition name, and the errors of
//! reading it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

/// The k8s-openapi types of one Kubernetes version, as the in-place decoders need them.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Definitions {
    /// Every definition with a k8s-openapi type, by its OpenAPI name
    /// (`io.k8s.api.core.v1.Pod`).
    pub by_name: BTreeMap<String, Definition>,
    /// The definitions of the built-in resources that can be listed and watched.
    pub roots: BTreeSet<String>,
}

/// One k8s-openapi type.
#[derive(Debug, PartialEq, Eq)]
pub struct Definition {
    /// Its Rust path (`k8s_openapi::api::core::v1::Pod`).
    pub path: String,
    /// A struct decoded member by member, or a type with a `Deserialize` of its own.
    pub shape: Shape,
    /// Whether the type has a `Default`: k8s-openapi reads a required member of a type
    /// without one that is absent as a missing field, an error.
    pub default: bool,
    /// The definitions it names anywhere in its members' types.
    pub refs: BTreeSet<String>,
    /// The definitions that are the types of its required members themselves (not inside
    /// a `Vec` or a map, which have defaults of their own).
    pub required: BTreeSet<String>,
}

/// How a type is decoded.
#[derive(Debug, PartialEq, Eq)]
pub enum Shape {
    /// A struct with named fields, decoded member by member.
    Struct {
        /// A resource: k8s-openapi has no fields for its `apiVersion` and `kind` and checks
        /// them against the type's own.
        resource: bool,
        /// Each member's JSON name and the Rust field k8s-openapi gives it, `apiVersion`
        /// and `kind` of a resource left out.
        fields: BTreeMap<String, String>,
    },
    /// A type with a `Deserialize` of its own (`Time`, `IntOrString`, an object of any
    /// shape): decoded afresh.
    Opaque,
}

/// Why the in-place decoders could not be emitted.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InPlaceError {
    /// The spec could not be read.
    #[error(transparent)]
    Spec(#[from] crate::read::openapi::OpenApiError),
    /// The spec has no `definitions` (OpenAPI v2) or `components.schemas` (v3) object.
    #[error("the spec has no `definitions` or `components.schemas` object")]
    NoDefinitions,
    /// A resource's type is not one of the spec's definitions.
    #[error("resource type `{0}` is not a definition of the spec")]
    UnknownRoot(String),
    /// A file or directory of k8s-openapi's sources could not be read.
    #[error("reading {path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A file of k8s-openapi's sources is not Rust, or not shaped as k8s-openapi's generator
    /// writes its types.
    #[error("{path}: {message}")]
    Source {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// The Kubernetes version is not a `1.<minor>` k8s-openapi's sources could be for, or
    /// not the one of the directory given.
    #[error("Kubernetes version `{kubernetes}`: {message}")]
    Version {
        /// The version asked for.
        kubernetes: String,
        /// What is wrong.
        message: String,
    },
}
