//! Where the reflector puts what it lists and watches: the DeltaFIFO in an informer,
//! or a plain store (client-go's `cache.Store` as seen by `Reflector`).

use std::sync::Arc;

use crate::store::ObjectKey;

/// The sink was closed; the reflector stops.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the reflector's sink is closed")]
pub struct SinkClosed;

/// The operations a reflector performs on its sink.
pub trait ReflectorSink<K>: Send + Sync + 'static {
    /// A watch ADDED event.
    fn add(&self, obj: Arc<K>) -> Result<(), SinkClosed>;
    /// A watch MODIFIED event.
    fn update(&self, obj: Arc<K>) -> Result<(), SinkClosed>;
    /// A watch DELETED event, with the object's last state.
    fn delete(&self, obj: Arc<K>) -> Result<(), SinkClosed>;
    /// A complete list at `resource_version` replaces the sink's content.
    fn replace(&self, list: Vec<Arc<K>>, resource_version: String) -> Result<(), SinkClosed>;
    /// A periodic resync of everything known.
    fn resync(&self) -> Result<(), SinkClosed>;
    /// The object the sink holds under `key` if its resourceVersion is `resource_version`
    /// (the reflector's list decoder then reuses it instead of decoding the listed item
    /// again). The default knows nothing.
    fn cached(&self, key: ObjectKey<'_>, resource_version: &str) -> Option<Arc<K>> {
        let _ = (key, resource_version);
        None
    }
}
