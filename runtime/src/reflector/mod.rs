//! The reflector: ListAndWatch into a [`ReflectorSink`] (client-go's `cache.Reflector`).

mod sink;

pub use sink::{ReflectorSink, SinkClosed};
