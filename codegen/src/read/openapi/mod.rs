//! OpenAPI reader: the Kubernetes API server's published spec -> [`ApiModel`].
//!
//! Reads either the OpenAPI v2 document (`api/openapi-spec/swagger.json`) or the directory
//! of OpenAPI v3 documents, one per group version (`api/openapi-spec/v3/*.json`), and gives
//! the same model for both: the operations of both formats are reduced to one list of
//! [`Operation`]s first ([`operations`]), and only that list is interpreted ([`build`]).
//!
//! What is taken from where, as Kubernetes publishes it:
//! - the group, version and plural come from the URL path (`/api/v1/...`,
//!   `/apis/{group}/{version}/...`, with `namespaces/{namespace}/` marking namespaced
//!   resources and `watch/` the deprecated watch endpoints);
//! - the verb comes from `x-kubernetes-action` (get, list, watch, watchlist, post, put, patch,
//!   delete, deletecollection, connect), as `kubectl`'s discovery-less tooling and
//!   client-gen's verb tags do;
//! - the kind comes from `x-kubernetes-group-version-kind`; the Rust type from the schema the
//!   operation returns or accepts, mapped onto k8s-openapi ([`type_path`]).

pub mod build;
pub mod operations;
pub mod paths;
pub mod type_path;

use std::fs;
use std::path::{Path, PathBuf};

use crate::model::ApiModel;

pub use operations::{Action, Gvk, Operation, Parsed};

/// Why an OpenAPI spec could not be read.
#[derive(Debug, thiserror::Error)]
pub enum OpenApiError {
    /// The file or directory could not be read.
    #[error("reading {path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The file is not valid JSON.
    #[error("{path}:{line}:{column}: invalid JSON: {source}")]
    Json {
        /// The file.
        path: PathBuf,
        /// 1-based line of the error.
        line: usize,
        /// 1-based column of the error.
        column: usize,
        /// The parser's error.
        #[source]
        source: serde_json::Error,
    },
    /// The JSON is valid but not shaped like a Kubernetes OpenAPI document.
    #[error("{path}: {pointer}: {message}")]
    Structure {
        /// The file.
        path: PathBuf,
        /// JSON pointer of the offending value.
        pointer: String,
        /// What is wrong.
        message: String,
    },
    /// A directory holds no `*.json` OpenAPI v3 documents.
    #[error("{path}: no OpenAPI v3 documents (*.json) in directory")]
    EmptyDirectory {
        /// The directory.
        path: PathBuf,
    },
}

/// Reads a spec: a `swagger.json` (v2) file, a single v3 document, or a directory of v3
/// documents. The format of a file is told by its top-level `swagger` / `openapi` field.
pub fn read_openapi(path: &Path) -> Result<ApiModel, OpenApiError> {
    let parsed = read_operations(path)?;
    build::build_model(&parsed)
}

/// Reads the operations of a spec file or directory (see [`read_openapi`]).
pub fn read_operations(path: &Path) -> Result<Parsed, OpenApiError> {
    let meta = fs::metadata(path).map_err(|source| OpenApiError::Io {
        path: path.to_owned(),
        source,
    })?;
    if !meta.is_dir() {
        return read_file_operations(path);
    }
    let mut files = Vec::new();
    let entries = fs::read_dir(path).map_err(|source| OpenApiError::Io {
        path: path.to_owned(),
        source,
    })?;
    for entry in entries {
        let entry = entry.map_err(|source| OpenApiError::Io {
            path: path.to_owned(),
            source,
        })?;
        let file = entry.path();
        if file.extension().is_some_and(|e| e == "json") && file.is_file() {
            files.push(file);
        }
    }
    if files.is_empty() {
        return Err(OpenApiError::EmptyDirectory {
            path: path.to_owned(),
        });
    }
    files.sort();
    let mut parsed = Parsed::default();
    for file in &files {
        parsed.extend(read_file_operations(file)?);
    }
    Ok(parsed)
}

fn read_file_operations(path: &Path) -> Result<Parsed, OpenApiError> {
    let text = fs::read_to_string(path).map_err(|source| OpenApiError::Io {
        path: path.to_owned(),
        source,
    })?;
    operations::parse_document(&text, path)
}
