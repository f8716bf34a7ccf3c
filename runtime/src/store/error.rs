//! Errors of the store's index operations.

/// An index operation failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// No index has this name (client-go: `Index with name %s does not exist`).
    #[error("index {index:?} does not exist")]
    IndexNotFound {
        /// The requested index name.
        index: String,
    },
    /// `add_indexers` was given a name that is already taken, or the same name twice
    /// (client-go: `indexer conflict`).
    #[error("indexer conflict: an index named {index:?} already exists")]
    IndexConflict {
        /// The conflicting index name.
        index: String,
    },
    /// The value cannot be looked up in this index.
    #[error("invalid value {value:?} for index {index:?}: {reason}")]
    InvalidIndexValue {
        /// The index name.
        index: String,
        /// The value given.
        value: String,
        /// Why it is invalid.
        reason: String,
    },
}
