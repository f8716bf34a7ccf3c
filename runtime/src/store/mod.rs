//! Indexed, thread-safe object store (client-go ThreadSafeStore + Indexer).
