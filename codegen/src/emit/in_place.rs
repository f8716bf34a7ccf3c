//! In-place decoders for k8s-openapi's types: the input of kinform-client's in-place
//! decoding (`client/src/decode/in_place/k8s_1_*.rs`, one file per Kubernetes version), one
//! entry per type reachable from a built-in resource that can be listed and watched.
//!
//! What the client needs is what k8s-openapi's generator read from the version's spec
//! ([`model::Definitions`]): for each definition with properties, the struct's Rust path,
//! each property's JSON name and the Rust field k8s-openapi gives it, whether the definition
//! is a resource (k8s-openapi leaves `apiVersion` and `kind` out of those and checks them
//! instead) and whether its type has a `Default`. Definitions without properties (`Time`,
//! `IntOrString`, `RawExtension`, object types of any shape) have a `Deserialize` of their
//! own in k8s-openapi and are decoded afresh. Two sources give them, with the same result
//! (the drift test compares them for the versions that have both):
//!
//! - `spec`: a Kubernetes OpenAPI document (`swagger.json`), for the versions whose
//!   document is in the corpus (1.35, 1.36);
//! - `sources`: k8s-openapi's own Rust sources of the version (`src/v1_37`), which its
//!   generator wrote from that version's spec, parsed with syn, for a version whose spec is
//!   not at hand (1.37).
//!
//! The file (`print`) is a list of invocations of the client's macros (`in_place_struct!`,
//! `fresh_in_place!`, `required_field!`, `root_types!`), one line per member, written as
//! text: the macros expand it into the impls. The field types are left to the client's
//! trait impls (`Option`, `Vec`, maps, ...), so the file names no type but the structs.
//! Every struct's fields end up in a pattern without `..`: a field k8s-openapi has and the
//! definitions do not (another Kubernetes version) is a compile error, not a field left
//! holding a replaced object's value.

mod model;
mod print;
mod sources;
mod spec;

use std::path::Path;

use serde_json::Value;

pub use model::InPlaceError;

/// Reads the definitions of Kubernetes `kubernetes` (`"1.37"`) from `input` and emits
/// kinform-client's in-place decoders for them: one Rust file, the output of `kinform-gen
/// in-place`. `input` is either the version's OpenAPI spec (a `swagger.json`) or the
/// directory of k8s-openapi's sources of that version (its crate's `src/v1_37`).
pub fn emit_file(input: &Path, kubernetes: &str) -> Result<String, InPlaceError> {
    let version_error = |message: String| InPlaceError::Version {
        kubernetes: kubernetes.to_owned(),
        message,
    };
    let minor = kubernetes
        .strip_prefix("1.")
        .and_then(|m| m.parse::<u32>().ok())
        .ok_or_else(|| version_error("not of the form `1.<minor>`".to_owned()))?;
    if input.is_dir() {
        let dir = format!("v1_{minor}");
        if input.file_name().and_then(|n| n.to_str()) != Some(dir.as_str()) {
            return Err(version_error(format!(
                "{} is not k8s-openapi's `src/{dir}`",
                input.display()
            )));
        }
        let defs = sources::read(input)?;
        let krate = match sources::crate_version(input) {
            Some(v) => format!("k8s-openapi {v}'s"),
            None => "k8s-openapi's".to_owned(),
        };
        let source = [
            format!("Emitted by `kinform-gen in-place` from {krate} sources (`src/{dir}`), the"),
            format!("types its generator wrote from the Kubernetes v{kubernetes} OpenAPI spec."),
        ];
        return Ok(print::print(&defs, kubernetes, &source));
    }
    let defs = spec::read(&read_model(input)?, &read_spec(input)?)?;
    let source = [format!(
        "Emitted by `kinform-gen in-place` from the Kubernetes v{kubernetes} OpenAPI spec."
    )];
    Ok(print::print(&defs, kubernetes, &source))
}

/// The API model of the spec `path`.
fn read_model(path: &Path) -> Result<crate::model::ApiModel, InPlaceError> {
    Ok(crate::read::openapi::read_openapi(path)?)
}

/// The spec `path` as JSON.
fn read_spec(path: &Path) -> Result<Value, InPlaceError> {
    use crate::read::openapi::OpenApiError;
    let text = std::fs::read_to_string(path).map_err(|source| OpenApiError::Io {
        path: path.to_owned(),
        source,
    })?;
    let spec = serde_json::from_str(&text).map_err(|source| OpenApiError::Json {
        path: path.to_owned(),
        line: source.line(),
        column: source.column(),
        source,
    })?;
    Ok(spec)
}
