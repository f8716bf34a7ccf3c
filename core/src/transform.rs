//! Object transforms (client-go's `cache.TransformFunc`).
//!
//! A transform rewrites each object once, after it is decoded and before it is shared: the
//! informer factory's default drops `metadata.managedFields`. It lives in the vocabulary crate
//! because both sides of the reflector's seam name it: the client's decoding pipeline applies
//! it while decoding a list page or a watch batch, and the runtime configures it.

use std::sync::Arc;

/// Rewrites each object once, after decoding and before it reaches the sink (client-go's
/// `TransformFunc`; e.g. drop `managedFields`). A reflector's objects are decoded, and
/// transformed, on the client's two decoding threads, outside any tokio runtime: a
/// transform must not block or need a runtime (`tokio::spawn`, `Handle::current`).
pub type Transform<K> = Arc<dyn Fn(&mut K) + Send + Sync>;
