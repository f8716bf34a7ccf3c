//! Where the reflector puts what it lists and watches: the DeltaFIFO in an informer,
//! or a plain store (client-go's `cache.Store` as seen by `Reflector`).

use std::sync::Arc;

use super::state::SinkOp;
use kinform_core::ObjectKey;
use kinform_core::resource::HasMetadata;

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

    /// A watch BOOKMARK: every change up to `resource_version` has been received (the
    /// writes before this call), so a sink may advance its
    /// [watermark](crate::consistency::Watermark) to it. The default ignores it.
    fn bookmark(&self, resource_version: &str) -> Result<(), SinkClosed> {
        let _ = resource_version;
        Ok(())
    }

    /// Several writes, in order, as one operation: the reflector hands over the sink writes
    /// of a batch of watch events this way, so that a sink can apply them under one lock and
    /// wake its consumer once. The result must equal performing them one by one in order
    /// (the default does exactly that).
    fn apply_batch(&self, ops: Vec<SinkOp<K>>) -> Result<(), SinkClosed> {
        for op in ops {
            match op {
                SinkOp::Add(o) => self.add(o)?,
                SinkOp::Update(o) => self.update(o)?,
                SinkOp::Delete(o) => self.delete(o)?,
                SinkOp::Replace {
                    items,
                    resource_version,
                } => self.replace(items, resource_version)?,
                SinkOp::Bookmark(rv) => self.bookmark(&rv)?,
            }
        }
        Ok(())
    }

    /// The object the sink holds under `key` (the watch's decoder may share with it what
    /// an event leaves unchanged). The default knows nothing.
    fn current(&self, key: ObjectKey<'_>) -> Option<Arc<K>> {
        let _ = key;
        None
    }

    /// The object the sink holds under `key` if its resourceVersion is `resource_version`
    /// (the reflector's list decoder then reuses it instead of decoding the listed item
    /// again): [`current`](Self::current)'s, at that resourceVersion.
    fn cached(&self, key: ObjectKey<'_>, resource_version: &str) -> Option<Arc<K>>
    where
        K: HasMetadata,
    {
        self.current(key)
            .filter(|o| o.resource_version() == resource_version)
    }

    /// Whether [`cached`](Self::cached) can find anything now; when it cannot (the first
    /// list of an informer), the list decoder does not pre-scan items for a lookup. The
    /// default, like `cached`'s, knows nothing.
    fn holds_cached(&self) -> bool {
        false
    }
}
