//! Recording `events.k8s.io/v1` Events about the objects a controller works on.
//!
//! Events are how a controller tells users what it did (`kubectl describe`, `kubectl events`).
//! Recording one must never slow the controller down or take the API server down with it,
//! so this module reproduces client-go's `tools/events` (the events.k8s.io recorder and
//! broadcaster) with the spam filter of `tools/record/events_cache.go`:
//!
//! - [`EventRecorder::publish`] is synchronous and never blocks: the event goes into a
//!   bounded queue (client-go's 1000 by default) drained by one sender task. When the queue
//!   is full the event is dropped and counted ([`RecorderStats::dropped_queue_full`]).
//! - A spam filter per reporting source and regarding object: a token bucket of
//!   `spam_burst` (25) refilled by one every `spam_refill` (5 min), client-go's
//!   `EventSourceObjectSpamFilter` defaults. Filtered events are counted.
//! - Correlation: an event equal to an earlier one on regarding object, related object,
//!   reason, action, type, note and reporting controller/instance is the same occurrence
//!   repeated. The first is created (`POST`); repeats increment `series.count` and set
//!   `series.lastObservedTime`, sent as a merge `PATCH` of `series` (a 404 re-creates the
//!   event with its series). A series unseen for `series_finish` (6 min) is finished: the
//!   next occurrence starts a new Event.
//! - Requests that cannot reach the server are retried (`max_tries`, 12); error answers are
//!   not, as in client-go, but are logged with the server's Status and counted.
//!
//! Differences from client-go: client-go sends the first repeat at once and later counts
//! only every 30 minutes; here each repeat queues a series PATCH unless one is already
//! queued for the same event (the queued one sends the latest count when it runs), so the
//! server's count is current within one queue drain. Spam-filtered events do not count in
//! a series.
//!
//! ```no_run
//! # async fn demo(client: kinform_client::Client, foo: k8s_openapi::api::core::v1::ConfigMap) {
//! use kinform_runtime::events::{EventRecorder, NewEvent, RecorderConfig};
//!
//! let recorder = EventRecorder::new(client, RecorderConfig::new("example.com/foo-controller", "pod-1"));
//! recorder.record(&foo, NewEvent::normal("Synced", "Reconcile").note("Foo synced successfully"));
//! recorder.shutdown().await;
//! # }
//! ```

mod config;
mod correlator;
mod recorder;
mod reference;
mod worker;

pub use config::RecorderConfig;
pub use recorder::{EventRecorder, EventType, NewEvent, Recorded, RecorderStats};
pub use reference::{object_reference, object_reference_with};
