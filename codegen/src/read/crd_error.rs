//! Errors of the CRD reader: every error names the file, and where it applies the YAML
//! document (0-based index in the stream), line and column, or the CRD, version and schema
//! path, so a user can find the offending construct without a debugger.

use std::path::PathBuf;

/// An error reading CRD YAML.
#[derive(Debug, thiserror::Error)]
pub enum CrdError {
    /// The file or directory could not be read.
    #[error("{}: {source}", file.display())]
    Io {
        /// The path.
        file: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The YAML is malformed.
    #[error("{}: document {document}, line {line}, column {column}: {message}", file.display())]
    Yaml {
        /// The file.
        file: PathBuf,
        /// 0-based index of the document in the stream.
        document: usize,
        /// 1-based line in the file (0 when unknown).
        line: u64,
        /// 1-based column (0 when unknown).
        column: u64,
        /// The parser's message.
        message: String,
    },
    /// A document is a CRD but a required part is missing or has the wrong type.
    #[error("{}: document {document}: CRD {crd}: {path}: {message}", file.display())]
    Invalid {
        /// The file.
        file: PathBuf,
        /// 0-based index of the document in the stream.
        document: usize,
        /// `metadata.name` of the CRD, or `<unnamed>`.
        crd: String,
        /// Path of the offending field, e.g. `.spec.names.plural`.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// A schema construct cannot be mapped to Rust.
    #[error(transparent)]
    Schema(Box<SchemaError>),
    /// Two CRDs define the same group, version and kind or plural.
    #[error("{}: document {document}: CRD {crd}: {message}", file.display())]
    Duplicate {
        /// The file.
        file: PathBuf,
        /// 0-based index of the document in the stream.
        document: usize,
        /// `metadata.name` of the CRD.
        crd: String,
        /// What clashes with what.
        message: String,
    },
}

/// A schema construct that cannot be mapped to Rust, with the file, CRD, version and schema
/// path where it occurs.
#[derive(Debug, thiserror::Error)]
#[error(
    "{}: document {document}: CRD {crd}, version {version}: schema {}: {message}",
    file.display(), short_path(.path)
)]
pub struct SchemaError {
    /// The file.
    pub file: PathBuf,
    /// 0-based index of the document in the stream.
    pub document: usize,
    /// `metadata.name` of the CRD.
    pub crd: String,
    /// The CRD version.
    pub version: String,
    /// JSON path in the schema, e.g. `.spec.rules[].matches`.
    pub path: String,
    /// What cannot be mapped.
    pub message: String,
}

/// A schema construct that cannot be mapped, before the file/CRD/version context is added.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemaIssue {
    /// JSON path in the schema.
    pub path: String,
    /// What cannot be mapped.
    pub message: String,
}

/// A schema path as a terminal shows it: whole up to 16 segments, else its first 8 and last
/// 6 with the count of those between (`.spec.a.a ... (9,980 more) ... .a.a`).
pub fn short_path(path: &str) -> String {
    let segments: Vec<&str> = path.split_inclusive('.').collect();
    if segments.len() <= 16 {
        return path.to_owned();
    }
    let (head, rest) = segments.split_at(8);
    let tail = &rest[rest.len() - 6..];
    format!(
        "{} ... ({} more) ... .{}",
        head.concat().trim_end_matches('.'),
        rest.len() - 6,
        tail.concat()
    )
}

#[cfg(test)]
mod tests {
    use super::short_path;

    #[test]
    fn long_paths_are_cut_in_the_middle() {
        assert_eq!(short_path(".spec.a[].b"), ".spec.a[].b");
        let long = ".properties".repeat(1000);
        let short = short_path(&long);
        assert!(short.len() < 200, "{short}");
        assert!(short.contains("(987 more)"), "{short}");
        assert!(short.starts_with(".properties.properties") && short.ends_with(".properties"));
    }
}
